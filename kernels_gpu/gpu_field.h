/* gpu_field: a block's field on an OpenCL device, whatever it holds (PDFs of any lattice,
 * a scalar, a vector): one or two copies of it (two for a stream-collide that reads one
 * and writes the other), its message buffers on the device and their pinned host copies,
 * and the pack and unpack of its ghost slices in the common message layout for any
 * element size, number of components, ghost width per axis and set of components
 * crossing each direction (field.cl).
 *
 * Device layout (SoA): `components` arrays of sx * sy * sz cells, sx = nx + 2 ghost, sy =
 * ny + 2 ghost, sz = nz + 2 gz, x fastest: component c of cell (x, y, z) (-ghost <= x < nx
 * + ghost, ...; -gz <= z < nz + gz) is element c * ncells + (x + ghost) + sx * ((y + ghost)
 * + sy * (z + gz)). gpu_field_dims gives
 * the same as a grid_dims_t (grid.h) so that kernels written over strides read it. Host
 * copies (upload, download) take a CPU field of either layout (grid.h).
 *
 * The programs depend on the element size alone (the shape of a block is a kernel
 * argument, its slices a table on the device): gpu_field_programs_t builds each on first
 * use and keeps it for the context's life. This file registers nothing: the framework's
 * field kit (framework/field) makes registry items of these functions. */
#ifndef GPU_FIELD_H
#define GPU_FIELD_H

#include <stddef.h>
#include <stdint.h>

#include "direction.h"
#include "gpu_buffer.h"
#include "grid.h"
#include "opencl.h"
#include "tsr_error.h"

typedef struct gpu_field_programs gpu_field_programs_t;

/* cl is borrowed and must outlive the programs. */
TSR_NODISCARD tsr_status gpu_field_programs_create(opencl_context_t *cl,
                                                   gpu_field_programs_t **out,
                                                   tsr_error_t *err);
void gpu_field_programs_free(gpu_field_programs_t **p);
opencl_context_t *gpu_field_programs_context(const gpu_field_programs_t *p);

/* The shape of a field of one block. */
typedef struct gpu_field_shape {
  int n[3];            /* interior cells */
  int ghost;           /* ghost cells stored around the interior along x and y */
  int gz;              /* and along z (<= ghost; 0 where nothing crosses z) */
  int components;      /* values per cell */
  size_t esize;        /* bytes per value: 2, 4 or 8 */
  int copies;          /* 1 or 2 */
  int width[3];        /* ghost widths exchanged along each axis (<= ghost) */
  const int *crossing; /* components crossing direction d: crossing[d * stride ..
                          + ncrossing[d]); NULL: every component crosses every
                          direction. Read during gpu_field_create only */
  int stride;
  const int *ncrossing;
  const int *stream;   /* NULL; or a field of populations streamed in place (one copy,
                          the AA pattern): 4 values per component c, (mate, cx, cy, cz):
                          while the field is swapped (after an odd number of swaps) the
                          value of component c of a cell lies at component mate of the
                          cell (cx, cy, cz) away. Every function of this file reads and
                          writes the values where they lie, so that messages, uploads and
                          downloads stay in the common layout. Read during
                          gpu_field_create only */
} gpu_field_shape_t;

typedef struct gpu_field_stage gpu_field_stage_t;
typedef struct gpu_field_set gpu_field_set_t;

typedef struct gpu_field {
  opencl_context_t *cl;
  gpu_field_programs_t *progs; /* borrowed */
  gpu_field_shape_t shape;     /* crossing tables not kept */
  gpu_buffer_t grid[2];        /* the copies: views of the set's arrays; grid[1] empty
                                  with one copy */
  int cur;                     /* the copy holding the present values; streamed in
                                  place: 1 while swapped */
  size_t ncells;               /* sx * sy * sz */
  gpu_field_set_t *set;        /* the set this field lives in (shared) */
  int index;                   /* its block's place in the set */
  size_t base;                 /* element offset of its copies in the set's arrays */
  size_t msg_first;            /* value offset of its messages in the set's message
                                  arrays */
  size_t slot_offset[DIRECTION_COUNT + 1]; /* values from msg_first; [DIRECTION_COUNT]:
                                              total */
  gpu_field_stage_t *stage;    /* what changes during an exchange */
} gpu_field_t;

/* The fields of n blocks in sets: fields[k] of shapes[k] (element size, components,
 * copies, ghost, widths and crossing components the same for every block; the block
 * sizes may differ), zeroed. A set keeps the fields of its blocks in one device array
 * per copy, each field a view of its part: per-block kernels see a field of their own,
 * kernels over many blocks (gpu_field_arrays) see the arrays; the ghost exchange of
 * every block of a set takes one pack and one unpack launch. The messages through the
 * host of every set made with the same programs (the process's) share one array each
 * way and its pinned host copy: one read and one write per exchange move them all. A
 * new set starts where an array would outgrow the device's largest allocation. Checks
 * that the whole fits the device's memory. */
TSR_NODISCARD tsr_status gpu_field_create_set(gpu_field_programs_t *progs,
                                              const gpu_field_shape_t *shapes, size_t n,
                                              gpu_field_t *const *fields, tsr_error_t *err);
/* The field of one block (a set of its own). */
TSR_NODISCARD tsr_status gpu_field_create(gpu_field_t *f, gpu_field_programs_t *progs,
                                          const gpu_field_shape_t *shape, tsr_error_t *err);
/* Waits for what is in flight on the block's buffers, then frees them (NULL-safe on a
 * zeroed struct); the set goes with its last field. */
void gpu_field_release(gpu_field_t *f);

/* Bytes of one copy on the device. */
size_t gpu_field_copy_bytes(const gpu_field_t *f);

/* The device layout as grid dims (layout GRID_SOA, no padding). */
grid_dims_t gpu_field_dims(const gpu_field_t *f);

/* The set's array of copy k (0 or 1; a cl_mem), which holds f's copy k at element
 * f->base: what a kernel over many blocks of one set reads. */
void *gpu_field_array(const gpu_field_t *f, int k);
/* Whether two fields live in the same set. */
int gpu_field_same_set(const gpu_field_t *a, const gpu_field_t *b);

/* Every copy from values, a CPU field of the same interior, components and element size
 * in any layout (dims); the cells both hold (ghosts included up to the smaller ghost
 * width) are copied, the rest of the device field is left. Blocking. */
TSR_NODISCARD tsr_status gpu_field_upload(gpu_field_t *f, const void *values,
                                          const grid_dims_t *dims, tsr_error_t *err);
/* The present copy into values (as for upload). Blocking; the queue's work before it
 * included. */
TSR_NODISCARD tsr_status gpu_field_download(gpu_field_t *f, void *values, const grid_dims_t *dims,
                                            tsr_error_t *err);

/* Whether the field is streamed in place (shape.stream); then cur says whether it is
 * swapped. */
int gpu_field_in_place(const gpu_field_t *f);

/* The other copy becomes the present one (after a kernel wrote it); a field streamed in
 * place changes between natural and swapped. */
void gpu_field_swap(gpu_field_t *f);

/* Message bytes of direction d (every box of its slice). */
size_t gpu_field_slot_bytes(const gpu_field_t *f, int d);

/* ---- kernels over many blocks ---- */

/* Blocks grouped for launches over many of them: blocks of the same size (and the same
 * key, where keys are given: e.g. their program) whose fields lie in the same sets, so
 * that one launch covers a group, every block finding its fields at element offsets of
 * the sets' arrays. fields: nfields per block, block b's at fields[b * nfields + f]
 * (NULL where a block lacks that field; then every block of its group does). */
typedef struct gpu_field_group {
  int n[3];               /* the size of its blocks */
  const void *key;
  size_t nblocks;
  size_t *members;        /* the blocks' indices in the list given */
  gpu_field_t **first;    /* per field: the first block's (its layout is every block's:
                             gpu_field_dims; its sets' arrays: gpu_field_array); NULL
                             where absent */
  gpu_buffer_t *bases;    /* per field: cl_long per block, where its field starts in the
                             set's arrays (empty where absent) */
  gpu_buffer_t boxes;     /* cl_int lo[3], hi[3] per block (gpu_field_groups_boxes) */
} gpu_field_group_t;

typedef struct gpu_field_groups {
  gpu_field_group_t *group;
  size_t count;
  int nfields;
} gpu_field_groups_t;

/* Each group's boxes on the device (gpu_field_group_t.boxes, for a kernel's part of an
 * overlapped step), from boxes[6 m .. 6 m + 5] (lo x, y, z, hi x, y, z) of member m of
 * the list the groups were made from; at the first call only (the boxes of a run stay
 * the same). */
TSR_NODISCARD tsr_status gpu_field_groups_boxes(gpu_field_groups_t *gs, opencl_context_t *cl,
                                                const int *boxes, tsr_error_t *err);
TSR_NODISCARD tsr_status gpu_field_groups_make(gpu_field_t *const *fields, const void *const *keys,
                                               size_t nblocks, int nfields,
                                               gpu_field_groups_t *out, tsr_error_t *err);
void gpu_field_groups_clear(gpu_field_groups_t *g);

/* ---- the ghost exchange, step by step (the field kit's registry items) ----
 * The staging functions take the fields of many blocks, of any sets; each set they
 * touch is staged once (one pack or unpack launch for all its blocks, one transfer). */

/* Brings the messages extracted in this exchange to the host: extract_dirs[k] (NULL:
 * none) has bit d set where slot d of fields[k] is extracted. Per set, those slots of
 * every block (the present copies) are packed one after the other (one launch) into the
 * process's array, after the sets packed before in this exchange; the first
 * gpu_field_stage_wait or gpu_field_extract of the exchange reads all of them in one
 * transfer of exactly their bytes. Slots that stay on the device need nothing here (the
 * unpack reads the sender's cells). */
TSR_NODISCARD tsr_status gpu_field_stage_out(gpu_field_t *const *fields, size_t n,
                                             const uint32_t *extract_dirs, tsr_error_t *err);
/* Reads what the exchange packed (every set's, one transfer, at the first call) and
 * waits for it. */
TSR_NODISCARD tsr_status gpu_field_stage_wait(gpu_field_t *f, tsr_error_t *err);
/* Copies the packed values of slot d from the host copy (len bytes: gpu_field_slot_bytes). */
TSR_NODISCARD tsr_status gpu_field_extract(gpu_field_t *f, int d, uint8_t *out, size_t len,
                                           tsr_error_t *err);
/* Copies a message of slot d into the host copy of the unpack array and marks the slot
 * for unpacking. */
TSR_NODISCARD tsr_status gpu_field_insert(gpu_field_t *f, int d, const uint8_t *in, size_t len,
                                          tsr_error_t *err);
/* Slot d of to unpacks from from's packed values (the same set; from staged out). */
TSR_NODISCARD tsr_status gpu_field_copy_from(gpu_field_t *to, const gpu_field_t *from, int d,
                                             tsr_error_t *err);
/* For every set of the fields: unpacks every marked slot of its blocks into their
 * present copies' ghost layers (one launch), after writing what came through the host
 * to the device: every set's insertions of the exchange in one transfer, at the first
 * call. */
TSR_NODISCARD tsr_status gpu_field_stage_in(gpu_field_t *const *fields, size_t n,
                                            tsr_error_t *err);

#endif
