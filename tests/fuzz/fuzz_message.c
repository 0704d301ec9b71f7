/* fuzz_message: decodes a received buffer of block messages the way comm_unpack does
 * (message_read, message_check_route, message_check_payload, until the buffer is used
 * up or a check fails) on a small patch described by the first input bytes.
 *
 * Input layout:
 *   byte 0: bits 0-1, 2-3, 4-5: blocks[x,y,z] - 1 (1..4 each);
 *           bit 6, bit 7: periodic x, periodic y
 *   byte 1: bit 0: periodic z; bits 1-2: nranks - 1; bits 3-4: my_rank (mod nranks);
 *           bits 5-7: the sending rank (mod nranks)
 *   byte 2: bits 0-1, 2-3, 4-5: cells per block along x, y, z - 1 (1..4);
 *           bit 6: one cell fewer than blocks*(cells per block) along each axis with
 *           more than one block (uneven splits); bit 7: 19 instead of 5 values per cell
 *   rest:   the received buffer (24-byte headers, see message.h, and payloads)
 * The expected payload is direction_slice_cells(sender size, width 1, dir) * values * 8 bytes.
 *
 * Errors are expected; crashes, undefined behaviour, leaks, a moved cursor after a
 * failed read, or an error without a message are not. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "direction.h"
#include "message.h"
#include "patch.h"
#include "tsr_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FUZZ_PARAM_BYTES = 3 };

/* Stops the run where an invariant of the decoder breaks (asserts may be compiled out). */
static void fuzz_require(int cond) {
  if (!cond) abort();
}

/* A failed call must leave its code and a NUL-terminated, non-empty message. */
static void fuzz_check_error(tsr_status st, const tsr_error_t *err) {
  fuzz_require(st != TSR_OK && err->code == st);
  size_t n = strlen(err->text);
  fuzz_require(n > 0 && n < sizeof err->text);
}

static void fuzz_patch_options(const uint8_t *p, patch_options_t *opts, patch_layout_t *layout,
                               int *from_rank, uint64_t *values) {
  *opts = patch_options_default();
  for (int a = 0; a < 3; ++a) {
    opts->blocks[a] = 1 + ((p[0] >> (2 * a)) & 3);
    int per_block = 1 + ((p[2] >> (2 * a)) & 3);
    opts->cells[a] = (int64_t)opts->blocks[a] * per_block;
    if ((p[2] & 0x40) && opts->blocks[a] > 1 && opts->cells[a] > opts->blocks[a])
      opts->cells[a] -= 1;
  }
  opts->periodic[0] = (p[0] >> 6) & 1;
  opts->periodic[1] = (p[0] >> 7) & 1;
  opts->periodic[2] = p[1] & 1;
  *layout = (patch_layout_t){.nranks = 1 + ((p[1] >> 1) & 3)};
  layout->my_rank = ((p[1] >> 3) & 3) % layout->nranks;
  *from_rank = ((p[1] >> 5) & 7) % layout->nranks;
  *values = (p[2] & 0x80) ? 19 : 5;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < FUZZ_PARAM_BYTES) return 0;
  patch_options_t opts;
  patch_layout_t layout;
  int from_rank;
  uint64_t values;
  fuzz_patch_options(data, &opts, &layout, &from_rank, &values);

  tsr_error_t err;
  tsr_error_clear(&err);
  patch_t *patch = NULL;
  tsr_status st = patch_create(&opts, &layout, &patch, &err);
  fuzz_require(st == TSR_OK && patch); /* the parameters above are always valid */

  buffer_reader_t r = buffer_reader(data + FUZZ_PARAM_BYTES, size - FUZZ_PARAM_BYTES);
  while (buffer_reader_left(&r) > 0) {
    size_t before = r.pos;
    message_header_t h;
    const uint8_t *payload = NULL;
    tsr_error_clear(&err);
    st = message_read(&r, &h, &payload, &err);
    if (st != TSR_OK) {
      fuzz_check_error(st, &err);
      fuzz_require(r.pos == before);
      break;
    }
    fuzz_require(r.pos == before + MESSAGE_HEADER_BYTES + h.payload);
    fuzz_require(payload == r.data + before + MESSAGE_HEADER_BYTES);

    st = message_check_route(&h, patch, from_rank, &err);
    if (st != TSR_OK) {
      fuzz_check_error(st, &err);
      break;
    }
    /* a routed message names existing blocks, one on each side, that are neighbours */
    const block_info_t *src = patch_block(patch, (int32_t)h.src);
    const block_info_t *dst = patch_block(patch, (int32_t)h.dst);
    fuzz_require(src && dst && h.dir < DIRECTION_COUNT);
    fuzz_require(src->rank == from_rank && dst->rank == patch_my_rank(patch));
    fuzz_require(patch_neighbor(patch, (int32_t)h.src, (int)h.dir) == (int32_t)h.dst);
    fuzz_require(patch_block_data(patch, (int32_t)h.dst) != NULL);

    int64_t cells = direction_slice_cells(src->size, direction_width_one, (int)h.dir);
    fuzz_require(cells >= 1);
    uint64_t expected = (uint64_t)cells * values * sizeof(double);
    st = message_check_payload(&h, expected, &err);
    if (st != TSR_OK) {
      fuzz_check_error(st, &err);
      break;
    }
    /* what an insertion function would read: every payload byte lies inside the input */
    uint8_t sum = 0;
    for (uint64_t i = 0; i < h.payload; ++i) sum = (uint8_t)(sum + payload[i]);
    volatile uint8_t sink = sum;
    (void)sink;
  }
  patch_free(&patch);
  fuzz_require(patch == NULL);
  return 0;
}
