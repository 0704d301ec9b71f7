/* field: coupling fields, the plain per-cell data one module writes and others read in
 * a block's own cells (module.h: a sweep's `reads`), such as the velocity of the flow or
 * a body force. A field's block data is a field_block_t: its values on the host, a
 * grid_field_t (grid.h: `components` per cell in SoA layout, no ghost layer, zero at the
 * start unless the field has an initializer), and on GPU blocks the same bytes on the
 * device, where the GPU kernels read and write them; the host values of a GPU block are
 * brought up to date by field_sync. */
#ifndef FIELD_H
#define FIELD_H

#include <stddef.h>

#include "gpu_buffer.h"
#include "grid.h"
#include "opencl.h"
#include "registry.h"
#include "tsr_error.h"

/* Zeroed 64-byte aligned storage for the elements of dims of esize bytes each (NULL when
 * out of memory or when the bytes do not fit in a size_t). */
void *field_values_alloc(const grid_dims_t *dims, size_t esize);

/* Element i of values of esize bytes (4: float, 8: double), as a double. */
static inline double field_value(const void *values, size_t esize, size_t i) {
  return esize == 4 ? (double)((const float *)values)[i] : ((const double *)values)[i];
}

/* Stores v into element i of values of esize bytes (4: rounded to float, 8: as it is). */
static inline void field_set(void *values, size_t esize, size_t i, double v) {
  if (esize == 4) ((float *)values)[i] = (float)v;
  else ((double *)values)[i] = v;
}

/* The value of a field at the start in interior cell (x, y, z) of block b: its
 * components into out. */
typedef void (*field_init_fn)(const block_info_t *b, int x, int y, int z, const void *ctx,
                              double *out);

/* A field's data of one block. host comes first: a pointer to the block data is one to
 * host. */
typedef struct field_block {
  grid_field_t host;
  gpu_buffer_t device;    /* GPU blocks: the values (host.dims, host.esize); else empty */
  opencl_context_t *cl;   /* GPU blocks: the device's context */
} field_block_t;

/* Registers the allocator items of field `name` (fs "*", every bs; hs cpu, and hs gpu on
 * cl, this process's OpenCL device, NULL where it has none); init (with init_ctx, which
 * must outlive the registry) gives the values at the start, or NULL for zeros. */
TSR_NODISCARD tsr_status field_register(registry_t *reg, opencl_context_t *cl, const char *name,
                                        int components, size_t esize, field_init_fn init,
                                        const void *init_ctx, tsr_error_t *err);

/* The field of data id `id` of a block (NULL where the block has none, or id < 0). On a
 * GPU block its host values are as field_sync last left them. */
const grid_field_t *field_of(const block_data_t *data, int id);
field_block_t *field_block_of(block_data_t *data, int id);

/* The host values of the field, first read back from the device on a GPU block
 * (blocking; the queue's work before it included); *out NULL where the block has none. */
TSR_NODISCARD tsr_status field_sync(const block_data_t *data, int id, const grid_field_t **out,
                                    tsr_error_t *err);

#endif
