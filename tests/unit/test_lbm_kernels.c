/* The lattices and the CPU LBM kernels of every lattice, layout and precision: the
 * descriptors' moments (weights, isotropy, inverses); a resting fluid staying at rest;
 * streaming alone moving every value to the right slot; a cell's update not depending
 * on where in its row it lies (vector lanes, masked last vector, scalar rest); AoS and
 * SoA giving bitwise the same cells; the moments read-out; packing a slice of one
 * layout and unpacking it into the other; the dims of a field too large to address; the
 * coupled kernels (a force or an advection velocity per cell); the kernels on the two
 * parts of a region (an inner box without ghost values, then the shell) giving what one
 * call gives. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "cpu_level.h"
#include "grid.h"
#include "lattice.h"
#include "lbm_kernels.h"

#include "lbm_test_field.h"

/* Runs the block for the kernel set k of every lattice, layout (lay_) and precision (dp_). */
#define FOR_EACH_SET(...)                                                                \
  do {                                                                                   \
    int nl_;                                                                             \
    const lattice_t *const *all_ = lattice_all(&nl_);                                    \
    for (int li_ = 0; li_ < nl_; ++li_)                                                  \
      for (int lay_ = 0; lay_ < 2; ++lay_)                                               \
        for (int dp_ = 0; dp_ < 2; ++dp_) {                                              \
          const lbm_kernels_t *k = lbm_kernels_find(all_[li_], (grid_layout_t)lay_, dp_); \
          assert_non_null(k);                                                            \
          assert_ptr_equal(k->lattice, all_[li_]);                                       \
          __VA_ARGS__                                                                    \
        }                                                                                \
  } while (0)

/* Every lattice: the weights sum to 1; sum w c_a = 0; sum w c_a c_b = c_s^2 delta_ab;
 * the third moments vanish; for the flow lattices (all but D3Q7) the fourth moments are
 * c_s^4 (delta_ab delta_cd + delta_ac delta_bd + delta_ad delta_bc) over the lattice's
 * dimensions: what the Navier-Stokes equations need of the weights' equilibrium. D3Q13's
 * are not (sum w cx^4 = 1/3 = 3 c_s^4 but sum w cx^2 cy^2 = 1/6, not 1/9): its
 * equilibrium is set in moment space (moment_eq), checked in test_lbm_collisions. The
 * rest: inverse(i) has c = -c_i; the
 * reach is the largest |c_i| component; 2-D lattices have c_z = 0. Tolerance 1e-15:
 * sums of a few dozen products of rationals rounded to doubles. */
static void test_lattice_moments(void **state) {
  int n;
  const lattice_t *const *all = lattice_all(&n);
  assert_int_equal(n, 6);
  for (int l = 0; l < n; ++l) {
    const lattice_t *lat = all[l];
    const double cs2 = 1.0 / lat->inv_cs2;
    assert_ptr_equal(lattice_find(lat->name), lat);
    double m0 = 0, m1[3] = {0}, m2[3][3] = {{0}}, m3[3][3][3] = {{{0}}};
    int reach = 0;
    for (int i = 0; i < lat->q; ++i) {
      const int *ci[3] = {&lat->c[0][i], &lat->c[1][i], &lat->c[2][i]};
      m0 += lat->w[i];
      for (int a = 0; a < 3; ++a) {
        m1[a] += lat->w[i] * *ci[a];
        if (abs(*ci[a]) > reach) reach = abs(*ci[a]);
        assert_int_equal(lat->c[a][lat->inv[i]], -*ci[a]);
        for (int b = 0; b < 3; ++b) {
          m2[a][b] += lat->w[i] * *ci[a] * *ci[b];
          for (int c = 0; c < 3; ++c) m3[a][b][c] += lat->w[i] * *ci[a] * *ci[b] * *ci[c];
        }
      }
      if (lat->d == 2) assert_int_equal(lat->c[2][i], 0);
    }
    assert_int_equal(lat->c[0][0] | lat->c[1][0] | lat->c[2][0], 0);
    assert_int_equal(reach, lat->reach);
    assert_true(fabs(m0 - 1) < 1e-15);
    for (int a = 0; a < 27; ++a) assert_true(fabs(m3[a / 9][(a / 3) % 3][a % 3]) < 1e-15);
    for (int a = 0; a < 3; ++a) {
      assert_true(fabs(m1[a]) < 1e-15);
      for (int b = 0; b < 3; ++b) {
        const double want = a == b && a < lat->d ? cs2 : 0;
        if (fabs(m2[a][b] - want) > 1e-15)
          fail_msg("%s: second moment (%d,%d) %.17g, want %.17g", lat->name, a, b, m2[a][b], want);
      }
    }
    if (lat->inv_cs2 != 3) continue; /* D3Q7: not a flow lattice */
    for (int a = 0; a < lat->d; ++a)
      for (int b = 0; b < lat->d; ++b)
        for (int c = 0; c < lat->d; ++c)
          for (int e = 0; e < lat->d; ++e) {
            double m4 = 0;
            for (int i = 0; i < lat->q; ++i)
              m4 += lat->w[i] * lat->c[a][i] * lat->c[b][i] * lat->c[c][i] * lat->c[e][i];
            const int pairs = (a == b && c == e) + (a == c && b == e) + (a == e && b == c);
            /* D3Q13: 1/3 for aaaa, 1/6 for aabb */
            const double want = !lat->moment_eq ? cs2 * cs2 * pairs
                                : pairs == 3    ? 1.0 / 3
                                : pairs == 1    ? 1.0 / 6
                                                : 0;
            if (fabs(m4 - want) > 1e-15)
              fail_msg("%s: fourth moment (%d,%d,%d,%d) %.17g, want %.17g", lat->name, a, b, c,
                       e, m4, want);
          }
  }
  assert_null(lattice_find("d3q18"));
}

/* The values crossing a face, edge and corner come from the c_i: D3Q19 sends 5 per face
 * cell, 1 per edge cell, none per corner; D3Q27 9, 3, 1. */
static void test_lattice_crossing(void **state) {
  int out[LATTICE_MAX_Q];
  const int face[3] = {1, 0, 0}, edge[3] = {0, -1, 1}, corner[3] = {-1, 1, 1};
  assert_int_equal(lattice_crossing(&lattice_d3q19, face, out), 5);
  assert_int_equal(lattice_crossing(&lattice_d3q19, edge, out), 1);
  assert_int_equal(lattice_crossing(&lattice_d3q19, corner, out), 0);
  assert_int_equal(lattice_crossing(&lattice_d3q27, face, out), 9);
  assert_int_equal(lattice_crossing(&lattice_d3q27, edge, out), 3);
  assert_int_equal(lattice_crossing(&lattice_d3q27, corner, out), 1);
  assert_int_equal(lattice_crossing(&lattice_d3q15, edge, out), 2);
  assert_int_equal(lattice_crossing(&lattice_d2q9, face, out), 3);
  assert_int_equal(lattice_crossing(&lattice_d3q7, face, out), 1);
  assert_int_equal(lattice_d3q7.c[0][out[0]], 1);
}

/* A resting fluid in equilibrium stays at rest (ghost layer at rest too): bitwise with the
 * shifted storage, where every stored value is 0; otherwise within 4 ulp of the storage
 * precision, as the stored weights do not sum to exactly 1 in floating point. */
static void test_rest_is_steady(void **state) {
  FOR_EACH_SET({
    field_t a = field_make(k, 5, 4, 3), b = field_make(k, 5, 4, 3);
    lbm_params_t p = {.omega_plus = 1.3, .omega_minus = lbm_omega_minus(1.3, 3.0 / 16), .rho0 = 1};
    const double tol = 4 * (dp_ ? 2.2e-16 : 1.2e-7);
    for (int shifted = 0; shifted < 2; ++shifted) {
      k->init(a.v, &a.d, &p, shifted, NULL, NULL);
      k->init(b.v, &b.d, &p, shifted, NULL, NULL);
      for (int v = 0; v < 2; ++v) {
        k->stream_collide(a.v, b.v, &a.d, &p, (lbm_variant_t)v);
        for (int z = 0; z < a.d.nz; ++z)
          for (int y = 0; y < a.d.ny; ++y)
            for (int x = 0; x < a.d.nx; ++x)
              for (int i = 0; i < k->lattice->q; ++i) {
                const double va = field_get(&a, x, y, z, i), vb = field_get(&b, x, y, z, i);
                if (shifted ? (va != 0.0 || vb != 0.0) : fabs(vb - va) > tol * fabs(va))
                  fail_msg("%s %s dp %d shifted %d variant %d: (%d,%d,%d) slot %d: %.17g -> %.17g",
                           k->lattice->name, grid_layout_name(k->layout), dp_, shifted, v, x, y,
                           z, i, va, vb);
              }
      }
    }
    free(a.v);
    free(b.v);
  });
}

/* A value per slot that differs between all slots of a small field and is exact in
 * single precision. */
static double slot_value(int x, int y, int z, int i) {
  return (double)((((z + 2) * 61 + (y + 2)) * 67 + (x + 2)) * 29 + i) * 0.25 - 1000.0;
}

/* Streaming alone: dst(x)_i = src(x - c_i)_i for every interior cell; the copy of cells:
 * dst(x)_i = src(x)_i; row lengths below, at and between the vector widths (8 cells DP,
 * 16 SP). AoS leaves the ghost layer of dst untouched; SoA writes it (its values there
 * are unspecified), but nothing outside the field. */
static void test_stream_only(void **state) {
  const int widths[] = {1, 5, 8, 13, 16, 21, 37};
  FOR_EACH_SET({
    const lattice_t *l = k->lattice;
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; ++w)
      for (int pull = 0; pull < 2; ++pull) {
        field_t a = field_make(k, widths[w], 3, 2), b = field_make(k, widths[w], 3, 2);
        const int g = a.d.ghost;
        for (int z = -g; z < a.d.nz + g; ++z)
          for (int y = -g; y < a.d.ny + g; ++y)
            for (int x = -g; x < a.d.nx + g; ++x)
              for (int i = 0; i < l->q; ++i) {
                field_set(&a, x, y, z, i, slot_value(x, y, z, i));
                field_set(&b, x, y, z, i, -7);
              }
        const lbm_params_t p = {.omega_plus = 1.0, .omega_minus = 1.0, .rho0 = 1.0};
        k->stream_collide(a.v, b.v, &a.d, &p, pull ? LBM_VARIANT_STREAM : LBM_VARIANT_COPY);
        for (int z = -g; z < a.d.nz + g; ++z)
          for (int y = -g; y < a.d.ny + g; ++y)
            for (int x = -g; x < a.d.nx + g; ++x)
              for (int i = 0; i < l->q; ++i) {
                bool ghost = x < 0 || y < 0 || z < 0 || x >= a.d.nx || y >= a.d.ny || z >= a.d.nz;
                if (ghost && k->layout == GRID_SOA) continue;
                double want = ghost ? -7
                                    : field_get(&a, x - pull * l->c[0][i], y - pull * l->c[1][i],
                                                z - pull * l->c[2][i], i);
                if (field_get(&b, x, y, z, i) != want)
                  fail_msg("%s %s dp %d pull %d nx %d: cell (%d,%d,%d) slot %d", l->name,
                           grid_layout_name(k->layout), dp_, pull, a.d.nx, x, y, z, i);
              }
        free(a.v);
        free(b.v);
      }
  });
}

/* Random PDFs near the weights, the same values in whatever field they are written to:
 * value of cell (x + xoff, y, z) slot i. */
static double pdf_value(const lattice_t *l, int x, int y, int z, int i) {
  uint32_t h = (uint32_t)((((z + 5) * 131 + (y + 5)) * 137 + (x + 5)) * 31 + i) * 2654435761u;
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  return l->w[i] * (0.9 + 0.2 * (double)(h & 0xffffff) / 16777216.0);
}

static void fill_pdfs(field_t *f, const lattice_t *l, int xoff) {
  const int g = f->d.ghost;
  for (int z = -g; z < f->d.nz + g; ++z)
    for (int y = -g; y < f->d.ny + g; ++y)
      for (int x = -g; x < f->d.nx + g; ++x)
        for (int i = 0; i < l->q; ++i) field_set(f, x, y, z, i, pdf_value(l, x + xoff, y, z, i));
}

/* One stream-collide step of a field 37 cells wide (whole vectors, then a partial one)
 * against a field 5 cells wide (no whole vector) holding cells 16..20 of the first with
 * their neighbours, and against the 37-wide field of the other layout: the cells must
 * come out bitwise equal, for each collision, with and without force, and for the
 * advection-diffusion collisions. */
static void test_row_position_and_layouts(void **state) {
  int nl;
  const lattice_t *const *all = lattice_all(&nl);
  for (int li = 0; li < nl; ++li)
    for (int dp = 0; dp < 2; ++dp) {
      const lattice_t *l = all[li];
      const lbm_kernels_t *ks[2] = {lbm_kernels_find(l, GRID_AOS, dp), lbm_kernels_find(l, GRID_SOA, dp)};
      field_t wa[2], wb[2], na[2], nb[2];
      for (int s = 0; s < 2; ++s) {
        wa[s] = field_make(ks[s], 37, 3, 2);
        wb[s] = field_make(ks[s], 37, 3, 2);
        na[s] = field_make(ks[s], 5, 3, 2);
        nb[s] = field_make(ks[s], 5, 3, 2);
        fill_pdfs(&wa[s], l, 0);
        fill_pdfs(&na[s], l, 16);
      }
      /* 0..3: SRT, TRT without and with the force; 4, 5: ADE; 6, 7: MRT without and with
         the force; 8..10: Smagorinsky with SRT, TRT, MRT; 11, 12: the cumulant with the
         force, and with Smagorinsky on shifted storage (D2Q9, D3Q27) */
      for (int variant = 0; variant < 13; ++variant) {
        if (variant >= 11 && !lbm_cumulant_lattice(l)) continue;
        lbm_params_t p = {.omega_plus = 1.7, .omega_minus = lbm_omega_minus(1.7, 0.25),
                          .rho0 = 1, .force = {1e-4, -2e-5, l->d == 3 ? 3e-5 : 0},
                          .use_force = (variant < 4 && (variant & 1)) || variant == 7 ||
                                       variant == 11,
                          .velocity = {0.03, -0.02, l->d == 3 ? 0.01 : 0},
                          .smagorinsky = variant >= 8 && variant != 11 ? 0.17 : 0,
                          .magic = 0.25, .shift = variant == 12 ? 1 : 0,
                          .cumulant_rate = {1.1, 0.9, 1.2, 1.0, 1.3}};
        for (int m = 0; m < l->q; ++m) p.mrt_rate[m] = 1.0 + 0.05 * (m % 7);
        const lbm_variant_t v = variant >= 11  ? LBM_VARIANT_CUMULANT
                                : variant == 4 ? LBM_VARIANT_ADE_SRT
                                : variant == 5 ? LBM_VARIANT_ADE_TRT
                                : variant == 6 || variant == 7 || variant == 10 ? LBM_VARIANT_MRT
                                : variant == 9 || (variant < 4 && (variant & 2)) ? LBM_VARIANT_TRT
                                                                                 : LBM_VARIANT_SRT;
        for (int s = 0; s < 2; ++s) {
          ks[s]->stream_collide(wa[s].v, wb[s].v, &wa[s].d, &p, v);
          ks[s]->stream_collide(na[s].v, nb[s].v, &na[s].d, &p, v);
        }
        for (int s = 0; s < 2; ++s)
          for (int z = 0; z < 2; ++z)
            for (int y = 0; y < 3; ++y)
              for (int x = 0; x < 37; ++x)
                for (int i = 0; i < l->q; ++i) {
                  const uint64_t want = field_bits(&wb[0], x, y, z, i);
                  if (field_bits(&wb[s], x, y, z, i) != want)
                    fail_msg("%s dp %d variant %d: cell (%d,%d,%d) slot %d: SoA differs from AoS",
                             l->name, dp, variant, x, y, z, i);
                  if (x >= 16 && x < 21 && field_bits(&nb[s], x - 16, y, z, i) != want)
                    fail_msg("%s %s dp %d variant %d: cell (%d,%d,%d) slot %d differs with its "
                             "place in the row", l->name, grid_layout_name(ks[s]->layout), dp,
                             variant, x, y, z, i);
                }
      }
      for (int s = 0; s < 2; ++s) {
        free(wa[s].v);
        free(wb[s].v);
        free(na[s].v);
        free(nb[s].v);
      }
    }
}

/* A field of n components per cell beside a kernel set's PDF field (same cells, layout
 * and precision), every component of every interior cell set by value(x, y, z, c). */
static field_t aux_sized(const lbm_kernels_t *k, const int n[3], int ncomp,
                         double (*value)(int, int, int, int)) {
  field_t f = {.d = grid_dims_make(n, ncomp, 1, k->layout, k->esize), .esize = k->esize};
  size_t bytes = (f.d.elements * f.esize + 63) / 64 * 64;
  f.v = aligned_alloc(64, bytes);
  assert_non_null(f.v);
  memset(f.v, 0, bytes);
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x)
        for (int c = 0; c < ncomp; ++c)
          if (value) field_set(&f, x, y, z, c, value(x, y, z, c));
  return f;
}

static field_t aux_make(const lbm_kernels_t *k, int ncomp, double (*value)(int, int, int, int)) {
  return aux_sized(k, (const int[3]){37, 3, 2}, ncomp, value);
}

static const double coupled_force[3] = {1e-4, -2e-5, 3e-5};
static const double coupled_velocity[3] = {0.03, -0.02, 0.01};
static double uniform_force(int x, int y, int z, int c) { return (void)x, (void)y, (void)z, coupled_force[c]; }
static double uniform_velocity(int x, int y, int z, int c) { return (void)x, (void)y, (void)z, coupled_velocity[c]; }
static double varying_force(int x, int y, int z, int c) { return 1e-5 * (double)((x * 7 + y * 3 + z * 5 + c) % 11 - 5); }

/* The coupled kernels (a force or an advection velocity per cell), every lattice, layout
 * and precision:
 *  - with the same force in every cell they give what stream_collide gives with that
 *    force, bitwise (DP; in SP the constant (1 - omega_minus/2) is rounded from a float
 *    sum instead of a double one, so only AoS = SoA is bitwise), and the velocity they
 *    write is the moments' velocity of the result (to 1e-15: REAL against a double
 *    sum of the same values);
 *  - with a force that changes from cell to cell, AoS and SoA agree bitwise;
 *  - ADE with the same advection velocity everywhere gives stream_collide's ADE
 *    bitwise, and the force it writes is beta (C - c0) of the result's C (to 1e-14 DP,
 *    1e-5 SP relative: C summed again, in double, over the up to 27 values after the
 *    collision, which conserves C up to the rounding of each value). */
static void test_coupled(void **state) {
  (void)state;
  int nl;
  const lattice_t *const *all = lattice_all(&nl);
  for (int li = 0; li < nl; ++li)
    for (int dp = 0; dp < 2; ++dp)
      for (int variant = 0; variant < 8; ++variant) { /* 4: MRT, 5, 6: Smagorinsky TRT, MRT,
                                                         7: the cumulant (D2Q9, D3Q27) */
        const lattice_t *l = all[li];
        if (variant == 7 && !lbm_cumulant_lattice(l)) continue;
        const bool ade = variant == 2 || variant == 3, trt = variant & 1;
        const lbm_variant_t v = variant == 7                 ? LBM_VARIANT_CUMULANT
                                : variant == 4 || variant == 6 ? LBM_VARIANT_MRT
                                : ade ? (trt ? LBM_VARIANT_ADE_TRT : LBM_VARIANT_ADE_SRT)
                                      : (trt ? LBM_VARIANT_TRT : LBM_VARIANT_SRT);
        field_t src[2], want[2], got[2], vary[2];
        for (int s = 0; s < 2; ++s) {
          const lbm_kernels_t *k = lbm_kernels_find(l, (grid_layout_t)s, dp);
          src[s] = field_make(k, 37, 3, 2);
          want[s] = field_make(k, 37, 3, 2);
          got[s] = field_make(k, 37, 3, 2);
          vary[s] = field_make(k, 37, 3, 2);
          fill_pdfs(&src[s], l, 0);
          lbm_params_t p = {.omega_plus = 1.7, .omega_minus = lbm_omega_minus(1.7, 0.25), .rho0 = 1,
                            .force = {coupled_force[0], coupled_force[1], coupled_force[2]},
                            .use_force = !ade,
                            .velocity = {coupled_velocity[0], coupled_velocity[1], coupled_velocity[2]},
                            .smagorinsky = variant == 5 || variant == 6 ? 0.17 : 0,
                            .magic = 0.25, .cumulant_rate = {1.1, 0.9, 1.2, 1.0, 1.3}};
          for (int m = 0; m < l->q; ++m) p.mrt_rate[m] = 1.0 + 0.05 * (m % 7);
          k->stream_collide(src[s].v, want[s].v, &src[s].d, &p, v);
          field_t in = aux_make(k, 3, ade ? uniform_velocity : uniform_force);
          field_t out = aux_make(k, 3, NULL), in2 = aux_make(k, 3, varying_force);
          lbm_coupling_t c = {.beta = {0.5, -0.25, 2}, .c0 = 0.3};
          if (ade) {
            c.advection = in.v, c.advection_dims = in.d;
            c.source_force = out.v, c.source_force_dims = out.d;
          } else {
            c.force = in.v, c.force_dims = in.d;
            c.velocity = out.v, c.velocity_dims = out.d;
          }
          lbm_params_t pc = p;
          memset(pc.force, 0, sizeof pc.force);
          memset(pc.velocity, 0, sizeof pc.velocity);
          k->coupled(src[s].v, got[s].v, &src[s].d, &pc, v, &c);
          double *rho = malloc(37 * 3 * 2 * sizeof *rho), *u = malloc(3 * 37 * 3 * 2 * sizeof *u);
          assert_non_null(rho);
          assert_non_null(u);
          k->moments(got[s].v, &got[s].d, &p, 0, rho, u);
          for (int z = 0; z < 2; ++z)
            for (int y = 0; y < 3; ++y)
              for (int x = 0; x < 37; ++x) {
                for (int i = 0; i < l->q; ++i)
                  if ((dp || ade) && field_bits(&got[s], x, y, z, i) != field_bits(&want[s], x, y, z, i))
                    fail_msg("%s dp %d variant %d %s: cell (%d,%d,%d) slot %d differs from "
                             "stream_collide", l->name, dp, variant, grid_layout_name(k->layout), x, y, z, i);
                const size_t n = ((size_t)z * 3 + (size_t)y) * 37 + (size_t)x;
                const double tol = dp ? 1e-15 : 1e-6;
                for (int a = 0; a < 3 && !ade; ++a)
                  if (a < l->d && fabs(field_get(&out, x, y, z, a) - u[3 * n + (size_t)a]) > tol)
                    fail_msg("%s dp %d variant %d: velocity written %.17g, moments %.17g", l->name, dp,
                             variant, field_get(&out, x, y, z, a), u[3 * n + (size_t)a]);
                for (int a = 0; a < 3 && ade; ++a) {
                  double f = c.beta[a] * (rho[n] - c.c0);
                  if (fabs(field_get(&out, x, y, z, a) - f) > 10 * tol * (fabs(f) + 1e-3))
                    fail_msg("%s dp %d variant %d: force written %.17g, beta (C - c0) %.17g", l->name,
                             dp, variant, field_get(&out, x, y, z, a), f);
                }
              }
          if (!ade) { /* a first step: the force counts half, as stream_collide's with F/2 */
            field_t hw = field_make(k, 37, 3, 2), hg = field_make(k, 37, 3, 2);
            lbm_params_t ph = p;
            for (int a = 0; a < 3; ++a) ph.force[a] = 0.5 * coupled_force[a];
            k->stream_collide(src[s].v, hw.v, &src[s].d, &ph, v);
            c.start = 1;
            k->coupled(src[s].v, hg.v, &src[s].d, &pc, v, &c);
            c.start = 0;
            for (int z = 0; z < 2 && dp; ++z)
              for (int y = 0; y < 3; ++y)
                for (int x = 0; x < 37; ++x)
                  for (int i = 0; i < l->q; ++i)
                    if (field_bits(&hg, x, y, z, i) != field_bits(&hw, x, y, z, i))
                      fail_msg("%s variant %d %s: first step: cell (%d,%d,%d) slot %d differs "
                               "from stream_collide with half the force", l->name, variant,
                               grid_layout_name(k->layout), x, y, z, i);
            free(hw.v);
            free(hg.v);
          }
          if (!ade) {
            c.force = in2.v, c.force_dims = in2.d;
            k->coupled(src[s].v, vary[s].v, &src[s].d, &pc, v, &c);
          }
          free(rho);
          free(u);
          free(in.v);
          free(out.v);
          free(in2.v);
        }
        for (int z = 0; z < 2; ++z)
          for (int y = 0; y < 3; ++y)
            for (int x = 0; x < 37; ++x)
              for (int i = 0; i < l->q; ++i) {
                if (field_bits(&got[1], x, y, z, i) != field_bits(&got[0], x, y, z, i))
                  fail_msg("%s dp %d variant %d: cell (%d,%d,%d) slot %d: SoA differs from AoS",
                           l->name, dp, variant, x, y, z, i);
                if (!ade && field_bits(&vary[1], x, y, z, i) != field_bits(&vary[0], x, y, z, i))
                  fail_msg("%s dp %d variant %d: varying force: cell (%d,%d,%d) slot %d: SoA "
                           "differs from AoS", l->name, dp, variant, x, y, z, i);
              }
        for (int s = 0; s < 2; ++s) {
          free(src[s].v);
          free(want[s].v);
          free(got[s].v);
          free(vary[s].v);
        }
      }
}

/* The moments of the initial equilibrium give back the density and velocity it was made
 * from (to 1e-14 relative in DP, 1e-6 in SP: the equilibrium's values rounded to the
 * storage precision), the same in both layouts bitwise. */
static void init_flow(int x, int y, int z, void *ctx, double out[4]) {
  out[0] = 1.0 + 0.01 * x - 0.02 * y;
  out[1] = 0.01 * (y + 1);
  out[2] = -0.02 * (z + 1);
  out[3] = *(const int *)ctx == 3 ? 0.005 * x : 0;
}

/* The ghost cells of f that no cell of the box [lo, hi) reaches set to a value no
 * update of a box cell may use (what an overlapped step's late ghost slices hold while
 * the inner box runs). */
static void spoil_ghosts(field_t *f, const lattice_t *l, const int lo[3], const int hi[3]) {
  const int g = f->d.ghost, gz = f->d.gz, r = l->reach;
  for (int z = -gz; z < f->d.nz + gz; ++z)
    for (int y = -g; y < f->d.ny + g; ++y)
      for (int x = -g; x < f->d.nx + g; ++x) {
        const int at[3] = {x, y, z};
        bool ghost = x < 0 || y < 0 || z < 0 || x >= f->d.nx || y >= f->d.ny || z >= f->d.nz;
        bool reached = true;
        for (int a = 0; a < 3; ++a) reached = reached && at[a] >= lo[a] - r && at[a] < hi[a] + r;
        for (int i = 0; ghost && !reached && i < l->q; ++i) field_set(f, x, y, z, i, 1e30);
      }
}

/* Compares the cells of f in the box [lo, hi) (every interior cell where all is true)
 * with want, bit for bit. */
static void expect_cells(const field_t *f, const field_t *want, const lattice_t *l,
                         const int lo[3], const int hi[3], bool all, const char *what) {
  for (int z = 0; z < f->d.nz; ++z)
    for (int y = 0; y < f->d.ny; ++y)
      for (int x = 0; x < f->d.nx; ++x) {
        const bool in = x >= lo[0] && x < hi[0] && y >= lo[1] && y < hi[1] && z >= lo[2] &&
                        z < hi[2];
        for (int i = 0; (in || all) && i < l->q; ++i)
          if (field_bits(f, x, y, z, i) != field_bits(want, x, y, z, i))
            fail_msg("%s %s %s: box [%d,%d)x[%d,%d)x[%d,%d): cell (%d,%d,%d) slot %d differs "
                     "from the whole-interior call", l->name, grid_layout_name(f->d.layout),
                     what, lo[0], hi[0], lo[1], hi[1], lo[2], hi[2], x, y, z, i);
      }
}

/* The inner box of a region needs no ghost value (it is right with the ghost layer
 * spoilt), and the inner call then the shell call give every cell what one call on the
 * whole interior gives, bit for bit: stream_collide and the coupled kernel, boxes shrunk
 * along one axis (whole rows), along x (the SoA code's partial vectors), and tiny. */
static void test_regions(void **state) {
  (void)state;
  FOR_EACH_SET({
    const lattice_t *l = k->lattice;
    const int r = l->reach, nx = 29, ny = 11, nz = l->d == 2 ? 1 : 9;
    const int rz = l->d == 2 ? 0 : r;
    const int boxes[][6] = {{0, nx, r, ny, rz, nz - rz},    {0, nx, 0, ny, rz, nz},
                            {r, nx - r, r, ny - r, rz, nz - rz}, {r, nx, 0, ny, 0, nz},
                            {r, r + 1, r, r + 1, rz, rz + 1}, {0, nx, 0, ny, 0, nz}};
    field_t src = field_make(k, nx, ny, nz), want = field_make(k, nx, ny, nz);
    const int n[3] = {nx, ny, nz};
    field_t got = field_make(k, nx, ny, nz), aux = aux_sized(k, n, 3, varying_force);
    field_t vel = aux_sized(k, n, 3, NULL);
    lbm_params_t p = {.omega_plus = 1.6, .omega_minus = lbm_omega_minus(1.6, 0.25), .rho0 = 1,
                      .force = {1e-5, 0, -2e-5}, .use_force = 1};
    lbm_coupling_t c = {.force = aux.v, .force_dims = aux.d, .velocity = vel.v,
                        .velocity_dims = vel.d};
    for (int coupled = 0; coupled < 2; ++coupled) {
      fill_pdfs(&src, l, 0);
      if (coupled) k->coupled(src.v, want.v, &src.d, &p, LBM_VARIANT_TRT, &c);
      else k->stream_collide(src.v, want.v, &src.d, &p, LBM_VARIANT_TRT);
      for (size_t b = 0; b < sizeof boxes / sizeof boxes[0]; ++b) {
        grid_region_t reg = {.part = GRID_PART_INNER,
                             .lo = {boxes[b][0], boxes[b][2], boxes[b][4]},
                             .hi = {boxes[b][1], boxes[b][3], boxes[b][5]}};
        fill_pdfs(&src, l, 0);
        memset(got.v, 0xff, got.d.elements * got.esize); /* NaN everywhere */
        spoil_ghosts(&src, l, reg.lo, reg.hi);
        if (coupled) k->coupled_region(src.v, got.v, &src.d, &p, LBM_VARIANT_TRT, &c, &reg);
        else k->stream_collide_region(src.v, got.v, &src.d, &p, LBM_VARIANT_TRT, &reg);
        const char *what = coupled ? "coupled" : "stream_collide";
        expect_cells(&got, &want, l, reg.lo, reg.hi, false, what);
        fill_pdfs(&src, l, 0);
        reg.part = GRID_PART_SHELL;
        if (coupled) k->coupled_region(src.v, got.v, &src.d, &p, LBM_VARIANT_TRT, &c, &reg);
        else k->stream_collide_region(src.v, got.v, &src.d, &p, LBM_VARIANT_TRT, &reg);
        expect_cells(&got, &want, l, reg.lo, reg.hi, true, what);
      }
    }
    free(src.v);
    free(want.v);
    free(got.v);
    free(aux.v);
    free(vel.v);
  });
}

static void test_moments(void **state) {
  int nl;
  const lattice_t *const *all = lattice_all(&nl);
  for (int li = 0; li < nl; ++li)
    for (int dp = 0; dp < 2; ++dp)
      for (int shifted = 0; shifted < 2; ++shifted) {
        const lattice_t *l = all[li];
        if (l->inv_cs2 != 3) continue; /* D3Q7's moments give no momentum of its equilibrium */
        double *rho[2], *u[2];
        int dim = l->d;
        for (int s = 0; s < 2; ++s) {
          const lbm_kernels_t *k = lbm_kernels_find(l, (grid_layout_t)s, dp);
          field_t f = field_make(k, 6, 4, l->d == 3 ? 3 : 1);
          const lbm_params_t p = {.omega_plus = 1, .omega_minus = 1, .rho0 = 1};
          k->init(f.v, &f.d, &p, shifted, init_flow, &dim);
          const size_t n = (size_t)f.d.nx * (size_t)f.d.ny * (size_t)f.d.nz;
          rho[s] = malloc(n * sizeof(double));
          u[s] = malloc(3 * n * sizeof(double));
          k->moments(f.v, &f.d, &p, shifted, rho[s], u[s]);
          size_t c = 0;
          for (int z = 0; z < f.d.nz; ++z)
            for (int y = 0; y < f.d.ny; ++y)
              for (int x = 0; x < f.d.nx; ++x, ++c) {
                double m[4];
                init_flow(x, y, z, &dim, m);
                const double tol = dp ? 1e-14 : 1e-6;
                assert_true(fabs(rho[s][c] - m[0]) < tol);
                for (int a = 0; a < 3; ++a) assert_true(fabs(u[s][3 * c + (size_t)a] - m[1 + a]) < tol);
              }
          if (s == 1) {
            assert_memory_equal(rho[0], rho[1], n * sizeof(double));
            assert_memory_equal(u[0], u[1], 3 * n * sizeof(double));
          }
          free(f.v);
        }
        for (int s = 0; s < 2; ++s) {
          free(rho[s]);
          free(u[s]);
        }
      }
}

/* LBM_FILL_NONEQ on the linear flow of init_flow (central differences exact): the stored
 * (post-collision) second moments sum_i c_a c_b f_i are rho c_s^2 delta_ab + rho0 u_a u_b
 * + 2 rho0 c_s^2 (1 - tau) S_ab, S the strain rate (3-D: S_xy = 0.005, S_yz = -0.01, S_xz =
 * 0.0025; 2-D: S_xy alone), tau = 1 / omega_plus and, with the Smagorinsky model, tau +
 * 3 C_s^2 |S|; density and velocity as without it (the part carries neither). Every
 * lattice with the weights' equilibrium (not D3Q7, D3Q13), both layouts, DP: to 1e-15
 * (sums of at most 27 products of values below 2). */
static void test_init_nonequilibrium(void **state) {
  FOR_EACH_SET({
    const lattice_t *l = k->lattice;
    if (!dp_ || l->inv_cs2 != 3 || l->moment_eq) continue;
    int dim = l->d;
    const double sxy = 0.005, syz = l->d == 3 ? -0.01 : 0, sxz = l->d == 3 ? 0.0025 : 0;
    const double s[3][3] = {{0, sxy, sxz}, {sxy, 0, syz}, {sxz, syz, 0}};
    const double smag = sqrt(2 * (2 * sxy * sxy + 2 * syz * syz + 2 * sxz * sxz));
    for (int les = 0; les < 2; ++les) {
      lbm_params_t p = {.omega_plus = 1.6, .omega_minus = 1.6, .rho0 = 1,
                        .smagorinsky = les ? 0.15 : 0};
      const double tau = 1 / 1.6 + 3 * p.smagorinsky * p.smagorinsky * smag;
      field_t f = field_make(k, 6, 4, l->d == 3 ? 3 : 1);
      k->init(f.v, &f.d, &p, LBM_FILL_NONEQ, init_flow, &dim);
      for (int z = 0; z < f.d.nz; ++z)
        for (int y = 0; y < f.d.ny; ++y)
          for (int x = 0; x < f.d.nx; ++x) {
            double m[4], rho = 0, j[3] = {0, 0, 0}, pi[3][3] = {{0}};
            init_flow(x, y, z, &dim, m);
            for (int i = 0; i < l->q; ++i) {
              const double v = field_get(&f, x, y, z, i);
              rho += v;
              for (int a = 0; a < 3; ++a) {
                j[a] += l->c[a][i] * v;
                for (int b = 0; b < 3; ++b) pi[a][b] += l->c[a][i] * l->c[b][i] * v;
              }
            }
            assert_true(fabs(rho - m[0]) < 1e-15);
            for (int a = 0; a < l->d; ++a) {
              assert_true(fabs(j[a] - m[1 + a]) < 1e-15);
              for (int b = 0; b < l->d; ++b) {
                const double want = (a == b) * m[0] / 3 + m[1 + a] * m[1 + b] +
                                    2.0 / 3.0 * (1 - tau) * s[a][b];
                if (fabs(pi[a][b] - want) > 1e-15)
                  fail_msg("%s %s les %d (%d,%d,%d): Pi_%d%d = %.17g, want %.17g", l->name,
                           grid_layout_name(k->layout), les, x, y, z, a, b, pi[a][b], want);
              }
            }
          }
      free(f.v);
    }
  });
}

/* A slice packed from one layout and unpacked into the other lands in the same cells
 * (both ways), and a box copy between the layouts moves the same values. */
static void test_pack_across_layouts(void **state) {
  const lbm_kernels_t *ka = lbm_kernels_find(&lattice_d3q19, GRID_AOS, 1);
  const lbm_kernels_t *ks = lbm_kernels_find(&lattice_d3q19, GRID_SOA, 1);
  field_t src[2] = {field_make(ka, 9, 5, 4), field_make(ks, 9, 5, 4)};
  field_t dst[2] = {field_make(ka, 9, 5, 4), field_make(ks, 9, 5, 4)};
  for (int s = 0; s < 2; ++s) fill_pdfs(&src[s], &lattice_d3q19, 0);
  const int lo[3] = {0, 1, 3}, hi[3] = {9, 4, 4}, comps[5] = {5, 11, 14, 15, 18};
  const int rlo[3] = {0, 1, -1};
  const size_t bytes = grid_slice_bytes(lo, hi, 5, 8);
  uint8_t *buf[2] = {malloc(bytes), malloc(bytes)};
  for (int s = 0; s < 2; ++s)
    assert_int_equal(grid_pack(src[s].v, &src[s].d, 8, lo, hi, comps, 5, buf[s]), bytes);
  assert_memory_equal(buf[0], buf[1], bytes);
  const int rhi[3] = {9, 4, 0};
  for (int s = 0; s < 2; ++s)
    assert_int_equal(grid_unpack(dst[s].v, &dst[s].d, 8, rlo, rhi, comps, 5, buf[1 - s]), bytes);
  grid_copy_job_t jobs[2];
  for (int s = 0; s < 2; ++s)
    jobs[s] = (grid_copy_job_t){.src = src[s].v, .src_dims = src[s].d, .src_lo = {0, 1, 0},
                                .dst = dst[1 - s].v, .dst_dims = dst[1 - s].d, .dst_lo = {0, 1, 4},
                                .extent = {9, 3, 1}, .comps = comps, .ncomps = 5};
  grid_copy_boxes(jobs, 2, 8);
  for (int s = 0; s < 2; ++s)
    for (int y = 1; y < 4; ++y)
      for (int x = 0; x < 9; ++x)
        for (int k = 0; k < 5; ++k) {
          assert_true(field_get(&dst[s], x, y, -1, comps[k]) == field_get(&src[0], x, y, 3, comps[k]));
          assert_true(field_get(&dst[s], x, y, 4, comps[k]) == field_get(&src[0], x, y, 0, comps[k]));
        }
  for (int s = 0; s < 2; ++s) {
    free(src[s].v);
    free(dst[s].v);
    free(buf[s]);
  }
}

/* A field too large to address gets elements = 0 in both layouts (its strides would
 * overflow a ptrdiff_t), instead of a wrapped-around count that sizes a short
 * allocation; the largest block a valid domain allows (PATCH_MAX_CELLS = 2^48 cells in
 * one block, 2^30 x 2^18) is counted exactly. */
static void test_grid_dims_too_large(void **state) {
  (void)state;
  const int huge[3] = {INT_MAX, INT_MAX, INT_MAX};
  for (int layout = GRID_AOS; layout <= GRID_SOA; ++layout) {
    grid_dims_t d = grid_dims_make(huge, 27, 1, (grid_layout_t)layout, sizeof(double));
    assert_true(d.elements == 0);
  }
  const int largest[3] = {1 << 30, 1 << 18, 1};
  grid_dims_t d = grid_dims_make(largest, 27, 1, GRID_AOS, sizeof(double));
  assert_true(d.elements == (size_t)27 * ((1u << 30) + 2) * ((1u << 18) + 2) * 3);
  d = grid_dims_make(largest, 27, 1, GRID_SOA, sizeof(double));
  assert_true(d.elements >= (size_t)27 * ((1u << 30) + 2) * ((1u << 18) + 2) * 3);
}

int main(void) {
  /* TESSERA_CPU_LEVEL picks the kernels' level (cpu_level.h): 77 (skipped) where this CPU
     lacks it, 1 where the build has no such level */
  char msg[512];
  if (cpu_level_from_environment(msg, sizeof msg) != 0) {
    fprintf(stderr, "%s\n", msg);
    const char *want = getenv("TESSERA_CPU_LEVEL");
    return want && cpu_level_find(want) >= 0 ? 77 : 1;
  }
  print_message("CPU kernels: %s\n", cpu_level_name(cpu_level_current()));
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lattice_moments),
      cmocka_unit_test(test_lattice_crossing),
      cmocka_unit_test(test_rest_is_steady),
      cmocka_unit_test(test_stream_only),
      cmocka_unit_test(test_row_position_and_layouts),
      cmocka_unit_test(test_moments),
      cmocka_unit_test(test_init_nonequilibrium),
      cmocka_unit_test(test_coupled),
      cmocka_unit_test(test_regions),
      cmocka_unit_test(test_pack_across_layouts),
      cmocka_unit_test(test_grid_dims_too_large),
  };
  return cmocka_run_group_tests_name("lbm_kernels", tests, NULL, NULL);
}
