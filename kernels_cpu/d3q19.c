#include "d3q19.h"

#include <stdbool.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

const int d3q19_c[D3Q19_Q][3] = {
    {0, 0, 0},
    {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1},
    {1, 1, 0}, {-1, -1, 0}, {1, -1, 0}, {-1, 1, 0},
    {1, 0, 1}, {-1, 0, -1}, {1, 0, -1}, {-1, 0, 1},
    {0, 1, 1}, {0, -1, -1}, {0, 1, -1}, {0, -1, 1},
};

const double d3q19_w[D3Q19_Q] = {
    1.0 / 3,
    1.0 / 18, 1.0 / 18, 1.0 / 18, 1.0 / 18, 1.0 / 18, 1.0 / 18,
    1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36,
    1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36,
};

double d3q19_omega_minus(double omega_plus, double lambda) {
  return 1.0 / (lambda / (1.0 / omega_plus - 0.5) + 0.5);
}

/* Cells per run of the stream-collide kernels: the run's two buffers stay in the L1
 * cache (2 x 19 x 64 x 8 B = 19 KiB in double precision). */
#ifndef D3Q19_CHUNK
#define D3Q19_CHUNK 64
#endif
#define D3Q19_ALIGNED _Alignas(64)

/* Stores of a run of post-collision cells: the run is contiguous in the field and
 * written whole, so where SSE2 is there (every x86-64) it goes out with nontemporal
 * stores, which skip reading the destination lines into the cache first (the field is
 * far larger than the caches, and the kernel reads it only in the next step). The same
 * values land in memory either way; d3q19_store_fence orders the stores before the
 * threads meet. */
#if defined(__SSE2__) && !defined(D3Q19_NO_STREAM)
static inline void d3q19_store_run_f64(double *restrict d, const double *restrict s, size_t m) {
  size_t j = 0;
  if (((uintptr_t)d & 15) != 0 && m > 0) d[j++] = s[0];
  for (; j + 2 <= m; j += 2) _mm_stream_pd(d + j, _mm_loadu_pd(s + j));
  if (j < m) d[j] = s[j];
}
static inline void d3q19_store_run_f32(float *restrict d, const float *restrict s, size_t m) {
  size_t j = 0;
  for (; j < m && ((uintptr_t)(d + j) & 15) != 0; ++j) d[j] = s[j];
  for (; j + 4 <= m; j += 4) _mm_stream_ps(d + j, _mm_loadu_ps(s + j));
  for (; j < m; ++j) d[j] = s[j];
}
static inline void d3q19_store_fence(void) { _mm_sfence(); }
#else
static inline void d3q19_store_run_f64(double *restrict d, const double *restrict s, size_t m) {
  memcpy(d, s, m * sizeof *d);
}
static inline void d3q19_store_run_f32(float *restrict d, const float *restrict s, size_t m) {
  memcpy(d, s, m * sizeof *d);
}
static inline void d3q19_store_fence(void) {}
#endif

#define REAL double
#define SFX f64
#include "d3q19_impl.h"
#undef REAL
#undef SFX

#define REAL float
#define SFX f32
#include "d3q19_impl.h"
#undef REAL
#undef SFX
