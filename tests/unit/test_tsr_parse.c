/* tsr_parse: numbers of the command line and the environment, read strictly.
 *
 * Checks that integers and reals are read whole and exactly at their range ends
 * (INT64_MIN, INT64_MAX, the bounds given), and that every kind of bad text is refused
 * with the output left as it was: empty text, blanks before or after, signs without
 * digits or doubled, trailing characters, hexadecimal and octal-looking prefixes that
 * strtoll/strtod would take, values one past the range, values past 64 bits (ERANGE),
 * and for reals inf, nan, overflow and underflow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tsr_parse.h"

/* A value the parsers must not touch when they refuse. */
enum { UNTOUCHED = 4242 };

static void int_ok(const char *text, int64_t min, int64_t max, int64_t want) {
  int64_t v = UNTOUCHED;
  if (!tsr_parse_int(text, min, max, &v)) fail_msg("'%s' refused", text);
  assert_int_equal(v, want);
}

static void int_refused(const char *text, int64_t min, int64_t max) {
  int64_t v = UNTOUCHED;
  if (tsr_parse_int(text, min, max, &v)) fail_msg("'%s' accepted as %lld", text, (long long)v);
  assert_int_equal(v, UNTOUCHED);
}

static void test_int_accepts_whole_numbers(void **state) {
  (void)state;
  int_ok("0", 0, 10, 0);
  int_ok("10", 0, 10, 10);
  int_ok("007", 0, 10, 7); /* leading zeros are decimal, not octal */
  int_ok("+3", 0, 10, 3);
  int_ok("-1", -1, 1023, -1);
  int_ok("9223372036854775807", 0, INT64_MAX, INT64_MAX);
  int_ok("-9223372036854775808", INT64_MIN, 0, INT64_MIN);
}

static void test_int_refuses_bad_text(void **state) {
  (void)state;
  static const char *const bad[] = {"", " ", " 5", "5 ", "\t5", "5\n", "+", "-", "+-5", "-+5",
                                    "--5", "5x", "x5", "5.0", "1e3", "0x10", "5,6", "٥"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) int_refused(bad[i], INT64_MIN, INT64_MAX);
  int64_t v = UNTOUCHED;
  assert_false(tsr_parse_int(NULL, 0, 10, &v));
  assert_int_equal(v, UNTOUCHED);
}

static void test_int_refuses_out_of_range(void **state) {
  (void)state;
  int_refused("11", 0, 10);
  int_refused("-1", 0, 10);
  int_refused("0", 1, 64);
  /* one past 64 bits either way: strtoll's ERANGE, not its clamped INT64_MAX/MIN */
  int_refused("9223372036854775808", 0, INT64_MAX);
  int_refused("-9223372036854775809", INT64_MIN, 0);
  int_refused("99999999999999999999", 0, INT64_MAX);
}

static void real_ok(const char *text, double min, double max, double want) {
  double v = UNTOUCHED;
  if (!tsr_parse_real(text, min, max, &v)) fail_msg("'%s' refused", text);
  assert_true(v == want); /* exact: each text names a double exactly */
}

static void real_refused(const char *text, double min, double max) {
  double v = UNTOUCHED;
  if (tsr_parse_real(text, min, max, &v)) fail_msg("'%s' accepted as %g", text, v);
  assert_true(v == UNTOUCHED);
}

static void test_real_accepts_decimal_numbers(void **state) {
  (void)state;
  real_ok("0", 0, 60, 0.0);
  real_ok("60", 0, 60, 60.0);
  real_ok("0.25", 0, 60, 0.25);
  real_ok(".5", 0, 60, 0.5);
  real_ok("5.", 0, 60, 5.0);
  real_ok("2.5e1", 0, 60, 25.0);
  real_ok("-0.5", -1, 1, -0.5);
  real_ok("+1", -1, 1, 1.0);
}

static void test_real_refuses_bad_text(void **state) {
  (void)state;
  static const char *const bad[] = {"", " 1", "1 ", "+", "-", ".", "e3", "1e", "1.5s",
                                    "+-1", "0x1", "0x1p3", "inf", "-inf", "nan", "infinity",
                                    "1,5"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) real_refused(bad[i], -1e300, 1e300);
  double v = UNTOUCHED;
  assert_false(tsr_parse_real(NULL, 0, 1, &v));
  assert_true(v == UNTOUCHED);
  real_refused("60.000001", 0, 60);
  real_refused("-0.001", 0, 60);
  real_refused("1e999", -1e300, 1e300);  /* overflow: ERANGE, HUGE_VAL */
  real_refused("1e-999", -1e300, 1e300); /* underflow: ERANGE */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int_accepts_whole_numbers),
      cmocka_unit_test(test_int_refuses_bad_text),
      cmocka_unit_test(test_int_refuses_out_of_range),
      cmocka_unit_test(test_real_accepts_decimal_numbers),
      cmocka_unit_test(test_real_refuses_bad_text),
  };
  return cmocka_run_group_tests_name("tsr_parse", tests, NULL, NULL);
}
