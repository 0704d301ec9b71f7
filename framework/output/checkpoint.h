/* checkpoint: the file format of a run's checkpoints (docs/checkpoints.md), without the
 * simulation: the header, its encoding and its checks, and the checksum.
 *
 * A checkpoint file is
 *   the header (little-endian throughout):
 *     magic "tessera-ckpt" + 4 NULs   16 bytes
 *     u32 format version (2), u32 byte-order mark 0x01020304
 *     u64 header bytes, u64 data offset (the header rounded up to 4096)
 *     u64 step, u64 configuration hash (config_hash: the physics-relevant settings)
 *     i64 cells[3], i32 blocks[3], u8 periodic[3], u8 0
 *     char modules[256] (the modules and their fs, for messages)
 *     u32 field count F, u32 block count B, u32 extra count E, u32 0
 *     F x { char name[64], u32 components, u32 value bytes }
 *     B x { i32 BlockID, u32 CRC-32C of its bytes, u64 offset, u64 bytes }   (BlockID order)
 *     E x { char name[64], u32 CRC-32C, u32 0, u64 offset, u64 bytes }      (run state:
 *         the VTK steps written, series.csv and the probes' series so far)
 *     u32 CRC-32C of the header before it, u32 0
 *   then, from the data offset, every block's fields in field order (each the interior in
 *   cell order, x fastest, a cell's components in order: field_rows_to_bytes), each block
 *   starting at a multiple of 4096 (zeros between), then the extras back to back from the
 *   multiple of 4096 after the last block. Version 1 had no gaps (blocks and extras back to
 *   back from the data offset); it is still read.
 * A block holds none of a field it is hollow for (a solid block: no populations). */
#ifndef CHECKPOINT_H
#define CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tsr_error.h"

enum {
  CHECKPOINT_VERSION = 2,
  CHECKPOINT_NAME_MAX = 64,
  CHECKPOINT_MODULES_MAX = 256,
  CHECKPOINT_MAX_FIELDS = 64,
  CHECKPOINT_MAX_EXTRAS = 32,
  CHECKPOINT_FIXED_BYTES = 368,  /* the header up to the field records */
  CHECKPOINT_FIELD_BYTES = 72,
  CHECKPOINT_BLOCK_BYTES = 24,
  CHECKPOINT_EXTRA_BYTES = 88,
  CHECKPOINT_ALIGN = 4096
};

typedef struct checkpoint_field {
  char name[CHECKPOINT_NAME_MAX];
  uint32_t components, value_bytes;
} checkpoint_field_t;

typedef struct checkpoint_block {
  int32_t id;
  uint32_t crc;
  uint64_t offset, bytes;
} checkpoint_block_t;

typedef struct checkpoint_extra {
  char name[CHECKPOINT_NAME_MAX];
  uint32_t crc;
  uint64_t offset, bytes;
} checkpoint_extra_t;

typedef struct checkpoint_header {
  uint32_t version;
  uint64_t header_bytes, data_offset;
  uint64_t step, config_hash;
  int64_t cells[3];
  int32_t blocks[3];
  bool periodic[3];
  char modules[CHECKPOINT_MODULES_MAX];
  uint32_t nfields, nblocks, nextras;
  checkpoint_field_t fields[CHECKPOINT_MAX_FIELDS];
  checkpoint_block_t *block; /* nblocks, owned (checkpoint_header_free) */
  checkpoint_extra_t extras[CHECKPOINT_MAX_EXTRAS];
} checkpoint_header_t;

/* CRC-32C (Castagnoli, as iSCSI and ext4 use) of n bytes, continuing from crc (0 to
 * start): checkpoint_crc32(checkpoint_crc32(0, a), b) is the CRC of a then b. */
uint32_t checkpoint_crc32(uint32_t crc, const void *data, size_t n);
/* The CRC of a then b from crc1 = CRC(a), crc2 = CRC(b) and b's length, so that the pieces
 * of a buffer can be summed in parallel. */
uint32_t checkpoint_crc32_combine(uint32_t crc1, uint32_t crc2, uint64_t len2);

/* Bytes of the header of F fields, B blocks and E extras, and the data offset after it. */
uint64_t checkpoint_header_size(uint32_t nfields, uint32_t nblocks, uint32_t nextras);
uint64_t checkpoint_data_offset(uint64_t header_bytes);
/* n rounded up to a multiple of CHECKPOINT_ALIGN. */
uint64_t checkpoint_aligned(uint64_t n);

/* Encodes h (its header_bytes as checkpoint_header_size says) into out[h->header_bytes]. */
void checkpoint_header_encode(const checkpoint_header_t *h, uint8_t *out);

/* The header bytes a file starting with first[len >= 32] announces (0: not a checkpoint
 * of this format, with the message naming path). */
TSR_NODISCARD tsr_status checkpoint_header_length(const uint8_t *first, size_t len,
                                                  const char *path, uint64_t *bytes,
                                                  tsr_error_t *err);

/* Decodes and checks a header (magic, version, byte order, sizes, checksum, BlockIDs in
 * order, offsets inside file_bytes without overlap) into *h; every fault one
 * TSR_ERR_CORRUPT message naming path and what is wrong. */
TSR_NODISCARD tsr_status checkpoint_header_decode(const uint8_t *in, size_t len,
                                                  uint64_t file_bytes, const char *path,
                                                  checkpoint_header_t *h, tsr_error_t *err);

void checkpoint_header_free(checkpoint_header_t *h);

#endif
