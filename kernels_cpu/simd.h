/* simd.h: the vector types and stores every model's CPU kernels share: runs of
 * nontemporal stores, 64-byte GCC vectors with their loads and whole-line nontemporal
 * stores on every x86-64 level (portable copies elsewhere). SIMD_NO_STREAM turns the
 * nontemporal stores into plain ones. */
#ifndef SIMD_H
#define SIMD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>


#if defined(__SSE2__)
#include <immintrin.h>
#endif

/* Stores of a run of post-collision values that is contiguous in the field and written
 * whole: where SSE2 is there (every x86-64) they go out with nontemporal stores, which
 * skip reading the destination lines into the cache first (the field is far larger
 * than the caches, and the kernel reads it only in the next step). The same values
 * land in memory either way; simd_store_fence orders the stores before the threads
 * meet. */
#if defined(__SSE2__) && !defined(SIMD_NO_STREAM)
#define SIMD_NONTEMPORAL 1
static inline void simd_store_run_f64(double *restrict d, const double *restrict s, size_t m) {
  size_t j = 0;
  if (((uintptr_t)d & 15) != 0 && m > 0) d[j++] = s[0];
  for (; j + 2 <= m; j += 2) _mm_stream_pd(d + j, _mm_loadu_pd(s + j));
  if (j < m) d[j] = s[j];
}
static inline void simd_store_run_f32(float *restrict d, const float *restrict s, size_t m) {
  size_t j = 0;
  for (; j < m && ((uintptr_t)(d + j) & 15) != 0; ++j) d[j] = s[j];
  for (; j + 4 <= m; j += 4) _mm_stream_ps(d + j, _mm_loadu_ps(s + j));
  for (; j < m; ++j) d[j] = s[j];
}
static inline void simd_store_fence(void) { _mm_sfence(); }
#else
#define SIMD_NONTEMPORAL 0
static inline void simd_store_run_f64(double *restrict d, const double *restrict s, size_t m) {
  memcpy(d, s, m * sizeof *d);
}
static inline void simd_store_run_f32(float *restrict d, const float *restrict s, size_t m) {
  memcpy(d, s, m * sizeof *d);
}
static inline void simd_store_fence(void) {}
#endif

/* The SoA vector path: vectors of 64 bytes, 8 doubles or 16 floats, on every level
 * (AVX-512: one register; AVX2: two; SSE: four), with GCC vector types. A vector is one
 * cache line of each direction, so that each nontemporal store completes a line: with 8
 * floats per vector (half lines) the 19 streams of D3Q19 overflow the write-combining
 * buffers, which then write half lines, and SP ran at 17% of the bound with AVX2
 * (docs/performance.md, "Other instruction sets"). */
#define SIMD_VBYTES_f32 64
#define SIMD_VBYTES_f64 64
typedef double simd_vec_f64 __attribute__((vector_size(SIMD_VBYTES_f64)));
typedef float simd_vec_f32 __attribute__((vector_size(SIMD_VBYTES_f32)));
enum { SIMD_VW_f64 = SIMD_VBYTES_f64 / 8, SIMD_VW_f32 = SIMD_VBYTES_f32 / 4 };

static inline simd_vec_f64 simd_vload_f64(const double *p) {
  simd_vec_f64 v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline simd_vec_f32 simd_vload_f32(const float *p) {
  simd_vec_f32 v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* A whole vector to an address aligned to 64 bytes: nontemporal stores of whole
 * registers where the ISA has them. The halves or quarters of a vector wider than a
 * register are taken with __builtin_shufflevector: GCC moves a cast or a lane-by-lane
 * copy of them through general registers and the stack (SP at 58% of the bound with
 * AVX2, against 81% with the shuffles). */
#define SIMD_HALF(V, T, ...) ((T)__builtin_shufflevector((V), (V), __VA_ARGS__))
#define SIMD_L4(o) o + 0, o + 1, o + 2, o + 3
#define SIMD_L2(o) o + 0, o + 1
#if defined(__AVX512F__) && !defined(SIMD_NO_STREAM)
static inline void simd_vstore_f64(double *d, simd_vec_f64 v) { _mm512_stream_pd(d, (__m512d)v); }
static inline void simd_vstore_f32(float *d, simd_vec_f32 v) { _mm512_stream_ps(d, (__m512)v); }
#elif defined(__AVX__) && !defined(SIMD_NO_STREAM)
static inline void simd_vstore_f64(double *d, simd_vec_f64 v) {
  _mm256_stream_pd(d, SIMD_HALF(v, __m256d, SIMD_L4(0)));
  _mm256_stream_pd(d + 4, SIMD_HALF(v, __m256d, SIMD_L4(4)));
}
static inline void simd_vstore_f32(float *d, simd_vec_f32 v) {
  _mm256_stream_ps(d, SIMD_HALF(v, __m256, SIMD_L4(0), SIMD_L4(4)));
  _mm256_stream_ps(d + 8, SIMD_HALF(v, __m256, SIMD_L4(8), SIMD_L4(12)));
}
#elif defined(__SSE2__) && !defined(SIMD_NO_STREAM)
static inline void simd_vstore_f64(double *d, simd_vec_f64 v) {
  _mm_stream_pd(d, SIMD_HALF(v, __m128d, SIMD_L2(0)));
  _mm_stream_pd(d + 2, SIMD_HALF(v, __m128d, SIMD_L2(2)));
  _mm_stream_pd(d + 4, SIMD_HALF(v, __m128d, SIMD_L2(4)));
  _mm_stream_pd(d + 6, SIMD_HALF(v, __m128d, SIMD_L2(6)));
}
static inline void simd_vstore_f32(float *d, simd_vec_f32 v) {
  _mm_stream_ps(d, SIMD_HALF(v, __m128, SIMD_L4(0)));
  _mm_stream_ps(d + 4, SIMD_HALF(v, __m128, SIMD_L4(4)));
  _mm_stream_ps(d + 8, SIMD_HALF(v, __m128, SIMD_L4(8)));
  _mm_stream_ps(d + 12, SIMD_HALF(v, __m128, SIMD_L4(12)));
}
#else
static inline void simd_vstore_f64(double *d, simd_vec_f64 v) { memcpy(d, &v, sizeof v); }
static inline void simd_vstore_f32(float *d, simd_vec_f32 v) { memcpy(d, &v, sizeof v); }
#endif

#endif
