/* run: the run of a simulation, as `tessera run` and `tessera bench --config` do it.
 *
 * run_steps is the time loop with everything due at each step: the stability check
 * (every output.check_every steps, at the last step and wherever output is due: on the
 * values the output prepared, else each module its own way, GPU blocks on the device),
 * then the VTK files, probes and slices due (VTK also at step 0), the progress line and
 * the row of series.csv with the modules' totals, the steady-state stop (stop.when_steady,
 * steady.h: the named total sampled every `every` steps from step 0), and the stop after
 * a step on SIGINT, SIGTERM or SIGUSR1. Nothing is written at a step whose check fails: the run ends there
 * as diverged. Without an output folder (a benchmark) only the steps and the checks run.
 *
 * run_describe prints the run's first line and the modules' warnings; run_summary
 * writes summary.json (and the manifest) and prints the summary: the totals of a
 * completed run, where a run diverged, or the signal that stopped it, with every
 * process's predicted and measured time per phase.
 *
 * All collective. */
#ifndef RUN_H
#define RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "module.h"
#include "output.h"
#include "plan.h"
#include "sim.h"
#include "sim_output.h"
#include "simulation.h"
#include "tsr_error.h"

typedef struct run_options {
  int64_t steps;        /* the last step (the options' steps for a run) */
  int64_t start;        /* the step the simulation is at: 0, or a restart's checkpoint's */
  const char *physics;  /* kept in checkpoints (module_config_physics) */
  output_folder_t *out; /* NULL: no output, no progress lines (a benchmark) */
  sim_output_t *writers; /* the writers into out (NULL without out) */
  bool signals;         /* a signal stops the run after a step: run_steps installs the
                           handlers (stop.h), the caller uninstalls them after its
                           summary */
} run_options_t;

typedef struct run_result {
  int64_t start;          /* the step the run started from (a restart's) */
  int64_t done;           /* the step it reached */
  char checkpoint[40];    /* the newest checkpoint it wrote ("": none) */
  int stopped;            /* the signal that stopped the run after `done`; 0: none */
  tsr_status ending;      /* TSR_OK, or TSR_ERR_DIVERGED with the check's message in
                             diverged and where in div */
  tsr_error_t diverged;
  sim_divergence_t div;
  double seconds;         /* wall seconds of the steps, output excluded, slowest rank */
  int64_t steady_step;    /* stop.when_steady: the step where the total became steady
                             (the run ended there); 0: it did not */
  double steady_change;   /* the total's relative change over the window at that step */
} run_result_t;

/* Prints each line of lines (cut up in place) on stderr as "tessera: warning: CONFIG:
 * line", after what stdout holds so far. */
void run_print_warnings(const char *config, char *lines);

/* Prints the whole cost of the plan (plan_cost_text) on stdout and its warnings
 * (plan_warnings) with run_print_warnings: the header of a run and `tessera plan`. */
void run_print_cost(const plan_t *plan, const simulation_options_t *so,
                    const plan_memory_t *mem, const double *node_avail, const char *config);

/* Rank 0 prints "tessera run CONFIG: cells, blocks, ranks, hardware, the modules'
 * physics", the plan's whole cost and the modules' warnings on stderr. */
void run_describe(const sim_t *sim, const simulation_options_t *so, const char *config);

/* What can be checked only once the simulation exists, before its output folder is
 * opened: the total stop.when_steady names is one of the modules'. */
TSR_NODISCARD tsr_status run_check(sim_t *sim, const simulation_options_t *so, tsr_error_t *err);

/* Runs the steps (see above) into *r. Returns an error other than a divergence (which
 * ends the run with r->ending set and TSR_OK returned). */
TSR_NODISCARD tsr_status run_steps(sim_t *sim, const simulation_options_t *so,
                                   const run_options_t *o, run_result_t *r, tsr_error_t *err);

/* Writes summary.json into out (and the manifest with the run's status) and prints the
 * summary on rank 0. */
TSR_NODISCARD tsr_status run_summary(sim_t *sim, const simulation_options_t *so,
                                     const char *config, output_folder_t *out,
                                     const run_result_t *r, tsr_error_t *err);

#endif
