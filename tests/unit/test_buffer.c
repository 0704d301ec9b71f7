/* buffer: growable byte buffers and bounds-checked little-endian reading.
 *
 * Checks the byte order of every writer byte by byte (whatever the host), growth past
 * the initial capacity (also from 0) with earlier bytes kept, buffer_reserve, clear,
 * round trips of edge values, and that every reader fails with TSR_ERR_CORRUPT naming
 * what it read when too few bytes are left, without moving the cursor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "buffer.h"
#include "tsr_error.h"
#include "unit_test.h"

static int setup_buffer(void **state) {
  tsr_error_t err;
  buffer_t *b = NULL;
  if (buffer_create(16, &b, &err) != TSR_OK) return -1;
  *state = b;
  return 0;
}

static int teardown_buffer(void **state) {
  buffer_t *b = *state;
  buffer_free(&b);
  return 0;
}

#define BUF_TEST(f) cmocka_unit_test_setup_teardown(f, setup_buffer, teardown_buffer)

static void test_little_endian_bytes(void **state) {
  buffer_t *b = *state;
  tsr_error_t err;
  ASSERT_OK(buffer_put_u8(b, 0xab, &err));
  ASSERT_OK(buffer_put_u32(b, UINT32_C(0x11223344), &err));
  ASSERT_OK(buffer_put_u64(b, UINT64_C(0x0102030405060708), &err));
  ASSERT_OK(buffer_put_f64(b, 1.0, &err));   /* 0x3ff0000000000000 */
  ASSERT_OK(buffer_put_f32(b, -2.0f, &err)); /* 0xc0000000 */
  ASSERT_OK(buffer_put_f64(b, -0.1, &err));  /* 0xbfb999999999999a */
  const uint8_t want[] = {0xab,                                           /* u8 */
                          0x44, 0x33, 0x22, 0x11,                         /* u32 */
                          0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* u64 */
                          0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f, /* f64 1.0 */
                          0x00, 0x00, 0x00, 0xc0,                         /* f32 -2 */
                          0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0xbf};
  assert_int_equal(buffer_size(b), sizeof want);
  assert_memory_equal(buffer_data(b), want, sizeof want);
}

static void test_store_load_raw(void **state) {
  (void)state;
  uint8_t p[8];
  buffer_store_u32(p, UINT32_C(0xdeadbeef));
  assert_int_equal(p[0], 0xef);
  assert_int_equal(p[1], 0xbe);
  assert_int_equal(p[2], 0xad);
  assert_int_equal(p[3], 0xde);
  assert_int_equal(buffer_load_u32(p), UINT32_C(0xdeadbeef));
  buffer_store_u64(p, UINT64_C(0x8000000000000001));
  assert_int_equal(p[0], 0x01);
  for (int i = 1; i < 7; ++i) assert_int_equal(p[i], 0);
  assert_int_equal(p[7], 0x80);
  assert_int_equal(buffer_load_u64(p), UINT64_C(0x8000000000000001));
  const uint8_t q[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  assert_int_equal(buffer_load_u32(q), UINT32_C(0x04030201));
  assert_int_equal(buffer_load_u64(q), UINT64_C(0x0807060504030201));
}

static void test_growth_keeps_bytes(void **state) {
  (void)state;
  tsr_error_t err;
  const size_t caps[] = {0, 1, 4, 16};
  for (size_t c = 0; c < sizeof caps / sizeof caps[0]; ++c) {
    buffer_t *b = NULL;
    ASSERT_OK(buffer_create(caps[c], &b, &err));
    assert_int_equal(buffer_size(b), 0);
    for (uint32_t i = 0; i < 1000; ++i) ASSERT_OK(buffer_put_u32(b, i * 2654435761u, &err));
    assert_int_equal(buffer_size(b), 4000);
    const uint8_t *d = buffer_data(b);
    for (uint32_t i = 0; i < 1000; ++i)
      assert_int_equal(buffer_load_u32(d + 4 * i), i * 2654435761u);
    buffer_free(&b);
    assert_null(b);
  }
  buffer_free(NULL); /* NULL-safe */
}

static void test_reserve_and_put_bytes(void **state) {
  buffer_t *b = *state;
  tsr_error_t err;
  ASSERT_OK(buffer_put_u32(b, 7, &err));
  uint8_t *at = NULL;
  ASSERT_OK(buffer_reserve(b, 100, &at, &err)); /* grows past 16 */
  assert_int_equal(buffer_size(b), 104);
  assert_ptr_equal(at, buffer_data(b) + 4);
  for (int i = 0; i < 100; ++i) at[i] = (uint8_t)(i + 1);
  const char text[] = "tessera";
  ASSERT_OK(buffer_put_bytes(b, text, sizeof text, &err));
  ASSERT_OK(buffer_put_bytes(b, NULL, 0, &err)); /* nothing: fine */
  assert_int_equal(buffer_size(b), 104 + sizeof text);
  const uint8_t *d = buffer_data(b);
  assert_int_equal(buffer_load_u32(d), 7);
  for (int i = 0; i < 100; ++i) assert_int_equal(d[4 + i], i + 1);
  assert_memory_equal(d + 104, text, sizeof text);
  ASSERT_OK(buffer_reserve(b, 0, &at, &err));
  assert_ptr_equal(at, buffer_data(b) + buffer_size(b));

  buffer_clear(b);
  assert_int_equal(buffer_size(b), 0);
  ASSERT_OK(buffer_put_u8(b, 9, &err));
  assert_int_equal(buffer_size(b), 1);
  assert_int_equal(buffer_data(b)[0], 9);
}

static void test_reserve_size_overflow(void **state) {
  buffer_t *b = *state;
  tsr_error_t err;
  ASSERT_OK(buffer_put_u8(b, 1, &err));
  uint8_t *at = NULL;
  ASSERT_ERR(buffer_reserve(b, SIZE_MAX, &at, &err), TSR_ERR_NOMEM, "byte buffer size overflows");
  assert_int_equal(buffer_size(b), 1);
  assert_int_equal(buffer_data(b)[0], 1);
}

static void test_round_trip(void **state) {
  buffer_t *b = *state;
  tsr_error_t err;
  const double doubles[] = {0.0, -0.0, 1.0 / 3.0, -DBL_MAX, DBL_MIN, DBL_TRUE_MIN, INFINITY};
  const float floats[] = {0.0f, -1.5f, FLT_MAX, FLT_TRUE_MIN, -INFINITY};
  const uint64_t u64s[] = {0, 1, UINT64_MAX, UINT64_C(0x8000000000000000)};
  const uint32_t u32s[] = {0, UINT32_MAX, 0x80000000u};
  for (size_t i = 0; i < sizeof doubles / sizeof doubles[0]; ++i)
    ASSERT_OK(buffer_put_f64(b, doubles[i], &err));
  for (size_t i = 0; i < sizeof floats / sizeof floats[0]; ++i)
    ASSERT_OK(buffer_put_f32(b, floats[i], &err));
  for (size_t i = 0; i < sizeof u64s / sizeof u64s[0]; ++i)
    ASSERT_OK(buffer_put_u64(b, u64s[i], &err));
  for (size_t i = 0; i < sizeof u32s / sizeof u32s[0]; ++i)
    ASSERT_OK(buffer_put_u32(b, u32s[i], &err));
  ASSERT_OK(buffer_put_f64(b, NAN, &err));
  ASSERT_OK(buffer_put_u8(b, 0xff, &err));

  buffer_reader_t r = buffer_reader(buffer_data(b), buffer_size(b));
  assert_int_equal(buffer_reader_left(&r), buffer_size(b));
  for (size_t i = 0; i < sizeof doubles / sizeof doubles[0]; ++i) {
    double v;
    ASSERT_OK(buffer_get_f64(&r, "double", &v, &err));
    assert_memory_equal(&v, &doubles[i], sizeof v); /* bit-exact, sign of zero included */
  }
  for (size_t i = 0; i < sizeof floats / sizeof floats[0]; ++i) {
    float v;
    ASSERT_OK(buffer_get_f32(&r, "float", &v, &err));
    assert_memory_equal(&v, &floats[i], sizeof v);
  }
  for (size_t i = 0; i < sizeof u64s / sizeof u64s[0]; ++i) {
    uint64_t v;
    ASSERT_OK(buffer_get_u64(&r, "u64", &v, &err));
    assert_int_equal(v, u64s[i]);
  }
  for (size_t i = 0; i < sizeof u32s / sizeof u32s[0]; ++i) {
    uint32_t v;
    ASSERT_OK(buffer_get_u32(&r, "u32", &v, &err));
    assert_int_equal(v, u32s[i]);
  }
  double nan_back;
  ASSERT_OK(buffer_get_f64(&r, "nan", &nan_back, &err));
  assert_true(isnan(nan_back));
  uint8_t last;
  ASSERT_OK(buffer_get_u8(&r, "u8", &last, &err));
  assert_int_equal(last, 0xff);
  assert_int_equal(buffer_reader_left(&r), 0);
  assert_int_equal(r.pos, buffer_size(b));
}

static void test_truncated_reads_fail_and_keep_cursor(void **state) {
  (void)state;
  tsr_error_t err;
  const uint8_t bytes[7] = {1, 2, 3, 4, 5, 6, 7};
  buffer_reader_t r = buffer_reader(bytes, sizeof bytes);
  uint32_t u32 = 0;
  ASSERT_OK(buffer_get_u32(&r, "first word", &u32, &err));
  assert_int_equal(u32, 0x04030201);
  assert_int_equal(r.pos, 4);

  uint64_t u64 = 42;
  ASSERT_ERR(buffer_get_u64(&r, "the velocity", &u64, &err), TSR_ERR_CORRUPT,
             "truncated the velocity: needs 8 bytes at offset 4, only 3 left");
  assert_int_equal(r.pos, 4);
  assert_int_equal(buffer_reader_left(&r), 3);
  double f64 = 0;
  ASSERT_ERR(buffer_get_f64(&r, "rho", &f64, &err), TSR_ERR_CORRUPT, "truncated rho");
  assert_int_equal(r.pos, 4);
  ASSERT_ERR(buffer_get_u32(&r, "count", &u32, &err), TSR_ERR_CORRUPT,
             "needs 4 bytes at offset 4, only 3 left");
  assert_int_equal(r.pos, 4);
  float f32 = 0;
  ASSERT_ERR(buffer_get_f32(&r, "weight", &f32, &err), TSR_ERR_CORRUPT, "truncated weight");
  assert_int_equal(r.pos, 4);
  const uint8_t *p = NULL;
  ASSERT_ERR(buffer_get_bytes(&r, "payload", 4, &p, &err), TSR_ERR_CORRUPT,
             "truncated payload: needs 4 bytes");
  assert_int_equal(r.pos, 4);
  ASSERT_ERR(buffer_get_bytes(&r, "payload", SIZE_MAX, &p, &err), TSR_ERR_CORRUPT,
             "truncated payload");
  assert_int_equal(r.pos, 4);

  /* exactly what is left works and borrows without a copy */
  ASSERT_OK(buffer_get_bytes(&r, "rest", 3, &p, &err));
  assert_ptr_equal(p, bytes + 4);
  assert_int_equal(buffer_reader_left(&r), 0);
  uint8_t u8 = 0;
  ASSERT_ERR(buffer_get_u8(&r, "tail", &u8, &err), TSR_ERR_CORRUPT,
             "needs 1 bytes at offset 7, only 0 left");
  assert_int_equal(r.pos, 7);
  ASSERT_OK(buffer_get_bytes(&r, "nothing", 0, &p, &err));
  assert_int_equal(r.pos, 7);

  /* an empty reader */
  buffer_reader_t e = buffer_reader(NULL, 0);
  assert_int_equal(buffer_reader_left(&e), 0);
  ASSERT_ERR(buffer_get_u8(&e, "byte", &u8, &err), TSR_ERR_CORRUPT, "truncated byte");
  assert_int_equal(e.pos, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BUF_TEST(test_little_endian_bytes),
      cmocka_unit_test(test_store_load_raw),
      cmocka_unit_test(test_growth_keeps_bytes),
      BUF_TEST(test_reserve_and_put_bytes),
      BUF_TEST(test_reserve_size_overflow),
      BUF_TEST(test_round_trip),
      cmocka_unit_test(test_truncated_reads_fail_and_keep_cursor),
  };
  return cmocka_run_group_tests_name("buffer", tests, NULL, NULL);
}
