#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 120
#include "gpu_buffer.h"

#include <CL/cl.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static cl_command_queue gpu_queue(opencl_context_t *ctx) {
  return (cl_command_queue)opencl_context_queue(ctx);
}

tsr_status gpu_buffer_create(opencl_context_t *ctx, size_t bytes, const char *what,
                             gpu_buffer_t *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  memset(out, 0, sizeof *out);
  if (bytes == 0) goto cleanup;
  cl_int rc = CL_SUCCESS;
  out->mem = clCreateBuffer(opencl_context_cl(ctx), CL_MEM_READ_WRITE, bytes, NULL, &rc);
  TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "allocating %zu bytes for %s on %s failed: %s",
            bytes, what, opencl_context_desc(ctx)->name, opencl_error_name(rc));
  out->bytes = bytes;
cleanup:
  return st;
}

tsr_status gpu_buffer_view(const gpu_buffer_t *parent, size_t offset, size_t bytes,
                           gpu_buffer_t *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  memset(out, 0, sizeof *out);
  if (bytes == 0) goto cleanup;
  cl_int rc = CL_SUCCESS;
  const cl_buffer_region region = {offset, bytes};
  out->mem = clCreateSubBuffer((cl_mem)parent->mem, CL_MEM_READ_WRITE,
                               CL_BUFFER_CREATE_TYPE_REGION, &region, &rc);
  TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL,
            "a view of %zu bytes at byte %zu of a device buffer of %zu failed: %s", bytes,
            offset, parent->bytes, opencl_error_name(rc));
  out->bytes = bytes;
cleanup:
  return st;
}

void gpu_buffer_free(gpu_buffer_t *b) {
  if (b->mem) clReleaseMemObject((cl_mem)b->mem);
  memset(b, 0, sizeof *b);
}

tsr_status gpu_pinned_create(opencl_context_t *ctx, size_t bytes, const char *what,
                             gpu_pinned_t *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  memset(out, 0, sizeof *out);
  cl_int rc = CL_SUCCESS;
  out->mem = clCreateBuffer(opencl_context_cl(ctx), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                            bytes, NULL, &rc);
  TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL,
            "allocating %zu bytes of pinned host memory for %s failed: %s", bytes, what,
            opencl_error_name(rc));
  out->queue = gpu_queue(ctx);
  out->host = clEnqueueMapBuffer(gpu_queue(ctx), (cl_mem)out->mem, CL_TRUE,
                                 CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &rc);
  TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "mapping the pinned buffer of %s failed: %s",
            what, opencl_error_name(rc));
  out->bytes = bytes;
cleanup:
  if (st != TSR_OK) gpu_pinned_free(out);
  return st;
}

void gpu_pinned_free(gpu_pinned_t *p) {
  if (p->host) {
    cl_event ev = NULL;
    if (clEnqueueUnmapMemObject((cl_command_queue)p->queue, (cl_mem)p->mem, p->host, 0, NULL,
                                &ev) == CL_SUCCESS) {
      clWaitForEvents(1, &ev);
      clReleaseEvent(ev);
    }
  }
  if (p->mem) clReleaseMemObject((cl_mem)p->mem);
  memset(p, 0, sizeof *p);
}

/* Transfers between the host and a device buffer go in pieces of at most this many bytes,
 * one after the other on the in-order queue: NVIDIA's OpenCL driver (580.159, H200) failed
 * one write of 8.7 GB with CL_OUT_OF_RESOURCES where writes of 4.4 GB went through. */
static size_t gpu_transfer_piece = (size_t)1 << 30;

size_t gpu_buffer_set_piece(size_t bytes) {
  const size_t was = gpu_transfer_piece;
  gpu_transfer_piece = bytes ? bytes : (size_t)1 << 30;
  return was;
}

/* bytes between host and b from offset, in pieces; blocking, or with *event the last
 * piece's (the queue is in order: it completes after the others) */
static tsr_status gpu_buffer_transfer(opencl_context_t *ctx, const gpu_buffer_t *b, int write,
                                      size_t offset, size_t bytes, void *host, void **event,
                                      tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_event ev = NULL;
  size_t done = 0;
  do {
    const size_t n = bytes - done < gpu_transfer_piece ? bytes - done : gpu_transfer_piece;
    const int last = done + n == bytes;
    cl_event *mine = event && last ? &ev : NULL;
    const cl_bool block = event ? CL_FALSE : CL_TRUE;
    if (write)
      OPENCL_CHECK(clEnqueueWriteBuffer(gpu_queue(ctx), (cl_mem)b->mem, block, offset + done, n,
                                        (const uint8_t *)host + done, 0, NULL, mine));
    else
      OPENCL_CHECK(clEnqueueReadBuffer(gpu_queue(ctx), (cl_mem)b->mem, block, offset + done, n,
                                       (uint8_t *)host + done, 0, NULL, mine));
    done += n;
  } while (done < bytes);
  opencl_count_transfer(ctx, write, bytes);
  if (event) *event = ev;
cleanup:
  return st;
}

tsr_status gpu_buffer_read(opencl_context_t *ctx, const gpu_buffer_t *b, size_t offset,
                           size_t bytes, void *host, void **event, tsr_error_t *err) {
  return gpu_buffer_transfer(ctx, b, 0, offset, bytes, host, event, err);
}

tsr_status gpu_buffer_write(opencl_context_t *ctx, gpu_buffer_t *b, size_t offset, size_t bytes,
                            const void *host, void **event, tsr_error_t *err) {
  return gpu_buffer_transfer(ctx, b, 1, offset, bytes, (void *)(uintptr_t)host, event, err);
}

/* A marker on the kernel queue: an event that completes when everything enqueued there
 * so far has. */
static tsr_status gpu_marker(opencl_context_t *ctx, cl_event *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  OPENCL_CHECK(clEnqueueMarkerWithWaitList(gpu_queue(ctx), 0, NULL, out));
cleanup:
  return st;
}

tsr_status gpu_buffer_read_after(opencl_context_t *ctx, const gpu_buffer_t *b, size_t offset,
                                 size_t bytes, void *host, void **event, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_event m = NULL, ev = NULL;
  TSR_TRY(gpu_marker(ctx, &m, err));
  OPENCL_CHECK(clEnqueueReadBuffer((cl_command_queue)opencl_context_transfer_queue(ctx),
                                   (cl_mem)b->mem, CL_FALSE, offset, bytes, host, 1, &m, &ev));
  opencl_count_transfer(ctx, 0, bytes);
  *event = ev;
cleanup:
  if (m) clReleaseEvent(m);
  return st;
}

tsr_status gpu_buffer_write_before(opencl_context_t *ctx, gpu_buffer_t *b, size_t offset,
                                   size_t bytes, const void *host, void *after, void **event,
                                   tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_event m = NULL, ev = NULL;
  if (!after) TSR_TRY(gpu_marker(ctx, &m, err)); /* what reads b before has done so */
  cl_event wait = after ? (cl_event)after : m;
  OPENCL_CHECK(clEnqueueWriteBuffer((cl_command_queue)opencl_context_transfer_queue(ctx),
                                    (cl_mem)b->mem, CL_FALSE, offset, bytes, host, 1, &wait,
                                    &ev));
  opencl_count_transfer(ctx, 1, bytes);
  /* what the kernel queue is given next waits for the write */
  OPENCL_CHECK(clEnqueueBarrierWithWaitList(gpu_queue(ctx), 1, &ev, NULL));
  *event = ev;
  ev = NULL;
cleanup:
  if (m) clReleaseEvent(m);
  if (ev) clReleaseEvent(ev);
  return st;
}

tsr_status gpu_buffer_marker(opencl_context_t *ctx, void **event, tsr_error_t *err) {
  cl_event m = NULL;
  tsr_status st = gpu_marker(ctx, &m, err);
  *event = m;
  return st;
}

void gpu_event_release(void **event) {
  if (!*event) return;
  clReleaseEvent((cl_event)*event);
  *event = NULL;
}

tsr_status gpu_event_wait(void **event, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  if (!*event) return st;
  cl_event ev = (cl_event)*event;
  *event = NULL;
  cl_int rc = clWaitForEvents(1, &ev);
  clReleaseEvent(ev);
  OPENCL_CHECK(rc);
cleanup:
  return st;
}

tsr_status gpu_buffer_copy(opencl_context_t *ctx, const gpu_buffer_t *src, gpu_buffer_t *dst,
                           size_t bytes, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  OPENCL_CHECK(clEnqueueCopyBuffer(gpu_queue(ctx), (cl_mem)src->mem, (cl_mem)dst->mem, 0, 0,
                                   bytes, 0, NULL, NULL));
cleanup:
  return st;
}

tsr_status gpu_queue_finish(opencl_context_t *ctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  OPENCL_CHECK(clFinish((cl_command_queue)opencl_context_transfer_queue(ctx)));
  OPENCL_CHECK(clFinish(gpu_queue(ctx)));
cleanup:
  return st;
}

double gpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

tsr_status gpu_copy_bandwidth(opencl_context_t *ctx, size_t bytes, int reps, double *gbs,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_buffer_t a = {0}, b = {0};
  *gbs = 0;
  bytes &= ~(size_t)3; /* whole fill patterns */
  TSR_TRY(opencl_check_memory(ctx, 2 * (uint64_t)bytes, bytes, "the copy-bandwidth probe", err));
  TSR_TRY(gpu_buffer_create(ctx, bytes, "the copy-bandwidth probe", &a, err));
  TSR_TRY(gpu_buffer_create(ctx, bytes, "the copy-bandwidth probe", &b, err));
  /* defined contents, and the first copy pays for any lazy allocation */
  OPENCL_CHECK(clEnqueueFillBuffer(gpu_queue(ctx), (cl_mem)a.mem, &(cl_uint){0}, sizeof(cl_uint),
                                   0, bytes, 0, NULL, NULL));
  TSR_TRY(gpu_buffer_copy(ctx, &a, &b, bytes, err));
  TSR_TRY(gpu_queue_finish(ctx, err));
  double t0 = gpu_now();
  for (int k = 0; k < reps; ++k)
    TSR_TRY(gpu_buffer_copy(ctx, k % 2 ? &b : &a, k % 2 ? &a : &b, bytes, err));
  TSR_TRY(gpu_queue_finish(ctx, err));
  double t = gpu_now() - t0;
  *gbs = t > 0 ? 2.0 * (double)bytes * (double)reps / t / 1e9 : 0.0;
cleanup:
  gpu_buffer_free(&a);
  gpu_buffer_free(&b);
  return st;
}
