/* lattice_defs.h: the velocity sets as data, for C and OpenCL C alike (macros only).
 *
 * For each lattice L (D2Q9, D3Q7, D3Q13, D3Q15, D3Q19, D3Q27; D2Q37 below, outside
 * LATTICE_LIST):
 *   LATTICE_L_D        dimension (2 or 3; a 2-D lattice has c_z = 0)
 *   LATTICE_L_Q        number of velocities
 *   LATTICE_L_REACH    largest |c_i| component (the ghost width its streaming needs)
 *   LATTICE_L_INV_CS2  1 / c_s^2, an integer (3 for the flow lattices, 4 for D3Q7)
 *   LATTICE_L_CX, _CY, _CZ  the components of c_0 .. c_{Q-1}, initializer lists
 *   LATTICE_L_INV      the direction with c = -c_i, per i
 *   LATTICE_L_W        the weights w_i (double literals; host code only)
 *   LATTICE_L_EQ       0: the equilibrium is the polynomial of the weights (lbm_collide.h);
 *                      1: D3Q13's, whose second-order moments are set in moment space
 *                      (its weights' fourth moments are not isotropic: MRT only)
 *   LATTICE_L_SHEAR_CS2(K)  for a shear moment K of the MRT basis (below), the factor
 *                      kappa of nu = kappa (1/s_K - 1/2): c_s^2, except D3Q13's
 * c_0 = 0; the other directions come in pairs (i, inverse of i), the first of a pair
 * before the second. D3Q19 is D3Q27 without its corners, in the same order.
 * Weights: Qian, d'Humieres & Lallemand (1992); D3Q7 with c_s^2 = 1/4 as used for
 * advection-diffusion (Krueger et al., The Lattice Boltzmann Method, 2017, ch. 8); D3Q13
 * (rest and the 12 face diagonals): d'Humieres, Bouzidi & Lallemand, Phys. Rev. E 63,
 * 066702 (2001), c_s^2 = 1/3, w = 1/2 and 1/24 (the rest and first-order moments of its
 * moment-space equilibrium).
 *
 * A kernel template picks one lattice with LATTICE_NAME (e.g. `#define LATTICE_NAME
 * D3Q19`; OpenCL programs get it in their -D prelude) and reads it through LAT(Q),
 * LAT(CX), ... */
#ifndef LATTICE_DEFS_H
#define LATTICE_DEFS_H

#define LATTICE_CAT3_(a, b, c) a##b##c
#define LATTICE_CAT3(a, b, c) LATTICE_CAT3_(a, b, c)
/* LAT(Q) -> LATTICE_<LATTICE_NAME>_Q, once LATTICE_NAME is defined. */
#define LAT(field) LATTICE_CAT3(LATTICE_, LATTICE_NAME, _##field)

/* Every lattice, as X(lower-case name, upper-case name). */
#define LATTICE_LIST(X)                                                                  \
  X(d2q9, D2Q9) X(d3q7, D3Q7) X(d3q13, D3Q13) X(d3q15, D3Q15) X(d3q19, D3Q19) X(d3q27, D3Q27)
#define LATTICE_MAX_Q 27

/* D2Q9: rest, 4 axes, 4 diagonals */
#define LATTICE_D2Q9_D 2
#define LATTICE_D2Q9_Q 9
#define LATTICE_D2Q9_REACH 1
#define LATTICE_D2Q9_INV_CS2 3
#define LATTICE_D2Q9_CX 0, 1, -1, 0, 0, 1, -1, 1, -1
#define LATTICE_D2Q9_CY 0, 0, 0, 1, -1, 1, -1, -1, 1
#define LATTICE_D2Q9_CZ 0, 0, 0, 0, 0, 0, 0, 0, 0
#define LATTICE_D2Q9_INV 0, 2, 1, 4, 3, 6, 5, 8, 7
#define LATTICE_D2Q9_W                                                                   \
  4.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36

/* D3Q7: rest and the 6 axes (advection-diffusion, c_s^2 = 1/4) */
#define LATTICE_D3Q7_D 3
#define LATTICE_D3Q7_Q 7
#define LATTICE_D3Q7_REACH 1
#define LATTICE_D3Q7_INV_CS2 4
#define LATTICE_D3Q7_CX 0, 1, -1, 0, 0, 0, 0
#define LATTICE_D3Q7_CY 0, 0, 0, 1, -1, 0, 0
#define LATTICE_D3Q7_CZ 0, 0, 0, 0, 0, 1, -1
#define LATTICE_D3Q7_INV 0, 2, 1, 4, 3, 6, 5
#define LATTICE_D3Q7_W 1.0 / 4, 1.0 / 8, 1.0 / 8, 1.0 / 8, 1.0 / 8, 1.0 / 8, 1.0 / 8

/* D3Q15: rest, 6 axes, 8 space diagonals */
#define LATTICE_D3Q15_D 3
#define LATTICE_D3Q15_Q 15
#define LATTICE_D3Q15_REACH 1
#define LATTICE_D3Q15_INV_CS2 3
#define LATTICE_D3Q15_CX 0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 1, -1, -1, 1
#define LATTICE_D3Q15_CY 0, 0, 0, 1, -1, 0, 0, 1, -1, 1, -1, -1, 1, 1, -1
#define LATTICE_D3Q15_CZ 0, 0, 0, 0, 0, 1, -1, 1, -1, -1, 1, 1, -1, 1, -1
#define LATTICE_D3Q15_INV 0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13
#define LATTICE_D3Q15_W                                                                  \
  2.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 72, 1.0 / 72,     \
      1.0 / 72, 1.0 / 72, 1.0 / 72, 1.0 / 72, 1.0 / 72, 1.0 / 72

/* D3Q19: rest, 6 axes, 12 face diagonals */
#define LATTICE_D3Q19_D 3
#define LATTICE_D3Q19_Q 19
#define LATTICE_D3Q19_REACH 1
#define LATTICE_D3Q19_INV_CS2 3
#define LATTICE_D3Q19_CX 0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 1, -1, 1, -1, 0, 0, 0, 0
#define LATTICE_D3Q19_CY 0, 0, 0, 1, -1, 0, 0, 1, -1, -1, 1, 0, 0, 0, 0, 1, -1, 1, -1
#define LATTICE_D3Q19_CZ 0, 0, 0, 0, 0, 1, -1, 0, 0, 0, 0, 1, -1, -1, 1, 1, -1, -1, 1
#define LATTICE_D3Q19_INV 0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, 16, 15, 18, 17
#define LATTICE_D3Q19_W                                                                  \
  1.0 / 3, 1.0 / 18, 1.0 / 18, 1.0 / 18, 1.0 / 18, 1.0 / 18, 1.0 / 18, 1.0 / 36, 1.0 / 36, \
      1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36,      \
      1.0 / 36, 1.0 / 36

/* D3Q27: D3Q19, then the 8 space diagonals */
#define LATTICE_D3Q27_D 3
#define LATTICE_D3Q27_Q 27
#define LATTICE_D3Q27_REACH 1
#define LATTICE_D3Q27_INV_CS2 3
#define LATTICE_D3Q27_CX LATTICE_D3Q19_CX, 1, -1, 1, -1, 1, -1, -1, 1
#define LATTICE_D3Q27_CY LATTICE_D3Q19_CY, 1, -1, 1, -1, -1, 1, 1, -1
#define LATTICE_D3Q27_CZ LATTICE_D3Q19_CZ, 1, -1, -1, 1, 1, -1, 1, -1
#define LATTICE_D3Q27_INV LATTICE_D3Q19_INV, 20, 19, 22, 21, 24, 23, 26, 25
#define LATTICE_D3Q27_W                                                                  \
  8.0 / 27, 2.0 / 27, 2.0 / 27, 2.0 / 27, 2.0 / 27, 2.0 / 27, 2.0 / 27, 1.0 / 54, 1.0 / 54, \
      1.0 / 54, 1.0 / 54, 1.0 / 54, 1.0 / 54, 1.0 / 54, 1.0 / 54, 1.0 / 54, 1.0 / 54,      \
      1.0 / 54, 1.0 / 54, 1.0 / 216, 1.0 / 216, 1.0 / 216, 1.0 / 216, 1.0 / 216,            \
      1.0 / 216, 1.0 / 216, 1.0 / 216

/* D3Q13: rest and the 12 face diagonals (d'Humieres, Bouzidi & Lallemand 2001). Its two
 * sublattices (x + y + z even and odd) do not exchange populations: each is a D3Q13 flow
 * of its own on a lattice sqrt(2) coarser, coupled only through walls and the initial
 * field (a smooth start keeps them alike). */
#define LATTICE_D3Q13_D 3
#define LATTICE_D3Q13_Q 13
#define LATTICE_D3Q13_REACH 1
#define LATTICE_D3Q13_INV_CS2 3
#define LATTICE_D3Q13_CX 0, 1, -1, 1, -1, 1, -1, 1, -1, 0, 0, 0, 0
#define LATTICE_D3Q13_CY 0, 1, -1, -1, 1, 0, 0, 0, 0, 1, -1, 1, -1
#define LATTICE_D3Q13_CZ 0, 0, 0, 0, 0, 1, -1, -1, 1, 1, -1, -1, 1
#define LATTICE_D3Q13_INV 0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11
#define LATTICE_D3Q13_W                                                                  \
  1.0 / 2, 1.0 / 24, 1.0 / 24, 1.0 / 24, 1.0 / 24, 1.0 / 24, 1.0 / 24, 1.0 / 24, 1.0 / 24, \
      1.0 / 24, 1.0 / 24, 1.0 / 24, 1.0 / 24

/* The equilibria (LATTICE_L_EQ) and the shear moments' viscosity factors. */
#define LATTICE_D2Q9_EQ 0
#define LATTICE_D3Q7_EQ 0
#define LATTICE_D3Q13_EQ 1
#define LATTICE_D3Q15_EQ 0
#define LATTICE_D3Q19_EQ 0
#define LATTICE_D3Q27_EQ 0
#define LATTICE_D2Q9_SHEAR_CS2(K) (1.0 / 3)
#define LATTICE_D3Q7_SHEAR_CS2(K) (1.0 / 4)
#define LATTICE_D3Q15_SHEAR_CS2(K) (1.0 / 3)
#define LATTICE_D3Q19_SHEAR_CS2(K) (1.0 / 3)
#define LATTICE_D3Q27_SHEAR_CS2(K) (1.0 / 3)
/* D3Q13 (d'Humieres et al. 2001): the diagonal moments 3pxx and pww relax with
 * s = 2 / (8 nu + 1), the off-diagonal pxy, pyz, pxz with 2 / (4 nu + 1) */
#define LATTICE_D3Q13_SHEAR_CS2(K) ((K) == 5 || (K) == 6 ? 1.0 / 4 : 1.0 / 2)

/* The orthogonal moment bases of the multiple-relaxation-time collision (lbm_collide.h):
 * for each lattice L of LATTICE_LIST, LATTICE_L_MOMENT(K, X, Y, Z), the integer value of
 * moment K (0 <= K < Q) for the velocity c = (X, Y, Z), and LATTICE_L_MOMENT_CLASS(K), which
 * rate relaxes it (LATTICE_MOMENT_*). The rows M_K = (MOMENT(K, c_i))_i are orthogonal
 * (sum_i M_Ki M_Li = 0 for K != L) and complete (Q rows), so
 * sum_K M_K M_K^T / |M_K|^2 is the identity. Integer arithmetic, constant-folded where
 * K and c are constants. C2 is |c|^2.
 *   D2Q9:  Lallemand & Luo, Phys. Rev. E 61, 6546 (2000): rho, e, eps, jx, qx, jy, qy,
 *          pxx, pxy.
 *   D3Q15, D3Q19: d'Humieres, Ginzburg, Krafczyk, Lallemand & Luo, Phil. Trans. R. Soc.
 *          Lond. A 360, 437 (2002): rho, e, eps, jx, qx, jy, qy, jz, qz, 3pxx, (3pixx),
 *          pww, (piww), pxy, pyz, pxz, then mxyz (D3Q15) or mx, my, mz (D3Q19).
 *   D3Q27: the products P_a(cx) P_b(cy) P_c(cz) of the 1-D basis P_0 = 1, P_1 = c,
 *          P_2 = 3c^2 - 2 (orthogonal on {-1, 0, 1}), the three second-order P_2 turned
 *          into the trace 3|c|^2 - 6 and two deviators: rho, j, the trace, cx^2 - cy^2,
 *          cx^2 + cy^2 - 2cz^2, cxcy, cycz, cxcz, then the third order (classed q: cx P_2(cy),
 *          cx P_2(cz), cy P_2(cx), cy P_2(cz), cz P_2(cx), cz P_2(cy), cxcycz), the fourth
 *          (pi: P_2 P_2 pairs, cxcy P_2(cz), cycz P_2(cx), cxcz P_2(cy)), the fifth (m) and
 *          the sixth (eps).
 *   D3Q7 (advection-diffusion only): rho, j, 6 - 7|c|^2, 3cx^2 - |c|^2, cy^2 - cz^2.
 *   D3Q13: d'Humieres, Bouzidi & Lallemand (2001): rho, e = 13|c|^2/2 - 12, j, 3pxx,
 *          pww, pxy, pyz, pxz, then the third order mx, my, mz (cx (cy^2 - cz^2), ...).
 * Classes: CONSERVED (density, momentum: not relaxed), SHEAR (the traceless second-order
 * moments: the viscosity's rate), BULK (the trace, e: the bulk viscosity's), and the
 * non-hydrodynamic ("ghost") moments EPSILON, Q (energy flux), PI and M. */
#define LATTICE_MOMENT_CONSERVED 0
#define LATTICE_MOMENT_SHEAR 1
#define LATTICE_MOMENT_BULK 2
#define LATTICE_MOMENT_EPSILON 3
#define LATTICE_MOMENT_Q 4
#define LATTICE_MOMENT_PI 5
#define LATTICE_MOMENT_M 6
#define LATTICE_MOMENT_CLASSES 7
#define LATTICE_C2_(X, Y, Z) ((X) * (X) + (Y) * (Y) + (Z) * (Z))
#define LATTICE_P2_(C) (3 * (C) * (C) - 2)

#define LATTICE_D2Q9_MOMENT(K, X, Y, Z)                                                   \
  ((K) == 0   ? 1                                                                         \
   : (K) == 1 ? 3 * LATTICE_C2_(X, Y, Z) - 4                                              \
   : (K) == 2 ? (9 * LATTICE_C2_(X, Y, Z) * LATTICE_C2_(X, Y, Z) - 21 * LATTICE_C2_(X, Y, Z) + 8) / 2 \
   : (K) == 3 ? (X)                                                                       \
   : (K) == 4 ? (3 * LATTICE_C2_(X, Y, Z) - 5) * (X)                                      \
   : (K) == 5 ? (Y)                                                                       \
   : (K) == 6 ? (3 * LATTICE_C2_(X, Y, Z) - 5) * (Y)                                      \
   : (K) == 7 ? (X) * (X) - (Y) * (Y)                                                     \
              : (X) * (Y))
#define LATTICE_D2Q9_MOMENT_CLASS(K)                                                      \
  ((K) == 1 ? 2 : (K) == 2 ? 3 : (K) == 4 || (K) == 6 ? 4 : (K) >= 7 ? 1 : 0)

#define LATTICE_D3Q7_MOMENT(K, X, Y, Z)                                                   \
  ((K) == 0   ? 1                                                                         \
   : (K) == 1 ? (X)                                                                       \
   : (K) == 2 ? (Y)                                                                       \
   : (K) == 3 ? (Z)                                                                       \
   : (K) == 4 ? 6 - 7 * LATTICE_C2_(X, Y, Z)                                              \
   : (K) == 5 ? 3 * (X) * (X) - LATTICE_C2_(X, Y, Z)                                      \
              : (Y) * (Y) - (Z) * (Z))
#define LATTICE_D3Q7_MOMENT_CLASS(K) ((K) == 4 ? 2 : (K) >= 5 ? 1 : 0)

#define LATTICE_D3Q13_MOMENT(K, X, Y, Z)                                                  \
  ((K) == 0    ? 1                                                                        \
   : (K) == 1  ? 13 * LATTICE_C2_(X, Y, Z) / 2 - 12                                       \
   : (K) == 2  ? (X)                                                                      \
   : (K) == 3  ? (Y)                                                                      \
   : (K) == 4  ? (Z)                                                                      \
   : (K) == 5  ? 3 * (X) * (X) - LATTICE_C2_(X, Y, Z)                                     \
   : (K) == 6  ? (Y) * (Y) - (Z) * (Z)                                                    \
   : (K) == 7  ? (X) * (Y)                                                                \
   : (K) == 8  ? (Y) * (Z)                                                                \
   : (K) == 9  ? (X) * (Z)                                                                \
   : (K) == 10 ? ((Y) * (Y) - (Z) * (Z)) * (X)                                            \
   : (K) == 11 ? ((Z) * (Z) - (X) * (X)) * (Y)                                            \
               : ((X) * (X) - (Y) * (Y)) * (Z))
#define LATTICE_D3Q13_MOMENT_CLASS(K) ((K) == 1 ? 2 : (K) >= 10 ? 6 : (K) >= 5 ? 1 : 0)

#define LATTICE_D3Q15_MOMENT(K, X, Y, Z)                                                  \
  ((K) == 0    ? 1                                                                        \
   : (K) == 1  ? LATTICE_C2_(X, Y, Z) - 2                                                 \
   : (K) == 2  ? (15 * LATTICE_C2_(X, Y, Z) * LATTICE_C2_(X, Y, Z) - 55 * LATTICE_C2_(X, Y, Z) + 32) / 2 \
   : (K) == 3  ? (X)                                                                      \
   : (K) == 4  ? (5 * LATTICE_C2_(X, Y, Z) - 13) * (X) / 2                                \
   : (K) == 5  ? (Y)                                                                      \
   : (K) == 6  ? (5 * LATTICE_C2_(X, Y, Z) - 13) * (Y) / 2                                \
   : (K) == 7  ? (Z)                                                                      \
   : (K) == 8  ? (5 * LATTICE_C2_(X, Y, Z) - 13) * (Z) / 2                                \
   : (K) == 9  ? 3 * (X) * (X) - LATTICE_C2_(X, Y, Z)                                     \
   : (K) == 10 ? (Y) * (Y) - (Z) * (Z)                                                    \
   : (K) == 11 ? (X) * (Y)                                                                \
   : (K) == 12 ? (Y) * (Z)                                                                \
   : (K) == 13 ? (X) * (Z)                                                                \
               : (X) * (Y) * (Z))
#define LATTICE_D3Q15_MOMENT_CLASS(K)                                                     \
  ((K) == 1 ? 2 : (K) == 2 ? 3 : (K) == 4 || (K) == 6 || (K) == 8 ? 4 : (K) == 14 ? 6     \
   : (K) >= 9 ? 1 : 0)

#define LATTICE_D3Q19_MOMENT(K, X, Y, Z)                                                  \
  ((K) == 0    ? 1                                                                        \
   : (K) == 1  ? 19 * LATTICE_C2_(X, Y, Z) - 30                                           \
   : (K) == 2  ? (21 * LATTICE_C2_(X, Y, Z) * LATTICE_C2_(X, Y, Z) - 53 * LATTICE_C2_(X, Y, Z) + 24) / 2 \
   : (K) == 3  ? (X)                                                                      \
   : (K) == 4  ? (5 * LATTICE_C2_(X, Y, Z) - 9) * (X)                                     \
   : (K) == 5  ? (Y)                                                                      \
   : (K) == 6  ? (5 * LATTICE_C2_(X, Y, Z) - 9) * (Y)                                     \
   : (K) == 7  ? (Z)                                                                      \
   : (K) == 8  ? (5 * LATTICE_C2_(X, Y, Z) - 9) * (Z)                                     \
   : (K) == 9  ? 3 * (X) * (X) - LATTICE_C2_(X, Y, Z)                                     \
   : (K) == 10 ? (3 * LATTICE_C2_(X, Y, Z) - 5) * (3 * (X) * (X) - LATTICE_C2_(X, Y, Z))  \
   : (K) == 11 ? (Y) * (Y) - (Z) * (Z)                                                    \
   : (K) == 12 ? (3 * LATTICE_C2_(X, Y, Z) - 5) * ((Y) * (Y) - (Z) * (Z))                 \
   : (K) == 13 ? (X) * (Y)                                                                \
   : (K) == 14 ? (Y) * (Z)                                                                \
   : (K) == 15 ? (X) * (Z)                                                                \
   : (K) == 16 ? ((Y) * (Y) - (Z) * (Z)) * (X)                                            \
   : (K) == 17 ? ((Z) * (Z) - (X) * (X)) * (Y)                                            \
               : ((X) * (X) - (Y) * (Y)) * (Z))
#define LATTICE_D3Q19_MOMENT_CLASS(K)                                                     \
  ((K) == 1 ? 2 : (K) == 2 ? 3 : (K) == 4 || (K) == 6 || (K) == 8 ? 4                    \
   : (K) == 10 || (K) == 12 ? 5 : (K) >= 16 ? 6 : (K) >= 9 ? 1 : 0)

#define LATTICE_D3Q27_MOMENT(K, X, Y, Z)                                                  \
  ((K) == 0    ? 1                                                                        \
   : (K) == 1  ? (X)                                                                      \
   : (K) == 2  ? (Y)                                                                      \
   : (K) == 3  ? (Z)                                                                      \
   : (K) == 4  ? 3 * LATTICE_C2_(X, Y, Z) - 6                                             \
   : (K) == 5  ? (X) * (X) - (Y) * (Y)                                                    \
   : (K) == 6  ? (X) * (X) + (Y) * (Y) - 2 * (Z) * (Z)                                    \
   : (K) == 7  ? (X) * (Y)                                                                \
   : (K) == 8  ? (Y) * (Z)                                                                \
   : (K) == 9  ? (X) * (Z)                                                                \
   : (K) == 10 ? (X) * LATTICE_P2_(Y)                                                     \
   : (K) == 11 ? (X) * LATTICE_P2_(Z)                                                     \
   : (K) == 12 ? (Y) * LATTICE_P2_(X)                                                     \
   : (K) == 13 ? (Y) * LATTICE_P2_(Z)                                                     \
   : (K) == 14 ? (Z) * LATTICE_P2_(X)                                                     \
   : (K) == 15 ? (Z) * LATTICE_P2_(Y)                                                     \
   : (K) == 16 ? (X) * (Y) * (Z)                                                          \
   : (K) == 17 ? LATTICE_P2_(X) * LATTICE_P2_(Y)                                          \
   : (K) == 18 ? LATTICE_P2_(Y) * LATTICE_P2_(Z)                                          \
   : (K) == 19 ? LATTICE_P2_(X) * LATTICE_P2_(Z)                                          \
   : (K) == 20 ? (X) * (Y) * LATTICE_P2_(Z)                                               \
   : (K) == 21 ? (Y) * (Z) * LATTICE_P2_(X)                                               \
   : (K) == 22 ? (X) * (Z) * LATTICE_P2_(Y)                                               \
   : (K) == 23 ? (X) * LATTICE_P2_(Y) * LATTICE_P2_(Z)                                    \
   : (K) == 24 ? (Y) * LATTICE_P2_(X) * LATTICE_P2_(Z)                                    \
   : (K) == 25 ? (Z) * LATTICE_P2_(X) * LATTICE_P2_(Y)                                    \
               : LATTICE_P2_(X) * LATTICE_P2_(Y) * LATTICE_P2_(Z))
#define LATTICE_D3Q27_MOMENT_CLASS(K)                                                     \
  ((K) == 4 ? 2 : (K) >= 5 && (K) <= 9 ? 1 : (K) >= 10 && (K) <= 16 ? 4                  \
   : (K) >= 17 && (K) <= 22 ? 5 : (K) >= 23 && (K) <= 25 ? 6 : (K) == 26 ? 3 : 0)

/* The moment basis as a table of integer constants, for kernels that read it with
 * constant indices in unrolled loops (an array load folds to its literal; the
 * MOMENT macros' chains of conditionals, expanded Q^2 times, took the OpenCL compilers
 * seconds to fold): LATTICE_MOMENT_TABLE, the initializer of an int
 * [LATTICE_MAX_Q][LATTICE_MAX_Q] whose entry [K][I] is moment K of c_I of the lattice
 * LATTICE_NAME (zero outside Q x Q). LATTICE_ARG<n> picks the n-th of its arguments;
 * LATTICE_PAD_ pads a list of fewer than LATTICE_MAX_Q values. */
#define LATTICE_PAD_                                                                     \
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
#define LATTICE_ARG0(a0, ...) a0
#define LATTICE_ARG1(a0, a1, ...) a1
#define LATTICE_ARG2(a0, a1, a2, ...) a2
#define LATTICE_ARG3(a0, a1, a2, a3, ...) a3
#define LATTICE_ARG4(a0, a1, a2, a3, a4, ...) a4
#define LATTICE_ARG5(a0, a1, a2, a3, a4, a5, ...) a5
#define LATTICE_ARG6(a0, a1, a2, a3, a4, a5, a6, ...) a6
#define LATTICE_ARG7(a0, a1, a2, a3, a4, a5, a6, a7, ...) a7
#define LATTICE_ARG8(a0, a1, a2, a3, a4, a5, a6, a7, a8, ...) a8
#define LATTICE_ARG9(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, ...) a9
#define LATTICE_ARG10(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, ...) a10
#define LATTICE_ARG11(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, ...) a11
#define LATTICE_ARG12(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, ...) a12
#define LATTICE_ARG13(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, ...) a13
#define LATTICE_ARG14(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14,    \
    ...) a14
#define LATTICE_ARG15(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14,    \
    a15, ...) a15
#define LATTICE_ARG16(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14,    \
    a15, a16, ...) a16
#define LATTICE_ARG17(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14,    \
    a15, a16, a17, ...) a17
#define LATTICE_ARG18(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14,    \
    a15, a16, a17, a18, ...) a18
#define LATTICE_ARG19(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14,    \
    a15, a16, a17, a18, a19, ...) a19
#define LATTICE_ARG20(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14,    \
    a15, a16, a17, a18, a19, a20, ...) a20
#define LATTICE_ARG21(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14,    \
    a15, a16, a17, a18, a19, a20, a21, ...) a21
#define LATTICE_ARG22(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14,    \
    a15, a16, a17, a18, a19, a20, a21, a22, ...) a22
#define LATTICE_ARG23(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14,    \
    a15, a16, a17, a18, a19, a20, a21, a22, a23, ...) a23
#define LATTICE_ARG24(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14,    \
    a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, ...) a24
#define LATTICE_ARG25(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14,    \
    a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, ...) a25
#define LATTICE_ARG26(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14,    \
    a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, ...) a26
#define LATTICE_ARGX_(N, ...) LATTICE_ARG##N(__VA_ARGS__)
#define LATTICE_MENT_(K, I)                                                              \
  ((K) < LAT(Q) && (I) < LAT(Q)                                                          \
       ? LAT(MOMENT)(K, LATTICE_ARGX_(I, LAT(CX), LATTICE_PAD_),                         \
                     LATTICE_ARGX_(I, LAT(CY), LATTICE_PAD_),                            \
                     LATTICE_ARGX_(I, LAT(CZ), LATTICE_PAD_))                            \
       : 0)
#define LATTICE_MROW_(K)                                                                  \
  {LATTICE_MENT_(K, 0), LATTICE_MENT_(K, 1), LATTICE_MENT_(K, 2), LATTICE_MENT_(K, 3),    \
   LATTICE_MENT_(K, 4), LATTICE_MENT_(K, 5), LATTICE_MENT_(K, 6), LATTICE_MENT_(K, 7),    \
   LATTICE_MENT_(K, 8), LATTICE_MENT_(K, 9), LATTICE_MENT_(K, 10), LATTICE_MENT_(K, 11),  \
   LATTICE_MENT_(K, 12), LATTICE_MENT_(K, 13), LATTICE_MENT_(K, 14), LATTICE_MENT_(K, 15), \
   LATTICE_MENT_(K, 16), LATTICE_MENT_(K, 17), LATTICE_MENT_(K, 18), LATTICE_MENT_(K, 19), \
   LATTICE_MENT_(K, 20), LATTICE_MENT_(K, 21), LATTICE_MENT_(K, 22), LATTICE_MENT_(K, 23), \
   LATTICE_MENT_(K, 24), LATTICE_MENT_(K, 25), LATTICE_MENT_(K, 26)}
#define LATTICE_MOMENT_TABLE                                                              \
  {LATTICE_MROW_(0), LATTICE_MROW_(1), LATTICE_MROW_(2), LATTICE_MROW_(3),                \
      LATTICE_MROW_(4), LATTICE_MROW_(5), LATTICE_MROW_(6), LATTICE_MROW_(7),             \
      LATTICE_MROW_(8), LATTICE_MROW_(9), LATTICE_MROW_(10), LATTICE_MROW_(11),           \
      LATTICE_MROW_(12), LATTICE_MROW_(13), LATTICE_MROW_(14), LATTICE_MROW_(15),         \
      LATTICE_MROW_(16), LATTICE_MROW_(17), LATTICE_MROW_(18), LATTICE_MROW_(19),         \
      LATTICE_MROW_(20), LATTICE_MROW_(21), LATTICE_MROW_(22), LATTICE_MROW_(23),         \
      LATTICE_MROW_(24), LATTICE_MROW_(25), LATTICE_MROW_(26)}

/* D2Q37: the velocities of |c|^2 = 0, 1, 2, 4, 5, 8, 9 and 10 (reach 3), a quadrature of
 * algebraic degree 9 (Philippi, Hegele, dos Santos & Surmas, Phys. Rev. E 73, 056702
 * (2006); the thermal model of Sbragaglia et al., J. Fluid Mech. 628 (2009) 299).
 * c_s^2 = 1 / 1.19697977039307435897239^2 is not a fraction: LATTICE_D2Q37_SCALE is
 * 1 / c_s (the velocities in units of c_s are SCALE c_i), and LATTICE_D2Q37_INV_CS2 is 0
 * (no integer). Not in LATTICE_LIST: the flow's kernel template is for the isothermal
 * lattices; the d2q37 module has its own (d2q37_cell.h). Weights by |c|^2, 20 digits. */
#define LATTICE_D2Q37_D 2
#define LATTICE_D2Q37_Q 37
#define LATTICE_D2Q37_REACH 3
#define LATTICE_D2Q37_INV_CS2 0
#define LATTICE_D2Q37_SCALE 1.19697977039307435897239
#define LATTICE_D2Q37_CX                                                                  \
  0, 1, -1, 0, 0, 1, -1, 1, -1, 2, -2, 0, 0, 2, -2, 2, -2, 1, -1, 1, -1, 2, -2, 2, -2, 3, -3, \
      0, 0, 3, -3, 3, -3, 1, -1, 1, -1
#define LATTICE_D2Q37_CY                                                                  \
  0, 0, 0, 1, -1, 1, -1, -1, 1, 0, 0, 2, -2, 1, -1, -1, 1, 2, -2, -2, 2, 2, -2, -2, 2, 0, 0, \
      3, -3, 1, -1, -1, 1, 3, -3, -3, 3
#define LATTICE_D2Q37_CZ                                                                  \
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, \
      0, 0, 0, 0, 0, 0
#define LATTICE_D2Q37_INV                                                                 \
  0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, 16, 15, 18, 17, 20, 19, 22, 21, 24, 23, \
      26, 25, 28, 27, 30, 29, 32, 31, 34, 33, 36, 35
#define LATTICE_D2Q37_W0 0.23315066913235250228650  /* |c|^2 = 0 */
#define LATTICE_D2Q37_W1 0.10730609154221900241246  /* 1 */
#define LATTICE_D2Q37_W2 0.05766785988879488203006  /* 2 */
#define LATTICE_D2Q37_W4 0.01420821615845075026469  /* 4 */
#define LATTICE_D2Q37_W5 0.00535304900051377523273  /* 5 */
#define LATTICE_D2Q37_W8 0.00101193759267357547541  /* 8 */
#define LATTICE_D2Q37_W9 0.00024530102775771734547  /* 9 */
#define LATTICE_D2Q37_W10 0.00028341425299419821740 /* 10 */
#define LATTICE_D2Q37_W                                                                   \
  LATTICE_D2Q37_W0, LATTICE_D2Q37_W1, LATTICE_D2Q37_W1, LATTICE_D2Q37_W1, LATTICE_D2Q37_W1, \
      LATTICE_D2Q37_W2, LATTICE_D2Q37_W2, LATTICE_D2Q37_W2, LATTICE_D2Q37_W2,              \
      LATTICE_D2Q37_W4, LATTICE_D2Q37_W4, LATTICE_D2Q37_W4, LATTICE_D2Q37_W4,              \
      LATTICE_D2Q37_W5, LATTICE_D2Q37_W5, LATTICE_D2Q37_W5, LATTICE_D2Q37_W5,              \
      LATTICE_D2Q37_W5, LATTICE_D2Q37_W5, LATTICE_D2Q37_W5, LATTICE_D2Q37_W5,              \
      LATTICE_D2Q37_W8, LATTICE_D2Q37_W8, LATTICE_D2Q37_W8, LATTICE_D2Q37_W8,              \
      LATTICE_D2Q37_W9, LATTICE_D2Q37_W9, LATTICE_D2Q37_W9, LATTICE_D2Q37_W9,              \
      LATTICE_D2Q37_W10, LATTICE_D2Q37_W10, LATTICE_D2Q37_W10, LATTICE_D2Q37_W10,          \
      LATTICE_D2Q37_W10, LATTICE_D2Q37_W10, LATTICE_D2Q37_W10, LATTICE_D2Q37_W10

#endif
