/* rounds: the exchange rounds of a step. Before each sweep, a round carries every field
 * the sweep reads across block faces whose ghost layers a sweep wrote since they were
 * last brought up to date; with hardware.exchange merged a field travels in the earliest
 * round after its last writer, so that fields of several sweeps share a round (one MPI
 * message per neighbour process). The time loop (sim.c) and the plan's message costs
 * (plan.c) both plan through rounds_plan. */
#ifndef ROUNDS_H
#define ROUNDS_H

#include <stdbool.h>

#include "comm.h"
#include "module.h"
#include "tsr_error.h"

enum { ROUNDS_MAX_SWEEPS = MODULE_MAX * MODULE_MAX_SWEEPS + 1 };

/* Whether `field` is exchanged before sweep s of a step's sweeps[n] (in order, round and
 * round): going back from s round the step, a sweep writes it before one that reads its
 * ghost layers (and so brought them up to date) comes; or no sweep writes it at all (it
 * is then exchanged before every sweep that reads its ghost layers). */
bool rounds_due(const module_sweep_t *const *sweeps, int n, int s, const char *field);

/* The sweep whose exchange round carries `field` for sweep s (hardware.exchange merged):
 * the earliest sweep of the step from which on no sweep before s writes it. Its ghost
 * layers then hold the same values at s as they would when exchanged right before s, and
 * fields of several sweeps travel in one round (one message per neighbour process). */
int rounds_round(const module_sweep_t *const *sweeps, int s, const char *field);

/* The exchange rounds of a step: all[n] every module's sweeps in order, and the fields
 * (module m, field f of its declaration) that travel in sweep j's round: those it reads
 * across faces, or with merged the fields that travel in its round (sim_exchange_round). */
typedef struct rounds {
  const module_sweep_t *all[ROUNDS_MAX_SWEEPS];
  int n;
  int nf[ROUNDS_MAX_SWEEPS];
  int field[ROUNDS_MAX_SWEEPS][COMM_MAX_FIELDS][2];
} rounds_t;

/* The rounds of every module's sweeps in order (merged or one per sweep) into *r. */
TSR_NODISCARD tsr_status rounds_plan(const module_decl_t *decls, int nmodules, bool merged,
                                     rounds_t *r, tsr_error_t *err);

/* The exchange rounds per step that carry a field, every module's sweeps in order, with
 * hardware.exchange merged or per sweep (for the plan's message costs). */
TSR_NODISCARD tsr_status rounds_count(const module_decl_t *decls, int nmodules, bool merged,
                                      int *rounds, tsr_error_t *err);

#endif
