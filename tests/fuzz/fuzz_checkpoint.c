/* fuzz_checkpoint: decodes a checkpoint's header the way a restart does
 * (checkpoint_header_length on the first bytes, then checkpoint_header_decode on the
 * whole input as the file, its length as the file's size).
 *
 * Errors are expected; crashes, undefined behaviour, leaks, an error without a message,
 * or a header accepted whose blocks and extras do not tile the file from the data
 * offset to its end (version 2: each block from a multiple of 4096, the extras from the
 * one after the last block) are not. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "tsr_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tsr_error_t err;
  uint64_t bytes = 0;
  tsr_error_clear(&err);
  if (checkpoint_header_length(data, size, "fuzz.tsrc", &bytes, &err) != TSR_OK) {
    if (!err.text[0]) abort();
    return 0;
  }
  checkpoint_header_t h;
  tsr_error_clear(&err);
  if (checkpoint_header_decode(data, size, size, "fuzz.tsrc", &h, &err) != TSR_OK) {
    if (!err.text[0] || h.block) abort();
    return 0;
  }
  /* accepted: the records tile [data offset, size) */
  uint64_t at = h.data_offset;
  for (uint32_t i = 0; i < h.nblocks; ++i) {
    if (h.block[i].offset != at) abort();
    at += h.block[i].bytes;
    if (h.version >= 2) at = checkpoint_aligned(at);
  }
  for (uint32_t i = 0; i < h.nextras; ++i) {
    if (h.extras[i].offset != at || !memchr(h.extras[i].name, 0, sizeof h.extras[i].name))
      abort();
    at += h.extras[i].bytes;
  }
  if (at != size || h.header_bytes > size) abort();
  checkpoint_header_free(&h);
  return 0;
}
