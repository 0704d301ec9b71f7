/* cpu_copy: the ghost exchange of a CPU field (grid.h, either layout) with ghost layers
 * of any width: the size, extraction and insertion of its block messages, and the
 * direct copies between CPU blocks of one process (the REGISTRY_KIND_COPY items of CPU
 * fields) as box copies spread over the OpenMP threads (the two blocks' layouts may
 * differ). A message in direction dir carries the sender's slice direction_send_box(dir)
 * (every box of it, in box order) into the receiver's ghost slice direction_recv_box(dir),
 * for each cell the components of dir as the layout lists them. */
#ifndef CPU_COPY_H
#define CPU_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "direction.h"
#include "registry.h"
#include "tsr_error.h"

/* The field of a block's data item (the grid a ghost exchange fills) and its dims; ctx
 * is the layout's. */
typedef void (*cpu_copy_field_fn)(const block_info_t *b, const void *data, const void *ctx,
                                  void **field, grid_dims_t *dims);

typedef struct cpu_copy_layout {
  cpu_copy_field_fn field;
  size_t esize;       /* bytes per value */
  const int *comps;   /* components of direction d: comps[d * stride .. + ncomps[d]) */
  int stride;
  const int *ncomps;  /* per direction */
  int width[3];       /* ghost cells exchanged along each axis (direction.h) */
  const void *ctx;    /* handed to field */
} cpu_copy_layout_t;

/* Payload bytes of the message a block sends in dir. */
size_t cpu_copy_size(const cpu_copy_layout_t *layout, const block_info_t *b, int dir);

/* Packs the slice of dir of field (the block's grid, dims) into out (cap bytes); sets
 * *written. what names the field in the error of a too small buffer. */
TSR_NODISCARD tsr_status cpu_copy_extract(const cpu_copy_layout_t *layout, const block_info_t *b,
                                          const void *field, const grid_dims_t *dims, int dir,
                                          uint8_t *out, size_t cap, size_t *written,
                                          const char *what, tsr_error_t *err);

/* Unpacks a message that travelled in dir into the ghost slice; len must be the size. */
TSR_NODISCARD tsr_status cpu_copy_insert(const cpu_copy_layout_t *layout, const block_info_t *b,
                                         void *field, const grid_dims_t *dims, int dir,
                                         const uint8_t *in, size_t len, const char *what,
                                         tsr_error_t *err);

/* Carries out n direct copies (every box of each task's slice). */
TSR_NODISCARD tsr_status cpu_copy_run(const registry_copy_task_t *tasks, size_t n,
                                      const cpu_copy_layout_t *layout, tsr_error_t *err);

#endif
