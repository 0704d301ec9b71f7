/* lbm_test_field.h: a field of an LBM kernel set's layout and precision for the kernel
 * tests (test_lbm_kernels, test_lbm_collisions): made, set and read as doubles, compared
 * bit for bit. Include after cmocka.h, grid.h and lbm_kernels.h. */
#ifndef LBM_TEST_FIELD_H
#define LBM_TEST_FIELD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A field of a kernel set's layout and precision; values set and read as doubles. */
typedef struct field {
  grid_dims_t d;
  size_t esize;
  void *v;
} field_t;

static inline field_t field_make(const lbm_kernels_t *k, int nx, int ny, int nz) {
  const int n[3] = {nx, ny, nz};
  field_t f = {.d = grid_dims_make(n, k->lattice->q, k->lattice->reach, k->layout, k->esize),
               .esize = k->esize};
  size_t bytes = (f.d.elements * f.esize + 63) / 64 * 64;
  f.v = aligned_alloc(64, bytes);
  assert_non_null(f.v);
  memset(f.v, 0, bytes);
  return f;
}

static inline double field_get(const field_t *f, int x, int y, int z, int i) {
  size_t k = grid_index_checked(&f->d, x, y, z, i);
  return f->esize == 4 ? (double)((const float *)f->v)[k] : ((const double *)f->v)[k];
}

static inline void field_set(field_t *f, int x, int y, int z, int i, double v) {
  size_t k = grid_index_checked(&f->d, x, y, z, i);
  if (f->esize == 4) ((float *)f->v)[k] = (float)v;
  else ((double *)f->v)[k] = v;
}

/* The bits of one value (comparisons that must be bitwise, NaN-safe). */
static inline uint64_t field_bits(const field_t *f, int x, int y, int z, int i) {
  size_t k = grid_index_checked(&f->d, x, y, z, i);
  uint64_t b = 0;
  memcpy(&b, (const uint8_t *)f->v + k * f->esize, f->esize);
  return b;
}

#endif
