/* bulk_file.h: aligned, direct transfers of large file ranges, each piece's transfer
 * running (POSIX AIO) while the caller packs the next piece or unpacks the last. */
#define _GNU_SOURCE /* O_DIRECT */

#include "bulk_file.h"

#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t bulk_up(uint64_t n) { return (n + BULK_ALIGN - 1) / BULK_ALIGN * BULK_ALIGN; }

/* A file system that opened the file with O_DIRECT but refuses a direct transfer: the
 * rest goes through the page cache. */
static bool bulk_drop_direct(bulk_file_t *f) {
  int flags = fcntl(f->fd, F_GETFL);
  if (!f->direct || flags < 0 || fcntl(f->fd, F_SETFL, flags & ~O_DIRECT) != 0) return false;
  f->direct = false;
  return true;
}

/* The transfer of io_len bytes of io_buf at io_pos from its io_done-th byte on, waiting:
 * writes whole, reads up to the end of the file. */
static tsr_status bulk_io_now(bulk_file_t *f, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  while (f->io_done < f->io_len) {
    size_t chunk = f->io_len - f->io_done;
    if (chunk > ((size_t)1 << 30)) chunk = (size_t)1 << 30;
    const off_t at = (off_t)(f->io_pos + f->io_done);
    ssize_t n = f->io_write ? pwrite(f->fd, f->io_buf + f->io_done, chunk, at)
                            : pread(f->fd, f->io_buf + f->io_done, chunk, at);
    if (n < 0 && (errno == EINTR || (errno == EINVAL && bulk_drop_direct(f)))) continue;
    TSR_CHECK(n >= 0 && (n > 0 || !f->io_write), TSR_ERR_IO, "cannot %s %zu bytes at %llu of %s: %s",
              f->io_write ? "write" : "read", chunk, (unsigned long long)at, f->path,
              n < 0 ? strerror(errno) : "nothing written (disk full?)");
    if (n == 0) break; /* a read at the end of the file */
    f->io_done += (size_t)n;
  }
cleanup:
  return st;
}

/* Starts the transfer of len bytes of p at pos; done at once where AIO is refused. */
static tsr_status bulk_io_start(bulk_file_t *f, uint8_t *p, size_t len, uint64_t pos, bool write,
                                tsr_error_t *err) {
  f->io_buf = p;
  f->io_len = len;
  f->io_pos = pos;
  f->io_write = write;
  f->io_done = 0;
  memset(&f->cb, 0, sizeof f->cb);
  f->cb.aio_fildes = f->fd;
  f->cb.aio_buf = p;
  f->cb.aio_nbytes = len;
  f->cb.aio_offset = (off_t)pos;
  f->cb.aio_sigevent.sigev_notify = SIGEV_NONE;
  f->busy = (write ? aio_write(&f->cb) : aio_read(&f->cb)) == 0;
  return f->busy ? TSR_OK : bulk_io_now(f, err);
}

/* The transfer in flight, finished (what AIO left of it done here); its bytes io_done. */
static tsr_status bulk_io_wait(bulk_file_t *f, tsr_error_t *err) {
  if (!f->busy) return TSR_OK;
  const struct aiocb *list[1] = {&f->cb};
  while (aio_error(&f->cb) == EINPROGRESS) aio_suspend(list, 1, NULL);
  int e = aio_error(&f->cb);
  ssize_t n = aio_return(&f->cb);
  f->busy = false;
  if (e == 0 && n > 0) f->io_done = (size_t)n;
  if (e == EINVAL) bulk_drop_direct(f);
  /* a short transfer, an interrupted or a refused one: the rest here, with its message */
  return (e == 0 && n == 0 && !f->io_write) ? TSR_OK : bulk_io_now(f, err);
}

/* Both buffers at cap bytes or more (the transfer in flight finished first), buf's bytes
 * [0, fill) kept. */
static tsr_status bulk_grow(bulk_file_t *f, size_t cap, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  void *a = NULL, *b = NULL;
  cap = (size_t)bulk_up(cap);
  if (cap <= f->cap) goto cleanup;
  TSR_TRY(bulk_io_wait(f, err));
  if (posix_memalign(&a, BULK_ALIGN, cap) != 0 || posix_memalign(&b, BULK_ALIGN, cap) != 0) {
    free(a);
    TSR_FAIL(TSR_ERR_NOMEM, "out of memory for two transfer buffers of %zu bytes for %s", cap,
             f->path);
  }
  if (f->fill) memcpy(a, f->buf, f->fill);
  free(f->buf);
  free(f->spare);
  f->buf = a;
  f->spare = b;
  f->cap = cap;
  f->ahead = false;
cleanup:
  return st;
}

tsr_status bulk_open(bulk_file_t *f, const char *path, bool write, size_t piece,
                     tsr_error_t *err) {
  tsr_status st = TSR_OK;
  memset(f, 0, sizeof *f);
  snprintf(f->path, sizeof f->path, "%s", path);
  const int flags = write ? O_WRONLY | O_CREAT | O_CLOEXEC : O_RDONLY | O_CLOEXEC;
  f->fd = open(path, flags | O_DIRECT, 0644);
  f->direct = f->fd >= 0;
  if (f->fd < 0 && errno == EINVAL) f->fd = open(path, flags, 0644);
  TSR_CHECK(f->fd >= 0, TSR_ERR_IO, "cannot %s %s: %s", write ? "create" : "read", path,
            strerror(errno));
  f->piece = (size_t)bulk_up(piece ? piece : BULK_ALIGN);
  f->reserve = BULK_ALIGN;
  TSR_TRY(bulk_grow(f, write ? f->piece : f->reserve + f->piece, err));
cleanup:
  return st;
}

tsr_status bulk_finish(bulk_file_t *f, tsr_error_t *err) { return bulk_io_wait(f, err); }

tsr_status bulk_sync(bulk_file_t *f, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(bulk_io_wait(f, err));
  TSR_CHECK(fsync(f->fd) == 0 || errno == EINVAL, TSR_ERR_IO, "cannot sync %s: %s", f->path,
            strerror(errno));
cleanup:
  return st;
}

void bulk_close(bulk_file_t *f) {
  tsr_error_t ignored;
  if (f->busy && bulk_io_wait(f, &ignored) != TSR_OK) { /* the caller has its error */ }
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
  free(f->buf);
  free(f->spare);
  f->buf = f->spare = NULL;
  f->cap = f->fill = f->head = 0;
}

void bulk_write_begin(bulk_file_t *f, uint64_t offset) {
  f->pos = offset;
  f->head = f->fill = 0;
}

/* buf's first n bytes (a multiple of BULK_ALIGN; the end's padding may pass fill) on
 * their way to the file; the bytes after them move to the front of the other buffer,
 * which buf becomes. */
static tsr_status bulk_write_out(bulk_file_t *f, size_t n, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(bulk_io_wait(f, err)); /* the other buffer is free */
  uint8_t *out = f->buf;
  const size_t rest = f->fill > n ? f->fill - n : 0;
  memcpy(f->spare, out + n, rest);
  f->buf = f->spare;
  f->spare = out;
  f->fill = rest;
  TSR_TRY(bulk_io_start(f, out, n, f->pos, true, err));
  f->pos += n;
cleanup:
  return st;
}

tsr_status bulk_write_room(bulk_file_t *f, size_t need, uint8_t **at, size_t *room,
                           tsr_error_t *err) {
  tsr_status st = TSR_OK;
  if (f->cap - f->fill < need) {
    const size_t out = f->fill / BULK_ALIGN * BULK_ALIGN; /* whole pages go */
    if (out > 0) TSR_TRY(bulk_write_out(f, out, err));
    if (f->cap - f->fill < need) TSR_TRY(bulk_grow(f, f->fill + need, err));
  }
  *at = f->buf + f->fill;
  *room = f->cap - f->fill;
cleanup:
  return st;
}

void bulk_write_advance(bulk_file_t *f, size_t n) { f->fill += n; }

tsr_status bulk_write(bulk_file_t *f, const void *p, size_t n, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const uint8_t *from = p;
  while (n > 0) {
    uint8_t *at = NULL;
    size_t room = 0;
    TSR_TRY(bulk_write_room(f, n < f->piece ? n : f->piece, &at, &room, err));
    size_t k = n < room ? n : room;
    memcpy(at, from, k);
    bulk_write_advance(f, k);
    from += k;
    n -= k;
  }
cleanup:
  return st;
}

tsr_status bulk_write_end(bulk_file_t *f, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const size_t n = (size_t)bulk_up(f->fill); /* <= cap: cap is a multiple of BULK_ALIGN */
  memset(f->buf + f->fill, 0, n - f->fill);
  if (n > 0) TSR_TRY(bulk_write_out(f, n, err));
cleanup:
  return st;
}

void bulk_read_begin(bulk_file_t *f, uint64_t offset, uint64_t bytes) {
  f->pos = offset / BULK_ALIGN * BULK_ALIGN;
  f->head = (size_t)(offset - f->pos);
  f->fill = 0; /* buf[0, head) is not read: the first take reads from pos */
  f->end = offset + bytes;
}

/* The range's bytes from file offset `from` on, read ahead into the other buffer (after
 * its reserve); nothing past the range's last page. */
static tsr_status bulk_read_ahead(bulk_file_t *f, uint64_t from, tsr_error_t *err) {
  const uint64_t stop = bulk_up(f->end);
  f->ahead = from < stop && from % BULK_ALIGN == 0;
  if (!f->ahead) return TSR_OK;
  size_t len = f->cap - f->reserve;
  if (len > stop - from) len = (size_t)(stop - from);
  return bulk_io_start(f, f->spare + f->reserve, len, from, false, err);
}

tsr_status bulk_read_take(bulk_file_t *f, size_t need, const uint8_t **at, size_t *avail,
                          tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const uint64_t next = f->pos + f->head; /* file offset of the first byte not taken */
  if (need > f->end - next) need = (size_t)(f->end - next);
  while (f->fill < f->head || f->fill - f->head < need) {
    /* what was read from the page of `next` on stays, in front of the next piece */
    const uint64_t page = next / BULK_ALIGN * BULK_ALIGN;
    const size_t from = (size_t)(page - f->pos);
    const size_t kept = f->fill > from ? f->fill - from : 0;
    const uint64_t want = page + kept; /* where the bytes still to read start */
    if (kept + need > f->reserve) { /* a row longer than the reserve: a larger one */
      f->reserve = (size_t)bulk_up(kept + need);
      TSR_TRY(bulk_grow(f, f->reserve + f->piece, err));
    }
    if (!f->ahead || f->io_pos != want) { /* nothing read ahead (or another place) */
      TSR_TRY(bulk_io_wait(f, err));
      TSR_TRY(bulk_read_ahead(f, want, err));
      TSR_CHECK(f->ahead, TSR_ERR_CORRUPT, "%s: truncated: the file ends before byte %llu",
                f->path, (unsigned long long)(next + need));
    }
    TSR_TRY(bulk_io_wait(f, err));
    f->ahead = false;
    TSR_CHECK(f->io_done > 0, TSR_ERR_CORRUPT, "%s: truncated: the file ends before byte %llu",
              f->path, (unsigned long long)(next + need));
    uint8_t *old = f->buf;
    memcpy(f->spare + f->reserve - kept, old + from, kept);
    f->buf = f->spare;
    f->spare = old;
    f->pos = f->io_pos - f->reserve;
    f->head = (size_t)(next - f->pos);
    f->fill = f->reserve + f->io_done;
    TSR_TRY(bulk_read_ahead(f, f->pos + f->fill, err)); /* the next piece comes while this
                                                            one is used */
  }
  *at = f->buf + f->head;
  *avail = f->fill - f->head;
  if (*avail > f->end - next) *avail = (size_t)(f->end - next);
cleanup:
  return st;
}

void bulk_read_advance(bulk_file_t *f, size_t n) { f->head += n; }
