/* ghost_check: a test field for the ghost exchange, used by `tessera exchange-demo`
 * and the MPI tests.
 *
 * Field "ghost_check.field": GHOST_CHECK_COMPS doubles per cell in the CPU (AoS) layout.
 * Kernel "ghost_check.fill" writes into every interior cell the code of its global cell
 * and component (ghost_check_code) and GHOST_CHECK_EMPTY into every ghost cell. After
 * an exchange, ghost_check_verify compares every cell of every local block with what it
 * must hold: interior cells their own code; a ghost cell the code of the global cell it
 * mirrors (wrapped on periodic axes), or GHOST_CHECK_EMPTY where the domain ends.
 * Registered for hs cpu and any bs. */
#ifndef GHOST_CHECK_H
#define GHOST_CHECK_H

#include <stdint.h>

#include "patch.h"
#include "registry.h"
#include "tsr_error.h"

enum { GHOST_CHECK_COMPS = 2, GHOST_CHECK_MAX_CELLS = 1 << 17 };
#define GHOST_CHECK_EMPTY (-1.0)
#define GHOST_CHECK_FIELD "ghost_check.field"
#define GHOST_CHECK_FILL "ghost_check.fill"

TSR_NODISCARD tsr_status ghost_check_register(registry_t *reg, tsr_error_t *err);

/* Exact (below 2^53) and distinct for every global cell and component of domains of
 * up to GHOST_CHECK_MAX_CELLS cells per axis. */
double ghost_check_code(int64_t gx, int64_t gy, int64_t gz, int comp);

typedef struct ghost_check_report {
  int64_t cells;          /* cells compared, ghosts included */
  int64_t ghost_cells;    /* ghost cells compared */
  int64_t filled[4];      /* ghost cells that hold a neighbour's value, by direction
                             order: [1] faces, [2] edges, [3] corners */
  int64_t empty;          /* ghost cells where the domain ends, left empty */
  int64_t mismatches;     /* values that differ */
} ghost_check_report_t;

/* Checks every cell of every local block (local only; reduce the status across ranks).
 * The first mismatch is described in err; the counts cover all blocks. */
TSR_NODISCARD tsr_status ghost_check_verify(const patch_t *patch, int data_id,
                                            ghost_check_report_t *report, tsr_error_t *err);

#endif
