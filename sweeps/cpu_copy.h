/* cpu_copy: direct ghost-layer copies between CPU blocks of one process (the
 * REGISTRY_KIND_COPY items of CPU fields), as box copies (grid.h, either layout, the two
 * blocks' layouts may differ) spread over the OpenMP
 * threads: for each task, the sender's slice direction_send_slice(dir) goes into the
 * receiver's ghost slice direction_recv_slice(dir), components per direction as given. */
#ifndef CPU_COPY_H
#define CPU_COPY_H

#include <stddef.h>

#include "grid.h"
#include "direction.h"
#include "registry.h"
#include "tsr_error.h"

/* The field of a block's data item (the grid a ghost exchange fills) and its dims. */
typedef void (*cpu_copy_field_fn)(const block_info_t *b, const void *data, void **field,
                                  grid_dims_t *dims);

typedef struct cpu_copy_layout {
  cpu_copy_field_fn field;
  size_t esize;       /* bytes per value */
  const int *comps;   /* components of direction d: comps[d * stride .. + ncomps[d]) */
  int stride;
  const int *ncomps;  /* per direction */
} cpu_copy_layout_t;

TSR_NODISCARD tsr_status cpu_copy_run(const registry_copy_task_t *tasks, size_t n,
                                      const cpu_copy_layout_t *layout, tsr_error_t *err);

#endif
