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

int app_run(MPI_Comm comm, int argc, char **argv) {
  tsr_status st = TSR_OK;
  tsr_error_t e, *err = &e;
  tsr_error_clear(err);
  config_t *doc = NULL;
  sim_t *sim = NULL;
  sim_output_t *writers = NULL;
  module_t modules[MODULE_MAX];
  int nmodules = 0;
  run_result_t res = {.stopped = 0};
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  output_folder_t *out = NULL;
  char *physics = NULL;
  const char *config = NULL, *output = NULL, *restart = NULL;
  int64_t steps = -1, start = 0;
  double read_seconds = 0;
  bool overwrite = false;
  static const char usage[] =
      "usage: tessera run CONFIG [--set PATH=VALUE]... [--output FOLDER] [--overwrite] [--steps N]\n"
      "                          [--restart CHECKPOINT]\n"
      "  --set: a configuration value (JSON) at a key path, e.g. --set lbm.viscosity=0.01\n"
      "  --set 'domain.cells=[64,64,1]' --set 'lbm.lattice=\"D2Q9\"'; --output and --steps\n"
      "  are output.folder and steps; the configuration run is written to FOLDER/config.json\n"
      "  --restart: go on from a checkpoint (output.checkpoint_every/_interval) of a run of\n"
      "  CONFIG, on any processes and hardware, to step N; the output folder's files stay\n";
  app_sets_t sets = {.n = 0};
  const app_opt_t opts[] = {APP_OPT("--output", APP_TEXT, &output),
                            APP_OPT("--set", APP_SET, &sets),
                            APP_OPT("--overwrite", APP_FLAG, &overwrite),
                            APP_OPT("--restart", APP_TEXT, &restart),
                            APP_OPT("--steps", APP_INT, &steps, .imin = 0,
                                    .imax = INT64_MAX),
                            APP_OPT_END};
  const app_cmd_t cmd = {"run", usage, opts, "CONFIG", true};
  const int parsed = app_parse(comm, &cmd, argc, argv, &config);
  if (parsed >= 0) return parsed;
  if (restart && overwrite) {
    if (rank == 0)
      fprintf(stderr, "tessera run: --restart keeps the output folder's files (the run goes "
                      "on from them); --overwrite, which removes them, cannot go with it\n");
    return 2;
  }

  /* config -> options -> simulation -> time steps -> summary */
  simulation_options_t so;
  TSR_TRY(app_config_load(comm, config, &sets, &doc, err));
  /* --output and --steps go into the document, so that config.json is what ran */
  if (output) {
    size_t n = strlen(output);
    TSR_CHECK(n > 0 && n < sizeof so.output_folder, TSR_ERR_INVALID,
              "--output: the folder name is empty or longer than %zu characters",
              sizeof so.output_folder - 1);
    TSR_TRY(config_set_string(doc, "--output", "output.folder", output, err));
  }
  if (steps >= 0) {
    char assignment[48];
    snprintf(assignment, sizeof assignment, "steps=%lld", (long long)steps);
    TSR_TRY(config_set(doc, assignment, err));
  }
  st = simulation_options_read(doc, &so, err);
  if (st == TSR_OK) st = module_read_all(doc, &so, app_modules, modules, &nmodules, err);
  if (st == TSR_OK) st = config_check_unknown(doc, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  physics = module_config_physics(doc, modules, nmodules);
  TSR_CHECK(physics, TSR_ERR_NOMEM, "out of memory");
  st = sim_create(comm, &so, &app_sim_setup, modules, nmodules, &sim, err);
  nmodules = 0; /* the simulation's now, or freed */
  TSR_TRY(st);
  TSR_TRY(run_check(sim, &so, err));
  TSR_TRY(verdict_reduce(comm, sim_output_create(sim, &writers, err), 0, err));
  if (restart) { /* refused before the output folder is touched */
    const double t0 = MPI_Wtime();
    TSR_TRY(sim_read_checkpoint(sim, writers, &so, restart, physics, &start, err));
    read_seconds = MPI_Wtime() - t0;
    TSR_CHECK(start < so.steps, TSR_ERR_INVALID,
              "%s is at step %lld; steps = %lld leaves nothing to run (raise it with --steps)",
              restart, (long long)start, (long long)so.steps);
  }
  /* the folder is this run's from here on: locked, earlier output gone, writable by all */
  const char *patterns[2 + SIM_OUTPUT_PATTERNS] = {"summary.json", "config.json"};
  for (int i = 0; i < SIM_OUTPUT_PATTERNS; ++i) patterns[2 + i] = sim_output_patterns[i];
  TSR_TRY(output_folder_open(comm, so.output_folder, patterns, 2 + SIM_OUTPUT_PATTERNS,
                             restart     ? OUTPUT_CONTINUE
                             : overwrite ? OUTPUT_OVERWRITE
                                         : OUTPUT_NEW,
                             &out, err));
  TSR_TRY(app_write_config(comm, doc, out, err));

  run_describe(sim, &so, config);
  if (restart && rank == 0) {
    printf("restarted from %s at step %lld (read in %.2f s)\n", restart, (long long)start,
           read_seconds);
    fflush(stdout);
  }
  run_options_t ro = {.steps = so.steps, .start = start, .physics = physics, .out = out,
                      .writers = writers,
                      .signals = true};
  TSR_TRY(run_steps(sim, &so, &ro, &res, err));
  st = run_summary(sim, &so, config, out, &res, err);
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
