#include "aos.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t aos_index_checked(const aos_dims_t *d, int x, int y, int z, int c) {
  if (x < -1 || x > d->nx || y < -1 || y > d->ny || z < -1 || z > d->nz || c < 0 ||
      c >= d->ncomp) {
    fprintf(stderr, "aos_index: (%d, %d, %d) component %d outside a field of %dx%dx%d cells "
            "with %d components and one ghost layer\n", x, y, z, c, d->nx, d->ny, d->nz,
            d->ncomp);
    abort();
  }
  return aos_index(d, x, y, z, c);
}

size_t aos_field_elements(const aos_dims_t *d) {
  return (size_t)(d->nx + 2) * (size_t)(d->ny + 2) * (size_t)(d->nz + 2) * (size_t)d->ncomp;
}

size_t aos_slice_bytes(const int lo[3], const int hi[3], int ncomps, size_t esize) {
  size_t cells = 1;
  for (int a = 0; a < 3; ++a) cells *= (size_t)(hi[a] > lo[a] ? hi[a] - lo[a] : 0);
  return cells * (size_t)ncomps * esize;
}

/* The copy loop, with the element size known at compile time for the common sizes. */
#define AOS_COPY_BOX(ESIZE, TO_BUFFER)                                                   \
  do {                                                                                   \
    const int sx = hi[0] - lo[0], sy = hi[1] - lo[1];                                    \
    _Pragma("omp parallel for collapse(2) if (bytes > (1 << 20))")                       \
    for (int z = lo[2]; z < hi[2]; ++z)                                                  \
      for (int y = lo[1]; y < hi[1]; ++y) {                                              \
        size_t row = ((size_t)(z - lo[2]) * (size_t)sy + (size_t)(y - lo[1])) *          \
                     (size_t)sx * (size_t)ncomps;                                        \
        for (int x = lo[0]; x < hi[0]; ++x) {                                            \
          size_t cell = aos_index(dims, x, y, z, 0);                                     \
          size_t at = row + (size_t)(x - lo[0]) * (size_t)ncomps;                        \
          for (int k = 0; k < ncomps; ++k) {                                             \
            uint8_t *f = (uint8_t *)field_bytes + (cell + (size_t)comps[k]) * (ESIZE);   \
            uint8_t *b = (uint8_t *)buf_bytes + (at + (size_t)k) * (ESIZE);              \
            if (TO_BUFFER) memcpy(b, f, (ESIZE));                                        \
            else memcpy(f, b, (ESIZE));                                                  \
          }                                                                              \
        }                                                                                \
      }                                                                                  \
  } while (0)

size_t aos_pack(const void *restrict field, const aos_dims_t *dims, size_t esize,
                const int lo[3], const int hi[3], const int *restrict comps, int ncomps,
                uint8_t *restrict out) {
  size_t bytes = aos_slice_bytes(lo, hi, ncomps, esize);
  const void *field_bytes = field;
  void *buf_bytes = out;
  if (esize == 8) AOS_COPY_BOX(8, 1);
  else if (esize == 4) AOS_COPY_BOX(4, 1);
  else AOS_COPY_BOX(esize, 1);
  return bytes;
}

size_t aos_unpack(void *restrict field, const aos_dims_t *dims, size_t esize, const int lo[3],
                  const int hi[3], const int *restrict comps, int ncomps,
                  const uint8_t *restrict in) {
  size_t bytes = aos_slice_bytes(lo, hi, ncomps, esize);
  void *field_bytes = field;
  const void *buf_bytes = in;
  if (esize == 8) AOS_COPY_BOX(8, 0);
  else if (esize == 4) AOS_COPY_BOX(4, 0);
  else AOS_COPY_BOX(esize, 0);
  return bytes;
}

/* Rows ahead whose cells an x-face job asks for before it copies them. */
#define AOS_PREFETCH_ROWS 8

/* One job, the element size known at compile time for the common sizes. A job one cell
 * wide in x (an x face, an edge along y or z) goes from row to row: every cell is lines
 * of its own, far from the last one, which no hardware prefetcher predicts; so the
 * source and destination lines of the cell AOS_PREFETCH_ROWS rows ahead are asked for
 * (bytes lo .. hi of the cell: the listed components). */
#define AOS_COPY_JOB(ESIZE)                                                              \
  do {                                                                                   \
    const int pf = j->extent[0] == 1;                                                    \
    for (int z = 0; z < j->extent[2]; ++z)                                               \
      for (int y = 0; y < j->extent[1]; ++y) {                                           \
        if (pf && y + AOS_PREFETCH_ROWS < j->extent[1]) {                                \
          const int ya = y + AOS_PREFETCH_ROWS;                                          \
          aos_prefetch((const uint8_t *)j->src + aos_index(&j->src_dims, j->src_lo[0],   \
                       j->src_lo[1] + ya, j->src_lo[2] + z, 0) * (ESIZE), lo, hi, 0);    \
          aos_prefetch((const uint8_t *)j->dst + aos_index(&j->dst_dims, j->dst_lo[0],   \
                       j->dst_lo[1] + ya, j->dst_lo[2] + z, 0) * (ESIZE), lo, hi, 1);    \
        }                                                                                \
        for (int x = 0; x < j->extent[0]; ++x) {                                         \
          const uint8_t *s = (const uint8_t *)j->src +                                   \
              aos_index(&j->src_dims, j->src_lo[0] + x, j->src_lo[1] + y, j->src_lo[2] + z, 0) * (ESIZE); \
          uint8_t *d = (uint8_t *)j->dst +                                               \
              aos_index(&j->dst_dims, j->dst_lo[0] + x, j->dst_lo[1] + y, j->dst_lo[2] + z, 0) * (ESIZE); \
          for (int k = 0; k < j->ncomps; ++k)                                            \
            memcpy(d + (size_t)j->comps[k] * (ESIZE), s + (size_t)j->comps[k] * (ESIZE), (ESIZE)); \
        }                                                                                \
      }                                                                                  \
  } while (0)

/* Asks for the lines of bytes lo..hi of the cell at c, for reading or writing. */
static inline void aos_prefetch(const uint8_t *c, size_t lo, size_t hi, int write) {
  const uintptr_t a = (uintptr_t)c + lo, b = (uintptr_t)c + hi;
  for (uintptr_t l = a & ~(uintptr_t)63; l <= b; l += 64) {
    if (write) __builtin_prefetch((const void *)l, 1, 3);
    else __builtin_prefetch((const void *)l, 0, 3);
  }
}

void aos_copy_boxes(const aos_copy_job_t *jobs, size_t n, size_t esize) {
#pragma omp parallel for schedule(dynamic, 4) if (n > 8)
  for (size_t i = 0; i < n; ++i) {
    const aos_copy_job_t *j = &jobs[i];
    int cmin = j->ncomps ? j->comps[0] : 0, cmax = cmin;
    for (int k = 1; k < j->ncomps; ++k) {
      if (j->comps[k] < cmin) cmin = j->comps[k];
      if (j->comps[k] > cmax) cmax = j->comps[k];
    }
    const size_t lo = (size_t)cmin * esize, hi = (size_t)cmax * esize + esize - 1;
    if (esize == 8) AOS_COPY_JOB(8);
    else if (esize == 4) AOS_COPY_JOB(4);
    else AOS_COPY_JOB(esize);
  }
}
