/* tessera bench --config CONFIG: a configuration's run as a benchmark (any modules, e.g. the
 * coupled flow and temperature of configs/rayleigh_benard.json): the run assembled as
 * `tessera run` assembles it and stepped by the same loop (framework/run/run.h: the
 * stability checks included), without output, two warm-up steps, then --steps steps,
 * --repeat times; the MLUPS of each repetition (cell updates of the domain per second,
 * every module's sweeps counted as one update), and the share of the step each sweep
 * spends in its exchange round, its boundary and its kernel items (on the process whose
 * step took longest; GPU kernels run asynchronously, so their time shows in the "finish"
 * sweep that waits for them). With --exchange both the run is built twice, with the
 * exchange rounds merged and per sweep (hardware.exchange), and their repetitions
 * alternate, so that the ratio of the two is measured in one run; --overlap both does the
 * same with and without the overlap of exchanges and items (hardware.overlap). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "config.h"
#include "module.h"
#include "opencl.h"
#include "report.h"
#include "run.h"
#include "sim.h"
#include "simulation.h"
#include "timeloop.h"
#include "verdict.h"

static const char config_usage[] =
    "usage: tessera bench --config CONFIG [--set PATH=VALUE]... [--steps S] [--repeat R]\n"
    "                                     [--exchange E] [--overlap O] [--json FILE]\n"
    "  CONFIG's run (its modules, domain and hardware; the run's loop with its stability\n"
    "  checks, no output) for S steps (default 50),\n"
    "  R times (default 3): MLUPS and the share of the step per sweep and phase;\n"
    "  E: merged, per_sweep (the ghost exchange rounds, default: CONFIG's hardware.exchange)\n"
    "  or both (the two built side by side, repetitions alternating);\n"
    "  O: auto, on, off (a sweep's items run while its exchange travels, default: CONFIG's\n"
    "  hardware.overlap) or both (on and off side by side, alternating; not with\n"
    "  --exchange both)\n";

enum { BENCH_CONFIG_MAX_SWEEPS = 16, BENCH_CONFIG_MAX_REPEAT = 64 };

/* One build of the run and what its repetitions measured. */
typedef struct bench_variant {
  simulation_exchange_t exchange;
  simulation_overlap_t overlap;
  module_t modules[MODULE_MAX]; /* read from the configuration; the simulation's once built */
  int nmodules;
  sim_t *sim;
  double mlups[BENCH_CONFIG_MAX_REPEAT];
  double before[BENCH_CONFIG_MAX_SWEEPS][3]; /* sweep timings after the warm-up */
  double spent[BENCH_CONFIG_MAX_SWEEPS * 3 + 1]; /* the slowest rank's, and its total */
  double total;   /* this rank's seconds in the measured steps */
  int nsweeps, slowest;
  double median, lo, hi;
  int64_t device[5]; /* launches, reads, writes, bytes read and written of one step: the
                        most of any process */
  int gpu;           /* some process has an OpenCL device */
} bench_variant_t;

static tsr_status bench_build(MPI_Comm comm, const simulation_options_t *so,
                              bench_variant_t *v, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  simulation_options_t o = *so;
  o.hardware.exchange = v->exchange;
  o.hardware.overlap = v->overlap;
  st = sim_create(comm, &o, &app_sim_setup, v->modules, v->nmodules, &v->sim, err);
  v->nmodules = 0; /* the simulation's now, or freed */
  TSR_TRY(st);
  const timeloop_t *tl = sim_timeloop(v->sim);
  v->nsweeps = timeloop_sweep_count(tl);
  TSR_CHECK(v->nsweeps <= BENCH_CONFIG_MAX_SWEEPS, TSR_ERR_INVALID,
            "%s: %d sweeps; the benchmark reports at most %d", so->source, v->nsweeps,
            BENCH_CONFIG_MAX_SWEEPS);
  TSR_TRY(sim_step(v->sim, 2, err));
  /* what one step gives a device (the loop's checks, every so many steps, apart) */
  opencl_context_t *cl = sim_opencl(v->sim);
  const opencl_counts_t a = cl ? opencl_context_counts(cl) : (opencl_counts_t){0};
  TSR_TRY(sim_step(v->sim, 1, err));
  const opencl_counts_t b = cl ? opencl_context_counts(cl) : (opencl_counts_t){0};
  int64_t mine[6] = {b.launches - a.launches, b.reads - a.reads, b.writes - a.writes,
                     b.bytes_read - a.bytes_read, b.bytes_written - a.bytes_written, cl != NULL};
  int64_t most[6];
  TSR_MPI(MPI_Allreduce(mine, most, 6, MPI_INT64_T, MPI_MAX, comm));
  for (int k = 0; k < 5; ++k) v->device[k] = most[k];
  v->gpu = most[5] > 0;
  for (int s = 0; s < v->nsweeps; ++s) {
    timeloop_sweep_timing_t t = timeloop_sweep_timing(tl, s);
    v->before[s][0] = t.exchange, v->before[s][1] = t.boundary, v->before[s][2] = t.kernel;
  }
cleanup:
  return st;
}

/* The share of each sweep and phase on the process whose measured steps took longest. */
static tsr_status bench_shares(MPI_Comm comm, int rank, bench_variant_t *v, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const timeloop_t *tl = sim_timeloop(v->sim);
  const int n = v->nsweeps;
  for (int s = 0; s < n; ++s) {
    timeloop_sweep_timing_t t = timeloop_sweep_timing(tl, s);
    v->spent[3 * s] = t.exchange - v->before[s][0];
    v->spent[3 * s + 1] = t.boundary - v->before[s][1];
    v->spent[3 * s + 2] = t.kernel - v->before[s][2];
  }
  struct { double t; int rank; } mine = {v->total, rank}, slowest;
  TSR_MPI(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
  v->slowest = slowest.rank;
  v->spent[3 * n] = v->total;
  TSR_MPI(MPI_Bcast(v->spent, 3 * n + 1, MPI_DOUBLE, slowest.rank, comm));
  if (!(v->spent[3 * n] > 0)) v->spent[3 * n] = 1;
cleanup:
  return st;
}

int app_bench_config(MPI_Comm comm, int argc, char **argv) {
  tsr_status st = TSR_OK;
  tsr_error_t e, *err = &e;
  tsr_error_clear(err);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const char *config = NULL, *json = NULL, *exchange = NULL, *overlap = NULL;
  int64_t steps = 50, repeat = 3;
  app_sets_t sets = {.n = 0};
  const app_opt_t opts[] = {APP_OPT("--steps", APP_INT, &steps, .imin = 1, .imax = INT64_MAX),
                            APP_OPT("--repeat", APP_INT, &repeat, .imin = 1,
                             .imax = BENCH_CONFIG_MAX_REPEAT),
                            APP_OPT("--exchange", APP_TEXT, &exchange),
                            APP_OPT("--overlap", APP_TEXT, &overlap),
                            APP_OPT("--json", APP_TEXT, &json),
                            APP_OPT("--set", APP_SET, &sets),
                            APP_OPT_END};
  const app_cmd_t cmd = {"bench --config", config_usage, opts, "CONFIG", true};
  const int parsed = app_parse(comm, &cmd, argc, argv, &config);
  if (parsed >= 0) return parsed;
  bool both = exchange && strcmp(exchange, "both") == 0;
  const int chosen = both ? -1 : config_name_index(simulation_exchange_names, exchange);
  if (exchange && !both && chosen < 0) {
    if (rank == 0)
      fprintf(stderr, "tessera: error: bench --config: --exchange %s: allowed are merged, "
                      "per_sweep and both\n", exchange);
    return 2;
  }
  const bool both_overlap = overlap && strcmp(overlap, "both") == 0;
  const int overlap_chosen =
      both_overlap ? -1 : config_name_index(simulation_overlap_names, overlap);
  if (overlap && !both_overlap && overlap_chosen < 0) {
    if (rank == 0)
      fprintf(stderr, "tessera: error: bench --config: --overlap %s: allowed are auto, on, off "
                      "and both\n", overlap);
    return 2;
  }
  if (both && both_overlap) {
    if (rank == 0)
      fprintf(stderr, "tessera: error: bench --config: --exchange both and --overlap both: "
                      "one comparison at a time\n");
    return 2;
  }
  config_t *doc = NULL;
  bench_variant_t var[2];
  memset(var, 0, sizeof var);
  int nvar = 0;
  simulation_options_t so;
  TSR_TRY(app_config_load(comm, config, &sets, &doc, err));
  st = simulation_options_read(doc, &so, err);
  if (st == TSR_OK) {
    const simulation_exchange_t ex =
        chosen >= 0 ? (simulation_exchange_t)chosen : so.hardware.exchange;
    const simulation_overlap_t ov = overlap_chosen >= 0 ? (simulation_overlap_t)overlap_chosen
                                                        : so.hardware.overlap;
    var[nvar++] = (bench_variant_t){.exchange = both ? SIMULATION_EXCHANGE_MERGED : ex,
                                    .overlap = both_overlap ? SIMULATION_OVERLAP_ON : ov};
    if (both || both_overlap)
      var[nvar++] = (bench_variant_t){.exchange = both ? SIMULATION_EXCHANGE_PER_SWEEP : ex,
                                      .overlap = both_overlap ? SIMULATION_OVERLAP_OFF : ov};
  }
  const bool by_exchange = both;
  both = both || both_overlap;
  const char *label[2]; /* what tells the variants apart */
  for (int v = 0; v < nvar; ++v)
    label[v] = by_exchange ? simulation_exchange_names[var[v].exchange]
                           : var[v].overlap == SIMULATION_OVERLAP_ON ? "overlap" : "no_overlap";
  /* each build takes its own module states */
  for (int v = 0; v < nvar && st == TSR_OK; ++v)
    st = module_read_all(doc, &so, app_modules, var[v].modules, &var[v].nmodules, err);
  if (st == TSR_OK) st = config_check_unknown(doc, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  for (int v = 0; v < nvar; ++v) TSR_TRY(bench_build(comm, &so, &var[v], err));
  const double cells = (double)sim_cells(var[0].sim);
  if (rank == 0) {
    const char *fs = sim_fs_text(var[0].sim); /* empty where no module names an fs */
    printf("tessera bench --config %s: %lldx%lldx%lld cells in %d blocks, %s%sexchange %s%s, "
           "overlap %s, %lld steps x %lld\n",
           config, (long long)so.domain.cells[0], (long long)so.domain.cells[1],
           (long long)so.domain.cells[2],
           so.domain.blocks[0] * so.domain.blocks[1] * so.domain.blocks[2], fs,
           fs[0] ? ", " : "", simulation_exchange_names[var[0].exchange],
           by_exchange ? " and per_sweep (alternating)" : "",
           both_overlap ? "on and off (alternating)" : simulation_overlap_names[var[0].overlap],
           (long long)steps, (long long)repeat);
    fflush(stdout);
  }
  for (int64_t r = 0; r < repeat; ++r)
    for (int v = 0; v < nvar; ++v) {
      /* the run's own loop, checks included, without output */
      run_result_t res;
      const run_options_t ro = {.steps = steps, .out = NULL, .signals = false};
      TSR_TRY(run_steps(var[v].sim, &so, &ro, &res, err));
      /* the steps' time, as the MLUPS count it: the stability checks (on GPU blocks a
         download of every field) are not part of a step's phases */
      var[v].total += res.seconds;
      if (res.ending != TSR_OK) {
        st = res.ending;
        *err = res.diverged;
        goto cleanup;
      }
      var[v].mlups[r] = cells * (double)steps / res.seconds / 1e6;
      if (rank == 0) {
        printf("  repetition %lld%s%s: %.2f MLUPS\n", (long long)(r + 1), both ? ", " : "",
               both ? label[v] : "", var[v].mlups[r]);
        fflush(stdout);
      }
    }
  for (int v = 0; v < nvar; ++v) TSR_TRY(bench_shares(comm, rank, &var[v], err));
  for (int v = 0; v < nvar; ++v) {
    bench_variant_t *b = &var[v];
    app_stats(b->mlups, (int)repeat, &b->median, &b->lo, &b->hi);
    if (rank != 0) continue;
    const timeloop_t *tl = sim_timeloop(b->sim);
    printf("MLUPS%s%s: median %.2f (%.2f to %.2f)\n", both ? ", " : "",
           both ? label[v] : "", b->median, b->lo, b->hi);
    const double predicted = sim_plan(b->sim)->max_seconds,
                 measured = b->median > 0 ? cells / (b->median * 1e6) : 0.0;
    if (measured > 0)
      printf("step: predicted %.3f ms (the plan's model), measured %.3f ms (the median): "
             "predicted / measured %.2f\n", 1e3 * predicted, 1e3 * measured,
             predicted / measured);
    printf("share of the step on rank %d (exchange, boundary, kernel)%s%s:\n", b->slowest,
           both ? ", " : "", both ? label[v] : "");
    for (int s = 0; s < b->nsweeps; ++s)
      printf("  %-14s %5.1f%% %5.1f%% %5.1f%%\n", timeloop_sweep_timing(tl, s).name,
             100.0 * b->spent[3 * s] / b->spent[3 * b->nsweeps],
             100.0 * b->spent[3 * s + 1] / b->spent[3 * b->nsweeps],
             100.0 * b->spent[3 * s + 2] / b->spent[3 * b->nsweeps]);
    if (b->gpu)
      printf("OpenCL device per step: %lld kernel launches, %lld transfers to the host, %lld "
             "to the device (the most of any process); %lld and %lld bytes\n",
             (long long)b->device[0], (long long)b->device[1], (long long)b->device[2],
             (long long)b->device[3], (long long)b->device[4]);
  }
  if (rank == 0 && both)
    printf("%s / %s: %.3f (ratio of the medians)\n", label[0], label[1],
           var[0].median / var[1].median);
  if (rank == 0) fflush(stdout);
  if (rank == 0 && json) {
    report_item_t items[10 + 2 * (2 + 3 * BENCH_CONFIG_MAX_SWEEPS)];
    char keys[2][2 + 3 * BENCH_CONFIG_MAX_SWEEPS][112];
    int n = 0;
    items[n++] = REPORT_TEXT_ITEM("config", config);
    items[n++] = REPORT_INT_ITEM("steps", steps);
    const char *ex = by_exchange ? "both" : simulation_exchange_names[var[0].exchange];
    const char *ov = both_overlap ? "both" : simulation_overlap_names[var[0].overlap];
    items[n++] = REPORT_TEXT_ITEM("exchange", ex);
    items[n++] = REPORT_TEXT_ITEM("overlap", ov);
    if (var[0].gpu) {
      items[n++] = REPORT_INT_ITEM("device_launches_per_step", var[0].device[0]);
      items[n++] = REPORT_INT_ITEM("device_reads_per_step", var[0].device[1]);
      items[n++] = REPORT_INT_ITEM("device_writes_per_step", var[0].device[2]);
      items[n++] = REPORT_INT_ITEM("device_bytes_read_per_step", var[0].device[3]);
      items[n++] = REPORT_INT_ITEM("device_bytes_written_per_step", var[0].device[4]);
    }
    static const char *const phase[3] = {"exchange", "boundary", "kernel"};
    for (int v = 0; v < nvar; ++v) {
      const bench_variant_t *b = &var[v];
      const timeloop_t *tl = sim_timeloop(b->sim);
      char suffix[24] = "";
      if (both) snprintf(suffix, sizeof suffix, "_%s", label[v]);
      snprintf(keys[v][0], sizeof keys[v][0], "mlups_median%s", suffix);
      items[n++] = REPORT_REAL_ITEM(keys[v][0], b->median);
      snprintf(keys[v][1 + 3 * BENCH_CONFIG_MAX_SWEEPS], sizeof keys[v][0],
               "predicted_step_s%s", suffix);
      items[n++] = REPORT_REAL_ITEM(keys[v][1 + 3 * BENCH_CONFIG_MAX_SWEEPS],
                                    sim_plan(b->sim)->max_seconds);
      for (int s = 0; s < b->nsweeps; ++s)
        for (int p = 0; p < 3; ++p) {
          char *k = keys[v][1 + 3 * s + p];
          snprintf(k, sizeof keys[v][0], "share_%s_%s%s", timeloop_sweep_timing(tl, s).name,
                   phase[p], suffix);
          items[n++] = REPORT_REAL_ITEM(k, b->spent[3 * s + p] / b->spent[3 * b->nsweeps]);
        }
    }
    st = report_write_json(json, items, (size_t)n, err);
  }
  st = verdict_reduce(comm, st, 0, err);
cleanup:
  for (int v = 0; v < 2; ++v) {
    sim_free(&var[v].sim);
    module_free_all(var[v].modules, var[v].nmodules);
  }
  config_free(&doc);
  return app_report(comm, st, err);
}
