/* tessera bench --hetero CONFIG: the heterogeneous benchmark. The processes of CONFIG's
 * node configurations run its domain three times: the CPU processes alone, the GPU
 * processes alone (the others idle, asleep), then all together, balanced as a run of
 * CONFIG balances them; it prints the MLUPS of each and the ratio heterogeneous / (CPU
 * + GPU), the share of the two parts' sum the combined run reaches. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "config.h"
#include "cpu_threads.h"
#include "lbm.h"
#include "lbm_sim.h"
#include "node.h"
#include "report.h"
#include "simulation.h"
#include "verdict.h"

static const char hetero_usage[] =
    "usage: tessera bench --hetero CONFIG [--set PATH=VALUE]... [--steps S] [--json FILE]\n"
    "  CONFIG's hardware section must give both hs cpu and hs gpu processes (node\n"
    "  configurations); S timed steps per run (default 50)\n";

/* A barrier where the waiting processes sleep instead of spinning, so that they leave
 * the cores to the processes at work. */
static tsr_status hetero_idle_barrier(MPI_Comm comm, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  MPI_Request req;
  int done = 0;
  TSR_MPI(MPI_Ibarrier(comm, &req));
  while (!done) {
    TSR_MPI(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (!done) nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
cleanup:
  return st;
}

typedef struct hetero_result {
  double mlups;          /* measured */
  double predicted;      /* from the plan: cells / largest predicted time per step */
  double imbalance;      /* predicted */
  int processes;
} hetero_result_t;

/* MLUPS of so on comm: 3 warm-up steps, then steps timed (the slowest process). */
static tsr_status hetero_run(MPI_Comm comm, const simulation_options_t *so, const lbm_options_t *lo,
                             int64_t steps, hetero_result_t *r, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_sim_t *sim = NULL;
  TSR_TRY(lbm_sim_create(comm, so, lo, &sim, err));
  TSR_TRY(lbm_sim_step(sim, 3, err));
  MPI_Barrier(comm);
  double t0 = MPI_Wtime();
  TSR_TRY(lbm_sim_step(sim, steps, err));
  double t = MPI_Wtime() - t0, tmax = 0;
  TSR_MPI(MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm));
  const plan_t *plan = lbm_sim_plan(sim);
  r->mlups = (double)lbm_sim_cells(sim) * (double)steps / tmax / 1e6;
  r->predicted = plan->max_seconds > 0 ? (double)lbm_sim_cells(sim) / plan->max_seconds / 1e6 : 0;
  r->imbalance = plan_imbalance(plan);
  MPI_Comm_size(comm, &r->processes);
cleanup:
  lbm_sim_free(&sim);
  return st;
}

/* The options for the processes of one hs alone: every one of them that hs, with this
 * process's device (hs gpu); threads are already set. */
static simulation_options_t hetero_alone(const simulation_options_t *so, simulation_hs_t hs,
                                         const node_process_t *me) {
  simulation_options_t o = *so;
  o.hardware.nconfigurations = 0;
  o.hardware.nnodes = 0;
  o.hardware.hs = hs;
  o.hardware.opencl = simulation_process_device(&so->hardware, &me->proc);
  return o;
}

/* The command line of the benchmark. */
typedef struct hetero_args {
  const char *config, *json;
  int64_t steps;
  app_sets_t sets;
} hetero_args_t;

/* The options: -1 to go on, else the exit status (0: --help; 2: bad usage, printed once). */
static int hetero_parse(MPI_Comm comm, int argc, char **argv, hetero_args_t *a) {
  *a = (hetero_args_t){.steps = 50};
  const app_opt_t opts[] = {APP_OPT("--steps", APP_INT, &a->steps, .imin = 1, .imax = INT64_MAX),
                            APP_OPT("--json", APP_TEXT, &a->json),
                            APP_OPT("--set", APP_SET, &a->sets),
                            APP_OPT_END};
  const app_cmd_t cmd = {"bench --hetero", hetero_usage, opts, "CONFIG", true};
  return app_parse(comm, &cmd, argc, argv, &a->config);
}

/* The configuration with the overrides, its options and LBM options (unknown keys
 * refused), and every process's place (*procs, one per rank). Collective: one verdict. */
static tsr_status hetero_read(MPI_Comm comm, const hetero_args_t *a, config_t **doc,
                              simulation_options_t *so, lbm_options_t *lo,
                              node_process_t **procs, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int size = 1;
  MPI_Comm_size(comm, &size);
  TSR_TRY(app_config_load(comm, a->config, &a->sets, doc, err));
  st = simulation_options_read(*doc, so, err);
  if (st == TSR_OK) st = lbm_options_read(*doc, &so->domain, lo, err);
  if (st == TSR_OK) st = config_check_unknown(*doc, err);
  *procs = calloc((size_t)size, sizeof **procs);
  if (st == TSR_OK && !*procs)
    st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_TRY(node_resolve(comm, &so->hardware, *procs, err));
cleanup:
  return st;
}

/* The first line: the domain, the fs, the steps and the processes of each hs (rank 0). */
static void hetero_header(const hetero_args_t *a, const simulation_options_t *so,
                          const lbm_options_t *lo, const int count[2]) {
  printf("tessera bench --hetero %s: %lldx%lldx%lld cells in %d blocks, %s, %lld steps; %d hs cpu "
         "+ %d hs gpu processes\n",
         a->config, (long long)so->domain.cells[0], (long long)so->domain.cells[1],
         (long long)so->domain.cells[2],
         so->domain.blocks[0] * so->domain.blocks[1] * so->domain.blocks[2], lbm_fs(lo),
         (long long)a->steps, count[0], count[1]);
  fflush(stdout);
}

/* The processes of each hs alone on part (their own hs's), the others asleep: their MLUPS
 * into res[0] (cpu) and res[1] (gpu), count[hs] processes each. */
static tsr_status hetero_parts(MPI_Comm comm, MPI_Comm part, const simulation_options_t *so,
                               const lbm_options_t *lo, const node_process_t *me, int64_t steps,
                               const int count[2], hetero_result_t res[2], tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  for (int hs = 0; hs < 2; ++hs) {
    if ((int)me->proc.hs == hs) {
      simulation_options_t alone = hetero_alone(so, (simulation_hs_t)hs, me);
      st = hetero_run(part, &alone, lo, steps, &res[hs], err);
    }
    TSR_TRY(hetero_idle_barrier(comm, err));
    TSR_TRY(verdict_reduce(comm, st, 0, err));
    TSR_MPI(MPI_Allreduce(MPI_IN_PLACE, &res[hs].mlups, 1, MPI_DOUBLE, MPI_MAX, comm));
    res[hs].processes = count[hs];
    if (rank == 0) {
      printf("%s processes alone (%d): %.2f MLUPS\n", hs ? "GPU" : "CPU", count[hs], res[hs].mlups);
      fflush(stdout);
    }
  }
cleanup:
  return st;
}

/* The combined run's figures and the ratio to the parts' sum, and the report --json asks
 * for (rank 0). */
static tsr_status hetero_report(const hetero_args_t *a, int size, const int count[2],
                                const hetero_result_t res[3], tsr_error_t *err) {
  tsr_status st = TSR_OK;
  double ratio = res[2].mlups / (res[0].mlups + res[1].mlups);
  printf("heterogeneous (%d): %.2f MLUPS (predicted %.2f, imbalance %.1f%%)\n", size,
         res[2].mlups, res[2].predicted, 100.0 * res[2].imbalance);
  printf("heterogeneous / (CPU + GPU) = %.1f%%\n", 100.0 * ratio);
  if (a->json) {
    report_item_t items[] = {
        REPORT_TEXT_ITEM("config", a->config),
        REPORT_INT_ITEM("steps", a->steps),
        REPORT_INT_ITEM("cpu_processes", count[0]),
        REPORT_INT_ITEM("gpu_processes", count[1]),
        REPORT_REAL_ITEM("cpu_mlups", res[0].mlups),
        REPORT_REAL_ITEM("gpu_mlups", res[1].mlups),
        REPORT_REAL_ITEM("hetero_mlups", res[2].mlups),
        REPORT_REAL_ITEM("hetero_predicted_mlups", res[2].predicted),
        REPORT_REAL_ITEM("hetero_predicted_imbalance", res[2].imbalance),
        REPORT_REAL_ITEM("hetero_over_sum", ratio),
    };
    TSR_TRY(report_write_json(a->json, items, sizeof items / sizeof items[0], err));
  }
cleanup:
  return st;
}

int app_bench_hetero(MPI_Comm comm, int argc, char **argv) {
  tsr_status st = TSR_OK;
  tsr_error_t e, *err = &e;
  tsr_error_clear(err);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  hetero_args_t a;
  const int parsed = hetero_parse(comm, argc, argv, &a);
  if (parsed >= 0) return parsed;
  config_t *doc = NULL;
  node_process_t *procs = NULL;
  MPI_Comm part = MPI_COMM_NULL;
  simulation_options_t so;
  lbm_options_t lo;
  hetero_result_t res[3] = {{0}}; /* cpu alone, gpu alone, together */
  TSR_TRY(hetero_read(comm, &a, &doc, &so, &lo, &procs, err));
  const node_process_t *me = &procs[rank];
  int count[2] = {0, 0};
  for (int r = 0; r < size; ++r) count[procs[r].proc.hs]++;
  TSR_CHECK(count[0] > 0 && count[1] > 0, TSR_ERR_INVALID,
            "%s: the heterogeneous benchmark needs hs cpu and hs gpu processes; the hardware "
            "section gives %d hs cpu and %d hs gpu on %d rank(s) (see hardware.configurations)",
            a.config, count[0], count[1], size);
  if (me->proc.threads > 0) cpu_threads_set(me->proc.threads);
  TSR_MPI(MPI_Comm_split(comm, (int)me->proc.hs, rank, &part));
  if (rank == 0) hetero_header(&a, &so, &lo, count);
  /* each part alone, the other asleep, then all together */
  TSR_TRY(hetero_parts(comm, part, &so, &lo, me, a.steps, count, res, err));
  TSR_TRY(hetero_run(comm, &so, &lo, a.steps, &res[2], err));
  if (rank == 0) st = hetero_report(&a, size, count, res, err);
  st = verdict_reduce(comm, st, 0, err);
cleanup:
  if (part != MPI_COMM_NULL) MPI_Comm_free(&part);
  free(procs);
  config_free(&doc);
  return app_report(comm, st, err);
}
