/* tessera bench: MLUPS of the CPU LBM kernels against this machine's memory bandwidth,
 * measured in the same run on the same threads. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "cpu_stream.h"
#include "cpu_threads.h"
#include "d3q19.h"
#include "lbm_sim.h"
#include "report.h"
#include "verdict.h"

typedef struct bench_row {
  lbm_precision_t prec;
  lbm_collision_t coll;
  int blocks_per_process;
  double mlups, bytes_per_cell, bound_mlups, fraction;
  double exchange_share; /* share of the step spent in the ghost exchange (slowest rank) */
} bench_row_t;

/* MLUPS of streaming alone (d3q19_stream_only) on one n^3 field per process: the same
 * loop, loads and stores as the stream-collide kernels without the arithmetic, so the
 * ceiling of the layout's access pattern on this machine. 0 when out of memory. */
static double stream_only_mlups(long n, long steps, int sp) {
  aos_dims_t d = {(int)n, (int)n, (int)n, D3Q19_Q};
  size_t elems = aos_field_elements(&d), es = sp ? sizeof(float) : sizeof(double);
  void *a = malloc(elems * es), *b = malloc(elems * es);
  double mlups = 0;
  if (a && b) {
    const d3q19_params_t p = {1.0, 1.0, 1.0, {0, 0, 0}, 0};
    double t = 0;
    for (int pass = 0; pass < 2; ++pass) { /* first touch and one warm-up step, then timed */
      if (pass == 0) {
        if (sp) d3q19_init_f32(a, &d, &p, 1, NULL, NULL), d3q19_init_f32(b, &d, &p, 1, NULL, NULL);
        else d3q19_init_f64(a, &d, &p, 1, NULL, NULL), d3q19_init_f64(b, &d, &p, 1, NULL, NULL);
      }
      const long reps = pass == 0 ? 1 : steps;
      const double t0 = omp_get_wtime();
      for (long k = 0; k < reps; ++k) {
        if (sp) d3q19_stream_only_f32(k % 2 ? b : a, k % 2 ? a : b, &d);
        else d3q19_stream_only_f64(k % 2 ? b : a, k % 2 ? a : b, &d);
      }
      t = omp_get_wtime() - t0;
    }
    mlups = (double)n * (double)n * (double)n * (double)steps / t / 1e6;
  }
  free(a);
  free(b);
  return mlups;
}

static const char bench_usage[] =
    "usage: tessera bench [--cells N] [--steps S] [--json FILE]\n"
    "  a periodic box of N^3 cells per process (default 128), S timed steps (default 20)\n";

int app_bench(MPI_Comm comm, int argc, char **argv) {
  tsr_status st = TSR_OK;
  tsr_error_t e, *err = &e;
  tsr_error_clear(err);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  long n = 128, steps = 20;
  const char *json = NULL;
  for (int i = 1; i < argc; ++i) {
    char *end = NULL;
    if (strcmp(argv[i], "--cells") == 0 && i + 1 < argc) n = strtol(argv[++i], &end, 10);
    else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) steps = strtol(argv[++i], &end, 10);
    else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) json = argv[++i];
    else n = -1;
    if ((end && *end) || n < 4 || n > 2048 || steps < 1) {
      if (rank == 0) fputs(bench_usage, stderr);
      return 2;
    }
  }

  /* the memory bandwidth of this process's threads: arrays of 8x the cells' PDFs / 19 */
  size_t copy_bytes = (size_t)n * (size_t)n * (size_t)n * 8u * 4u;
  if (copy_bytes < ((size_t)256 << 20)) copy_bytes = (size_t)256 << 20;
  MPI_Barrier(comm);
  cpu_stream_result_t bw = cpu_stream_copy(copy_bytes, 10);
  double bw_sum = 0;
  TSR_MPI(MPI_Allreduce(&bw.copy_gbs, &bw_sum, 1, MPI_DOUBLE, MPI_SUM, comm));
  if (rank == 0) {
    printf("tessera bench: %d process(es) x %d thread(s), %ld^3 cells per process, %ld steps\n",
           size, cpu_threads_max(), n, steps);
    printf("memory bandwidth (copy, %zu MiB arrays, write-allocate counted): %.2f GB/s summed "
           "over processes (%.2f GB/s STREAM-counted on rank 0)\n",
           copy_bytes >> 20, bw_sum, bw.copy_gbs_plain);
    printf("bytes per cell update: 19 PDFs read + 19 written + 19 write-allocated = 57 values "
           "(456 B DP, 228 B SP)\n\n");
    printf("%-6s %-4s %8s %10s %12s %9s %9s\n", "fs", "", "blocks", "MLUPS", "bound MLUPS",
           "fraction", "exchange");
  }
  bench_row_t rows[12];
  int nrows = 0;
  const int splits[3] = {1, 2, 4};
  for (int p = 0; p < 2; ++p)
    for (int c = 0; c < 2; ++c)
      for (int k = 0; k < 3; ++k) {
        simulation_options_t so = simulation_options_default();
        so.domain.cells[0] = n * size;
        so.domain.cells[1] = so.domain.cells[2] = n;
        so.domain.blocks[0] = splits[k] * size;
        so.domain.blocks[1] = so.domain.blocks[2] = splits[k];
        for (int a = 0; a < 3; ++a) so.domain.periodic[a] = true;
        lbm_options_t lo = lbm_options_default();
        lo.precision = p ? LBM_SP : LBM_DP;
        lo.collision = c ? LBM_TRT : LBM_SRT;
        lo.shifted = true;
        lo.viscosity = 0.02;
        lo.init_velocity[0] = 0.01;
        lbm_sim_t *sim = NULL;
        TSR_TRY(lbm_sim_create(comm, &so, &lo, &sim, err));
        st = lbm_sim_step(sim, 3, err); /* warm-up */
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        if (st == TSR_OK) st = lbm_sim_step(sim, steps, err);
        double t = MPI_Wtime() - t0, tmax = 0;
        int64_t cells = lbm_sim_cells(sim);
        timeloop_timing_t tt = lbm_sim_timing(sim);
        double share = 0, phases = tt.exchange + tt.boundary + tt.kernel;
        if (phases > 0) share = tt.exchange / phases; /* warm-up included: a ratio */
        double share_max = 0;
        lbm_sim_free(&sim);
        if (st != TSR_OK) goto cleanup;
        TSR_MPI(MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm));
        TSR_MPI(MPI_Allreduce(&share, &share_max, 1, MPI_DOUBLE, MPI_MAX, comm));
        bench_row_t *r = &rows[nrows++];
        r->prec = lo.precision;
        r->coll = lo.collision;
        r->blocks_per_process = splits[k] * splits[k] * splits[k];
        r->mlups = (double)cells * (double)steps / tmax / 1e6;
        r->bytes_per_cell = 57.0 * (lo.precision == LBM_SP ? 4.0 : 8.0);
        r->bound_mlups = bw_sum * 1e9 / r->bytes_per_cell / 1e6;
        r->fraction = r->mlups / r->bound_mlups;
        r->exchange_share = share_max;
        if (rank == 0) {
          printf("%-6s %-4s %8d %10.2f %12.2f %8.1f%% %8.1f%%\n", lbm_fs(&lo), "",
                 r->blocks_per_process, r->mlups, r->bound_mlups, 100.0 * r->fraction,
                 100.0 * r->exchange_share);
          fflush(stdout);
        }
      }
  /* the access pattern's ceiling, every process at once like the rows above */
  double ceiling[2] = {0, 0};
  for (int p = 0; p < 2; ++p) {
    MPI_Barrier(comm);
    double m = stream_only_mlups(n, steps, p);
    TSR_MPI(MPI_Allreduce(&m, &ceiling[p], 1, MPI_DOUBLE, MPI_SUM, comm));
    if (rank == 0) {
      const double bound = bw_sum * 1e9 / (57.0 * (p ? 4.0 : 8.0)) / 1e6;
      printf("%-11s %8d %10.2f %12.2f %8.1f%%   (streaming alone: ceiling of the kernels' loads and stores)\n",
             p ? "stream,sp" : "stream,dp", 1, ceiling[p], bound, 100.0 * ceiling[p] / bound);
    }
  }
  if (rank == 0 && json) {
    report_item_t items[6 + 12 * 5];
    char keys[12 * 5][64];
    size_t m = 0;
    items[m++] = REPORT_INT_ITEM("processes", size);
    items[m++] = REPORT_INT_ITEM("threads_per_process", cpu_threads_max());
    items[m++] = REPORT_INT_ITEM("cells_per_process", (int64_t)n * n * n);
    items[m++] = REPORT_REAL_ITEM("copy_bandwidth_gbs", bw_sum);
    items[m++] = REPORT_REAL_ITEM("stream_only_dp_1blocks_mlups", ceiling[0]);
    items[m++] = REPORT_REAL_ITEM("stream_only_sp_1blocks_mlups", ceiling[1]);
    for (int i = 0; i < nrows; ++i) {
      const bench_row_t *r = &rows[i];
      const char *fs = r->prec == LBM_SP ? (r->coll == LBM_TRT ? "trt_sp" : "srt_sp")
                                         : (r->coll == LBM_TRT ? "trt_dp" : "srt_dp");
      const char *what[5] = {"mlups", "bound_mlups", "fraction", "bytes_per_cell", "exchange_share"};
      double val[5] = {r->mlups, r->bound_mlups, r->fraction, r->bytes_per_cell, r->exchange_share};
      for (int q = 0; q < 5; ++q) {
        snprintf(keys[5 * i + q], sizeof keys[0], "%s_%dblocks_%s", fs, r->blocks_per_process, what[q]);
        items[m++] = REPORT_REAL_ITEM(keys[5 * i + q], val[q]);
      }
    }
    st = report_write_json(json, items, m, err);
  }
  TSR_TRY(verdict_reduce(comm, st, 0, err));
cleanup:
  return app_report(comm, st, err);
}
