/* d3q19_collide.h: the D3Q19 collision, written once for every device. The CPU kernels
 * (d3q19_impl.h, scalar and vector) and the OpenCL kernels (kernels_gpu/d3q19.cl, whose
 * program source is this file followed by the .cl file) expand these macros, so every
 * device evaluates the same expressions in the same order; with floating-point
 * contraction off on both sides the results are bitwise equal.
 *
 * Macros only, C99 and OpenCL C. At the point of expansion the user defines:
 *   REAL          the storage precision (float or double)
 *   LBM_T         the type of one cell's values (REAL, or a vector of REAL whose lanes
 *                 are cells)
 *   LBM_ZERO      a zero of type LBM_T
 *   LBM_LD(I)     the value pulled into direction I of the cell
 *   LBM_ST(I, V)  stores V as the post-collision value of direction I
 *   k             a pointer to the constants, a struct of D3Q19_CONSTS_FIELDS(REAL)
 * and expands LBM_COLLIDE_CONSTS; then LBM_COLLIDE_CELL(TRT_, FORCE_) with literal 0/1.
 */
#ifndef D3Q19_COLLIDE_H
#define D3Q19_COLLIDE_H

/* The collision's constants in the storage precision, computed on the host in the order
 * of the equations in d3q19.h:
 *   w[i], wr3[i] = 3 w_i rho0, cf[i] = c_i.F, cf3[i] = 3 c_i.F,
 *   spw[i] = (1 - omega_plus/2) w_i, smw3cf[i] = (1 - omega_minus/2) w_i 3 c_i.F,
 *   rho0, 1/rho0, omega_plus, omega_minus (= omega_plus for SRT), F, F/2. */
#define D3Q19_CONSTS_FIELDS(T)                                                           \
  T w[19], wr3[19];                                                                      \
  T cf[19], cf3[19], spw[19], smw3cf[19];                                                \
  T rho0, inv_rho0, op, om, fx, fy, fz, hfx, hfy, hfz;
#define D3Q19_CONSTS_COUNT (6 * 19 + 10)

/* The moments of the pulled values: explicit sums in direction order. FORCE_ is a
 * literal, so the force terms vanish at compile time. The pair (i, i+1) shares c_i.u,
 * which is exactly the negative for i+1. */
#define LBM_MOMENTS(FORCE_)                                                              \
  const LBM_T f0 = LBM_LD(0), f1 = LBM_LD(1), f2 = LBM_LD(2), f3 = LBM_LD(3), f4 = LBM_LD(4),  \
             f5 = LBM_LD(5), f6 = LBM_LD(6), f7 = LBM_LD(7), f8 = LBM_LD(8), f9 = LBM_LD(9),  \
             f10 = LBM_LD(10), f11 = LBM_LD(11), f12 = LBM_LD(12), f13 = LBM_LD(13),         \
             f14 = LBM_LD(14), f15 = LBM_LD(15), f16 = LBM_LD(16), f17 = LBM_LD(17),         \
             f18 = LBM_LD(18);                                                            \
  const LBM_T rho = f0 + f1 + f2 + f3 + f4 + f5 + f6 + f7 + f8 + f9 + f10 + f11 + f12 +   \
                   f13 + f14 + f15 + f16 + f17 + f18;                                    \
  const LBM_T jx = f1 - f2 + f7 - f8 + f9 - f10 + f11 - f12 + f13 - f14;                  \
  const LBM_T jy = f3 - f4 + f7 - f8 - f9 + f10 + f15 - f16 + f17 - f18;                  \
  const LBM_T jz = f5 - f6 + f11 - f12 - f13 + f14 + f15 - f16 - f17 + f18;               \
  const LBM_T ux = (FORCE_ ? jx + hfx : jx) * inv_rho0;                                   \
  const LBM_T uy = (FORCE_ ? jy + hfy : jy) * inv_rho0;                                   \
  const LBM_T uz = (FORCE_ ? jz + hfz : jz) * inv_rho0;                                   \
  const LBM_T usq = (REAL)1.5 * (ux * ux + uy * uy + uz * uz);                            \
  const LBM_T uf3 = FORCE_ ? (REAL)3 * (ux * fx + uy * fy + uz * fz) : LBM_ZERO;           \
  (void)uf3

/* SRT, one pair: f_eq = w (rho + rho0 ((3 cu + 4.5 cu cu) - usq)) with cu -> -cu for k. */
#define LBM_SRT_PAIR(FORCE_, I, K, CU)                                                   \
  do {                                                                                   \
    const LBM_T cu = (CU);                                                                \
    const LBM_T lin = (REAL)3 * cu, sym = (REAL)4.5 * cu * cu;                            \
    const LBM_T feqi = k->w[I] * (rho + rho0 * (lin + sym - usq));                        \
    const LBM_T feqk = k->w[I] * (rho + rho0 * (sym - lin - usq));                        \
    LBM_T oi = f##I - op * (f##I - feqi), ok = f##K - op * (f##K - feqk);                 \
    if (FORCE_) {                                                                        \
      const LBM_T a9 = (REAL)9 * cu * k->cf[I];                                           \
      oi = oi + k->spw[I] * (k->cf3[I] + a9 - uf3);                                      \
      ok = ok + k->spw[I] * (k->cf3[K] + a9 - uf3);                                      \
    }                                                                                    \
    LBM_ST(I, oi);                                                                       \
    LBM_ST(K, ok);                                                                       \
  } while (0)

/* TRT, one pair: symmetric and antisymmetric parts relax with omega_plus, omega_minus. */
#define LBM_TRT_PAIR(FORCE_, I, K, CU)                                                   \
  do {                                                                                   \
    const LBM_T cu = (CU);                                                                \
    const LBM_T eqp = k->w[I] * (rho + rho0 * ((REAL)4.5 * cu * cu - usq));               \
    const LBM_T eqm = k->wr3[I] * cu;                                                     \
    const LBM_T fp = (REAL)0.5 * (f##I + f##K), fm = (REAL)0.5 * (f##I - f##K);           \
    const LBM_T dp = op * (fp - eqp), dm = om * (fm - eqm);                               \
    if (FORCE_) {                                                                        \
      const LBM_T sp_ = k->spw[I] * ((REAL)9 * cu * k->cf[I] - uf3);                      \
      LBM_ST(I, f##I - dp - dm + sp_ + k->smw3cf[I]);                                   \
      LBM_ST(K, f##K - dp + dm + sp_ - k->smw3cf[I]);                                   \
    } else {                                                                             \
      LBM_ST(I, f##I - dp - dm);                                                        \
      LBM_ST(K, f##K - dp + dm);                                                        \
    }                                                                                    \
  } while (0)

/* The nine pairs (i, inverse of i) with c_i.u written out for c_i. */
#define LBM_PAIRS(PAIR, FORCE_)                                                          \
  PAIR(FORCE_, 1, 2, ux);                                                                \
  PAIR(FORCE_, 3, 4, uy);                                                                \
  PAIR(FORCE_, 5, 6, uz);                                                                \
  PAIR(FORCE_, 7, 8, ux + uy);                                                           \
  PAIR(FORCE_, 9, 10, ux - uy);                                                          \
  PAIR(FORCE_, 11, 12, ux + uz);                                                         \
  PAIR(FORCE_, 13, 14, ux - uz);                                                         \
  PAIR(FORCE_, 15, 16, uy + uz);                                                         \
  PAIR(FORCE_, 17, 18, uy - uz)

/* The collision of one cell, in the type LBM_T (REAL, or a vector of REAL whose lanes
 * are cells): the rest direction, then the nine pairs. */
#define LBM_COLLIDE_CELL(TRT_, FORCE_)                                                   \
  LBM_MOMENTS(FORCE_);                                                                   \
  /* rest: c_0.u = 0 */                                                                  \
  const LBM_T feq0 = k->w[0] * (rho - rho0 * usq);                                       \
  LBM_T o0 = f0 - op * (f0 - feq0);                                                      \
  if (FORCE_) o0 = o0 + k->spw[0] * -uf3;                                                \
  LBM_ST(0, o0);                                                                         \
  if (TRT_) {                                                                            \
    LBM_PAIRS(LBM_TRT_PAIR, FORCE_);                                                     \
  } else {                                                                               \
    LBM_PAIRS(LBM_SRT_PAIR, FORCE_);                                                     \
  }

#define LBM_COLLIDE_CONSTS                                                               \
  const REAL rho0 = k->rho0, inv_rho0 = k->inv_rho0, op = k->op, om = k->om;             \
  const REAL fx = k->fx, fy = k->fy, fz = k->fz, hfx = k->hfx, hfy = k->hfy,             \
             hfz = k->hfz;                                                               \
  (void)rho0, (void)inv_rho0, (void)op, (void)om, (void)fx, (void)fy, (void)fz, (void)hfx, \
      (void)hfy, (void)hfz


#endif
