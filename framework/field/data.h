/* data: simulation data of the local blocks, allocated by the registry's allocators, and
 * the running of kernel items over them.
 *
 * data_allocate interns the data name as a data id and, for every block this process
 * owns, looks up the allocator item of that name for the block's hs and bs, allocates
 * (the blocks of an item with .alloc_batch in one call), and hands the item to the
 * block's data list together with the allocator's free function. Collective: every rank
 * returns the same verdict.
 *
 * A data_items_t is a kernel or boundary item per local block, grouped for running: the
 * blocks whose item has .batch form one batch per item, run with one call of its .work
 * (its state, and the grouping of its .group fields, kept until data_items_free); the
 * others run block by block, each a call with a batch of one (registry_work_t). */
#ifndef DATA_H
#define DATA_H

#include <mpi.h>
#include <stdint.h>

#include "patch.h"
#include "registry.h"
#include "tsr_error.h"

TSR_NODISCARD tsr_status data_allocate(MPI_Comm comm, registry_t *reg, patch_t *patch,
                                       const char *name, uint64_t fs, int *data_id,
                                       tsr_error_t *err);

typedef struct data_items data_items_t;

/* Looks up the item `name` of kind for every local block (by the simulation's fs and
 * each block's hs and bs) and groups them. Not collective. */
TSR_NODISCARD tsr_status data_items_create(const registry_t *reg, patch_t *patch,
                                           registry_kind_t kind, const char *name, uint64_t fs,
                                           data_items_t **out, tsr_error_t *err);
void data_items_free(data_items_t **items);

/* Runs the items: each batch in one call, then the other blocks one by one. With at
 * least two blocks per OpenMP thread whose items are concurrent (registry_item_t), those
 * blocks go through one parallel region, a block per call and thread (dynamic schedule:
 * blocks of different sizes), instead of each call starting the threads for its own
 * block. The first failure is reported, naming the item and the block (or the batch).
 * Not collective. */
TSR_NODISCARD tsr_status data_items_run(data_items_t *items, tsr_error_t *err);

/* One phase of an overlapped step (registry_region_t): regions[i] the inner box and late
 * directions of local block i. REGISTRY_PART_INNER runs the blocks with no late
 * direction whole and the others' INNER part (items with .parts); REGISTRY_PART_SHELL
 * their SHELL part, and whole the blocks whose item has no .parts or whose box is
 * empty; the batches
 * as data_items_split decided (whole in SHELL where they do not split). what: the batches, the other blocks, or both.
 * progress(arg), where given, is called after each block that runs on its own
 * (not in the parallel region of concurrent items): what keeps messages moving. Not
 * collective. */
typedef enum data_what { DATA_BATCHES = 1, DATA_BLOCKS = 2, DATA_ALL = 3 } data_what_t;
TSR_NODISCARD tsr_status data_items_run_part(data_items_t *items, registry_part_t phase,
                                             data_what_t what,
                                             const registry_region_t *regions,
                                             void (*progress)(void *), void *arg,
                                             tsr_error_t *err);

/* Whether an overlapped step splits the batches of a sweep (boundary: its boundary
 * items, or NULL; kernel: its kernel items): where every kernel batch has .parts and
 * every boundary batch's .batch_early allows it for these regions (regions[i] for local
 * block i), data_items_run_part runs the boundary batches in INNER (whole, or their INNER
 * part, then the rest in SHELL) and the kernel batches' parts in
 * INNER and SHELL; else every batch whole in SHELL. Not collective. */
TSR_NODISCARD tsr_status data_items_split(data_items_t *boundary, data_items_t *kernel,
                                          const registry_region_t *regions, tsr_error_t *err);

/* How many batches the items have, and whether data_items_split split them. */
int data_items_batch_count(const data_items_t *items);
bool data_items_splits(const data_items_t *items);

/* Runs the kernel item `name` once on every local block (data_items_create, _run and
 * _free). Not collective: a failure is this rank's alone until the caller reduces it. */
TSR_NODISCARD tsr_status data_run_kernel(const registry_t *reg, patch_t *patch, const char *name,
                                         uint64_t fs, tsr_error_t *err);

#endif
