#include "field.h"

#include <stdlib.h>
#include <string.h>

#include "tsr_size.h"

#define FIELD_INIT_MAX 16 /* components of a field with an initializer, at most */

typedef struct field_ctx {
  int components;
  size_t esize;
  field_init_fn init;
  const void *init_ctx;
  opencl_context_t *cl;
} field_ctx_t;

static void field_release(void *data, void *ctx) {
  (void)ctx;
  field_block_t *f = data;
  if (!f) return;
  if (f->cl) {
    tsr_error_t ignored;
    /* nothing may be in flight on the buffer about to go */
    if (gpu_queue_finish(f->cl, &ignored) != TSR_OK) { /* released all the same */ }
  }
  gpu_buffer_free(&f->device);
  free(f->host.values);
  free(f);
}

void *field_values_alloc(const grid_dims_t *dims, size_t esize) {
  size_t bytes = 0;
  if (dims->elements == 0 || !tsr_mul_size(dims->elements, esize, &bytes) ||
      !tsr_add_size(bytes, 63, &bytes))
    return NULL;
  bytes = bytes / 64 * 64;
  void *v = aligned_alloc(64, bytes);
  if (v) memset(v, 0, bytes);
  return v;
}

static tsr_status field_alloc(const block_info_t *b, void *vctx, void **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const field_ctx_t *c = vctx;
  field_block_t *fb = calloc(1, sizeof *fb);
  *out = NULL;
  TSR_CHECK(fb, TSR_ERR_NOMEM, "out of memory for a field of BlockID %d", (int)b->id);
  grid_field_t *f = &fb->host;
  f->esize = c->esize;
  f->dims = grid_dims_make(b->size, c->components, 0, GRID_SOA, c->esize);
  f->values = field_values_alloc(&f->dims, c->esize);
  TSR_CHECK(f->values, TSR_ERR_NOMEM,
            "out of memory for a field of %d components of BlockID %d (%zu elements)",
            c->components, (int)b->id, f->dims.elements);
  if (c->init) {
    double v[FIELD_INIT_MAX] = {0};
    TSR_CHECK(c->components <= FIELD_INIT_MAX, TSR_ERR_INTERNAL,
              "a field of %d components cannot be initialized", c->components);
    for (int z = 0; z < f->dims.nz; ++z)
      for (int y = 0; y < f->dims.ny; ++y)
        for (int x = 0; x < f->dims.nx; ++x) {
          c->init(b, x, y, z, c->init_ctx, v);
          for (int k = 0; k < c->components; ++k)
            field_set(f->values, c->esize, grid_index(&f->dims, x, y, z, k), v[k]);
        }
  }
  *out = fb;
  fb = NULL;
cleanup:
  field_release(fb, NULL);
  return st;
}

/* The host values as on the CPU, then copied to the device. */
static tsr_status field_gpu_alloc(const block_info_t *b, void *vctx, void **out,
                                  tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const field_ctx_t *c = vctx;
  field_block_t *fb = NULL;
  *out = NULL;
  TSR_CHECK(c->cl, TSR_ERR_INVALID,
            "BlockID %d is to run on hs gpu, but this process has no OpenCL device", (int)b->id);
  TSR_TRY(field_alloc(b, vctx, (void **)&fb, err));
  size_t bytes = fb->host.dims.elements * fb->host.esize; /* allocated above: fits */
  TSR_TRY(gpu_buffer_create(c->cl, bytes, "a coupling field", &fb->device, err));
  fb->cl = c->cl;
  TSR_TRY(gpu_buffer_write(c->cl, &fb->device, 0, bytes, fb->host.values, NULL, err));
  *out = fb;
  fb = NULL;
cleanup:
  field_release(fb, NULL);
  return st;
}

tsr_status field_register(registry_t *reg, opencl_context_t *cl, const char *name,
                          int components, size_t esize, field_init_fn init, const void *init_ctx,
                          tsr_error_t *err) {
  tsr_status st = TSR_OK;
  field_ctx_t c = {.components = components, .esize = esize, .init = init,
                   .init_ctx = init_ctx, .cl = cl};
  void *ctx;
  TSR_TRY(registry_keep(reg, &c, sizeof c, &ctx, err));
  registry_item_t it = {.kind = REGISTRY_KIND_ALLOCATOR, .name = name, .fs = "*", .hs = "cpu",
                        .bs = "*", .alloc = field_alloc, .free = field_release, .ctx = ctx};
  TSR_TRY(registry_add(reg, &it, err));
  it.hs = "gpu";
  it.alloc = field_gpu_alloc;
  TSR_TRY(registry_add(reg, &it, err));
cleanup:
  return st;
}

const grid_field_t *field_of(const block_data_t *data, int id) {
  return id < 0 ? NULL : block_data_get(data, id);
}

field_block_t *field_block_of(block_data_t *data, int id) {
  return id < 0 ? NULL : block_data_get(data, id);
}

tsr_status field_sync(const block_data_t *data, int id, const grid_field_t **out,
                      tsr_error_t *err) {
  tsr_status st = TSR_OK;
  field_block_t *fb = id < 0 ? NULL : block_data_get(data, id);
  *out = NULL;
  if (!fb) return st;
  if (fb->device.mem)
    TSR_TRY(gpu_buffer_read(fb->cl, &fb->device, 0, fb->device.bytes, fb->host.values, NULL, err));
  *out = &fb->host;
cleanup:
  return st;
}
