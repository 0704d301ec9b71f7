/* The LBM sweep's registry items: message sizes (only the PDFs that cross: 5 per face
 * cell, 1 per edge cell, none per corner), solid blocks exchanging nothing, precision
 * picked by fs; the D3Q19 kernel keeping a resting fluid at rest exactly; streaming
 * alone moving every value to the right slot; and a cell's update not depending on
 * where in its row it lies (vector lanes, masked last vector, scalar rows). */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "aos.h"
#include "d3q19.h"
#include "direction.h"
#include "lbm.h"
#include "registry.h"

static const registry_item_t *lookup(registry_t *reg, registry_kind_t kind, const char *name,
                                     const char *fs, const char *bs) {
  tsr_error_t err;
  uint64_t bits = 0;
  uint32_t bsid = 0;
  const registry_item_t *item = NULL;
  assert_int_equal(registry_parse_fs(reg, fs, &bits, &err), TSR_OK);
  assert_int_equal(selector_find(registry_selectors(reg), SELECTOR_BS, bs, &bsid, &err), TSR_OK);
  registry_request_t req = {.fs = bits, .hs = SELECTOR_HS_CPU, .bs = bsid};
  if (registry_lookup(reg, kind, name, &req, &item, &err) != TSR_OK) fail_msg("%s", err.text);
  return item;
}

static void test_message_sizes(void **state) {
  for (int p = 0; p < 2; ++p) {
    tsr_error_t err;
    registry_t *reg = NULL;
    assert_int_equal(registry_create(&reg, &err), TSR_OK);
    patch_options_t d = patch_options_default();
    d.cells[0] = d.cells[1] = d.cells[2] = 8;
    lbm_options_t o = lbm_options_default();
    o.precision = p ? LBM_SP : LBM_DP;
    if (lbm_sweep_register(reg, &d, &o, NULL, &err) != TSR_OK) fail_msg("%s", err.text);
    const char *fs = p ? "trt,sp" : "trt,dp";
    size_t es = p ? 4 : 8;
    const registry_item_t *ext = lookup(reg, REGISTRY_KIND_EXTRACTION, LBM_PDF, fs, "fluid");
    const registry_item_t *ins = lookup(reg, REGISTRY_KIND_INSERTION, LBM_PDF, fs, "fluid_boundary");
    uint32_t fluid = 0, solid = 0;
    assert_int_equal(selector_find(registry_selectors(reg), SELECTOR_BS, "fluid", &fluid, &err), TSR_OK);
    assert_int_equal(selector_find(registry_selectors(reg), SELECTOR_BS, "solid", &solid, &err), TSR_OK);
    block_info_t b = {.id = 0, .size = {4, 3, 2}, .bs = fluid};
    for (int dir = 0; dir < DIRECTION_COUNT; ++dir) {
      int order = direction_order(dir);
      size_t per_cell = order == 1 ? 5 : order == 2 ? 1 : 0;
      size_t want = (size_t)direction_slice_cells(b.size, dir) * per_cell * es;
      assert_int_equal(ext->size(&b, dir, ext->ctx), want);
      assert_int_equal(ins->size(&b, dir, ins->ctx), want);
    }
    block_info_t s = b;
    s.bs = solid;
    const registry_item_t *sext = lookup(reg, REGISTRY_KIND_EXTRACTION, LBM_PDF, fs, "solid");
    for (int dir = 0; dir < DIRECTION_COUNT; ++dir) assert_int_equal(sext->size(&s, dir, sext->ctx), 0);
    /* the kernel of each fs is its own item */
    const registry_item_t *k1 = lookup(reg, REGISTRY_KIND_KERNEL, LBM_STREAM_COLLIDE, "srt,dp", "fluid");
    const registry_item_t *k2 = lookup(reg, REGISTRY_KIND_KERNEL, LBM_STREAM_COLLIDE, "srt,sp", "fluid");
    assert_ptr_not_equal(k1->kernel, k2->kernel);
    registry_free(&reg);
  }
}

/* A resting fluid in equilibrium stays at rest (ghost layer at rest too): bitwise with the
 * shifted storage, where every stored value is 0; within 1e-15 relative otherwise, as
 * the 19 stored weights do not sum to exactly 1 in floating point. */
static void test_rest_is_steady(void **state) {
  aos_dims_t d = {5, 4, 3, D3Q19_Q};
  size_t n = aos_field_elements(&d);
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  d3q19_params_t p = {.omega_plus = 1.3, .omega_minus = d3q19_omega_minus(1.3, 3.0 / 16), .rho0 = 1};
  for (int shifted = 0; shifted < 2; ++shifted) {
    d3q19_init_f64(a, &d, &p, shifted, NULL, NULL);
    d3q19_init_f64(b, &d, &p, shifted, NULL, NULL);
    for (int trt = 0; trt < 2; ++trt) {
      if (trt) d3q19_stream_collide_trt_f64(a, b, &d, &p);
      else d3q19_stream_collide_srt_f64(a, b, &d, &p);
      for (int z = 0; z < d.nz; ++z)
        for (int y = 0; y < d.ny; ++y)
          for (int x = 0; x < d.nx; ++x)
            for (int i = 0; i < D3Q19_Q; ++i) {
              size_t k = aos_index(&d, x, y, z, i);
              if (shifted) assert_true(b[k] == 0.0 && a[k] == 0.0);
              else assert_true(fabs(b[k] - a[k]) <= 1e-15 * fabs(a[k]));
            }
    }
  }
  free(a);
  free(b);
}

/* A value per slot that differs between all slots of a small field and is exact in
 * single precision. */
static double slot_value(size_t k) { return (double)(k % 65521) * 0.25 - 1000.0; }

/* FN streams (PULL 1: dst(x)_i = src(x - c_i)_i) or copies (PULL 0: src(x)_i). */
#define CHECK_STREAM_ONLY(REAL, FN, PULL)                                                \
  do {                                                                                   \
    size_t n = aos_field_elements(&d);                                                   \
    REAL *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);                         \
    for (size_t k = 0; k < n; ++k) a[k] = (REAL)slot_value(k), b[k] = (REAL)-7;          \
    FN(a, b, &d);                                                                        \
    for (int z = -1; z <= d.nz; ++z)                                                     \
      for (int y = -1; y <= d.ny; ++y)                                                   \
        for (int x = -1; x <= d.nx; ++x)                                                 \
          for (int i = 0; i < D3Q19_Q; ++i) {                                            \
            bool ghost = x < 0 || y < 0 || z < 0 || x == d.nx || y == d.ny || z == d.nz; \
            REAL want = ghost ? (REAL)-7                                                 \
                              : a[aos_index(&d, x - PULL * d3q19_c[i][0],                \
                                            y - PULL * d3q19_c[i][1],                    \
                                            z - PULL * d3q19_c[i][2], i)];               \
            if (b[aos_index(&d, x, y, z, i)] != want)                                    \
              fail_msg("nx %d: cell (%d,%d,%d) slot %d", d.nx, x, y, z, i);              \
          }                                                                              \
    free(a);                                                                             \
    free(b);                                                                             \
  } while (0)

/* Streaming alone: dst(x)_i = src(x - c_i)_i for every interior cell, ghosts untouched;
 * the copy of cells: dst(x)_i = src(x)_i; row lengths below, at and between the vector
 * widths (8 cells DP, 16 SP). */
static void test_stream_only(void **state) {
  const int widths[] = {1, 5, 8, 13, 16, 21, 37};
  for (size_t w = 0; w < sizeof widths / sizeof widths[0]; ++w) {
    aos_dims_t d = {widths[w], 3, 2, D3Q19_Q};
    CHECK_STREAM_ONLY(double, d3q19_stream_only_f64, 1);
    CHECK_STREAM_ONLY(float, d3q19_stream_only_f32, 1);
    CHECK_STREAM_ONLY(double, d3q19_copy_cells_f64, 0);
    CHECK_STREAM_ONLY(float, d3q19_copy_cells_f32, 0);
  }
}

/* One stream-collide step of a field 37 cells wide (whole vectors, then one with lanes
 * masked off where the CPU has vectors) against a field 5 cells wide (no whole vector: the scalar code) holding cells
 * 16..20 of the first with their neighbours: the five cells must come out bitwise equal,
 * for each collision, with and without force, in both precisions. */
#define CHECK_ROW_POSITION(REAL, SFX)                                                    \
  do {                                                                                   \
    aos_dims_t dw = {37, 3, 2, D3Q19_Q}, dn = {5, 3, 2, D3Q19_Q};                        \
    size_t nw = aos_field_elements(&dw), nn = aos_field_elements(&dn);                   \
    REAL *wa = malloc(nw * sizeof *wa), *wb = malloc(nw * sizeof *wb);                   \
    REAL *na = malloc(nn * sizeof *na), *nb = malloc(nn * sizeof *nb);                   \
    srand(12345);                                                                        \
    for (size_t k = 0; k < nw; ++k)                                                      \
      wa[k] = (REAL)(d3q19_w[k % D3Q19_Q] * (0.9 + 0.2 * rand() / (double)RAND_MAX));    \
    for (int z = -1; z <= dn.nz; ++z)                                                    \
      for (int y = -1; y <= dn.ny; ++y)                                                  \
        for (int x = -1; x <= dn.nx; ++x)                                                \
          for (int i = 0; i < D3Q19_Q; ++i)                                              \
            na[aos_index(&dn, x, y, z, i)] = wa[aos_index(&dw, x + 16, y, z, i)];        \
    for (int variant = 0; variant < 4; ++variant) {                                      \
      d3q19_params_t p = {.omega_plus = 1.7, .omega_minus = d3q19_omega_minus(1.7, 0.25), \
                          .rho0 = 1, .force = {1e-4, -2e-5, 3e-5}, .use_force = variant & 1}; \
      if (variant & 2) {                                                                 \
        d3q19_stream_collide_trt_##SFX(wa, wb, &dw, &p);                                 \
        d3q19_stream_collide_trt_##SFX(na, nb, &dn, &p);                                 \
      } else {                                                                           \
        d3q19_stream_collide_srt_##SFX(wa, wb, &dw, &p);                                 \
        d3q19_stream_collide_srt_##SFX(na, nb, &dn, &p);                                 \
      }                                                                                  \
      for (int z = 0; z < dn.nz; ++z)                                                    \
        for (int y = 0; y < dn.ny; ++y)                                                  \
          for (int x = 0; x < dn.nx; ++x)                                                \
            for (int i = 0; i < D3Q19_Q; ++i)                                            \
              if (memcmp(&nb[aos_index(&dn, x, y, z, i)],                                \
                         &wb[aos_index(&dw, x + 16, y, z, i)], sizeof(REAL)) != 0)       \
                fail_msg(#SFX " variant %d: cell (%d,%d,%d) slot %d differs", variant,   \
                         x, y, z, i);                                                    \
    }                                                                                    \
    free(wa);                                                                            \
    free(wb);                                                                            \
    free(na);                                                                            \
    free(nb);                                                                            \
  } while (0)

static void test_row_position(void **state) {
  CHECK_ROW_POSITION(double, f64);
  CHECK_ROW_POSITION(float, f32);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_message_sizes),
      cmocka_unit_test(test_rest_is_steady),
      cmocka_unit_test(test_stream_only),
      cmocka_unit_test(test_row_position),
  };
  return cmocka_run_group_tests_name("lbm_sweep", tests, NULL, NULL);
}
