/* The D2Q37 lattice and the kernels of the thermal compressible model (d2q37_cell.h,
 * d2q37_kernels.h): the quadrature's moments against the Gaussian's to degree 9; the
 * equilibrium's moments against the Maxwellian's up to fourth order for velocities to
 * 0.4 c_s and temperatures 0.7 to 1.3 T0, and a fifth-order moment that differs (the
 * order the model claims, and no more); the collision conserving mass, momentum and
 * energy to round-off, and adding rho g and rho (g.u + g.g/2) under a force; the
 * hydrodynamic fields read back from a block filled with given fields; the stream-collide
 * moving every population c_i cells (with tau = 1 at rest, its output is the pulled
 * equilibrium); every CPU level bitwise the same; single precision near double. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpu_level.h"
#include "d2q37_kernels.h"
#include "field.h"
#include "grid.h"
#include "lattice.h"

static const double S = LATTICE_D2Q37_SCALE;

/* E[X^n] of a Gaussian of mean m and variance v. */
static double gauss_moment(int n, double m, double v) {
  double a = 1, b = m; /* n = 0, 1 */
  if (n == 0) return a;
  for (int k = 2; k <= n; ++k) {
    const double c = m * b + (double)(k - 1) * v * a;
    a = b;
    b = c;
  }
  return b;
}

static double ipow(double x, int n) {
  double r = 1;
  for (int k = 0; k < n; ++k) r *= x;
  return r;
}

/* sum_i w_i xi_x^a xi_y^b equals the unit Gaussian's moment for a + b <= 9: the
 * quadrature's degree (odd moments vanish by symmetry; the even ones are the test) */
static void test_quadrature(void **state) {
  (void)state;
  const lattice_t *l = &lattice_d2q37;
  assert_int_equal(l->q, 37);
  assert_int_equal(l->reach, 3);
  for (int i = 0; i < l->q; ++i) {
    assert_int_equal(l->c[0][l->inv[i]], -l->c[0][i]);
    assert_int_equal(l->c[1][l->inv[i]], -l->c[1][i]);
    assert_int_equal(l->c[2][i], 0);
  }
  for (int a = 0; a <= 9; ++a)
    for (int b = 0; a + b <= 9; ++b) {
      long double sum = 0;
      for (int i = 0; i < l->q; ++i)
        sum += (long double)l->w[i] * ipow(S * l->c[0][i], a) * ipow(S * l->c[1][i], b);
      const double want = gauss_moment(a, 0, 1) * gauss_moment(b, 0, 1);
      /* the weights are given to 20 digits: 1e-14 relative to the moment's size */
      assert_true(fabs((double)sum - want) < 1e-14 * (1 + fabs(want)));
    }
  /* the kernels' class of each direction (d2q37_cell.h) is its |c_i|^2 */
  static const int sq[D37_CLASSES] = {0, 1, 2, 4, 5, 8, 9, 10};
  for (int i = 0; i < l->q; ++i)
    assert_int_equal(sq[d37_cls[i]], l->c[0][i] * l->c[0][i] + l->c[1][i] * l->c[1][i]);
  /* the populations crossing a face, an edge and a corner (direction.h's offsets): those
     whose components have the offset's signs, at any distance up to the reach */
  int out[D37_Q];
  const int face[3] = {1, 0, 0}, edge[3] = {-1, 1, 0}, up[3] = {0, 0, 1};
  assert_int_equal(lattice_crossing(l, face, out), 15);
  assert_int_equal(lattice_crossing(l, edge, out), 6);
  for (int k = 0; k < 6; ++k) assert_true(l->c[0][out[k]] < 0 && l->c[1][out[k]] > 0);
  assert_int_equal(lattice_crossing(l, up, out), 0);
  /* degree 10 is beyond it: <xi_x^10> = 945 for the Gaussian */
  long double s10 = 0;
  for (int i = 0; i < l->q; ++i) s10 += (long double)l->w[i] * ipow(S * l->c[0][i], 10);
  assert_true(fabs((double)s10 - 945.0) > 1.0);
  assert_true(fabs(l->cs2 - 1.0 / (S * S)) < 1e-16);
}

static void consts_d(double tau, double gx, double gy, d2q37_consts_t *k) {
  const d2q37_params_t p = {.tau = tau, .g = {gx, gy}};
  d2q37_constants(&p, 1, k);
}

/* The moment (a, b) of f over the velocities xi (thermal units). */
static double moment(const double *f, int a, int b) {
  const lattice_t *l = &lattice_d2q37;
  long double sum = 0;
  for (int i = 0; i < l->q; ++i)
    sum += (long double)f[i] * ipow(S * l->c[0][i], a) * ipow(S * l->c[1][i], b);
  return (double)sum;
}

static void test_equilibrium_moments(void **state) {
  (void)state;
  d2q37_consts_t k;
  consts_d(0.8, 0, 0, &k);
  const double cases[][4] = {{1.0, 0.0, 0.0, 1.0},  {1.3, 0.2, -0.1, 1.1},
                             {0.7, -0.4, 0.05, 0.8}, {2.0, 0.3, 0.3, 1.3},
                             {1.0, 0.0, 0.4, 0.7}};
  double worst5 = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const double rho = cases[c][0], ux = cases[c][1], uy = cases[c][2], t = cases[c][3];
    double feq[D37_Q];
    d37_equilibrium_d(&k.d, rho, ux, uy, t, feq);
    for (int a = 0; a <= 5; ++a)
      for (int b = 0; a + b <= 5; ++b) {
        const double want = rho * gauss_moment(a, ux, t) * gauss_moment(b, uy, t);
        const double got = moment(feq, a, b);
        if (a + b <= 4) {
          /* round-off of 37 terms of size up to ~rho x 3.6^8: 1e-12 relative */
          if (fabs(got - want) > 1e-12 * (1 + fabs(want)))
            fail_msg("case %zu: moment (%d, %d) %.17g, Maxwellian %.17g", c, a, b, got, want);
        } else if (fabs(got - want) > worst5) {
          worst5 = fabs(got - want);
        }
      }
  }
  /* fifth order is not the Maxwellian's (a fourth-order expansion): the test sees it */
  assert_true(worst5 > 1e-4);
}

/* mass, momentum and energy of f (thermal units) */
static void conserved(const double *f, double out[4]) {
  out[0] = moment(f, 0, 0);
  out[1] = moment(f, 1, 0);
  out[2] = moment(f, 0, 1);
  out[3] = moment(f, 2, 0) + moment(f, 0, 2);
}

static void test_collision_conserves(void **state) {
  (void)state;
  srand(7);
  for (int trial = 0; trial < 20; ++trial) {
    const double gx = trial % 2 ? 1e-3 * (trial - 10) : 0, gy = trial % 2 ? -2e-4 * trial : 0;
    const double tau = 0.55 + 0.05 * trial;
    d2q37_consts_t k;
    consts_d(tau, gx, gy, &k);
    /* an equilibrium, disturbed by 1% per population */
    double f[D37_Q], before[4], after[4];
    d37_equilibrium_d(&k.d, 1.0 + 0.02 * trial, 0.01 * trial - 0.1, 0.05, 0.9 + 0.01 * trial, f);
    for (int i = 0; i < D37_Q; ++i) f[i] *= 1.0 + 0.01 * ((double)rand() / RAND_MAX - 0.5);
    conserved(f, before);
    const double rho = before[0], ux = before[1] / rho, uy = before[2] / rho;
    d37_collide_d(&k.d, f);
    conserved(f, after);
    const double sgx = S * gx, sgy = S * gy;
    const double want[4] = {before[0], before[1] + rho * sgx, before[2] + rho * sgy,
                            before[3] + 2 * rho * (sgx * ux + sgy * uy) +
                                rho * (sgx * sgx + sgy * sgy)};
    for (int m = 0; m < 4; ++m)
      if (fabs(after[m] - want[m]) > 1e-13 * (1 + fabs(want[m])))
        fail_msg("trial %d, moment %d: %.17g, expected %.17g", trial, m, after[m], want[m]);
  }
}

/* A block's field of the d2q37 dims. */
static void *field_make(const int n[3], int dp, grid_dims_t *d) {
  *d = grid_dims_make(n, D37_Q, 3, GRID_SOA, dp ? 8 : 4);
  void *v = field_values_alloc(d, dp ? 8 : 4);
  assert_non_null(v);
  return v;
}

typedef struct wave {
  int n[2];
} wave_t;

/* fields that vary along both axes */
static void wave_fields(int x, int y, const void *ctx, double out[4]) {
  const wave_t *w = ctx;
  const double kx = 2 * 3.14159265358979323846 * x / w->n[0], ky = 2 * 3.14159265358979323846 * y / w->n[1];
  out[0] = 1.0 + 0.1 * sin(kx);
  out[1] = 0.05 * cos(ky);
  out[2] = -0.03 * sin(kx + ky);
  out[3] = 1.0 + 0.05 * cos(kx);
}

static void test_init_macro(void **state) {
  (void)state;
  for (int dp = 0; dp <= 1; ++dp) {
    const int n[3] = {13, 7, 1};
    grid_dims_t d, od;
    void *f = field_make(n, dp, &d);
    od = grid_dims_make(n, 4, 0, GRID_SOA, dp ? 8 : 4);
    void *m = field_values_alloc(&od, dp ? 8 : 4);
    assert_non_null(m);
    const d2q37_params_t p = {.tau = 0.7, .g = {1e-4, -3e-4}};
    d2q37_consts_t k;
    d2q37_constants(&p, dp, &k);
    const wave_t w = {{13, 7}};
    d2q37_init(dp, f, &d, &k, p.g, wave_fields, &w);
    d2q37_macro(dp, f, &d, &k, p.g, m, &od);
    const double tol = dp ? 1e-14 : 2e-6; /* round-off of the storage precision */
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x) {
        double want[4];
        wave_fields(x, y, &w, want);
        for (int c = 0; c < 4; ++c) {
          const double got = field_value(m, dp ? 8 : 4, grid_index(&od, x, y, 0, c));
          if (fabs(got - want[c]) > tol)
            fail_msg("dp %d cell (%d, %d) field %d: %.17g, expected %.17g", dp, x, y, c, got,
                     want[c]);
        }
      }
    free(f);
    free(m);
  }
}

/* With tau = 1 and no force a cell's new populations are the equilibrium of the pulled
 * ones: from a field whose populations are each one cell's label in one direction and
 * the rest equilibrium, the pulled value of direction i at x is the source's at x - c_i. */
static void test_stream_moves(void **state) {
  (void)state;
  const int n[3] = {12, 10, 1};
  grid_dims_t d;
  double *src = field_make(n, 1, &d), *dst = field_make(n, 1, &d);
  d2q37_consts_t k;
  consts_d(1.0, 0, 0, &k);
  const lattice_t *l = &lattice_d2q37;
  /* every population of every cell (ghosts included) distinct; each cell's own moments
     then differ from cell to cell, and the output of cell x is f_eq of the moments of
     {src_i(x - c_i)} */
  for (int y = -3; y < n[1] + 3; ++y)
    for (int x = -3; x < n[0] + 3; ++x)
      for (int i = 0; i < D37_Q; ++i)
        src[grid_index(&d, x, y, 0, i)] =
            l->w[i] * (1.0 + 0.001 * (x + 3) + 0.0007 * (y + 3) + 0.0001 * i);
  d2q37_stream_collide(1, src, dst, &d, &k, 0, 0, 0);
  for (int y = 0; y < n[1]; ++y)
    for (int x = 0; x < n[0]; ++x) {
      double f[D37_Q];
      for (int i = 0; i < D37_Q; ++i)
        f[i] = src[grid_index(&d, x - l->c[0][i], y - l->c[1][i], 0, i)];
      d37_collide_d(&k.d, f); /* the same cell function, scalar */
      for (int i = 0; i < D37_Q; ++i) {
        const double got = dst[grid_index(&d, x, y, 0, i)];
        if (memcmp(&got, &f[i], sizeof got) != 0)
          fail_msg("cell (%d, %d) direction %d: %.17g, the scalar cell %.17g", x, y, i, got,
                   f[i]);
      }
    }
  free(src);
  free(dst);
}

/* Every CPU level of this build, that the CPU has, computes what the lowest computes, in
 * both precisions, with a force, without and with walls, fused and split (rows of a
 * length that leaves a partial vector); the split kernel what the fused one computes. */
static void test_levels_bitwise(void **state) {
  (void)state;
  const int nl = cpu_level_count();
  for (int run = 0; run < 4; ++run) {
    const int dp = run & 1, walls = run >> 1; /* with walls at y- and y+: their ghost rows */
    const int n[3] = {29, 5, 1};
    const size_t es = dp ? 8 : 4;
    grid_dims_t d;
    void *src = field_make(n, dp, &d), *ref = field_make(n, dp, &d), *out = field_make(n, dp, &d);
    const d2q37_params_t p = {.tau = 0.6, .g = {2e-4, -5e-4}, .wall_t = {1.1, 0.95}};
    d2q37_consts_t k;
    d2q37_constants(&p, dp, &k);
    const wave_t w = {{29, 5}};
    d2q37_init(dp, src, &d, &k, p.g, wave_fields, &w);
    const char *saved = getenv("TESSERA_CPU_LEVEL");
    int first = 1;
    for (int sl = 0; sl < 2 * nl; ++sl) { /* every level fused, then every level split */
      const int split = sl / nl, lv = sl % nl;
      if (!cpu_level_supported(lv)) continue;
      char msg[256];
      setenv("TESSERA_CPU_LEVEL", cpu_level_name(lv), 1);
      assert_int_equal(cpu_level_from_environment(msg, sizeof msg), 0);
      d2q37_stream_collide(dp, src, first ? ref : out, &d, &k, walls, walls, split);
      if (!first)
        for (int y = 0; y < n[1]; ++y)
          for (int x = 0; x < n[0]; ++x)
            for (int i = 0; i < D37_Q; ++i) {
              const size_t e = grid_index(&d, x, y, 0, i);
              if (memcmp((char *)out + e * es, (char *)ref + e * es, es) != 0)
                fail_msg("level %s, dp %d, walls %d, split %d: cell (%d, %d) direction %d "
                         "differs", cpu_level_name(lv), dp, walls, split, x, y, i);
            }
      first = 0;
    }
    if (saved) setenv("TESSERA_CPU_LEVEL", saved, 1);
    else unsetenv("TESSERA_CPU_LEVEL");
    char msg[256];
    assert_int_equal(cpu_level_from_environment(msg, sizeof msg), 0);
    free(src);
    free(ref);
    free(out);
  }
}

/* A gas at rest at the walls' temperature between them, without force, stays as it is:
 * each wall returns into a column what left the column into it, as the rest Maxwellian's
 * populations leaving and entering through a plane carry the same mass; the walls' rows
 * are then the equilibrium again, to round-off (a few ulps of the sums of 15 populations).
 * A wall at another temperature heats or cools the rows next to it and keeps the mass. */
static void rest_start(int x, int y, const void *ctx, double out[4]) {
  (void)x, (void)y;
  const double *t = ctx;
  out[0] = 1.3;
  out[1] = out[2] = 0;
  out[3] = *t;
}

static void test_walls(void **state) {
  (void)state;
  const int n[3] = {9, 8, 1};
  for (int hot = 0; hot <= 1; ++hot) {
    grid_dims_t d;
    double *src = field_make(n, 1, &d), *dst = field_make(n, 1, &d);
    const double t = 0.9;
    const d2q37_params_t p = {.tau = 0.8, .wall_t = {hot ? 1.2 : t, t}};
    d2q37_consts_t k;
    d2q37_constants(&p, 1, &k);
    d2q37_init(1, src, &d, &k, p.g, rest_start, &t);
    /* periodic along x: the ghost columns copy the other side's interior */
    for (int y = 0; y < n[1]; ++y)
      for (int g = 1; g <= 3; ++g)
        for (int i = 0; i < D37_Q; ++i) {
          src[grid_index(&d, -g, y, 0, i)] = src[grid_index(&d, n[0] - g, y, 0, i)];
          src[grid_index(&d, n[0] - 1 + g, y, 0, i)] = src[grid_index(&d, g - 1, y, 0, i)];
        }
    d2q37_stream_collide(1, src, dst, &d, &k, 1, 1, 0);
    double m0 = 0, m1 = 0, e0 = 0, e1 = 0, worst = 0;
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x)
        for (int i = 0; i < D37_Q; ++i) {
          const double a = src[grid_index(&d, x, y, 0, i)], b = dst[grid_index(&d, x, y, 0, i)];
          const double c2 = lattice_d2q37.c[0][i] * lattice_d2q37.c[0][i] +
                            lattice_d2q37.c[1][i] * lattice_d2q37.c[1][i];
          m0 += a, m1 += b, e0 += a * c2, e1 += b * c2;
          worst = fmax(worst, fabs(b - a) / a);
        }
    if (fabs(m1 / m0 - 1) > 1e-14) fail_msg("hot %d: mass %.17g, was %.17g", hot, m1, m0);
    if (!hot && worst > 1e-13) fail_msg("rest at the walls' temperature moved: %.3e", worst);
    if (hot && !(e1 > e0 * (1 + 1e-6)))
      fail_msg("a hot wall did not heat the gas: energy %.17g, was %.17g", e1, e0);
    free(src);
    free(dst);
  }
}

/* The block in parts (the walls' ghost rows, then a bulk and the four sides of its
 * 3-cell frame, in that order and in the reverse) gives the whole block's values bitwise,
 * fused and split, in both precisions: the inner/outer split of Calore et al. is ready for
 * an exchange that overlaps the bulk. */
static void test_frame(void **state) {
  (void)state;
  for (int run = 0; run < 4; ++run) {
    const int dp = run & 1, split = run >> 1;
    const int n[3] = {37, 23, 1};
    const size_t es = dp ? 8 : 4;
    grid_dims_t d;
    void *src = field_make(n, dp, &d), *ref = field_make(n, dp, &d), *out = field_make(n, dp, &d);
    const d2q37_params_t p = {.tau = 0.7, .g = {1e-4, -2e-4}, .wall_t = {1.05, 0.97}};
    d2q37_consts_t k;
    d2q37_constants(&p, dp, &k);
    const wave_t w = {{37, 23}};
    d2q37_init(dp, src, &d, &k, p.g, wave_fields, &w);
    d2q37_stream_collide(dp, src, ref, &d, &k, 1, 1, split);
    const int r = 3, nx = n[0], ny = n[1];
    const int boxes[5][4] = {{r, r, nx - r, ny - r}, /* the bulk, then the frame */
                             {0, 0, nx, r}, {0, ny - r, nx, ny}, {0, r, r, ny - r},
                             {nx - r, r, nx, ny - r}};
    for (int order = 0; order < 2; ++order) {
      memset(out, 0, d.elements * es);
      d2q37_walls(dp, src, &d, &k, 1, 1, 0, d.nx);
      for (int b = 0; b < 5; ++b) {
        const int *q = boxes[order ? 4 - b : b];
        const int lo[2] = {q[0], q[1]}, hi[2] = {q[2], q[3]};
        d2q37_stream_collide_box(dp, src, out, &d, &k, lo, hi, split);
      }
      for (int y = 0; y < ny; ++y)
        for (int x = 0; x < nx; ++x)
          for (int i = 0; i < D37_Q; ++i) {
            const size_t e = grid_index(&d, x, y, 0, i);
            if (memcmp((char *)out + e * es, (char *)ref + e * es, es) != 0)
              fail_msg("dp %d, split %d, order %d: cell (%d, %d) direction %d differs", dp,
                       split, order, x, y, i);
          }
    }
    free(src);
    free(ref);
    free(out);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_frame),
      cmocka_unit_test(test_walls),
      cmocka_unit_test(test_quadrature),
      cmocka_unit_test(test_equilibrium_moments),
      cmocka_unit_test(test_collision_conserves),
      cmocka_unit_test(test_init_macro),
      cmocka_unit_test(test_stream_moves),
      cmocka_unit_test(test_levels_bitwise),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
