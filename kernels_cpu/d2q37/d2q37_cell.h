/* d2q37_cell.h: one cell of the thermal compressible D2Q37 model (Sbragaglia, Benzi,
 * Biferale, Chen, Shan & Succi, J. Fluid Mech. 628 (2009) 299; as run by Calore et al.,
 * 2016), written once for the CPU kernels (d2q37_kernels.c) and the OpenCL kernels
 * (kernels_gpu/d2q37.cl, whose program source is this file then the .cl file), so that
 * both evaluate the same expressions in the same order: with contraction into FMA off
 * and every FMA written out (D37_FMA, correctly rounded on both sides) they agree bit for
 * bit.
 *
 * Units: the cell is 1 and the step is 1 (lattice units) for positions and times; the
 * equations below are in thermal units, velocities in units of the lattice's c_s and
 * temperatures in units of the reference T0 = c_s^2: the lattice velocity c_i is
 * xi_i = S c_i with S = 1 / c_s = LATTICE_D2Q37_SCALE, and sum_i w_i xi_i xi_i = 1.
 *
 * Moments: rho = sum f_i, rho u = sum f_i xi_i, rho (2 T + u.u) = sum f_i xi_i.xi_i.
 * Equilibrium: the Maxwellian of (rho, u, T) projected on the Hermite polynomials to
 * fourth order, theta = T - 1, cu = xi_i.u, x2 = xi_i.xi_i (D = 2):
 *   f_eq_i = w_i rho [ 1 + cu + (cu^2 - u^2 + theta (x2 - 2)) / 2
 *            + (cu^3 - 3 u^2 cu + 3 theta cu (x2 - 4)) / 6
 *            + (cu^4 - 6 cu^2 u^2 + 3 u^4 + 6 theta (cu^2 (x2 - 6) - u^2 (x2 - 4))
 *               + 3 theta^2 (x2^2 - 8 x2 + 8)) / 24 ],
 * evaluated as the polynomial p0 + cu (p1 + cu (p2 + cu (1/6 + cu / 24))) whose
 * coefficients depend on the cell and on |c_i|^2 only (8 classes, D37_CLASSES). The
 * quadrature is exact to degree 9, so the moments of f_eq up to fourth order are those
 * of the Maxwellian.
 * Collision (BGK) with the body force g by shifted equilibrium fields (Sbragaglia et al.
 * 2009, eqs. 2.9-2.12): f_i <- f_i + (f_eq_i(rho, u + tau g, T + tau (1 - tau) g^2 / 2)
 * - f_i) / tau; the collision then adds rho g to the momentum and rho (g.u + g^2 / 2) to
 * the energy, and the hydrodynamic fields are u_H = u + g / 2, T_H = T + g^2 / 8 (before
 * the collision; after it u - g / 2 and T + g^2 / 8).
 *
 * In OpenCL C the build define D37_DOUBLE (0 or 1) picks REAL. In C the includer
 * defines D37_REAL (float or double), D37_FMA (fma or fmaf) and D37_FN(name), and may
 * include the file once per type. */
#ifdef __OPENCL_VERSION__
#pragma OPENCL FP_CONTRACT OFF
#if D37_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define D37_REAL double
#else
#define D37_REAL float
#endif
#define D37_FMA fma
#define D37_FN(name) name
#define D37_KQ __constant
#define D37_GQ __global
#define D37_IDX long
#else
#include <stddef.h>

#include "lattice_defs.h"
#define D37_KQ
#define D37_GQ
#define D37_IDX ptrdiff_t
#endif

#ifndef D2Q37_CELL_CONSTANTS
#define D2Q37_CELL_CONSTANTS
enum { D37_Q = 37, D37_CLASSES = 8 };
/* the class of |c_i|^2 (0, 1, 2, 4, 5, 8, 9, 10 -> 0..7) of each direction of
 * lattice_defs.h's D2Q37, and loops over the directions unrolled, so that every class
 * index is a constant */
#define D37_CLASS_TABLE                                                                  \
  0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, \
      7, 7, 7, 7, 7, 7, 7
#ifdef __OPENCL_VERSION__
#define D37_UNROLL _Pragma("unroll")
__constant int d37_cls[D37_Q] = {D37_CLASS_TABLE};
__constant int d37_cx[D37_Q] = {LATTICE_D2Q37_CX};
__constant int d37_cy[D37_Q] = {LATTICE_D2Q37_CY};
#else
#define D37_UNROLL _Pragma("GCC unroll 40")
static const int d37_cls[D37_Q] = {D37_CLASS_TABLE};
static const int d37_cx[D37_Q] = {LATTICE_D2Q37_CX};
static const int d37_cy[D37_Q] = {LATTICE_D2Q37_CY};
#endif
#endif

/* The constants of a run in the storage type (d2q37_constants on the host): per
 * direction the weight, xi_x and xi_y; per class of |c_i|^2 (d37_cls) x2 - 2, x2 - 4,
 * x2 - 6 and x2^2 - 8 x2 + 8; tau, omega = 1 / tau, the force's shifts tau g (thermal
 * units) and tau (1 - tau) g.g / 2; x2 per class; the temperatures of the walls at y-
 * (0) and y+ (1) and twice their velocity in the frame of the post-collision populations
 * (T_w - g.g / 8 and g, thermal units; d37_wall_ghosts). D37_KQ: the address space the
 * kernels read them from
 * (OpenCL: __constant). */
typedef struct D37_FN(d37_consts) {
  D37_REAL w[D37_Q], xx[D37_Q], xy[D37_Q];
  D37_REAL x2[D37_CLASSES];
  D37_REAL a[D37_CLASSES], b[D37_CLASSES], c[D37_CLASSES], h[D37_CLASSES];
  D37_REAL omega, sgx, sgy, st;
  D37_REAL wt[2], wgx, wgy;
} D37_FN(d37_consts_t);

/* The coefficients p0, p1, p2 of each class for (rho, ux, uy, T), the fields the
 * equilibrium is taken at (thermal units). */
/* The parts of the class coefficients common to every class. */
typedef struct D37_FN(d37_common) {
  D37_REAL q0, q1, q2, ht, qt, tu, t8;
} D37_FN(d37_common_t);

static inline D37_FN(d37_common_t) D37_FN(d37_common)(const D37_REAL ux, const D37_REAL uy,
                                                      const D37_REAL t) {
  const D37_REAL u2 = D37_FMA(ux, ux, uy * uy);
  const D37_REAL th = t - (D37_REAL)1;
  const D37_REAL hu = (D37_REAL)0.5 * u2;
  D37_FN(d37_common_t) c;
  c.q0 = D37_FMA((D37_REAL)0.125 * u2, u2, (D37_REAL)1 - hu);
  c.q1 = (D37_REAL)1 - hu;
  c.q2 = D37_FMA((D37_REAL)-0.25, u2, (D37_REAL)0.5);
  c.ht = (D37_REAL)0.5 * th;
  c.qt = (D37_REAL)0.25 * th;
  c.tu = c.qt * u2;
  c.t8 = (D37_REAL)0.125 * th * th;
  return c;
}

/* Class m's coefficients from the common parts c:
 * p0 = 1 - u2/2 + u2^2/8 + theta a/2 - theta u2 b/4 + theta^2 h/8,
 * p1 = 1 - u2/2 + theta b/2,  p2 = 1/2 - u2/4 + theta c/4. */
#define D37_CLASS_COEFS(c, k, m, P0, P1, P2)                                             \
  do {                                                                                   \
    (P0) = D37_FMA((c).t8, (k)->h[m],                                                    \
                   D37_FMA(-(c).tu, (k)->b[m], D37_FMA((c).ht, (k)->a[m], (c).q0)));     \
    (P1) = D37_FMA((c).ht, (k)->b[m], (c).q1);                                           \
    (P2) = D37_FMA((c).qt, (k)->c[m], (c).q2);                                           \
  } while (0)

static inline void D37_FN(d37_coefs)(const D37_REAL ux, const D37_REAL uy, const D37_REAL t,
                                      D37_KQ const D37_FN(d37_consts_t) * k, D37_REAL *p0,
                                      D37_REAL *p1, D37_REAL *p2) {
  const D37_FN(d37_common_t) c = D37_FN(d37_common)(ux, uy, t);
  D37_UNROLL
  for (int m = 0; m < D37_CLASSES; ++m) D37_CLASS_COEFS(c, k, m, p0[m], p1[m], p2[m]);
}

/* f_eq_i / (w_i rho) from the coefficients and cu = xi_i.u. */
static inline D37_REAL D37_FN(d37_poly)(const D37_REAL cu, const D37_REAL p0,
                                        const D37_REAL p1, const D37_REAL p2) {
  D37_REAL p = D37_FMA(cu, (D37_REAL)(1.0 / 24.0), (D37_REAL)(1.0 / 6.0));
  p = D37_FMA(cu, p, p2);
  p = D37_FMA(cu, p, p1);
  return D37_FMA(cu, p, p0);
}

/* f_eq_i of rho and the velocity (ux, uy) whose class coefficients are p0, p1, p2. */
static inline D37_REAL D37_FN(d37_feq)(D37_KQ const D37_FN(d37_consts_t) * k, const int i,
                                       const D37_REAL rho, const D37_REAL ux,
                                       const D37_REAL uy, const D37_REAL *p0,
                                       const D37_REAL *p1, const D37_REAL *p2) {
  const int m = d37_cls[i];
  const D37_REAL cu = D37_FMA(k->xx[i], ux, k->xy[i] * uy);
  return (k->w[i] * rho) * D37_FN(d37_poly)(cu, p0[m], p1[m], p2[m]);
}

/* The moments of f[0..Q): rho, u (thermal units) and T. */
/* Population F of velocity (CX, CY) (thermal units) and |xi|^2 C2 into the sums R, JX,
 * JY, E of the moments; the velocity VX, VY and temperature T of the sums. */
#define D37_MOMENT_ADD(F, CX, CY, C2, R, JX, JY, E)                                      \
  do {                                                                                   \
    (R) += (F);                                                                          \
    (JX) = D37_FMA((F), (CX), (JX));                                                     \
    (JY) = D37_FMA((F), (CY), (JY));                                                     \
    (E) = D37_FMA((F), (C2), (E));                                                       \
  } while (0)
#define D37_MOMENT_FIELDS(R, JX, JY, E, VX, VY, T)                                       \
  do {                                                                                   \
    const D37_REAL inv_ = (D37_REAL)1 / (R);                                             \
    (VX) = (JX) * inv_;                                                                  \
    (VY) = (JY) * inv_;                                                                  \
    (T) = (D37_REAL)0.5 * D37_FMA((E), inv_, -D37_FMA((VX), (VX), (VY) * (VY)));          \
  } while (0)

static inline void D37_FN(d37_moments)(D37_KQ const D37_FN(d37_consts_t) * k,
                                       const D37_REAL *f, D37_REAL *rho, D37_REAL *ux,
                                       D37_REAL *uy, D37_REAL *t) {
  D37_REAL r = f[0], jx = (D37_REAL)0, jy = (D37_REAL)0, e = (D37_REAL)0;
  D37_UNROLL
  for (int i = 1; i < D37_Q; ++i)
    D37_MOMENT_ADD(f[i], k->xx[i], k->xy[i], k->x2[d37_cls[i]], r, jx, jy, e);
  D37_REAL vx, vy, tt;
  D37_MOMENT_FIELDS(r, jx, jy, e, vx, vy, tt);
  *rho = r;
  *ux = vx;
  *uy = vy;
  *t = tt;
}

/* f_eq of (rho, ux, uy, T) into feq[0..Q). */
static inline void D37_FN(d37_equilibrium)(D37_KQ const D37_FN(d37_consts_t) * k,
                                           const D37_REAL rho,
                                           const D37_REAL ux, const D37_REAL uy,
                                           const D37_REAL t, D37_REAL *feq) {
  D37_REAL p0[D37_CLASSES], p1[D37_CLASSES], p2[D37_CLASSES];
  D37_FN(d37_coefs)(ux, uy, t, k, p0, p1, p2);
  D37_UNROLL
  for (int i = 0; i < D37_Q; ++i) feq[i] = D37_FN(d37_feq)(k, i, rho, ux, uy, p0, p1, p2);
}

/* The collision of one cell: f[0..Q) pulled in, relaxed in place. */
static inline void D37_FN(d37_collide)(D37_KQ const D37_FN(d37_consts_t) * k, D37_REAL *f) {
  D37_REAL rho, ux, uy, t;
  D37_FN(d37_moments)(k, f, &rho, &ux, &uy, &t);
  const D37_REAL ex = ux + k->sgx, ey = uy + k->sgy, et = t + k->st;
  D37_REAL p0[D37_CLASSES], p1[D37_CLASSES], p2[D37_CLASSES];
  D37_FN(d37_coefs)(ex, ey, et, k, p0, p1, p2);
  D37_UNROLL
  for (int i = 0; i < D37_Q; ++i) {
    const D37_REAL feq = D37_FN(d37_feq)(k, i, rho, ex, ey, p0, p1, p2);
    f[i] = D37_FMA(k->omega, feq - f[i], f[i]);
  }
}

#ifndef __OPENCL_VERSION__
/* The collision of a tile of D37_W cells (a 64-byte vector of each population: 8 in
 * double, 16 in single precision; tiles of two vectors measured slower), f[i][lane]:
 * d37_collide's operations in its order, lane by lane, each loop over the lanes one
 * vector operation. The CPU kernels run this form (GCC does not vectorise d37_collide's
 * per-cell arrays across the cells of an `omp simd` loop); every lane computes bitwise
 * what d37_collide computes. */
#ifndef D37_W
#ifndef D37_TILE_BYTES
#define D37_TILE_BYTES 64
#endif
#define D37_W ((int)(D37_TILE_BYTES / sizeof(D37_REAL)))
#define D37_LANES _Pragma("omp simd") for (int l = 0; l < D37_W; ++l)
#endif
static inline void D37_FN(d37_collide_tile)(const D37_FN(d37_consts_t) * k,
                                            D37_REAL (*restrict f)[D37_W]) {
  _Alignas(64) D37_REAL r[D37_W], jx[D37_W], jy[D37_W], e[D37_W];
  D37_LANES {
    r[l] = f[0][l];
    jx[l] = jy[l] = e[l] = (D37_REAL)0;
  }
  D37_UNROLL
  for (int i = 1; i < D37_Q; ++i) {
    const D37_REAL cx = k->xx[i], cy = k->xy[i], c2 = k->x2[d37_cls[i]];
    D37_LANES D37_MOMENT_ADD(f[i][l], cx, cy, c2, r[l], jx[l], jy[l], e[l]);
  }
  /* the moments, the shifted fields and the class coefficients (d37_coefs) */
  _Alignas(64) D37_REAL ex[D37_W], ey[D37_W];
  _Alignas(64) D37_REAL p0[D37_CLASSES][D37_W], p1[D37_CLASSES][D37_W], p2[D37_CLASSES][D37_W];
  D37_LANES {
    D37_REAL vx, vy, t;
    D37_MOMENT_FIELDS(r[l], jx[l], jy[l], e[l], vx, vy, t);
    const D37_REAL ux = vx + k->sgx, uy = vy + k->sgy, et = t + k->st;
    ex[l] = ux;
    ey[l] = uy;
    const D37_FN(d37_common_t) c = D37_FN(d37_common)(ux, uy, et);
    D37_UNROLL
    for (int m = 0; m < D37_CLASSES; ++m) D37_CLASS_COEFS(c, k, m, p0[m][l], p1[m][l], p2[m][l]);
  }
  D37_UNROLL
  for (int i = 0; i < D37_Q; ++i) {
    const int m = d37_cls[i];
    const D37_REAL cx = k->xx[i], cy = k->xy[i], w = k->w[i], om = k->omega;
    D37_LANES {
      const D37_REAL cu = D37_FMA(cx, ex[l], cy * ey[l]);
      const D37_REAL feq = (w * r[l]) * D37_FN(d37_poly)(cu, p0[m][l], p1[m][l], p2[m][l]);
      f[i][l] = D37_FMA(om, feq - f[i][l], f[i][l]);
    }
  }
}
#endif

/* The ghost rows of one wall (side 0: y-, rows -1, -2, -3 below row 0; side 1: y+, rows
 * ny, ny + 1, ny + 2 above row ny - 1) for the column of the cell at element c of row 0
 * (row stride sy, component stride sc), written into src before the step pulls from
 * them (physics.md, "Walls"). Ghost row j (j + 1 cells beyond the wall, j < 3) mirrors
 * the fluid row j cells inside the wall (the wall half-way between the two rows next to
 * it): the temperature 2 T_w - T_j and the velocity -u_j (in the frame of the
 * post-collision populations: the wall's rest and T_w shifted by the force as in
 * d2q37_init), the fluid row's pressure, and the fluid row's non-equilibrium part
 * (f_i - f_eq_i, the same direction: non-equilibrium extrapolation). The ghost
 * equilibria are then scaled by one factor so that the wall returns into the column the
 * mass that left the fluid into the wall from it in the step (the populations that stream
 * beyond the wall landing in this column): no mass crosses a wall. Population i of
 * ghost row j of this column goes where the column's cells pull it from, c_x cells to
 * the side, so that the step pulls every row alike. Reads rows 0..2 (and their
 * neighbours along x) only and writes beyond the wall only, so columns may run in any
 * order. */
static inline void D37_FN(d37_wall_ghosts)(D37_KQ const D37_FN(d37_consts_t) * k,
                                           D37_GQ D37_REAL *src, const D37_IDX c,
                                           const D37_IDX sy, const D37_IDX sc, const int ny,
                                           const int side) {
  const int dir = side == 0 ? 1 : -1; /* the wall's inward normal along y */
  D37_REAL eq[3 * D37_Q], neq[3 * D37_Q], f[D37_Q], rho, ux, uy, t;
  D37_REAL a = (D37_REAL)0, bsum = (D37_REAL)0, out = (D37_REAL)0;
  for (int j = 0; j < 3; ++j) {
    const D37_IDX cj = c + sy * (D37_IDX)(side == 0 ? j : ny - 1 - j);
    for (int i = 0; i < D37_Q; ++i) f[i] = src[cj + (D37_IDX)i * sc];
    D37_FN(d37_moments)(k, f, &rho, &ux, &uy, &t);
    D37_FN(d37_equilibrium)(k, rho, ux, uy, t, neq + j * D37_Q);
    const D37_REAL tg = (D37_REAL)2 * k->wt[side] - t;
    D37_FN(d37_equilibrium)(k, rho * t / tg, k->wgx - ux, k->wgy - uy, tg, eq + j * D37_Q);
    for (int i = 0; i < D37_Q; ++i) {
      neq[j * D37_Q + i] = f[i] - neq[j * D37_Q + i];
      if (dir * d37_cy[i] > j) { /* enters the fluid from ghost row j */
        a += eq[j * D37_Q + i];
        bsum += neq[j * D37_Q + i];
      }
      /* what streams beyond the wall from fluid row j into this column */
      if (-dir * d37_cy[i] > j) out += src[cj + (D37_IDX)i * sc - d37_cx[i]];
    }
  }
  /* the scale of the ghost equilibria: a s + bsum = out */
  const D37_REAL s = (out - bsum) / a;
  for (int j = 0; j < 3; ++j) {
    const D37_IDX gj = c + sy * (D37_IDX)(side == 0 ? -1 - j : ny + j);
    for (int i = 0; i < D37_Q; ++i)
      src[gj + (D37_IDX)i * sc - d37_cx[i]] = D37_FMA(s, eq[j * D37_Q + i], neq[j * D37_Q + i]);
  }
}
