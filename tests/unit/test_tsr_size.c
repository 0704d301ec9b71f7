/* tsr_size: checked products and sums of sizes, at the edges of size_t and int.
 *
 * Every case sits right at an edge: the largest product or sum that fits is exact, one
 * more overflows and gives false with SIZE_MAX (INT_MAX for MPI counts), never a
 * wrapped-around small number; a box of INT_MAX cells along an axis with its ghost
 * layers is counted without int overflow. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tsr_size.h"

static void test_mul_at_the_edge(void **state) {
  (void)state;
  size_t out = 0;
  assert_true(tsr_mul_size(SIZE_MAX, 1, &out));
  assert_true(out == SIZE_MAX);
  assert_true(tsr_mul_size(0, SIZE_MAX, &out));
  assert_true(out == 0);
  /* 2^32 (2^32 - 1) = 2^64 - 2^32 fits; 2^32 2^32 = 2^64 does not */
  assert_true(tsr_mul_size((size_t)1 << 32, ((size_t)1 << 32) - 1, &out));
  assert_true(out == SIZE_MAX - (((size_t)1 << 32) - 1));
  assert_false(tsr_mul_size((size_t)1 << 32, (size_t)1 << 32, &out));
  assert_true(out == SIZE_MAX);
  out = 0;
  assert_false(tsr_mul_size(SIZE_MAX / 2 + 1, 2, &out)); /* would wrap to 0 */
  assert_true(out == SIZE_MAX);
}

static void test_add_at_the_edge(void **state) {
  (void)state;
  size_t out = 0;
  assert_true(tsr_add_size(SIZE_MAX - 1, 1, &out));
  assert_true(out == SIZE_MAX);
  out = 0;
  assert_false(tsr_add_size(SIZE_MAX, 1, &out)); /* would wrap to 0 */
  assert_true(out == SIZE_MAX);
}

static void test_box_cells(void **state) {
  (void)state;
  size_t out = 0;
  const int small[3] = {4, 5, 6};
  assert_true(tsr_box_cells(small, 0, &out));
  assert_true(out == 120);
  assert_true(tsr_box_cells(small, 1, &out));
  assert_true(out == 6 * 7 * 8);
  /* INT_MAX + 2 does not fit an int, but the count is exact: (2^31 + 1) 3 3 */
  const int long_axis[3] = {INT_MAX, 1, 1};
  assert_true(tsr_box_cells(long_axis, 1, &out));
  assert_true(out == ((size_t)INT_MAX + 2) * 9);
  /* 2^21 2^21 (2^22 - 1) = 2^64 - 2^42 fits; with ghost layers it does not */
  const int edge[3] = {1 << 21, 1 << 21, (1 << 22) - 1};
  assert_true(tsr_box_cells(edge, 0, &out));
  assert_true(out == SIZE_MAX - (((size_t)1 << 42) - 1));
  assert_false(tsr_box_cells(edge, 1, &out));
  assert_true(out == SIZE_MAX);
  const int huge[3] = {INT_MAX, INT_MAX, INT_MAX}; /* about 2^93 */
  out = 0;
  assert_false(tsr_box_cells(huge, 0, &out));
  assert_true(out == SIZE_MAX);
  const int empty[3] = {3, -2, 4};
  assert_true(tsr_box_cells(empty, 0, &out));
  assert_true(out == 0);
}

static void test_size_to_int(void **state) {
  (void)state;
  int out = 0;
  assert_true(tsr_size_to_int((size_t)INT_MAX, &out));
  assert_int_equal(out, INT_MAX);
  out = 0;
  assert_false(tsr_size_to_int((size_t)INT_MAX + 1, &out)); /* (int) would give INT_MIN */
  assert_int_equal(out, INT_MAX);
  assert_false(tsr_size_to_int(SIZE_MAX, &out)); /* (int) would give -1 */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mul_at_the_edge),
      cmocka_unit_test(test_add_at_the_edge),
      cmocka_unit_test(test_box_cells),
      cmocka_unit_test(test_size_to_int),
  };
  return cmocka_run_group_tests_name("tsr_size", tests, NULL, NULL);
}
