/* scalar_cell.h: the arithmetic of the passive scalar, one text compiled as C for CPU
 * blocks (scalar_cpu.c) and as OpenCL C for GPU blocks (scalar.cl), with contraction into
 * FMA off on both sides, so that both give the same bits.
 *
 * In OpenCL C the build define SCALAR_DOUBLE (0 or 1) picks SCALAR_REAL. In C the includer
 * defines SCALAR_REAL (float or double) and SCALAR_FN(name), the name of this
 * instantiation's functions, and may include the file once per type.
 *
 * A finite-volume step of dc/dt + div(u c) = D lap c on the cells: through the face
 * between a cell a and the next cell b along an axis goes the flux
 * J = u_f c_donor - D (c_b - c_a), u_f = (u_a + u_b) / 2 the face velocity and c_donor the
 * upwind cell's value (first-order upwind); a cell's new value is c minus the sum over
 * the axes of J(+face) - J(-face). Both cells of a face compute its flux from the same
 * values in the same order, so what leaves one arrives in the other bit for bit and the
 * total changes by round-off only. Stable for sum_a |u_a| + 2 d D <= 1 (d axes). */
#ifdef __OPENCL_VERSION__
#pragma OPENCL FP_CONTRACT OFF
#if SCALAR_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define SCALAR_REAL double
#else
#define SCALAR_REAL float
#endif
#define SCALAR_FN(name) name
#endif

/* The flux from cell a to the next cell b through their face. */
static inline SCALAR_REAL SCALAR_FN(scalar_flux)(const SCALAR_REAL ca, const SCALAR_REAL cb,
                                                 const SCALAR_REAL ua, const SCALAR_REAL ub,
                                                 const SCALAR_REAL d) {
  const SCALAR_REAL uf = (ua + ub) * (SCALAR_REAL)0.5;
  return (uf > (SCALAR_REAL)0 ? uf * ca : uf * cb) - d * (cb - ca);
}

/* The new value of a cell into OUT: over the ND axes, C_AT(a, s) the value and U_AT(a, s)
 * the velocity component a of the cell s = -1, 0, 1 cells along axis a; LO[a] and HI[a]
 * nonzero where the cell's face at -a or +a is closed (a wall of the domain: no flux). */
#define SCALAR_CELL(ND, C_AT, U_AT, LO, HI, D, OUT)                                        \
  do {                                                                                     \
    SCALAR_REAL net_ = (SCALAR_REAL)0;                                                     \
    for (int a_ = 0; a_ < (ND); ++a_) {                                                    \
      const SCALAR_REAL fp_ = (HI)[a_] ? (SCALAR_REAL)0                                    \
                                       : SCALAR_FN(scalar_flux)(C_AT(a_, 0), C_AT(a_, 1),  \
                                                                U_AT(a_, 0), U_AT(a_, 1), D); \
      const SCALAR_REAL fm_ = (LO)[a_] ? (SCALAR_REAL)0                                    \
                                       : SCALAR_FN(scalar_flux)(C_AT(a_, -1), C_AT(a_, 0), \
                                                                U_AT(a_, -1), U_AT(a_, 0), D); \
      net_ = net_ + (fp_ - fm_);                                                           \
    }                                                                                      \
    (OUT) = C_AT(0, 0) - net_;                                                             \
  } while (0)
