/* tessera bench --machine FILE: the figures of this machine that the plan's model takes
 * (hardware.balance, docs/performance.md "The plan's model"), measured and written as a
 * machine description file, which a configuration names with hardware.machine:
 *   throughput.cpu, exchange_gbs  every process calibrates the periodic D3Q19 box (TRT,
 *                                 DP, SoA) on one block of N^3 cells, all at once (as
 *                                 hardware.balance.calibrate does): the mean over them;
 *   throughput.gpu                the same on rank 0's OpenCL device alone (where there is
 *                                 one and --no-gpu is not given);
 *   network_gbs, latency_us       a ping-pong of 1 MiB and of 8-byte messages between
 *                                 ranks 0 and 1 (with 2 ranks or more; the file says
 *                                 whether they shared a node).
 * The file is written through a temporary file renamed into place. */
#include <math.h>
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
    "  of rank 0's OpenCL device (unless --no-gpu), and with 2 ranks or more the bandwidth\n"
    "  and latency between ranks 0 and 1\n";

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
  TSR_TRY(simulation_options_read(doc, &so, err));
  TSR_TRY(module_read_all(doc, &so, app_modules, mods, &nmods, err));
  TSR_TRY(config_check_unknown(doc, err));
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

/* Ranks 0 and 1: the bandwidth of 1 MiB messages (round trips) and the latency of 8-byte
 * ones (half a round trip); 0 elsewhere. Collective over comm (the others wait). */
static tsr_status machine_pingpong(MPI_Comm comm, double *gbs, double *latency_us,
                                   tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const int big = 1 << 20, rounds = 20, small_rounds = 500;
  char *buf = calloc((size_t)big, 1);
  TSR_CHECK(buf, TSR_ERR_NOMEM, "out of memory for the ping-pong (1 MiB)");
  *gbs = *latency_us = 0;
  TSR_MPI(MPI_Barrier(comm));
  for (int pass = 0; pass < 2 && rank < 2; ++pass) {
    const int bytes = pass == 0 ? big : 8, n = pass == 0 ? rounds : small_rounds;
    const int peer = 1 - rank;
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

int app_bench_machine(MPI_Comm comm, int argc, char **argv) {
  tsr_status st = TSR_OK;
  tsr_error_t e, *err = &e;
  tsr_error_clear(err);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const char *file = NULL;
  int64_t cells = 128;
  bool gpu = true;
  if (app_help(comm, argc, argv, machine_usage)) return 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--machine") == 0 && i + 1 < argc) file = argv[++i];
    else if (strcmp(argv[i], "--cells") == 0 && i + 1 < argc) {
      if (!app_int_arg(comm, "bench --machine", "--cells", argv[++i], 4, 1024, &cells)) return 2;
    } else if (strcmp(argv[i], "--no-gpu") == 0) gpu = false;
    else return app_usage(comm, "bench --machine", machine_usage, argv[i], NULL);
  }
  if (!file) return app_usage(comm, "bench --machine", machine_usage, NULL, "FILE");
  double cpu = 0, xgbs = 0, gpu_mlups = 0, net = 0, lat = 0;
  TSR_TRY(machine_calibrate(comm, (int)cells, "cpu", &cpu, &xgbs, err));
  /* rank 0's device alone, the others waiting */
  int device = rank == 0 && gpu ? machine_has_device() : 0;
  TSR_MPI(MPI_Bcast(&device, 1, MPI_INT, 0, comm));
  if (device) {
    double unused = 0;
    st = rank == 0 ? machine_calibrate(MPI_COMM_SELF, (int)cells, "gpu", &gpu_mlups, &unused, err)
                   : TSR_OK;
    TSR_TRY(verdict_reduce(comm, st, 0, err));
  }
  char node0[NODE_NAME_MAX] = "", node1[NODE_NAME_MAX] = "";
  TSR_TRY(node_name(node0, sizeof node0, err));
  if (size >= 2) {
    TSR_TRY(machine_pingpong(comm, &net, &lat, err));
    if (rank == 1) TSR_MPI(MPI_Send(node0, NODE_NAME_MAX, MPI_CHAR, 0, 8, comm));
    if (rank == 0) TSR_MPI(MPI_Recv(node1, NODE_NAME_MAX, MPI_CHAR, 1, 8, comm, MPI_STATUS_IGNORE));
  }
  if (rank == 0) {
    char date[32];
    const time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    output_file_t out;
    st = output_file_open(&out, file, err);
    if (st == TSR_OK) {
      fprintf(out.f, "{\n  \"name\": \"%s, %s, %d process(es) of %d thread(s)\",\n", node0,
              cpu_level_name(cpu_level_current()), size, cpu_threads_max());
      fprintf(out.f, "  \"measured\": \"tessera bench --machine, %s: the periodic D3Q19 box "
                     "(TRT, DP, SoA), one block of %lld^3 cells per process",
              date, (long long)cells);
      if (size >= 2)
        fprintf(out.f, "; network between ranks 0 and 1 %s (%s, %s)",
                strcmp(node0, node1) == 0 ? "on one node" : "on two nodes", node0, node1);
      fprintf(out.f, "\",\n  \"throughput\": { \"cpu\": %.6g", cpu);
      if (device) fprintf(out.f, ", \"gpu\": %.6g", gpu_mlups);
      fprintf(out.f, " },\n  \"exchange_gbs\": %.6g", xgbs);
      if (size >= 2)
        fprintf(out.f, ",\n  \"network_gbs\": %.6g,\n  \"latency_us\": %.6g", net, lat);
      fprintf(out.f, "\n}\n");
      st = output_file_commit(&out, err);
    }
    if (st == TSR_OK) {
      printf("tessera bench --machine %s: %d process(es) x %d thread(s), one %lld^3 block each\n",
             file, size, cpu_threads_max(), (long long)cells);
      printf("  throughput.cpu %.2f MLUPS per process, exchange_gbs %.3f GB/s\n", cpu, xgbs);
      if (device) printf("  throughput.gpu %.2f MLUPS (rank 0's OpenCL device)\n", gpu_mlups);
      if (size >= 2)
        printf("  network_gbs %.3f GB/s, latency_us %.2f us (ranks 0 and 1, %s)\n", net, lat,
               strcmp(node0, node1) == 0 ? "one node" : "two nodes");
      fflush(stdout);
    }
  }
  st = verdict_reduce(comm, st, 0, err);
cleanup:
  return app_report(comm, st, err);
}
