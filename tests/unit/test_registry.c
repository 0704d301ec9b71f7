/* registry: functionality items and their lookup.
 *
 * Checks that lookup returns the single matching item (fs on/off switches, hs and bs
 * alternatives, kind and name both part of the key), that a failed lookup names the
 * request and every candidate (TSR_ERR_LOOKUP), that registry_add rejects items whose
 * selectors overlap an item of the same kind and name (naming both), bad function
 * fields per kind, missing names and selectors, bad selector expressions; and
 * registry_parse_fs, registry_data_id, registry_keep, registry_kind_name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "registry.h"
#include "selector.h"
#include "tsr_error.h"
#include "unit_test.h"

/* ---- item functions: each kernel tells which one ran through ctx ---- */

static tsr_status copy_fn(const registry_copy_task_t *t, size_t n, void *ctx, tsr_error_t *e) {
  (void)t, (void)n, (void)ctx, (void)e;
  return TSR_OK;
}

static tsr_status stage_fn(const registry_stage_task_t *t, size_t n, void *ctx, tsr_error_t *e) {
  (void)t, (void)n, (void)ctx, (void)e;
  return TSR_OK;
}

static tsr_status kernel_a(const registry_work_t *w, void *ctx, tsr_error_t *e) {
  (void)w, (void)e;
  *(int *)ctx = 'a';
  return TSR_OK;
}
static tsr_status kernel_b(const registry_work_t *w, void *ctx, tsr_error_t *e) {
  (void)w, (void)e;
  *(int *)ctx = 'b';
  return TSR_OK;
}
static tsr_status kernel_c(const registry_work_t *w, void *ctx, tsr_error_t *e) {
  (void)w, (void)e;
  *(int *)ctx = 'c';
  return TSR_OK;
}
static tsr_status early_fn(registry_batch_t *b, const registry_region_t *r, void *ctx,
                           int *early, tsr_error_t *e) {
  (void)b, (void)r, (void)ctx, (void)e;
  *early = REGISTRY_EARLY_NO;
  return TSR_OK;
}
static tsr_status alloc_fn(const block_info_t *b, void *ctx, void **out, tsr_error_t *e) {
  (void)b, (void)ctx, (void)e;
  *out = NULL;
  return TSR_OK;
}
static void free_fn(void *data, void *ctx) { (void)data, (void)ctx; }
static size_t size_fn(const block_info_t *b, int dir, void *ctx) {
  (void)b, (void)dir, (void)ctx;
  return 8;
}
static tsr_status extract_fn(const block_info_t *b, const void *data, int dir, uint8_t *out,
                             size_t cap, size_t *written, void *ctx, tsr_error_t *e) {
  (void)b, (void)data, (void)dir, (void)out, (void)cap, (void)ctx, (void)e;
  *written = 0;
  return TSR_OK;
}
static tsr_status insert_fn(const block_info_t *b, void *data, int dir, const uint8_t *in,
                            size_t len, void *ctx, tsr_error_t *e) {
  (void)b, (void)data, (void)dir, (void)in, (void)len, (void)ctx, (void)e;
  return TSR_OK;
}

static int setup_registry(void **state) {
  tsr_error_t err;
  registry_t *reg = NULL;
  if (registry_create(&reg, &err) != TSR_OK) return -1;
  *state = reg;
  return 0;
}

static int teardown_registry(void **state) {
  registry_t *reg = *state;
  registry_free(&reg);
  return 0;
}

#define REG_TEST(f) cmocka_unit_test_setup_teardown(f, setup_registry, teardown_registry)

static registry_item_t kernel_item(const char *name, const char *fs, const char *hs,
                                   const char *bs, registry_work_fn fn, void *ctx) {
  return (registry_item_t){.kind = REGISTRY_KIND_KERNEL, .name = name, .fs = fs, .hs = hs,
                           .bs = bs, .work = fn, .ctx = ctx};
}

/* The bs set of one name. */
static uint64_t bs_set(registry_t *reg, const char *name) {
  tsr_error_t err;
  uint32_t id = 0;
  ASSERT_OK(selector_find(registry_selectors(reg), SELECTOR_BS, name, &id, &err));
  return UINT64_C(1) << id;
}

static uint64_t fs_bits(registry_t *reg, const char *fs) {
  tsr_error_t err;
  uint64_t bits = 0;
  ASSERT_OK(registry_parse_fs(reg, fs, &bits, &err));
  return bits;
}

/* Looks up a kernel and runs it; returns the letter it wrote. */
static int which_kernel(registry_t *reg, const char *name, uint64_t fs, uint32_t hs,
                        uint64_t bs) {
  tsr_error_t err;
  const registry_item_t *item = NULL;
  registry_request_t req = {.fs = fs, .hs = hs, .bs = bs};
  ASSERT_OK(registry_lookup(reg, REGISTRY_KIND_KERNEL, name, &req, &item, &err));
  assert_non_null(item);
  assert_non_null(item->work);
  int ran = 0;
  ASSERT_OK(item->work(&(registry_work_t){0}, &ran, &err));
  return ran;
}

/* ---------------------------------------------------------------- lookup */

static void test_lookup_by_fs_switches(void **state) {
  registry_t *reg = *state;
  tsr_error_t err;
  ASSERT_OK(registry_add(reg, &(registry_item_t){.kind = REGISTRY_KIND_KERNEL,
                                                 .name = "lbm.sc", .fs = "srt", .hs = "cpu",
                                                 .bs = "*", .work = kernel_a},
                         &err));
  ASSERT_OK(registry_add(reg, &(registry_item_t){.kind = REGISTRY_KIND_KERNEL,
                                                 .name = "lbm.sc", .fs = "!srt", .hs = "cpu",
                                                 .bs = "*", .work = kernel_b},
                         &err));
  ASSERT_OK(registry_add(reg, &(registry_item_t){.kind = REGISTRY_KIND_KERNEL,
                                                 .name = "lbm.sc", .fs = "*", .hs = "gpu",
                                                 .bs = "*", .work = kernel_c},
                         &err));
  assert_int_equal(registry_count(reg), 3);
  uint64_t srt = fs_bits(reg, "srt"), trt_dp = fs_bits(reg, "trt,dp");
  assert_int_equal(which_kernel(reg, "lbm.sc", srt, SELECTOR_HS_CPU, 0), 'a');
  assert_int_equal(which_kernel(reg, "lbm.sc", srt | trt_dp, SELECTOR_HS_CPU, 0), 'a');
  assert_int_equal(which_kernel(reg, "lbm.sc", trt_dp, SELECTOR_HS_CPU, 0), 'b');
  assert_int_equal(which_kernel(reg, "lbm.sc", 0, SELECTOR_HS_CPU, 0), 'b');
  assert_int_equal(which_kernel(reg, "lbm.sc", srt, SELECTOR_HS_GPU, 7), 'c');
  assert_int_equal(which_kernel(reg, "lbm.sc", 0, SELECTOR_HS_GPU, 63), 'c');
}

static void test_lookup_all_fs_names_must_be_on(void **state) {
  registry_t *reg = *state;
  tsr_error_t err;
  registry_item_t it = kernel_item("k", "trt,dp,!force", "*", "*", kernel_a, NULL);
  ASSERT_OK(registry_add(reg, &it, &err));
  const registry_item_t *out = NULL;
  registry_request_t req = {.fs = fs_bits(reg, "trt,dp"), .hs = 0, .bs = 0};
  ASSERT_OK(registry_lookup(reg, REGISTRY_KIND_KERNEL, "k", &req, &out, &err));
  assert_ptr_equal(out->work, kernel_a);
  req.fs = fs_bits(reg, "trt"); /* dp missing */
  ASSERT_ERR(registry_lookup(reg, REGISTRY_KIND_KERNEL, "k", &req, &out, &err), TSR_ERR_LOOKUP,
             "no registry item matches");
  assert_null(out);
  req.fs = fs_bits(reg, "trt,dp,force"); /* force must be off */
  ASSERT_ERR(registry_lookup(reg, REGISTRY_KIND_KERNEL, "k", &req, &out, &err), TSR_ERR_LOOKUP,
             "no registry item matches");
}

static void test_lookup_by_hs_and_bs(void **state) {
  registry_t *reg = *state;
  tsr_error_t err;
  ASSERT_OK(registry_add(reg, &(registry_item_t){.kind = REGISTRY_KIND_BOUNDARY,
                                                 .name = "wall", .fs = "*", .hs = "cpu|gpu",
                                                 .bs = "fluid|fluid_boundary", .work = kernel_a},
                         &err));
  ASSERT_OK(registry_add(reg, &(registry_item_t){.kind = REGISTRY_KIND_BOUNDARY,
                                                 .name = "wall", .fs = "*", .hs = "cpu",
                                                 .bs = "solid", .work = kernel_b},
                         &err));
  ASSERT_OK(registry_add(reg, &(registry_item_t){.kind = REGISTRY_KIND_BOUNDARY,
                                                 .name = "wall", .fs = "*", .hs = "gpu",
                                                 .bs = "solid", .work = kernel_c},
                         &err));
  const registry_item_t *out;
  const uint64_t fluid = bs_set(reg, "fluid"), fb = bs_set(reg, "fluid_boundary"),
                 solid = bs_set(reg, "solid");
  registry_request_t req = {.fs = 0, .hs = SELECTOR_HS_GPU, .bs = fb};
  ASSERT_OK(registry_lookup(reg, REGISTRY_KIND_BOUNDARY, "wall", &req, &out, &err));
  assert_ptr_equal(out->work, kernel_a);
  req = (registry_request_t){.hs = SELECTOR_HS_CPU, .bs = fluid};
  ASSERT_OK(registry_lookup(reg, REGISTRY_KIND_BOUNDARY, "wall", &req, &out, &err));
  assert_ptr_equal(out->work, kernel_a);
  req = (registry_request_t){.hs = SELECTOR_HS_CPU, .bs = solid};
  ASSERT_OK(registry_lookup(reg, REGISTRY_KIND_BOUNDARY, "wall", &req, &out, &err));
  assert_ptr_equal(out->work, kernel_b);
  req = (registry_request_t){.hs = SELECTOR_HS_GPU, .bs = solid};
  ASSERT_OK(registry_lookup(reg, REGISTRY_KIND_BOUNDARY, "wall", &req, &out, &err));
  assert_ptr_equal(out->work, kernel_c);
  /* the kind is part of the key: no kernel item is called "wall" */
  ASSERT_ERR(registry_lookup(reg, REGISTRY_KIND_KERNEL, "wall", &req, &out, &err),
             TSR_ERR_LOOKUP, "nothing registered under that name");
  /* ids outside the selector tables match nothing and do not crash */
  req = (registry_request_t){.hs = 64, .bs = solid};
  ASSERT_ERR(registry_lookup(reg, REGISTRY_KIND_BOUNDARY, "wall", &req, &out, &err),
             TSR_ERR_LOOKUP, "hs=?");
  req = (registry_request_t){.hs = SELECTOR_HS_CPU, .bs = UINT64_C(1) << 63};
  ASSERT_ERR(registry_lookup(reg, REGISTRY_KIND_BOUNDARY, "wall", &req, &out, &err),
             TSR_ERR_LOOKUP, "bs={?}");
}

static void test_item_is_copied(void **state) {
  registry_t *reg = *state;
  tsr_error_t err;
  char name[16] = "lbm.pdf", fs[8] = "dp", hs[8] = "cpu", bs[8] = "fluid";
  int ctx_target = 0;
  registry_item_t it = {.kind = REGISTRY_KIND_ALLOCATOR, .name = name, .fs = fs, .hs = hs,
                        .bs = bs, .alloc = alloc_fn, .free = free_fn, .ctx = &ctx_target};
  ASSERT_OK(registry_add(reg, &it, &err));
  /* the caller's strings and struct may change afterwards */
  strcpy(name, "other");
  strcpy(fs, "sp");
  strcpy(hs, "gpu");
  strcpy(bs, "solid");
  it.alloc = NULL;
  const registry_item_t *out = NULL;
  registry_request_t req = {.fs = fs_bits(reg, "dp"), .hs = SELECTOR_HS_CPU,
                            .bs = bs_set(reg, "fluid")};
  ASSERT_OK(registry_lookup(reg, REGISTRY_KIND_ALLOCATOR, "lbm.pdf", &req, &out, &err));
  assert_string_equal(out->name, "lbm.pdf");
  assert_string_equal(out->fs, "dp");
  assert_string_equal(out->hs, "cpu");
  assert_string_equal(out->bs, "fluid");
  assert_ptr_equal(out->alloc, alloc_fn);
  assert_ptr_equal(out->free, free_fn);
  assert_ptr_equal(out->ctx, &ctx_target); /* borrowed as given */
  assert_int_equal(out->kind, REGISTRY_KIND_ALLOCATOR);
}

static void test_no_match_names_request_and_candidates(void **state) {
  registry_t *reg = *state;
  tsr_error_t err;
  registry_item_t a = kernel_item("lbm.sc", "srt", "cpu", "fluid", kernel_a, NULL);
  registry_item_t b = kernel_item("lbm.sc", "!srt,trt", "cpu", "fluid|solid", kernel_b, NULL);
  registry_item_t other = kernel_item("lbm.other", "*", "gpu", "*", kernel_c, NULL);
  ASSERT_OK(registry_add(reg, &a, &err));
  ASSERT_OK(registry_add(reg, &b, &err));
  ASSERT_OK(registry_add(reg, &other, &err));
  const registry_item_t *out = (const registry_item_t *)&a;
  registry_request_t req = {.fs = fs_bits(reg, "srt,dp"), .hs = SELECTOR_HS_GPU,
                            .bs = bs_set(reg, "fluid")};
  ASSERT_ERR(registry_lookup(reg, REGISTRY_KIND_KERNEL, "lbm.sc", &req, &out, &err),
             TSR_ERR_LOOKUP,
             "no registry item matches kernel 'lbm.sc' for fs={srt,dp} hs=gpu bs={fluid}");
  assert_null(out);
  ASSERT_HAS("candidates: ");
  ASSERT_HAS("[kernel 'lbm.sc' fs=srt hs=cpu bs=fluid]");
  ASSERT_HAS("[kernel 'lbm.sc' fs=!srt,trt hs=cpu bs=fluid|solid]");
  ASSERT_HAS("], ["); /* candidates are separated */
  /* items of other names are not candidates */
  assert_null(strstr(err.text, "lbm.other"));

  /* an empty fs set is shown as {} */
  req.fs = 0;
  req.hs = SELECTOR_HS_CPU;
  ASSERT_ERR(registry_lookup(reg, REGISTRY_KIND_KERNEL, "lbm.sc", &req, &out, &err),
             TSR_ERR_LOOKUP, "for fs={} hs=cpu bs={fluid}");
}

/* A block carries a set of bs: an item matches when the set holds one of its
 * alternatives, "*" matches every set (the empty one too). Items of one name for "fluid"
 * and for "thermal" register side by side, but a block that carries both matches both:
 * the lookup is an error naming the set and both items, never a first match. */
static void test_bs_sets(void **state) {
  registry_t *reg = *state;
  tsr_error_t err;
  registry_item_t lbm = kernel_item("lbm.sc", "*", "cpu", "fluid|fluid_boundary", kernel_a, NULL);
  registry_item_t heat = kernel_item("thermal.sc", "*", "cpu", "thermal", kernel_b, NULL);
  registry_item_t any = kernel_item("wait", "*", "cpu", "*", kernel_c, NULL);
  registry_item_t x_fluid = kernel_item("x", "*", "cpu", "fluid", kernel_a, NULL);
  registry_item_t x_heat = kernel_item("x", "*", "cpu", "thermal", kernel_b, NULL);
  ASSERT_OK(registry_add(reg, &lbm, &err));
  ASSERT_OK(registry_add(reg, &heat, &err));
  ASSERT_OK(registry_add(reg, &any, &err));
  ASSERT_OK(registry_add(reg, &x_fluid, &err));
  ASSERT_OK(registry_add(reg, &x_heat, &err));
  const uint64_t fluid = bs_set(reg, "fluid"), thermal = bs_set(reg, "thermal"),
                 fb = bs_set(reg, "fluid_boundary");
  assert_int_equal(which_kernel(reg, "lbm.sc", 0, SELECTOR_HS_CPU, fluid | thermal), 'a');
  assert_int_equal(which_kernel(reg, "lbm.sc", 0, SELECTOR_HS_CPU, fb | thermal), 'a');
  assert_int_equal(which_kernel(reg, "thermal.sc", 0, SELECTOR_HS_CPU, fluid | thermal), 'b');
  assert_int_equal(which_kernel(reg, "wait", 0, SELECTOR_HS_CPU, 0), 'c');
  assert_int_equal(which_kernel(reg, "x", 0, SELECTOR_HS_CPU, fluid), 'a');
  assert_int_equal(which_kernel(reg, "x", 0, SELECTOR_HS_CPU, thermal), 'b');
  const registry_item_t *out = NULL;
  registry_request_t req = {.hs = SELECTOR_HS_CPU, .bs = thermal};
  ASSERT_ERR(registry_lookup(reg, REGISTRY_KIND_KERNEL, "lbm.sc", &req, &out, &err),
             TSR_ERR_LOOKUP, "no registry item matches kernel 'lbm.sc' for fs={} hs=cpu bs={thermal}");
  req.bs = 0;
  ASSERT_ERR(registry_lookup(reg, REGISTRY_KIND_KERNEL, "thermal.sc", &req, &out, &err),
             TSR_ERR_LOOKUP, "bs={}");
  req.bs = fluid | thermal;
  ASSERT_ERR(registry_lookup(reg, REGISTRY_KIND_KERNEL, "x", &req, &out, &err), TSR_ERR_LOOKUP,
             "more than one registry item matches kernel 'x' for fs={} hs=cpu bs={fluid,thermal}");
  ASSERT_HAS("[kernel 'x' fs=* hs=cpu bs=fluid]");
  ASSERT_HAS("[kernel 'x' fs=* hs=cpu bs=thermal]");
  assert_null(out);
}

static void test_nothing_registered_under_name(void **state) {
  registry_t *reg = *state;
  tsr_error_t err;
  const registry_item_t *out;
  registry_request_t req = {.fs = 0, .hs = SELECTOR_HS_CPU, .bs = 0};
  ASSERT_ERR(registry_lookup(reg, REGISTRY_KIND_KERNEL, "lbm.sc", &req, &out, &err),
             TSR_ERR_LOOKUP, "no registry item matches kernel 'lbm.sc'");
  ASSERT_HAS("candidates: none (nothing registered under that name)");
  registry_item_t a = kernel_item("lbm.sc", "*", "*", "*", kernel_a, NULL);
  ASSERT_OK(registry_add(reg, &a, &err));
  ASSERT_ERR(registry_lookup(reg, REGISTRY_KIND_KERNEL, "lbm.s", &req, &out, &err),
             TSR_ERR_LOOKUP, "kernel 'lbm.s'");
  ASSERT_HAS("none (nothing registered under that name)");
  ASSERT_ERR(registry_lookup(reg, REGISTRY_KIND_INSERTION, "lbm.sc", &req, &out, &err),
             TSR_ERR_LOOKUP, "insertion 'lbm.sc'");
  ASSERT_HAS("none (nothing registered under that name)");
}

/* ---------------------------------------------------------------- ambiguity */

/* Adds b after a (same kind and name); expects overlap to be rejected or not. */
static void expect_overlap(const char *fs_a, const char *hs_a, const char *bs_a,
                           const char *fs_b, const char *hs_b, const char *bs_b, bool overlap) {
  tsr_error_t err;
  registry_t *reg = NULL;
  ASSERT_OK(registry_create(&reg, &err));
  registry_item_t a = kernel_item("lbm.sc", fs_a, hs_a, bs_a, kernel_a, NULL);
  registry_item_t b = kernel_item("lbm.sc", fs_b, hs_b, bs_b, kernel_b, NULL);
  ASSERT_OK(registry_add(reg, &a, &err));
  tsr_error_clear(&err);
  tsr_status st = registry_add(reg, &b, &err);
  if (overlap) {
    if (st == TSR_OK)
      fail_msg("fs=%s hs=%s bs=%s and fs=%s hs=%s bs=%s were both accepted", fs_a, hs_a, bs_a,
               fs_b, hs_b, bs_b);
    assert_int_equal(st, TSR_ERR_LOOKUP);
    assert_int_equal(err.code, TSR_ERR_LOOKUP);
    char want_a[256], want_b[256];
    snprintf(want_a, sizeof want_a, "[kernel 'lbm.sc' fs=%s hs=%s bs=%s]", fs_a, hs_a, bs_a);
    snprintf(want_b, sizeof want_b, "[kernel 'lbm.sc' fs=%s hs=%s bs=%s]", fs_b, hs_b, bs_b);
    ASSERT_HAS("is ambiguous with");
    ASSERT_HAS(want_a);
    ASSERT_HAS(want_b);
    assert_int_equal(registry_count(reg), 1);
  } else {
    if (st != TSR_OK)
      fail_msg("fs=%s hs=%s bs=%s and fs=%s hs=%s bs=%s rejected: %s", fs_a, hs_a, bs_a, fs_b,
               hs_b, bs_b, err.text);
    assert_int_equal(registry_count(reg), 2);
  }
  registry_free(&reg);
}

static void test_add_rejects_overlapping_items(void **state) {
  (void)state;
  /* a simulation can have srt and dp on at once */
  expect_overlap("srt", "*", "*", "dp", "*", "*", true);
  expect_overlap("srt", "cpu", "fluid", "srt", "cpu", "fluid", true);
  expect_overlap("*", "*", "*", "srt", "cpu", "fluid", true);
  expect_overlap("srt,!dp", "*", "*", "trt", "*", "*", true);
  expect_overlap("srt", "cpu|gpu", "*", "srt", "gpu", "*", true);
  expect_overlap("srt", "*", "fluid|solid", "trt", "*", "solid|wall", true);
  expect_overlap("!force", "*", "*", "!dp", "*", "*", true);
  /* exclusive: a switch on in one and off in the other, or disjoint hs/bs */
  expect_overlap("srt", "*", "*", "!srt", "*", "*", false);
  expect_overlap("srt,!dp", "*", "*", "dp", "*", "*", false);
  expect_overlap("*", "cpu", "*", "*", "gpu", "*", false);
  expect_overlap("srt", "*", "fluid", "srt", "*", "solid", false);
  expect_overlap("trt,dp", "cpu", "fluid|fluid_boundary", "trt,dp", "gpu", "fluid", false);
}

static void test_overlap_only_within_kind_and_name(void **state) {
  registry_t *reg = *state;
  tsr_error_t err;
  registry_item_t a = kernel_item("lbm.sc", "*", "*", "*", kernel_a, NULL);
  registry_item_t b = kernel_item("lbm.moments", "*", "*", "*", kernel_b, NULL);
  registry_item_t c = {.kind = REGISTRY_KIND_BOUNDARY, .name = "lbm.sc", .fs = "*", .hs = "*",
                       .bs = "*", .work = kernel_c};
  ASSERT_OK(registry_add(reg, &a, &err));
  ASSERT_OK(registry_add(reg, &b, &err));
  ASSERT_OK(registry_add(reg, &c, &err));
  assert_int_equal(registry_count(reg), 3);
  /* a third item overlapping the first is rejected and names both */
  registry_item_t d = kernel_item("lbm.sc", "dp", "gpu", "fluid", kernel_b, NULL);
  ASSERT_ERR(registry_add(reg, &d, &err), TSR_ERR_LOOKUP,
             "registry item [kernel 'lbm.sc' fs=dp hs=gpu bs=fluid] is ambiguous with "
             "[kernel 'lbm.sc' fs=* hs=* bs=*]");
  assert_int_equal(registry_count(reg), 3);
  /* lookups still find exactly one item per kind and name */
  assert_int_equal(which_kernel(reg, "lbm.sc", 0, 0, 0), 'a');
  assert_int_equal(which_kernel(reg, "lbm.moments", 0, 1, 5), 'b');
}

/* ---------------------------------------------------------------- item checks */

static void test_function_fields_per_kind(void **state) {
  registry_t *reg = *state;
  tsr_error_t err;
#define ITEM(k, ...)                                                                     \
  (&(registry_item_t){.kind = (k), .name = "f", .fs = "*", .hs = "*", .bs = "*", __VA_ARGS__})
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_KERNEL, .ctx = NULL), &err), TSR_ERR_INVALID,
             "registry item kernel 'f': a kernel item needs .work");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_KERNEL, .work = kernel_a, .alloc = alloc_fn),
                          &err),
             TSR_ERR_INVALID, "a kernel item has no .alloc");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_KERNEL, .work = kernel_a, .size = size_fn),
                          &err),
             TSR_ERR_INVALID, "a kernel item has no .size");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_BOUNDARY, .free = free_fn), &err),
             TSR_ERR_INVALID, "a boundary item needs .work");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_ALLOCATOR, .alloc = alloc_fn), &err),
             TSR_ERR_INVALID, "allocator item needs .free");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_ALLOCATOR, .free = free_fn), &err),
             TSR_ERR_INVALID, "allocator item needs .alloc");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_ALLOCATOR, .alloc = alloc_fn, .free = free_fn,
                                    .work = kernel_a),
                          &err),
             TSR_ERR_INVALID, "allocator item has no .work");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_EXTRACTION, .extract = extract_fn), &err),
             TSR_ERR_INVALID, "extraction item needs .size");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_EXTRACTION, .size = size_fn), &err),
             TSR_ERR_INVALID, "extraction item needs .extract");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_EXTRACTION, .size = size_fn,
                                    .extract = extract_fn, .insert = insert_fn),
                          &err),
             TSR_ERR_INVALID, "extraction item has no .insert");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_INSERTION, .insert = insert_fn), &err),
             TSR_ERR_INVALID, "insertion item needs .size");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_INSERTION, .size = size_fn,
                                    .insert = insert_fn, .extract = extract_fn),
                          &err),
             TSR_ERR_INVALID, "insertion item has no .extract");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_COPY, .ctx = NULL), &err),
             TSR_ERR_INVALID, "a copy item needs .copy");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_COPY, .copy = copy_fn, .size = size_fn), &err),
             TSR_ERR_INVALID, "a copy item has no .size");
  /* staging belongs to extraction (out) and insertion (in) only */
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_KERNEL, .work = kernel_a, .stage_out = stage_fn),
                          &err),
             TSR_ERR_INVALID, "a kernel item has no .stage_out");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_EXTRACTION, .size = size_fn,
                                    .extract = extract_fn, .stage_in = stage_fn),
                          &err),
             TSR_ERR_INVALID, "extraction item has no .stage_in");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_INSERTION, .size = size_fn,
                                    .insert = insert_fn, .stage_out = stage_fn),
                          &err),
             TSR_ERR_INVALID, "insertion item has no .stage_out");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_INSERTION, .size = size_fn,
                                    .insert = insert_fn, .stage_in = stage_fn,
                                    .stage_wait = stage_fn),
                          &err),
             TSR_ERR_INVALID, "insertion item has no .stage_wait");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_COPY, .copy = copy_fn, .stage_wait = stage_fn),
                          &err),
             TSR_ERR_INVALID, "a copy item has no .stage_wait");
  /* a wait without the stage_out it waits for would never run */
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_EXTRACTION, .size = size_fn,
                                    .extract = extract_fn, .stage_wait = stage_fn),
                          &err),
             TSR_ERR_INVALID, ".stage_wait waits for what .stage_out started");
  /* the work's options: a batch's early start, its groups, a boundary batch's parts */
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_KERNEL, .work = kernel_a, .group = {1},
                                    .ngroup = 1),
                          &err),
             TSR_ERR_INVALID, "a kernel item has no .group");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_BOUNDARY, .work = kernel_a, .batch = 1,
                                    .parts = 1),
                          &err),
             TSR_ERR_INVALID, "give .batch_early too");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_KERNEL, .work = kernel_a, .batch = 1,
                                    .batch_early = early_fn),
                          &err),
             TSR_ERR_INVALID, ".batch_early says when a boundary batch item may run early");
  ASSERT_ERR(registry_add(reg, ITEM(REGISTRY_KIND_KERNEL, .work = kernel_a, .batch = 1,
                                    .group = {1}, .ngroup = REGISTRY_MAX_GROUP + 1),
                          &err),
             TSR_ERR_INVALID, ".group names 0 to 4 fields");
  assert_int_equal(registry_count(reg), 0);

  /* the right fields for every kind are accepted (one name each) */
  ASSERT_OK(registry_add(reg, ITEM(REGISTRY_KIND_KERNEL, .work = kernel_a), &err));
  ASSERT_OK(registry_add(reg, ITEM(REGISTRY_KIND_BOUNDARY, .work = kernel_a), &err));
  ASSERT_OK(registry_add(reg, ITEM(REGISTRY_KIND_ALLOCATOR, .alloc = alloc_fn, .free = free_fn),
                         &err));
  ASSERT_OK(registry_add(reg, ITEM(REGISTRY_KIND_EXTRACTION, .size = size_fn,
                                   .extract = extract_fn, .stage_out = stage_fn,
                                   .stage_wait = stage_fn),
                         &err));
  ASSERT_OK(registry_add(reg, ITEM(REGISTRY_KIND_INSERTION, .size = size_fn, .insert = insert_fn,
                                   .stage_in = stage_fn),
                         &err));
  ASSERT_OK(registry_add(reg, ITEM(REGISTRY_KIND_COPY, .copy = copy_fn), &err));
  assert_int_equal(registry_count(reg), 6);
#undef ITEM
}

static void test_add_rejects_missing_name_selectors_and_kind(void **state) {
  registry_t *reg = *state;
  tsr_error_t err;
  registry_item_t it = kernel_item(NULL, "*", "*", "*", kernel_a, NULL);
  ASSERT_ERR(registry_add(reg, &it, &err), TSR_ERR_INVALID, "registry kernel item without a name");
  it.name = "";
  ASSERT_ERR(registry_add(reg, &it, &err), TSR_ERR_INVALID, "without a name");
  it = kernel_item("k", NULL, "*", "*", kernel_a, NULL);
  ASSERT_ERR(registry_add(reg, &it, &err), TSR_ERR_INVALID,
             "registry item kernel 'k': fs, hs and bs must all be given (\"*\" for any)");
  it = kernel_item("k", "*", NULL, "*", kernel_a, NULL);
  ASSERT_ERR(registry_add(reg, &it, &err), TSR_ERR_INVALID, "fs, hs and bs must all be given");
  it = kernel_item("k", "*", "*", NULL, kernel_a, NULL);
  ASSERT_ERR(registry_add(reg, &it, &err), TSR_ERR_INVALID, "fs, hs and bs must all be given");
  it = kernel_item("k", "*", "*", "*", kernel_a, NULL);
  it.kind = REGISTRY_KIND_COUNT;
  char want[64];
  snprintf(want, sizeof want, "registry item kind %d does not exist", (int)REGISTRY_KIND_COUNT);
  ASSERT_ERR(registry_add(reg, &it, &err), TSR_ERR_INVALID, want);
  assert_int_equal(registry_count(reg), 0);
}

static void test_add_rejects_bad_selector_expressions(void **state) {
  registry_t *reg = *state;
  tsr_error_t err;
  registry_item_t it = kernel_item("lbm.sc", "Srt", "*", "*", kernel_a, NULL);
  ASSERT_ERR(registry_add(reg, &it, &err), TSR_ERR_INVALID, "registry item kernel 'lbm.sc'");
  ASSERT_HAS("fs selector expression 'Srt'");
  ASSERT_HAS("character 'S'");
  it = kernel_item("lbm.sc", "*", "!gpu", "*", kernel_a, NULL);
  ASSERT_ERR(registry_add(reg, &it, &err), TSR_ERR_INVALID, "registry item kernel 'lbm.sc'");
  ASSERT_HAS("'!' is allowed in fs expressions only");
  it = kernel_item("lbm.sc", "*", "cpu", "fluid,solid", kernel_a, NULL);
  ASSERT_ERR(registry_add(reg, &it, &err), TSR_ERR_INVALID, "bs selector expression");
  it = kernel_item("lbm.sc", "srt,!srt", "*", "*", kernel_a, NULL);
  ASSERT_ERR(registry_add(reg, &it, &err), TSR_ERR_INVALID, "names 'srt' twice");
  it = kernel_item("lbm.sc", "", "*", "*", kernel_a, NULL);
  ASSERT_ERR(registry_add(reg, &it, &err), TSR_ERR_INVALID, "0 characters");
  assert_int_equal(registry_count(reg), 0);
}

/* ---------------------------------------------------------------- helpers */

static void test_parse_fs(void **state) {
  registry_t *reg = *state;
  tsr_error_t err;
  uint64_t bits = 99;
  ASSERT_OK(registry_parse_fs(reg, "trt,dp", &bits, &err));
  uint32_t trt, dp;
  ASSERT_OK(selector_find(registry_selectors(reg), SELECTOR_FS, "trt", &trt, &err));
  ASSERT_OK(selector_find(registry_selectors_const(reg), SELECTOR_FS, "dp", &dp, &err));
  assert_int_equal(bits, (UINT64_C(1) << trt) | (UINT64_C(1) << dp));
  ASSERT_OK(registry_parse_fs(reg, "", &bits, &err));
  assert_int_equal(bits, 0);
  ASSERT_OK(registry_parse_fs(reg, "dp", &bits, &err));
  assert_int_equal(bits, UINT64_C(1) << dp);

  ASSERT_ERR(registry_parse_fs(reg, "!x", &bits, &err), TSR_ERR_INVALID,
             "fs set '!x': a simulation cannot turn a switch off with '!'");
  ASSERT_ERR(registry_parse_fs(reg, "trt,!force", &bits, &err), TSR_ERR_INVALID,
             "cannot turn a switch off");
  ASSERT_ERR(registry_parse_fs(reg, "*", &bits, &err), TSR_ERR_INVALID,
             "fs set '*': a simulation names the switches it turns on");
  ASSERT_ERR(registry_parse_fs(reg, "dp,dp", &bits, &err), TSR_ERR_INVALID, "names 'dp' twice");
  ASSERT_ERR(registry_parse_fs(reg, "DP", &bits, &err), TSR_ERR_INVALID, "character 'D'");
}

static void test_data_id_interning(void **state) {
  registry_t *reg = *state;
  tsr_error_t err;
  int a = -1, b = -1, c = -1, d = -1;
  ASSERT_OK(registry_data_id(reg, "lbm.pdf", &a, &err));
  ASSERT_OK(registry_data_id(reg, "lbm.flags", &b, &err));
  ASSERT_OK(registry_data_id(reg, "lbm.pdf", &c, &err));
  ASSERT_OK(registry_data_id(reg, "lbm.pd", &d, &err));
  assert_int_equal(a, 0);
  assert_int_equal(b, 1);
  assert_int_equal(c, 0);
  assert_int_equal(d, 2);
  /* the name is copied */
  char name[16] = "thermal.t";
  int e = -1, f = -1;
  ASSERT_OK(registry_data_id(reg, name, &e, &err));
  strcpy(name, "xxxxxxx.x");
  ASSERT_OK(registry_data_id(reg, "thermal.t", &f, &err));
  assert_int_equal(e, 3);
  assert_int_equal(f, 3);
}

static void test_keep_copies_bytes(void **state) {
  registry_t *reg = *state;
  tsr_error_t err;
  struct params {
    double omega;
    int data_id;
  } p = {1.25, 7};
  void *copy = NULL;
  ASSERT_OK(registry_keep(reg, &p, sizeof p, &copy, &err));
  assert_non_null(copy);
  assert_ptr_not_equal(copy, &p);
  p.omega = 0.5;
  p.data_id = 1;
  const struct params *kept = copy;
  assert_float_equal(kept->omega, 1.25, 0.0);
  assert_int_equal(kept->data_id, 7);

  /* several copies live side by side; n = 0 still gives a pointer */
  uint8_t bytes[300];
  for (size_t i = 0; i < sizeof bytes; ++i) bytes[i] = (uint8_t)(i * 7);
  void *big = NULL, *empty = NULL;
  ASSERT_OK(registry_keep(reg, bytes, sizeof bytes, &big, &err));
  ASSERT_OK(registry_keep(reg, NULL, 0, &empty, &err));
  assert_non_null(empty);
  memset(bytes, 0, sizeof bytes);
  for (size_t i = 0; i < sizeof bytes; ++i) assert_int_equal(((uint8_t *)big)[i], (uint8_t)(i * 7));
  assert_float_equal(kept->omega, 1.25, 0.0);
}

/* Exclusive fs groups: items naming two switches of one group never overlap, a
 * simulation may not turn on two of them, and groups need two or more plain names. */
static void test_exclusive_groups(void **state) {
  (void)state;
  tsr_error_t err;
  registry_t *reg = NULL;
  ASSERT_OK(registry_create(&reg, &err));
  registry_item_t a = kernel_item("k", "sp", "*", "*", kernel_a, NULL);
  registry_item_t b = kernel_item("k", "dp", "*", "*", kernel_b, NULL);
  ASSERT_OK(registry_add(reg, &a, &err));
  ASSERT_ERR(registry_add(reg, &b, &err), TSR_ERR_LOOKUP, "ambiguous"); /* not yet exclusive */
  ASSERT_OK(registry_exclusive(reg, "sp,dp", &err));
  ASSERT_OK(registry_exclusive(reg, "sp,dp", &err)); /* declaring twice is harmless */
  ASSERT_OK(registry_add(reg, &b, &err));
  assert_int_equal(which_kernel(reg, "k", fs_bits(reg, "dp"), SELECTOR_HS_CPU, 0), 'b');
  assert_int_equal(which_kernel(reg, "k", fs_bits(reg, "sp"), SELECTOR_HS_CPU, 0), 'a');
  uint64_t bits = 0;
  ASSERT_ERR(registry_parse_fs(reg, "sp,dp", &bits, &err), TSR_ERR_INVALID, "at most one may be on");
  ASSERT_ERR(registry_exclusive(reg, "srt", &err), TSR_ERR_INVALID, "two or more switches");
  ASSERT_ERR(registry_exclusive(reg, "srt,!trt", &err), TSR_ERR_INVALID, "two or more switches");
  /* a third item with both names still overlaps nothing it could not */
  registry_item_t c = kernel_item("k", "sp,force", "*", "*", kernel_a, NULL);
  ASSERT_ERR(registry_add(reg, &c, &err), TSR_ERR_LOOKUP, "ambiguous"); /* overlaps "sp" */
  registry_free(&reg);
}

static void test_kind_names_and_free(void **state) {
  (void)state;
  assert_string_equal(registry_kind_name(REGISTRY_KIND_KERNEL), "kernel");
  assert_string_equal(registry_kind_name(REGISTRY_KIND_ALLOCATOR), "allocator");
  assert_string_equal(registry_kind_name(REGISTRY_KIND_EXTRACTION), "extraction");
  assert_string_equal(registry_kind_name(REGISTRY_KIND_INSERTION), "insertion");
  assert_string_equal(registry_kind_name(REGISTRY_KIND_BOUNDARY), "boundary");
  assert_string_equal(registry_kind_name(REGISTRY_KIND_COPY), "copy");
  assert_string_equal(registry_kind_name(REGISTRY_KIND_COUNT), "?");
  registry_t *reg = NULL;
  registry_free(&reg);
  registry_free(NULL);
  tsr_error_t err;
  ASSERT_OK(registry_create(&reg, &err));
  assert_int_equal(registry_count(reg), 0);
  /* the selector table of a new registry knows cpu and gpu */
  uint32_t id;
  ASSERT_OK(selector_find(registry_selectors_const(reg), SELECTOR_HS, "gpu", &id, &err));
  assert_int_equal(id, SELECTOR_HS_GPU);
  registry_free(&reg);
  assert_null(reg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      REG_TEST(test_lookup_by_fs_switches),
      REG_TEST(test_lookup_all_fs_names_must_be_on),
      REG_TEST(test_lookup_by_hs_and_bs),
      REG_TEST(test_item_is_copied),
      REG_TEST(test_no_match_names_request_and_candidates),
      REG_TEST(test_nothing_registered_under_name),
      REG_TEST(test_bs_sets),
      cmocka_unit_test(test_add_rejects_overlapping_items),
      REG_TEST(test_overlap_only_within_kind_and_name),
      REG_TEST(test_function_fields_per_kind),
      REG_TEST(test_add_rejects_missing_name_selectors_and_kind),
      REG_TEST(test_add_rejects_bad_selector_expressions),
      REG_TEST(test_parse_fs),
      REG_TEST(test_data_id_interning),
      REG_TEST(test_keep_copies_bytes),
      cmocka_unit_test(test_exclusive_groups),
      cmocka_unit_test(test_kind_names_and_free),
  };
  return cmocka_run_group_tests_name("registry", tests, NULL, NULL);
}
