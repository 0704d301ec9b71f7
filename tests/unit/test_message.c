/* message: block messages on the wire and their checks on arrival.
 *
 * Checks the header layout byte by byte, append/read round trips of several messages
 * in one buffer (empty payload included), and that message_read fails with
 * TSR_ERR_CORRUPT on a truncated header, a payload longer than the bytes left and a bad
 * magic, leaving the cursor at the start of the bad message. message_check_route is
 * checked on a 3x2x1 grid whose rows live on ranks 0 and 1, as seen by rank 1: unknown
 * sending or receiving BlockID, direction >= 26, sender not on from_rank, receiver not
 * on this rank, a receiver that is not the sender's neighbour in that direction and a
 * direction that leaves the domain; periodic wraps are accepted. message_check_payload
 * compares lengths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "buffer.h"
#include "direction.h"
#include "message.h"
#include "patch.h"
#include "tsr_error.h"
#include "unit_test.h"

static int dir_of(int x, int y, int z) {
  int d = direction_from_offset(x, y, z);
  assert_true(d >= 0);
  return d;
}

/* ---------------------------------------------------------------- wire format */

static void test_header_layout(void **state) {
  (void)state;
  uint8_t p[MESSAGE_HEADER_BYTES];
  message_header_t h = {.src = 0x01020304u, .dst = 0xa0b0c0d0u, .dir = 25, .field = 0x0203,
                        .payload = UINT64_C(0x1122334455667788)};
  message_encode_header(p, &h);
  const uint8_t want[MESSAGE_HEADER_BYTES] = {
      'T',  'S',  'R',  'M',                          /* magic */
      0x04, 0x03, 0x02, 0x01,                         /* src */
      0xd0, 0xc0, 0xb0, 0xa0,                         /* dst */
      25,   0,    0x03, 0x02,                         /* dir, field */
      0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, /* payload bytes */
  };
  assert_memory_equal(p, want, sizeof want);
  assert_int_equal(MESSAGE_HEADER_BYTES, 24);
  assert_int_equal(buffer_load_u32(p), MESSAGE_MAGIC);
}

static void append(buffer_t *buf, uint32_t src, uint32_t dst, uint32_t dir, uint64_t n,
                   uint8_t fill) {
  tsr_error_t err;
  uint8_t *payload = NULL;
  message_header_t h = {.src = src, .dst = dst, .dir = dir, .payload = n};
  ASSERT_OK(message_append(buf, &h, &payload, &err));
  assert_non_null(payload);
  for (uint64_t i = 0; i < n; ++i) payload[i] = (uint8_t)(fill + i);
}

static void test_append_read_round_trip(void **state) {
  (void)state;
  tsr_error_t err;
  buffer_t *buf = NULL;
  ASSERT_OK(buffer_create(8, &buf, &err)); /* small: appends must grow it */
  append(buf, 0, 3, 2, 10, 100);
  append(buf, 7, 1, 19, 0, 0); /* empty payload */
  append(buf, 4, 5, 0, 1000, 7);
  assert_int_equal(buffer_size(buf), 3 * MESSAGE_HEADER_BYTES + 10 + 0 + 1000);

  buffer_reader_t r = buffer_reader(buffer_data(buf), buffer_size(buf));
  const struct {
    uint32_t src, dst, dir;
    uint64_t n;
    uint8_t fill;
  } want[3] = {{0, 3, 2, 10, 100}, {7, 1, 19, 0, 0}, {4, 5, 0, 1000, 7}};
  size_t offset = 0;
  for (int m = 0; m < 3; ++m) {
    message_header_t h;
    const uint8_t *payload = NULL;
    ASSERT_OK(message_read(&r, &h, &payload, &err));
    assert_int_equal(h.src, want[m].src);
    assert_int_equal(h.dst, want[m].dst);
    assert_int_equal(h.dir, want[m].dir);
    assert_int_equal(h.payload, want[m].n);
    /* the payload is borrowed from the buffer, right after the header */
    offset += MESSAGE_HEADER_BYTES;
    assert_ptr_equal(payload, buffer_data(buf) + offset);
    for (uint64_t i = 0; i < want[m].n; ++i)
      assert_int_equal(payload[i], (uint8_t)(want[m].fill + i));
    offset += want[m].n;
    assert_int_equal(r.pos, offset);
  }
  assert_int_equal(buffer_reader_left(&r), 0);
  /* nothing left: the next read is a truncated header */
  message_header_t h;
  const uint8_t *payload;
  ASSERT_ERR(message_read(&r, &h, &payload, &err), TSR_ERR_CORRUPT,
             "truncated block message header: needs 24 bytes");
  buffer_free(&buf);
}

static void test_append_rejects_impossible_payload(void **state) {
  (void)state;
  tsr_error_t err;
  buffer_t *buf = NULL;
  ASSERT_OK(buffer_create(0, &buf, &err));
  uint8_t *payload = NULL;
  message_header_t h = {.src = 0, .dst = 1, .dir = 0, .payload = UINT64_MAX};
  ASSERT_ERR(message_append(buf, &h, &payload, &err), TSR_ERR_INVALID,
             "block message payload of 18446744073709551615 bytes is too large");
  assert_int_equal(buffer_size(buf), 0);
  buffer_free(&buf);
}

/* A buffer with two messages: 0 -> 3 (10 bytes), then 1 -> 4 (6 bytes). */
static buffer_t *two_messages(void) {
  tsr_error_t err;
  buffer_t *buf = NULL;
  ASSERT_OK(buffer_create(64, &buf, &err));
  append(buf, 0, 3, 2, 10, 1);
  append(buf, 1, 4, 2, 6, 50);
  return buf;
}

static void test_read_truncated_header(void **state) {
  (void)state;
  tsr_error_t err;
  buffer_t *buf = two_messages();
  message_header_t h;
  const uint8_t *payload = NULL;
  for (size_t n = 0; n < MESSAGE_HEADER_BYTES; ++n) {
    buffer_reader_t r = buffer_reader(buffer_data(buf), n);
    ASSERT_ERR(message_read(&r, &h, &payload, &err), TSR_ERR_CORRUPT,
               "truncated block message header");
    assert_int_equal(r.pos, 0);
  }
  /* the second message's header cut short: the first still reads */
  size_t second = MESSAGE_HEADER_BYTES + 10;
  buffer_reader_t r = buffer_reader(buffer_data(buf), second + 5);
  ASSERT_OK(message_read(&r, &h, &payload, &err));
  ASSERT_ERR(message_read(&r, &h, &payload, &err), TSR_ERR_CORRUPT,
             "truncated block message header: needs 24 bytes at offset 34, only 5 left");
  assert_int_equal(r.pos, second);
  buffer_free(&buf);
}

static void test_read_truncated_payload(void **state) {
  (void)state;
  tsr_error_t err;
  buffer_t *buf = two_messages();
  message_header_t h;
  const uint8_t *payload = NULL;
  /* the header announces 10 bytes, 9 are there */
  buffer_reader_t r = buffer_reader(buffer_data(buf), MESSAGE_HEADER_BYTES + 9);
  ASSERT_ERR(message_read(&r, &h, &payload, &err), TSR_ERR_CORRUPT,
             "block message at offset 0 (BlockID 0 -> 3): header announces 10 payload bytes, "
             "only 9 left in the buffer");
  assert_int_equal(r.pos, 0);

  /* the second message cut by one byte */
  size_t second = MESSAGE_HEADER_BYTES + 10;
  r = buffer_reader(buffer_data(buf), buffer_size(buf) - 1);
  ASSERT_OK(message_read(&r, &h, &payload, &err));
  ASSERT_ERR(message_read(&r, &h, &payload, &err), TSR_ERR_CORRUPT,
             "block message at offset 34 (BlockID 1 -> 4): header announces 6 payload bytes, "
             "only 5 left");
  assert_int_equal(r.pos, second);

  /* a length no buffer can hold */
  uint8_t hdr[MESSAGE_HEADER_BYTES + 4] = {0};
  message_encode_header(hdr, &(message_header_t){.src = 2, .dst = 5, .dir = 1,
                                                 .payload = UINT64_MAX});
  r = buffer_reader(hdr, sizeof hdr);
  ASSERT_ERR(message_read(&r, &h, &payload, &err), TSR_ERR_CORRUPT,
             "header announces 18446744073709551615 payload bytes, only 4 left");
  assert_int_equal(r.pos, 0);
  buffer_free(&buf);
}

static void test_read_bad_magic(void **state) {
  (void)state;
  tsr_error_t err;
  buffer_t *buf = two_messages();
  message_header_t h;
  const uint8_t *payload = NULL;
  buffer_data(buf)[0] = 'U'; /* "USRM" */
  buffer_reader_t r = buffer_reader(buffer_data(buf), buffer_size(buf));
  ASSERT_ERR(message_read(&r, &h, &payload, &err), TSR_ERR_CORRUPT,
             "block message at offset 0: bad magic 0x4d525355 (expected 0x4d525354)");
  assert_int_equal(r.pos, 0);
  buffer_free(&buf);

  /* a payload length 4 short leaves the next read inside the payload */
  buf = two_messages();
  buffer_store_u64(buffer_data(buf) + 16, 6);
  r = buffer_reader(buffer_data(buf), buffer_size(buf));
  ASSERT_OK(message_read(&r, &h, &payload, &err));
  assert_int_equal(h.payload, 6);
  ASSERT_ERR(message_read(&r, &h, &payload, &err), TSR_ERR_CORRUPT,
             "block message at offset 30: bad magic");
  ASSERT_HAS("misaligned after a wrong payload length");
  assert_int_equal(r.pos, 30);
  buffer_free(&buf);
}

/* ---------------------------------------------------------------- routes */

/* Row y = 0 on rank 0, row y = 1 on rank 1. */
static tsr_status assign_rows(const patch_t *patch, int nranks, const void *ctx,
                              int *rank_of_block, tsr_error_t *err) {
  (void)nranks, (void)ctx, (void)err;
  for (int32_t id = 0; id < patch_block_count(patch); ++id)
    rank_of_block[id] = patch_block(patch, id)->grid[1];
  return TSR_OK;
}

/* 3x2x1 blocks; ids 0 1 2 on rank 0 (y = 0), 3 4 5 on rank 1 (y = 1); seen by rank 1. */
static patch_t *route_patch(bool periodic_x, bool periodic_y) {
  tsr_error_t err;
  patch_options_t o = patch_options_default();
  o.cells[0] = 6, o.cells[1] = 4, o.cells[2] = 2;
  o.blocks[0] = 3, o.blocks[1] = 2, o.blocks[2] = 1;
  o.periodic[0] = periodic_x, o.periodic[1] = periodic_y;
  patch_layout_t layout = {.nranks = 2, .my_rank = 1, .assign = assign_rows};
  patch_t *p = NULL;
  ASSERT_OK(patch_create(&o, &layout, &p, &err));
  for (int32_t id = 0; id < 6; ++id) assert_int_equal(patch_block(p, id)->rank, id / 3);
  return p;
}

static tsr_status route(const patch_t *p, uint32_t src, uint32_t dst, uint32_t dir, int from,
                        tsr_error_t *err) {
  message_header_t h = {.src = src, .dst = dst, .dir = dir, .payload = 0};
  return message_check_route(&h, p, from, err);
}

static void test_route_accepts_valid_messages(void **state) {
  (void)state;
  tsr_error_t err;
  patch_t *p = route_patch(false, false);
  ASSERT_OK(route(p, 0, 3, (uint32_t)dir_of(0, 1, 0), 0, &err));
  ASSERT_OK(route(p, 1, 3, (uint32_t)dir_of(-1, 1, 0), 0, &err));
  ASSERT_OK(route(p, 1, 5, (uint32_t)dir_of(1, 1, 0), 0, &err));
  ASSERT_OK(route(p, 2, 5, (uint32_t)dir_of(0, 1, 0), 0, &err));
  ASSERT_OK(route(p, 4, 3, (uint32_t)dir_of(-1, 0, 0), 1, &err)); /* within rank 1 */
  patch_free(&p);
}

static void test_route_unknown_blocks(void **state) {
  (void)state;
  tsr_error_t err;
  patch_t *p = route_patch(false, false);
  ASSERT_ERR(route(p, 6, 3, 2, 0, &err), TSR_ERR_CORRUPT,
             "block message from rank 0 names sending BlockID 6; the patch has BlockIDs 0..5");
  ASSERT_ERR(route(p, UINT32_MAX, 3, 2, 0, &err), TSR_ERR_CORRUPT,
             "sending BlockID 4294967295");
  ASSERT_ERR(route(p, 0, 99, 2, 0, &err), TSR_ERR_CORRUPT,
             "block message from rank 0 names receiving BlockID 99; the patch has BlockIDs 0..5");
  ASSERT_ERR(route(p, 0, 0x80000000u, 2, 0, &err), TSR_ERR_CORRUPT,
             "receiving BlockID 2147483648");
  patch_free(&p);
}

static void test_route_bad_direction(void **state) {
  (void)state;
  tsr_error_t err;
  patch_t *p = route_patch(false, false);
  ASSERT_ERR(route(p, 0, 3, 26, 0, &err), TSR_ERR_CORRUPT,
             "block message 0 -> 3 from rank 0 has direction 26; allowed are 0..25");
  ASSERT_ERR(route(p, 0, 3, UINT32_MAX, 0, &err), TSR_ERR_CORRUPT,
             "has direction 4294967295; allowed are 0..25");
  patch_free(&p);
}

static void test_route_wrong_ranks(void **state) {
  (void)state;
  tsr_error_t err;
  patch_t *p = route_patch(false, false);
  /* block 0 lives on rank 0, yet the message came from rank 1 */
  ASSERT_ERR(route(p, 0, 3, (uint32_t)dir_of(0, 1, 0), 1, &err), TSR_ERR_CORRUPT,
             "block message 0 -> 3 arrived from rank 1, but BlockID 0 lives on rank 0");
  /* block 0 is not on this process (rank 1) */
  ASSERT_ERR(route(p, 3, 0, (uint32_t)dir_of(0, -1, 0), 1, &err), TSR_ERR_CORRUPT,
             "block message 3 -> 0 arrived on rank 1, but BlockID 0 lives on rank 0");
  patch_free(&p);
}

static void test_route_direction_does_not_fit(void **state) {
  (void)state;
  tsr_error_t err;
  patch_t *p = route_patch(false, false);
  /* the neighbour of 0 in +x is 1, not 3 */
  ASSERT_ERR(route(p, 0, 3, (uint32_t)dir_of(1, 0, 0), 0, &err), TSR_ERR_CORRUPT,
             "block message 0 -> 3 in direction +x does not fit: the neighbour of BlockID 0 in "
             "that direction is BlockID 1");
  /* the inverse direction: 3 is 0's +y neighbour, not its -y one */
  ASSERT_ERR(route(p, 0, 3, (uint32_t)dir_of(0, -1, 0), 0, &err), TSR_ERR_CORRUPT,
             "block message 0 -> 3 in direction -y does not fit: BlockID 0 has no neighbour in "
             "that direction (the domain ends there)");
  /* beyond the domain edge along x */
  ASSERT_ERR(route(p, 0, 5, (uint32_t)dir_of(-1, 1, 0), 0, &err), TSR_ERR_CORRUPT,
             "in direction -x+y does not fit: BlockID 0 has no neighbour");
  ASSERT_ERR(route(p, 2, 3, (uint32_t)dir_of(1, 1, 0), 0, &err), TSR_ERR_CORRUPT,
             "(the domain ends there)");
  /* z has one block and is not periodic: every z direction ends the domain */
  ASSERT_ERR(route(p, 0, 3, (uint32_t)dir_of(0, 1, 1), 0, &err), TSR_ERR_CORRUPT,
             "in direction +y+z does not fit");
  /* a far block that is no neighbour at all */
  ASSERT_ERR(route(p, 0, 5, (uint32_t)dir_of(1, 1, 0), 0, &err), TSR_ERR_CORRUPT,
             "the neighbour of BlockID 0 in that direction is BlockID 4");
  patch_free(&p);
}

static void test_route_periodic_wrap(void **state) {
  (void)state;
  tsr_error_t err;
  patch_t *p = route_patch(true, true);
  /* across the y wrap: 0 in -y is 3; across the x wrap: 0 in -x+y is 5 */
  ASSERT_OK(route(p, 0, 3, (uint32_t)dir_of(0, -1, 0), 0, &err));
  ASSERT_OK(route(p, 0, 5, (uint32_t)dir_of(-1, 1, 0), 0, &err));
  ASSERT_OK(route(p, 2, 3, (uint32_t)dir_of(1, 1, 0), 0, &err));
  ASSERT_OK(route(p, 2, 3, (uint32_t)dir_of(1, -1, 0), 0, &err));
  /* still checked: 0 in -x is 2, which lives on rank 0 */
  ASSERT_ERR(route(p, 0, 3, (uint32_t)dir_of(-1, 0, 0), 0, &err), TSR_ERR_CORRUPT,
             "the neighbour of BlockID 0 in that direction is BlockID 2");
  patch_free(&p);
}

static void test_check_payload(void **state) {
  (void)state;
  tsr_error_t err;
  message_header_t h = {.src = 1, .dst = 4, .dir = 2, .payload = 10};
  ASSERT_OK(message_check_payload(&h, 10, &err));
  ASSERT_ERR(message_check_payload(&h, 12, &err), TSR_ERR_CORRUPT,
             "block message 1 -> 4 in direction +y carries 10 payload bytes; the block metadata "
             "gives 12");
  h.payload = 0;
  ASSERT_ERR(message_check_payload(&h, 1, &err), TSR_ERR_CORRUPT, "carries 0 payload bytes");
  h.payload = UINT64_MAX;
  h.dir = 99; /* the name of an impossible direction is "?" */
  ASSERT_ERR(message_check_payload(&h, 0, &err), TSR_ERR_CORRUPT, "in direction ? carries");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_header_layout),
      cmocka_unit_test(test_append_read_round_trip),
      cmocka_unit_test(test_append_rejects_impossible_payload),
      cmocka_unit_test(test_read_truncated_header),
      cmocka_unit_test(test_read_truncated_payload),
      cmocka_unit_test(test_read_bad_magic),
      cmocka_unit_test(test_route_accepts_valid_messages),
      cmocka_unit_test(test_route_unknown_blocks),
      cmocka_unit_test(test_route_bad_direction),
      cmocka_unit_test(test_route_wrong_ranks),
      cmocka_unit_test(test_route_direction_does_not_fit),
      cmocka_unit_test(test_route_periodic_wrap),
      cmocka_unit_test(test_check_payload),
  };
  return cmocka_run_group_tests_name("message", tests, NULL, NULL);
}
