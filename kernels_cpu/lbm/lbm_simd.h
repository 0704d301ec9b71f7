/* lbm_simd.h: the memory helpers of the flow's CPU stream-collide kernels (private to
 * lbm_kernels_impl.h), beside the shared vectors and stores of simd.h: the portable AoS
 * path's runs, and on AVX-512 the gathers and register transposes of the AoS vector
 * path. Every function takes the lattice's Q as an argument and is inlined where Q is a
 * constant. */
#ifndef LBM_SIMD_H
#define LBM_SIMD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lattice_defs.h"
#include "simd.h"

#define LBM_ALIGNED _Alignas(64)

/* Cells per run of the portable AoS path: the run's two buffers stay in the L1 cache
 * (2 x 27 x 64 x 8 B = 27 KiB in double precision at most). */
#ifndef LBM_CHUNK
#define LBM_CHUNK 64
#endif

/* Square roots of the Smagorinsky collision (lbm_collide.h LBM_SQRT), correctly rounded:
 * one instruction per value or vector (the kernels are compiled with -fno-math-errno), the
 * same result in every lane, path and device. */
static inline double lbm_sqrt_f64(double v) { return __builtin_sqrt(v); }
static inline float lbm_sqrt_f32(float v) { return __builtin_sqrtf(v); }
static inline simd_vec_f64 lbm_vsqrt_f64(simd_vec_f64 v) {
  for (int l = 0; l < SIMD_VW_f64; ++l) v[l] = __builtin_sqrt(v[l]);
  return v;
}
static inline simd_vec_f32 lbm_vsqrt_f32(simd_vec_f32 v) {
  for (int l = 0; l < SIMD_VW_f32; ++l) v[l] = __builtin_sqrtf(v[l]);
  return v;
}

/* AoS vector path (AVX-512): runs of LBM_VW cells (one 64-byte vector per direction;
 * the last run of a row may be shorter, its missing lanes masked) are collided with the
 * vector types above. The Q pulled values of a run are gathers with stride Q; the Q
 * result vectors are transposed into the cell layout in registers (groups of 8 (double)
 * or 16 (float) directions as square transposes, the rest scattered) into a buffer of
 * Q cache lines of the field, and streamed out with nontemporal stores (partial lines
 * with masked ordinary stores). */
#if defined(__AVX512F__) && !defined(LBM_NO_SIMD)
#define LBM_AOS_SIMD 1

/* Lanes outside the mask m (cells past the end of the row) read nothing and hold 0. */
static inline simd_vec_f64 lbm_gather_f64(const double *b, unsigned m, int q) {
  const __m256i idx = _mm256_mullo_epi32(_mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0), _mm256_set1_epi32(q));
  return (simd_vec_f64)_mm512_mask_i32gather_pd(_mm512_setzero_pd(), (__mmask8)m, idx, b, 8);
}

static inline simd_vec_f32 lbm_gather_f32(const float *b, unsigned m, int q) {
  const __m512i idx = _mm512_mullo_epi32(
      _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi32(q));
  return (simd_vec_f32)_mm512_mask_i32gather_ps(_mm512_setzero_ps(), (__mmask16)m, idx, b, 4);
}

/* n bytes (a multiple of 4, at most 64 q) from the 64-byte aligned buffer s to d (4-byte
 * aligned): whole lines of d with nontemporal stores, partial lines with masked stores. */
static inline void lbm_stream_run(void *restrict d, const void *restrict s, size_t n) {
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

/* Asks for the q cache lines of a run (64 q bytes from address a) ahead of their use;
 * an address, not a pointer, as it may lie past the field (a prefetch never faults). */
static inline void lbm_prefetch_run(uintptr_t a, int q) {
  for (int l = 0; l < q; ++l) _mm_prefetch((const char *)(a + 64u * (unsigned)l), _MM_HINT_T0);
}

/* o[i] lane x = direction i of cell x -> d: the first n of 8 cells of q doubles. */
static inline void lbm_put_f64(const simd_vec_f64 *o, double *restrict d, int n, int q) {
  LBM_ALIGNED double cells[8 * LATTICE_MAX_Q];
  const __m512i a = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
  const __m512i b = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  const __m512i c = _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0);
  const __m512i e = _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4);
  int g = 0;
  for (; g + 8 <= q; g += 8) {
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
      _mm512_storeu_pd(cells + q * x + g, _mm512_permutex2var_pd(u[x], c, u[4 + x]));
      _mm512_storeu_pd(cells + q * (x + 4) + g, _mm512_permutex2var_pd(u[x], e, u[4 + x]));
    }
  }
  const __m256i idx = _mm256_mullo_epi32(_mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0), _mm256_set1_epi32(q));
  for (int i = g; i < q; ++i) _mm512_i32scatter_pd(cells + i, idx, (__m512d)o[i], 8);
  lbm_stream_run(d, cells, (size_t)n * (size_t)q * sizeof(double));
}

/* o[i] lane x = direction i of cell x -> d: the first n of 16 cells of q floats. */
static inline void lbm_put_f32(const simd_vec_f32 *o, float *restrict d, int n, int q) {
  LBM_ALIGNED float cells[16 * LATTICE_MAX_Q];
  int g = 0;
  if (q >= 16) {
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
      _mm512_storeu_ps(cells + q * j, _mm512_shuffle_f32x4(v01, w01, 0x88));
      _mm512_storeu_ps(cells + q * (4 + j), _mm512_shuffle_f32x4(v01, w01, 0xDD));
      _mm512_storeu_ps(cells + q * (8 + j), _mm512_shuffle_f32x4(v23, w23, 0x88));
      _mm512_storeu_ps(cells + q * (12 + j), _mm512_shuffle_f32x4(v23, w23, 0xDD));
    }
    g = 16;
  }
  const __m512i idx = _mm512_mullo_epi32(
      _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi32(q));
  for (int i = g; i < q; ++i) _mm512_i32scatter_ps(cells + i, idx, (__m512)o[i], 4);
  lbm_stream_run(d, cells, (size_t)n * (size_t)q * sizeof(float));
}
#endif

#endif
