/* shan_chen_kernels.h: the arithmetic of the Shan-Chen model, one text compiled as C for
 * CPU blocks and as OpenCL C for GPU blocks (shan_chen.cl), so that both give bitwise the
 * same values with contraction into FMA off on both sides.
 *
 * In OpenCL C the build define SC_DOUBLE (0 or 1) picks the storage type SC_REAL. In C
 * the includer defines SC_REAL (float or double), SC_FLOOR and SC_LDEXP (floor and ldexp
 * of that type) and SC_FN(name) (the name of this instantiation's functions), and may
 * include the file once per type.
 *
 * psi(rho) = rho_psi (1 - exp(-rho / rho_psi)) (Shan & Chen, Phys. Rev. E 49, 2941
 * (1994)); the exponential is our own (sc_exp: Cody-Waite reduction to |r| <= ln2/2 and
 * the Taylor polynomial of degree 12, relative error below 2e-16), because the C library's
 * exp and the OpenCL built-in may differ in the last bit. Every constant is a
 * hexadecimal literal: the same double on both sides, rounded once to float in single
 * precision (a decimal literal may round twice in C and once in OpenCL C). The force on a cell is
 * F = -G psi(x) sum_i w_i psi(x + c_i) c_i over the stencil's directions. */
#ifdef __OPENCL_VERSION__
#pragma OPENCL FP_CONTRACT OFF
#if SC_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define SC_REAL double
#else
#define SC_REAL float
#endif
#define SC_FLOOR floor
#define SC_LDEXP ldexp
#define SC_FN(name) name
#endif

static inline SC_REAL SC_FN(sc_exp)(const SC_REAL x) {
  /* x = k ln2 + r; ln2 = hi + lo with hi short enough that k hi is exact for |k| < 2^10 */
  const SC_REAL k = SC_FLOOR(x * (SC_REAL)0x1.71547652b82fep+0 + (SC_REAL)0.5);
  const SC_REAL r = (x - k * (SC_REAL)0x1.62e4000000000p-1) - k * (SC_REAL)0x1.7f7d1cf780000p-20;
  SC_REAL p = (SC_REAL)0x1.1eed8eff8d898p-29; /* 1/12! */
  p = p * r + (SC_REAL)0x1.ae64567f544e4p-26; /* 1/11! */
  p = p * r + (SC_REAL)0x1.27e4fb7789f5cp-22; /* 1/10! */
  p = p * r + (SC_REAL)0x1.71de3a556c734p-19; /* 1/9! */
  p = p * r + (SC_REAL)0x1.a01a01a01a01ap-16; /* 1/8! */
  p = p * r + (SC_REAL)0x1.a01a01a01a01ap-13; /* 1/7! */
  p = p * r + (SC_REAL)0x1.6c16c16c16c17p-10; /* 1/6! */
  p = p * r + (SC_REAL)0x1.1111111111111p-7; /* 1/5! */
  p = p * r + (SC_REAL)0x1.5555555555555p-5; /* 1/4! */
  p = p * r + (SC_REAL)0x1.5555555555555p-3; /* 1/3! */
  p = p * r + (SC_REAL)0.5;
  p = p * r + (SC_REAL)1;
  p = p * r + (SC_REAL)1;
  return SC_LDEXP(p, (int)k);
}

/* psi of a density; inv_rho_psi = 1 / rho_psi rounded to SC_REAL (no division, which
 * OpenCL need not round correctly in single precision). */
static inline SC_REAL SC_FN(sc_psi)(const SC_REAL rho, const SC_REAL rho_psi,
                                    const SC_REAL inv_rho_psi) {
  return rho_psi * ((SC_REAL)1 - SC_FN(sc_exp)(-(rho * inv_rho_psi)));
}

/* The force of one cell: W, CX, CY, CZ the stencil's tables (SC_REAL weights, int
 * vectors) of Q directions, PSI_AT(i) psi of the neighbour along c_i, psi_c the cell's,
 * g the interaction strength; FX, FY, FZ are assigned. */
#ifndef SC_FORCE_CELL
#define SC_FORCE_CELL(Q, W, CX, CY, CZ, PSI_AT, psi_c, g, FX, FY, FZ)                     \
  do {                                                                                   \
    SC_REAL sx_ = (SC_REAL)0, sy_ = (SC_REAL)0, sz_ = (SC_REAL)0;                        \
    for (int i_ = 1; i_ < (Q); ++i_) {                                                   \
      const SC_REAL t_ = (W)[i_] * (PSI_AT(i_));                                          \
      sx_ = sx_ + t_ * (SC_REAL)(CX)[i_];                                                 \
      sy_ = sy_ + t_ * (SC_REAL)(CY)[i_];                                                 \
      sz_ = sz_ + t_ * (SC_REAL)(CZ)[i_];                                                 \
    }                                                                                    \
    const SC_REAL gp_ = -((g) * (psi_c));                                                 \
    FX = gp_ * sx_;                                                                      \
    FY = gp_ * sy_;                                                                      \
    FZ = gp_ * sz_;                                                                      \
  } while (0)
#endif
