/* store16_simd: store16.h's conversions for the 64-byte float vectors of simd.h (16
 * values per vector), C only. */
#ifndef STORE16_SIMD_H
#define STORE16_SIMD_H

#include <stdint.h>
#include <string.h>

#include "simd.h"
#include "store16.h"

/* 16 values of the format (M, B, ieee) to a vector of floats and back, with GCC's vector
 * operations: store16.h's scalar functions lane by lane, without branches (the cases as
 * masks). */
typedef uint32_t store16_vu32 __attribute__((vector_size(64)));
typedef uint16_t store16_vu16 __attribute__((vector_size(32)));
typedef float store16_vf8 __attribute__((vector_size(32)));
#define STORE16_SEL(mask, a, b) (((mask) & (a)) | (~(mask) & (b)))

static inline store16_vu16 store16_vencode_(simd_vec_f32 x, int m, int b, int ieee) {
  store16_vu32 u, r;
  memcpy(&u, &x, sizeof u);
  const store16_vu32 a = u & 0x7fffffffu, sign = (u >> 16) & 0x8000u;
  const uint32_t top = ieee ? (31u << m) : 0x7fffu;
  /* subnormal or zero */
  const float magic = store16_float_((uint32_t)(151 - b - m) << 23);
  simd_vec_f32 af;
  memcpy(&af, &a, sizeof af);
  af = af + magic;
  store16_vu32 sub;
  memcpy(&sub, &af, sizeof sub);
  sub -= store16_bits_(magic);
  /* normal */
  const uint32_t sh = 23u - (uint32_t)m;
  const store16_vu32 t = (a + ((1u << (sh - 1)) - 1u) + ((a >> sh) & 1u)) >> sh;
  const store16_vu32 nor = t - ((uint32_t)(127 - b) << m);
  const store16_vu32 big = (store16_vu32)(nor > top) | (store16_vu32)(a >= 0x7f800000u);
  r = STORE16_SEL(big, (store16_vu32){0} + top, nor);
  r = STORE16_SEL((store16_vu32)(a < ((uint32_t)(128 - b) << 23)), sub, r);
  if (ieee) /* NaN (C: saturated with infinity above) */
    r = STORE16_SEL((store16_vu32)(a > 0x7f800000u),
                    (store16_vu32){0} + (top | (1u << (m - 1))), r);
  return __builtin_convertvector(sign | r, store16_vu16);
}

static inline simd_vec_f32 store16_vdecode_(store16_vu16 h16, int m, int b, int ieee) {
  const store16_vu32 h = __builtin_convertvector(h16, store16_vu32);
  const store16_vu32 sign = (h & 0x8000u) << 16, e = (h & 0x7fffu) >> m;
  const store16_vu32 man = h & ((1u << m) - 1u);
  const simd_vec_f32 subf = __builtin_convertvector(man, simd_vec_f32) *
                            store16_float_((uint32_t)(128 - b - m) << 23);
  store16_vu32 sub;
  memcpy(&sub, &subf, sizeof sub);
  const uint32_t emax = (1u << (15 - m)) - 1u;
  const store16_vu32 nor = ((e + (uint32_t)(127 - b)) << 23) | (man << (23 - m));
  const store16_vu32 inf = 0x7f800000u | (man << (23 - m));
  store16_vu32 r = STORE16_SEL((store16_vu32)(e == 0), sub, nor);
  if (ieee) r = STORE16_SEL((store16_vu32)(e == emax), inf, r);
  r |= sign;
  simd_vec_f32 f;
  memcpy(&f, &r, sizeof f);
  return f;
}

/* Format S: by F16C or AVX-512 where the build has them (the same bits). */
static inline simd_vec_f32 store16_s_vload(const store16_u16 *p) {
#if defined(__AVX512F__)
  const __m512 v = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
  return (simd_vec_f32)v * 0x1p-15f;
#elif defined(__F16C__)
  const __m256 lo = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
  const __m256 hi = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + 8)));
  const simd_vec_f32 v = __builtin_shufflevector((store16_vf8)lo, (store16_vf8)hi, SIMD_L4(0),
                                                 SIMD_L4(4), SIMD_L4(8), SIMD_L4(12));
  return v * 0x1p-15f;
#else
  store16_vu16 h;
  memcpy(&h, p, sizeof h);
  return store16_vdecode_(h, STORE16_S_M, STORE16_S_B, 1);
#endif
}
static inline store16_vu16 store16_s_vencode(simd_vec_f32 v) {
#if defined(__AVX512F__)
  const __m256i h =
      _mm512_cvtps_ph((__m512)(v * 0x1p15f), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return (store16_vu16)h;
#elif defined(__F16C__)
  const simd_vec_f32 s = v * 0x1p15f;
  const __m128i lo =
      _mm256_cvtps_ph(SIMD_HALF(s, __m256, SIMD_L4(0), SIMD_L4(4)), _MM_FROUND_TO_NEAREST_INT);
  const __m128i hi =
      _mm256_cvtps_ph(SIMD_HALF(s, __m256, SIMD_L4(8), SIMD_L4(12)), _MM_FROUND_TO_NEAREST_INT);
  return (store16_vu16)_mm256_set_m128i(hi, lo);
#else
  return store16_vencode_(v, STORE16_S_M, STORE16_S_B, 1);
#endif
}
static inline simd_vec_f32 store16_c_vload(const store16_u16 *p) {
  store16_vu16 h;
  memcpy(&h, p, sizeof h);
  return store16_vdecode_(h, STORE16_C_M, STORE16_C_B, 0);
}
static inline store16_vu16 store16_c_vencode(simd_vec_f32 v) {
  return store16_vencode_(v, STORE16_C_M, STORE16_C_B, 0);
}

/* 16 encoded values to p, 32-byte aligned: nontemporal where the ISA has it. */
static inline void store16_vstore(store16_u16 *p, store16_vu16 h) {
#if defined(__AVX__) && !defined(SIMD_NO_STREAM)
  _mm256_stream_si256((__m256i *)p, (__m256i)h);
#elif defined(__SSE2__) && !defined(SIMD_NO_STREAM)
  _mm_stream_si128((__m128i *)p, SIMD_HALF(h, __m128i, SIMD_L4(0), SIMD_L4(4)));
  _mm_stream_si128((__m128i *)(p + 8), SIMD_HALF(h, __m128i, SIMD_L4(8), SIMD_L4(12)));
#else
  memcpy(p, &h, sizeof h);
#endif
}

/* Runs of such vectors out as whole 64-byte lines: nontemporal stores of half lines from
 * many streams at once (one per direction of a lattice) overflow the write-combining
 * buffers, which then write each half line on its own (SP with 8 floats per vector ran at
 * 17% of the bound; docs/performance.md). store16_vstore_line keeps a vector that starts
 * a line in *hold and writes it with the next one, which completes the line (after: 1
 * where the run's previous vector was that one, at p - 16); a vector that completes a
 * line without its first half in hand goes out alone. store16_vflush: the run's last
 * vector, at p, if it started a line, goes out alone. */
static inline void store16_vstore_line(store16_u16 *p, store16_vu16 *hold, store16_vu16 h,
                                       int after) {
  if (((uintptr_t)p & 63) == 0) {
    *hold = h;
    return;
  }
  if (!after) {
    store16_vstore(p, h);
    return;
  }
#if defined(__AVX512F__) && !defined(SIMD_NO_STREAM)
  _mm512_stream_si512((void *)(p - 16),
                      _mm512_inserti64x4(_mm512_castsi256_si512((__m256i)*hold), (__m256i)h, 1));
#else
  store16_vstore(p - 16, *hold);
  store16_vstore(p, h);
#endif
}
static inline void store16_vflush(store16_u16 *p, const store16_vu16 *hold) {
  if (((uintptr_t)p & 63) == 0) store16_vstore(p, *hold);
}

#endif
