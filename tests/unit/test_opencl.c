/* opencl: the device listing and context creation when an allocation fails.
 *
 * This executable is linked with --wrap=malloc,calloc,realloc,free: every allocation of
 * tessera's own code (the static libraries; not PoCL's or the ICD loader's) goes through
 * the counting allocator below, which fails the Nth call and keeps a table of the blocks
 * it handed out. realloc always moves the block (as it may), so code that keeps using
 * the old pointer after a successful realloc is caught every time. For N = 1, 2, ...
 * until the call succeeds, opencl_list_devices and opencl_context_create run against the
 * real OpenCL platforms (PoCL in CI) and must return TSR_ERR_NOMEM with "out of memory",
 * leave no block of theirs allocated and free none twice. CTest points the ICD loader at
 * two copies of each installed vendor file, so that a second platform is listed (the
 * realloc of the device list then moves a list already holding the first platform's
 * devices).
 *
 * Skipped (exit 77) where no OpenCL device exists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "opencl.h"

/* ---- the counting allocator ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

enum { ALLOC_TABLE = 4096 };
static void *alloc_live[ALLOC_TABLE];   /* blocks handed out and not freed */
static size_t alloc_bytes[ALLOC_TABLE]; /* their sizes */
static void *alloc_freed[ALLOC_TABLE];  /* blocks freed and not handed out again */
static long alloc_calls, alloc_fail_at; /* the alloc_fail_at-th call fails; 0: none */
static int alloc_bad_frees, alloc_full;

/* Counts a call; true if this one is to fail. */
static int alloc_fails(void) { return ++alloc_calls == alloc_fail_at; }

static int alloc_slot(void *const *table, const void *p) {
  for (int i = 0; i < ALLOC_TABLE; ++i)
    if (table[i] == p) return i;
  return -1;
}

static void *alloc_track(void *p, size_t bytes) {
  if (!p) return p;
  int f = alloc_slot(alloc_freed, p);
  if (f >= 0) alloc_freed[f] = NULL;
  int i = alloc_slot(alloc_live, NULL);
  if (i < 0) alloc_full = 1;
  else alloc_live[i] = p, alloc_bytes[i] = bytes;
  return p;
}

static void alloc_release(int i) {
  void *p = alloc_live[i];
  alloc_live[i] = NULL;
  int f = alloc_slot(alloc_freed, NULL);
  if (f >= 0) alloc_freed[f] = p;
  __real_free(p);
}

static int alloc_count_live(void) {
  int n = 0;
  for (int i = 0; i < ALLOC_TABLE; ++i) n += alloc_live[i] != NULL;
  return n;
}

void *__wrap_malloc(size_t n) { return alloc_fails() ? NULL : alloc_track(__real_malloc(n), n); }

void *__wrap_calloc(size_t n, size_t size) {
  return alloc_fails() ? NULL : alloc_track(__real_calloc(n, size), n * size);
}

/* Always to a new block (the old one freed), as a realloc may do. */
void *__wrap_realloc(void *p, size_t n) {
  if (alloc_fails()) return NULL;
  if (!p) return alloc_track(__real_malloc(n), n);
  int i = alloc_slot(alloc_live, p);
  if (i < 0) {
    if (alloc_slot(alloc_freed, p) >= 0) { /* a freed block */
      alloc_bad_frees++;
      return NULL;
    }
    return __real_realloc(p, n); /* not ours (a library's) */
  }
  void *q = __real_malloc(n ? n : 1);
  if (!q) return NULL;
  memcpy(q, p, n < alloc_bytes[i] ? n : alloc_bytes[i]);
  alloc_release(i);
  return alloc_track(q, n);
}

void __wrap_free(void *p) {
  if (!p) return;
  int i = alloc_slot(alloc_live, p);
  if (i >= 0) alloc_release(i);
  else if (alloc_slot(alloc_freed, p) >= 0) alloc_bad_frees++; /* not freed again */
  else __real_free(p); /* not ours (a library's) */
}

/* ---- the tests ---- */

/* Starts a trial in which the nth allocation fails (0: none); what an earlier trial
 * leaked (and failed for) is forgotten. */
static void alloc_trial(long n) {
  for (int i = 0; i < ALLOC_TABLE; ++i) alloc_live[i] = alloc_freed[i] = NULL;
  alloc_calls = 0;
  alloc_fail_at = n;
  alloc_bad_frees = 0;
}

/* After a trial: nothing of tessera's left allocated, nothing freed twice. */
static void alloc_check_clean(const char *what, long n) {
  alloc_fail_at = 0;
  if (alloc_full) fail_msg("the allocation table is full");
  if (alloc_bad_frees) fail_msg("%s, allocation %ld failing: a block freed twice", what, n);
  if (alloc_count_live())
    fail_msg("%s, allocation %ld failing: %d block(s) leaked", what, n, alloc_count_live());
}

/* One attempt of the call under test; it frees what it made when it succeeds. */
typedef tsr_status (*attempt_fn)(tsr_error_t *err);

static tsr_status attempt_list_devices(tsr_error_t *err) {
  opencl_device_desc_t *list = NULL;
  size_t count = 0;
  tsr_status st = opencl_list_devices(&list, &count, err);
  if (st != TSR_OK && (list || count)) fail_msg("a failed listing returned a list");
  free(list);
  return st;
}

static tsr_status attempt_context_create(tsr_error_t *err) {
  opencl_context_t *ctx = NULL;
  opencl_select_t sel = opencl_select_default();
  tsr_status st = opencl_context_create(&sel, &ctx, err);
  if (st != TSR_OK && ctx) fail_msg("a failed creation returned a context");
  opencl_context_free(&ctx);
  return st;
}

/* Fails each allocation of the call in turn (N = 1, 2, ...), until one attempt makes
 * fewer allocations than N and succeeds. */
static void fail_each_allocation(const char *what, attempt_fn attempt) {
  long n = 1;
  for (;; ++n) {
    tsr_error_t err;
    tsr_error_clear(&err);
    alloc_trial(n);
    tsr_status st = attempt(&err);
    long calls = alloc_calls;
    alloc_check_clean(what, n);
    if (st == TSR_OK) {
      if (calls >= n) fail_msg("%s: allocation %ld failed, yet it succeeded", what, n);
      break;
    }
    assert_int_equal(st, TSR_ERR_NOMEM);
    if (!strstr(err.text, "out of memory")) fail_msg("%s, allocation %ld: %s", what, n, err.text);
  }
  printf("%s: each of its %ld allocations failed in turn, cleanly\n", what, n - 1);
}

static void test_list_devices_out_of_memory(void **state) {
  (void)state;
  fail_each_allocation("opencl_list_devices", attempt_list_devices);
}

/* the listing, then the context's own allocations */
static void test_context_create_out_of_memory(void **state) {
  (void)state;
  fail_each_allocation("opencl_context_create", attempt_context_create);
}

/* The default platform is the first with a GPU device (a GPU node often lists PoCL's CPU
 * platform first), else the first with any; an index or a name picks exactly that. */
static void test_pick_platform(void **state) {
  (void)state;
  opencl_device_desc_t list[3];
  memset(list, 0, sizeof list);
  const char *plat[3] = {"Portable Computing Language", "NVIDIA CUDA", "NVIDIA CUDA"};
  const char *type[3] = {"cpu", "gpu", "gpu"};
  for (int i = 0; i < 3; ++i) {
    list[i].platform = i == 0 ? 0 : 1;
    list[i].device = i == 2 ? 1 : 0;
    snprintf(list[i].platform_name, sizeof list[i].platform_name, "%s", plat[i]);
    snprintf(list[i].type, sizeof list[i].type, "%s", type[i]);
  }
  opencl_select_t sel = opencl_select_default();
  assert_int_equal(opencl_pick_platform(list, 3, &sel), 1);
  assert_int_equal(opencl_pick_platform(list, 1, &sel), 0); /* no GPU: the first platform */
  sel.platform = 0;
  assert_int_equal(opencl_pick_platform(list, 3, &sel), 0);
  sel.platform = 2;
  assert_int_equal(opencl_pick_platform(list, 3, &sel), -1);
  sel = opencl_select_default();
  snprintf(sel.platform_name, sizeof sel.platform_name, "Portable");
  assert_int_equal(opencl_pick_platform(list, 3, &sel), 0);
  snprintf(sel.platform_name, sizeof sel.platform_name, "AMD");
  assert_int_equal(opencl_pick_platform(list, 3, &sel), -1);
}

int main(void) {
  opencl_device_desc_t *list = NULL;
  size_t count = 0;
  tsr_error_t err;
  int platforms = -1;
  if (opencl_list_devices(&list, &count, &err) != TSR_OK || count == 0) {
    free(list);
    printf("skipped: no OpenCL device on this machine (install pocl-opencl-icd)\n");
    return 77;
  }
  for (size_t i = 0; i < count; ++i)
    if (list[i].platform > platforms) platforms = list[i].platform;
  free(list);
  printf("%d OpenCL platform(s), %zu device(s)%s\n", platforms + 1, count,
         platforms > 0 ? "" : " (one platform: the second's realloc of a full list is not reached)");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pick_platform),
      cmocka_unit_test(test_list_devices_out_of_memory),
      cmocka_unit_test(test_context_create_out_of_memory),
  };
  return cmocka_run_group_tests_name("opencl", tests, NULL, NULL);
}
