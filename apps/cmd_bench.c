/* tessera bench: MLUPS of the LBM kernels of every lattice, CPU layout, precision and
 * collision, with 1, 8 and 64 blocks per process, against this machine's memory
 * bandwidth measured in the same run on the same threads; then, where an OpenCL device
 * exists, of the OpenCL kernels against the device's copy bandwidth (clEnqueueCopyBuffer)
 * measured in the same run. Every row is repeated and timed long enough per repetition;
 * it prints the median and the range. */
#include <omp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "cpu_level.h"
#include "cpu_stream.h"
#include "cpu_threads.h"
#include "fma_peak.h"
#include "gpu_buffer.h"
#include "gpu_peak.h"
#include "lbm_kernels.h"
#include "lbm_sim.h"
#include "opencl.h"
#include "report.h"
#include "tsr_parse.h"
#include "verdict.h"

/* What to measure: bit k of a mask selects item k of its list below. */
/* the default rows: the first four (d3q13, MRT only, on request) */
static const char *const bench_lattices[] = {"d2q9", "d3q15", "d3q19", "d3q27", "d3q13", NULL};
static const char *const bench_layouts[] = {"aos", "soa", NULL};      /* grid_layout_t */
static const char *const bench_streamings[] = {"two_grid", "in_place", NULL}; /* GPU rows */
/* lbm_collision_t, then the same with the Smagorinsky model */
static const char *const bench_collisions[] = {"srt",     "trt",     "mrt",     "cumulant",
                                               "srt-les", "trt-les", "mrt-les", "cumulant-les",
                                               NULL};
enum { BENCH_COLLISIONS = 8, BENCH_KINDS = 4 };
static const char *const bench_block_counts[] = {"1", "8", "64", "512", NULL};

typedef struct bench_opts {
  int64_t n;         /* cells per process: n^3 (2-D lattices: the same number, square) */
  int64_t gn;        /* the same on the OpenCL device */
  int64_t repeat;    /* repetitions per row */
  double seconds;    /* least time per repetition */
  unsigned lattices, layouts, precisions, collisions, blocks, streamings;
  int group[3];          /* --gpu-group: the GPU rows' work-group (zeros: the rule) */
  bool use_gpu;
  int64_t device;
  const char *json;
  cpu_stream_t *probe; /* the bandwidth probe's arrays, kept for the run (NULL: none) */
} bench_opts_t;

typedef struct bench_row {
  char what[40];         /* e.g. "d3q19,trt,dp,soa", "stream,d3q19,dp,soa" */
  simulation_hs_t hs;
  int blocks_per_process;
  double median, lo, hi; /* MLUPS over the repetitions */
  double bytes_per_cell;
  double bound_mlups;    /* median over the repetitions of bandwidth / bytes per cell */
  double fraction;       /* median over the repetitions of MLUPS / bound */
  double exchange_share; /* share of the step spent in the ghost exchange (slowest rank) */
  int nontemporal;
} bench_row_t;

/* Rows of one run; repetitions per row (--repeat); cells per axis (--cells, --gpu-cells),
 * device index (--device) and seconds per repetition (--seconds) allowed. */
enum { BENCH_MAX_ROWS = 512, BENCH_MAX_REPEAT = 64 };
enum { BENCH_MIN_CELLS = 4, BENCH_MAX_CELLS = 2048, BENCH_MAX_DEVICE = 1023 };
#define BENCH_MAX_SECONDS 60.0

/* The domain of one process (x scaled by the process count): n^3 cells in b^3 blocks, or
 * for a 2-D lattice a square of about the same number of cells (side a multiple of 8) in
 * b^1.5 x b^1.5 blocks (1, 4 x 2, 8 x 8, 32 x 16). */
static void bench_domain(const lattice_t *lat, long n, int blocks, int size,
                         simulation_options_t *so) {
  if (lat->d == 3) {
    const int b = blocks == 512 ? 8 : blocks == 64 ? 4 : blocks == 8 ? 2 : 1;
    so->domain.cells[0] = n * size;
    so->domain.cells[1] = so->domain.cells[2] = n;
    so->domain.blocks[0] = b * size;
    so->domain.blocks[1] = so->domain.blocks[2] = b;
  } else {
    long side = 8;
    while ((side + 8) * (side + 8) <= n * n * n) side += 8;
    so->domain.cells[0] = side * size;
    so->domain.cells[1] = side;
    so->domain.cells[2] = 1;
    so->domain.blocks[0] = (blocks == 512 ? 32 : blocks == 64 ? 8 : blocks == 8 ? 4 : 1) * size;
    so->domain.blocks[1] = blocks == 512 ? 16 : blocks == 64 ? 8 : blocks == 8 ? 2 : 1;
    so->domain.blocks[2] = 1;
  }
  for (int a = 0; a < 3; ++a) so->domain.periodic[a] = true;
}

/* The memory bandwidth of all processes' threads at once (copy, write-allocate counted),
 * summed over the processes. */
static double bench_bandwidth(MPI_Comm comm, const bench_opts_t *o) {
  MPI_Barrier(comm);
  cpu_stream_result_t bw = cpu_stream_run(o->probe, 3);
  double sum = 0;
  MPI_Allreduce(&bw.copy_gbs, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
  return sum;
}

/* Times `run` (steps steps of something every process does at once) as the slowest
 * process sees it. */
typedef tsr_status (*bench_run_fn)(void *ctx, long steps, tsr_error_t *err);

/* Two warm-up steps, then steps per repetition chosen so that one lasts at least
 * o->seconds, then o->repeat repetitions: MLUPS of each into mlups[]. With gbs not NULL,
 * the memory bandwidth is measured right before each repetition into gbs[] (it drifts
 * on a shared machine: each repetition is held against its own). */
static tsr_status bench_repeat(MPI_Comm comm, const bench_opts_t *o, bench_run_fn run, void *ctx,
                               double cells, double *mlups, double *gbs, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  double t = 0, tmax = 0;
  MPI_Barrier(comm);
  double t0 = MPI_Wtime();
  st = run(ctx, 2, err);
  t = MPI_Wtime() - t0;
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_MPI(MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm));
  long steps = (long)(o->seconds / (tmax / 2 > 1e-9 ? tmax / 2 : 1e-9)) + 1;
  for (int r = 0; r < o->repeat; ++r) {
    if (gbs) gbs[r] = bench_bandwidth(comm, o);
    MPI_Barrier(comm);
    t0 = MPI_Wtime();
    st = run(ctx, steps, err);
    t = MPI_Wtime() - t0;
    TSR_TRY(verdict_reduce(comm, st, 0, err));
    TSR_MPI(MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm));
    mlups[r] = cells * (double)steps / tmax / 1e6;
  }
cleanup:
  return st;
}

static tsr_status bench_sim_steps(void *ctx, long steps, tsr_error_t *err) {
  return lbm_sim_step(ctx, steps, err);
}

/* The figures of a row: its bytes per cell update (Q values read and Q written, and Q
 * more write-allocated without nontemporal stores) and the statistics of its
 * repetitions' MLUPS and bandwidths (GB/s). */
static void bench_finish(bench_row_t *r, const bench_opts_t *o, int q, size_t esize,
                         int nontemporal, double *mlups, double *gbs) {
  double bound[BENCH_MAX_REPEAT], frac[BENCH_MAX_REPEAT], lo, hi;
  r->nontemporal = nontemporal;
  r->bytes_per_cell = (double)q * (nontemporal ? 2.0 : 3.0) * (double)esize;
  for (int k = 0; k < o->repeat; ++k) {
    bound[k] = gbs[k] * 1e9 / r->bytes_per_cell / 1e6;
    frac[k] = mlups[k] / bound[k];
  }
  app_stats(mlups, o->repeat, &r->median, &r->lo, &r->hi);
  app_stats(bound, o->repeat, &r->bound_mlups, &lo, &hi);
  app_stats(frac, o->repeat, &r->fraction, &lo, &hi);
}

/* One row: a periodic flow in the row's blocks per process; bound from the bytes per
 * cell update and the bandwidth: CPU rows measure it before each repetition, GPU rows
 * take gbs. */
static tsr_status bench_case(MPI_Comm comm, const bench_opts_t *o, long n, simulation_hs_t hs,
                             const opencl_select_t *device, const lbm_options_t *lo, int blocks,
                             double gbs, bench_row_t *r, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  simulation_options_t so = simulation_options_default();
  bench_domain(lo->lattice, n, blocks, size, &so);
  so.hardware.hs = hs;
  if (device) so.hardware.opencl = *device;
  lbm_options_t wl = *lo; /* the work-group asked for */
  memcpy(wl.work_group, o->group, sizeof o->group);
  lo = &wl;
  lbm_sim_t *sim = NULL;
  double mlups[BENCH_MAX_REPEAT];
  double bws[BENCH_MAX_REPEAT];
  TSR_TRY(lbm_sim_create(comm, &so, lo, &sim, err));
  for (int k = 0; k < o->repeat; ++k) bws[k] = gbs;
  const double cells = (double)lbm_sim_cells(sim);
  const timeloop_timing_t t0 = lbm_sim_timing(sim);
  TSR_TRY(bench_repeat(comm, o, bench_sim_steps, sim, cells, mlups,
                       hs == SIMULATION_HS_CPU ? bws : NULL, err));
  const timeloop_timing_t t1 = lbm_sim_timing(sim);
  double share = 0, phases = (t1.exchange - t0.exchange) + (t1.boundary - t0.boundary) +
                             (t1.kernel - t0.kernel);
  if (phases > 0) share = (t1.exchange - t0.exchange) / phases;
  TSR_MPI(MPI_Allreduce(MPI_IN_PLACE, &share, 1, MPI_DOUBLE, MPI_MAX, comm));
  const lbm_kernels_t *k =
      lbm_kernels_find(lo->lattice, lo->cpu_layout, lbm_precision_storage(lo->precision));
  r->hs = hs;
  r->blocks_per_process = blocks;
  /* a GPU has no write-allocate */
  bench_finish(r, o, lo->lattice->q, k->esize, hs == SIMULATION_HS_GPU || k->nontemporal, mlups,
               bws);
  r->exchange_share = share;
  /* CPU rows name their layout, GPU rows how they stream */
  snprintf(r->what, sizeof r->what, "%s,%s,%s,%s", lo->lattice->name,
           bench_collisions[lo->collision + (lo->smagorinsky > 0 ? BENCH_KINDS : 0)],
           lbm_precision_names[lo->precision],
           hs == SIMULATION_HS_GPU ? bench_streamings[lo->in_place ? 1 : 0]
                                   : grid_layout_name(lo->cpu_layout));
cleanup:
  lbm_sim_free(&sim);
  return st;
}

/* Streaming alone (pull 1) or the copy of cells (pull 0) on one field of n^3 cells per
 * process. */
typedef struct bench_stream {
  const lbm_kernels_t *k;
  grid_dims_t d;
  void *a, *b;
  int pull;
} bench_stream_t;

static tsr_status bench_stream_steps(void *ctx, long steps, tsr_error_t *err) {
  bench_stream_t *s = ctx;
  const lbm_params_t p = {.omega_plus = 1.0, .omega_minus = 1.0, .rho0 = 1.0};
  for (long r = 0; r < steps; ++r)
    s->k->stream_collide(r % 2 ? s->b : s->a, r % 2 ? s->a : s->b, &s->d, &p,
                         s->pull ? LBM_VARIANT_STREAM : LBM_VARIANT_COPY);
  return TSR_OK;
}

/* The ceilings of a lattice, layout and precision: streaming alone, the same loop, loads
 * and stores as the stream-collide kernels without the arithmetic (the access pattern's
 * ceiling on this machine), and with pull 0 the same loop copying every cell from itself
 * (the ceiling of the loop without the pull). */
static tsr_status bench_ceiling(MPI_Comm comm, const bench_opts_t *o, const lattice_t *lat,
                                grid_layout_t layout, lbm_precision_t prec, int pull,
                                bench_row_t *r, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  bench_stream_t s = {.k = lbm_kernels_find(lat, layout, lbm_precision_storage(prec)),
                      .pull = pull};
  simulation_options_t so = simulation_options_default();
  bench_domain(lat, o->n, 1, 1, &so);
  const int size[3] = {(int)so.domain.cells[0], (int)so.domain.cells[1], (int)so.domain.cells[2]};
  s.d = grid_dims_make(size, lat->q, lat->reach, layout, s.k->esize);
  const size_t bytes = (s.d.elements * s.k->esize + 63) / 64 * 64;
  s.a = aligned_alloc(64, bytes);
  s.b = aligned_alloc(64, bytes);
  int ok = s.a && s.b, all = 0;
  TSR_MPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm));
  TSR_CHECK(all, TSR_ERR_NOMEM, "out of memory for two fields of %dx%dx%d cells (%s)",
            size[0], size[1], size[2], lat->name);
  const lbm_params_t p = {.omega_plus = 1.0, .omega_minus = 1.0, .rho0 = 1.0};
  /* unshifted: no line of zeros (some machines move those faster); 16 bits (whose
     weights less nothing, under 2, are fine to move): the same */
  s.k->init(s.a, &s.d, &p, 0, NULL, NULL);
  s.k->init(s.b, &s.d, &p, 0, NULL, NULL);
  double mlups[BENCH_MAX_REPEAT], bws[BENCH_MAX_REPEAT];
  int nprocs = 1;
  MPI_Comm_size(comm, &nprocs);
  TSR_TRY(bench_repeat(comm, o, bench_stream_steps, &s,
                       (double)size[0] * size[1] * size[2] * nprocs, mlups, bws, err));
  r->hs = SIMULATION_HS_CPU;
  r->blocks_per_process = 1;
  bench_finish(r, o, lat->q, s.k->esize, s.k->nontemporal, mlups, bws);
  r->exchange_share = 0;
  snprintf(r->what, sizeof r->what, "%s,%s,%s,%s", pull ? "stream" : "cells", lat->name,
           lbm_precision_names[prec], grid_layout_name(layout));
cleanup:
  free(s.a);
  free(s.b);
  return st;
}

static void bench_print_header(void) {
  printf("%-26s %6s %10s %19s %11s %8s %8s\n", "row", "blocks", "MLUPS", "range", "bound", "fraction",
         "exchange");
}

static void bench_print_row(const bench_row_t *r) {
  printf("%-26s %6d %10.2f %8.2f .. %8.2f %11.2f %7.1f%% %7.1f%%\n", r->what,
         r->blocks_per_process, r->median, r->lo, r->hi, r->bound_mlups, 100.0 * r->fraction,
         100.0 * r->exchange_share);
  fflush(stdout);
}

/* Every form of tessera bench: its --help and bad usage, and tessera --help's part. */
#define BENCH_HELP \
    "  bench [--cells N] [--repeat R] [--seconds T] [--lattice L,..] [--layout A,..]\n" \
    "        [--precision P,..] [--collision C,..] [--blocks B,..] [--json FILE]\n" \
    "        [--gpu-cells N] [--device I] [--streaming S,..] [--gpu-group X,Y] [--no-gpu]\n" \
    "                         MLUPS of the CPU kernels of every lattice (d2q9, d3q15,\n" \
    "                         d3q19, d3q27; d3q13, MRT rows only, when listed), layout\n" \
    "                         (soa, aos), precision (dp, sp; fp16s, fp16c: 16-bit storage,\n" \
    "                         on request) and\n" \
    "                         collision (srt, trt; also mrt, cumulant (d2q9, d3q27 rows\n" \
    "                         only), srt-les, trt-les, mrt-les, cumulant-les: the\n" \
    "                         Smagorinsky model), with 1, 8 and 64 blocks per process (or\n" \
    "                         the lists given), on a periodic box of N^3 cells per process;\n" \
    "                         each row R times (default 5) for at least T s (default 0.3),\n" \
    "                         median and range, beside the memory bandwidth measured in the\n" \
    "                         same run, the bytes per cell update as they move (nontemporal\n" \
    "                         stores: no write-allocate), the fraction of the bound reached\n" \
    "                         and the share of the step spent in the ghost exchange; then\n" \
    "                         streaming alone (the kernels' loads and stores without\n" \
    "                         arithmetic), the ceiling of their access pattern, and the same\n" \
    "                         loop copying every cell from itself (no pull); then, where an\n" \
    "                         OpenCL device exists (device 0, or I, of the first platform\n" \
    "                         with a GPU, else of the first platform), the same rows on it\n" \
    "                         (hs gpu, --gpu-cells^3 cells per process; streaming two_grid\n" \
    "                         and in_place, or the list given; work-groups of X x Y items,\n" \
    "                         default lbm.work_group's rule) beside its copy\n" \
    "                         bandwidth (clEnqueueCopyBuffer) measured in the same run\n" \
    "  bench --hetero CONFIG [--set PATH=VALUE]... [--steps S] [--json FILE]\n" \
    "                         the heterogeneous benchmark: MLUPS of CONFIG's CPU processes\n" \
    "                         alone, its GPU processes alone and all together, and the\n" \
    "                         ratio together / (CPU + GPU)\n" \
    "  bench --config CONFIG [--set PATH=VALUE]... [--steps S] [--repeat R]\n" \
    "        [--exchange E] [--overlap O] [--json FILE]\n" \
    "                         CONFIG's run (any modules, e.g. flow + temperature; no\n" \
    "                         output): MLUPS and the share of the step each sweep spends\n" \
    "                         in its exchange round, boundary and kernel; E: merged or\n" \
    "                         per_sweep exchange rounds (default: CONFIG's), or both,\n" \
    "                         their repetitions alternating; O: auto, on or off (the\n" \
    "                         work on inner cells while the exchange travels; default:\n" \
    "                         CONFIG's hardware.overlap), or both, alternating\n" \
    "  bench --machine FILE [--cells N] [--no-gpu]\n" \
    "                         the figures of the plan's model on this machine (a\n" \
    "                         process's throughput and ghost-copy rate, rank 0's OpenCL\n" \
    "                         device, the network between rank 0 and the next rank of its\n" \
    "                         node and the first rank of another node) written to FILE, a\n" \
    "                         machine description for hardware.machine\n" \
    "  bench --fma [--seconds T] [--repeat R]\n" \
    "                         the floating-point peak of every process's OpenMP threads\n" \
    "                         (chains of 64-byte FMAs at the CPU level in use), DP and SP,\n" \
    "                         all processes at once, summed, then of every process's\n" \
    "                         default OpenCL device: what a compute-bound kernel's\n" \
    "                         GFLOPS are held against (scripts/d2q37-bench.sh)\n" \
    ""

const char app_bench_help[] = BENCH_HELP;

static const char bench_usage[] = "usage: tessera bench, one of:\n" BENCH_HELP;

/* --gpu-group X,Y: whole X, Y >= 1, X Y <= 1024, into int[3] (z 1). */
static bool bench_group_arg(const char *text, void *out) {
  char x[16];
  const char *comma = strchr(text, ',');
  int64_t gx = 0, gy = 0;
  if (!comma || (size_t)(comma - text) >= sizeof x) return false;
  memcpy(x, text, (size_t)(comma - text));
  x[comma - text] = '\0';
  if (!tsr_parse_int(x, 1, 1024, &gx) || !tsr_parse_int(comma + 1, 1, 1024, &gy) ||
      gx * gy > 1024)
    return false;
  int *g = out;
  g[0] = (int)gx, g[1] = (int)gy, g[2] = 1;
  return true;
}

/* The options: -1 to go on, else the exit status (0: --help; 2: bad usage, printed once). */
static int bench_parse(MPI_Comm comm, int argc, char **argv, bench_opts_t *o) {
  *o = (bench_opts_t){.n = 128, .repeat = 5, .seconds = 0.3, .lattices = 0xf, .layouts = 3,
                      .precisions = 3, .collisions = 3, .blocks = 7, .streamings = 3,
                      .use_gpu = true, .device = -1};
  const app_opt_t opts[] = {
      APP_OPT("--cells", APP_INT, &o->n, .imin = BENCH_MIN_CELLS, .imax = BENCH_MAX_CELLS),
      APP_OPT("--gpu-cells", APP_INT, &o->gn, .imin = BENCH_MIN_CELLS, .imax = BENCH_MAX_CELLS),
      APP_OPT("--device", APP_INT, &o->device, .imin = 0, .imax = BENCH_MAX_DEVICE),
      APP_OPT("--repeat", APP_INT, &o->repeat, .imin = 1, .imax = BENCH_MAX_REPEAT),
      APP_OPT("--seconds", APP_REAL, &o->seconds, .rmin = 0, .rmax = BENCH_MAX_SECONDS),
      APP_OPT("--json", APP_TEXT, &o->json),
      APP_OPT("--lattice", APP_LIST, &o->lattices, .names = bench_lattices),
      APP_OPT("--layout", APP_LIST, &o->layouts, .names = bench_layouts),
      APP_OPT("--precision", APP_LIST, &o->precisions, .names = lbm_precision_names),
      APP_OPT("--collision", APP_LIST, &o->collisions, .names = bench_collisions),
      APP_OPT("--blocks", APP_LIST, &o->blocks, .names = bench_block_counts),
      APP_OPT("--streaming", APP_LIST, &o->streamings, .names = bench_streamings),
      APP_OPT("--gpu-group", APP_CUSTOM, o->group, .parse = bench_group_arg,
       .allowed = "X,Y with whole X, Y >= 1 and X Y <= 1024"),
      APP_OPT("--no-gpu", APP_FLAG, &o->use_gpu, .clear = true),
      APP_OPT_END};
  const app_cmd_t cmd = {"bench", bench_usage, opts, NULL, false};
  const int parsed = app_parse(comm, &cmd, argc, argv, NULL);
  if (o->gn == 0) o->gn = o->n;
  return parsed;
}

/* Every selected row of one hs into rows[*nrows...]. */
static tsr_status bench_rows(MPI_Comm comm, const bench_opts_t *o, simulation_hs_t hs,
                             const opencl_select_t *sel, int gpu_dp, double gbs,
                             bench_row_t *rows, int *nrows, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const int counts[4] = {1, 8, 64, 512};
  for (int li = 0; bench_lattices[li]; ++li)
    for (int l = GRID_SOA; l >= GRID_AOS; --l)
      for (int p = 0; p < LBM_PRECISIONS; ++p)
        for (int c = 0; c < BENCH_COLLISIONS; ++c)
          for (int b = 0; b < 8; ++b) { /* block counts, two grids then in place (GPU) */
            const int ip = b / 4;
            if (!(o->lattices >> li & 1) || !(o->precisions >> p & 1) ||
                !(o->collisions >> c & 1) || !(o->blocks >> (b % 4) & 1))
              continue;
            if (hs == SIMULATION_HS_CPU ? ip : !(o->streamings >> ip & 1)) continue;
            if (hs == SIMULATION_HS_CPU ? !(o->layouts >> l & 1) : l != GRID_SOA) continue;
            if (hs == SIMULATION_HS_GPU && p == LBM_DP && !gpu_dp) continue;
            TSR_CHECK(*nrows < BENCH_MAX_ROWS, TSR_ERR_INTERNAL, "too many benchmark rows");
            lbm_options_t lo = lbm_options_default();
            lo.lattice = lattice_find(bench_lattices[li]);
            lo.cpu_layout = (grid_layout_t)l;
            lo.precision = (lbm_precision_t)p;
            lo.collision = (lbm_collision_t)(c % BENCH_KINDS);
            lo.smagorinsky = c >= BENCH_KINDS ? LBM_SMAGORINSKY_DEFAULT : 0;
            if (lo.collision == LBM_CUMULANT && !lbm_cumulant_lattice(lo.lattice)) continue;
            if (lo.lattice->moment_eq && (lo.collision != LBM_MRT || lo.smagorinsky > 0)) continue;
            lo.in_place = ip;
            lo.shifted = true;
            lo.viscosity = 0.02;
            lo.init_velocity[0] = 0.01;
            bench_row_t *r = &rows[(*nrows)++];
            TSR_TRY(bench_case(comm, o, hs == SIMULATION_HS_GPU ? o->gn : o->n, hs, sel, &lo,
                               counts[b % 4], gbs, r, err));
            if (rank == 0) bench_print_row(r);
          }
cleanup:
  return st;
}

static void bench_row_item(const bench_row_t *r, report_item_t out[11]) {
  out[0] = REPORT_TEXT_ITEM("row", r->what);
  out[1] = REPORT_TEXT_ITEM("hs", simulation_hs_name(r->hs));
  out[2] = REPORT_INT_ITEM("blocks_per_process", r->blocks_per_process);
  out[3] = REPORT_REAL_ITEM("mlups", r->median);
  out[4] = REPORT_REAL_ITEM("mlups_min", r->lo);
  out[5] = REPORT_REAL_ITEM("mlups_max", r->hi);
  out[6] = REPORT_REAL_ITEM("bytes_per_cell", r->bytes_per_cell);
  out[7] = REPORT_INT_ITEM("nontemporal", r->nontemporal);
  out[8] = REPORT_REAL_ITEM("bound_mlups", r->bound_mlups);
  out[9] = REPORT_REAL_ITEM("fraction", r->fraction);
  out[10] = REPORT_REAL_ITEM("exchange_share", r->exchange_share);
}

/* Whether every process lists an OpenCL device into *all (0 where the reduction fails).
 * Collective. */
static tsr_status bench_device_everywhere(MPI_Comm comm, int *all, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  opencl_device_desc_t *list = NULL;
  size_t ndev = 0;
  int have = opencl_list_devices(&list, &ndev, err) == TSR_OK && ndev > 0;
  free(list);
  *all = 0;
  TSR_MPI(MPI_Allreduce(&have, all, 1, MPI_INT, MPI_MIN, comm));
cleanup:
  return st;
}

/* The FMA peak of every process's threads, all processes at once, summed: DP and SP,
 * repeat times (rank 0 prints). */
static void bench_fma_cpu(MPI_Comm comm, int64_t repeat, double seconds) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int level = cpu_level_current();
  if (level < 0) level = 0;
  if (rank == 0)
    printf("FMA peak: %d process(es), %d OpenMP thread(s) each, CPU level %s; GFLOPS of all "
           "together (an FMA counts 2)\n", size, omp_get_max_threads(), cpu_level_name(level));
  for (int64_t r = 0; r < repeat; ++r) {
    double mine[2], all[2];
    MPI_Barrier(comm);
    mine[0] = fma_peak_gflops(1, seconds);
    MPI_Barrier(comm);
    mine[1] = fma_peak_gflops(0, seconds);
    MPI_Reduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, 0, comm);
    if (rank == 0)
      printf("  repetition %lld: dp %.1f GFLOPS, sp %.1f GFLOPS\n", (long long)r + 1, all[0],
             all[1]);
  }
}

/* The same on the default OpenCL device of every process, where every process has one;
 * returns the exit status. */
static int bench_fma_device(MPI_Comm comm, int64_t repeat, double seconds) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  tsr_error_t e, *err = &e;
  tsr_error_clear(err);
  int all_have = 0;
  if (bench_device_everywhere(comm, &all_have, err) != TSR_OK || !all_have) {
    if (rank == 0) printf("no OpenCL device on every process: no device peak\n");
    return 0;
  }
  tsr_status st = TSR_OK;
  opencl_context_t *cl = NULL;
  const opencl_select_t sel = opencl_select_default();
  st = opencl_context_create(&sel, &cl, err);
  st = verdict_reduce(comm, st, 0, err);
  if (st == TSR_OK && rank == 0)
    printf("FMA peak of the OpenCL device of every process (%s, %s), summed\n",
           opencl_context_desc(cl)->name, opencl_context_desc(cl)->platform_name);
  const int dp_ok = st == TSR_OK && opencl_context_desc(cl)->double_precision;
  for (int64_t r = 0; st == TSR_OK && r < repeat; ++r) {
    double mine[2] = {0, 0}, all[2];
    MPI_Barrier(comm);
    if (dp_ok) st = gpu_fma_peak_gflops(cl, 1, seconds, &mine[0], err);
    if (st == TSR_OK) st = gpu_fma_peak_gflops(cl, 0, seconds, &mine[1], err);
    st = verdict_reduce(comm, st, 0, err);
    if (st != TSR_OK) break;
    MPI_Reduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, 0, comm);
    if (rank == 0)
      printf("  repetition %lld: dp %.1f GFLOPS, sp %.1f GFLOPS\n", (long long)r + 1, all[0],
             all[1]);
  }
  opencl_context_free(&cl);
  return app_report(comm, st, err);
}

/* tessera bench --fma [--seconds T] [--repeat R]: the FMA peak of every process's
 * OpenMP threads (fma_peak.h), all processes at once, summed: DP and SP, R times. */
static int bench_fma(MPI_Comm comm, int argc, char **argv) {
  double seconds = 0.3;
  int64_t repeat = 3;
  static const char usage[] = "usage: tessera bench --fma [--seconds T] [--repeat R]\n";
  const app_opt_t opts[] = {APP_OPT("--seconds", APP_REAL, &seconds, .rmin = 0.01, .rmax = 60),
                            APP_OPT("--repeat", APP_INT, &repeat, .imin = 1, .imax = 64),
                            APP_OPT_END};
  const app_cmd_t cmd = {"bench --fma", usage, opts, NULL, false};
  const int parsed = app_parse(comm, &cmd, argc, argv, NULL);
  if (parsed >= 0) return parsed;
  bench_fma_cpu(comm, repeat, seconds);
  return bench_fma_device(comm, repeat, seconds);
}

/* The bandwidth probe (o->probe: arrays of 8x a field of the rows, at least 256 MiB, of
 * *copy_bytes) and this machine's memory bandwidth: all processes' threads at once,
 * summed (*sum), and rank 0's STREAM-counted (*plain). */
static tsr_status bench_probe(MPI_Comm comm, bench_opts_t *o, size_t *copy_bytes, double *sum,
                              double *plain, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *copy_bytes = (size_t)o->n * (size_t)o->n * (size_t)o->n * 8u * 4u;
  if (*copy_bytes < ((size_t)256 << 20)) *copy_bytes = (size_t)256 << 20;
  o->probe = cpu_stream_create(*copy_bytes);
  MPI_Barrier(comm);
  cpu_stream_result_t bw = cpu_stream_run(o->probe, 10);
  *plain = bw.copy_gbs_plain;
  TSR_MPI(MPI_Allreduce(&bw.copy_gbs, sum, 1, MPI_DOUBLE, MPI_SUM, comm));
  int have_probe = o->probe != NULL, all_probe = 0;
  TSR_MPI(MPI_Allreduce(&have_probe, &all_probe, 1, MPI_INT, MPI_MIN, comm));
  TSR_CHECK(all_probe, TSR_ERR_NOMEM, "out of memory for the bandwidth probe (2 x %zu MiB)",
            *copy_bytes >> 20);
cleanup:
  return st;
}

/* What the CPU rows run on and are held against, and the header of their table. */
static void bench_print_intro(int size, const bench_opts_t *o, size_t copy_bytes, double bw_sum,
                              double bw_plain) {
  printf("tessera bench: %d process(es) x %d thread(s), %ld^3 cells per process, %d "
         "repetitions of at least %.2f s per row; CPU kernels %s (rank 0)\n",
         size, cpu_threads_max(), (long)o->n, (int)o->repeat, o->seconds,
         cpu_level_name(cpu_level_current()));
  printf("memory bandwidth (copy, %zu MiB arrays, write-allocate counted): %.2f GB/s summed "
         "over processes (%.2f GB/s STREAM-counted on rank 0)\n",
         copy_bytes >> 20, bw_sum, bw_plain);
  const lbm_kernels_t *k = lbm_kernels_find(&lattice_d3q19, GRID_SOA, 1);
  printf("bytes per cell update: Q PDFs read + Q written%s (D3Q19: %d B DP, %d B SP); bound = "
         "bandwidth / bytes\n",
         k->nontemporal ? ", nontemporal stores on every CPU row (no write-allocate)"
                        : " + Q write-allocated",
         (k->nontemporal ? 2 : 3) * k->lattice->q * 8,
         (k->nontemporal ? 2 : 3) * k->lattice->q * 4);
  printf("(the bandwidth drifts on a shared machine: each repetition of a CPU row is held "
         "against the probe run right before it; bound and fraction are medians)\n\n");
  bench_print_header();
}

/* The access pattern's ceilings of every selected lattice, layout and precision into
 * rows[*nrows...], every process at once like the rows. */
static tsr_status bench_ceilings(MPI_Comm comm, const bench_opts_t *o, bench_row_t *rows,
                                 int *nrows, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  for (int li = 0; bench_lattices[li]; ++li)
    for (int l = GRID_SOA; l >= GRID_AOS; --l)
      for (int p = 0; p < LBM_PRECISIONS; ++p)
        for (int pull = 1; pull >= 0; --pull) {
          if (!(o->lattices >> li & 1) || !(o->layouts >> l & 1) || !(o->precisions >> p & 1))
            continue;
          TSR_CHECK(*nrows < BENCH_MAX_ROWS, TSR_ERR_INTERNAL, "too many benchmark rows");
          TSR_TRY(bench_ceiling(comm, o, lattice_find(bench_lattices[li]), (grid_layout_t)l,
                                (lbm_precision_t)p, pull, &rows[*nrows], err));
          if (rank == 0) bench_print_row(&rows[*nrows]);
          ++*nrows;
        }
  if (rank == 0)
    printf("(stream: streaming alone, the ceiling of the kernels' loads and stores; cells: each "
           "cell copied from itself through the same loop, no pull)\n");
cleanup:
  return st;
}

/* Whether every process has an OpenCL device; where one lacks it, o->use_gpu is cleared
 * and rank 0 says the OpenCL rows are left out. */
static tsr_status bench_gpu_present(MPI_Comm comm, bench_opts_t *o, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int all = 0;
  TSR_TRY(bench_device_everywhere(comm, &all, err));
  if (!all) {
    if (rank == 0) printf("\nno OpenCL device on every process: the OpenCL rows are left out\n");
    o->use_gpu = false;
  }
cleanup:
  return st;
}

/* The OpenCL device of sel: its copy bandwidth (summed over the processes into *gpu_gbs),
 * then the rows with hs gpu into rows[*nrows...]. */
static tsr_status bench_gpu(MPI_Comm comm, const bench_opts_t *o, const opencl_select_t *sel,
                            bench_row_t *rows, int *nrows, double *gpu_gbs, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  opencl_context_t *cl = NULL;
  int gpu_dp = 0;
  st = opencl_context_create(sel, &cl, err);
  double mine = 0;
  size_t grid =
      (size_t)(o->gn + 2) * (size_t)(o->gn + 2) * (size_t)(o->gn + 2) * LATTICE_MAX_Q * 8u;
  size_t probe = grid > ((size_t)256 << 20) ? grid : ((size_t)256 << 20);
  MPI_Barrier(comm);
  if (st == TSR_OK) {
    const opencl_device_desc_t *d = opencl_context_desc(cl);
    if (probe > d->max_alloc_bytes) probe = (size_t)d->max_alloc_bytes;
    gpu_dp = d->double_precision;
    st = gpu_copy_bandwidth(cl, probe, 10, &mine, err);
  }
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_MPI(MPI_Allreduce(&mine, gpu_gbs, 1, MPI_DOUBLE, MPI_SUM, comm));
  if (rank == 0) {
    const opencl_device_desc_t *d = opencl_context_desc(cl);
    printf("\nOpenCL device: %s (%s, %s), %ld^3 cells per process\n", d->name, d->platform_name,
           d->type, (long)o->gn);
    printf("device copy bandwidth (clEnqueueCopyBuffer, %zu MiB, read + write counted): "
           "%.2f GB/s summed over processes\n", probe >> 20, *gpu_gbs);
    printf("bytes per cell update: Q PDFs read + Q written (D3Q19: 304 B DP, 152 B SP)\n\n");
    bench_print_header();
  }
  opencl_context_free(&cl);
  TSR_TRY(bench_rows(comm, o, SIMULATION_HS_GPU, sel, gpu_dp, *gpu_gbs, rows, nrows, err));
cleanup:
  opencl_context_free(&cl);
  return st;
}

/* The report --json asks for (rank 0): the run's figures and a table of the rows. */
static tsr_status bench_json(const bench_opts_t *o, int size, double bw_sum, double gpu_gbs,
                             const bench_row_t *rows, int nrows, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  report_item_t items[9];
  size_t m = 0;
  report_item_t *cells = calloc((size_t)(nrows ? nrows : 1) * 11, sizeof *cells);
  TSR_CHECK(cells, TSR_ERR_NOMEM, "out of memory for the report");
  for (int i = 0; i < nrows; ++i) bench_row_item(&rows[i], cells + 11 * i);
  items[m++] = REPORT_INT_ITEM("processes", size);
  items[m++] = REPORT_INT_ITEM("threads_per_process", cpu_threads_max());
  items[m++] = REPORT_TEXT_ITEM("cpu_level", cpu_level_name(cpu_level_current()));
  items[m++] = REPORT_INT_ITEM("cells_per_process", (int64_t)o->n * o->n * o->n);
  items[m++] = REPORT_INT_ITEM("repetitions", o->repeat);
  items[m++] = REPORT_REAL_ITEM("copy_bandwidth_gbs", bw_sum);
  if (o->use_gpu) items[m++] = REPORT_REAL_ITEM("gpu_copy_bandwidth_gbs", gpu_gbs);
  items[m++] = REPORT_TABLE_ITEM("rows", cells, (size_t)nrows, 11);
  TSR_TRY(report_write_json(o->json, items, m, err));
cleanup:
  free(cells);
  return st;
}

int app_bench(MPI_Comm comm, int argc, char **argv) {
  tsr_status st = TSR_OK;
  tsr_error_t e, *err = &e;
  tsr_error_clear(err);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  /* the other benchmarks, named by their first option */
  static const app_command_t kinds[] = {{"--hetero", app_bench_hetero},
                                        {"--config", app_bench_config},
                                        {"--fma", bench_fma},
                                        {NULL, NULL}};
  const app_command_t *kind = app_command_find(kinds, argc > 1 ? argv[1] : NULL);
  if (kind) return kind->fn(comm, argc - 1, argv + 1);
  if (argc > 1 && strcmp(argv[1], "--machine") == 0) return app_bench_machine(comm, argc, argv);
  bench_opts_t o;
  const int parsed = bench_parse(comm, argc, argv, &o);
  if (parsed >= 0) return parsed;
  bench_row_t *rows = calloc(BENCH_MAX_ROWS, sizeof *rows);
  int nrows = 0;
  size_t copy_bytes = 0;
  double bw_sum = 0, bw_plain = 0, gpu_gbs = 0;
  /* bandwidth -> CPU rows -> ceilings -> the OpenCL device's bandwidth and rows -> report */
  TSR_TRY(bench_probe(comm, &o, &copy_bytes, &bw_sum, &bw_plain, err));
  TSR_CHECK(rows, TSR_ERR_NOMEM, "out of memory for the benchmark rows");
  if (rank == 0) bench_print_intro(size, &o, copy_bytes, bw_sum, bw_plain);
  TSR_TRY(bench_rows(comm, &o, SIMULATION_HS_CPU, NULL, 0, bw_sum, rows, &nrows, err));
  TSR_TRY(bench_ceilings(comm, &o, rows, &nrows, err));
  opencl_select_t sel = opencl_select_default();
  if (o.device >= 0) sel.device = (int)o.device;
  if (o.use_gpu) TSR_TRY(bench_gpu_present(comm, &o, err));
  if (o.use_gpu) TSR_TRY(bench_gpu(comm, &o, &sel, rows, &nrows, &gpu_gbs, err));
  if (rank == 0 && o.json) st = bench_json(&o, size, bw_sum, gpu_gbs, rows, nrows, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
cleanup:
  cpu_stream_free(&o.probe);
  free(rows);
  return app_report(comm, st, err);
}
