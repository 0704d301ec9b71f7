/* message: block messages, the unit of ghost-layer traffic between processes.
 *
 * Wire layout, little-endian, MESSAGE_HEADER_BYTES of header then the payload:
 *   u32 magic ("TSRM"), u32 sending BlockID, u32 receiving BlockID,
 *   u16 direction (0..25, the direction from sender to receiver; see direction.h),
 *   u16 field (its place in the exchange that carries several fields in one round),
 *   u64 payload bytes.
 * Messages for one process are concatenated into one buffer. The payload is packed by
 * the sender's extraction function in direction d and unpacked by the receiver's
 * insertion function into its ghost layer on side -d. */
#ifndef MESSAGE_H
#define MESSAGE_H

#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "patch.h"
#include "tsr_error.h"

enum { MESSAGE_HEADER_BYTES = 24 };
#define MESSAGE_MAGIC UINT32_C(0x4d525354) /* "TSRM" read as little-endian bytes */

typedef struct message_header {
  uint32_t src;     /* sending BlockID */
  uint32_t dst;     /* receiving BlockID */
  uint32_t dir;     /* direction from sender to receiver (below 2^16) */
  uint32_t field;   /* field of the exchange (below 2^16) */
  uint64_t payload; /* payload bytes */
} message_header_t;

/* Writes the header into p (MESSAGE_HEADER_BYTES bytes). */
void message_encode_header(uint8_t *p, const message_header_t *h);

/* Appends a header and room for its payload to buf; *payload points at that room
 * (valid until buf grows again). */
TSR_NODISCARD tsr_status message_append(buffer_t *buf, const message_header_t *h,
                                        uint8_t **payload, tsr_error_t *err);

/* Reads the next message at the cursor: fails on a truncated header, a wrong magic, or
 * a payload length beyond the bytes left. *payload borrows from the reader's bytes. */
TSR_NODISCARD tsr_status message_read(buffer_reader_t *r, message_header_t *h,
                                      const uint8_t **payload, tsr_error_t *err);

/* Checks a decoded header against the patch as seen by the receiving process: both
 * BlockIDs exist, the sender lives on from_rank, the receiver on this process, the
 * direction is in 0..25 and the receiver is the sender's neighbour in that direction. */
TSR_NODISCARD tsr_status message_check_route(const message_header_t *h, const patch_t *patch,
                                             int from_rank, tsr_error_t *err);

/* Checks the header's payload length against the size known from block metadata. */
TSR_NODISCARD tsr_status message_check_payload(const message_header_t *h, uint64_t expected,
                                               tsr_error_t *err);

#endif
