/* store16_simd: store16.h's conversions for the 64-byte float vectors of simd.h (16
 * values per vector), C only. */
#ifndef STORE16_SIMD_H
#define STORE16_SIMD_H

#include <stdint.h>
#include <string.h>

#include "simd.h"
#include "store16.h"

typedef uint16_t store16_vu16 __attribute__((vector_size(32)));
typedef float store16_vf8 __attribute__((vector_size(32)));

/* The conversions work on the widest vectors the build has natively (W lanes: 16 with
 * AVX-512, 8 with AVX2, else 4), W at a time: GCC lowers comparisons of wider generic
 * vectors into scalar code, lane by lane. Comparisons and conversions are on signed
 * lanes (every value compared fits in 31 bits), which every ISA has. */
#if defined(__AVX512F__)
#define STORE16_W 16
#elif defined(__AVX2__)
#define STORE16_W 8
#else
#define STORE16_W 4
#endif
typedef uint32_t store16_nu32 __attribute__((vector_size(4 * STORE16_W)));
typedef int32_t store16_ni32 __attribute__((vector_size(4 * STORE16_W)));
typedef float store16_nf32 __attribute__((vector_size(4 * STORE16_W)));
typedef uint16_t store16_nu16 __attribute__((vector_size(2 * STORE16_W)));
#define STORE16_SEL(mask, a, b) (((mask) & (a)) | (~(mask) & (b)))
#define STORE16_LT(x, c) ((store16_nu32)((store16_ni32)(x) < (int32_t)(c)))
#define STORE16_GT(x, c) ((store16_nu32)((store16_ni32)(x) > (int32_t)(c)))
#define STORE16_EQ(x, c) ((store16_nu32)((store16_ni32)(x) == (int32_t)(c)))

/* W floats to W codes of the format (M, B, ieee), as 32-bit lanes. */
static inline store16_nu32 store16_nencode_(store16_nf32 x, int m, int b, int ieee) {
  store16_nu32 u;
  memcpy(&u, &x, sizeof u);
  const store16_nu32 a = u & 0x7fffffffu, sign = (u >> 16) & 0x8000u;
  const uint32_t top = ieee ? (31u << m) : 0x7fffu;
  /* subnormal or zero */
  const float magic = store16_float_((uint32_t)(151 - b - m) << 23);
  store16_nf32 af;
  memcpy(&af, &a, sizeof af);
  af = af + magic;
  store16_nu32 sub;
  memcpy(&sub, &af, sizeof sub);
  sub -= store16_bits_(magic);
  /* normal */
  const uint32_t sh = 23u - (uint32_t)m;
  const store16_nu32 t = (a + ((1u << (sh - 1)) - 1u) + ((a >> sh) & 1u)) >> sh;
  const store16_nu32 nor = t - ((uint32_t)(127 - b) << m);
  const store16_nu32 big = STORE16_GT(nor, top) | STORE16_GT(a, 0x7f7fffff);
  store16_nu32 r = STORE16_SEL(big, (store16_nu32){0} + top, nor);
  r = STORE16_SEL(STORE16_LT(a, (uint32_t)(128 - b) << 23), sub, r);
  if (ieee) /* NaN (C: saturated with infinity above) */
    r = STORE16_SEL(STORE16_GT(a, 0x7f800000), (store16_nu32){0} + (top | (1u << (m - 1))), r);
  return sign | r;
}

/* W codes of the format (M, B, ieee) to floats. */
static inline store16_nf32 store16_ndecode_(store16_nu16 h16, int m, int b, int ieee) {
  const store16_nu32 h = __builtin_convertvector(h16, store16_nu32);
  const store16_nu32 sign = (h & 0x8000u) << 16, e = (h & 0x7fffu) >> m;
  const store16_nu32 man = h & ((1u << m) - 1u);
  const store16_nf32 subf = __builtin_convertvector((store16_ni32)man, store16_nf32) *
                            store16_float_((uint32_t)(128 - b - m) << 23);
  store16_nu32 sub;
  memcpy(&sub, &subf, sizeof sub);
  const uint32_t emax = (1u << (15 - m)) - 1u;
  const store16_nu32 nor = ((e + (uint32_t)(127 - b)) << 23) | (man << (23 - m));
  const store16_nu32 inf = 0x7f800000u | (man << (23 - m));
  store16_nu32 r = STORE16_SEL(STORE16_EQ(e, 0), sub, nor);
  if (ieee) r = STORE16_SEL(STORE16_EQ(e, emax), inf, r);
  r |= sign;
  store16_nf32 f;
  memcpy(&f, &r, sizeof f);
  return f;
}

#if STORE16_W < 16
/* Two vectors of 32-bit lanes (each below 2^16) narrowed into 2 W 16-bit values at out. */
static inline void store16_narrow2_(store16_nu32 lo, store16_nu32 hi, uint16_t *out) {
#if defined(__AVX2__)
  const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32((__m256i)lo, (__m256i)hi), 0xd8);
  memcpy(out, &p, sizeof p);
#elif defined(__SSE4_1__)
  const __m128i p = _mm_packus_epi32((__m128i)lo, (__m128i)hi);
  memcpy(out, &p, sizeof p);
#else
  const store16_nu16 l = __builtin_convertvector(lo, store16_nu16);
  const store16_nu16 h = __builtin_convertvector(hi, store16_nu16);
  memcpy(out, &l, sizeof l);
  memcpy(out + STORE16_W, &h, sizeof h);
#endif
}
#endif

/* 16 values of the format (M, B, ieee) to a vector of floats and back: store16.h's scalar
 * functions lane by lane, without branches (the cases as masks). */
static inline store16_vu16 store16_vencode_(simd_vec_f32 x, int m, int b, int ieee) {
#if STORE16_W == 16
  store16_nf32 a;
  memcpy(&a, &x, sizeof a);
  return __builtin_convertvector(store16_nencode_(a, m, b, ieee), store16_vu16);
#else
  float in[16];
  uint16_t out[16];
  memcpy(in, &x, sizeof in);
  for (int k = 0; k < 16; k += 2 * STORE16_W) {
    store16_nf32 a, c;
    memcpy(&a, in + k, sizeof a);
    memcpy(&c, in + k + STORE16_W, sizeof c);
    store16_narrow2_(store16_nencode_(a, m, b, ieee), store16_nencode_(c, m, b, ieee), out + k);
  }
  store16_vu16 h;
  memcpy(&h, out, sizeof h);
  return h;
#endif
}
static inline simd_vec_f32 store16_vdecode_(store16_vu16 h16, int m, int b, int ieee) {
  uint16_t in[16];
  float out[16];
  memcpy(in, &h16, sizeof in);
  for (int k = 0; k < 16; k += STORE16_W) {
    store16_nu16 h;
    memcpy(&h, in + k, sizeof h);
    const store16_nf32 f = store16_ndecode_(h, m, b, ieee);
    memcpy(out + k, &f, sizeof f);
  }
  simd_vec_f32 v;
  memcpy(&v, out, sizeof v);
  return v;
}

/* Without AVX-512 a 16-lane vector is two or four registers, and the conversions inlined
 * at every load and store of the kernels made their translation units compile 5 to 12
 * times longer (D3Q19 16 bits at x86-64-v2: 39-54 s against 4 s): there they are calls. */
#if defined(__AVX512F__)
#define STORE16_SOFT static inline
#else
#define STORE16_SOFT static __attribute__((noinline, unused))
#endif

/* Each format's software conversions, specialised (STORE16_SOFT: calls without
 * AVX-512). */
STORE16_SOFT store16_vu16 store16_s_vencode_soft(simd_vec_f32 x) {
  return store16_vencode_(x, STORE16_S_M, STORE16_S_B, 1);
}
STORE16_SOFT simd_vec_f32 store16_s_vdecode_soft(store16_vu16 h) {
  return store16_vdecode_(h, STORE16_S_M, STORE16_S_B, 1);
}
STORE16_SOFT store16_vu16 store16_c_vencode_soft(simd_vec_f32 x) {
  return store16_vencode_(x, STORE16_C_M, STORE16_C_B, 0);
}
STORE16_SOFT simd_vec_f32 store16_c_vdecode_soft(store16_vu16 h) {
  return store16_vdecode_(h, STORE16_C_M, STORE16_C_B, 0);
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
  return store16_s_vdecode_soft(h);
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
  return store16_s_vencode_soft(v);
#endif
}
static inline simd_vec_f32 store16_c_vload(const store16_u16 *p) {
  store16_vu16 h;
  memcpy(&h, p, sizeof h);
  return store16_c_vdecode_soft(h);
}
static inline store16_vu16 store16_c_vencode(simd_vec_f32 v) { return store16_c_vencode_soft(v); }

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
