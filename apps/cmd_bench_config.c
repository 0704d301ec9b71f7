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
  const char *label; /* what tells it from the other variant (with two) */
} bench_variant_t;

/* The command line of the benchmark. */
typedef struct bench_config_args {
  const char *config, *json, *exchange, *overlap;
  int64_t steps, repeat;
  app_sets_t sets;
  bool exchange_both, overlap_both; /* --exchange both, --overlap both */
  int exchange_chosen, overlap_chosen; /* the names' indices; -1: CONFIG's (or both) */
} bench_config_args_t;

/* A variant's run built and warmed up: what one step gives a device, and the sweep
 * timings the measured steps start from. */
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

/* The options: -1 to go on, else the exit status (0: --help; 2: bad usage, printed once). */
static int bench_config_parse(MPI_Comm comm, int argc, char **argv, bench_config_args_t *a) {
  *a = (bench_config_args_t){.steps = 50, .repeat = 3};
  const app_opt_t opts[] = {APP_OPT("--steps", APP_INT, &a->steps, .imin = 1, .imax = INT64_MAX),
                            APP_OPT("--repeat", APP_INT, &a->repeat, .imin = 1,
                             .imax = BENCH_CONFIG_MAX_REPEAT),
                            APP_OPT("--exchange", APP_TEXT, &a->exchange),
                            APP_OPT("--overlap", APP_TEXT, &a->overlap),
                            APP_OPT("--json", APP_TEXT, &a->json),
                            APP_OPT("--set", APP_SET, &a->sets),
                            APP_OPT_END};
  const app_cmd_t cmd = {"bench --config", config_usage, opts, "CONFIG", true};
  const int parsed = app_parse(comm, &cmd, argc, argv, &a->config);
  if (parsed >= 0) return parsed;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  a->exchange_both = a->exchange && strcmp(a->exchange, "both") == 0;
  a->exchange_chosen =
      a->exchange_both ? -1 : config_name_index(simulation_exchange_names, a->exchange);
  if (a->exchange && !a->exchange_both && a->exchange_chosen < 0) {
    if (rank == 0)
      fprintf(stderr, "tessera: error: bench --config: --exchange %s: allowed are merged, "
                      "per_sweep and both\n", a->exchange);
    return 2;
  }
  a->overlap_both = a->overlap && strcmp(a->overlap, "both") == 0;
  a->overlap_chosen =
      a->overlap_both ? -1 : config_name_index(simulation_overlap_names, a->overlap);
  if (a->overlap && !a->overlap_both && a->overlap_chosen < 0) {
    if (rank == 0)
      fprintf(stderr, "tessera: error: bench --config: --overlap %s: allowed are auto, on, off "
                      "and both\n", a->overlap);
    return 2;
  }
  if (a->exchange_both && a->overlap_both) {
    if (rank == 0)
      fprintf(stderr, "tessera: error: bench --config: --exchange both and --overlap both: "
                      "one comparison at a time\n");
    return 2;
  }
  return -1;
}

/* The variants the options ask for, with their labels: one with CONFIG's exchange and
 * overlap (or those given), or the two sides of the comparison "both" asks for. */
static void bench_config_variants(const bench_config_args_t *a, const simulation_options_t *so,
                                  bench_variant_t var[2], int *nvar) {
  const simulation_exchange_t ex = a->exchange_chosen >= 0
                                       ? (simulation_exchange_t)a->exchange_chosen
                                       : so->hardware.exchange;
  const simulation_overlap_t ov = a->overlap_chosen >= 0
                                      ? (simulation_overlap_t)a->overlap_chosen
                                      : so->hardware.overlap;
  var[(*nvar)++] =
      (bench_variant_t){.exchange = a->exchange_both ? SIMULATION_EXCHANGE_MERGED : ex,
                        .overlap = a->overlap_both ? SIMULATION_OVERLAP_ON : ov};
  if (a->exchange_both || a->overlap_both)
    var[(*nvar)++] =
        (bench_variant_t){.exchange = a->exchange_both ? SIMULATION_EXCHANGE_PER_SWEEP : ex,
                          .overlap = a->overlap_both ? SIMULATION_OVERLAP_OFF : ov};
  for (int v = 0; v < *nvar; ++v)
    var[v].label = a->exchange_both ? simulation_exchange_names[var[v].exchange]
                   : var[v].overlap == SIMULATION_OVERLAP_ON ? "overlap"
                                                             : "no_overlap";
}

/* The configuration with the overrides, its options, and the variants, each with its own
 * module states; unknown keys refused. Collective: one verdict. */
static tsr_status bench_config_read(MPI_Comm comm, const bench_config_args_t *a, config_t **doc,
                                    simulation_options_t *so, bench_variant_t var[2], int *nvar,
                                    tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(app_config_load(comm, a->config, &a->sets, doc, err));
  st = simulation_options_read(*doc, so, err);
  if (st == TSR_OK) bench_config_variants(a, so, var, nvar);
  for (int v = 0; v < *nvar && st == TSR_OK; ++v)
    st = module_read_all(*doc, so, app_modules, var[v].modules, &var[v].nmodules, err);
  if (st == TSR_OK) st = config_check_unknown(*doc, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
cleanup:
  return st;
}

/* The first line: the domain, the fs, the exchange and overlap, the steps (rank 0). */
static void bench_config_header(const bench_config_args_t *a, const simulation_options_t *so,
                                const bench_variant_t *v) {
  const char *fs = sim_fs_text(v->sim); /* empty where no module names an fs */
  printf("tessera bench --config %s: %lldx%lldx%lld cells in %d blocks, %s%sexchange %s%s, "
         "overlap %s, %lld steps x %lld\n",
         a->config, (long long)so->domain.cells[0], (long long)so->domain.cells[1],
         (long long)so->domain.cells[2],
         so->domain.blocks[0] * so->domain.blocks[1] * so->domain.blocks[2], fs,
         fs[0] ? ", " : "", simulation_exchange_names[v->exchange],
         a->exchange_both ? " and per_sweep (alternating)" : "",
         a->overlap_both ? "on and off (alternating)" : simulation_overlap_names[v->overlap],
         (long long)a->steps, (long long)a->repeat);
  fflush(stdout);
}

/* The repetitions, the variants alternating: the MLUPS of each (printed on rank 0) and the
 * seconds of its steps; a diverged run ends the benchmark with the run's error. */
static tsr_status bench_config_measure(int rank, const bench_config_args_t *a,
                                       const simulation_options_t *so, bench_variant_t *var,
                                       int nvar, double cells, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const bool both = nvar > 1;
  for (int64_t r = 0; r < a->repeat; ++r)
    for (int v = 0; v < nvar; ++v) {
      /* the run's own loop, checks included, without output */
      run_result_t res;
      const run_options_t ro = {.steps = a->steps, .out = NULL, .signals = false};
      TSR_TRY(run_steps(var[v].sim, so, &ro, &res, err));
      /* the steps' time, as the MLUPS count it: the stability checks (on GPU blocks a
         download of every field) are not part of a step's phases */
      var[v].total += res.seconds;
      if (res.ending != TSR_OK) {
        st = res.ending;
        *err = res.diverged;
        goto cleanup;
      }
      var[v].mlups[r] = cells * (double)a->steps / res.seconds / 1e6;
      if (rank == 0) {
        printf("  repetition %lld%s%s: %.2f MLUPS\n", (long long)(r + 1), both ? ", " : "",
               both ? var[v].label : "", var[v].mlups[r]);
        fflush(stdout);
      }
    }
cleanup:
  return st;
}

/* A variant's figures (rank 0): its MLUPS, its step predicted and measured, the share of
 * each sweep and phase, and what one step gives a device. */
static void bench_config_print(const bench_variant_t *b, bool both, double cells) {
  const timeloop_t *tl = sim_timeloop(b->sim);
  printf("MLUPS%s%s: median %.2f (%.2f to %.2f)\n", both ? ", " : "", both ? b->label : "",
         b->median, b->lo, b->hi);
  const double predicted = sim_plan(b->sim)->max_seconds,
               measured = b->median > 0 ? cells / (b->median * 1e6) : 0.0;
  if (measured > 0)
    printf("step: predicted %.3f ms (the plan's model), measured %.3f ms (the median): "
           "predicted / measured %.2f\n", 1e3 * predicted, 1e3 * measured,
           predicted / measured);
  printf("share of the step on rank %d (exchange, boundary, kernel)%s%s:\n", b->slowest,
         both ? ", " : "", both ? b->label : "");
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

/* The report --json asks for (rank 0): the options, the device traffic, and each
 * variant's median MLUPS, predicted step and shares. */
static tsr_status bench_config_json(const bench_config_args_t *a, const bench_variant_t *var,
                                    int nvar, tsr_error_t *err) {
  report_item_t items[10 + 2 * (2 + 3 * BENCH_CONFIG_MAX_SWEEPS)];
  char keys[2][2 + 3 * BENCH_CONFIG_MAX_SWEEPS][112];
  int n = 0;
  items[n++] = REPORT_TEXT_ITEM("config", a->config);
  items[n++] = REPORT_INT_ITEM("steps", a->steps);
  const char *ex = a->exchange_both ? "both" : simulation_exchange_names[var[0].exchange];
  const char *ov = a->overlap_both ? "both" : simulation_overlap_names[var[0].overlap];
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
    if (nvar > 1) snprintf(suffix, sizeof suffix, "_%s", b->label);
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
  return report_write_json(a->json, items, (size_t)n, err);
}

int app_bench_config(MPI_Comm comm, int argc, char **argv) {
  tsr_status st = TSR_OK;
  tsr_error_t e, *err = &e;
  tsr_error_clear(err);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  bench_config_args_t a;
  const int parsed = bench_config_parse(comm, argc, argv, &a);
  if (parsed >= 0) return parsed;
  config_t *doc = NULL;
  bench_variant_t var[2];
  memset(var, 0, sizeof var);
  int nvar = 0; /* two: a comparison, the repetitions alternating */
  simulation_options_t so;
  /* configuration -> variants -> builds -> repetitions -> shares -> statistics -> report */
  TSR_TRY(bench_config_read(comm, &a, &doc, &so, var, &nvar, err));
  for (int v = 0; v < nvar; ++v) TSR_TRY(bench_build(comm, &so, &var[v], err));
  const double cells = (double)sim_cells(var[0].sim);
  if (rank == 0) bench_config_header(&a, &so, &var[0]);
  TSR_TRY(bench_config_measure(rank, &a, &so, var, nvar, cells, err));
  for (int v = 0; v < nvar; ++v) TSR_TRY(bench_shares(comm, rank, &var[v], err));
  for (int v = 0; v < nvar; ++v) {
    app_stats(var[v].mlups, (int)a.repeat, &var[v].median, &var[v].lo, &var[v].hi);
    if (rank == 0) bench_config_print(&var[v], nvar > 1, cells);
  }
  if (rank == 0 && nvar > 1)
    printf("%s / %s: %.3f (ratio of the medians)\n", var[0].label, var[1].label,
           var[0].median / var[1].median);
  if (rank == 0) fflush(stdout);
  if (rank == 0 && a.json) st = bench_config_json(&a, var, nvar, err);
  st = verdict_reduce(comm, st, 0, err);
cleanup:
  for (int v = 0; v < 2; ++v) {
    sim_free(&var[v].sim);
    module_free_all(var[v].modules, var[v].nmodules);
  }
  config_free(&doc);
  return app_report(comm, st, err);
}
