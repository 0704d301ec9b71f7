/* gpu_buffer: device buffers, pinned host staging and asynchronous transfers on the
 * in-order queue of an OpenCL context.
 *
 * A pinned buffer is an OpenCL buffer allocated in host memory the driver can reach by
 * DMA (CL_MEM_ALLOC_HOST_PTR), mapped once for its whole life: transfers between a
 * device buffer and its host pointer run at the bus's full speed and may be left in
 * flight (gpu_buffer_read / _write with an event) while the host goes on. */
#ifndef GPU_BUFFER_H
#define GPU_BUFFER_H

#include <stddef.h>

#include "opencl.h"
#include "tsr_error.h"

typedef struct gpu_buffer {
  void *mem;    /* cl_mem; NULL when empty */
  size_t bytes;
} gpu_buffer_t;

typedef struct gpu_pinned {
  void *mem;    /* cl_mem */
  void *host;   /* mapped host pointer of the whole buffer */
  size_t bytes;
  void *queue;  /* the queue it was mapped on (cl_command_queue) */
} gpu_pinned_t;

/* A device buffer of bytes (> 0), or empty for 0; what names it in messages. */
TSR_NODISCARD tsr_status gpu_buffer_create(opencl_context_t *ctx, size_t bytes, const char *what,
                                           gpu_buffer_t *out, tsr_error_t *err);
void gpu_buffer_free(gpu_buffer_t *b);
/* A view of bytes of parent from offset (a sub-buffer: offset a multiple of the device's
 * base_align), freed with gpu_buffer_free; the parent must outlive it. */
TSR_NODISCARD tsr_status gpu_buffer_view(const gpu_buffer_t *parent, size_t offset, size_t bytes,
                                         gpu_buffer_t *out, tsr_error_t *err);

/* A pinned host buffer of bytes (> 0), mapped for reading and writing. */
TSR_NODISCARD tsr_status gpu_pinned_create(opencl_context_t *ctx, size_t bytes, const char *what,
                                           gpu_pinned_t *out, tsr_error_t *err);
void gpu_pinned_free(gpu_pinned_t *p);

/* Device -> host and host -> device copies of bytes at offset of the device buffer. With
 * event NULL they block; else they return at once and *event (a cl_event) completes
 * when the copy has: gpu_event_wait it before touching host. */
TSR_NODISCARD tsr_status gpu_buffer_read(opencl_context_t *ctx, const gpu_buffer_t *b,
                                         size_t offset, size_t bytes, void *host, void **event,
                                         tsr_error_t *err);
TSR_NODISCARD tsr_status gpu_buffer_write(opencl_context_t *ctx, gpu_buffer_t *b, size_t offset,
                                          size_t bytes, const void *host, void **event,
                                          tsr_error_t *err);
/* The largest piece one transfer of gpu_buffer_read / _write is split into (1 GiB; 0
 * restores that): for tests. Returns the size it replaces. */
size_t gpu_buffer_set_piece(size_t bytes);

/* The same on the context's transfer queue, in order with the kernel queue: the read
 * starts once everything enqueued on the kernel queue before it has completed; the
 * write starts once `after` has (a gpu_buffer_marker's event: what last read b; NULL:
 * everything enqueued on the kernel queue before), and everything enqueued on the
 * kernel queue after it waits for it. Both return at once; *event completes with the
 * copy. */
TSR_NODISCARD tsr_status gpu_buffer_read_after(opencl_context_t *ctx, const gpu_buffer_t *b,
                                               size_t offset, size_t bytes, void *host,
                                               void **event, tsr_error_t *err);
TSR_NODISCARD tsr_status gpu_buffer_write_before(opencl_context_t *ctx, gpu_buffer_t *b,
                                                 size_t offset, size_t bytes, const void *host,
                                                 void *after, void **event, tsr_error_t *err);
/* *event (released by gpu_event_wait or gpu_event_release) completes when everything
 * enqueued on the kernel queue so far has. */
TSR_NODISCARD tsr_status gpu_buffer_marker(opencl_context_t *ctx, void **event,
                                           tsr_error_t *err);
/* Releases *event without waiting (a no-op for NULL); sets *event = NULL. */
void gpu_event_release(void **event);

/* Waits for and releases *event (a no-op for NULL); sets *event = NULL. */
TSR_NODISCARD tsr_status gpu_event_wait(void **event, tsr_error_t *err);

/* Device-to-device copy of bytes between two buffers (a bandwidth probe). */
TSR_NODISCARD tsr_status gpu_buffer_copy(opencl_context_t *ctx, const gpu_buffer_t *src,
                                         gpu_buffer_t *dst, size_t bytes, tsr_error_t *err);

/* Seconds of a monotonic clock, for timing what a queue has finished. */
double gpu_now(void);

/* The device's copy bandwidth: reps device-to-device copies of bytes (after one
 * untimed copy), counted as bytes read plus bytes written, in GB/s. */
TSR_NODISCARD tsr_status gpu_copy_bandwidth(opencl_context_t *ctx, size_t bytes, int reps,
                                            double *gbs, tsr_error_t *err);

/* Waits until the queues have done all they were given. */
TSR_NODISCARD tsr_status gpu_queue_finish(opencl_context_t *ctx, tsr_error_t *err);

#endif
