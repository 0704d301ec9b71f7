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

int main(int argc, char **argv) {
  const int nb = arg(argc, argv, 1, 4, 1, 16), cells = arg(argc, argv, 2, 128, 8, 512);
  const int runs = arg(argc, argv, 3, 10, 1, 1000);
  if (cells % nb) {
    fprintf(stderr, "tessera-copy-bench: %d cells do not split into %d blocks per axis\n", cells, nb);
    return 2;
  }
  const lattice_t *l = &lattice_d3q19;
  const size_t es = sizeof(double);
  const int n = cells / nb, nblk = nb * nb * nb, size[3] = {n, n, n};
  const grid_dims_t d = grid_dims_make(size, l->q, l->reach, GRID_SOA, es);
  const size_t field_bytes = (d.elements * es + 63) / 64 * 64;
  int comps[DIRECTION_COUNT][LATTICE_MAX_Q], ncomps[DIRECTION_COUNT];
  for (int k = 0; k < DIRECTION_COUNT; ++k) {
    const int off[3] = {direction_offsets[k][0], direction_offsets[k][1], direction_offsets[k][2]};
    ncomps[k] = lattice_crossing(l, off, comps[k]);
  }
  void **f = calloc((size_t)nblk, sizeof *f);
  grid_copy_job_t *jobs = malloc((size_t)nblk * DIRECTION_COUNT * sizeof *jobs);
  cpu_stream_t *probe = cpu_stream_create((size_t)1 << 28);
  int ok = f && jobs && probe;
  for (int b = 0; ok && b < nblk; ++b) {
    f[b] = aligned_alloc(64, field_bytes);
    if (f[b]) memset(f[b], 0, field_bytes);
    ok = f[b] != NULL;
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
    size_t nj = 0;
    double values = 0, lines = 0;
    for (int b = 0; b < nblk; ++b) {
      const int bx = b % nb, by = b / nb % nb, bz = b / nb / nb;
      for (int k = 0; k < DIRECTION_COUNT; ++k) {
        const int cls = k < DIRECTION_FACES ? k / 2 : 3;
        if ((c < CLASSES - 1 && cls != c) || !ncomps[k]) continue;
        const int8_t *o = direction_offsets[k];
        const int from = (bx - o[0] + nb) % nb + nb * ((by - o[1] + nb) % nb + nb * ((bz - o[2] + nb) % nb));
        int slo[3], shi[3], dlo[3], dhi[3];
        direction_send_box(size, direction_width_one, k, 0, slo, shi);
        direction_recv_box(size, direction_width_one, k, 0, dlo, dhi);
        grid_copy_job_t *j = &jobs[nj++];
        *j = (grid_copy_job_t){.src = f[from], .src_dims = d, .dst = f[b], .dst_dims = d,
                               .comps = comps[k], .ncomps = ncomps[k]};
        for (int a = 0; a < 3; ++a) {
          j->src_lo[a] = slo[a];
          j->dst_lo[a] = dlo[a];
          j->extent[a] = shi[a] - slo[a];
        }
        const double v = (double)j->extent[0] * j->extent[1] * j->extent[2] * ncomps[k];
        values += v;
        /* read on the sender, read for ownership and written back on the receiver */
        lines += j->extent[0] == 1 ? 3 * v : 3 * v * (double)es / 64.0;
      }
    }
    double total = 0, bw = 0;
    for (int r = 0; r < runs; ++r) {
      bw += cpu_stream_run(probe, 1).copy_gbs;
      const double t0 = omp_get_wtime();
      grid_copy_boxes(jobs, nj, es);
      total += omp_get_wtime() - t0;
    }
    const double t = total / runs, gbs = lines * 64 / t / 1e9;
    printf("%-14s %5zu jobs %7.2f MB of values %7.1f MB of lines %7.3f ms %5.1f GB/s of lines "
           "= %3.0f%% of %.1f GB/s copy\n", names[c], nj, values * (double)es / 1e6,
           lines * 64 / 1e6, t * 1e3, gbs, 100 * gbs / (bw / runs), bw / runs);
  }
  for (int b = 0; b < nblk; ++b) free(f[b]);
  free(f);
  free(jobs);
  cpu_stream_free(&probe);
  return 0;
}
