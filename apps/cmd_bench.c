/* tessera bench: MLUPS of the CPU LBM kernels against this machine's memory bandwidth,
 * measured in the same run on the same threads; then, where an OpenCL device exists, of
 * the OpenCL kernels against the device's copy bandwidth (clEnqueueCopyBuffer) measured
 * in the same run. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "cpu_stream.h"
#include "gpu_buffer.h"
#include "opencl.h"
#include "cpu_threads.h"
#include "lbm_kernels.h"
#include "lbm_sim.h"
#include "report.h"
#include "verdict.h"

typedef struct bench_row {
  simulation_hs_t hs;
  grid_layout_t layout; /* CPU rows */
  lbm_precision_t prec;
  lbm_collision_t coll;
  int blocks_per_process;
  double mlups, bytes_per_cell, bound_mlups, fraction;
  double exchange_share; /* share of the step spent in the ghost exchange (slowest rank) */
} bench_row_t;

/* Values moved per cell update by the D3Q19 CPU kernels of a layout and precision: Q
 * read, Q written, and Q more where the stores read their lines first (no nontemporal
 * stores). */
static double cpu_values_per_cell(grid_layout_t layout, lbm_precision_t prec) {
  const lbm_kernels_t *k = lbm_kernels_find(&lattice_d3q19, layout, prec == LBM_DP);
  return (double)k->lattice->q * (k->nontemporal ? 2.0 : 3.0);
}

/* MLUPS of streaming alone (LBM_VARIANT_STREAM) on one n^3 field per process: the same
 * loop, loads and stores as the stream-collide kernels without the arithmetic, so the
 * ceiling of the layout's access pattern on this machine; with pull 0, the same loop
 * copying every cell from itself (LBM_VARIANT_COPY), the ceiling of the loop without the
 * pull. 0 when out of memory. */
static double stream_only_mlups(long n, long steps, grid_layout_t layout, int sp, int pull) {
  const lbm_kernels_t *k = lbm_kernels_find(&lattice_d3q19, layout, !sp);
  const int size[3] = {(int)n, (int)n, (int)n};
  grid_dims_t d = grid_dims_make(size, k->lattice->q, k->lattice->reach, layout, k->esize);
  size_t bytes = (d.elements * k->esize + 63) / 64 * 64;
  void *a = aligned_alloc(64, bytes), *b = aligned_alloc(64, bytes);
  double mlups = 0;
  if (a && b) {
    const lbm_params_t p = {.omega_plus = 1.0, .omega_minus = 1.0, .rho0 = 1.0};
    double t = 0;
    for (int pass = 0; pass < 2; ++pass) { /* first touch and one warm-up step, then timed */
      if (pass == 0) { /* unshifted: no line of zeros (some machines move those faster) */
        k->init(a, &d, &p, 0, NULL, NULL);
        k->init(b, &d, &p, 0, NULL, NULL);
      }
      const long reps = pass == 0 ? 1 : steps;
      const double t0 = omp_get_wtime();
      for (long r = 0; r < reps; ++r)
        k->stream_collide(r % 2 ? b : a, r % 2 ? a : b, &d, &p,
                          pull ? LBM_VARIANT_STREAM : LBM_VARIANT_COPY);
      t = omp_get_wtime() - t0;
    }
    mlups = (double)n * (double)n * (double)n * (double)steps / t / 1e6;
  }
  free(a);
  free(b);
  return mlups;
}

/* One row: a periodic box of n^3 cells per process in blocks_per_axis^3 blocks per
 * process, timed over steps steps after 3 warm-up steps; bound from bandwidth gbs and
 * values_per_cell moved per cell update. */
static tsr_status bench_case(MPI_Comm comm, long n, long steps, simulation_hs_t hs,
                             const opencl_select_t *device, grid_layout_t layout,
                             lbm_precision_t prec, lbm_collision_t coll, int blocks_per_axis,
                             double gbs, double values_per_cell, bench_row_t *r,
                             tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  simulation_options_t so = simulation_options_default();
  so.domain.cells[0] = n * size;
  so.domain.cells[1] = so.domain.cells[2] = n;
  so.domain.blocks[0] = blocks_per_axis * size;
  so.domain.blocks[1] = so.domain.blocks[2] = blocks_per_axis;
  for (int a = 0; a < 3; ++a) so.domain.periodic[a] = true;
  so.hardware.hs = hs;
  if (device) so.hardware.opencl = *device;
  lbm_options_t lo = lbm_options_default();
  lo.cpu_layout = layout;
  lo.precision = prec;
  lo.collision = coll;
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
  r->hs = hs;
  r->layout = layout;
  r->prec = prec;
  r->coll = coll;
  r->blocks_per_process = blocks_per_axis * blocks_per_axis * blocks_per_axis;
  r->mlups = (double)cells * (double)steps / tmax / 1e6;
  r->bytes_per_cell = values_per_cell * (prec == LBM_SP ? 4.0 : 8.0);
  r->bound_mlups = gbs * 1e9 / r->bytes_per_cell / 1e6;
  r->fraction = r->mlups / r->bound_mlups;
  r->exchange_share = share_max;
  if (rank == 0) {
    /* GPU fields are SoA whatever the CPU layout: their label leaves the layout out */
    char label[32];
    snprintf(label, sizeof label, "%s", lbm_fs(&lo));
    if (hs == SIMULATION_HS_GPU) label[6] = '\0';
    printf("%-10s %-4s %8d %10.2f %12.2f %8.1f%% %8.1f%%\n", label,
           hs == SIMULATION_HS_GPU ? "gpu" : "", r->blocks_per_process, r->mlups, r->bound_mlups,
           100.0 * r->fraction, 100.0 * r->exchange_share);
    fflush(stdout);
  }
cleanup:
  return st;
}

static const char bench_usage[] =
    "usage: tessera bench [--cells N] [--steps S] [--json FILE] [--gpu-cells N] [--device I]\n"
    "                     [--no-gpu]\n"
    "  a periodic box of N^3 cells per process (default 128), S timed steps (default 20);\n"
    "  then the same on the first OpenCL device (or device I of the first platform), with\n"
    "  --gpu-cells N^3 cells per process (default: as --cells); --no-gpu skips it\n"
    "       tessera bench --hetero CONFIG [--steps S] [--json FILE]\n"
    "  the CPU processes of CONFIG alone, its GPU processes alone, and all together\n";

int app_bench(MPI_Comm comm, int argc, char **argv) {
  tsr_status st = TSR_OK;
  tsr_error_t e, *err = &e;
  tsr_error_clear(err);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (argc > 1 && strcmp(argv[1], "--hetero") == 0) return app_bench_hetero(comm, argc - 1, argv + 1);
  long n = 128, steps = 20, gn = 0, device = -1;
  int use_gpu = 1;
  const char *json = NULL;
  for (int i = 1; i < argc; ++i) {
    char *end = NULL;
    if (strcmp(argv[i], "--cells") == 0 && i + 1 < argc) n = strtol(argv[++i], &end, 10);
    else if (strcmp(argv[i], "--gpu-cells") == 0 && i + 1 < argc) gn = strtol(argv[++i], &end, 10);
    else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = strtol(argv[++i], &end, 10);
    else if (strcmp(argv[i], "--no-gpu") == 0) use_gpu = 0;
    else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) steps = strtol(argv[++i], &end, 10);
    else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) json = argv[++i];
    else n = -1;
    if ((end && *end) || n < 4 || n > 2048 || steps < 1 || (gn != 0 && (gn < 4 || gn > 2048)) ||
        device < -1 || device > 1023) {
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
    for (int l = 0; l < 2; ++l) {
      const double v = cpu_values_per_cell((grid_layout_t)l, LBM_DP);
      printf("bytes per cell update, %s: %.0f values (%.0f B DP, %.0f B SP)%s\n",
             grid_layout_name((grid_layout_t)l), v, 8 * v, 4 * v,
             v < 57 ? ": 19 PDFs read + 19 written with nontemporal stores (no write-allocate)"
                    : ": 19 PDFs read + 19 written + 19 write-allocated");
    }
    printf("\n%-10s %-4s %8s %10s %12s %9s %9s\n", "fs", "", "blocks", "MLUPS", "bound MLUPS",
           "fraction", "exchange");
  }
  if (gn == 0) gn = n;
  bench_row_t rows[36];
  int nrows = 0;
  const int splits[3] = {1, 2, 4};
  for (int l = 1; l >= 0; --l)
    for (int p = 0; p < 2; ++p)
      for (int c = 0; c < 2; ++c)
        for (int k = 0; k < 3; ++k) {
          TSR_TRY(bench_case(comm, n, steps, SIMULATION_HS_CPU, NULL, (grid_layout_t)l,
                             (lbm_precision_t)p, (lbm_collision_t)c, splits[k], bw_sum,
                             cpu_values_per_cell((grid_layout_t)l, (lbm_precision_t)p),
                             &rows[nrows++], err));
        }
  /* the access pattern's ceilings, every process at once like the rows above: with the
     pull (ceiling[0..1]) and without it (ceiling[2..3]) */
  double ceiling[8] = {0};
  for (int q = 0; q < 8; ++q) {
    const int p = q % 2, pull = (q / 2) % 2 == 0;
    const grid_layout_t layout = q < 4 ? GRID_SOA : GRID_AOS;
    MPI_Barrier(comm);
    double m = stream_only_mlups(n, steps, layout, p, pull);
    TSR_MPI(MPI_Allreduce(&m, &ceiling[q], 1, MPI_DOUBLE, MPI_SUM, comm));
    if (rank == 0) {
      static const char *const names[8] = {"stream,dp,soa", "stream,sp,soa", "cells,dp,soa",
                                           "cells,sp,soa", "stream,dp,aos", "stream,sp,aos",
                                           "cells,dp,aos", "cells,sp,aos"};
      const double bound =
          bw_sum * 1e9 / (cpu_values_per_cell(layout, (lbm_precision_t)p) * (p ? 4.0 : 8.0)) / 1e6;
      printf("%-15s %8d %10.2f %12.2f %8.1f%%   (%s)\n", names[q], 1, ceiling[q], bound,
             100.0 * ceiling[q] / bound,
             pull ? "streaming alone: ceiling of the kernels' loads and stores"
                  : "each cell copied from itself through the same loop: no pull");
    }
  }
  /* the OpenCL device: its copy bandwidth, then the same rows with hs gpu */
  double gpu_gbs = 0;
  opencl_select_t sel = opencl_select_default();
  if (device >= 0) {
    sel.platform = 0;
    sel.device = (int)device;
  }
  if (use_gpu) {
    opencl_device_desc_t *list = NULL;
    size_t ndev = 0;
    int have = opencl_list_devices(&list, &ndev, err) == TSR_OK && ndev > 0, all = 0;
    free(list);
    TSR_MPI(MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, comm));
    if (!all) {
      if (rank == 0) printf("\nno OpenCL device on every process: the OpenCL rows are left out\n");
      use_gpu = 0;
    }
  }
  int gpu_dp = 0;
  if (use_gpu) {
    opencl_context_t *cl = NULL;
    st = opencl_context_create(&sel, &cl, err);
    double mine = 0;
    size_t grid = (size_t)(gn + 2) * (size_t)(gn + 2) * (size_t)(gn + 2) * 19u * 8u;
    size_t probe = grid > ((size_t)256 << 20) ? grid : ((size_t)256 << 20);
    MPI_Barrier(comm);
    if (st == TSR_OK) {
      const opencl_device_desc_t *d = opencl_context_desc(cl);
      if (probe > d->max_alloc_bytes) probe = (size_t)d->max_alloc_bytes;
      gpu_dp = d->double_precision;
      st = gpu_copy_bandwidth(cl, probe, 10, &mine, err);
    }
    TSR_TRY(verdict_reduce(comm, st, 0, err));
    TSR_MPI(MPI_Allreduce(&mine, &gpu_gbs, 1, MPI_DOUBLE, MPI_SUM, comm));
    if (rank == 0) {
      const opencl_device_desc_t *d = opencl_context_desc(cl);
      printf("\nOpenCL device: %s (%s, %s), %ld^3 cells per process\n", d->name, d->platform_name,
             d->type, gn);
      printf("device copy bandwidth (clEnqueueCopyBuffer, %zu MiB, read + write counted): %.2f GB/s "
             "summed over processes\n", probe >> 20, gpu_gbs);
      printf("bytes per cell update: 19 PDFs read + 19 written = 38 values (304 B DP, 152 B SP)\n\n");
      printf("%-6s %-4s %8s %10s %12s %9s %9s\n", "fs", "", "blocks", "MLUPS", "bound MLUPS",
             "fraction", "exchange");
    }
    opencl_context_free(&cl);
    for (int p = gpu_dp ? 0 : 1; p < 2; ++p)
      for (int c = 0; c < 2; ++c)
        for (int k = 0; k < 3; ++k)
          TSR_TRY(bench_case(comm, gn, steps, SIMULATION_HS_GPU, &sel, GRID_AOS,
                             (lbm_precision_t)p, (lbm_collision_t)c, splits[k], gpu_gbs, 38.0,
                             &rows[nrows++], err));
  }
  if (rank == 0 && json) {
    report_item_t items[14 + 36 * 5];
    char keys[36 * 5][64];
    size_t m = 0;
    items[m++] = REPORT_INT_ITEM("processes", size);
    items[m++] = REPORT_INT_ITEM("threads_per_process", cpu_threads_max());
    items[m++] = REPORT_INT_ITEM("cells_per_process", (int64_t)n * n * n);
    items[m++] = REPORT_REAL_ITEM("copy_bandwidth_gbs", bw_sum);
    items[m++] = REPORT_REAL_ITEM("stream_only_dp_soa_1blocks_mlups", ceiling[0]);
    items[m++] = REPORT_REAL_ITEM("stream_only_sp_soa_1blocks_mlups", ceiling[1]);
    items[m++] = REPORT_REAL_ITEM("copy_cells_dp_soa_1blocks_mlups", ceiling[2]);
    items[m++] = REPORT_REAL_ITEM("copy_cells_sp_soa_1blocks_mlups", ceiling[3]);
    items[m++] = REPORT_REAL_ITEM("stream_only_dp_aos_1blocks_mlups", ceiling[4]);
    items[m++] = REPORT_REAL_ITEM("stream_only_sp_aos_1blocks_mlups", ceiling[5]);
    items[m++] = REPORT_REAL_ITEM("copy_cells_dp_aos_1blocks_mlups", ceiling[6]);
    items[m++] = REPORT_REAL_ITEM("copy_cells_sp_aos_1blocks_mlups", ceiling[7]);
    if (use_gpu) {
      items[m++] = REPORT_INT_ITEM("gpu_cells_per_process", (int64_t)gn * gn * gn);
      items[m++] = REPORT_REAL_ITEM("gpu_copy_bandwidth_gbs", gpu_gbs);
    }
    for (int i = 0; i < nrows; ++i) {
      const bench_row_t *r = &rows[i];
      const char *fs = r->prec == LBM_SP ? (r->coll == LBM_TRT ? "trt_sp" : "srt_sp")
                                         : (r->coll == LBM_TRT ? "trt_dp" : "srt_dp");
      const char *what[5] = {"mlups", "bound_mlups", "fraction", "bytes_per_cell", "exchange_share"};
      double val[5] = {r->mlups, r->bound_mlups, r->fraction, r->bytes_per_cell, r->exchange_share};
      for (int q = 0; q < 5; ++q) {
        snprintf(keys[5 * i + q], sizeof keys[0], "%s%s%s_%dblocks_%s",
                 r->hs == SIMULATION_HS_GPU ? "gpu_" : "", fs,
                 r->hs == SIMULATION_HS_GPU ? "" : r->layout == GRID_SOA ? "_soa" : "_aos",
                 r->blocks_per_process, what[q]);
        items[m++] = REPORT_REAL_ITEM(keys[5 * i + q], val[q]);
      }
    }
    st = report_write_json(json, items, m, err);
  }
  TSR_TRY(verdict_reduce(comm, st, 0, err));
cleanup:
  return app_report(comm, st, err);
}
