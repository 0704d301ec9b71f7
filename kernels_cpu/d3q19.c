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

/* AVX-512 path: runs of D3Q19_VW cells (8 in double, 16 in single precision, one
 * 64-byte vector; the last run of a row may be shorter, its missing lanes masked) are
 * collided with GCC vector types. The 19 pulled values of a run are gathers with
 * stride 19; the 19 result vectors are transposed into the cell layout in registers
 * (16 directions as a square transpose, the last 3 scattered) into a 1216-byte buffer,
 * 19 cache lines of the field, and streamed out with nontemporal stores (partial lines
 * with masked ordinary stores). The vector code evaluates the same expressions, in the
 * same order, as the scalar code, so both give bitwise the same cells. */
#if defined(__AVX512F__) && !defined(D3Q19_NO_SIMD)
#include <immintrin.h>
#define D3Q19_SIMD 1
typedef double d3q19_vec_f64 __attribute__((vector_size(64)));
typedef float d3q19_vec_f32 __attribute__((vector_size(64)));
enum { D3Q19_VW_f64 = 8, D3Q19_VW_f32 = 16, D3Q19_RUN_BYTES = 8 * 19 * 8 };

/* Lanes outside the mask m (cells past the end of the row) read nothing and hold 0. */
static inline d3q19_vec_f64 d3q19_gather_f64(const double *b, unsigned m) {
  const __m256i idx = _mm256_set_epi32(7 * 19, 6 * 19, 5 * 19, 4 * 19, 3 * 19, 2 * 19, 19, 0);
  return (d3q19_vec_f64)_mm512_mask_i32gather_pd(_mm512_setzero_pd(), (__mmask8)m, idx, b, 8);
}

static inline d3q19_vec_f32 d3q19_gather_f32(const float *b, unsigned m) {
  const __m512i idx = _mm512_set_epi32(15 * 19, 14 * 19, 13 * 19, 12 * 19, 11 * 19, 10 * 19,
                                       9 * 19, 8 * 19, 7 * 19, 6 * 19, 5 * 19, 4 * 19, 3 * 19,
                                       2 * 19, 19, 0);
  return (d3q19_vec_f32)_mm512_mask_i32gather_ps(_mm512_setzero_ps(), (__mmask16)m, idx, b, 4);
}

/* n bytes (a multiple of 4, at most 1216) from the 64-byte aligned buffer s to d
 * (4-byte aligned): whole lines of d with nontemporal stores, partial lines with masked
 * stores. */
static inline void d3q19_stream_run(void *restrict d, const void *restrict s, size_t n) {
  char *dc = d;
  const char *sc = s;
  size_t j = (64 - ((uintptr_t)dc & 63)) & 63;
  if (j > n) j = n;
  if (j)
    _mm512_mask_storeu_epi32(dc, (__mmask16)((1u << (j / 4)) - 1), _mm512_load_si512(sc));
  for (; j + 64 <= n; j += 64)
    _mm512_stream_si512((void *)(dc + j), _mm512_loadu_si512(sc + j));
  if (j < n) {
    const __mmask16 m = (__mmask16)((1u << ((n - j) / 4)) - 1);
    _mm512_mask_storeu_epi32(dc + j, m, _mm512_maskz_loadu_epi32(m, sc + j));
  }
}

/* Asks for the 19 cache lines of a run (1216 bytes from address a) ahead of their use;
 * an address, not a pointer, as it may lie past the field (a prefetch never faults). */
static inline void d3q19_prefetch_run(uintptr_t a) {
  for (int l = 0; l < 19; ++l) _mm_prefetch((const char *)(a + 64u * (unsigned)l), _MM_HINT_T0);
}

/* o[i] lane x = direction i of cell x -> d: the first n of 8 cells of 19 doubles. */
static inline void d3q19_put_f64(const d3q19_vec_f64 o[D3Q19_Q], double *restrict d, int n) {
  _Alignas(64) double cells[8 * D3Q19_Q];
  const __m512i a = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
  const __m512i b = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  const __m512i c = _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0);
  const __m512i e = _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4);
  for (int g = 0; g < 16; g += 8) {
    const __m512d *r = (const __m512d *)(o + g);
    /* t: pairs of directions interleaved per cell; u: 4 directions of cells x | x+4 */
    __m512d t0 = _mm512_unpacklo_pd(r[0], r[1]), t1 = _mm512_unpackhi_pd(r[0], r[1]);
    __m512d t2 = _mm512_unpacklo_pd(r[2], r[3]), t3 = _mm512_unpackhi_pd(r[2], r[3]);
    __m512d t4 = _mm512_unpacklo_pd(r[4], r[5]), t5 = _mm512_unpackhi_pd(r[4], r[5]);
    __m512d t6 = _mm512_unpacklo_pd(r[6], r[7]), t7 = _mm512_unpackhi_pd(r[6], r[7]);
    __m512d u[8] = {_mm512_permutex2var_pd(t0, a, t2), _mm512_permutex2var_pd(t1, a, t3),
                    _mm512_permutex2var_pd(t0, b, t2), _mm512_permutex2var_pd(t1, b, t3),
                    _mm512_permutex2var_pd(t4, a, t6), _mm512_permutex2var_pd(t5, a, t7),
                    _mm512_permutex2var_pd(t4, b, t6), _mm512_permutex2var_pd(t5, b, t7)};
    for (int x = 0; x < 4; ++x) {
      _mm512_storeu_pd(cells + 19 * x + g, _mm512_permutex2var_pd(u[x], c, u[4 + x]));
      _mm512_storeu_pd(cells + 19 * (x + 4) + g, _mm512_permutex2var_pd(u[x], e, u[4 + x]));
    }
  }
  const __m256i idx = _mm256_set_epi32(7 * 19, 6 * 19, 5 * 19, 4 * 19, 3 * 19, 2 * 19, 19, 0);
  for (int i = 16; i < D3Q19_Q; ++i) _mm512_i32scatter_pd(cells + i, idx, (__m512d)o[i], 8);
  d3q19_stream_run(d, cells, (size_t)n * D3Q19_Q * sizeof(double));
}

/* o[i] lane x = direction i of cell x -> d: the first n of 16 cells of 19 floats. */
static inline void d3q19_put_f32(const d3q19_vec_f32 o[D3Q19_Q], float *restrict d, int n) {
  _Alignas(64) float cells[16 * D3Q19_Q];
  const __m512 *r = (const __m512 *)o;
  __m512 t[16], u[16];
  for (int k = 0; k < 16; k += 2) { /* per 128-bit lane: (a0 b0 a1 b1), (a2 b2 a3 b3) */
    t[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 16; k += 4) { /* lane L of u[k + j]: directions k..k+3 of cell 4L + j */
    u[k] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[k]), _mm512_castps_pd(t[k + 2])));
    u[k + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[k]), _mm512_castps_pd(t[k + 2])));
    u[k + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[k + 1]), _mm512_castps_pd(t[k + 3])));
    u[k + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[k + 1]), _mm512_castps_pd(t[k + 3])));
  }
  for (int j = 0; j < 4; ++j) {
    const __m512 v01 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x44);
    const __m512 w01 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x44);
    const __m512 v23 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xEE);
    const __m512 w23 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xEE);
    _mm512_storeu_ps(cells + 19 * j, _mm512_shuffle_f32x4(v01, w01, 0x88));
    _mm512_storeu_ps(cells + 19 * (4 + j), _mm512_shuffle_f32x4(v01, w01, 0xDD));
    _mm512_storeu_ps(cells + 19 * (8 + j), _mm512_shuffle_f32x4(v23, w23, 0x88));
    _mm512_storeu_ps(cells + 19 * (12 + j), _mm512_shuffle_f32x4(v23, w23, 0xDD));
  }
  const __m512i idx = _mm512_set_epi32(15 * 19, 14 * 19, 13 * 19, 12 * 19, 11 * 19, 10 * 19,
                                       9 * 19, 8 * 19, 7 * 19, 6 * 19, 5 * 19, 4 * 19, 3 * 19,
                                       2 * 19, 19, 0);
  for (int i = 16; i < D3Q19_Q; ++i) _mm512_i32scatter_ps(cells + i, idx, (__m512)o[i], 4);
  d3q19_stream_run(d, cells, (size_t)n * D3Q19_Q * sizeof(float));
}
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
