/* tessera bench --machine FILE: the figures of this machine that the plan's model takes
 * (hardware.balance, docs/performance.md "The plan's model"), measured and written as a
 * machine description file, which a configuration names with hardware.machine:
 *   throughput.cpu, exchange_gbs  every process calibrates the periodic D3Q19 box (TRT,
 *                                 DP, SoA) on one block of N^3 cells, all at once (as
 *                                 hardware.balance.calibrate does): the mean over them;
 *   throughput.gpu                the same on rank 0's OpenCL device alone (where there is
 *                                 one and --no-gpu is not given);
 *   intranode_gbs,                a ping-pong of 1 MiB and of 8-byte messages between
 *   intranode_latency_us          rank 0 and the next rank on its node (where there is one);
 *   network_gbs, latency_us       the same with the first rank on another node (where
 *                                 there is one: the ranks span several nodes).
 * The file is written through a temporary file renamed into place. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "config.h"
#include "cpu_level.h"
#include "cpu_threads.h"
#include "module.h"
#include "node.h"
#include "opencl.h"
#include "output.h"
#include "plan.h"
#include "sim.h"
#include "simulation.h"
#include "verdict.h"

static const char machine_usage[] =
    "usage: tessera bench --machine FILE [--cells N] [--no-gpu]\n"
    "  measures the figures of the plan's model on this machine and writes them to FILE\n"
    "  (a machine description: name it with hardware.machine in a configuration): the\n"
    "  throughput of a process and the rate of its ghost copies (the periodic D3Q19 box,\n"
    "  TRT, DP, SoA, one block of N^3 cells per process, default N = 128), the throughput\n"
    "  of rank 0's OpenCL device (unless --no-gpu), and the bandwidth and latency between\n"
    "  rank 0 and the next rank on its node, and the first rank on another node (where the\n"
    "  ranks have one)\n";

/* The calibration of one block of n^3 cells per process on hs: the plan's throughput and
 * exchange rate of each rank, their means into *mlups and *xgbs. */
static tsr_status machine_calibrate(MPI_Comm comm, int n, const char *hs, double *mlups,
                                    double *xgbs, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int size = 1;
  MPI_Comm_size(comm, &size);
  config_t *doc = NULL;
  sim_t *sim = NULL;
  module_t mods[MODULE_MAX];
  int nmods = 0;
  char text[1024];
  snprintf(text, sizeof text,
           "{\"domain\": {\"cells\": [%d, %d, %d], \"blocks\": [1, 1, %d], \"periodic\": "
           "[true, true, true]}, \"steps\": 1, \"lbm\": {\"lattice\": \"d3q19\", \"collision\": "
           "\"trt\", \"precision\": \"dp\", \"viscosity\": 0.05}, \"hardware\": {\"hs\": \"%s\", "
           "\"balance\": {\"calibrate\": true}}}",
           n, n, n * size, size, hs);
  simulation_options_t so;
  TSR_TRY(config_parse(text, strlen(text), "bench --machine", &doc, err));
  TSR_TRY(app_read_modules(doc, &so, mods, &nmods, err));
  st = sim_create(comm, &so, &app_sim_setup, mods, nmods, &sim, err);
  nmods = 0; /* the simulation's now, or freed */
  TSR_TRY(st);
  const plan_t *plan = sim_plan(sim);
  *mlups = *xgbs = 0;
  for (int r = 0; r < plan->nranks; ++r) {
    *mlups += plan->mlups[r] / plan->nranks;
    *xgbs += 1.0 / (plan->exchange_seconds[r] * 1e9) / plan->nranks;
  }
cleanup:
  sim_free(&sim);
  module_free_all(mods, nmods);
  config_free(&doc);
  return st;
}

/* Rank 0 and rank peer: the bandwidth of 1 MiB messages (round trips) and the latency of
 * 8-byte ones (half a round trip); 0 elsewhere. Collective over comm (the others wait). */
static tsr_status machine_pingpong(MPI_Comm comm, int peer_rank, double *gbs,
                                   double *latency_us, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const int big = 1 << 20, rounds = 20, small_rounds = 500;
  char *buf = calloc((size_t)big, 1);
  TSR_CHECK(buf, TSR_ERR_NOMEM, "out of memory for the ping-pong (1 MiB)");
  *gbs = *latency_us = 0;
  TSR_MPI(MPI_Barrier(comm));
  for (int pass = 0; pass < 2 && (rank == 0 || rank == peer_rank); ++pass) {
    const int bytes = pass == 0 ? big : 8, n = pass == 0 ? rounds : small_rounds;
    const int peer = rank == 0 ? peer_rank : 0;
    double t0 = 0;
    /* round -1 sets the connection up, outside the timing */
    for (int k = -1; k < n; ++k) {
      if (k == 0) t0 = MPI_Wtime();
      if (rank == 0) {
        TSR_MPI(MPI_Send(buf, bytes, MPI_BYTE, peer, 7, comm));
        TSR_MPI(MPI_Recv(buf, bytes, MPI_BYTE, peer, 7, comm, MPI_STATUS_IGNORE));
      } else {
        TSR_MPI(MPI_Recv(buf, bytes, MPI_BYTE, peer, 7, comm, MPI_STATUS_IGNORE));
        TSR_MPI(MPI_Send(buf, bytes, MPI_BYTE, peer, 7, comm));
      }
    }
    const double t = MPI_Wtime() - t0;
    if (pass == 0) *gbs = 2.0 * (double)bytes * n / t / 1e9;
    else *latency_us = t / (2.0 * n) * 1e6;
  }
  TSR_MPI(MPI_Barrier(comm));
cleanup:
  free(buf);
  return st;
}

/* Whether rank 0's default OpenCL selection finds a device (rank 0 alone). */
static int machine_has_device(void) {
  opencl_device_desc_t *list = NULL;
  size_t n = 0;
  tsr_error_t e;
  int found = 0;
  if (opencl_list_devices(&list, &n, &e) == TSR_OK) {
    const opencl_select_t sel = opencl_select_default();
    found = n > 0 && opencl_pick_platform(list, n, &sel) >= 0;
  }
  free(list);
  return found;
}

/* The command line of the benchmark. */
typedef struct machine_args {
  const char *file;
  int64_t cells;
  bool gpu; /* rank 0's OpenCL device measured too (no --no-gpu) */
} machine_args_t;

/* What the benchmark measured, and between which ranks. */
typedef struct machine_figures {
  double cpu, xgbs;   /* throughput.cpu (MLUPS per process), exchange_gbs */
  double gpu;         /* throughput.gpu: rank 0's device, where device */
  int device;         /* rank 0 has an OpenCL device, measured */
  int peer[2];        /* rank 0's peers: [0] the next rank on its node, [1] the first on
                         another node; -1: none */
  double net[2], lat[2]; /* bandwidth (GB/s) and latency (us) to each peer */
} machine_figures_t;

/* The options: -1 to go on, else the exit status (0: --help; 2: bad usage, printed once). */
static int machine_parse(MPI_Comm comm, int argc, char **argv, machine_args_t *a) {
  *a = (machine_args_t){.file = NULL, .cells = 128, .gpu = true};
  const app_opt_t opts[] = {APP_OPT("--machine", APP_TEXT, &a->file),
                            APP_OPT("--cells", APP_INT, &a->cells, .imin = 4, .imax = 1024),
                            APP_OPT("--no-gpu", APP_FLAG, &a->gpu, .clear = true),
                            APP_OPT_END};
  const app_cmd_t cmd = {"bench --machine", machine_usage, opts, NULL, false};
  const int parsed = app_parse(comm, &cmd, argc, argv, NULL);
  if (parsed >= 0) return parsed;
  if (!a->file) return app_usage(comm, "bench --machine", machine_usage, NULL, "FILE");
  return -1;
}

/* Rank 0's OpenCL device alone, the others waiting: whether there is one (f->device) and
 * its throughput (f->gpu). */
static tsr_status machine_device(MPI_Comm comm, const machine_args_t *a, machine_figures_t *f,
                                 tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  f->device = rank == 0 && a->gpu ? machine_has_device() : 0;
  TSR_MPI(MPI_Bcast(&f->device, 1, MPI_INT, 0, comm));
  if (f->device) {
    double unused = 0;
    st = rank == 0 ? machine_calibrate(MPI_COMM_SELF, (int)a->cells, "gpu", &f->gpu, &unused, err)
                   : TSR_OK;
    TSR_TRY(verdict_reduce(comm, st, 0, err));
  }
cleanup:
  return st;
}

/* Every rank's node (*procs, one per rank) and the peers of rank 0: peer[0] the next rank
 * on its node, peer[1] the first on another node (-1: none). Collective: one verdict. */
static tsr_status machine_peers(MPI_Comm comm, node_process_t **procs, int peer[2],
                                tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int size = 1;
  MPI_Comm_size(comm, &size);
  *procs = calloc((size_t)size, sizeof **procs);
  st = *procs ? TSR_OK : tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  const simulation_options_t plain = simulation_options_default();
  TSR_TRY(node_resolve(comm, &plain.hardware, *procs, err)); /* every rank's node name */
  for (int r = 1; r < size; ++r) {
    const int k = strcmp((*procs)[0].node, (*procs)[r].node) != 0;
    if (peer[k] < 0) peer[k] = r;
  }
cleanup:
  return st;
}

/* The machine description file, through a temporary file renamed into place (rank 0). */
static tsr_status machine_write(const machine_args_t *a, int size, const node_process_t *procs,
                                const machine_figures_t *f, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char date[32];
  const time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
  output_file_t out;
  TSR_TRY(output_file_open(&out, a->file, err));
  fprintf(out.f, "{\n  \"name\": \"%s, %s, %d process(es) of %d thread(s)\",\n",
          procs[0].node,
          cpu_level_name(cpu_level_current()), size, cpu_threads_max());
  fprintf(out.f, "  \"measured\": \"tessera bench --machine, %s: the periodic D3Q19 box "
                 "(TRT, DP, SoA), one block of %lld^3 cells per process",
          date, (long long)a->cells);
  if (f->peer[0] > 0)
    fprintf(out.f, "; within a node: ranks 0 and %d (%s)", f->peer[0], procs[0].node);
  if (f->peer[1] > 0)
    fprintf(out.f, "; between nodes: ranks 0 and %d (%s, %s)", f->peer[1], procs[0].node,
            procs[f->peer[1]].node);
  fprintf(out.f, "\",\n  \"throughput\": { \"cpu\": %.6g", f->cpu);
  if (f->device) fprintf(out.f, ", \"gpu\": %.6g", f->gpu);
  fprintf(out.f, " },\n  \"cpu_threads\": %d,\n  \"exchange_gbs\": %.6g", cpu_threads_max(),
          f->xgbs);
  if (f->peer[0] > 0)
    fprintf(out.f, ",\n  \"intranode_gbs\": %.6g,\n  \"intranode_latency_us\": %.6g",
            f->net[0], f->lat[0]);
  if (f->peer[1] > 0)
    fprintf(out.f, ",\n  \"network_gbs\": %.6g,\n  \"latency_us\": %.6g", f->net[1], f->lat[1]);
  fprintf(out.f, "\n}\n");
  TSR_TRY(output_file_commit(&out, err));
cleanup:
  return st;
}

/* What was measured and written (rank 0). */
static void machine_print(const machine_args_t *a, int size, const machine_figures_t *f) {
  printf("tessera bench --machine %s: %d process(es) x %d thread(s), one %lld^3 block each\n",
         a->file, size, cpu_threads_max(), (long long)a->cells);
  printf("  throughput.cpu %.2f MLUPS per process, exchange_gbs %.3f GB/s\n", f->cpu, f->xgbs);
  if (f->device) printf("  throughput.gpu %.2f MLUPS (rank 0's OpenCL device)\n", f->gpu);
  if (f->peer[0] > 0)
    printf("  intranode_gbs %.3f GB/s, intranode_latency_us %.2f us (ranks 0 and %d, "
           "one node)\n", f->net[0], f->lat[0], f->peer[0]);
  if (f->peer[1] > 0)
    printf("  network_gbs %.3f GB/s, latency_us %.2f us (ranks 0 and %d, two nodes)\n",
           f->net[1], f->lat[1], f->peer[1]);
  fflush(stdout);
}

int app_bench_machine(MPI_Comm comm, int argc, char **argv) {
  tsr_status st = TSR_OK;
  tsr_error_t e, *err = &e;
  tsr_error_clear(err);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  machine_args_t a;
  const int parsed = machine_parse(comm, argc, argv, &a);
  if (parsed >= 0) return parsed;
  machine_figures_t f = {.peer = {-1, -1}};
  node_process_t *procs = NULL;
  /* the processes' throughput -> rank 0's device -> the links -> the file */
  TSR_TRY(machine_calibrate(comm, (int)a.cells, "cpu", &f.cpu, &f.xgbs, err));
  TSR_TRY(machine_device(comm, &a, &f, err));
  TSR_TRY(machine_peers(comm, &procs, f.peer, err));
  for (int k = 0; k < 2; ++k)
    if (f.peer[k] > 0) TSR_TRY(machine_pingpong(comm, f.peer[k], &f.net[k], &f.lat[k], err));
  if (rank == 0) {
    st = machine_write(&a, size, procs, &f, err);
    if (st == TSR_OK) machine_print(&a, size, &f);
  }
  st = verdict_reduce(comm, st, 0, err);
cleanup:
  free(procs);
  return app_report(comm, st, err);
}
