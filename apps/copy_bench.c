/* tessera-copy-bench: the direct ghost copies of a periodic box of SoA blocks, alone.
 *
 *   tessera-copy-bench [BLOCKS_PER_AXIS [CELLS_PER_AXIS [RUNS]]]   (default 4 128 10)
 *
 * Sets up BLOCKS_PER_AXIS^3 blocks of D3Q19 double-precision PDFs in the SoA layout
 * tiling a periodic box of CELLS_PER_AXIS^3 cells, and times grid_copy_boxes on the
 * jobs of one class of directions at a time (x faces, y faces, z faces, edges and
 * corners, all). Before each run a STREAM-like copy of 256 MiB arrays measures the
 * bandwidth (and flushes the blocks out of the caches). Prints the mean time per step,
 * the ghost values copied, the line traffic (a value alone in its row is a line read on
 * the sender, read for ownership and written back on the receiver) and that traffic
 * over the mean copy bandwidth. A developer's measurement of what docs/performance.md
 * says the x faces cost; the whole step is `tessera bench`. Threads: OMP_NUM_THREADS. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_stream.h"
#include "direction.h"
#include "grid.h"
#include "lattice.h"
#include "tsr_parse.h"

enum { CLASSES = 5 };

static int arg(int argc, char **argv, int i, int def, int lo, int hi) {
  if (argc <= i) return def;
  int64_t v = 0;
  if (!tsr_parse_int(argv[i], lo, hi, &v)) {
    fprintf(stderr, "tessera-copy-bench: argument %d: '%s' is not an integer from %d to %d\n", i,
            argv[i], lo, hi);
    exit(2);
  }
  return (int)v;
}

/* The periodic box: nb^3 blocks of n^3 cells of D3Q19 DP PDFs (SoA), and the PDFs that
 * cross each direction. */
typedef struct copy_box {
  int nb, nblk, size[3];
  grid_dims_t d;
  void **f; /* the blocks' fields */
  int comps[DIRECTION_COUNT][LATTICE_MAX_Q], ncomps[DIRECTION_COUNT];
} copy_box_t;

static const size_t copy_esize = sizeof(double); /* DP */

/* The box's shape and the components each direction copies (no field allocated yet). */
static void copy_box_shape(copy_box_t *b, int nb, int n) {
  const lattice_t *l = &lattice_d3q19;
  b->nb = nb;
  b->nblk = nb * nb * nb;
  b->size[0] = b->size[1] = b->size[2] = n;
  b->d = grid_dims_make(b->size, l->q, l->reach, GRID_SOA, copy_esize);
  b->f = NULL;
  for (int k = 0; k < DIRECTION_COUNT; ++k) {
    const int off[3] = {direction_offsets[k][0], direction_offsets[k][1], direction_offsets[k][2]};
    b->ncomps[k] = lattice_crossing(l, off, b->comps[k]);
  }
}

/* The jobs of class c (CLASSES - 1: every direction) of every block into jobs; their
 * ghost values into *values and the cache lines they move into *lines; returns how many. */
static size_t copy_class_jobs(const copy_box_t *box, int c, grid_copy_job_t *jobs,
                              double *values, double *lines) {
  const int nb = box->nb;
  size_t nj = 0;
  *values = *lines = 0;
  for (int b = 0; b < box->nblk; ++b) {
    const int bx = b % nb, by = b / nb % nb, bz = b / nb / nb;
    for (int k = 0; k < DIRECTION_COUNT; ++k) {
      const int cls = k < DIRECTION_FACES ? k / 2 : 3;
      if ((c < CLASSES - 1 && cls != c) || !box->ncomps[k]) continue;
      const int8_t *o = direction_offsets[k];
      const int from = (bx - o[0] + nb) % nb +
                       nb * ((by - o[1] + nb) % nb + nb * ((bz - o[2] + nb) % nb));
      int slo[3], shi[3], dlo[3], dhi[3];
      direction_send_box(box->size, direction_width_one, k, 0, slo, shi);
      direction_recv_box(box->size, direction_width_one, k, 0, dlo, dhi);
      grid_copy_job_t *j = &jobs[nj++];
      *j = (grid_copy_job_t){.src = box->f[from], .src_dims = box->d, .dst = box->f[b],
                             .dst_dims = box->d, .comps = box->comps[k],
                             .ncomps = box->ncomps[k]};
      for (int a = 0; a < 3; ++a) {
        j->src_lo[a] = slo[a];
        j->dst_lo[a] = dlo[a];
        j->extent[a] = shi[a] - slo[a];
      }
      const double v = (double)j->extent[0] * j->extent[1] * j->extent[2] * box->ncomps[k];
      *values += v;
      /* read on the sender, read for ownership and written back on the receiver */
      *lines += j->extent[0] == 1 ? 3 * v : 3 * v * (double)copy_esize / 64.0;
    }
  }
  return nj;
}

/* The seconds of runs copies of the jobs, each after a probe run (which also flushes
 * the blocks out of the caches), summed; the probe's copy bandwidths summed into *bw. */
static double copy_time(cpu_stream_t *probe, const grid_copy_job_t *jobs, size_t nj, int runs,
                        double *bw) {
  double total = 0;
  *bw = 0;
  for (int r = 0; r < runs; ++r) {
    *bw += cpu_stream_run(probe, 1).copy_gbs;
    const double t0 = omp_get_wtime();
    grid_copy_boxes(jobs, nj, copy_esize);
    total += omp_get_wtime() - t0;
  }
  return total;
}

int main(int argc, char **argv) {
  const int nb = arg(argc, argv, 1, 4, 1, 16), cells = arg(argc, argv, 2, 128, 8, 512);
  const int runs = arg(argc, argv, 3, 10, 1, 1000);
  if (cells % nb) {
    fprintf(stderr, "tessera-copy-bench: %d cells do not split into %d blocks per axis\n", cells, nb);
    return 2;
  }
  copy_box_t box;
  copy_box_shape(&box, nb, cells / nb);
  const int n = box.size[0], nblk = box.nblk;
  const size_t field_bytes = (box.d.elements * copy_esize + 63) / 64 * 64;
  box.f = calloc((size_t)nblk, sizeof *box.f);
  grid_copy_job_t *jobs = malloc((size_t)nblk * DIRECTION_COUNT * sizeof *jobs);
  cpu_stream_t *probe = cpu_stream_create((size_t)1 << 28);
  int ok = box.f && jobs && probe;
  for (int b = 0; ok && b < nblk; ++b) {
    box.f[b] = aligned_alloc(64, field_bytes);
    if (box.f[b]) memset(box.f[b], 0, field_bytes);
    ok = box.f[b] != NULL;
  }
  if (!ok) {
    fprintf(stderr, "tessera-copy-bench: out of memory for %d blocks of %d^3 cells\n", nblk, n);
    return 1;
  }
  printf("%d blocks of %d^3 cells (D3Q19, DP, SoA), %d thread(s), mean of %d runs\n", nblk, n,
         omp_get_max_threads(), runs);
  static const char *const names[CLASSES] = {"x faces", "y faces", "z faces", "edges+corners",
                                             "all"};
  for (int c = 0; c < CLASSES; ++c) {
    double values = 0, lines = 0, bw = 0;
    const size_t nj = copy_class_jobs(&box, c, jobs, &values, &lines);
    const double t = copy_time(probe, jobs, nj, runs, &bw) / runs, gbs = lines * 64 / t / 1e9;
    printf("%-14s %5zu jobs %7.2f MB of values %7.1f MB of lines %7.3f ms %5.1f GB/s of lines "
           "= %3.0f%% of %.1f GB/s copy\n", names[c], nj, values * (double)copy_esize / 1e6,
           lines * 64 / 1e6, t * 1e3, gbs, 100 * gbs / (bw / runs), bw / runs);
  }
  for (int b = 0; b < nblk; ++b) free(box.f[b]);
  free(box.f);
  free(jobs);
  cpu_stream_free(&probe);
  return 0;
}
