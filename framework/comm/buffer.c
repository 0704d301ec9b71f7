#include "buffer.h"

#include <stdlib.h>
#include <string.h>

struct buffer {
  uint8_t *data;
  size_t size, cap;
};

tsr_status buffer_create(size_t capacity, buffer_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *out = NULL;
  buffer_t *b = calloc(1, sizeof *b);
  TSR_CHECK(b, TSR_ERR_NOMEM, "out of memory allocating a byte buffer");
  if (capacity) {
    b->data = malloc(capacity);
    TSR_CHECK(b->data, TSR_ERR_NOMEM, "out of memory allocating a byte buffer of %zu bytes",
              capacity);
    b->cap = capacity;
  }
  *out = b;
  b = NULL;
cleanup:
  buffer_free(&b);
  return st;
}

void buffer_free(buffer_t **buf) {
  if (!buf || !*buf) return;
  free((*buf)->data);
  free(*buf);
  *buf = NULL;
}

uint8_t *buffer_data(buffer_t *buf) { return buf->data; }
size_t buffer_size(const buffer_t *buf) { return buf->size; }
void buffer_clear(buffer_t *buf) { buf->size = 0; }

tsr_status buffer_reserve(buffer_t *buf, size_t n, uint8_t **at, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(n <= SIZE_MAX - buf->size, TSR_ERR_NOMEM, "byte buffer size overflows");
  if (buf->size + n > buf->cap) {
    size_t cap = buf->cap ? buf->cap : 64;
    while (cap < buf->size + n) cap = cap > SIZE_MAX / 2 ? buf->size + n : 2 * cap;
    uint8_t *grown = realloc(buf->data, cap);
    TSR_CHECK(grown, TSR_ERR_NOMEM, "out of memory growing a byte buffer to %zu bytes", cap);
    buf->data = grown;
    buf->cap = cap;
  }
  *at = buf->data + buf->size;
  buf->size += n;
cleanup:
  return st;
}

tsr_status buffer_put_bytes(buffer_t *buf, const void *p, size_t n, tsr_error_t *err) {
  uint8_t *at = NULL;
  tsr_status st = buffer_reserve(buf, n, &at, err);
  if (st == TSR_OK && n) memcpy(at, p, n);
  return st;
}

void buffer_store_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

void buffer_store_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

uint32_t buffer_load_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= (uint32_t)p[i] << (8 * i);
  return v;
}

uint64_t buffer_load_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

tsr_status buffer_put_u8(buffer_t *buf, uint8_t v, tsr_error_t *err) {
  return buffer_put_bytes(buf, &v, 1, err);
}

tsr_status buffer_put_u32(buffer_t *buf, uint32_t v, tsr_error_t *err) {
  uint8_t b[4];
  buffer_store_u32(b, v);
  return buffer_put_bytes(buf, b, sizeof b, err);
}

tsr_status buffer_put_u64(buffer_t *buf, uint64_t v, tsr_error_t *err) {
  uint8_t b[8];
  buffer_store_u64(b, v);
  return buffer_put_bytes(buf, b, sizeof b, err);
}

tsr_status buffer_put_f32(buffer_t *buf, float v, tsr_error_t *err) {
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  return buffer_put_u32(buf, u, err);
}

tsr_status buffer_put_f64(buffer_t *buf, double v, tsr_error_t *err) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return buffer_put_u64(buf, u, err);
}

buffer_reader_t buffer_reader(const uint8_t *data, size_t size) {
  return (buffer_reader_t){data, size, 0};
}

size_t buffer_reader_left(const buffer_reader_t *r) { return r->size - r->pos; }

tsr_status buffer_get_bytes(buffer_reader_t *r, const char *what, size_t n, const uint8_t **p,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(n <= buffer_reader_left(r), TSR_ERR_CORRUPT,
            "truncated %s: needs %zu bytes at offset %zu, only %zu left", what, n, r->pos,
            buffer_reader_left(r));
  *p = r->data + r->pos;
  r->pos += n;
cleanup:
  return st;
}

tsr_status buffer_get_u8(buffer_reader_t *r, const char *what, uint8_t *v, tsr_error_t *err) {
  const uint8_t *p = NULL;
  tsr_status st = buffer_get_bytes(r, what, 1, &p, err);
  if (st == TSR_OK) *v = p[0];
  return st;
}

tsr_status buffer_get_u32(buffer_reader_t *r, const char *what, uint32_t *v, tsr_error_t *err) {
  const uint8_t *p = NULL;
  tsr_status st = buffer_get_bytes(r, what, 4, &p, err);
  if (st == TSR_OK) *v = buffer_load_u32(p);
  return st;
}

tsr_status buffer_get_u64(buffer_reader_t *r, const char *what, uint64_t *v, tsr_error_t *err) {
  const uint8_t *p = NULL;
  tsr_status st = buffer_get_bytes(r, what, 8, &p, err);
  if (st == TSR_OK) *v = buffer_load_u64(p);
  return st;
}

tsr_status buffer_get_f32(buffer_reader_t *r, const char *what, float *v, tsr_error_t *err) {
  uint32_t u;
  tsr_status st = buffer_get_u32(r, what, &u, err);
  if (st == TSR_OK) memcpy(v, &u, sizeof u);
  return st;
}

tsr_status buffer_get_f64(buffer_reader_t *r, const char *what, double *v, tsr_error_t *err) {
  uint64_t u;
  tsr_status st = buffer_get_u64(r, what, &u, err);
  if (st == TSR_OK) memcpy(v, &u, sizeof u);
  return st;
}
