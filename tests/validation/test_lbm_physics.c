/* Physics of the D3Q19 CPU sweep against analytic solutions (one rank):
 * Poiseuille channel (TRT exact, SRT second order), mass conservation in a closed
 * cavity and a periodic box, Taylor-Green decay, and the accuracy gain of the shifted
 * storage f - w_i rho0 in single precision. "--cpu-layout aos|soa" runs every case in
 * that CPU layout (default: the default layout). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lbm_case.h"

static const double PI = 3.14159265358979323846;

/* Body-force driven channel: periodic x and z, no-slip walls at y, steady state after
 * `steps`, on lattice lat (2-D lattices on one cell along z). Returns the L2 relative
 * error of u_x against the parabola u(y) = F / (2 rho0 nu) * y' (H - y'), y' = y + 1/2
 * (walls half-way between cells). */
static double poiseuille_transverse; /* the largest |u_y|, |u_z| seen */
static double poiseuille_error_opts(const lbm_options_t *base, int ny, double nu,
                                    int64_t steps) {
  const int nz = base->lattice->d == 3 ? 2 : 1;
  simulation_options_t so = lbm_case_domain(2, ny, nz, 1, 1, 1, true, false, true);
  lbm_options_t lo = *base;
  lo.viscosity = nu;
  double umax = 0.02;
  lo.force[0] = 8.0 * nu * umax / ((double)ny * ny);
  lbm_case_result_t r = lbm_case_run(MPI_COMM_WORLD, &so, &lo, steps);
  if (r.st != TSR_OK) fail_msg("%s", r.err.text);
  double e2 = 0, n2 = 0;
  for (int y = 0; y < ny; ++y) {
    double yy = y + 0.5, exact = lo.force[0] / (2.0 * nu) * yy * (ny - yy);
    for (int z = 0; z < nz; ++z)
      for (int x = 0; x < 2; ++x) {
        size_t g = (size_t)((z * ny + y) * 2 + x);
        e2 += (r.u[3 * g] - exact) * (r.u[3 * g] - exact);
        n2 += exact * exact;
        /* no transverse flow: round-off of the storage, relative 1e-16 (dp), 6e-8 (sp),
           2.4e-4 or 4.9e-4 (16 bits) of populations' shifted values of about w_i 1e-2 */
        const double tol = lo.precision == LBM_DP ? 1e-12 : lo.precision == LBM_SP ? 1e-8 : 1e-5;
        for (int a = 1; a < 3; ++a) {
          const double t = fabs(r.u[3 * g + (size_t)a]);
          poiseuille_transverse = t > poiseuille_transverse ? t : poiseuille_transverse;
          assert_true(t < tol);
        }
      }
  }
  lbm_case_free(&r);
  return sqrt(e2 / n2);
}

/* The default options with another lattice, collision and precision. */
static lbm_options_t options_of(const lattice_t *lat, lbm_collision_t coll, lbm_precision_t prec) {
  lbm_options_t lo = lbm_options_default();
  lo.lattice = lat;
  lo.init_noneq = !lat->moment_eq; /* D3Q13: the equilibrium start */
  lo.collision = coll;
  lo.precision = prec;
  return lo;
}

static double poiseuille_error_on(const lattice_t *lat, lbm_collision_t coll,
                                  lbm_precision_t prec, int ny, double nu, int64_t steps) {
  const lbm_options_t lo = options_of(lat, coll, prec);
  return poiseuille_error_opts(&lo, ny, nu, steps);
}

static double poiseuille_error(lbm_collision_t coll, lbm_precision_t prec, int ny, double nu,
                               int64_t steps) {
  return poiseuille_error_on(&lattice_d3q19, coll, prec, ny, nu, steps);
}

/* TRT with Lambda = 3/16 and half-way bounce-back reproduces the parabola exactly: the
 * bound 1e-11 is round-off (values ~1e-2, ~1e3 operations per cell and step) plus the
 * remaining distance to the steady state after the chosen steps (decay rate
 * nu (pi/H)^2 per step, run to below 1e-13). Several viscosities: exactness holds for
 * any tau. */
static void test_poiseuille_trt_exact(void **state) {
  const double nus[] = {1.0 / 6.0, 0.05, 0.4};
  for (size_t k = 0; k < 3; ++k) {
    double rate = nus[k] * (PI / 8) * (PI / 8);
    int64_t steps = (int64_t)(35.0 / rate);
    double e = poiseuille_error(LBM_TRT, LBM_DP, 8, nus[k], steps);
    printf("Poiseuille TRT DP ny=8 nu=%.4f: L2 relative error %.3e\n", nus[k], e);
    assert_true(e < 1e-11);
  }
}

/* SRT with bounce-back: the wall sits at a tau-dependent distance from half-way, so the
 * error is not round-off but shrinks at second order: doubling the resolution (with
 * the same tau) divides it by about 4 (accepted: 3.6 .. 4.4). */
static void test_poiseuille_srt_second_order(void **state) {
  double nu = 0.1;
  double e8 = poiseuille_error(LBM_SRT, LBM_DP, 8, nu, 6000);
  double e16 = poiseuille_error(LBM_SRT, LBM_DP, 16, nu, 24000);
  printf("Poiseuille SRT DP nu=%.2f: L2 relative error %.3e (ny=8), %.3e (ny=16), ratio %.3f\n",
         nu, e8, e16, e8 / e16);
  assert_true(e8 > 1e-4); /* not exact: this is not the TRT case by accident */
  assert_true(e8 / e16 > 3.6 && e8 / e16 < 4.4);
}

/* Force-driven flow through a square duct (walls on y and z, periodic along x) against
 * the analytic series solution (e.g. White, Viscous Fluid Flow, eq. 3-48):
 *   u(y,z) = 16 a^2 F / (rho0 nu pi^3) sum_{n odd} (-1)^((n-1)/2) / n^3
 *            [1 - cosh(n pi z / 2a) / cosh(n pi a / 2a)] cos(n pi y / 2a),  |y|, |z| < a.
 * Edges make bounce-back inexact here even with TRT, so the error must fall with the
 * resolution at second order; printed, with bounds on both. */
static double duct_error(int n) {
  simulation_options_t so = lbm_case_domain(2, n, n, 1, 1, 1, true, false, false);
  lbm_options_t lo = lbm_options_default();
  lo.viscosity = 0.1;
  lo.force[0] = 8.0 * lo.viscosity * 0.02 / ((double)n * n);
  double rate = lo.viscosity * 2 * (PI / n) * (PI / n);
  lbm_case_result_t r = lbm_case_run(MPI_COMM_WORLD, &so, &lo, (int64_t)(30.0 / rate));
  if (r.st != TSR_OK) fail_msg("%s", r.err.text);
  double a = n / 2.0, e2 = 0, n2 = 0;
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y) {
      double yy = y + 0.5 - a, zz = z + 0.5 - a, exact = 0;
      for (int k = 1; k < 200; k += 2) {
        double term = (1 - cosh(k * PI * zz / (2 * a)) / cosh(k * PI / 2)) * cos(k * PI * yy / (2 * a)) /
                      ((double)k * k * k);
        exact += ((k - 1) / 2 % 2 ? -term : term);
      }
      exact *= 16 * a * a * lo.force[0] / (lo.rho0 * lo.viscosity * PI * PI * PI);
      double u = r.u[3 * ((size_t)(z * n + y) * 2)];
      e2 += (u - exact) * (u - exact);
      n2 += exact * exact;
    }
  lbm_case_free(&r);
  return sqrt(e2 / n2);
}

static void test_square_duct(void **state) {
  double e8 = duct_error(8), e16 = duct_error(16);
  printf("square duct TRT DP: L2 relative error %.3e (8x8), %.3e (16x16), ratio %.2f\n", e8, e16,
         e8 / e16);
  assert_true(e16 < 2e-3); /* measured 8.8e-4 */
  assert_true(e8 / e16 > 3.0);
}

/* A closed cavity with a moving lid and a periodic box keep their mass: bounce-back
 * returns every population, the moving-wall terms of a wall plane cancel. The bound
 * 1e-12 relative is round-off of sums over ~4000 cells over 300 steps. */
static void test_mass_conservation(void **state) {
  for (int periodic = 0; periodic < 2; ++periodic) {
    simulation_options_t so = lbm_case_domain(16, 16, 16, 2, 2, 2, periodic, periodic, periodic);
    lbm_options_t lo = lbm_options_default();
    lo.viscosity = 0.02;
    if (!periodic) {
      lo.geometry.walls[GEOMETRY_YP].kind = GEOMETRY_WALL_MOVING;
      lo.geometry.walls[GEOMETRY_YP].velocity[0] = 0.05;
      lo.geometry.walls[GEOMETRY_YP].velocity[2] = 0.02;
    } else {
      lo.init = LBM_INIT_TAYLOR_GREEN;
      lo.init_velocity[0] = 0.05;
    }
    lbm_case_result_t r = lbm_case_run(MPI_COMM_WORLD, &so, &lo, 300);
    if (r.st != TSR_OK) fail_msg("%s", r.err.text);
    double rel = fabs(r.mass - r.mass0) / r.mass0;
    printf("mass %s: %.17g -> %.17g (relative change %.2e)\n", periodic ? "periodic box" : "closed cavity",
           r.mass0, r.mass, rel);
    assert_true(rel < 1e-12);
    /* the flow really moved: the lid or the vortex set velocities */
    double umax = 0;
    for (size_t g = 0; g < 16 * 16 * 16; ++g) umax = fmax(umax, fabs(r.u[3 * g]));
    assert_true(umax > 1e-3);
    lbm_case_free(&r);
  }
}

/* Amplitude of the Taylor-Green mode u_x = A sin(kx x) cos(ky y), by projection. */
static double tg_amplitude(const double *u, int nx, int ny, int nz) {
  double num = 0, den = 0;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        double m = sin(2 * PI * (x + 0.5) / nx) * cos(2 * PI * (y + 0.5) / ny);
        num += u[3 * ((size_t)(z * ny + y) * nx + x)] * m;
        den += m * m;
      }
  return num / den;
}

/* The Taylor-Green vortex decays as exp(-nu (kx^2 + ky^2) t). The measured rate must
 * match to 1%: the lattice's own error at 32 cells per wavelength is O((k dx)^2) ~ 4e-2
 * of the viscous term at most, far less in practice (printed). */
static double tg_rate_error_opts(const lbm_options_t *base, double *amp_out) {
  const int n = 32, nz = base->lattice->d == 3 ? 2 : 1;
  simulation_options_t so = lbm_case_domain(n, n, nz, 2, 2, 1, true, true, true);
  lbm_options_t lo = *base;
  lo.viscosity = 0.02;
  lo.init = LBM_INIT_TAYLOR_GREEN;
  lo.init_velocity[0] = 0.01;
  const int64_t steps = 1000;
  lbm_case_result_t r = lbm_case_run(MPI_COMM_WORLD, &so, &lo, steps);
  if (r.st != TSR_OK) fail_msg("%s", r.err.text);
  double k2 = 2 * (2 * PI / n) * (2 * PI / n);
  double a = tg_amplitude(r.u, n, n, nz);
  double rate = -log(a / lo.init_velocity[0]) / (double)steps, want = lo.viscosity * k2;
  if (amp_out) *amp_out = a;
  lbm_case_free(&r);
  return fabs(rate - want) / want;
}

static double tg_rate_error_on(const lattice_t *lat, lbm_collision_t coll, lbm_precision_t prec,
                               bool shifted, double *amp_out) {
  lbm_options_t lo = options_of(lat, coll, prec);
  lo.shifted = shifted;
  return tg_rate_error_opts(&lo, amp_out);
}

static double tg_rate_error(lbm_collision_t coll, lbm_precision_t prec, bool shifted, double *amp_out) {
  return tg_rate_error_on(&lattice_d3q19, coll, prec, shifted, amp_out);
}

static void test_taylor_green_decay(void **state) {
  double e_trt = tg_rate_error(LBM_TRT, LBM_DP, false, NULL);
  double e_srt = tg_rate_error(LBM_SRT, LBM_DP, false, NULL);
  printf("Taylor-Green decay rate, relative error: TRT %.3e, SRT %.3e\n", e_trt, e_srt);
  assert_true(e_trt < 1e-2);
  assert_true(e_srt < 1e-2);
}

/* A Taylor-Green run of `steps` steps at amplitude u0; fields on rank 0. */
static lbm_case_result_t tg_run(lbm_precision_t prec, bool shifted, double u0, int64_t steps) {
  simulation_options_t so = lbm_case_domain(32, 32, 2, 2, 2, 1, true, true, true);
  lbm_options_t lo = lbm_options_default();
  lo.precision = prec;
  lo.shifted = shifted;
  lo.viscosity = 0.02;
  lo.init = LBM_INIT_TAYLOR_GREEN;
  lo.init_velocity[0] = u0;
  lbm_case_result_t r = lbm_case_run(MPI_COMM_WORLD, &so, &lo, steps);
  if (r.st != TSR_OK) fail_msg("%s", r.err.text);
  return r;
}

/* L2 distance of a and b relative to the L2 norm of b - offset. */
static double rel_l2(const double *a, const double *b, size_t n, size_t stride, double offset) {
  double e2 = 0, n2 = 0;
  for (size_t i = 0; i < n; i += stride) {
    e2 += (a[i] - b[i]) * (a[i] - b[i]);
    n2 += (b[i] - offset) * (b[i] - offset);
  }
  return sqrt(e2 / n2);
}

/* Single precision: storing f - w_i rho0 keeps the small deviations from rest in the
 * mantissa instead of next to the large w_i rho0. A slow Taylor-Green vortex
 * (u0 = 1e-3, density deviations ~1e-6) is run in SP with and without the shift and
 * compared with DP: the pressure (rho - rho0) and velocity fields must be clearly more
 * accurate with the shift (errors printed; the gain required is a factor 10). */
static void test_single_precision_shifted_storage(void **state) {
  const double u0 = 1e-3;
  const int64_t steps = 500;
  lbm_case_result_t dp = tg_run(LBM_DP, false, u0, steps);
  lbm_case_result_t plain = tg_run(LBM_SP, false, u0, steps);
  lbm_case_result_t shift = tg_run(LBM_SP, true, u0, steps);
  const size_t n = 32 * 32 * 2;
  double p_plain = rel_l2(plain.rho, dp.rho, n, 1, 1.0), p_shift = rel_l2(shift.rho, dp.rho, n, 1, 1.0);
  double u_plain = rel_l2(plain.u, dp.u, 3 * n, 1, 0.0), u_shift = rel_l2(shift.u, dp.u, 3 * n, 1, 0.0);
  printf("SP vs DP after %lld steps, u0 = %g: rho - rho0 error plain %.3e, shifted %.3e (gain "
         "%.0fx); velocity error plain %.3e, shifted %.3e (gain %.0fx)\n",
         (long long)steps, u0, p_plain, p_shift, p_plain / p_shift, u_plain, u_shift,
         u_plain / u_shift);
  assert_true(p_shift * 10 < p_plain);
  assert_true(u_shift * 10 < u_plain);
  lbm_case_free(&dp);
  lbm_case_free(&plain);
  lbm_case_free(&shift);
}

/* Largest |velocity/lid - ref| along a centre line of an n x n cavity (z = 0 plane):
 * comp 0 samples u along y at x = 1/2, comp 1 samples v along x at y = 1/2; positions
 * in [0, 1], linear interpolation between cell centres, the centre line between the two
 * middle cells (n even) or through the middle one (n odd). */
static double centre_line_error(const double *u, int n, double lid, int comp, const double *pos,
                                const double *ref, size_t count, double *rms) {
  double worst = 0, sum2 = 0;
  for (size_t k = 0; k < count; ++k) {
    double c = pos[k] * n - 0.5;
    int j = (int)c, j1 = j + 1 < n ? j + 1 : j;
    double t = c - j, val = 0;
    const int m0 = n % 2 ? n / 2 : n / 2 - 1;
    for (int m = m0; m <= n / 2; ++m) {
      /* (x, y) of the two samples: the line runs along y for comp 0, along x for comp 1 */
      size_t a = comp == 0 ? (size_t)j * n + m : (size_t)m * n + j;
      size_t b = comp == 0 ? (size_t)j1 * n + m : (size_t)m * n + j1;
      val += ((1 - t) * u[3 * a + comp] + t * u[3 * b + comp]) / (n / 2 - m0 + 1);
    }
    double e = fabs(val / lid - ref[k]);
    if (e > worst) worst = e;
    sum2 += e * e;
  }
  if (rms) *rms = sqrt(sum2 / (double)count);
  return worst;
}

/* Ghia, Ghia & Shin (J. Comput. Phys. 48, 1982): the positions of Table I (u along the
 * vertical centre line, y) and Table II (v along the horizontal one, x), 15 interior points
 * each, the same for every Reynolds number. */
static const double ghia_y[] = {0.0547, 0.0625, 0.0703, 0.1016, 0.1719, 0.2813, 0.4531, 0.5,
                                0.6172, 0.7344, 0.8516, 0.9531, 0.9609, 0.9688, 0.9766};
static const double ghia_x[] = {0.0625, 0.0703, 0.0781, 0.0938, 0.1563, 0.2266, 0.2344, 0.5,
                                0.8047, 0.8594, 0.9063, 0.9453, 0.9531, 0.9609, 0.9688};
enum { GHIA_POINTS = sizeof ghia_y / sizeof ghia_y[0] };

/* The cavity of n^2 cells (2-D: one periodic cell along z; walls on x and y, the lid at
 * y+ moving along x at lid) at Reynolds number re = lid n / nu, options lo but for those,
 * in blocks x blocks blocks, for the given steps. */
static lbm_case_result_t cavity_run(int n, int blocks, double lid, double re, lbm_options_t lo,
                                    int64_t steps) {
  simulation_options_t so = lbm_case_domain(n, n, 1, blocks, blocks, 1, false, false, true);
  lo.viscosity = lid * n / re;
  lo.geometry.walls[GEOMETRY_YP].kind = GEOMETRY_WALL_MOVING;
  lo.geometry.walls[GEOMETRY_YP].velocity[0] = lid;
  lbm_case_result_t r = lbm_case_run(MPI_COMM_WORLD, &so, &lo, steps);
  if (r.st != TSR_OK) fail_msg("%s", r.err.text);
  return r;
}

/* Lid-driven cavity at Re = 100 against Ghia, Ghia & Shin (J. Comput. Phys. 48, 1982):
 * u along the vertical centre line (Table I), v along the horizontal one (Table II). The 3-D code runs it as a 2-D flow: one
 * cell along z, periodic; walls on x and y, the lid at y+ moving along x. */
/* Ghia et al. at Re 100: u along the vertical centre line (Table I), v along the
 * horizontal one (Table II). */
static const double ghia_u100[GHIA_POINTS] = {-0.03717, -0.04192, -0.04775, -0.06434, -0.10150,
                                              -0.15662, -0.21090, -0.20581, -0.13641, 0.00332,
                                              0.23151,  0.68717,  0.73722,  0.78871,  0.84123};
static const double ghia_v100[GHIA_POINTS] = {0.09233,  0.10091,  0.10890,  0.12317,  0.16077,
                                              0.17507,  0.17527,  0.05454,  -0.24533, -0.22445,
                                              -0.16914, -0.10313, -0.08864, -0.07391, -0.05906};

static void test_cavity_ghia_re100(void **state) {
  const int n = 64;
  const double lid = 0.05;
  /* about 12 lid passes: steady to well below the tolerance */
  lbm_case_result_t r = cavity_run(n, 2, lid, 100.0, lbm_options_default(), 15000);
  double worst_u = centre_line_error(r.u, n, lid, 0, ghia_y, ghia_u100, GHIA_POINTS, NULL);
  printf("cavity Re 100, %dx%d: largest |u/U - Ghia| on the vertical centre line %.4f\n", n, n,
         worst_u);
  /* v along the horizontal centre line (Ghia et al., Table II) */
  double worst_v = centre_line_error(r.u, n, lid, 1, ghia_x, ghia_v100, GHIA_POINTS, NULL);
  printf("cavity Re 100, %dx%d: largest |v/U - Ghia| on the horizontal centre line %.4f\n", n,
         n, worst_v);
  double worst = worst_u > worst_v ? worst_u : worst_v;
  /* Ghia's own grid (129^2, second order, values given to ~1e-3) and the linear
   * interpolation between our cell centres leave a few 1e-3 of U (measured 4.6e-3 for u
   * at 64^2, printed above); 0.01 still separates that from a wrong flow: a wall half a cell off, a wrong
   * viscosity or lid term give several times more. */
  assert_true(worst < 0.01);
  lbm_case_free(&r);
}

/* The cavity at Re 3200 with the cumulant collision (D2Q9, DP, 129^2 cells: Ghia's own
 * grid, a column and a row of cells on the centre lines), lid 0.1, 100 lid passes, against
 * Ghia, Ghia & Shin (1982), Tables I and II, Re 3200: the short version of
 * scripts/cavity-ghia.sh (Re 3200-10000 on 257^2). Measured: largest deviation 0.032 (u)
 * and 0.031 (v) of the lid, rms 0.018 and 0.020 (at 200 passes, steady to 5e-4: 0.028,
 * 0.029, rms 0.015, 0.017; on 257^2: 0.019, 0.030). The bounds (largest 0.035, rms 0.022)
 * fail a Reynolds number 20% off: Re 2560 gives v 0.047 (rms 0.027), Re 3840 u rms 0.026.
 * The run is deterministic: the margin is not noise. */
static void test_cavity_ghia_re3200(void **state) {
  (void)state;
  static const double ghia_u[GHIA_POINTS] = {-0.32407, -0.35344, -0.37827, -0.41933, -0.34323,
                                             -0.24427, -0.08636, -0.04272, 0.07156,  0.19791,
                                             0.34682,  0.46101,  0.46547,  0.48296,  0.53236};
  static const double ghia_v[GHIA_POINTS] = {0.39560,  0.40917,  0.41906,  0.42768,  0.37119,
                                             0.29030,  0.28188,  0.00999,  -0.31184, -0.37401,
                                             -0.44307, -0.54053, -0.52357, -0.47425, -0.39017};
  const int n = 129;
  const double lid = 0.1;
  const lbm_options_t lo = options_of(&lattice_d2q9, LBM_CUMULANT, LBM_DP);
  lbm_case_result_t r = cavity_run(n, 1, lid, 3200.0, lo, (int64_t)(100 * n / lid));
  double ru, rv;
  const double eu = centre_line_error(r.u, n, lid, 0, ghia_y, ghia_u, GHIA_POINTS, &ru);
  const double ev = centre_line_error(r.u, n, lid, 1, ghia_x, ghia_v, GHIA_POINTS, &rv);
  lbm_case_free(&r);
  printf("cavity Re 3200, %dx%d, d2q9 cumulant: |u/U - Ghia| largest %.4f, rms %.4f; |v/U - "
         "Ghia| largest %.4f, rms %.4f\n", n, n, eu, ru, ev, rv);
  assert_true(eu < 0.035 && ev < 0.035 && ru < 0.022 && rv < 0.022);
}

/* Every flow lattice (D2Q9 on one cell along z): the TRT Poiseuille channel exact to
 * round-off (as test_poiseuille_trt_exact, nu = 1/6), the Taylor-Green decay rate within
 * 1% (SRT and TRT), and the mass of a closed cavity with a moving lid kept to 1e-12
 * relative (as test_mass_conservation). */
static void test_flow_lattices(void **state) {
  const lattice_t *lats[] = {&lattice_d2q9, &lattice_d3q15, &lattice_d3q19, &lattice_d3q27};
  for (size_t l = 0; l < sizeof lats / sizeof lats[0]; ++l) {
    const lattice_t *lat = lats[l];
    const double nu = 1.0 / 6.0, rate = nu * (PI / 8) * (PI / 8);
    const double ep = poiseuille_error_on(lat, LBM_TRT, LBM_DP, 8, nu, (int64_t)(35.0 / rate));
    const double et = tg_rate_error_on(lat, LBM_TRT, LBM_DP, false, NULL);
    const double es = tg_rate_error_on(lat, LBM_SRT, LBM_DP, false, NULL);
    const int nz = lat->d == 3 ? 16 : 1;
    simulation_options_t so = lbm_case_domain(16, 16, nz, 2, 2, 1, false, false, lat->d == 2);
    lbm_options_t lo = lbm_options_default();
    lo.lattice = lat;
    lo.viscosity = 0.02;
    lo.geometry.walls[GEOMETRY_YP].kind = GEOMETRY_WALL_MOVING;
    lo.geometry.walls[GEOMETRY_YP].velocity[0] = 0.05;
    lbm_case_result_t r = lbm_case_run(MPI_COMM_WORLD, &so, &lo, 300);
    if (r.st != TSR_OK) fail_msg("%s", r.err.text);
    const double dm = fabs(r.mass - r.mass0) / r.mass0;
    double umax = 0;
    for (size_t g = 0; g < (size_t)(16 * 16 * nz); ++g) umax = fmax(umax, fabs(r.u[3 * g]));
    lbm_case_free(&r);
    printf("%s: Poiseuille TRT L2 error %.2e; Taylor-Green rate error TRT %.2e, SRT %.2e; "
           "cavity mass change %.1e (max |u_x| %.3f)\n", lat->name, ep, et, es, dm, umax);
    assert_true(ep < 1e-11);
    assert_true(et < 1e-2 && es < 1e-2);
    assert_true(dm < 1e-12);
    assert_true(umax > 1e-3);
  }
}

/* The MRT collision (every flow lattice, the published rates; D3Q13, MRT only, with its
 * shear rates of two kinds) and the Smagorinsky model (C_s = 0.1 with SRT, TRT, MRT):
 *  - Poiseuille with MRT: second order (the error divides by 3.6 .. 4.4 from ny = 8 to
 *    16 at the same tau: the rate of the energy flux q, 1.2 to 1.9, does not place
 *    bounce-back walls half-way); with the odd moments (q, m) at
 *    s = 1/(1/2 + Lambda/(1/omega - 1/2)), Lambda = 3/16, exact to round-off like TRT
 *    (Ginzburg & d'Humieres 2003: the steady solution depends on omega and the odd
 *    rates only through Lambda; not on D3Q13);
 *  - the Taylor-Green decay rate within 1% of nu k^2 (the eddy viscosity of u0 = 0.01 at
 *    32 cells is (0.1)^2 |S| ~ 2e-5, 0.1% of nu = 0.02); the Smagorinsky model on D2Q9
 *    and D3Q19 (printed 0 elsewhere).
 * A test of its own (argument collision_models; the Release build's alone). */
static void test_collision_models(void **state) {
  const lattice_t *lats[] = {&lattice_d2q9, &lattice_d3q13, &lattice_d3q15, &lattice_d3q19,
                             &lattice_d3q27};
  for (size_t l = 0; l < sizeof lats / sizeof lats[0]; ++l) {
    lbm_options_t lo = options_of(lats[l], LBM_MRT, LBM_DP);
    const double nu = 0.1;
    const double e8 = poiseuille_error_opts(&lo, 8, nu, 6000);
    const double e16 = poiseuille_error_opts(&lo, 16, nu, 24000);
    const double om = 1 / (3 * nu + 0.5), odd = 1 / (0.5 + (3.0 / 16) / (1 / om - 0.5));
    lbm_options_t lm = lo;
    lm.mrt_rates[LATTICE_MOMENT_Q] = odd;
    if (lbm_mrt_default(lats[l], LATTICE_MOMENT_M) > 0) lm.mrt_rates[LATTICE_MOMENT_M] = odd;
    const double rate = nu * (PI / 8) * (PI / 8);
    /* D3Q13: its diagonal and off-diagonal stresses relax at two rates; no TRT-like pair
       of rates to place the walls (printed 0) */
    const double ex =
        lats[l]->moment_eq ? 0 : poiseuille_error_opts(&lm, 8, nu, (int64_t)(35.0 / rate));
    double tg[4] = {0, 0, 0, 0};
    tg[0] = tg_rate_error_opts(&lo, NULL);
    /* the Smagorinsky model on D2Q9 and D3Q19 (the kernels are the same template) */
    for (int c = 0; c < 3 && (lats[l] == &lattice_d2q9 || lats[l] == &lattice_d3q19); ++c) {
      lbm_options_t ll = options_of(lats[l], (lbm_collision_t)c, LBM_DP);
      ll.smagorinsky = 0.1;
      tg[c + 1] = tg_rate_error_opts(&ll, NULL);
    }
    printf("%s MRT: Poiseuille L2 error %.3e (ny 8), %.3e (16), ratio %.2f; odd rates from "
           "Lambda 3/16: %.2e; Taylor-Green rate error MRT %.2e, Smagorinsky SRT %.2e TRT "
           "%.2e MRT %.2e\n", lats[l]->name, e8, e16, e8 / e16, ex, tg[0], tg[1], tg[2], tg[3]);
    assert_true(e8 > 1e-4 && e8 / e16 > 3.6 && e8 / e16 < 4.4);
    assert_true(lats[l]->moment_eq || ex < 1e-11);
    for (int k = 0; k < 4; ++k) assert_true(tg[k] < 1e-2);
  }
}

/* The cumulant collision (D2Q9, D3Q27): Poiseuille second order (its third-order
 * cumulants relax with rate 1, not at TRT's magic combination, so the walls' slip varies
 * with nu as with SRT), the Taylor-Green decay at the viscosity omega gives, with the
 * Smagorinsky model too, and in single precision with shifted storage (the cumulant adds
 * the shift back: it is not linear in the populations). Then the 3-D
 * Taylor-Green vortex at Re 1600 to t* = 1 against the DNS. */
static void test_cumulant_models(void **state) {
  (void)state;
  const lattice_t *lats[] = {&lattice_d2q9, &lattice_d3q27};
  for (size_t l = 0; l < sizeof lats / sizeof lats[0]; ++l) {
    lbm_options_t lo = options_of(lats[l], LBM_CUMULANT, LBM_DP);
    const double e8 = poiseuille_error_opts(&lo, 8, 0.1, 6000);
    const double e16 = poiseuille_error_opts(&lo, 16, 0.1, 24000);
    lbm_options_t ll = lo, ls = options_of(lats[l], LBM_CUMULANT, LBM_SP);
    ll.smagorinsky = 0.1;
    ls.shifted = true;
    const double tg[3] = {tg_rate_error_opts(&lo, NULL), tg_rate_error_opts(&ll, NULL),
                          tg_rate_error_opts(&ls, NULL)};
    printf("%s cumulant: Poiseuille L2 error %.3e (ny 8), %.3e (16), ratio %.2f; Taylor-Green "
           "rate error %.2e, Smagorinsky %.2e, SP shifted %.2e\n", lats[l]->name, e8, e16,
           e8 / e16, tg[0], tg[1], tg[2]);
    assert_true(e8 > 1e-4 && e8 / e16 > 3.6 && e8 / e16 < 4.4);
    for (int k = 0; k < 3; ++k) assert_true(tg[k] < 1e-2);
  }
  /* the 3-D Taylor-Green vortex at Re 1600 (u0 = 0.05, L = N / (2 pi)) on 32^3 to t* = 1:
     its kinetic energy against the 512^3 pseudo-spectral DNS (High-Order CFD Workshop
     case C3.5), K = 0.124515. With the non-equilibrium start (the default) -0.08% (16^3
     -0.90%, 24^3 -0.21%); the equilibrium start loses K in its first steps (-1.88% at
     32^3, -8.0% at 16^3) and leaves an oscillation of period two steps: the bound 0.5%
     fails it. At an even step (scripts/tgv-re1600.sh for the whole run). */
  const int n = 32;
  const double u0 = 0.05, l = n / (2 * PI);
  simulation_options_t so = lbm_case_domain(n, n, n, 1, 1, 2, true, true, true);
  lbm_options_t lo = options_of(&lattice_d3q27, LBM_CUMULANT, LBM_DP);
  lo.init = LBM_INIT_TAYLOR_GREEN_3D;
  lo.init_velocity[0] = u0;
  lo.viscosity = u0 * l / 1600;
  const int64_t steps = 2 * (int64_t)(l / u0 / 2 + 0.5); /* 102 */
  lbm_case_result_t r = lbm_case_run(MPI_COMM_WORLD, &so, &lo, steps);
  if (r.st != TSR_OK) fail_msg("%s", r.err.text);
  double k = 0;
  for (size_t c = 0; c < (size_t)n * n * n; ++c)
    k += 0.5 * r.rho[c] * (r.u[3 * c] * r.u[3 * c] + r.u[3 * c + 1] * r.u[3 * c + 1] +
                           r.u[3 * c + 2] * r.u[3 * c + 2]);
  k /= (double)n * n * n * u0 * u0;
  lbm_case_free(&r);
  printf("d3q27 cumulant: 3-D Taylor-Green Re 1600, 32^3, t* = %.3f: K = %.6f (DNS 0.124515, "
         "%+.2f%%)\n", (double)steps * u0 / l, k, 100 * (k / 0.124515 - 1));
  assert_true(fabs(k / 0.124515 - 1) < 0.005);
}

/* 16-bit storage against double and single precision (every one shifted) on the validated
 * cases: the Poiseuille channel with SRT at 8 and 16 cells (error and its second order),
 * the decay rate of the Taylor-Green vortex (D3Q19 TRT) and the cavity at Re 100 against
 * Ghia et al. Bounds: what double precision meets, the errors of the discretisation,
 * which storage rounding must not spoil: the channel's errors within 10% of double
 * precision's and its order 3.6 to 4.4, the decay rate to 1%, the cavity's largest
 * deviation from Ghia's points the Re 100 test's 0.01 (figures printed; measured:
 * docs/configuration.md, "16-bit storage"). */
static void test_store16_accuracy(void **state) {
  (void)state;
  static const char *const names[] = {"dp", "sp", "fp16s", "fp16c"};
  double e8dp = 0, e16dp = 0;
  for (int p = LBM_DP; p <= LBM_FP16C; ++p) {
    lbm_options_t lo = options_of(&lattice_d3q19, LBM_SRT, (lbm_precision_t)p);
    lo.shifted = true;
    poiseuille_transverse = 0;
    const double e8 = poiseuille_error_opts(&lo, 8, 0.1, 6000);
    const double e16 = poiseuille_error_opts(&lo, 16, 0.1, 24000);
    lo.collision = LBM_TRT;
    const double tg = tg_rate_error_opts(&lo, NULL);
    lbm_options_t lc = options_of(&lattice_d3q19, LBM_TRT, (lbm_precision_t)p);
    lc.shifted = true;
    lbm_case_result_t r = cavity_run(64, 2, 0.05, 100, lc, 15000);
    double rms_u, rms_v;
    const double cu = centre_line_error(r.u, 64, 0.05, 0, ghia_y, ghia_u100, GHIA_POINTS, &rms_u);
    const double cv = centre_line_error(r.u, 64, 0.05, 1, ghia_x, ghia_v100, GHIA_POINTS, &rms_v);
    lbm_case_free(&r);
    printf("%-5s Poiseuille SRT L2 error %.4e (8 cells), %.4e (16), order ratio %.3f, "
           "transverse |u| %.1e; Taylor-Green decay rate error %.3e; cavity Re 100 64^2 "
           "largest |u|, |v| deviation %.4f, %.4f\n", names[p], e8, e16, e8 / e16,
           poiseuille_transverse, tg, cu, cv);
    if (p == LBM_DP) e8dp = e8, e16dp = e16;
    if (p <= LBM_SP) {
      assert_true(fabs(e8 / e8dp - 1) < 0.1 && fabs(e16 / e16dp - 1) < 0.1);
      assert_true(e8 / e16 > 3.6 && e8 / e16 < 4.4);
    } else { /* the storage's rounding of the force's small share per step dominates */
      assert_true(e8 < 0.03 && e16 < 0.05);
    }
    assert_true(tg < 1e-2);
    assert_true(cu < 0.01 && cv < 0.01);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  /* tests of their own */
  const struct CMUnitTest models[] = {cmocka_unit_test(test_collision_models)};
  const struct CMUnitTest cumulant[] = {cmocka_unit_test(test_cumulant_models)};
  const struct CMUnitTest cavity[] = {cmocka_unit_test(test_cavity_ghia_re3200)};
  const struct CMUnitTest store16[] = {cmocka_unit_test(test_store16_accuracy)};
  int failed = -1;
  if (argc == 2 && strcmp(argv[1], "collision_models") == 0)
    failed = cmocka_run_group_tests_name("lbm_collision_models", models, NULL, NULL);
  else if (argc == 2 && strcmp(argv[1], "cumulant") == 0)
    failed = cmocka_run_group_tests_name("lbm_cumulant_models", cumulant, NULL, NULL);
  else if (argc == 2 && strcmp(argv[1], "cavity_re3200") == 0)
    failed = cmocka_run_group_tests_name("lbm_cavity_re3200", cavity, NULL, NULL);
  else if (argc == 2 && strcmp(argv[1], "store16") == 0)
    failed = cmocka_run_group_tests_name("lbm_store16", store16, NULL, NULL);
  if (failed >= 0) {
    MPI_Finalize();
    return failed ? 1 : 0;
  }
  if (lbm_case_args(argc, argv) != 0) {
    fprintf(stderr,
            "usage: %s [--cpu-layout aos|soa | collision_models | cumulant | cavity_re3200 | "
            "store16]\n",
            argv[0]);
    MPI_Finalize();
    return 2;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_poiseuille_trt_exact),
      cmocka_unit_test(test_poiseuille_srt_second_order),
      cmocka_unit_test(test_square_duct),
      cmocka_unit_test(test_mass_conservation),
      cmocka_unit_test(test_taylor_green_decay),
      cmocka_unit_test(test_single_precision_shifted_storage),
      cmocka_unit_test(test_cavity_ghia_re100),
      cmocka_unit_test(test_flow_lattices),
  };
  failed = cmocka_run_group_tests_name("lbm_physics", tests, NULL, NULL);
  MPI_Finalize();
  return failed ? 1 : 0;
}
