/* The LBM sweep's registry items: message sizes (only the PDFs that cross: 5 per face
 * cell, 1 per edge cell, none per corner), solid blocks exchanging nothing, the CPU
 * layout picked by fs (soa/aos) through the allocator, one stream-collide item serving
 * every fs, and the field kit's count of the PDFs' bytes against what its allocator
 * allocates. The kernels themselves: test_lbm_kernels. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "direction.h"
#include "field.h"
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
  registry_request_t req = {.fs = bits, .hs = SELECTOR_HS_CPU, .bs = patch_bs_bit(bsid)};
  if (registry_lookup(reg, kind, name, &req, &item, &err) != TSR_OK) fail_msg("%s", err.text);
  return item;
}

/* A registry holding the LBM items of the options, on an 8^3 domain. */
static registry_t *registered(const lbm_options_t *o) {
  tsr_error_t err;
  registry_t *reg = NULL;
  assert_int_equal(registry_create(&reg, &err), TSR_OK);
  patch_options_t d = patch_options_default();
  d.cells[0] = d.cells[1] = d.cells[2] = 8;
  if (lbm_sweep_register(reg, &d, o, NULL, NULL, NULL, NULL, &err) != TSR_OK) fail_msg("%s", err.text);
  return reg;
}

static void test_message_sizes(void **state) {
  for (int p = 0; p < 2; ++p) {
    tsr_error_t err;
    lbm_options_t o = lbm_options_default();
    o.precision = p ? LBM_SP : LBM_DP;
    registry_t *reg = registered(&o);
    const char *fs = p ? "trt,sp,soa" : "trt,dp,soa";
    size_t es = p ? 4 : 8;
    const registry_item_t *ext = lookup(reg, REGISTRY_KIND_EXTRACTION, LBM_PDF, fs, "fluid");
    const registry_item_t *ins = lookup(reg, REGISTRY_KIND_INSERTION, LBM_PDF, fs, "fluid_boundary");
    uint32_t fluid = 0, solid = 0;
    assert_int_equal(selector_find(registry_selectors(reg), SELECTOR_BS, "fluid", &fluid, &err), TSR_OK);
    assert_int_equal(selector_find(registry_selectors(reg), SELECTOR_BS, "solid", &solid, &err), TSR_OK);
    block_info_t b = {.id = 0, .size = {4, 3, 2}, .bs = patch_bs_bit(fluid)};
    for (int dir = 0; dir < DIRECTION_COUNT; ++dir) {
      int order = direction_order(dir);
      size_t per_cell = order == 1 ? 5 : order == 2 ? 1 : 0;
      size_t want = (size_t)direction_slice_cells(b.size, direction_width_one, dir) * per_cell * es;
      assert_int_equal(ext->size(&b, dir, ext->ctx), want);
      assert_int_equal(ins->size(&b, dir, ins->ctx), want);
    }
    block_info_t s = b;
    s.bs = patch_bs_bit(solid);
    const registry_item_t *sext = lookup(reg, REGISTRY_KIND_EXTRACTION, LBM_PDF, fs, "solid");
    for (int dir = 0; dir < DIRECTION_COUNT; ++dir) assert_int_equal(sext->size(&s, dir, sext->ctx), 0);
    registry_free(&reg);
  }
}

/* The allocators of fs soa and fs aos are two items; their blocks (one of each layout,
 * same initial flow) give byte for byte the same messages in every direction; asking
 * for neither layout is ambiguous. */
static void test_layout_items(void **state) {
  tsr_error_t err;
  lbm_options_t o = lbm_options_default();
  o.init_velocity[0] = 0.03;
  o.init_velocity[2] = -0.01;
  registry_t *reg = registered(&o);
  uint32_t fluid = 0;
  assert_int_equal(selector_find(registry_selectors(reg), SELECTOR_BS, "fluid", &fluid, &err), TSR_OK);
  block_info_t b = {.id = 0, .size = {9, 3, 2}, .bs = patch_bs_bit(fluid)};
  void *blk[2];
  const registry_item_t *alloc[2];
  const char *fs[2] = {"trt,dp,aos", "trt,dp,soa"};
  for (int s = 0; s < 2; ++s) {
    alloc[s] = lookup(reg, REGISTRY_KIND_ALLOCATOR, LBM_PDF, fs[s], "fluid");
    if (alloc[s]->alloc(&b, alloc[s]->ctx, &blk[s], &err) != TSR_OK) fail_msg("%s", err.text);
  }
  assert_ptr_not_equal(alloc[0]->alloc, alloc[1]->alloc);
  const registry_item_t *ext = lookup(reg, REGISTRY_KIND_EXTRACTION, LBM_PDF, fs[1], "fluid");
  for (int dir = 0; dir < DIRECTION_COUNT; ++dir) {
    size_t n = ext->size(&b, dir, ext->ctx), w[2] = {0, 0};
    uint8_t *m[2] = {malloc(n + 1), malloc(n + 1)};
    for (int s = 0; s < 2; ++s)
      if (ext->extract(&b, blk[s], dir, m[s], n, &w[s], ext->ctx, &err) != TSR_OK)
        fail_msg("%s", err.text);
    assert_int_equal(w[0], n);
    assert_int_equal(w[1], n);
    assert_memory_equal(m[0], m[1], n);
    free(m[0]);
    free(m[1]);
  }
  for (int s = 0; s < 2; ++s) alloc[s]->free(blk[s], alloc[s]->ctx);
  uint64_t bits = 0;
  const registry_item_t *item = NULL;
  assert_int_equal(registry_parse_fs(reg, "trt,dp", &bits, &err), TSR_OK);
  registry_request_t req = {.fs = bits, .hs = SELECTOR_HS_CPU, .bs = patch_bs_bit(fluid)};
  assert_int_not_equal(registry_lookup(reg, REGISTRY_KIND_ALLOCATOR, LBM_PDF, &req, &item, &err), TSR_OK);
  registry_free(&reg);
}

/* lbm_classify sets one LBM class per block (fluid, fluid_boundary or solid) and keeps
 * the bs names of other sweeps that the blocks already carry. */
static void test_classify_keeps_other_bs(void **state) {
  tsr_error_t err;
  lbm_options_t o = lbm_options_default(); /* closed box: walls on every face */
  registry_t *reg = registered(&o);
  uint32_t thermal = 0, fluid = 0, boundary = 0, solid = 0;
  selector_table_t *sel = registry_selectors(reg);
  assert_int_equal(selector_intern(sel, SELECTOR_BS, "thermal", &thermal, &err), TSR_OK);
  patch_options_t d = patch_options_default();
  d.cells[0] = d.cells[1] = d.cells[2] = 9;
  d.blocks[0] = d.blocks[1] = d.blocks[2] = 3;
  patch_layout_t layout = {.nranks = 1, .my_rank = 0, .bs = patch_bs_bit(thermal)};
  patch_t *p = NULL;
  assert_int_equal(patch_create(&d, &layout, &p, &err), TSR_OK);
  if (lbm_classify(p, reg, &o, &err) != TSR_OK) fail_msg("%s", err.text);
  assert_int_equal(selector_find(sel, SELECTOR_BS, "fluid", &fluid, &err), TSR_OK);
  assert_int_equal(selector_find(sel, SELECTOR_BS, "fluid_boundary", &boundary, &err), TSR_OK);
  assert_int_equal(selector_find(sel, SELECTOR_BS, "solid", &solid, &err), TSR_OK);
  int inner = 0;
  for (int32_t id = 0; id < patch_block_count(p); ++id) {
    const block_info_t *b = patch_block(p, id);
    assert_true(patch_has_bs(b, thermal));
    int classes = patch_has_bs(b, fluid) + patch_has_bs(b, boundary) + patch_has_bs(b, solid);
    assert_int_equal(classes, 1);
    inner += patch_has_bs(b, fluid); /* the middle block touches no wall */
  }
  assert_int_equal(inner, 1);
  /* classifying again changes nothing */
  assert_int_equal(lbm_classify(p, reg, &o, &err), TSR_OK);
  for (int32_t id = 0; id < patch_block_count(p); ++id)
    assert_int_equal(__builtin_popcountll(patch_block(p, id)->bs), 2);
  patch_free(&p);
  registry_free(&reg);
}

/* field_local_bytes counts what the kit's allocator allocates: on a periodic domain of
 * two blocks (one of 8 x 6 x 5 cells each, fluid, CPU), per layout and precision, the
 * two copies of every block's PDF grid, padding included, and no device bytes; a solid
 * block (hollow for the PDFs) counts nothing. */
static void test_kit_bytes(void **state) {
  (void)state;
  for (int v = 0; v < 4; ++v) {
    tsr_error_t err;
    lbm_options_t o = lbm_options_default();
    o.precision = v & 1 ? LBM_SP : LBM_DP;
    const char *fs = (const char *[]){"trt,dp,soa", "trt,sp,soa", "trt,dp,aos", "trt,sp,aos"}[v];
    registry_t *reg = registered(&o);
    uint64_t bits = 0;
    uint32_t fluid = 0, solid = 0;
    assert_int_equal(registry_parse_fs(reg, fs, &bits, &err), TSR_OK);
    assert_int_equal(selector_find(registry_selectors(reg), SELECTOR_BS, "fluid", &fluid, &err),
                     TSR_OK);
    assert_int_equal(selector_find(registry_selectors(reg), SELECTOR_BS, "solid", &solid, &err),
                     TSR_OK);
    patch_options_t d = patch_options_default();
    d.cells[0] = 16, d.cells[1] = 6, d.cells[2] = 5;
    d.blocks[0] = 2;
    patch_t *p = NULL;
    const patch_layout_t layout = {.nranks = 1, .my_rank = 0, .bs = patch_bs_bit(fluid)};
    assert_int_equal(patch_create(&d, &layout, &p, &err), TSR_OK);
    size_t allocated = 0;
    for (int32_t id = 0; id < patch_block_count(p); ++id) {
      const registry_item_t *alloc = lookup(reg, REGISTRY_KIND_ALLOCATOR, LBM_PDF, fs, "fluid");
      void *data = NULL;
      if (alloc->alloc(patch_block(p, id), alloc->ctx, &data, &err) != TSR_OK)
        fail_msg("%s", err.text);
      const field_block_t *f = data;
      assert_int_equal(f->copies, 2);
      allocated += 2 * ((f->host.dims.elements * f->host.esize + 63) / 64 * 64);
      alloc->free(data, alloc->ctx);
    }
    field_bytes_t sum = {0, 0, 0, 0};
    bool kit = false;
    if (field_local_bytes(reg, LBM_PDF, bits, p, &sum, &kit, &err) != TSR_OK)
      fail_msg("%s", err.text);
    assert_true(kit);
    assert_int_equal(sum.host, allocated);
    assert_int_equal(sum.device, 0);
    /* a solid block holds none of the PDFs */
    assert_int_equal(patch_set_bs(p, 1, patch_bs_bit(solid), &err), TSR_OK);
    field_bytes_t one = {0, 0, 0, 0};
    assert_int_equal(field_local_bytes(reg, LBM_PDF, bits, p, &one, &kit, &err), TSR_OK);
    assert_int_equal(one.host, allocated / 2);
    /* lbm.cells is the flow's own allocator's: not the kit's, nothing counted */
    field_bytes_t none = {0, 0, 0, 0};
    assert_int_equal(field_local_bytes(reg, LBM_CELLS, bits, p, &none, &kit, &err), TSR_OK);
    assert_false(kit);
    assert_int_equal(none.host, 0);
    patch_free(&p);
    registry_free(&reg);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_message_sizes),
      cmocka_unit_test(test_classify_keeps_other_bs),
      cmocka_unit_test(test_layout_items),
      cmocka_unit_test(test_kit_bytes),
  };
  return cmocka_run_group_tests_name("lbm_sweep", tests, NULL, NULL);
}
