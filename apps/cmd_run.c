/* tessera run CONFIG: a simulation of the modules the configuration names, as it
 * describes it: configuration -> modules -> simulation -> output folder -> the run's
 * steps (framework/run/run.h) -> summary. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "config.h"
#include "module.h"
#include "output.h"
#include "run.h"
#include "sim.h"
#include "sim_checkpoint.h"
#include "sim_output.h"
#include "simulation.h"
#include "stop.h"
#include "verdict.h"

static const char run_usage[] =
    "usage: tessera run CONFIG [--set PATH=VALUE]... [--output FOLDER] [--overwrite] [--steps N]\n"
    "                          [--restart CHECKPOINT|FOLDER|latest]\n"
    "  --set: a configuration value (JSON) at a key path, e.g. --set lbm.viscosity=0.01\n"
    "  --set 'domain.cells=[64,64,1]' --set 'lbm.lattice=\"D2Q9\"'; --output and --steps\n"
    "  are output.folder and steps; the configuration run is written to FOLDER/config.json\n"
    "  --restart: go on from a checkpoint (output.checkpoint_every/_interval) of a run of\n"
    "  CONFIG, on any processes and hardware, to step N; the output folder's files stay;\n"
    "  a FOLDER: its checkpoint of the highest step; latest: the output folder's\n";

/* The command line of a run. */
typedef struct run_args {
  const char *config, *output, *restart;
  int64_t steps;
  bool overwrite;
  app_sets_t sets;
} run_args_t;

/* -1 to go on, else the exit status (app_parse). */
static int run_parse(MPI_Comm comm, int argc, char **argv, run_args_t *a) {
  *a = (run_args_t){.steps = -1};
  const app_opt_t opts[] = {APP_OPT("--output", APP_TEXT, &a->output),
                            APP_OPT("--set", APP_SET, &a->sets),
                            APP_OPT("--overwrite", APP_FLAG, &a->overwrite),
                            APP_OPT("--restart", APP_TEXT, &a->restart),
                            APP_OPT("--steps", APP_INT, &a->steps, .imin = 0,
                                    .imax = INT64_MAX),
                            APP_OPT_END};
  const app_cmd_t cmd = {"run", run_usage, opts, "CONFIG", true};
  const int parsed = app_parse(comm, &cmd, argc, argv, &a->config);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (parsed < 0 && a->restart && a->overwrite) {
    if (rank == 0)
      fprintf(stderr, "tessera run: --restart keeps the output folder's files (the run goes "
                      "on from them); --overwrite, which removes them, cannot go with it\n");
    return 2;
  }
  return parsed;
}

/* The configuration with the command line's overrides (--output and --steps go into the
 * document, so that config.json is what ran), its options and modules, and the settings
 * a restart must keep (*physics, malloc'd). Collective: one verdict. */
static tsr_status run_read(MPI_Comm comm, const run_args_t *a, config_t **doc,
                           simulation_options_t *so, module_t *modules, int *nmodules,
                           char **physics, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(app_config_load(comm, a->config, &a->sets, doc, err));
  if (a->output) {
    size_t n = strlen(a->output);
    TSR_CHECK(n > 0 && n < sizeof so->output_folder, TSR_ERR_INVALID,
              "--output: the folder name is empty or longer than %zu characters",
              sizeof so->output_folder - 1);
    TSR_TRY(config_set_string(*doc, "--output", "output.folder", a->output, err));
  }
  if (a->steps >= 0) {
    char assignment[48];
    snprintf(assignment, sizeof assignment, "steps=%lld", (long long)a->steps);
    TSR_TRY(config_set(*doc, assignment, err));
  }
  TSR_TRY(verdict_reduce(comm, app_read_modules(*doc, so, modules, nmodules, err), 0, err));
  *physics = module_config_physics(*doc, modules, *nmodules);
  TSR_CHECK(*physics, TSR_ERR_NOMEM, "out of memory");
cleanup:
  return st;
}

/* The checkpoint to go on from (refused before the output folder is touched): its step
 * into *start, the seconds the reading took into *seconds. */
static tsr_status run_restart(sim_t *sim, sim_output_t *writers, const simulation_options_t *so,
                              const char *restart, const char *physics, int64_t *start,
                              double *seconds, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const double t0 = MPI_Wtime();
  TSR_TRY(sim_read_checkpoint(sim, writers, so, restart, physics, start, err));
  *seconds = MPI_Wtime() - t0;
  TSR_CHECK(*start < so->steps, TSR_ERR_INVALID,
            "%s is at step %lld; steps = %lld leaves nothing to run (raise it with --steps)",
            restart, (long long)*start, (long long)so->steps);
cleanup:
  return st;
}

/* The output folder, this run's from here on: locked, earlier output gone (or kept for a
 * restart), writable by all, with config.json. */
static tsr_status run_folder(MPI_Comm comm, const config_t *doc, const simulation_options_t *so,
                             const run_args_t *a, output_folder_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *patterns[2 + SIM_OUTPUT_PATTERNS] = {"summary.json", "config.json"};
  for (int i = 0; i < SIM_OUTPUT_PATTERNS; ++i) patterns[2 + i] = sim_output_patterns[i];
  TSR_TRY(output_folder_open(comm, so->output_folder, patterns, 2 + SIM_OUTPUT_PATTERNS,
                             a->restart     ? OUTPUT_CONTINUE
                             : a->overwrite ? OUTPUT_OVERWRITE
                                            : OUTPUT_NEW,
                             out, err));
  TSR_TRY(app_write_config(comm, doc, *out, err));
cleanup:
  return st;
}

int app_run(MPI_Comm comm, int argc, char **argv) {
  tsr_status st = TSR_OK;
  tsr_error_t e, *err = &e;
  tsr_error_clear(err);
  run_args_t a;
  const int parsed = run_parse(comm, argc, argv, &a);
  if (parsed >= 0) return parsed;
  config_t *doc = NULL;
  sim_t *sim = NULL;
  sim_output_t *writers = NULL;
  output_folder_t *out = NULL;
  module_t modules[MODULE_MAX];
  int nmodules = 0;
  char *physics = NULL;
  int64_t start = 0;
  double read_seconds = 0;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  run_result_t res = {.stopped = 0};
  simulation_options_t so;
  /* configuration -> modules -> simulation -> writers -> output folder -> steps -> summary */
  TSR_TRY(run_read(comm, &a, &doc, &so, modules, &nmodules, &physics, err));
  st = sim_create(comm, &so, &app_sim_setup, modules, nmodules, &sim, err);
  nmodules = 0; /* the simulation's now, or freed */
  TSR_TRY(st);
  TSR_TRY(run_check(sim, &so, err));
  TSR_TRY(verdict_reduce(comm, sim_output_create(sim, &writers, err), 0, err));
  char restart[OUTPUT_PATH_MAX];
  if (a.restart) {
    TSR_TRY(sim_checkpoint_find(comm, a.restart, so.output_folder, restart, sizeof restart, err));
    TSR_TRY(run_restart(sim, writers, &so, restart, physics, &start, &read_seconds, err));
  }
  TSR_TRY(run_folder(comm, doc, &so, &a, &out, err));
  run_describe(sim, &so, a.config);
  if (a.restart && rank == 0)
    printf("restarted from %s at step %lld (read in %.2f s)\n", restart, (long long)start,
           read_seconds);
  fflush(stdout);
  run_options_t ro = {.steps = so.steps, .start = start, .physics = physics, .out = out,
                      .writers = writers, .signals = true};
  TSR_TRY(run_steps(sim, &so, &ro, &res, err));
  st = run_summary(sim, &so, a.config, out, &res, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  if (res.ending != TSR_OK) {
    st = res.ending;
    *err = res.diverged;
  }
cleanup:
  free(physics);
  stop_uninstall();
  output_folder_close(&out);
  sim_output_free(&writers);
  sim_free(&sim);
  module_free_all(modules, nmodules);
  config_free(&doc);
  /* stopped by a signal: the shell's convention, 128 + the signal */
  return st == TSR_OK && res.stopped ? 128 + res.stopped : app_report(comm, st, err);
}
