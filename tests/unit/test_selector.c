/* selector: interned fs/hs/bs names and their expressions.
 *
 * Checks interning (ids in order of first use, per kind), cpu = 0 and gpu = 1 in every
 * new table, selector_find and its list of known names, parsing of fs "a,b,!c" into
 * on/off bits and of hs/bs alternatives, "*" (no condition for fs, every bit for hs and
 * bs), rejected names (uppercase, empty, too long, other characters, '!' outside fs),
 * a name given twice in one expression, the 64-name limit, and selector_format. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "selector.h"
#include "tsr_error.h"
#include "unit_test.h"

static int setup_table(void **state) {
  tsr_error_t err;
  selector_table_t *t = NULL;
  if (selector_table_create(&t, &err) != TSR_OK) return -1;
  *state = t;
  return 0;
}

static int teardown_table(void **state) {
  selector_table_t *t = *state;
  selector_table_free(&t);
  return 0;
}

#define TABLE_TEST(f) cmocka_unit_test_setup_teardown(f, setup_table, teardown_table)

static void test_cpu_gpu_preinterned(void **state) {
  selector_table_t *t = *state;
  tsr_error_t err;
  uint32_t id = 99;
  ASSERT_OK(selector_find(t, SELECTOR_HS, "cpu", &id, &err));
  assert_int_equal(id, SELECTOR_HS_CPU);
  assert_int_equal(id, 0);
  ASSERT_OK(selector_find(t, SELECTOR_HS, "gpu", &id, &err));
  assert_int_equal(id, SELECTOR_HS_GPU);
  assert_int_equal(id, 1);
  assert_string_equal(selector_name(t, SELECTOR_HS, 0), "cpu");
  assert_string_equal(selector_name(t, SELECTOR_HS, 1), "gpu");
  /* interning them again gives the same ids */
  ASSERT_OK(selector_intern(t, SELECTOR_HS, "gpu", &id, &err));
  assert_int_equal(id, 1);
  /* only hs has them: fs and bs start empty */
  ASSERT_ERR(selector_find(t, SELECTOR_BS, "cpu", &id, &err), TSR_ERR_INVALID,
             "unknown bs selector 'cpu'");
  assert_string_equal(selector_name(t, SELECTOR_FS, 0), "?");
  /* the first new hs gets id 2 */
  ASSERT_OK(selector_intern(t, SELECTOR_HS, "fpga", &id, &err));
  assert_int_equal(id, 2);
}

static void test_intern_ids_per_kind(void **state) {
  selector_table_t *t = *state;
  tsr_error_t err;
  uint32_t a, b, c, again, bs_id;
  ASSERT_OK(selector_intern(t, SELECTOR_FS, "srt", &a, &err));
  ASSERT_OK(selector_intern(t, SELECTOR_FS, "trt", &b, &err));
  ASSERT_OK(selector_intern(t, SELECTOR_FS, "dp", &c, &err));
  ASSERT_OK(selector_intern(t, SELECTOR_FS, "srt", &again, &err));
  assert_int_equal(a, 0);
  assert_int_equal(b, 1);
  assert_int_equal(c, 2);
  assert_int_equal(again, a);
  /* kinds have separate tables */
  ASSERT_OK(selector_intern(t, SELECTOR_BS, "trt", &bs_id, &err));
  assert_int_equal(bs_id, 0);
  assert_string_equal(selector_name(t, SELECTOR_FS, 1), "trt");
  assert_string_equal(selector_name(t, SELECTOR_BS, 0), "trt");
  assert_string_equal(selector_name(t, SELECTOR_FS, 3), "?");
  assert_string_equal(selector_name(t, (selector_kind_t)3, 0), "?");
  uint32_t found;
  ASSERT_OK(selector_find(t, SELECTOR_FS, "dp", &found, &err));
  assert_int_equal(found, 2);
  /* names that share a prefix stay apart */
  ASSERT_OK(selector_intern(t, SELECTOR_FS, "s", &found, &err));
  assert_int_equal(found, 3);
  ASSERT_OK(selector_intern(t, SELECTOR_FS, "srt_x", &found, &err));
  assert_int_equal(found, 4);
}

static void test_kind_names(void **state) {
  (void)state;
  assert_string_equal(selector_kind_name(SELECTOR_FS), "fs");
  assert_string_equal(selector_kind_name(SELECTOR_HS), "hs");
  assert_string_equal(selector_kind_name(SELECTOR_BS), "bs");
  assert_string_equal(selector_kind_name((selector_kind_t)7), "?");
}

static void test_find_unknown_lists_known(void **state) {
  selector_table_t *t = *state;
  tsr_error_t err;
  uint32_t id;
  ASSERT_OK(selector_intern(t, SELECTOR_BS, "fluid", &id, &err));
  ASSERT_OK(selector_intern(t, SELECTOR_BS, "solid", &id, &err));
  id = 77;
  ASSERT_ERR(selector_find(t, SELECTOR_BS, "gas", &id, &err), TSR_ERR_INVALID,
             "unknown bs selector 'gas'; known are: fluid|solid");
  assert_int_equal(id, 77); /* untouched */
  ASSERT_ERR(selector_find(t, SELECTOR_HS, "tpu", &id, &err), TSR_ERR_INVALID,
             "known are: cpu|gpu");
  ASSERT_ERR(selector_find(t, SELECTOR_FS, "srt", &id, &err), TSR_ERR_INVALID,
             "unknown fs selector 'srt'; known are: {}");
  /* find never adds */
  ASSERT_ERR(selector_find(t, SELECTOR_FS, "srt", &id, &err), TSR_ERR_INVALID, "unknown");
}

static void test_parse_fs_on_off(void **state) {
  selector_table_t *t = *state;
  tsr_error_t err;
  uint64_t on = 0, off = 0;
  ASSERT_OK(selector_parse(t, SELECTOR_FS, "a,b,!c", &on, &off, &err));
  uint32_t a, b, c;
  ASSERT_OK(selector_find(t, SELECTOR_FS, "a", &a, &err));
  ASSERT_OK(selector_find(t, SELECTOR_FS, "b", &b, &err));
  ASSERT_OK(selector_find(t, SELECTOR_FS, "c", &c, &err));
  assert_int_equal(on, (UINT64_C(1) << a) | (UINT64_C(1) << b));
  assert_int_equal(off, UINT64_C(1) << c);
  assert_int_equal(a, 0);
  assert_int_equal(b, 1);
  assert_int_equal(c, 2);

  /* known names keep their ids; new ones are added */
  ASSERT_OK(selector_parse(t, SELECTOR_FS, "!a,d", &on, &off, &err));
  assert_int_equal(on, UINT64_C(1) << 3);
  assert_int_equal(off, UINT64_C(1) << 0);

  ASSERT_OK(selector_parse(t, SELECTOR_FS, "b", &on, &off, &err));
  assert_int_equal(on, UINT64_C(2));
  assert_int_equal(off, 0);

  ASSERT_OK(selector_parse(t, SELECTOR_FS, "!b,!c", &on, &off, &err));
  assert_int_equal(on, 0);
  assert_int_equal(off, UINT64_C(6));
}

static void test_parse_hs_bs_alternatives(void **state) {
  selector_table_t *t = *state;
  tsr_error_t err;
  uint64_t on = 0, off = 99;
  ASSERT_OK(selector_parse(t, SELECTOR_HS, "cpu|gpu", &on, &off, &err));
  assert_int_equal(on, 3);
  assert_int_equal(off, 0);
  ASSERT_OK(selector_parse(t, SELECTOR_HS, "gpu", &on, &off, &err));
  assert_int_equal(on, 2);
  ASSERT_OK(selector_parse(t, SELECTOR_BS, "fluid|fluid_boundary", &on, &off, &err));
  assert_int_equal(on, 3);
  assert_int_equal(off, 0);
  ASSERT_OK(selector_parse(t, SELECTOR_BS, "solid|fluid", &on, &off, &err));
  assert_int_equal(on, (UINT64_C(1) << 2) | 1);
  /* ',' is not a separator for hs/bs: it is a bad character in a name */
  ASSERT_ERR(selector_parse(t, SELECTOR_BS, "fluid,solid", &on, &off, &err), TSR_ERR_INVALID,
             "character ','");
  /* and '|' is not one for fs */
  ASSERT_ERR(selector_parse(t, SELECTOR_FS, "srt|trt", &on, &off, &err), TSR_ERR_INVALID,
             "character '|'");
}

static void test_parse_star(void **state) {
  selector_table_t *t = *state;
  tsr_error_t err;
  uint64_t on = 5, off = 5;
  ASSERT_OK(selector_parse(t, SELECTOR_FS, "*", &on, &off, &err));
  assert_int_equal(on, 0); /* fs: no condition */
  assert_int_equal(off, 0);
  ASSERT_OK(selector_parse(t, SELECTOR_HS, "*", &on, &off, &err));
  assert_int_equal(on, UINT64_MAX); /* hs/bs: every alternative */
  assert_int_equal(off, 0);
  ASSERT_OK(selector_parse(t, SELECTOR_BS, "*", &on, &off, &err));
  assert_int_equal(on, UINT64_MAX);
  assert_int_equal(off, 0);
  /* "*" is only special on its own */
  ASSERT_ERR(selector_parse(t, SELECTOR_FS, "srt,*", &on, &off, &err), TSR_ERR_INVALID,
             "character '*'");
  ASSERT_ERR(selector_parse(t, SELECTOR_HS, "cpu|*", &on, &off, &err), TSR_ERR_INVALID,
             "character '*'");
}

static void test_bad_names(void **state) {
  selector_table_t *t = *state;
  tsr_error_t err;
  uint64_t on, off;
  uint32_t id;
  ASSERT_ERR(selector_parse(t, SELECTOR_FS, "Srt", &on, &off, &err), TSR_ERR_INVALID,
             "fs selector expression 'Srt'");
  assert_non_null(strstr(err.text, "the character 'S'; allowed are a-z, 0-9 and _"));
  ASSERT_ERR(selector_intern(t, SELECTOR_BS, "Fluid", &id, &err), TSR_ERR_INVALID,
             "bs selector name 'Fluid' has the character 'F'");
  ASSERT_ERR(selector_parse(t, SELECTOR_FS, "", &on, &off, &err), TSR_ERR_INVALID,
             "has 0 characters; allowed are 1..31");
  ASSERT_ERR(selector_parse(t, SELECTOR_FS, "a,,b", &on, &off, &err), TSR_ERR_INVALID,
             "fs selector expression 'a,,b'");
  assert_non_null(strstr(err.text, "0 characters"));
  ASSERT_ERR(selector_parse(t, SELECTOR_FS, "a,", &on, &off, &err), TSR_ERR_INVALID,
             "0 characters");
  ASSERT_ERR(selector_parse(t, SELECTOR_HS, "|cpu", &on, &off, &err), TSR_ERR_INVALID,
             "0 characters");
  ASSERT_ERR(selector_parse(t, SELECTOR_FS, "!", &on, &off, &err), TSR_ERR_INVALID,
             "0 characters");
  ASSERT_ERR(selector_parse(t, SELECTOR_FS, "srt, dp", &on, &off, &err), TSR_ERR_INVALID,
             "character ' '");
  ASSERT_ERR(selector_parse(t, SELECTOR_FS, "!!srt", &on, &off, &err), TSR_ERR_INVALID,
             "character '!'");
  ASSERT_ERR(selector_intern(t, SELECTOR_FS, "", &id, &err), TSR_ERR_INVALID, "0 characters");

  char name[40];
  memset(name, 'a', sizeof name);
  name[SELECTOR_NAME_MAX] = '\0'; /* 31 characters: fine */
  ASSERT_OK(selector_intern(t, SELECTOR_FS, name, &id, &err));
  assert_string_equal(selector_name(t, SELECTOR_FS, id), name);
  name[SELECTOR_NAME_MAX] = 'a';
  name[SELECTOR_NAME_MAX + 1] = '\0'; /* 32: too long */
  ASSERT_ERR(selector_intern(t, SELECTOR_FS, name, &id, &err), TSR_ERR_INVALID,
             "has 32 characters; allowed are 1..31");
  ASSERT_ERR(selector_parse(t, SELECTOR_BS, name, &on, &off, &err), TSR_ERR_INVALID,
             "has 32 characters");

  /* '!' negates in fs only */
  ASSERT_ERR(selector_parse(t, SELECTOR_HS, "!gpu", &on, &off, &err), TSR_ERR_INVALID,
             "'!' is allowed in fs expressions only");
  assert_non_null(strstr(err.text, "hs selector expression '!gpu'"));
  ASSERT_ERR(selector_parse(t, SELECTOR_BS, "fluid|!solid", &on, &off, &err), TSR_ERR_INVALID,
             "'!' is allowed in fs expressions only");

  ASSERT_ERR(selector_parse(t, SELECTOR_FS, NULL, &on, &off, &err), TSR_ERR_INVALID,
             "fs selector expression is missing");
  ASSERT_ERR(selector_intern(t, (selector_kind_t)3, "x", &id, &err), TSR_ERR_INVALID,
             "selector kind 3 does not exist");

  /* no rejected name made it into the table */
  char known[4096];
  selector_format(t, SELECTOR_FS, UINT64_MAX, known, sizeof known);
  assert_non_null(strstr(known, name + 1)); /* the 31-character name */
  assert_null(strstr(known, "S"));
  assert_null(strstr(known, " "));
  assert_null(strstr(known, "!"));
  ASSERT_ERR(selector_find(t, SELECTOR_BS, "Fluid", &id, &err), TSR_ERR_INVALID, "unknown");
}

static void test_duplicate_name_in_expression(void **state) {
  selector_table_t *t = *state;
  tsr_error_t err;
  uint64_t on, off;
  ASSERT_ERR(selector_parse(t, SELECTOR_FS, "srt,dp,srt", &on, &off, &err), TSR_ERR_INVALID,
             "fs selector expression 'srt,dp,srt' names 'srt' twice");
  ASSERT_ERR(selector_parse(t, SELECTOR_FS, "dp,!dp", &on, &off, &err), TSR_ERR_INVALID,
             "names 'dp' twice");
  ASSERT_ERR(selector_parse(t, SELECTOR_FS, "!dp,!dp", &on, &off, &err), TSR_ERR_INVALID,
             "names 'dp' twice");
  ASSERT_ERR(selector_parse(t, SELECTOR_HS, "cpu|cpu", &on, &off, &err), TSR_ERR_INVALID,
             "hs selector expression 'cpu|cpu' names 'cpu' twice");
  ASSERT_ERR(selector_parse(t, SELECTOR_BS, "fluid|solid|fluid", &on, &off, &err),
             TSR_ERR_INVALID, "names 'fluid' twice");
}

static void test_64_name_limit(void **state) {
  selector_table_t *t = *state;
  tsr_error_t err;
  uint32_t id;
  char name[16];
  for (int i = 0; i < SELECTOR_MAX; ++i) {
    snprintf(name, sizeof name, "s%d", i);
    ASSERT_OK(selector_intern(t, SELECTOR_FS, name, &id, &err));
    assert_int_equal(id, (uint32_t)i);
  }
  ASSERT_ERR(selector_intern(t, SELECTOR_FS, "one_more", &id, &err), TSR_ERR_INVALID,
             "cannot add fs selector 'one_more': all 64 fs selectors are taken");
  /* existing names are still found and interned */
  ASSERT_OK(selector_intern(t, SELECTOR_FS, "s63", &id, &err));
  assert_int_equal(id, 63);
  ASSERT_OK(selector_find(t, SELECTOR_FS, "s0", &id, &err));
  assert_int_equal(id, 0);
  /* the last id maps to the top bit */
  uint64_t on, off;
  ASSERT_OK(selector_parse(t, SELECTOR_FS, "s0,!s63", &on, &off, &err));
  assert_int_equal(on, 1);
  assert_int_equal(off, UINT64_C(1) << 63);
  ASSERT_ERR(selector_parse(t, SELECTOR_FS, "s1,new_one", &on, &off, &err), TSR_ERR_INVALID,
             "all 64 fs selectors are taken");
  /* other kinds are unaffected; hs already holds cpu and gpu, so 62 more fit */
  for (int i = 0; i < SELECTOR_MAX - 2; ++i) {
    snprintf(name, sizeof name, "h%d", i);
    ASSERT_OK(selector_intern(t, SELECTOR_HS, name, &id, &err));
    assert_int_equal(id, (uint32_t)i + 2);
  }
  ASSERT_ERR(selector_intern(t, SELECTOR_HS, "h62", &id, &err), TSR_ERR_INVALID,
             "all 64 hs selectors are taken");
}

/* With all 64 names taken, an unknown name still lists the known names, not "*". */
static void test_find_unknown_in_full_table_lists_names(void **state) {
  selector_table_t *t = *state;
  tsr_error_t err;
  uint32_t id;
  char name[16];
  for (int i = 0; i < SELECTOR_MAX; ++i) {
    snprintf(name, sizeof name, "b%d", i);
    ASSERT_OK(selector_intern(t, SELECTOR_BS, name, &id, &err));
  }
  ASSERT_ERR(selector_find(t, SELECTOR_BS, "gas", &id, &err), TSR_ERR_INVALID,
             "known are: b0|b1|b2|");
  assert_non_null(strstr(err.text, "|b63"));

  /* 64 names of the longest length: the list is not cut short either */
  for (int i = 0; i < SELECTOR_MAX; ++i) {
    char longname[64];
    snprintf(longname, sizeof longname, "f%02d%028d", i, 0);
    assert_int_equal(strlen(longname), SELECTOR_NAME_MAX);
    ASSERT_OK(selector_intern(t, SELECTOR_FS, longname, &id, &err));
  }
  ASSERT_ERR(selector_find(t, SELECTOR_FS, "srt", &id, &err), TSR_ERR_INVALID, "known are: ");
  char first[48], last[48];
  snprintf(first, sizeof first, "known are: f00%028d,f01", 0);
  snprintf(last, sizeof last, ",f63%028d", 0);
  assert_non_null(strstr(err.text, first));
  assert_non_null(strstr(err.text, last));
}

static void test_format(void **state) {
  selector_table_t *t = *state;
  tsr_error_t err;
  uint64_t on, off;
  char out[128];
  ASSERT_OK(selector_parse(t, SELECTOR_FS, "srt,dp,force", &on, &off, &err));
  assert_string_equal(selector_format(t, SELECTOR_FS, on, out, sizeof out), "srt,dp,force");
  assert_string_equal(selector_format(t, SELECTOR_FS, UINT64_C(5), out, sizeof out),
                      "srt,force");
  assert_string_equal(selector_format(t, SELECTOR_FS, 0, out, sizeof out), "{}");
  assert_string_equal(selector_format(t, SELECTOR_HS, 3, out, sizeof out), "cpu|gpu");
  assert_string_equal(selector_format(t, SELECTOR_HS, 2, out, sizeof out), "gpu");
  assert_string_equal(selector_format(t, SELECTOR_HS, UINT64_MAX, out, sizeof out), "*");
  assert_string_equal(selector_format(t, SELECTOR_BS, 0, out, sizeof out), "{}");
  /* the return value is out */
  assert_ptr_equal(selector_format(t, SELECTOR_HS, 1, out, sizeof out), out);
  /* an id without a name shows as "?" */
  assert_string_equal(selector_format(t, SELECTOR_HS, UINT64_C(1) << 5, out, sizeof out), "?");

  /* a short buffer holds the names that fit, NUL-terminated */
  char small[6];
  memset(small, 'X', sizeof small);
  selector_format(t, SELECTOR_HS, 3, small, 4);
  assert_string_equal(small, "cpu");
  assert_int_equal(small[4], 'X'); /* nothing written past cap */
  memset(small, 'X', sizeof small);
  selector_format(t, SELECTOR_HS, 3, small, 0); /* cap 0: nothing written */
  assert_int_equal(small[0], 'X');
  /* round trip: format then parse gives the same bits */
  ASSERT_OK(selector_parse(t, SELECTOR_BS, "fluid|solid|wall", &on, &off, &err));
  uint64_t again;
  ASSERT_OK(selector_parse(t, SELECTOR_BS, selector_format(t, SELECTOR_BS, on, out, sizeof out),
                           &again, &off, &err));
  assert_int_equal(again, on);
}

static void test_free_is_null_safe(void **state) {
  (void)state;
  selector_table_t *t = NULL;
  selector_table_free(&t);
  selector_table_free(NULL);
  assert_null(t);
  tsr_error_t err;
  ASSERT_OK(selector_table_create(&t, &err));
  assert_non_null(t);
  selector_table_free(&t);
  assert_null(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      TABLE_TEST(test_cpu_gpu_preinterned),
      TABLE_TEST(test_intern_ids_per_kind),
      cmocka_unit_test(test_kind_names),
      TABLE_TEST(test_find_unknown_lists_known),
      TABLE_TEST(test_parse_fs_on_off),
      TABLE_TEST(test_parse_hs_bs_alternatives),
      TABLE_TEST(test_parse_star),
      TABLE_TEST(test_bad_names),
      TABLE_TEST(test_duplicate_name_in_expression),
      TABLE_TEST(test_64_name_limit),
      TABLE_TEST(test_find_unknown_in_full_table_lists_names),
      TABLE_TEST(test_format),
      cmocka_unit_test(test_free_is_null_safe),
  };
  return cmocka_run_group_tests_name("selector", tests, NULL, NULL);
}
