/* field: the field kit. One declaration (field_declare) gives a field of a block
 * everything the framework does with it:
 *   storage     on CPU blocks a grid (grid.h) in the field's CPU layout (AoS or SoA, per
 *               block if asked), on GPU blocks a device field (kernels_gpu/gpu_field.h,
 *               SoA); one or two copies (two for a kernel that reads one and writes the
 *               other), ghost layers of the largest exchanged width around the interior,
 *               zero at the start unless the field has an initializer;
 *   exchange    its extraction, insertion and copy items for hs cpu and hs gpu (every
 *               pair of hardware meets in the common message layout: comm.h), for any
 *               ghost width per axis and any set of components crossing each direction;
 *               blocks of the hollow bs hold nothing and send nothing.
 * The items carry the field's name, so that a module names the field in its sweeps'
 * reads and writes (module.h) and the assembly allocates it and plans its exchange
 * rounds. Modules keep their kernels and nothing of the exchange.
 *
 * A field's block data is a field_block_t. Kernels of CPU blocks read and write
 * host.values (the present copy); kernels of GPU blocks the present copy on the device,
 * device.grid[device.cur]. A kernel that wrote the other copy makes it the present one
 * with field_swap. The host values of a GPU block are brought up to date by field_sync. */
#ifndef FIELD_H
#define FIELD_H

#include <stdbool.h>
#include <stddef.h>

#include "block_data.h"
#include "gpu_field.h"
#include "grid.h"
#include "patch.h"
#include "registry.h"
#include "tsr_error.h"

enum { FIELD_MAX_COMPONENTS = 64 };

/* The cells of a CPU kernel's call in an overlapped step (registry_region_t) as the
 * kernels take them (grid.h). */
static inline grid_region_t field_grid_region(const registry_region_t *r) {
  grid_region_t g = {.part = r->part == REGISTRY_PART_INNER ? GRID_PART_INNER : GRID_PART_SHELL};
  for (int a = 0; a < 3; ++a) {
    g.lo[a] = r->lo[a];
    g.hi[a] = r->hi[a];
  }
  return g;
}

/* The cells of block k of a call (registry_work_t) as the CPU kernels take them: NULL
 * for the whole work, else *g (from regions[k] and the call's part). */
static inline const grid_region_t *field_work_region(const registry_work_t *w, size_t k,
                                                     grid_region_t *g) {
  if (!w->part) return NULL;
  registry_region_t r = w->regions[k];
  r.part = w->part;
  *g = field_grid_region(&r);
  return g;
}

/* The boxes of a batch's regions (registry_work_t) as a device kernel takes them
 * (gpu_lbm_batch_step_part): lo x, y, z, hi x, y, z per block, into *boxes (malloc'd,
 * 6 n ints; the caller frees it). */
TSR_NODISCARD tsr_status field_region_boxes(const registry_region_t *regions, size_t n,
                                            int **boxes, tsr_error_t *err);

/* Zeroed 64-byte aligned storage for the elements of dims of esize bytes each (NULL when
 * out of memory or when the bytes do not fit in a size_t). */
void *field_values_alloc(const grid_dims_t *dims, size_t esize);

/* Element i of values of esize bytes (4: float, 8: double), as a double (not for 16-bit
 * values, whose format only their module knows). */
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
/* The whole field of block b at the start, ghost layers included, into values (dims: the
 * CPU layout the block's grid is built in). */
typedef tsr_status (*field_fill_fn)(const block_info_t *b, void *values, const grid_dims_t *dims,
                                    const void *ctx, tsr_error_t *err);

typedef struct field_spec {
  const char *name;       /* "<module>.<field>" (copied) */
  int components;         /* values per cell, 1..FIELD_MAX_COMPONENTS */
  size_t esize;           /* bytes per value: 4 (float) or 8 (double), or 2 (16 bits of a
                             format the module knows: moved as bits; no init, a fill) */
  int width[3];           /* ghost layers exchanged per axis (0..DIRECTION_MAX_WIDTH; 0:
                             nothing crosses that axis); the storage has the largest on
                             every axis */
  int copies;             /* 1 (also for 0) or 2 */
  grid_layout_t layout;   /* CPU blocks */
  bool layout_by_fs;      /* instead of layout: two CPU allocator items, fs "aos" and fs
                             "soa", so that the run's fs switch picks the layout (declare
                             the switches exclusive: registry_exclusive) */
  const grid_layout_t *block_layout; /* NULL, or the CPU layout per BlockID (borrowed: it
                                        must outlive the registry) */
  const int *crossing;    /* components crossing direction d (blocks/direction.h):
                             crossing[d * stride .. + ncrossing[d]); NULL: every component
                             crosses every direction. Copied */
  int stride;
  const int *ncrossing;
  const char *hollow_bs;  /* NULL, or a bs name whose blocks hold none of the field */
  const int *stream;      /* NULL; or the components are populations that GPU blocks may
                             stream in place (gpu_field_shape_t.stream: mate, cx, cy, cz
                             per component; copied). Then hs gpu has two allocators, fs
                             "two_grid" (the copies above) and fs "in_place" (one copy
                             streamed in place), declared exclusive: the run's fs picks */
  bool host;              /* kept in host memory on every hs: GPU blocks hold it as CPU
                             blocks do (values the host updates between steps, such as
                             time statistics); no ghost layers (width 0), one copy */
  field_init_fn init;     /* NULL, or the start value of every interior cell */
  field_fill_fn fill;     /* NULL, or the whole start field (instead of init) */
  const void *init_ctx;   /* for init or fill; must outlive the registry */
} field_spec_t;

/* A field's data of one block. host comes first: a pointer to the block data is one to
 * host. */
typedef struct field_block {
  grid_field_t host;      /* CPU blocks: the present copy; GPU blocks: what field_sync
                             last read back (values NULL before) */
  void *values[2];        /* CPU blocks: the copies; host.values is values[cur] */
  int copies, cur;
  gpu_field_t device;     /* GPU blocks; zeroed on CPU blocks */
} field_block_t;

/* Registers the field's allocator, extraction, insertion and copy items (fs "*", every
 * bs; hs cpu, and hs gpu; gpu: this process's device programs, NULL where it has none, so
 * that its GPU blocks cannot be allocated but every block's messages can be sized). */
TSR_NODISCARD tsr_status field_declare(registry_t *reg, gpu_field_programs_t *gpu,
                                       const field_spec_t *spec, tsr_error_t *err);

/* What the kit allocates for one field (spec and allocator item found by name for the
 * run's fs and each block's hs and bs) on this process's blocks, added up: *host and
 * *device the bytes that stay (a CPU block's copies in its layout with their padding; a
 * GPU block's device copies, one streamed in place, and the message slices of its ghost
 * shell both ways), *staging the largest host grid a GPU block builds while it starts
 * (one at a time), *largest the largest single device buffer (one copy). *kit false
 * where the field's allocator is not the kit's (data of a module's own allocator): then
 * nothing is added. Every sum is checked: one that does not fit in a size_t is an error
 * naming the block and the field. Not collective. */
typedef struct field_bytes {
  size_t host, device, staging, largest;
} field_bytes_t;
TSR_NODISCARD tsr_status field_local_bytes(const registry_t *reg, const char *name, uint64_t fs,
                                           const patch_t *patch, field_bytes_t *sum, bool *kit,
                                           tsr_error_t *err);

/* The field of data id `id` of a block: its block data, or NULL where the block has
 * none, id < 0, or the block is hollow for it. */
field_block_t *field_block_of(block_data_t *data, int id);
/* The host values of a CPU block's field (NULL as for field_block_of). */
const grid_field_t *field_of(const block_data_t *data, int id);

/* Whether the block holds the field on a device. */
static inline bool field_on_device(const field_block_t *f) { return f->device.cl != NULL; }


/* The other copy becomes the present one (a field of two copies; one copy: nothing). */
void field_swap(field_block_t *f);

/* The host values of the field, first read back from the device on a GPU block
 * (blocking; the queue's work before it included); *out NULL where the block has none. */
TSR_NODISCARD tsr_status field_sync(const block_data_t *data, int id, const grid_field_t **out,
                                    tsr_error_t *err);

/* Checkpoints: the interior of a block's field in a layout that no hardware owns, row by
 * row (a row: the cells along x at one y and z; rows in y, then z order), a cell's
 * components in order, each value in the field's bytes (2, 4 or 8) in little-endian order.
 * Rows go in pieces, so that a large field needs no second copy of itself. */

/* Bytes of the field's interior in that layout (0 where the block has none). */
size_t field_interior_bytes(const block_data_t *data, int id);

/* Bytes of one row, and the rows (ny * nz), of a host grid. */
size_t field_row_bytes(const grid_field_t *h);
int64_t field_rows(const grid_field_t *h);

/* Rows [first, first + n) of the host grid into out, or from in into it (on the calling
 * thread: callers share the rows among threads, as checkpoints do). */
void field_rows_to_bytes(const grid_field_t *h, int64_t first, int64_t n, uint8_t *out);
void field_rows_from_bytes(grid_field_t *h, int64_t first, int64_t n, const uint8_t *in);

/* The host grid a restart loads a block's field into (*out NULL where the block has none):
 * a CPU block's present copy; a GPU block's host copy (made if need be), which
 * field_upload_host then puts on the device (every copy; the ghost layers are left to the
 * next exchange). field_upload_host does nothing on a CPU block. */
TSR_NODISCARD tsr_status field_host_for_load(block_data_t *data, int id, grid_field_t **out,
                                             tsr_error_t *err);
TSR_NODISCARD tsr_status field_upload_host(block_data_t *data, int id, tsr_error_t *err);

#endif
