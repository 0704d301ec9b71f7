/* bulk_file: large sequential transfers between memory and ranges of a file, through an
 * aligned buffer and O_DIRECT where the file system takes it, so that gigabytes of a
 * checkpoint neither pass through nor evict the page cache (on a host where fresh page-cache
 * pages are expensive, a buffered write of 2.5 GB took 3-5x the disk's time; direct, the
 * disk's time). Where O_DIRECT is refused (tmpfs, some network file systems), the same
 * calls go through the page cache.
 *
 * Writing: a range starts at a multiple of BULK_ALIGN; the caller packs its bytes into the
 * buffer (bulk_write_room, bulk_write_advance); bulk_write_end pads the range with zeros to
 * the next multiple of BULK_ALIGN, so ranges written by different processes never share a
 * page. Reading: any range; bulk_read_take hands out the next bytes, read in aligned pieces
 * (from the page before the range's start; up to the page after its end). */
#ifndef BULK_FILE_H
#define BULK_FILE_H

#include <aio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tsr_error.h"

enum { BULK_ALIGN = 4096 };

typedef struct bulk_file {
  int fd;
  bool direct;           /* opened with O_DIRECT */
  char path[4096];       /* for messages */
  uint8_t *buf, *spare;  /* BULK_ALIGN-aligned, cap bytes each: the caller's and the one
                            in transfer */
  size_t cap, piece;     /* cap grows from piece (a multiple of BULK_ALIGN) as needed */
  size_t reserve;        /* reading: the bytes in front of a piece read, for the last
                            piece's bytes not taken yet */
  size_t head, fill;     /* buf[head, fill): bytes not yet written (head 0) or not yet taken */
  uint64_t pos, end;     /* file offset of buf[0]; reading: the range's end */
  /* the transfer in flight (busy) or last done: io_len bytes of io_buf at io_pos */
  struct aiocb cb;
  bool busy, io_write, ahead; /* ahead: a read ahead of buf's bytes was started */
  uint8_t *io_buf;
  size_t io_len, io_done;
  uint64_t io_pos;
} bulk_file_t;

/* Opens path for writing (created if missing, never truncated: the caller sizes it) or
 * reading, with a buffer of about piece bytes. */
TSR_NODISCARD tsr_status bulk_open(bulk_file_t *f, const char *path, bool write, size_t piece,
                                   tsr_error_t *err);
/* The transfer in flight finished (its error, if any). */
TSR_NODISCARD tsr_status bulk_finish(bulk_file_t *f, tsr_error_t *err);
/* bulk_finish, then fsync: the written bytes on disk. */
TSR_NODISCARD tsr_status bulk_sync(bulk_file_t *f, tsr_error_t *err);
/* Closes, after the transfer in flight (f as bulk_open left it, or {.fd = -1}). */
void bulk_close(bulk_file_t *f);

/* Writing a range from offset (a multiple of BULK_ALIGN). */
void bulk_write_begin(bulk_file_t *f, uint64_t offset);
/* At least need bytes of room at *at (*room the whole room), writing out what came before. */
TSR_NODISCARD tsr_status bulk_write_room(bulk_file_t *f, size_t need, uint8_t **at, size_t *room,
                                         tsr_error_t *err);
void bulk_write_advance(bulk_file_t *f, size_t n);
/* Copies n bytes in (bulk_write_room and bulk_write_advance in one). */
TSR_NODISCARD tsr_status bulk_write(bulk_file_t *f, const void *p, size_t n, tsr_error_t *err);
/* Writes the rest of the range, padded with zeros to a multiple of BULK_ALIGN. */
TSR_NODISCARD tsr_status bulk_write_end(bulk_file_t *f, tsr_error_t *err);

/* Reading bytes bytes from offset. */
void bulk_read_begin(bulk_file_t *f, uint64_t offset, uint64_t bytes);
/* At least need bytes (at most what is left of the range) at *at, *avail of them there;
 * a message naming the file if it ends first. */
TSR_NODISCARD tsr_status bulk_read_take(bulk_file_t *f, size_t need, const uint8_t **at,
                                        size_t *avail, tsr_error_t *err);
void bulk_read_advance(bulk_file_t *f, size_t n);

#endif
