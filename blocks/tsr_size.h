/* tsr_size: sizes multiplied and added with overflow checks.
 *
 * Cell counts and byte counts that size an allocation, a memory estimate, an MPI message
 * or an OpenCL buffer go through these, so that a product too large for its type
 * becomes an error that says so, not a wrapped-around small number (a short buffer) or a
 * garbage figure in a message. Each returns true when the exact result fits; otherwise
 * false with *out = SIZE_MAX (or INT_MAX), which no allocation can satisfy. */
#ifndef TSR_SIZE_H
#define TSR_SIZE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* *out = a * b. */
static inline bool tsr_mul_size(size_t a, size_t b, size_t *out) {
  if (__builtin_mul_overflow(a, b, out)) {
    *out = SIZE_MAX;
    return false;
  }
  return true;
}

/* *out = a + b. */
static inline bool tsr_add_size(size_t a, size_t b, size_t *out) {
  if (__builtin_add_overflow(a, b, out)) {
    *out = SIZE_MAX;
    return false;
  }
  return true;
}

/* *out = (n[0] + 2 ghost) (n[1] + 2 ghost) (n[2] + 2 gz): the cells of a box of n[3]
 * cells with layers of ghost cells on every side, gz of them along z (ghost 0: the box
 * alone). Negative extents count as 0. */
static inline bool tsr_box_cells_gz(const int n[3], int ghost, int gz, size_t *out) {
  size_t cells = 1;
  bool ok = true;
  for (int a = 0; a < 3; ++a) {
    int64_t e = (int64_t)n[a] + 2 * (int64_t)(a == 2 ? gz : ghost); /* no int overflow */
    ok = ok && tsr_mul_size(cells, e > 0 ? (size_t)e : 0, &cells);
  }
  if (!ok) *out = SIZE_MAX;
  else *out = cells;
  return ok;
}

/* The same with ghost layers of one width on every side. */
static inline bool tsr_box_cells(const int n[3], int ghost, size_t *out) {
  return tsr_box_cells_gz(n, ghost, ghost, out);
}

/* *out = v, for an MPI count (an int). */
static inline bool tsr_size_to_int(size_t v, int *out) {
  if (v > (size_t)INT_MAX) {
    *out = INT_MAX;
    return false;
  }
  *out = (int)v;
  return true;
}

#endif
