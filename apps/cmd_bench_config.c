/* tessera bench --config CONFIG: a configuration's run as a benchmark (any modules, e.g. the
 * coupled flow and temperature of configs/rayleigh_benard.json): the run assembled as
 * `tessera run` assembles it, without output, two warm-up steps, then --steps steps,
 * --repeat times; the MLUPS of each repetition (cell updates of the domain per second,
 * every module's sweeps counted as one update), and the share of the step each sweep
 * spends in its exchange round, its boundary and its kernel items (on the process whose
 * step took longest; GPU kernels run asynchronously, so their time shows in the "finish"
 * sweep that waits for them). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "config.h"
#include "module.h"
#include "report.h"
#include "sim.h"
#include "simulation.h"
#include "timeloop.h"
#include "verdict.h"

static const char config_usage[] =
    "usage: tessera bench --config CONFIG [--steps S] [--repeat R] [--json FILE]\n"
    "  CONFIG's run (its modules, domain and hardware; no output) for S steps (default 50),\n"
    "  R times (default 3): MLUPS and the share of the step per sweep and phase\n";

enum { BENCH_CONFIG_MAX_SWEEPS = 16, BENCH_CONFIG_MAX_REPEAT = 64 };

int app_bench_config(MPI_Comm comm, int argc, char **argv) {
  tsr_status st = TSR_OK;
  tsr_error_t e, *err = &e;
  tsr_error_clear(err);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const char *config = NULL, *json = NULL;
  int64_t steps = 50, repeat = 3;
  bool bad = false;
  for (int i = 1; i < argc && !bad; ++i) {
    if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      if (!app_int_arg(comm, "bench --config", "--steps", argv[++i], 1, INT64_MAX, &steps)) return 2;
    } else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      if (!app_int_arg(comm, "bench --config", "--repeat", argv[++i], 1, BENCH_CONFIG_MAX_REPEAT,
                       &repeat))
        return 2;
    } else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) json = argv[++i];
    else if (argv[i][0] != '-' && !config) config = argv[i];
    else bad = true;
  }
  if (bad || !config) {
    if (rank == 0) fputs(config_usage, stderr);
    return 2;
  }
  config_t *doc = NULL;
  sim_t *sim = NULL;
  module_t modules[MODULE_MAX] = {{NULL, NULL}};
  int nmodules = 0;
  simulation_options_t so;
  double mlups[BENCH_CONFIG_MAX_REPEAT];
  TSR_TRY(config_load(comm, config, &doc, err));
  st = simulation_options_read(doc, &so, err);
  if (st == TSR_OK) st = module_read_all(doc, &so, app_modules, modules, &nmodules, err);
  if (st == TSR_OK) st = config_check_unknown(doc, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  st = sim_create(comm, &so, &app_sim_setup, modules, nmodules, &sim, err);
  nmodules = 0; /* the simulation's now, or freed */
  TSR_TRY(st);
  const timeloop_t *tl = sim_timeloop(sim);
  const int nsweeps = timeloop_sweep_count(tl);
  TSR_CHECK(nsweeps <= BENCH_CONFIG_MAX_SWEEPS, TSR_ERR_INVALID,
            "%s: %d sweeps; the benchmark reports at most %d", config, nsweeps,
            BENCH_CONFIG_MAX_SWEEPS);
  const double cells = (double)sim_cells(sim);
  if (rank == 0) {
    printf("tessera bench --config %s: %lldx%lldx%lld cells in %d blocks, %s, %lld steps x %lld\n",
           config, (long long)so.domain.cells[0], (long long)so.domain.cells[1],
           (long long)so.domain.cells[2],
           so.domain.blocks[0] * so.domain.blocks[1] * so.domain.blocks[2], sim_fs_text(sim),
           (long long)steps, (long long)repeat);
    fflush(stdout);
  }
  TSR_TRY(sim_step(sim, 2, err));
  /* per sweep and phase (exchange, boundary, kernel): seconds of the measured steps */
  double before[BENCH_CONFIG_MAX_SWEEPS][3], spent[BENCH_CONFIG_MAX_SWEEPS * 3 + 1];
  for (int s = 0; s < nsweeps; ++s) {
    timeloop_sweep_timing_t t = timeloop_sweep_timing(tl, s);
    before[s][0] = t.exchange, before[s][1] = t.boundary, before[s][2] = t.kernel;
  }
  double total = 0;
  for (int64_t r = 0; r < repeat; ++r) {
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    TSR_TRY(sim_step(sim, steps, err));
    double t = MPI_Wtime() - t0, tmax = 0;
    TSR_MPI(MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm));
    mlups[r] = cells * (double)steps / tmax / 1e6;
    total += t;
    if (rank == 0) printf("  repetition %lld: %.2f MLUPS\n", (long long)(r + 1), mlups[r]);
  }
  for (int s = 0; s < nsweeps; ++s) {
    timeloop_sweep_timing_t t = timeloop_sweep_timing(tl, s);
    spent[3 * s] = t.exchange - before[s][0];
    spent[3 * s + 1] = t.boundary - before[s][1];
    spent[3 * s + 2] = t.kernel - before[s][2];
  }
  /* the shares of the process whose measured steps took longest */
  struct { double t; int rank; } mine = {total, rank}, slowest;
  TSR_MPI(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
  spent[3 * nsweeps] = total;
  TSR_MPI(MPI_Bcast(spent, 3 * nsweeps + 1, MPI_DOUBLE, slowest.rank, comm));
  total = spent[3 * nsweeps] > 0 ? spent[3 * nsweeps] : 1;
  double median, lo, hi;
  app_stats(mlups, (int)repeat, &median, &lo, &hi);
  if (rank == 0) {
    printf("MLUPS: median %.2f (%.2f to %.2f)\n", median, lo, hi);
    printf("share of the step on rank %d (exchange, boundary, kernel):\n", slowest.rank);
    for (int s = 0; s < nsweeps; ++s)
      printf("  %-14s %5.1f%% %5.1f%% %5.1f%%\n", timeloop_sweep_timing(tl, s).name,
             100.0 * spent[3 * s] / total, 100.0 * spent[3 * s + 1] / total,
             100.0 * spent[3 * s + 2] / total);
    fflush(stdout);
    if (json) {
      report_item_t items[4 + 3 * BENCH_CONFIG_MAX_SWEEPS];
      char keys[BENCH_CONFIG_MAX_SWEEPS * 3][96];
      int n = 0;
      items[n++] = REPORT_TEXT_ITEM("config", config);
      items[n++] = REPORT_INT_ITEM("steps", steps);
      items[n++] = REPORT_REAL_ITEM("mlups_median", median);
      static const char *const phase[3] = {"exchange", "boundary", "kernel"};
      for (int s = 0; s < nsweeps; ++s)
        for (int p = 0; p < 3; ++p) {
          snprintf(keys[3 * s + p], sizeof keys[0], "share_%s_%s",
                   timeloop_sweep_timing(tl, s).name, phase[p]);
          items[n++] = REPORT_REAL_ITEM(keys[3 * s + p], spent[3 * s + p] / total);
        }
      st = report_write_json(json, items, (size_t)n, err);
    }
  }
  st = verdict_reduce(comm, st, 0, err);
cleanup:
  sim_free(&sim);
  module_free_all(modules, nmodules);
  config_free(&doc);
  return app_report(comm, st, err);
}
