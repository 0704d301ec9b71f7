#include "grid.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of a line, the alignment of SoA rows; lines of skew between SoA components. */
enum { GRID_LINE = 64, GRID_PAGE = 4096, GRID_SKEW_LINES = 3 };

static ptrdiff_t grid_round_up(ptrdiff_t v, ptrdiff_t m) { return (v + m - 1) / m * m; }

grid_dims_t grid_dims_make(const int n[3], int ncomp, int ghost, grid_layout_t layout,
                           size_t esize) {
  return grid_dims_make_gz(n, ncomp, ghost, ghost, layout, esize);
}

void grid_ghost_of(const int width[3], int *ghost, int *gz) {
  *ghost = 0;
  for (int a = 0; a < 3; ++a)
    if (width[a] > *ghost) *ghost = width[a];
  *gz = width[2];
}

grid_dims_t grid_dims_make_gz(const int n[3], int ncomp, int ghost, int gz,
                              grid_layout_t layout, size_t esize) {
  grid_dims_t d;
  memset(&d, 0, sizeof d);
  d.nx = n[0];
  d.ny = n[1];
  d.nz = n[2];
  d.ncomp = ncomp;
  d.ghost = ghost;
  d.gz = gz;
  d.layout = layout;
  const ptrdiff_t g = ghost, ex = (ptrdiff_t)n[0] + 2 * g, ey = (ptrdiff_t)n[1] + 2 * g,
                  ez = (ptrdiff_t)n[2] + 2 * (ptrdiff_t)gz;
  /* every product checked: a field too large to address keeps elements = 0 */
  bool fits;
  ptrdiff_t total = 0;
  if (layout == GRID_AOS) {
    d.sc = 1;
    d.sx = ncomp;
    fits = !__builtin_mul_overflow(d.sx, ex, &d.sy) && !__builtin_mul_overflow(d.sy, ey, &d.sz) &&
           !__builtin_mul_overflow(d.sz, ez, &total);
    d.origin = fits ? g * (d.sx + d.sy) + gz * d.sz : 0;
  } else {
    /* a component: a guard line, the planes (rows of ex cells back to back, each plane
       starting a line), a guard line */
    const ptrdiff_t geo = esize < 4 ? 4 : (ptrdiff_t)esize; /* 2 bytes: 4-byte offsets */
    const ptrdiff_t line = GRID_LINE / geo, page = GRID_PAGE / geo;
    const ptrdiff_t guard = line * (g > 0 ? g : 1);
    ptrdiff_t plane = 0, planes = 0;
    d.sx = 1;
    d.sy = ex;
    fits = !__builtin_mul_overflow(ex, ey, &plane) && plane <= PTRDIFF_MAX - line &&
           !__builtin_mul_overflow(grid_round_up(plane, line), ez, &planes) &&
           planes <= PTRDIFF_MAX / 2 - 2 * guard - page - GRID_SKEW_LINES * line;
    if (fits) {
      d.sz = grid_round_up(plane, line);
      d.sc = grid_round_up(2 * guard + planes, page) + GRID_SKEW_LINES * line;
      d.origin = guard + g * (1 + d.sy) + gz * d.sz;
      fits = !__builtin_mul_overflow(d.sc, (ptrdiff_t)ncomp, &total);
    }
  }
  d.elements = fits && total > 0 ? (size_t)total : 0;
  return d;
}

const char *grid_layout_name(grid_layout_t layout) { return layout == GRID_SOA ? "soa" : "aos"; }

size_t grid_index_checked(const grid_dims_t *d, int x, int y, int z, int c) {
  const int g = d->ghost, gz = d->gz;
  if (x < -g || x >= d->nx + g || y < -g || y >= d->ny + g || z < -gz || z >= d->nz + gz ||
      c < 0 || c >= d->ncomp) {
    fprintf(stderr, "grid_index: (%d, %d, %d) component %d outside a field of %dx%dx%d cells "
            "with %d components and a ghost layer of %d (%d along z)\n", x, y, z, c, d->nx,
            d->ny, d->nz, d->ncomp, g, gz);
    abort();
  }
  return grid_index(d, x, y, z, c);
}

size_t grid_slice_bytes(const int lo[3], const int hi[3], int ncomps, size_t esize) {
  size_t cells = 1;
  for (int a = 0; a < 3; ++a) cells *= (size_t)(hi[a] > lo[a] ? hi[a] - lo[a] : 0);
  return cells * (size_t)ncomps * esize;
}

/* The pack/unpack loop, with the element size known at compile time for the common
   sizes. */
#define GRID_COPY_BOX(ESIZE, TO_BUFFER)                                                  \
  do {                                                                                   \
    const int sx = hi[0] - lo[0], sy = hi[1] - lo[1];                                    \
    _Pragma("omp parallel for collapse(2) if (bytes > (1 << 20))")                       \
    for (int z = lo[2]; z < hi[2]; ++z)                                                  \
      for (int y = lo[1]; y < hi[1]; ++y) {                                              \
        size_t row = ((size_t)(z - lo[2]) * (size_t)sy + (size_t)(y - lo[1])) *          \
                     (size_t)sx * (size_t)ncomps;                                        \
        for (int x = lo[0]; x < hi[0]; ++x) {                                            \
          size_t cell = grid_index(dims, x, y, z, 0);                                    \
          size_t at = row + (size_t)(x - lo[0]) * (size_t)ncomps;                        \
          for (int k = 0; k < ncomps; ++k) {                                             \
            uint8_t *f = (uint8_t *)field_bytes +                                        \
                         (cell + (size_t)((ptrdiff_t)comps[k] * dims->sc)) * (ESIZE);    \
            uint8_t *b = (uint8_t *)buf_bytes + (at + (size_t)k) * (ESIZE);              \
            if (TO_BUFFER) memcpy(b, f, (ESIZE));                                        \
            else memcpy(f, b, (ESIZE));                                                  \
          }                                                                              \
        }                                                                                \
      }                                                                                  \
  } while (0)

size_t grid_pack(const void *restrict field, const grid_dims_t *dims, size_t esize,
                 const int lo[3], const int hi[3], const int *restrict comps, int ncomps,
                 uint8_t *restrict out) {
  size_t bytes = grid_slice_bytes(lo, hi, ncomps, esize);
  const void *field_bytes = field;
  void *buf_bytes = out;
  if (esize == 8) GRID_COPY_BOX(8, 1);
  else if (esize == 4) GRID_COPY_BOX(4, 1);
  else GRID_COPY_BOX(esize, 1);
  return bytes;
}

size_t grid_unpack(void *restrict field, const grid_dims_t *dims, size_t esize,
                   const int lo[3], const int hi[3], const int *restrict comps, int ncomps,
                   const uint8_t *restrict in) {
  size_t bytes = grid_slice_bytes(lo, hi, ncomps, esize);
  void *field_bytes = field;
  const void *buf_bytes = in;
  if (esize == 8) GRID_COPY_BOX(8, 0);
  else if (esize == 4) GRID_COPY_BOX(4, 0);
  else GRID_COPY_BOX(esize, 0);
  return bytes;
}

/* Rows ahead whose cells a job one cell wide in x asks for before it copies them. */
#define GRID_PREFETCH_ROWS 32

/* One job, the element size known at compile time for the common sizes, component by
 * component: every component's values of the box are rows of one array (SoA) or of
 * stride ncomp (AoS), read and written at a constant stride, which the hardware
 * prefetchers follow. A job one cell wide in x (an x face, an edge along y or z) takes
 * one value per row: every value is a line of its own, far from the last one, so the
 * lines GRID_PREFETCH_ROWS rows ahead are asked for as well. */
#define GRID_COPY_JOB(ESIZE)                                                             \
  do {                                                                                   \
    const grid_dims_t *sd = &j->src_dims, *dd = &j->dst_dims;                            \
    const int pf = j->extent[0] == 1;                                                    \
    for (int k = 0; k < j->ncomps; ++k) {                                                \
      const uint8_t *s0 = (const uint8_t *)j->src +                                      \
          grid_index(sd, j->src_lo[0], j->src_lo[1], j->src_lo[2], j->comps[k]) * (ESIZE); \
      uint8_t *d0 = (uint8_t *)j->dst +                                                  \
          grid_index(dd, j->dst_lo[0], j->dst_lo[1], j->dst_lo[2], j->comps[k]) * (ESIZE); \
      for (int z = 0; z < j->extent[2]; ++z)                                             \
        for (int y = 0; y < j->extent[1]; ++y) {                                         \
          const uint8_t *s = s0 + (size_t)(z * sd->sz + y * sd->sy) * (ESIZE);           \
          uint8_t *d = d0 + (size_t)(z * dd->sz + y * dd->sy) * (ESIZE);                 \
          if (pf && y + GRID_PREFETCH_ROWS < j->extent[1]) {                             \
            __builtin_prefetch(s + (size_t)(GRID_PREFETCH_ROWS * sd->sy) * (ESIZE), 0, 3); \
            __builtin_prefetch(d + (size_t)(GRID_PREFETCH_ROWS * dd->sy) * (ESIZE), 1, 3); \
          }                                                                              \
          if (sd->sx == 1 && dd->sx == 1) {                                              \
            memcpy(d, s, (size_t)j->extent[0] * (ESIZE));                                \
            continue;                                                                    \
          }                                                                              \
          for (int x = 0; x < j->extent[0]; ++x)                                         \
            memcpy(d + (size_t)(x * dd->sx) * (ESIZE), s + (size_t)(x * sd->sx) * (ESIZE), (ESIZE)); \
        }                                                                                \
    }                                                                                    \
  } while (0)

void grid_copy_boxes(const grid_copy_job_t *jobs, size_t n, size_t esize) {
#pragma omp parallel for schedule(dynamic, 1) if (n > 1)
  for (size_t i = 0; i < n; ++i) {
    const grid_copy_job_t *j = &jobs[i];
    if (esize == 8) GRID_COPY_JOB(8);
    else if (esize == 4) GRID_COPY_JOB(4);
    else GRID_COPY_JOB(esize);
  }
}
