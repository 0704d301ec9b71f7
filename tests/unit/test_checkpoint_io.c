/* checkpoint_io: the pieces a checkpoint's bytes pass through (checkpoint.h, bulk_file.h).
 *
 * Checks: CRC-32C's check value ("123456789" -> 0xe3069283, RFC 3720) and that a CRC
 * continued over pieces equals the CRC of the whole; checkpoint_crc32_combine of two
 * pieces' CRCs equals the whole's at every split of a buffer (lengths 0 to 3000, one
 * zero-length side, and 1 GB, whose operator takes every bit of the length); the
 * bulk file round trip: ranges of rows of 1 to 70000 bytes written and read back through
 * pieces of 8 KB (a row longer than a piece grows the buffers; a range starting mid-page
 * is read, as version 1 checkpoints need), the padding between ranges zeros, reading
 * past the file's end refused with "truncated", and an unwritable path refused naming it.
 * Everything in a folder on the disk (O_DIRECT) and, where it exists, in /dev/shm (tmpfs:
 * through the page cache where it refuses O_DIRECT). */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bulk_file.h"
#include "checkpoint.h"
#include "tsr_error.h"
#include "unit_test.h"

static void test_crc_check_value(void **state) {
  (void)state;
  const char *nine = "123456789";
  assert_int_equal(checkpoint_crc32(0, nine, 9), 0xe3069283u);
  assert_int_equal(checkpoint_crc32(checkpoint_crc32(0, nine, 4), nine + 4, 5), 0xe3069283u);
  assert_int_equal(checkpoint_crc32(0, nine, 0), 0u);
}

static void test_crc_combine(void **state) {
  (void)state;
  enum { N = 3000 };
  uint8_t *b = malloc(N);
  assert_non_null(b);
  for (int i = 0; i < N; ++i) b[i] = (uint8_t)(i * 2654435761u >> 13);
  const uint32_t whole = checkpoint_crc32(0, b, N);
  for (int split = 0; split <= N; split += (split < 40 ? 1 : 97)) {
    uint32_t a = checkpoint_crc32(0, b, (size_t)split);
    uint32_t c = checkpoint_crc32(0, b + split, (size_t)(N - split));
    assert_int_equal(checkpoint_crc32_combine(a, c, (uint64_t)(N - split)), whole);
  }
  /* a long second piece: 1 GB of zeros is the CRC continued through them */
  const size_t big = (size_t)1 << 30;
  uint8_t *zeros = calloc(1, big);
  if (zeros) {
    uint32_t head = checkpoint_crc32(0, b, 100), tail = checkpoint_crc32(0, zeros, big);
    assert_int_equal(checkpoint_crc32_combine(head, tail, big), checkpoint_crc32(head, zeros, big));
    free(zeros);
  }
  free(b);
}

/* Byte k of the pattern of range r. */
static uint8_t pattern(int r, uint64_t k) { return (uint8_t)((k * 131u + (uint64_t)r * 7u) ^ (k >> 9)); }

static void round_trip(const char *folder) {
  tsr_error_t err;
  tsr_error_clear(&err);
  char path[512];
  snprintf(path, sizeof path, "%s/bulk.bin", folder);
  /* ranges of rows: (row bytes, rows) each; each range starts on the page after the last */
  const size_t rows[][2] = {{1, 5000}, {4096, 3}, {70000, 2}, {12, 1}, {3000, 17}, {0, 0}, {8, 4096}};
  const int nr = (int)(sizeof rows / sizeof rows[0]);
  uint64_t offset[8], at = BULK_ALIGN; /* the first page stays a hole */
  bulk_file_t f = {.fd = -1};
  ASSERT_OK(bulk_open(&f, path, true, 8192, &err));
  for (int r = 0; r < nr; ++r) {
    offset[r] = at;
    bulk_write_begin(&f, at);
    uint64_t k = 0;
    for (size_t i = 0; i < rows[r][1];) {
      uint8_t *p = NULL;
      size_t room = 0;
      ASSERT_OK(bulk_write_room(&f, rows[r][0], &p, &room, &err));
      assert_true(room >= rows[r][0]);
      size_t n = room / rows[r][0] < rows[r][1] - i ? room / rows[r][0] : rows[r][1] - i;
      for (size_t j = 0; j < n * rows[r][0]; ++j) p[j] = pattern(r, k++);
      bulk_write_advance(&f, n * rows[r][0]);
      i += n;
    }
    ASSERT_OK(bulk_write_end(&f, &err));
    at = (at + k + BULK_ALIGN - 1) / BULK_ALIGN * BULK_ALIGN;
  }
  ASSERT_OK(bulk_sync(&f, &err));
  bulk_close(&f);
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  assert_int_equal((uint64_t)sb.st_size, at);

  /* read back: each range, then each range from a byte inside it (mid-page) */
  ASSERT_OK(bulk_open(&f, path, false, 8192, &err));
  for (int pass = 0; pass < 2; ++pass)
    for (int r = nr - 1; r >= 0; --r) {
      const uint64_t skip = pass ? rows[r][0] * rows[r][1] / 3 : 0;
      const uint64_t bytes = rows[r][0] * rows[r][1] - skip;
      const size_t unit = pass ? 1 + rows[r][0] / 2 : rows[r][0];
      bulk_read_begin(&f, offset[r] + skip, bytes);
      for (uint64_t k = 0; k < bytes;) {
        const uint8_t *p = NULL;
        size_t avail = 0;
        ASSERT_OK(bulk_read_take(&f, unit, &p, &avail, &err));
        assert_true(avail >= (unit < bytes - k ? unit : bytes - k));
        assert_true(avail <= bytes - k);
        for (size_t j = 0; j < avail; ++j)
          if (p[j] != pattern(r, skip + k + j))
            fail_msg("range %d byte %llu: %u, wrote %u", r, (unsigned long long)(skip + k + j),
                     p[j], pattern(r, skip + k + j));
        bulk_read_advance(&f, avail);
        k += avail;
      }
    }
  /* the padding after a range is zeros */
  bulk_read_begin(&f, offset[0] + 5000, BULK_ALIGN - 5000 % BULK_ALIGN);
  const uint8_t *p = NULL;
  size_t avail = 0;
  ASSERT_OK(bulk_read_take(&f, 1, &p, &avail, &err));
  for (size_t j = 0; j < avail; ++j) assert_int_equal(p[j], 0);
  /* past the end */
  bulk_read_begin(&f, at - 10, 100);
  ASSERT_ERR(bulk_read_take(&f, 100, &p, &avail, &err), TSR_ERR_CORRUPT, "truncated");
  bulk_close(&f);
  unlink(path);
}

static void test_bulk_disk(void **state) {
  (void)state;
  char folder[] = "tessera_test_bulk_XXXXXX"; /* in the build folder: a disk */
  assert_non_null(mkdtemp(folder));
  round_trip(folder);
  rmdir(folder);
}

static void test_bulk_tmpfs(void **state) {
  (void)state;
  char folder[] = "/dev/shm/tessera_test_bulk_XXXXXX";
  if (!mkdtemp(folder)) skip();
  round_trip(folder);
  rmdir(folder);
}

static void test_bulk_unwritable(void **state) {
  (void)state;
  tsr_error_t err;
  bulk_file_t f = {.fd = -1};
  ASSERT_ERR(bulk_open(&f, "/nonexistent-folder/x.bin", true, 8192, &err), TSR_ERR_IO,
             "cannot create /nonexistent-folder/x.bin");
  bulk_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_crc_check_value), cmocka_unit_test(test_crc_combine),
      cmocka_unit_test(test_bulk_disk),       cmocka_unit_test(test_bulk_tmpfs),
      cmocka_unit_test(test_bulk_unwritable),
  };
  return cmocka_run_group_tests_name("checkpoint_io", tests, NULL, NULL);
}
