/* store16.h: floats kept in 16 bits, for fields whose arithmetic is single precision and
 * whose storage is half of it (every model may use it). Two formats, both rounding to
 * nearest, ties to even:
 *   S ("fp16s"): IEEE 754 binary16 of x 2^15, i.e. 1 sign, 5 exponent and 10 mantissa
 *     bits with the bias 30 instead of 15: normal numbers from 2^-29 to 65504 2^-15
 *     (1.999), subnormal ones down to 2^-39, infinity and NaN as binary16 has them. Made
 *     for values near 0 such as the populations less their weight times rho0 (Lehmann et
 *     al., Phys. Rev. E 106, 015308, 2022, the FP16S of FluidX3D); converted by the
 *     hardware where it has binary16 conversions (x86 F16C and AVX-512; OpenCL's
 *     vload_half and vstore_half_rte), by the code below elsewhere: the same bits.
 *   C ("fp16c"): 1 sign, 4 exponent and 11 mantissa bits, bias 15: normal numbers from
 *     2^-14 to 2 - 2^-11, subnormal ones down to 2^-25, one more bit of precision than S
 *     and no infinity or NaN: values beyond the range saturate to the largest one (NaN
 *     to it too). The 16-bit format of the same paper (FP16C); converted by the code
 *     below on every device.
 * The scalar functions, C99 and OpenCL C (the OpenCL programs of models that store 16
 * bits include this file in their source); store16_simd.h has the vectors of simd.h. */
#ifndef STORE16_H
#define STORE16_H

#ifdef __OPENCL_VERSION__
typedef uint store16_u32;
typedef ushort store16_u16;
#define STORE16_BITS(f) as_uint(f)
#define STORE16_FLOAT(u) as_float(u)
#define STORE16_INLINE static inline
#else
#include <stdint.h>
#include <string.h>
typedef uint32_t store16_u32;
typedef uint16_t store16_u16;
static inline store16_u32 store16_bits_(float f) {
  store16_u32 u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static inline float store16_float_(store16_u32 u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
#define STORE16_BITS(f) store16_bits_(f)
#define STORE16_FLOAT(u) store16_float_(u)
#define STORE16_INLINE static inline
#endif

/* The formats: mantissa bits M, bias B, and whether the largest exponent field is
 * infinity and NaN (S) or finite (C). */
#define STORE16_S_M 10
#define STORE16_S_B 30
#define STORE16_C_M 11
#define STORE16_C_B 15

/* x into the format (M, B; ieee 1: S's infinity and NaN, 0: C's saturation).
 * Normal results: the float's exponent and its top M mantissa bits, rounded to nearest
 * even by adding just under half a unit plus the kept last bit (a carry moves into the
 * exponent, as it should). Subnormal results (|x| below 2^(1 - B)): |x| added to the
 * float 2^(24 - B - M), whose unit in the last place is the format's smallest
 * subnormal, so that the float addition does the rounding; the difference of the bits
 * counts units. */
STORE16_INLINE store16_u16 store16_encode_(float x, int m, int b, int ieee) {
  const store16_u32 u = STORE16_BITS(x), a = u & 0x7fffffffu, sign = (u >> 16) & 0x8000u;
  const store16_u32 top = ieee ? (31u << m) : 0x7fffu; /* infinity, or the largest */
  store16_u32 r;
  if (a > 0x7f800000u) r = ieee ? top | (1u << (m - 1)) : top; /* NaN */
  else if (a < (store16_u32)(128 - b) << 23) {                   /* subnormal or zero */
    const float magic = STORE16_FLOAT((store16_u32)(151 - b - m) << 23);
    r = STORE16_BITS(STORE16_FLOAT(a) + magic) - STORE16_BITS(magic);
  } else {
    const store16_u32 sh = 23u - (store16_u32)m;
    const store16_u32 t = (a + ((1u << (sh - 1)) - 1u) + ((a >> sh) & 1u)) >> sh;
    const store16_u32 bias = (store16_u32)(127 - b) << m;
    r = t - bias > top || a >= 0x7f800000u ? top : t - bias;
  }
  return (store16_u16)(sign | r);
}

/* The float of h in the format (M, B, ieee). */
STORE16_INLINE float store16_decode_(store16_u16 h, int m, int b, int ieee) {
  const store16_u32 sign = ((store16_u32)h & 0x8000u) << 16, e = ((store16_u32)h & 0x7fffu) >> m;
  const store16_u32 man = (store16_u32)h & ((1u << m) - 1u);
  if (e == 0) { /* subnormal: man units of 2^(1 - B - M), exact in a float */
    const float v = (float)man * STORE16_FLOAT((store16_u32)(128 - b - m) << 23);
    return STORE16_FLOAT(STORE16_BITS(v) | sign);
  }
  if (ieee && e == (1u << (15 - m)) - 1u) /* infinity or NaN */
    return STORE16_FLOAT(sign | 0x7f800000u | (man << (23 - m)));
  return STORE16_FLOAT(sign | ((e + (store16_u32)(127 - b)) << 23) | (man << (23 - m)));
}

STORE16_INLINE store16_u16 store16_s_encode(float x) {
  return store16_encode_(x, STORE16_S_M, STORE16_S_B, 1);
}
STORE16_INLINE float store16_s_decode(store16_u16 h) {
  return store16_decode_(h, STORE16_S_M, STORE16_S_B, 1);
}
STORE16_INLINE store16_u16 store16_c_encode(float x) {
  return store16_encode_(x, STORE16_C_M, STORE16_C_B, 0);
}
STORE16_INLINE float store16_c_decode(store16_u16 h) {
  return store16_decode_(h, STORE16_C_M, STORE16_C_B, 0);
}

#endif
