/* patch: the whole simulation domain, cut into a Cartesian grid of blocks.
 *
 * Every process holds the management data of every block (block_info_t: BlockID, cell
 * interval, AABB, rank, hs, bs); only the owning process holds a block's simulation
 * data (patch_block_data).
 *
 * Uneven splits: when the block count along an axis does not divide the cell count,
 * the first (cells % blocks) blocks along that axis get one cell more, so block sizes
 * differ by at most one cell. A grid with more blocks than cells along an axis is
 * rejected.
 *
 * BlockID: the linear index in the block grid, x fastest: id = ix + bx*(iy + by*iz). */
#ifndef PATCH_H
#define PATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "block_data.h"
#include "tsr_error.h"

typedef struct patch patch_t;

/* The most cells along one axis (2^30) and in all (2^48, about 2.8e14): a block's extent
 * with ghost layers stays far inside an int, and every byte count of a block (cells with
 * ghost layers x values per cell x bytes per value x grids) inside 64 bits. */
#define PATCH_MAX_AXIS_CELLS ((int64_t)1 << 30)
#define PATCH_MAX_CELLS ((int64_t)1 << 48)

/* The most blocks in all (2^20). Every process plans every block (the plan is global, so
 * that any process can find any block's rank and neighbours without asking): about 800
 * bytes and 4 us of planning per block and process (docs/performance.md), 0.8 GB and 4 s
 * for 2^20; 8 M blocks took 78 s and 4.2 GB before the first message. A block grid that
 * fine is a mistake (blocks of a few cells) or a run for a distributed plan, which
 * tessera does not have. */
#define PATCH_MAX_BLOCKS ((int64_t)1 << 20)

typedef struct patch_options {
  int64_t cells[3];  /* global cell counts, each in 1..PATCH_MAX_AXIS_CELLS, at most
                        PATCH_MAX_CELLS in all */
  int blocks[3];     /* block grid (bx, by, bz), each in 1..cells, at most
                        PATCH_MAX_BLOCKS in all */
  bool periodic[3];  /* periodicity per axis */
} patch_options_t;

/* 1 cell, 1 block, no periodicity: callers set the cells. */
patch_options_t patch_options_default(void);

/* The cells of block i of the grid along axis a: [*lo, *lo + *size) (uneven splits:
 * the first cells % blocks blocks one cell more). */
void patch_axis_span(const patch_options_t *opts, int a, int64_t i, int64_t *lo, int *size);

/* Checks ranges; messages name the option ("cells[1]", "blocks[0]"). */
TSR_NODISCARD tsr_status patch_options_validate(const patch_options_t *opts, tsr_error_t *err);

typedef struct block_info {
  int32_t id;            /* BlockID */
  int grid[3];           /* position in the block grid */
  int64_t lo[3];         /* first global cell along each axis */
  int size[3];           /* cells along each axis; the interval is [lo, lo + size) */
  double aabb_min[3];    /* axis-aligned bounding box in lattice units (cell width 1) */
  double aabb_max[3];
  int rank;              /* owning process */
  uint32_t hs;           /* hardware selector id of the owning process */
  uint64_t bs;           /* block selector set: bit i set when the block carries the bs
                            of id i (e.g. fluid and thermal); see patch_has_bs */
} block_info_t;

/* The interior cells of a block. */
static inline int64_t patch_block_cells(const block_info_t *b) {
  return (int64_t)b->size[0] * b->size[1] * b->size[2];
}

/* Fills rank_of_block[patch_block_count(patch)] with ranks in 0..nranks-1. It may read
 * the geometry of the patch (ids, grid positions, sizes) but not ranks, hs or bs. */
typedef tsr_status (*patch_assign_fn)(const patch_t *patch, int nranks, const void *ctx,
                                      int *rank_of_block, tsr_error_t *err);

typedef struct patch_layout {
  int nranks;                 /* number of processes, >= 1 */
  int my_rank;                /* this process, in 0..nranks-1 */
  const uint32_t *hs_of_rank; /* nranks hs ids (copied); NULL: hs 0 for every rank */
  const uint32_t *hs_of_block; /* hs id of every block, by BlockID (read during
                                  patch_create); NULL: each block its rank's hs */
  uint64_t bs;                /* initial bs set of every block (bit i: bs id i) */
  patch_assign_fn assign;     /* NULL: patch_morton_even */
  const void *assign_ctx;
} patch_layout_t;

/* Builds the block grid, assigns blocks to ranks and creates an empty data list for
 * every block this process owns. */
TSR_NODISCARD tsr_status patch_create(const patch_options_t *opts, const patch_layout_t *layout,
                                      patch_t **out, tsr_error_t *err);

/* NULL-safe; frees all block data; sets *patch = NULL. */
void patch_free(patch_t **patch);

const patch_options_t *patch_options(const patch_t *patch);
int32_t patch_block_count(const patch_t *patch);
int patch_nranks(const patch_t *patch);
int patch_my_rank(const patch_t *patch);

/* Borrowed; id must be in 0..patch_block_count-1 (NULL otherwise). */
const block_info_t *patch_block(const patch_t *patch, int32_t id);

/* BlockID at grid position (ix, iy, iz), or -1 outside the grid. */
int32_t patch_block_at(const patch_t *patch, int ix, int iy, int iz);

/* Neighbour of block id in direction d (0..25), with periodic wrap; -1 where the
 * domain ends on a non-periodic axis. With one block along a periodic axis a block
 * is its own neighbour. */
int32_t patch_neighbor(const patch_t *patch, int32_t id, int d);

/* Blocks owned by this process, in increasing BlockID. */
int32_t patch_local_count(const patch_t *patch);
int32_t patch_local_id(const patch_t *patch, int32_t i);
/* Position of block id in that list, or -1 when this process does not own it. */
int32_t patch_local_index(const patch_t *patch, int32_t id);

/* Views the patch as process `rank` would: its blocks become the local ones (ids[n], in
 * increasing BlockID; the caller's list, copied). For a plan that asks what each process
 * will hold; the block data stay as they are. */
TSR_NODISCARD tsr_status patch_view_as(patch_t *patch, int rank, const int32_t *ids, int32_t n,
                                       tsr_error_t *err);

/* Number of blocks owned by a rank. */
int32_t patch_rank_block_count(const patch_t *patch, int rank);

/* Borrowed data list of a block this process owns; NULL for other blocks. */
block_data_t *patch_block_data(const patch_t *patch, int32_t id);

/* Whether a block carries the bs of this id. */
static inline bool patch_has_bs(const block_info_t *b, uint32_t bs_id) {
  return bs_id < 64 && (b->bs >> bs_id & 1);
}

/* The bs set of one bs id. */
static inline uint64_t patch_bs_bit(uint32_t bs_id) { return bs_id < 64 ? UINT64_C(1) << bs_id : 0; }

/* Sets the bs set of one block (sweeps classify blocks after the patch is built, from
 * the geometry every process knows, so all processes set the same values; a sweep
 * changes the names it owns and keeps the others'). */
TSR_NODISCARD tsr_status patch_set_bs(patch_t *patch, int32_t id, uint64_t bs, tsr_error_t *err);

/* Checks that the blocks suit a field with ghost layers of width[a] cells along axis a
 * (what = the field's name, for the message): each width in 0..DIRECTION_MAX_WIDTH, and
 * every block at least width[a] cells thick along every axis a, except where that axis
 * is periodic with one block (the ghost cells then wrap around the block itself; see
 * direction.h). The message names the field, the block, the axis, its size and what is
 * allowed. The same verdict on every process (it reads block metadata only). */
TSR_NODISCARD tsr_status patch_check_ghost_width(const patch_t *patch, const int width[3],
                                                 const char *what, tsr_error_t *err);
/* Morton code of a grid position (21 bits per axis). */
uint64_t patch_morton_code(int ix, int iy, int iz);

/* Fills order[patch_block_count] with BlockIDs sorted by Morton code. */
TSR_NODISCARD tsr_status patch_morton_order(const patch_t *patch, int32_t *order,
                                            tsr_error_t *err);

/* The default assignment (a patch_assign_fn): the blocks along a Morton (Z-order) curve
 * over their grid positions, every rank a contiguous run of that order; run lengths
 * differ by at most one block, so the blocks of a process stay spatially together. */
TSR_NODISCARD tsr_status patch_morton_even(const patch_t *patch, int nranks, const void *ctx,
                                           int *rank_of_block, tsr_error_t *err);

#endif
