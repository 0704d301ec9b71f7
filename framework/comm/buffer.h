/* buffer: growable byte buffers with bounds-checked little-endian packing, and a
 * read cursor that never reads past the end.
 *
 * Writers append fixed-width values in little-endian byte order whatever the host;
 * buffer_reserve hands out room for payloads that extraction functions fill. */
#ifndef BUFFER_H
#define BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "tsr_error.h"

typedef struct buffer buffer_t;

TSR_NODISCARD tsr_status buffer_create(size_t capacity, buffer_t **out, tsr_error_t *err);
void buffer_free(buffer_t **buf);

/* Borrowed pointer to the bytes (valid until the next append, reserve or free). */
uint8_t *buffer_data(buffer_t *buf);
size_t buffer_size(const buffer_t *buf);
void buffer_clear(buffer_t *buf);

/* Makes room for n more bytes, appends them uninitialised and returns where they start
 * in *at (valid until the next append or reserve). */
TSR_NODISCARD tsr_status buffer_reserve(buffer_t *buf, size_t n, uint8_t **at, tsr_error_t *err);
TSR_NODISCARD tsr_status buffer_put_bytes(buffer_t *buf, const void *p, size_t n, tsr_error_t *err);
TSR_NODISCARD tsr_status buffer_put_u8(buffer_t *buf, uint8_t v, tsr_error_t *err);
TSR_NODISCARD tsr_status buffer_put_u32(buffer_t *buf, uint32_t v, tsr_error_t *err);
TSR_NODISCARD tsr_status buffer_put_u64(buffer_t *buf, uint64_t v, tsr_error_t *err);
TSR_NODISCARD tsr_status buffer_put_f32(buffer_t *buf, float v, tsr_error_t *err);
TSR_NODISCARD tsr_status buffer_put_f64(buffer_t *buf, double v, tsr_error_t *err);

/* Little-endian stores and loads on raw memory (no bounds: callers check). */
void buffer_store_u32(uint8_t *p, uint32_t v);
void buffer_store_u64(uint8_t *p, uint64_t v);
uint32_t buffer_load_u32(const uint8_t *p);
uint64_t buffer_load_u64(const uint8_t *p);

/* A read cursor over borrowed bytes: a plain value, kept on the stack. */
typedef struct buffer_reader {
  const uint8_t *data;
  size_t size;
  size_t pos;
} buffer_reader_t;

buffer_reader_t buffer_reader(const uint8_t *data, size_t size);
size_t buffer_reader_left(const buffer_reader_t *r);

/* Each getter fails with TSR_ERR_CORRUPT, naming `what`, when fewer bytes are left
 * than it needs; the cursor then stays where it was. */
TSR_NODISCARD tsr_status buffer_get_u8(buffer_reader_t *r, const char *what, uint8_t *v, tsr_error_t *err);
TSR_NODISCARD tsr_status buffer_get_u32(buffer_reader_t *r, const char *what, uint32_t *v, tsr_error_t *err);
TSR_NODISCARD tsr_status buffer_get_u64(buffer_reader_t *r, const char *what, uint64_t *v, tsr_error_t *err);
TSR_NODISCARD tsr_status buffer_get_f32(buffer_reader_t *r, const char *what, float *v, tsr_error_t *err);
TSR_NODISCARD tsr_status buffer_get_f64(buffer_reader_t *r, const char *what, double *v, tsr_error_t *err);
/* Borrows n bytes at the cursor (no copy) and advances past them. */
TSR_NODISCARD tsr_status buffer_get_bytes(buffer_reader_t *r, const char *what, size_t n,
                                          const uint8_t **p, tsr_error_t *err);

#endif
