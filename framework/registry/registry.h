/* registry: the functionality registry. Every item is registered with a kind, a name
 * (the sweep or field it belongs to) and three selector expressions (fs, hs, bs; see
 * selector.h); registry_lookup returns the single item whose selectors match a
 * request, or fails naming the request and every candidate. There is no fallback and
 * no first match: two matching items are an error.
 *
 * Sweeps add their items through one `<sweep>_register(registry_t *, tsr_error_t *)`
 * each; framework/ names no sweep.
 *
 * The function fields an item must carry depend on its kind:
 *   REGISTRY_KIND_KERNEL      .work; optionally .batch, .parts, .group
 *   REGISTRY_KIND_BOUNDARY    .work; optionally .batch, .parts (a batch: with
 *                             .batch_early), .group
 *   REGISTRY_KIND_ALLOCATOR   .alloc or .alloc_batch (or both), and .free
 *   REGISTRY_KIND_EXTRACTION  .extract and .size; optionally .stage_out, and
 *                             .stage_wait (only beside .stage_out)
 *   REGISTRY_KIND_INSERTION   .insert and .size; optionally .stage_in
 *   REGISTRY_KIND_COPY        .copy
 * and no others. */
#ifndef REGISTRY_H
#define REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "block_data.h"
#include "patch.h"
#include "selector.h"
#include "tsr_error.h"

typedef struct registry registry_t;

typedef enum registry_kind {
  REGISTRY_KIND_KERNEL = 0,
  REGISTRY_KIND_ALLOCATOR,
  REGISTRY_KIND_EXTRACTION,
  REGISTRY_KIND_INSERTION,
  REGISTRY_KIND_BOUNDARY,
  REGISTRY_KIND_COPY,
  REGISTRY_KIND_COUNT
} registry_kind_t;

/* Allocates the item of one block's data list. */
typedef tsr_status (*registry_alloc_fn)(const block_info_t *block, void *ctx, void **out,
                                        tsr_error_t *err);
/* Frees what registry_alloc_fn made (NULL-safe). */
typedef void (*registry_free_fn)(void *data, void *ctx);
/* Payload bytes of the message a block sends in direction dir; computed from metadata
 * alone, so any process can compute it for any block. */
typedef size_t (*registry_size_fn)(const block_info_t *block, int dir, void *ctx);
/* Packs the data a message in direction dir carries into out (cap bytes), in the
 * hardware-independent message layout; sets *written. */
typedef tsr_status (*registry_extract_fn)(const block_info_t *block, const void *data, int dir,
                                          uint8_t *out, size_t cap, size_t *written, void *ctx,
                                          tsr_error_t *err);
/* Unpacks a message that travelled in direction dir (packed by the neighbour on the
 * side -dir) into the ghost layer on that side. */
typedef tsr_status (*registry_insert_fn)(const block_info_t *block, void *data, int dir,
                                         const uint8_t *in, size_t len, void *ctx,
                                         tsr_error_t *err);
/* A direct ghost-layer copy between two blocks of one process and one hardware: what
 * extract(src, dir) then insert(dst, dir) would do, without the message layout. */
typedef struct registry_copy_task {
  const block_info_t *src;
  const void *src_data;
  const block_info_t *dst;
  void *dst_data;
  int dir; /* from src to dst */
} registry_copy_task_t;
/* Carries out n independent copies (they may run in parallel). */
typedef tsr_status (*registry_copy_fn)(const registry_copy_task_t *tasks, size_t n, void *ctx,
                                       tsr_error_t *err);
/* Staging around one ghost exchange, for data that does not live in host memory (a GPU
 * block). Each function gets, in one call per item and exchange, every local block
 * of that item it concerns (tasks in local block order), so that a device stages them
 * all with a fixed number of launches and transfers:
 *   stage_out  runs once per exchange on every local block that sends anything, before
 *              its first extraction or copy (host_bound: extractions into host buffers
 *              follow; 0: only direct copies to blocks of the same hardware); it may
 *              leave a device-to-host transfer in flight;
 *   stage_wait (optional; NULL: nothing to wait for) waits until what stage_out started
 *              for host-bound extraction has arrived on the host. comm calls it with
 *              every block whose stage_out ran with host_bound = 1, after all stage_out
 *              calls of the exchange and before the first extraction, so that the
 *              transfer time is measured apart from the extraction (the extraction may
 *              still wait itself; that is then cheap). host_bound is always 1;
 *   stage_in   runs once per exchange on every local block that receives anything,
 *              after its last insertion or copy.
 * comm_timing (comm.h) counts the time in all three as device time. */
typedef struct registry_stage_task {
  const block_info_t *block;
  void *data;
  int host_bound;
  uint32_t extract_dirs; /* bit d: an extraction in direction d follows in this exchange
                            (so that stage_out brings those bytes alone to the host) */
} registry_stage_task_t;
typedef tsr_status (*registry_stage_fn)(const registry_stage_task_t *tasks, size_t n, void *ctx,
                                        tsr_error_t *err);
/* Where a call of a kernel or boundary item falls in an overlapped step (timeloop.h): a
 * sweep's exchange starts, its items run on what needs no late ghost value (INNER), the
 * exchange finishes, and they run on the rest (SHELL). The ghost slices of the
 * directions in `late` (bit d: direction d, direction.h) arrive between the two calls;
 * every other ghost slice the exchange fills is there before INNER. The box [lo, hi) of
 * interior cells is cut so that no cell in it lies within the exchanged fields' ghost
 * widths of a late slice:
 *   a kernel item computes the cells of the box in INNER and the others in SHELL;
 *   a boundary item does in INNER the work that reads and writes no cell of a late ghost
 *   slice, the rest in SHELL (work that writes a cell a box cell reads belongs to INNER).
 * INNER before SHELL, on every block of the item, and the two together do the whole
 * work. */
typedef enum registry_part { REGISTRY_PART_INNER = 1, REGISTRY_PART_SHELL = 2 } registry_part_t;
typedef struct registry_region {
  registry_part_t part;
  int lo[3], hi[3];
  uint32_t late;
} registry_region_t;

/* A list of local blocks, in local order: the blocks of one call of an item. The caller
 * keeps the list of a batch item (registry_item_t.batch) for as long as its blocks hold
 * (a time loop: for the run), so the item may keep what it prepared for these blocks
 * (tables on a device) in state between calls (registry_batch_state); state_free
 * releases it when the list goes. */
typedef struct registry_batch {
  size_t n;
  const block_info_t **blocks;
  block_data_t **data;
  void *state;
  void (*state_free)(void *state);
} registry_batch_t;

struct gpu_field_groups; /* kernels_gpu/gpu_field.h */

/* One call of a kernel or boundary item: its blocks (one block, or every local block of
 * a batch item), the part of the work (0: all of it; INNER or SHELL for an item with
 * .parts in an overlapped step, regions[k] for batch->blocks[k]), and, for an item that
 * names .group fields, those fields' device storage grouped by the framework (blocks of
 * one size and key per group, each group's boxes set from regions in a part call). */
typedef struct registry_work {
  registry_batch_t *batch;
  registry_part_t part;                   /* 0: the whole work */
  const registry_region_t *regions;       /* [batch->n] where part != 0, else NULL */
  const struct gpu_field_groups *groups;  /* NULL where the item names no .group */
} registry_work_t;
/* The work of a kernel or boundary item. */
typedef tsr_status (*registry_work_fn)(const registry_work_t *w, void *ctx, tsr_error_t *err);

/* When a boundary batch item may run in an overlapped step (regions[k] for
 * batch->blocks[k]): *early becomes
 *   REGISTRY_EARLY_WHOLE where all of its work reads and writes no cell of a late ghost
 *     slice (regions[k].late): it runs whole in INNER, before the kernel's inner part;
 *   REGISTRY_EARLY_PARTS (items with .parts) where its work splits so: the part that touches no late slice
 *     in INNER, before the kernel's inner part, the rest in SHELL, after the exchange and
 *     before the kernel's shell part; and neither part reads or writes what the
 *     kernel's inner part does;
 *   REGISTRY_EARLY_NO otherwise: the sweep's batches run whole after the exchange. */
enum { REGISTRY_EARLY_NO = 0, REGISTRY_EARLY_WHOLE = 1, REGISTRY_EARLY_PARTS = 2 };
typedef tsr_status (*registry_batch_early_fn)(registry_batch_t *batch,
                                              const registry_region_t *regions, void *ctx,
                                              int *early, tsr_error_t *err);
/* What a batch item keeps for its blocks: made at the first call by make (from the
 * batch's blocks and the item's ctx), kept with the batch and freed by free_state when
 * the batch goes; *out the state. */
typedef tsr_status (*registry_state_make_fn)(registry_batch_t *batch, const void *ctx,
                                             void **state, tsr_error_t *err);
TSR_NODISCARD tsr_status registry_batch_state(registry_batch_t *batch, registry_state_make_fn make,
                                              void (*free_state)(void *state), const void *ctx,
                                              void **out, tsr_error_t *err);
/* Which group of .group a block goes to beside its size (blocks of one size and one key
 * share a launch): a small integer, 0 .. REGISTRY_MAX_KEYS - 1. */
typedef int (*registry_group_key_fn)(const block_info_t *block, const void *ctx);
enum { REGISTRY_MAX_GROUP = 4, REGISTRY_MAX_KEYS = 64 };
/* Allocates the data of every block of a batch at once: out[k] for batch->blocks[k]
 * (each freed by the item's .free). batch->data is NULL. */
typedef tsr_status (*registry_alloc_batch_fn)(registry_batch_t *batch, void *ctx, void **out,
                                              tsr_error_t *err);

typedef struct registry_item {
  registry_kind_t kind;
  const char *name; /* "<module>.<what>", e.g. "flow.stream_collide" (copied) */
  const char *fs;   /* selector expressions (see selector.h) */
  const char *hs;
  const char *bs;
  registry_work_fn work;    /* kernel and boundary items */
  int batch;                /* kernel and boundary items: 1 where a time loop calls .work
                               once per step with every local block of the item (a
                               device's blocks, with a fixed number of launches); 0: once
                               per block, in parallel where .concurrent */
  int parts;                /* kernel and boundary items: 1 where .work does its work in
                               two parts for an overlapped step (registry_region_t);
                               without it the item runs whole once the exchange is done.
                               A sweep's batches split only where every kernel batch has
                               .parts and every boundary batch's .batch_early allows it */
  registry_batch_early_fn batch_early; /* boundary batch items: when they may run
                                          early (without it: after the exchange) */
  int group[REGISTRY_MAX_GROUP]; /* batch items: data ids of fields whose device storage
                                    the framework groups for .work (registry_work_t);
                                    blocks without the first are left out */
  int ngroup;
  registry_group_key_fn group_key; /* with .group: the key beside the size; NULL: 0 */
  registry_alloc_fn alloc;
  registry_alloc_batch_fn alloc_batch; /* where given, used instead of .alloc */
  registry_free_fn free;
  registry_size_fn size;
  registry_extract_fn extract;
  registry_insert_fn insert;
  registry_copy_fn copy;
  registry_stage_fn stage_out;
  registry_stage_fn stage_wait;
  registry_stage_fn stage_in;
  void *ctx;        /* borrowed; passed to every function of the item */
  int concurrent;   /* kernel and boundary items: 1 when calls on different blocks may run
                       at the same time on different threads; the time loop then runs the
                       blocks of the item in one parallel region over the OpenMP threads
                       where there are at least two blocks per thread, each call on one
                       thread (an OpenMP region inside it runs with a team of one) */
} registry_item_t;

/* A request: the simulation's fs switches and one block's hs and bs set. */
typedef struct registry_request {
  uint64_t fs;
  uint32_t hs;
  uint64_t bs; /* the block's bs set (block_info_t.bs) */
} registry_request_t;

TSR_NODISCARD tsr_status registry_create(registry_t **out, tsr_error_t *err);
void registry_free(registry_t **reg);

/* Adds a copy of item. Rejects a missing name, a bad selector expression, function
 * fields that do not fit the kind, and an item whose selectors overlap those of an
 * item with the same kind and name (the lookup would be ambiguous). */
TSR_NODISCARD tsr_status registry_add(registry_t *reg, const registry_item_t *item,
                                      tsr_error_t *err);

/* The single item of this kind and name that matches req, borrowed until the registry
 * is freed. An fs expression matches when all its names are on in req.fs and all its
 * '!' names are off; hs matches when req's id is among the alternatives; bs "*" matches
 * every block, and alternatives match a block whose bs set holds one of them. A block
 * whose set matches two items (e.g. one registered for "fluid", one for "thermal", and
 * a block that carries both) is an error naming both: registry_add can only rule out
 * items whose alternatives share a name. */
TSR_NODISCARD tsr_status registry_lookup(const registry_t *reg, registry_kind_t kind,
                                         const char *name, const registry_request_t *req,
                                         const registry_item_t **out, tsr_error_t *err);

/* The selector table of the registry (borrowed). */
selector_table_t *registry_selectors(registry_t *reg);
const selector_table_t *registry_selectors_const(const registry_t *reg);
/* The hs value of GPU blocks ("gpu"), or UINT32_MAX where the table has none: what a
 * module's local_bytes compares a block's hs with. */
uint32_t registry_gpu_hs(const registry_t *reg);
/* A kernel item's work that does nothing: what an item name resolves to for the blocks
 * that have no work in it (solid blocks). */
tsr_status registry_nothing(const registry_work_t *w, void *ctx, tsr_error_t *err);

/* Declares fs switches that exclude each other (at most one of them is on in any
 * simulation), e.g. "srt,trt" or "sp,dp". Items whose fs expressions name two different
 * switches of one such group can never both match, so registry_add does not call them
 * ambiguous; registry_parse_fs rejects a set with two of them. Declare groups before
 * adding the items that rely on them. */
TSR_NODISCARD tsr_status registry_exclusive(registry_t *reg, const char *switches,
                                            tsr_error_t *err);

/* Parses an fs set such as "trt,dp" (names only, no '!') into the switches of a
 * simulation, interning the names. */
TSR_NODISCARD tsr_status registry_parse_fs(registry_t *reg, const char *fs, uint64_t *bits,
                                           tsr_error_t *err);

/* Data ids: small integers that key block data lists, one per data name. */
TSR_NODISCARD tsr_status registry_data_id(registry_t *reg, const char *name, int *id,
                                          tsr_error_t *err);

/* Stores a copy of n bytes that lives as long as the registry and returns it in *copy:
 * the home of a sweep's item context (parameters, data ids) that its items borrow. */
TSR_NODISCARD tsr_status registry_keep(registry_t *reg, const void *bytes, size_t n, void **copy,
                                       tsr_error_t *err);

/* Number of items, and "kernel", "allocator", ... for a kind. */
size_t registry_count(const registry_t *reg);
const char *registry_kind_name(registry_kind_t kind);

#endif
