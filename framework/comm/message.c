#include "message.h"

#include "direction.h"

void message_encode_header(uint8_t *p, const message_header_t *h) {
  buffer_store_u32(p, MESSAGE_MAGIC);
  buffer_store_u32(p + 4, h->src);
  buffer_store_u32(p + 8, h->dst);
  buffer_store_u32(p + 12, (h->dir & 0xffffu) | (h->field & 0xffffu) << 16);
  buffer_store_u64(p + 16, h->payload);
}

tsr_status message_append(buffer_t *buf, const message_header_t *h, uint8_t **payload,
                          tsr_error_t *err) {
  tsr_status st = TSR_OK;
  uint8_t *at = NULL;
  TSR_CHECK(h->payload <= SIZE_MAX - MESSAGE_HEADER_BYTES, TSR_ERR_INVALID,
            "block message payload of %llu bytes is too large", (unsigned long long)h->payload);
  TSR_TRY(buffer_reserve(buf, MESSAGE_HEADER_BYTES + (size_t)h->payload, &at, err));
  message_encode_header(at, h);
  *payload = at + MESSAGE_HEADER_BYTES;
cleanup:
  return st;
}

tsr_status message_read(buffer_reader_t *r, message_header_t *h, const uint8_t **payload,
                        tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t start = r->pos;
  const uint8_t *p = NULL;
  TSR_TRY(buffer_get_bytes(r, "block message header", MESSAGE_HEADER_BYTES, &p, err));
  uint32_t magic = buffer_load_u32(p);
  TSR_CHECK(magic == MESSAGE_MAGIC, TSR_ERR_CORRUPT,
            "block message at offset %zu: bad magic 0x%08x (expected 0x%08x): not a block "
            "message or misaligned after a wrong payload length",
            start, (unsigned)magic, (unsigned)MESSAGE_MAGIC);
  h->src = buffer_load_u32(p + 4);
  h->dst = buffer_load_u32(p + 8);
  uint32_t dir_field = buffer_load_u32(p + 12);
  h->dir = dir_field & 0xffffu;
  h->field = dir_field >> 16;
  h->payload = buffer_load_u64(p + 16);
  TSR_CHECK(h->payload <= buffer_reader_left(r), TSR_ERR_CORRUPT,
            "block message at offset %zu (BlockID %u -> %u): header announces %llu payload "
            "bytes, only %zu left in the buffer",
            start, (unsigned)h->src, (unsigned)h->dst, (unsigned long long)h->payload,
            buffer_reader_left(r));
  TSR_TRY(buffer_get_bytes(r, "block message payload", (size_t)h->payload, payload, err));
cleanup:
  if (st != TSR_OK) r->pos = start;
  return st;
}

tsr_status message_check_route(const message_header_t *h, const patch_t *patch, int from_rank,
                               tsr_error_t *err) {
  tsr_status st = TSR_OK;
  uint32_t n = (uint32_t)patch_block_count(patch);
  TSR_CHECK(h->src < n, TSR_ERR_CORRUPT,
            "block message from rank %d names sending BlockID %u; the patch has BlockIDs "
            "0..%u", from_rank, (unsigned)h->src, (unsigned)(n - 1));
  TSR_CHECK(h->dst < n, TSR_ERR_CORRUPT,
            "block message from rank %d names receiving BlockID %u; the patch has BlockIDs "
            "0..%u", from_rank, (unsigned)h->dst, (unsigned)(n - 1));
  TSR_CHECK(h->dir < DIRECTION_COUNT, TSR_ERR_CORRUPT,
            "block message %u -> %u from rank %d has direction %u; allowed are 0..%d",
            (unsigned)h->src, (unsigned)h->dst, from_rank, (unsigned)h->dir, DIRECTION_COUNT - 1);
  const block_info_t *s = patch_block(patch, (int32_t)h->src);
  const block_info_t *d = patch_block(patch, (int32_t)h->dst);
  TSR_CHECK(s->rank == from_rank, TSR_ERR_CORRUPT,
            "block message %u -> %u arrived from rank %d, but BlockID %u lives on rank %d",
            (unsigned)h->src, (unsigned)h->dst, from_rank, (unsigned)h->src, s->rank);
  TSR_CHECK(d->rank == patch_my_rank(patch), TSR_ERR_CORRUPT,
            "block message %u -> %u arrived on rank %d, but BlockID %u lives on rank %d",
            (unsigned)h->src, (unsigned)h->dst, patch_my_rank(patch), (unsigned)h->dst, d->rank);
  int32_t nb = patch_neighbor(patch, (int32_t)h->src, (int)h->dir);
  TSR_CHECK(nb >= 0, TSR_ERR_CORRUPT,
            "block message %u -> %u in direction %s does not fit: BlockID %u has no neighbour "
            "in that direction (the domain ends there)",
            (unsigned)h->src, (unsigned)h->dst, direction_name((int)h->dir), (unsigned)h->src);
  TSR_CHECK(nb == (int32_t)h->dst, TSR_ERR_CORRUPT,
            "block message %u -> %u in direction %s does not fit: the neighbour of BlockID %u "
            "in that direction is BlockID %d",
            (unsigned)h->src, (unsigned)h->dst, direction_name((int)h->dir), (unsigned)h->src,
            (int)nb);
cleanup:
  return st;
}

tsr_status message_check_payload(const message_header_t *h, uint64_t expected, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(h->payload == expected, TSR_ERR_CORRUPT,
            "block message %u -> %u in direction %s carries %llu payload bytes; the block "
            "metadata gives %llu",
            (unsigned)h->src, (unsigned)h->dst, direction_name((int)h->dir),
            (unsigned long long)h->payload, (unsigned long long)expected);
cleanup:
  return st;
}
