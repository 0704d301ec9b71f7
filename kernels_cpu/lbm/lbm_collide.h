/* lbm_collide.h: the lattice Boltzmann collision, written once for every lattice and
 * every device. The CPU kernels (lbm_kernels_impl.h: AoS and SoA, scalar and vector)
 * and the OpenCL kernels (kernels_gpu/lbm/lbm.cl, whose program source is
 * lattice_defs.h, this file and the .cl file) expand these macros, so every device and
 * layout evaluates the same expressions in the same order; with floating-point
 * contraction off everywhere the results are bitwise equal.
 *
 * Equilibrium (incompressible, He & Luo), with a = 1/c_s^2:
 *   f_eq_i = w_i [ rho + rho0 (a c_i.u + a^2/2 (c_i.u)^2 - a/2 u.u) ],  u = j / rho0;
 * D3Q13 (LAT(EQ) 1, MRT only) has its own second-order part (LBM_EQ13).
 * TRT relaxes the symmetric part of each pair (i, inverse of i) with omega_plus and the
 * antisymmetric part with omega_minus; SRT is TRT with one rate. Body force F (Guo's
 * scheme, split into symmetric and antisymmetric parts):
 *   u = (j + F/2) / rho0,
 *   S_i^- = (1 - omega_minus/2) a w_i c_i.F,
 *   S_i^+ = (1 - omega_plus/2)  w_i (a^2 (c_i.u)(c_i.F) - a u.F).
 * Advection-diffusion (the ADE variants, for a scalar C such as a temperature, with a
 * given advection velocity u; D3Q7 is made for it): C = sum f_i is the only conserved
 * moment, f_eq_i = w_i C (1 + a c_i.u); SRT relaxes with omega_plus, TRT the symmetric
 * part with omega_plus and the antisymmetric part (which sets the diffusivity
 * D = c_s^2 (1/omega_minus - 1/2)) with omega_minus.
 * The moment-space collisions (LBM_RELAX_CELL) relax g_i = f_i - f_eq_i + F_i/2 (F_i:
 * Guo's force term, w_i (a c_i.F + a^2 (c_i.u)(c_i.F) - a u.F)) and add the force whole:
 *   f_i* = f_i + F_i - (A g)_i,
 * which is the SRT and TRT above for A = omega, or omega_plus on g's symmetric part and
 * omega_minus on its antisymmetric part. MRT: A = M^T D^-1 S M with the lattice's
 * orthogonal moment basis M (lattice_defs.h LATTICE_L_MOMENT), D = diag(|M_k|^2) and
 * S = diag(s_k): (A g)_i = sum_k M_ki (s_k/|M_k|^2) (M_k . g), over the moments that are
 * not conserved (for those M_k . g vanishes). With every s_k = omega that is SRT up to
 * rounding. Smagorinsky (LES_ 1; Hou, Sterling, Chen & Doolen 1996): the shear moments'
 * relaxation time per cell from the non-equilibrium stress Pi = sum_i c_i c_i g_i,
 *   tau = (tau0 + sqrt(tau0^2 + 18 sqrt(2) C_s^2 |Pi| / rho0)) / 2,  |Pi| = sqrt(Pi:Pi),
 * i.e. nu = nu0 + (C_s)^2 |S| with |S| = sqrt(2 S:S) (lattice units, filter width one
 * cell); TRT keeps its magic parameter Lambda: 1/omega_minus = 1/2 + Lambda/(tau - 1/2).
 * All arithmetic in the storage precision.
 *
 * Macros only, C99 and OpenCL C. At the point of expansion the user defines:
 *   LATTICE_NAME  the lattice (lattice_defs.h), and LAT_CX(i), LAT_CY(i), LAT_CZ(i),
 *                 LAT_INV(i), LAT_M(k, i) (the moment basis, LATTICE_MOMENT_TABLE): its
 *                 tables, readable with constant indices so that the unrolled loops
 *                 below fold them to literals
 *   REAL          the storage precision (float or double)
 *   LBM_T         the type of one cell's values (REAL, or a vector of REAL whose lanes
 *                 are cells)
 *   LBM_ZERO      a zero of type LBM_T
 *   LBM_K_T       the type of the constants' values: REAL, or LBM_T where k holds them
 *                 broadcast into vectors (vector times vector: no scalar is broadcast
 *                 inside the loop); LBM_K_ZERO a zero of that type
 *   LBM_LD(I)     the value pulled into direction I of the cell
 *   LBM_ST(I, V)  stores V as the post-collision value of direction I
 *   k             a pointer to the constants, a struct of LBM_CONSTS_FIELDS(REAL)
 * and expands LBM_COLLIDE_CONSTS; then LBM_FLOW_CELL(KIND_, LES_, FORCE_) (KIND_ 0 SRT,
 * 1 TRT, 2 MRT, 3 cumulant; LES_, FORCE_ 0 or 1) or LBM_ADE_CELL(TRT_), with literals. The
 * Smagorinsky variants also need LBM_SQRT(V), the correctly rounded square root of an
 * LBM_T; the cumulant divides (1/rho: correctly rounded on every device).
 * Loops over directions are unrolled (LBM_UNROLL), so every lattice's collision is
 * straight-line code with its c_i as constants. */
#ifndef LBM_COLLIDE_H
#define LBM_COLLIDE_H

#ifdef __OPENCL_VERSION__
#define LBM_UNROLL _Pragma("unroll")
#else
#define LBM_UNROLL _Pragma("GCC unroll 32")
#endif

/* The collision's constants in the storage precision, computed on the host
 * (lbm_collision_constants):
 *   w[i], wr3[i] = a w_i rho0, cf[i] = c_i.F, cf3[i] = a c_i.F,
 *   spw[i] = (1 - omega_plus/2) w_i, smw3cf[i] = (1 - omega_minus/2) w_i a c_i.F,
 *   mrt[k] = s_k / |M_k|^2 (0 for conserved moments), mrn[k] = 1 / |M_k|^2 (MRT),
 *   cum[] the cumulant collision's rates of the bulk and of orders 3, 4, 5 and 6, shift
 *   the stored values' offset (they are f_i - w_i shift; the cumulant is not linear),
 *   rho0, 1/rho0, omega_plus, omega_minus (= omega_plus for SRT), F, F/2, the
 *   advection velocity of the ADE variants, tau0 = 1/omega_plus, les = 18 sqrt(2) C_s^2 /
 *   rho0 and Lambda (Smagorinsky), and the moment-space collision to run (kind 0 SRT, 1 TRT,
 *   2 MRT, 3 cumulant; lesf 1: Smagorinsky) for kernels that pick it at run time (the CPU's). */
#define LBM_CONSTS_FIELDS(T)                                                             \
  T w[LAT(Q)], wr3[LAT(Q)];                                                              \
  T cf[LAT(Q)], cf3[LAT(Q)], spw[LAT(Q)], smw3cf[LAT(Q)];                                \
  T mrt[LAT(Q)], mrn[LAT(Q)], cum[5], shift;                                             \
  T rho0, inv_rho0, op, om, fx, fy, fz, hfx, hfy, hfz, ax, ay, az, tau0, les, magic, kind, lesf;
#define LBM_CONSTS_COUNT(Q) (8 * (Q) + 24)

/* Where the collision reads the constants that depend on the body force (fx, fy, fz,
 * hfx, hfy, hfz, cf, cf3, smw3cf) or on the advection velocity (ax, ay, az): k's. A
 * kernel whose force or advection velocity varies from cell to cell (the coupled SoA
 * vector code) redefines it around its expansions to read them from values of its own,
 * computed by the same expressions as LBM_CELL_FORCE_CONSTS. */
#define LBM_KF(F) (k->F)

/* a = 1/c_s^2 and the equilibrium's other coefficients a^2/2, a/2 and a^2 (exact). */
#define LBM_A1 ((REAL)LAT(INV_CS2))
#define LBM_A2 ((REAL)(LAT(INV_CS2) * LAT(INV_CS2)) * (REAL)0.5)
#define LBM_A3 ((REAL)LAT(INV_CS2) * (REAL)0.5)
#define LBM_A4 ((REAL)(LAT(INV_CS2) * LAT(INV_CS2)))

/* ACC += C * V for an integer constant C, written so that +-1 and 0 cost nothing and the
 * first non-zero term starts the sum (no 0 + x): the sum is the explicit one of the
 * terms in direction order. SEEN is an int that tracks whether a term came. */
#define LBM_SIGNED_ADD(ACC, SEEN, C, V)                                                  \
  do {                                                                                   \
    const int c_ = (C);                                                                  \
    if (c_ != 0) {                                                                       \
      if (SEEN)                                                                          \
        ACC = c_ == 1 ? ACC + (V) : c_ == -1 ? ACC - (V) : ACC + (REAL)c_ * (V);          \
      else                                                                               \
        ACC = c_ == 1 ? (V) : c_ == -1 ? -(V) : (REAL)c_ * (V);                           \
      SEEN = 1;                                                                          \
    }                                                                                    \
  } while (0)

/* CU = c_I . (ux, uy, uz) */
#define LBM_DOT_U(CU, I)                                                                 \
  do {                                                                                   \
    int seen_u_ = 0;                                                                     \
    CU = LBM_ZERO;                                                                       \
    LBM_SIGNED_ADD(CU, seen_u_, LAT_CX(I), ux);                                          \
    LBM_SIGNED_ADD(CU, seen_u_, LAT_CY(I), uy);                                          \
    if (LAT(D) == 3) LBM_SIGNED_ADD(CU, seen_u_, LAT_CZ(I), uz);                         \
  } while (0)

/* D3Q13's equilibrium (LAT(EQ) 1; d'Humieres, Bouzidi & Lallemand, Phys. Rev. E 63,
 * 066702 (2001), c_s^2 = 1/3) in the form of the bracket above, f_eq_i = w_i (rho +
 * rho0 E_i):
 *   E_0 = -u.u,   E_i = 3 c_i.u + 3 ((c_i.u)^2 + sum_a c_ia^2 u_a^2 - u.u),
 * whose moments are the paper's: rho, j, e = 13|c|^2/2 - 12 at -11 rho/2 + 13 rho0 u.u/2,
 * 3pxx at rho0 (3 ux^2 - u.u), pww at rho0 (uy^2 - uz^2), pxy at rho0 ux uy, ..., the
 * third order at 0 (rho0 for rho in the quadratic terms: incompressible, as the others).
 * The weights' polynomial would give pxy 3/2 rho0 ux uy: D3Q13's fourth moments are not
 * isotropic. Guo's force term takes the same bilinear form,
 *   S_0 = -2 w_0 u.F,   S_i = w_i (3 c_i.F + 6 ((c_i.u)(c_i.F) + sum_a c_ia^2 u_a F_a - u.F)).
 * LBM_EQ13_SQ: sum_a c_Ia^2 A_a B_a (two of a D3Q13 velocity's components are +-1). */
#define LBM_EQ13_REST(I) (LAT_CX(I) == 0 && LAT_CY(I) == 0 && LAT_CZ(I) == 0)
#define LBM_EQ13_SQ(I, AX, AY, AZ, BX, BY, BZ)                                          \
  (LAT_CX(I) == 0   ? (AY) * (BY) + (AZ) * (BZ)                                          \
   : LAT_CY(I) == 0 ? (AX) * (BX) + (AZ) * (BZ)                                          \
                    : (AX) * (BX) + (AY) * (BY))
#define LBM_EQ13(I, CU, UX, UY, UZ)                                                      \
  (LBM_EQ13_REST(I)                                                                      \
       ? -((UX) * (UX) + (UY) * (UY) + (UZ) * (UZ))                                      \
       : (REAL)3 * (CU) +                                                                \
             (REAL)3 * (((CU) * (CU) + LBM_EQ13_SQ(I, UX, UY, UZ, UX, UY, UZ)) -          \
                        ((UX) * (UX) + (UY) * (UY) + (UZ) * (UZ))))
/* the bracket of S_I without 3 c_I.F (CF: c_I.F) */
#define LBM_EQ13_FORCE(I, CU, CF)                                                        \
  (LBM_EQ13_REST(I)                                                                      \
       ? (REAL)-2 * (ux * fx + uy * fy + uz * fz)                                        \
       : (REAL)6 * (((CU) * (CF) + LBM_EQ13_SQ(I, ux, uy, uz, fx, fy, fz)) -              \
                    (ux * fx + uy * fy + uz * fz)))

/* The moments of the pulled values f[]: explicit sums in direction order. FORCE_ is a
 * literal, so the force terms vanish at compile time. */
#define LBM_CELL_MOMENTS(FORCE_)                                                              \
  LBM_T f[LAT(Q)];                                                                       \
  LBM_UNROLL for (int i_ = 0; i_ < LAT(Q); ++i_) f[i_] = LBM_LD(i_);                     \
  LBM_T rho = f[0];                                                                      \
  LBM_UNROLL for (int i_ = 1; i_ < LAT(Q); ++i_) rho = rho + f[i_];                      \
  LBM_T jx = LBM_ZERO, jy = LBM_ZERO, jz = LBM_ZERO;                                     \
  {                                                                                      \
    int sx_ = 0, sy_ = 0, sz_ = 0;                                                       \
    LBM_UNROLL for (int i_ = 1; i_ < LAT(Q); ++i_) {                                     \
      LBM_SIGNED_ADD(jx, sx_, LAT_CX(i_), f[i_]);                                        \
      LBM_SIGNED_ADD(jy, sy_, LAT_CY(i_), f[i_]);                                        \
      if (LAT(D) == 3) LBM_SIGNED_ADD(jz, sz_, LAT_CZ(i_), f[i_]);                       \
    }                                                                                    \
  }                                                                                      \
  const LBM_T ux = (FORCE_ ? jx + hfx : jx) * inv_rho0;                                  \
  const LBM_T uy = (FORCE_ ? jy + hfy : jy) * inv_rho0;                                  \
  const LBM_T uz = LAT(D) == 3 ? (FORCE_ ? jz + hfz : jz) * inv_rho0 : LBM_ZERO;         \
  const LBM_T usq = LAT(D) == 3 ? LBM_A3 * (ux * ux + uy * uy + uz * uz)                 \
                                : LBM_A3 * (ux * ux + uy * uy);                          \
  const LBM_T uf3 = !FORCE_        ? LBM_ZERO                                            \
                    : LAT(D) == 3 ? LBM_A1 * (ux * fx + uy * fy + uz * fz)               \
                                  : LBM_A1 * (ux * fx + uy * fy);                        \
  (void)uf3

/* SRT, one pair (I, K = inverse of I): f_eq = w (rho + rho0 ((a cu + a^2/2 cu cu) - usq))
 * with cu -> -cu for K. */
#define LBM_SRT_PAIR(FORCE_, I, K, CU)                                                   \
  do {                                                                                   \
    const LBM_T cu = (CU);                                                               \
    const LBM_T lin = LBM_A1 * cu, sym = LBM_A2 * cu * cu;                               \
    const LBM_T feqi = k->w[I] * (rho + rho0 * (lin + sym - usq));                       \
    const LBM_T feqk = k->w[I] * (rho + rho0 * (sym - lin - usq));                       \
    LBM_T oi = f[I] - op * (f[I] - feqi), ok = f[K] - op * (f[K] - feqk);                \
    if (FORCE_) {                                                                        \
      const LBM_T a9 = LBM_A4 * cu * LBM_KF(cf)[I];                                      \
      oi = oi + k->spw[I] * (LBM_KF(cf3)[I] + a9 - uf3);                                 \
      ok = ok + k->spw[I] * (LBM_KF(cf3)[K] + a9 - uf3);                                 \
    }                                                                                    \
    LBM_ST(I, oi);                                                                       \
    LBM_ST(K, ok);                                                                       \
  } while (0)

/* TRT, one pair: symmetric and antisymmetric parts relax with omega_plus, omega_minus. */
#define LBM_TRT_PAIR(FORCE_, I, K, CU)                                                   \
  do {                                                                                   \
    const LBM_T cu = (CU);                                                               \
    const LBM_T eqp = k->w[I] * (rho + rho0 * (LBM_A2 * cu * cu - usq));                 \
    const LBM_T eqm = k->wr3[I] * cu;                                                    \
    const LBM_T fp = (REAL)0.5 * (f[I] + f[K]), fm = (REAL)0.5 * (f[I] - f[K]);          \
    const LBM_T dp = op * (fp - eqp), dm = om * (fm - eqm);                              \
    if (FORCE_) {                                                                        \
      const LBM_T sp_ = k->spw[I] * (LBM_A4 * cu * LBM_KF(cf)[I] - uf3);                 \
      LBM_ST(I, f[I] - dp - dm + sp_ + LBM_KF(smw3cf)[I]);                               \
      LBM_ST(K, f[K] - dp + dm + sp_ - LBM_KF(smw3cf)[I]);                               \
    } else {                                                                             \
      LBM_ST(I, f[I] - dp - dm);                                                         \
      LBM_ST(K, f[K] - dp + dm);                                                         \
    }                                                                                    \
  } while (0)

/* The collision of one cell, in the type LBM_T (REAL, or a vector of REAL whose lanes
 * are cells): the rest direction, then every pair (i, inverse of i) with i first. */
#define LBM_COLLIDE_CELL(TRT_, FORCE_)                                                   \
  LBM_CELL_MOMENTS(FORCE_);                                                                   \
  /* rest: c_0.u = 0 */                                                                  \
  const LBM_T feq0 = k->w[0] * (rho - rho0 * usq);                                       \
  LBM_T o0 = f[0] - op * (f[0] - feq0);                                                  \
  if (FORCE_) o0 = o0 + k->spw[0] * -uf3;                                                \
  LBM_ST(0, o0);                                                                         \
  LBM_UNROLL for (int i_ = 1; i_ < LAT(Q); ++i_) {                                       \
    const int k_ = LAT_INV(i_);                                                          \
    if (k_ > i_) {                                                                       \
      LBM_T cu_;                                                                         \
      LBM_DOT_U(cu_, i_);                                                                \
      if (TRT_) LBM_TRT_PAIR(FORCE_, i_, k_, cu_);                                       \
      else LBM_SRT_PAIR(FORCE_, i_, k_, cu_);                                            \
    }                                                                                    \
  }

/* Moment K of direction I (the includer's table of LATTICE_MOMENT_TABLE) and the class of
 * moment K: integer constants in unrolled loops. */
#define LBM_MOMENT(K, I) LAT_M(K, I)
#define LBM_MOMENT_CLASS(K) LAT(MOMENT_CLASS)(K)

/* The moment-space collision of one cell (see the top): g = f - f_eq + F/2 and f + F per
 * direction, then the relaxation of KIND_ (0 SRT, 1 TRT, 2 MRT), with the Smagorinsky
 * rate where LES_ is 1. */
#define LBM_RELAX_CELL(KIND_, LES_, FORCE_)                                              \
  LBM_CELL_MOMENTS(FORCE_);                                                              \
  if (LBM_CUMULANT_LATTICE && (KIND_) == 3) {                                            \
    LBM_CUMULANT_RELAX(LES_, FORCE_);                                                    \
  } else {                                                                               \
    LBM_T g[LAT(Q)], fo[LAT(Q)];                                                         \
    LBM_UNROLL for (int i_ = 0; i_ < LAT(Q); ++i_) {                                     \
      LBM_T cu_;                                                                         \
      LBM_DOT_U(cu_, i_);                                                                \
      const LBM_T feq_ =                                                                 \
          LAT(EQ) ? k->w[i_] * (rho + rho0 * LBM_EQ13(i_, cu_, ux, uy, uz))              \
                  : k->w[i_] * (rho + rho0 * (LBM_A1 * cu_ + LBM_A2 * cu_ * cu_ - usq)); \
      if (FORCE_) {                                                                      \
        const LBM_T s_ =                                                                 \
            LAT(EQ) ? k->w[i_] * (LBM_KF(cf3)[i_] + LBM_EQ13_FORCE(i_, cu_, LBM_KF(cf)[i_])) \
                    : k->w[i_] * (LBM_KF(cf3)[i_] + LBM_A4 * cu_ * LBM_KF(cf)[i_] - uf3); \
        g[i_] = (f[i_] - feq_) + (REAL)0.5 * s_;                                         \
        fo[i_] = f[i_] + s_;                                                             \
      } else {                                                                           \
        g[i_] = f[i_] - feq_;                                                            \
        fo[i_] = f[i_];                                                                  \
      }                                                                                  \
    }                                                                                    \
    LBM_T om_ = op, tau_ = LBM_ZERO;                                                     \
    (void)tau_;                                                                          \
    if (LES_) LBM_SMAGORINSKY(om_, tau_);                                                \
    if (KIND_ == 2) LBM_MRT_RELAX(LES_, om_);                                            \
    else if (KIND_ == 1) LBM_TRT_RELAX(LES_, om_, tau_);                                 \
    else {                                                                               \
      LBM_UNROLL for (int i_ = 0; i_ < LAT(Q); ++i_) LBM_ST(i_, fo[i_] - om_ * g[i_]);   \
    }                                                                                    \
  }

/* Pi = sum_i c_i c_i g_i, then OM = 1/TAU, TAU the Smagorinsky relaxation time. */
#define LBM_SMAGORINSKY(OM, TAU)                                                         \
  do {                                                                                   \
    LBM_T pxx_ = LBM_ZERO, pyy_ = LBM_ZERO, pzz_ = LBM_ZERO, pxy_ = LBM_ZERO,            \
          pxz_ = LBM_ZERO, pyz_ = LBM_ZERO;                                               \
    int s1_ = 0, s2_ = 0, s3_ = 0, s4_ = 0, s5_ = 0, s6_ = 0;                            \
    LBM_UNROLL for (int i_ = 1; i_ < LAT(Q); ++i_) {                                     \
      LBM_SIGNED_ADD(pxx_, s1_, LAT_CX(i_) * LAT_CX(i_), g[i_]);                         \
      LBM_SIGNED_ADD(pyy_, s2_, LAT_CY(i_) * LAT_CY(i_), g[i_]);                         \
      LBM_SIGNED_ADD(pxy_, s3_, LAT_CX(i_) * LAT_CY(i_), g[i_]);                         \
      if (LAT(D) == 3) {                                                                 \
        LBM_SIGNED_ADD(pzz_, s4_, LAT_CZ(i_) * LAT_CZ(i_), g[i_]);                       \
        LBM_SIGNED_ADD(pxz_, s5_, LAT_CX(i_) * LAT_CZ(i_), g[i_]);                       \
        LBM_SIGNED_ADD(pyz_, s6_, LAT_CY(i_) * LAT_CZ(i_), g[i_]);                       \
      }                                                                                  \
    }                                                                                    \
    LBM_SMAGORINSKY_RATE(OM, TAU, pxx_, pyy_, pzz_, pxy_, pxz_, pyz_);                   \
  } while (0)

/* OM = 1/TAU, TAU the Smagorinsky relaxation time for the non-equilibrium stress Pi
 * (its six components; 2-D lattices: pzz, pxz and pyz unused). */
#define LBM_SMAGORINSKY_RATE(OM, TAU, PXX, PYY, PZZ, PXY, PXZ, PYZ)                      \
  do {                                                                                   \
    LBM_T qq_;                                                                           \
    if (LAT(D) == 3)                                                                     \
      qq_ = ((PXX) * (PXX) + (PYY) * (PYY) + (PZZ) * (PZZ)) +                            \
            (REAL)2 * ((PXY) * (PXY) + (PXZ) * (PXZ) + (PYZ) * (PYZ));                   \
    else qq_ = ((PXX) * (PXX) + (PYY) * (PYY)) + (REAL)2 * ((PXY) * (PXY));              \
    TAU = (REAL)0.5 * (k->tau0 + LBM_SQRT(k->tau0 * k->tau0 + k->les * LBM_SQRT(qq_)));  \
    OM = (REAL)1 / (TAU);                                                                \
  } while (0)

/* TRT on g: the rest direction with OM, each pair's symmetric part with OM and its
 * antisymmetric part with omega_minus (from Lambda and TAU where LES_). */
#define LBM_TRT_RELAX(LES_, OM, TAU)                                                     \
  do {                                                                                   \
    LBM_T om2_ = om;                                                                     \
    if (LES_) om2_ = (REAL)1 / ((REAL)0.5 + k->magic / ((TAU) - (REAL)0.5));             \
    LBM_ST(0, fo[0] - (OM) * g[0]);                                                      \
    LBM_UNROLL for (int i_ = 1; i_ < LAT(Q); ++i_) {                                     \
      const int k_ = LAT_INV(i_);                                                        \
      if (k_ > i_) {                                                                     \
        const LBM_T gp_ = (REAL)0.5 * (g[i_] + g[k_]), gm_ = (REAL)0.5 * (g[i_] - g[k_]); \
        const LBM_T dp_ = (OM) * gp_, dm_ = om2_ * gm_;                                  \
        LBM_ST(i_, fo[i_] - dp_ - dm_);                                                  \
        LBM_ST(k_, fo[k_] - dp_ + dm_);                                                  \
      }                                                                                  \
    }                                                                                    \
  } while (0)

/* MRT on g: the moments M_k . g that are not conserved, times s_k/|M_k|^2 (the shear
 * moments' s_k = OM where LES_), back through M^T. Every moment has a parity (M_k(-c) =
 * +-M_k(c); test_lbm_collisions checks it), so each pair (i, inverse of i) enters the
 * moments as g_i + g_inv or g_i - g_inv, and takes back one sum over the even moments
 * and one over the odd ones: half the operations of the plain products. */
#define LBM_MRT_RELAX(LES_, OM)                                                          \
  do {                                                                                   \
    LBM_T gs_[LAT(Q)], ga_[LAT(Q)], mk_[LAT(Q)];                                         \
    LBM_UNROLL for (int i_ = 1; i_ < LAT(Q); ++i_) {                                     \
      const int k_ = LAT_INV(i_);                                                        \
      gs_[i_] = LBM_ZERO;                                                                \
      ga_[i_] = LBM_ZERO;                                                                \
      if (k_ > i_) {                                                                     \
        gs_[i_] = g[i_] + g[k_];                                                         \
        ga_[i_] = g[i_] - g[k_];                                                         \
      }                                                                                  \
    }                                                                                    \
    LBM_UNROLL for (int mm_ = 0; mm_ < LAT(Q); ++mm_) {                                     \
      mk_[mm_] = LBM_ZERO;                                                                \
      if (LBM_MOMENT_CLASS(mm_) != LATTICE_MOMENT_CONSERVED) {                            \
        LBM_T mr_ = LBM_ZERO;                                                            \
        int mseen_ = 0;                                                                  \
        LBM_SIGNED_ADD(mr_, mseen_, LBM_MOMENT(mm_, 0), g[0]);                            \
        LBM_UNROLL for (int i_ = 1; i_ < LAT(Q); ++i_)                                   \
          if (LAT_INV(i_) > i_) {                                                        \
            if (LBM_MOMENT(mm_, LAT_INV(i_)) == LBM_MOMENT(mm_, i_))                       \
              LBM_SIGNED_ADD(mr_, mseen_, LBM_MOMENT(mm_, i_), gs_[i_]);                  \
            else LBM_SIGNED_ADD(mr_, mseen_, LBM_MOMENT(mm_, i_), ga_[i_]);               \
          }                                                                              \
        if (LES_ && LBM_MOMENT_CLASS(mm_) == LATTICE_MOMENT_SHEAR)                        \
          mk_[mm_] = ((OM) * k->mrn[mm_]) * mr_;                                           \
        else mk_[mm_] = k->mrt[mm_] * mr_;                                                 \
      }                                                                                  \
    }                                                                                    \
    {                                                                                    \
      LBM_T a_ = LBM_ZERO;                                                               \
      int seen_ = 0;                                                                     \
      LBM_UNROLL for (int mm_ = 0; mm_ < LAT(Q); ++mm_)                                     \
        if (LBM_MOMENT_CLASS(mm_) != LATTICE_MOMENT_CONSERVED)                            \
          LBM_SIGNED_ADD(a_, seen_, LBM_MOMENT(mm_, 0), mk_[mm_]);                         \
      LBM_ST(0, fo[0] - a_);                                                             \
    }                                                                                    \
    LBM_UNROLL for (int i_ = 1; i_ < LAT(Q); ++i_) {                                     \
      const int k_ = LAT_INV(i_);                                                        \
      if (k_ > i_) {                                                                     \
        LBM_T se_ = LBM_ZERO, so_ = LBM_ZERO;                                            \
        int eseen_ = 0, oseen_ = 0;                                                      \
        LBM_UNROLL for (int mm_ = 0; mm_ < LAT(Q); ++mm_)                                   \
          if (LBM_MOMENT_CLASS(mm_) != LATTICE_MOMENT_CONSERVED) {                        \
            if (LBM_MOMENT(mm_, k_) == LBM_MOMENT(mm_, i_))                                \
              LBM_SIGNED_ADD(se_, eseen_, LBM_MOMENT(mm_, i_), mk_[mm_]);                  \
            else LBM_SIGNED_ADD(so_, oseen_, LBM_MOMENT(mm_, i_), mk_[mm_]);               \
          }                                                                              \
        LBM_ST(i_, fo[i_] - (se_ + so_));                                                \
        LBM_ST(k_, fo[k_] - (se_ - so_));                                                \
      }                                                                                  \
    }                                                                                    \
  } while (0)

/* The cumulant collision (Geier, Schoenherr, Pasquali & Krafczyk, Comput. Math. Appl. 70
 * (2015) 507-547) on the tensor-product lattices D2Q9 and D3Q27 (LBM_CUMULANT_LATTICE):
 * the populations go to central moments about the velocity u = (j + F/2) / rho (three
 * passes of the chimera transform, one axis each), to cumulants (normalised by rho; the
 * first-order central moments, -F/2, left out of the products as in the paper), which
 * relax: the off-diagonal second order with omega (the Smagorinsky rate where LES_), the
 * trace with the bulk rate cum[0] and the diagonal's deviators with omega, both with the
 * paper's correction of the lattice's missing third-order equilibrium moments
 * (-3 (1 - rate/2) u_a^2 du_a/dx_a, the gradients from the same second-order cumulants),
 * orders three to six with the rates cum[1..4] towards zero; the first-order central
 * moments change sign (momentum j + F, Guo's scheme to second order). Back along the
 * same path. The equilibrium is the compressible one (u = j / rho), unlike the other
 * operators' incompressible one. cum[] are rates; the arithmetic is in REAL. */
#define LBM_CUMULANT_LATTICE (LAT(Q) == 27 || (LAT(D) == 2 && LAT(Q) == 9))
/* The slot of direction I in the tensor order (c_x + 1) + 3 (c_y + 1) + 9 (c_z + 1) (2-D:
 * without the last term); after
 * the transforms slot a + 3 b + 9 c holds the moment of orders a, b, c along x, y, z. */
#define LBM_TSLOT(I)                                                                     \
  ((LAT_CX(I) + 1) + 3 * (LAT_CY(I) + 1) + (LAT(D) == 3 ? 9 * (LAT_CZ(I) + 1) : 0))
/* One line of three values (c = -1, 0, +1) to its central moments of orders 0, 1, 2 about
 * U, in place, and back. */
#define LBM_CHIMERA_FWD(A, B, C, U)                                                      \
  do {                                                                                   \
    const LBM_T s_ = (C) + (A), d_ = (C) - (A);                                          \
    const LBM_T k0_ = s_ + (B);                                                          \
    (A) = k0_;                                                                           \
    (B) = d_ - (U) * k0_;                                                                \
    (C) = (s_ - (REAL)2 * (U) * d_) + (U) * (U) * k0_;                                   \
  } while (0)
#define LBM_CHIMERA_BWD(A, B, C, U)                                                      \
  do {                                                                                   \
    const LBM_T k0_ = (A);                                                               \
    const LBM_T r1_ = (B) + (U) * k0_;                                                   \
    const LBM_T r2_ = ((C) + (REAL)2 * (U) * r1_) - (U) * (U) * k0_;                     \
    (A) = (REAL)0.5 * (r2_ - r1_);                                                       \
    (B) = k0_ - r2_;                                                                     \
    (C) = (REAL)0.5 * (r2_ + r1_);                                                       \
  } while (0)
/* One pass: the lines along the axis of stride AX, from slots a SA + b SB (a < 3, b < NB). */
#define LBM_CHIMERA_PASS(STEP, AX, SA, SB, NB, U)                                        \
  do {                                                                                   \
    LBM_UNROLL for (int a_ = 0; a_ < 3; ++a_)                                            \
      LBM_UNROLL for (int b_ = 0; b_ < (NB); ++b_)                                       \
        LBM_CHIMERA_##STEP(cm_[a_ * (SA) + b_ * (SB)], cm_[a_ * (SA) + b_ * (SB) + (AX)], \
                           cm_[a_ * (SA) + b_ * (SB) + 2 * (AX)], U);                    \
  } while (0)
/* M(a, b, c): the normalised central moment, later cumulant, of orders a, b, c */
#define LBM_CM(A, B, C) cm_[(A) + 3 * (B) + 9 * (C)]
/* What a cumulant of order four to six is less than its central moment (sums over the
 * partitions of its indices into blocks of two and more, the moment-cumulant relation
 * with the first order left out): C = M - T(M), M = C + T(M). */
#define LBM_CUM_T211                                                                     \
  (LBM_CM(2, 0, 0) * LBM_CM(0, 1, 1) + (REAL)2 * LBM_CM(1, 1, 0) * LBM_CM(1, 0, 1))
#define LBM_CUM_T121                                                                     \
  (LBM_CM(0, 2, 0) * LBM_CM(1, 0, 1) + (REAL)2 * LBM_CM(1, 1, 0) * LBM_CM(0, 1, 1))
#define LBM_CUM_T112                                                                     \
  (LBM_CM(0, 0, 2) * LBM_CM(1, 1, 0) + (REAL)2 * LBM_CM(1, 0, 1) * LBM_CM(0, 1, 1))
#define LBM_CUM_T220                                                                     \
  (LBM_CM(2, 0, 0) * LBM_CM(0, 2, 0) + (REAL)2 * LBM_CM(1, 1, 0) * LBM_CM(1, 1, 0))
#define LBM_CUM_T202                                                                     \
  (LBM_CM(2, 0, 0) * LBM_CM(0, 0, 2) + (REAL)2 * LBM_CM(1, 0, 1) * LBM_CM(1, 0, 1))
#define LBM_CUM_T022                                                                     \
  (LBM_CM(0, 2, 0) * LBM_CM(0, 0, 2) + (REAL)2 * LBM_CM(0, 1, 1) * LBM_CM(0, 1, 1))
#define LBM_CUM_T122                                                                     \
  (((LBM_CM(0, 0, 2) * LBM_CM(1, 2, 0) + LBM_CM(0, 2, 0) * LBM_CM(1, 0, 2)) +            \
    (REAL)4 * LBM_CM(0, 1, 1) * LBM_CM(1, 1, 1)) +                                       \
   (REAL)2 * (LBM_CM(1, 1, 0) * LBM_CM(0, 1, 2) + LBM_CM(1, 0, 1) * LBM_CM(0, 2, 1)))
#define LBM_CUM_T212                                                                     \
  (((LBM_CM(0, 0, 2) * LBM_CM(2, 1, 0) + LBM_CM(2, 0, 0) * LBM_CM(0, 1, 2)) +            \
    (REAL)4 * LBM_CM(1, 0, 1) * LBM_CM(1, 1, 1)) +                                       \
   (REAL)2 * (LBM_CM(1, 1, 0) * LBM_CM(1, 0, 2) + LBM_CM(0, 1, 1) * LBM_CM(2, 0, 1)))
#define LBM_CUM_T221                                                                     \
  (((LBM_CM(2, 0, 0) * LBM_CM(0, 2, 1) + LBM_CM(0, 2, 0) * LBM_CM(2, 0, 1)) +            \
    (REAL)4 * LBM_CM(1, 1, 0) * LBM_CM(1, 1, 1)) +                                       \
   (REAL)2 * (LBM_CM(1, 0, 1) * LBM_CM(1, 2, 0) + LBM_CM(0, 1, 1) * LBM_CM(2, 1, 0)))
#define LBM_CUM_T222                                                                     \
  ((((LBM_CM(2, 0, 0) * LBM_CM(0, 2, 2) + LBM_CM(0, 2, 0) * LBM_CM(2, 0, 2)) +           \
     LBM_CM(0, 0, 2) * LBM_CM(2, 2, 0)) +                                                \
    (REAL)4 * ((LBM_CM(1, 1, 0) * LBM_CM(1, 1, 2) + LBM_CM(1, 0, 1) * LBM_CM(1, 2, 1)) + \
               LBM_CM(0, 1, 1) * LBM_CM(2, 1, 1))) +                                     \
   ((REAL)2 * ((LBM_CM(2, 1, 0) * LBM_CM(0, 1, 2) + LBM_CM(2, 0, 1) * LBM_CM(0, 2, 1)) + \
               LBM_CM(1, 2, 0) * LBM_CM(1, 0, 2)) +                                      \
    (REAL)4 * LBM_CM(1, 1, 1) * LBM_CM(1, 1, 1)) -                                       \
   (REAL)2 * ((LBM_CM(2, 0, 0) * LBM_CM(0, 2, 0) * LBM_CM(0, 0, 2) +                     \
               (REAL)2 * ((LBM_CM(2, 0, 0) * LBM_CM(0, 1, 1) * LBM_CM(0, 1, 1) +         \
                           LBM_CM(0, 2, 0) * LBM_CM(1, 0, 1) * LBM_CM(1, 0, 1)) +        \
                          LBM_CM(0, 0, 2) * LBM_CM(1, 1, 0) * LBM_CM(1, 1, 0))) +        \
              (REAL)8 * LBM_CM(1, 1, 0) * LBM_CM(1, 0, 1) * LBM_CM(0, 1, 1)))
/* The slots of the moments of order two and more (normalised by rho) in 3-D and 2-D:
 * every slot but 0 (order 0) and 1, 3, 9 (order 1). */
#define LBM_CUM_HIGH(T) ((T) != 0 && (T) != 1 && (T) != 3 && (T) != 9)
#define LBM_CUM_N (LAT(D) == 3 ? 27 : 9)

#define LBM_CUMULANT_RELAX(LES_, FORCE_)                                                 \
  do {                                                                                   \
    LBM_T cm_[27];                                                                       \
    LBM_UNROLL for (int t_ = 0; t_ < 27; ++t_) cm_[t_] = LBM_ZERO;                       \
    LBM_UNROLL for (int i_ = 0; i_ < LAT(Q); ++i_)                                       \
      cm_[LBM_TSLOT(i_)] = f[i_] + k->w[i_] * k->shift;                                  \
    const LBM_T rc_ = rho + k->shift, ri_ = (REAL)1 / rc_;                               \
    const LBM_T vx_ = (FORCE_ ? jx + hfx : jx) * ri_, vy_ = (FORCE_ ? jy + hfy : jy) * ri_; \
    const LBM_T vz_ = LAT(D) == 3 ? (FORCE_ ? jz + hfz : jz) * ri_ : LBM_ZERO;           \
    if (LAT(D) == 3) LBM_CHIMERA_PASS(FWD, 9, 1, 3, 3, vz_);                             \
    LBM_CHIMERA_PASS(FWD, 3, 1, 9, LAT(D) == 3 ? 3 : 1, vy_);                            \
    LBM_CHIMERA_PASS(FWD, 1, 3, 9, LAT(D) == 3 ? 3 : 1, vx_);                            \
    LBM_UNROLL for (int t_ = 0; t_ < LBM_CUM_N; ++t_)                                    \
      if (LBM_CUM_HIGH(t_)) cm_[t_] = cm_[t_] * ri_;                                     \
    /* the shear rate (Smagorinsky: from Pi = rho (C_ab - delta_ab / 3); 2-D lattices    \
       ignore the z components) and the higher orders' factors */                        \
    LBM_T om_ = op, tau_ = LBM_ZERO;                                                     \
    (void)tau_;                                                                          \
    if (LES_)                                                                            \
      LBM_SMAGORINSKY_RATE(om_, tau_, rc_ * (LBM_CM(2, 0, 0) - (REAL)(1.0 / 3.0)),       \
                           rc_ * (LBM_CM(0, 2, 0) - (REAL)(1.0 / 3.0)),                  \
                           rc_ * (LBM_CM(0, 0, 2) - (REAL)(1.0 / 3.0)), rc_ * LBM_CM(1, 1, 0), \
                           rc_ * LBM_CM(1, 0, 1), rc_ * LBM_CM(0, 1, 1));                \
    const LBM_T r3_ = (REAL)1 - k->cum[1], r4_ = (REAL)1 - k->cum[2];                    \
    if (LAT(D) == 3) LBM_CUMULANT_RELAX3();                                              \
    else LBM_CUMULANT_RELAX2();                                                          \
    LBM_UNROLL for (int t_ = 0; t_ < LBM_CUM_N; ++t_)                                    \
      if (LBM_CUM_HIGH(t_)) cm_[t_] = cm_[t_] * rc_;                                     \
    cm_[1] = -cm_[1];                                                                    \
    cm_[3] = -cm_[3];                                                                    \
    if (LAT(D) == 3) cm_[9] = -cm_[9];                                                   \
    LBM_CHIMERA_PASS(BWD, 1, 3, 9, LAT(D) == 3 ? 3 : 1, vx_);                            \
    LBM_CHIMERA_PASS(BWD, 3, 1, 9, LAT(D) == 3 ? 3 : 1, vy_);                            \
    if (LAT(D) == 3) LBM_CHIMERA_PASS(BWD, 9, 1, 3, 3, vz_);                             \
    LBM_UNROLL for (int i_ = 0; i_ < LAT(Q); ++i_)                                       \
      LBM_ST(i_, cm_[LBM_TSLOT(i_)] - k->w[i_] * k->shift);                              \
  } while (0)

/* The relaxation, in the scope of LBM_CUMULANT_RELAX (om_: the shear rate; r3_, r4_: 1
 * less the rates of orders 3 and 4). The second order: the off-diagonal ones with OM; the
 * trace (equilibrium D/3) with the bulk rate W2 and the deviators XY, XZ with OM, each less
 * 3 (1 - rate/2) times its combination of u_a^2 du_a/dx_a (Geier et al. 2015, eqs. for
 * the corrected second-order cumulants), the gradients
 *   du/dx = -OM/2 (XY + XZ) - W2/2 (trace - 1),  dv/dy = du/dx + 3/2 OM XY,  dw/dz = ... XZ
 * in 3-D; in 2-D du/dx = -3/4 OM XY - 3/4 W2 (trace - 2/3), dv/dy = du/dx + 3/2 OM XY. */
#define LBM_CUMULANT_RELAX3()                                                            \
  do {                                                                                   \
    const LBM_T r5_ = (REAL)1 - k->cum[3], r6_ = (REAL)1 - k->cum[4];                    \
    /* the cumulants of orders 4 to 6 before the collision, relaxed */                   \
    const LBM_T q211_ = r4_ * (LBM_CM(2, 1, 1) - LBM_CUM_T211);                          \
    const LBM_T q121_ = r4_ * (LBM_CM(1, 2, 1) - LBM_CUM_T121);                          \
    const LBM_T q112_ = r4_ * (LBM_CM(1, 1, 2) - LBM_CUM_T112);                          \
    const LBM_T q220_ = r4_ * (LBM_CM(2, 2, 0) - LBM_CUM_T220);                          \
    const LBM_T q202_ = r4_ * (LBM_CM(2, 0, 2) - LBM_CUM_T202);                          \
    const LBM_T q022_ = r4_ * (LBM_CM(0, 2, 2) - LBM_CUM_T022);                          \
    const LBM_T q122_ = r5_ * (LBM_CM(1, 2, 2) - LBM_CUM_T122);                          \
    const LBM_T q212_ = r5_ * (LBM_CM(2, 1, 2) - LBM_CUM_T212);                          \
    const LBM_T q221_ = r5_ * (LBM_CM(2, 2, 1) - LBM_CUM_T221);                          \
    const LBM_T q222_ = r6_ * (LBM_CM(2, 2, 2) - LBM_CUM_T222);                          \
    /* second order */                                                                   \
    {                                                                                    \
      const LBM_T w2_ = k->cum[0];                                                       \
      const LBM_T tr_ = (LBM_CM(2, 0, 0) + LBM_CM(0, 2, 0)) + LBM_CM(0, 0, 2);           \
      const LBM_T xy_ = LBM_CM(2, 0, 0) - LBM_CM(0, 2, 0);                               \
      const LBM_T xz_ = LBM_CM(2, 0, 0) - LBM_CM(0, 0, 2);                               \
      const LBM_T dx_ = (REAL)-0.5 * om_ * (xy_ + xz_) - (REAL)0.5 * w2_ * (tr_ - (REAL)1); \
      const LBM_T dy_ = dx_ + (REAL)1.5 * om_ * xy_, dz_ = dx_ + (REAL)1.5 * om_ * xz_;  \
      const LBM_T ex_ = vx_ * vx_ * dx_, ey_ = vy_ * vy_ * dy_, ez_ = vz_ * vz_ * dz_;   \
      const LBM_T gs_ = (REAL)3 * ((REAL)1 - (REAL)0.5 * om_);                           \
      const LBM_T trn_ = (tr_ + w2_ * ((REAL)1 - tr_)) -                                 \
                         (REAL)3 * ((REAL)1 - (REAL)0.5 * w2_) * ((ex_ + ey_) + ez_);    \
      const LBM_T xyn_ = ((REAL)1 - om_) * xy_ - gs_ * (ex_ - ey_);                      \
      const LBM_T xzn_ = ((REAL)1 - om_) * xz_ - gs_ * (ex_ - ez_);                      \
      LBM_CM(2, 0, 0) = (REAL)(1.0 / 3.0) * ((trn_ + xyn_) + xzn_);                      \
      LBM_CM(0, 2, 0) = LBM_CM(2, 0, 0) - xyn_;                                          \
      LBM_CM(0, 0, 2) = LBM_CM(2, 0, 0) - xzn_;                                          \
      LBM_CM(1, 1, 0) = ((REAL)1 - om_) * LBM_CM(1, 1, 0);                               \
      LBM_CM(1, 0, 1) = ((REAL)1 - om_) * LBM_CM(1, 0, 1);                               \
      LBM_CM(0, 1, 1) = ((REAL)1 - om_) * LBM_CM(0, 1, 1);                               \
    }                                                                                    \
    /* third order: cumulants are the central moments */                                 \
    LBM_CM(2, 1, 0) = r3_ * LBM_CM(2, 1, 0);                                             \
    LBM_CM(1, 2, 0) = r3_ * LBM_CM(1, 2, 0);                                             \
    LBM_CM(2, 0, 1) = r3_ * LBM_CM(2, 0, 1);                                             \
    LBM_CM(1, 0, 2) = r3_ * LBM_CM(1, 0, 2);                                             \
    LBM_CM(0, 2, 1) = r3_ * LBM_CM(0, 2, 1);                                             \
    LBM_CM(0, 1, 2) = r3_ * LBM_CM(0, 1, 2);                                             \
    LBM_CM(1, 1, 1) = r3_ * LBM_CM(1, 1, 1);                                             \
    /* back to central moments, each order from the lower ones after the collision */    \
    LBM_CM(2, 1, 1) = q211_ + LBM_CUM_T211;                                              \
    LBM_CM(1, 2, 1) = q121_ + LBM_CUM_T121;                                              \
    LBM_CM(1, 1, 2) = q112_ + LBM_CUM_T112;                                              \
    LBM_CM(2, 2, 0) = q220_ + LBM_CUM_T220;                                              \
    LBM_CM(2, 0, 2) = q202_ + LBM_CUM_T202;                                              \
    LBM_CM(0, 2, 2) = q022_ + LBM_CUM_T022;                                              \
    LBM_CM(1, 2, 2) = q122_ + LBM_CUM_T122;                                              \
    LBM_CM(2, 1, 2) = q212_ + LBM_CUM_T212;                                              \
    LBM_CM(2, 2, 1) = q221_ + LBM_CUM_T221;                                              \
    LBM_CM(2, 2, 2) = q222_ + LBM_CUM_T222;                                              \
  } while (0)
#define LBM_CUMULANT_RELAX2()                                                            \
  do {                                                                                   \
    const LBM_T q220_ = r4_ * (LBM_CM(2, 2, 0) - LBM_CUM_T220);                          \
    {                                                                                    \
      const LBM_T w2_ = k->cum[0];                                                       \
      const LBM_T tr_ = LBM_CM(2, 0, 0) + LBM_CM(0, 2, 0);                               \
      const LBM_T xy_ = LBM_CM(2, 0, 0) - LBM_CM(0, 2, 0);                               \
      const LBM_T dx_ = (REAL)-0.75 * om_ * xy_ - (REAL)0.75 * w2_ * (tr_ - (REAL)(2.0 / 3.0)); \
      const LBM_T dy_ = dx_ + (REAL)1.5 * om_ * xy_;                                     \
      const LBM_T ex_ = vx_ * vx_ * dx_, ey_ = vy_ * vy_ * dy_;                          \
      const LBM_T trn_ = (tr_ + w2_ * ((REAL)(2.0 / 3.0) - tr_)) -                       \
                         (REAL)3 * ((REAL)1 - (REAL)0.5 * w2_) * (ex_ + ey_);            \
      const LBM_T xyn_ = ((REAL)1 - om_) * xy_ -                                         \
                         (REAL)3 * ((REAL)1 - (REAL)0.5 * om_) * (ex_ - ey_);            \
      LBM_CM(2, 0, 0) = (REAL)0.5 * (trn_ + xyn_);                                       \
      LBM_CM(0, 2, 0) = LBM_CM(2, 0, 0) - xyn_;                                          \
      LBM_CM(1, 1, 0) = ((REAL)1 - om_) * LBM_CM(1, 1, 0);                               \
    }                                                                                    \
    LBM_CM(2, 1, 0) = r3_ * LBM_CM(2, 1, 0);                                             \
    LBM_CM(1, 2, 0) = r3_ * LBM_CM(1, 2, 0);                                             \
    LBM_CM(2, 2, 0) = q220_ + LBM_CUM_T220;                                              \
  } while (0)

/* The flow's collision of one cell: KIND_ 0 SRT, 1 TRT, 2 MRT, 3 cumulant (D2Q9, D3Q27);
 * LES_ 1: Smagorinsky. SRT and TRT without LES are LBM_COLLIDE_CELL; the others
 * LBM_RELAX_CELL. Literal arguments (or macros that expand to them). */
#define LBM_FLOW_CELL(KIND_, LES_, FORCE_) LBM_FLOW_CELL_(KIND_, LES_, FORCE_)
#define LBM_FLOW_CELL_(K, L, F) LBM_FLOW_CELL_##K##L(F)
#define LBM_FLOW_CELL_00(F) LBM_COLLIDE_CELL(0, F)
#define LBM_FLOW_CELL_10(F) LBM_COLLIDE_CELL(1, F)
#define LBM_FLOW_CELL_20(F) LBM_RELAX_CELL(2, 0, F)
#define LBM_FLOW_CELL_01(F) LBM_RELAX_CELL(0, 1, F)
#define LBM_FLOW_CELL_11(F) LBM_RELAX_CELL(1, 1, F)
#define LBM_FLOW_CELL_21(F) LBM_RELAX_CELL(2, 1, F)
#define LBM_FLOW_CELL_30(F) LBM_RELAX_CELL(3, 0, F)
#define LBM_FLOW_CELL_31(F) LBM_RELAX_CELL(3, 1, F)

/* Advection-diffusion of one cell: C and the constant advection velocity, then the rest
 * direction and every pair (i, inverse of i); f_eq_i = w_i (C + C a c_i.u). */
#define LBM_ADE_CELL(TRT_)                                                               \
  LBM_T f[LAT(Q)];                                                                       \
  LBM_UNROLL for (int i_ = 0; i_ < LAT(Q); ++i_) f[i_] = LBM_LD(i_);                     \
  LBM_T rho = f[0];                                                                      \
  LBM_UNROLL for (int i_ = 1; i_ < LAT(Q); ++i_) rho = rho + f[i_];                      \
  const LBM_K_T ux = LBM_KF(ax), uy = LBM_KF(ay), uz = LBM_KF(az);                       \
  (void)uz;                                                                              \
  LBM_ST(0, f[0] - op * (f[0] - k->w[0] * rho));                                         \
  LBM_UNROLL for (int i_ = 1; i_ < LAT(Q); ++i_) {                                       \
    const int k_ = LAT_INV(i_);                                                          \
    if (k_ > i_) {                                                                       \
      LBM_K_T cu_;                                                                       \
      {                                                                                  \
        int seen_u_ = 0;                                                                 \
        cu_ = LBM_K_ZERO;                                                                \
        LBM_SIGNED_ADD(cu_, seen_u_, LAT_CX(i_), ux);                                    \
        LBM_SIGNED_ADD(cu_, seen_u_, LAT_CY(i_), uy);                                    \
        if (LAT(D) == 3) LBM_SIGNED_ADD(cu_, seen_u_, LAT_CZ(i_), uz);                   \
      }                                                                                  \
      const LBM_T lin = rho * (LBM_A1 * cu_);                                            \
      if (TRT_) {                                                                        \
        const LBM_T fp = (REAL)0.5 * (f[i_] + f[k_]), fm = (REAL)0.5 * (f[i_] - f[k_]);  \
        const LBM_T dp = op * (fp - k->w[i_] * rho), dm = om * (fm - k->w[i_] * lin);    \
        LBM_ST(i_, f[i_] - dp - dm);                                                     \
        LBM_ST(k_, f[k_] - dp + dm);                                                     \
      } else {                                                                           \
        LBM_ST(i_, f[i_] - op * (f[i_] - k->w[i_] * (rho + lin)));                       \
        LBM_ST(k_, f[k_] - op * (f[k_] - k->w[i_] * (rho - lin)));                       \
      }                                                                                  \
    }                                                                                    \
  }

/* The coupled kernels (a force or an advection velocity per cell): KC, a copy of the
 * constants, gets those that depend on the force (F, F/2, c_i.F, a c_i.F and
 * (1 - omega_minus/2) w_i a c_i.F) for the cell's force (FX, FY, FZ); LBM_COLLIDE_CELL(.., 1)
 * then collides with it. The same expressions on every device. */
#define LBM_CELL_FORCE_CONSTS(KC, FX, FY, FZ)                                            \
  do {                                                                                   \
    const REAL sm_ = (REAL)1 - (REAL)0.5 * (KC).om;                                      \
    (KC).fx = (FX);                                                                      \
    (KC).fy = (FY);                                                                      \
    (KC).fz = (FZ);                                                                      \
    (KC).hfx = (REAL)0.5 * (KC).fx;                                                      \
    (KC).hfy = (REAL)0.5 * (KC).fy;                                                      \
    (KC).hfz = (REAL)0.5 * (KC).fz;                                                      \
    LBM_UNROLL for (int i_ = 0; i_ < LAT(Q); ++i_) {                                     \
      const REAL cf_ = (REAL)LAT_CX(i_) * (KC).fx + (REAL)LAT_CY(i_) * (KC).fy +         \
                       (REAL)LAT_CZ(i_) * (KC).fz;                                       \
      (KC).cf[i_] = cf_;                                                                 \
      (KC).cf3[i_] = LBM_A1 * cf_;                                                       \
      (KC).smw3cf[i_] = sm_ * (KC).w[i_] * LBM_A1 * cf_;                                 \
    }                                                                                    \
  } while (0)

#define LBM_COLLIDE_CONSTS                                                               \
  const LBM_K_T rho0 = k->rho0, inv_rho0 = k->inv_rho0, op = k->op, om = k->om;          \
  const LBM_K_T fx = LBM_KF(fx), fy = LBM_KF(fy), fz = LBM_KF(fz), hfx = LBM_KF(hfx),    \
                hfy = LBM_KF(hfy), hfz = LBM_KF(hfz);                                    \
  (void)rho0, (void)inv_rho0, (void)op, (void)om, (void)fx, (void)fy, (void)fz, (void)hfx, \
      (void)hfy, (void)hfz

/* Pressure outlets (lbm_kernels.h lbm_open_link_t): the non-equilibrium extrapolation of
 * Guo, Zheng and Shi (2002) to the ghost cell s half a cell beyond the face:
 *   OUT = FROM + e_I(rho_g, u_g) - e_I(rho, u),
 *   e_i(rho, u) = w_i (rho + rho0 (a c_i.u + a^2/2 (c_i.u)^2 - a/2 u.u)),
 * FROM the post-collision value of direction I of the cell next to s inwards, rho and u
 * the density and velocity of the link's fluid cell (LD1(i): its values), u2 that of the
 * cell next inwards from it (LD2(i)), u = (j - F/2) / rho0, rho_g = 2 rho_w - rho and
 * u_g = 2 u - u2 extrapolated linearly through the face. In two parts: LBM_OUTLET_CELL,
 * what a cell's links share (its stored density R, u as FX.., u_g as GX..), then
 * LBM_OUTLET_LINK per link. Explicit sums in direction order, REAL scalars; I a run-time
 * direction; EXTRA = 2 w_I (rho_w - shift), W2 = 2 w_I, WR0 = w_I rho0; HFX..HFZ: F/2,
 * INV_RHO0: 1/rho0. */
#define LBM_OUTLET_J(LD, R, JX, JY, JZ)                                                  \
  do {                                                                                   \
    int sx_ = 0, sy_ = 0, sz_ = 0;                                                       \
    R = LD(0);                                                                           \
    JX = (REAL)0;                                                                        \
    JY = (REAL)0;                                                                        \
    JZ = (REAL)0;                                                                        \
    LBM_UNROLL for (int i_ = 1; i_ < LAT(Q); ++i_) {                                     \
      const REAL v_ = LD(i_);                                                            \
      R = R + v_;                                                                        \
      LBM_SIGNED_ADD(JX, sx_, LAT_CX(i_), v_);                                           \
      LBM_SIGNED_ADD(JY, sy_, LAT_CY(i_), v_);                                           \
      if (LAT(D) == 3) LBM_SIGNED_ADD(JZ, sz_, LAT_CZ(i_), v_);                          \
    }                                                                                    \
  } while (0)
#define LBM_OUTLET_CELL(LD1, LD2, R, FX, FY, FZ, GX, GY, GZ, HFX, HFY, HFZ, INV_RHO0)    \
  do {                                                                                   \
    REAL ax_, ay_, az_, s_, bx_, by_, bz_;                                               \
    LBM_OUTLET_J(LD1, R, ax_, ay_, az_);                                                 \
    LBM_OUTLET_J(LD2, s_, bx_, by_, bz_);                                                \
    (void)s_;                                                                            \
    FX = (ax_ - (HFX)) * (INV_RHO0);                                                     \
    FY = (ay_ - (HFY)) * (INV_RHO0);                                                     \
    FZ = (az_ - (HFZ)) * (INV_RHO0);                                                     \
    GX = ((REAL)2 * ax_ - bx_ - (HFX)) * (INV_RHO0);                                     \
    GY = ((REAL)2 * ay_ - by_ - (HFY)) * (INV_RHO0);                                     \
    GZ = ((REAL)2 * az_ - bz_ - (HFZ)) * (INV_RHO0);                                     \
  } while (0)
#define LBM_OUTLET_LINK(OUT, I, FROM, EXTRA, W2, WR0, R, FX, FY, FZ, GX, GY, GZ)         \
  do {                                                                                   \
    const REAL cx_ = (REAL)LAT_CX(I), cy_ = (REAL)LAT_CY(I), cz_ = (REAL)LAT_CZ(I);      \
    const REAL cg_ = cx_ * (GX) + cy_ * (GY) + cz_ * (GZ);                               \
    const REAL cf_ = cx_ * (FX) + cy_ * (FY) + cz_ * (FZ);                               \
    const REAL eg_ =                                                                     \
        LAT(EQ) ? LBM_EQ13(I, cg_, GX, GY, GZ)                                           \
                : LBM_A1 * cg_ + (LBM_A2 * cg_ * cg_ - LBM_A3 * ((GX) * (GX) + (GY) * (GY) + (GZ) * (GZ))); \
    const REAL ef_ =                                                                     \
        LAT(EQ) ? LBM_EQ13(I, cf_, FX, FY, FZ)                                           \
                : LBM_A1 * cf_ + (LBM_A2 * cf_ * cf_ - LBM_A3 * ((FX) * (FX) + (FY) * (FY) + (FZ) * (FZ))); \
    OUT = (FROM) + (((EXTRA) - (W2) * (R)) + (WR0) * (eg_ - ef_));                       \
  } while (0)

#endif
