#include "patch.h"

#include <stdlib.h>
#include <string.h>

#include "direction.h"

struct patch {
  patch_options_t opts;
  int nranks, my_rank;
  int32_t nblocks;
  block_info_t *blocks;
  block_data_t **data;   /* per block; non-NULL only for local blocks */
  int32_t *local_ids;
  int32_t nlocal;
  int32_t *per_rank;     /* block count per rank */
};

static const char axis_names[3] = {'x', 'y', 'z'};

void patch_axis_span(const patch_options_t *opts, int a, int64_t i, int64_t *lo, int *size) {
  const int64_t base = opts->cells[a] / opts->blocks[a], extra = opts->cells[a] % opts->blocks[a];
  *lo = i * base + (i < extra ? i : extra);
  *size = (int)(base + (i < extra ? 1 : 0));
}

patch_options_t patch_options_default(void) {
  return (patch_options_t){.cells = {1, 1, 1}, .blocks = {1, 1, 1}, .periodic = {false}};
}

tsr_status patch_options_validate(const patch_options_t *opts, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int64_t nblocks = 1;
  for (int a = 0; a < 3; ++a) {
    TSR_CHECK(opts->cells[a] >= 1 && opts->cells[a] <= PATCH_MAX_AXIS_CELLS, TSR_ERR_INVALID,
              "cells[%d] (%c) = %lld: allowed are 1..%lld", a, axis_names[a],
              (long long)opts->cells[a], (long long)PATCH_MAX_AXIS_CELLS);
    TSR_CHECK(opts->blocks[a] >= 1, TSR_ERR_INVALID,
              "blocks[%d] (%c) = %d: at least one block per axis is needed", a,
              axis_names[a], opts->blocks[a]);
    TSR_CHECK(opts->blocks[a] <= opts->cells[a], TSR_ERR_INVALID,
              "blocks[%d] (%c) = %d exceeds cells[%d] = %lld: every block needs at least "
              "one cell along each axis",
              a, axis_names[a], opts->blocks[a], a, (long long)opts->cells[a]);
    nblocks *= opts->blocks[a];
    TSR_CHECK(nblocks <= PATCH_MAX_BLOCKS, TSR_ERR_INVALID,
              "blocks = [%d, %d, %d]: more than %lld (2^20) blocks in all; every process "
              "plans every block (about 800 bytes and 4 us each), so %.3g blocks would take "
              "about %.2g GB and %.2g s per process before step 0: use fewer, larger blocks "
              "(32^3 cells or more run at full speed)",
              opts->blocks[0], opts->blocks[1], opts->blocks[2], (long long)PATCH_MAX_BLOCKS,
              (double)opts->blocks[0] * opts->blocks[1] * opts->blocks[2],
              800e-9 * opts->blocks[0] * opts->blocks[1] * opts->blocks[2],
              4e-6 * opts->blocks[0] * opts->blocks[1] * opts->blocks[2]);
  }
  TSR_CHECK(opts->cells[0] <= PATCH_MAX_CELLS / opts->cells[1] / opts->cells[2], TSR_ERR_INVALID,
            "cells = [%lld, %lld, %lld]: more than %lld (2^48) cells in all",
            (long long)opts->cells[0], (long long)opts->cells[1], (long long)opts->cells[2],
            (long long)PATCH_MAX_CELLS);
cleanup:
  return st;
}

void patch_free(patch_t **patch) {
  if (!patch || !*patch) return;
  patch_t *p = *patch;
  if (p->data)
    for (int32_t i = 0; i < p->nblocks; ++i) block_data_free(&p->data[i]);
  free(p->data);
  free(p->blocks);
  free(p->local_ids);
  free(p->per_rank);
  free(p);
  *patch = NULL;
}

tsr_status patch_create(const patch_options_t *opts, const patch_layout_t *layout,
                        patch_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  patch_t *p = NULL;
  int *ranks = NULL;
  *out = NULL;
  TSR_TRY(patch_options_validate(opts, err));
  TSR_CHECK(layout->nranks >= 1, TSR_ERR_INVALID, "the number of ranks is %d; at least 1",
            layout->nranks);
  TSR_CHECK(layout->my_rank >= 0 && layout->my_rank < layout->nranks, TSR_ERR_INVALID,
            "rank %d is outside 0..%d", layout->my_rank, layout->nranks - 1);

  p = calloc(1, sizeof *p);
  TSR_CHECK(p, TSR_ERR_NOMEM, "out of memory allocating the patch");
  p->opts = *opts;
  p->nranks = layout->nranks;
  p->my_rank = layout->my_rank;
  p->nblocks = opts->blocks[0] * opts->blocks[1] * opts->blocks[2];
  p->blocks = calloc((size_t)p->nblocks, sizeof *p->blocks);
  p->data = calloc((size_t)p->nblocks, sizeof *p->data);
  p->per_rank = calloc((size_t)p->nranks, sizeof *p->per_rank);
  ranks = malloc((size_t)p->nblocks * sizeof *ranks);
  TSR_CHECK(p->blocks && p->data && p->per_rank && ranks, TSR_ERR_NOMEM,
            "out of memory allocating the metadata of %d blocks", (int)p->nblocks);

  for (int32_t id = 0; id < p->nblocks; ++id) {
    block_info_t *b = &p->blocks[id];
    b->id = id;
    b->grid[0] = id % opts->blocks[0];
    b->grid[1] = id / opts->blocks[0] % opts->blocks[1];
    b->grid[2] = id / opts->blocks[0] / opts->blocks[1];
    for (int a = 0; a < 3; ++a) {
      patch_axis_span(opts, a, b->grid[a], &b->lo[a], &b->size[a]);
      b->aabb_min[a] = (double)b->lo[a];
      b->aabb_max[a] = (double)(b->lo[a] + b->size[a]);
    }
    b->bs = layout->bs;
    b->rank = -1;
  }

  for (int32_t id = 0; id < p->nblocks; ++id) ranks[id] = -1;
  patch_assign_fn assign = layout->assign ? layout->assign : patch_morton_even;
  TSR_TRY(assign(p, p->nranks, layout->assign_ctx, ranks, err));
  for (int32_t id = 0; id < p->nblocks; ++id) {
    TSR_CHECK(ranks[id] >= 0 && ranks[id] < p->nranks, TSR_ERR_INTERNAL,
              "block assignment gave BlockID %d the rank %d, outside 0..%d", (int)id,
              ranks[id], p->nranks - 1);
    block_info_t *b = &p->blocks[id];
    b->rank = ranks[id];
    b->hs = layout->hs_of_block  ? layout->hs_of_block[b->id]
            : layout->hs_of_rank ? layout->hs_of_rank[b->rank]
                                 : 0;
    p->per_rank[b->rank]++;
  }

  p->nlocal = p->per_rank[p->my_rank];
  p->local_ids = malloc((size_t)(p->nlocal ? p->nlocal : 1) * sizeof *p->local_ids);
  TSR_CHECK(p->local_ids, TSR_ERR_NOMEM, "out of memory listing local blocks");
  int32_t k = 0;
  for (int32_t id = 0; id < p->nblocks; ++id) {
    if (p->blocks[id].rank != p->my_rank) continue;
    p->local_ids[k++] = id;
    TSR_TRY(block_data_create(&p->data[id], err));
  }
  *out = p;
  p = NULL;
cleanup:
  free(ranks);
  patch_free(&p);
  return st;
}

const patch_options_t *patch_options(const patch_t *patch) { return &patch->opts; }
int32_t patch_block_count(const patch_t *patch) { return patch->nblocks; }
int patch_nranks(const patch_t *patch) { return patch->nranks; }
int patch_my_rank(const patch_t *patch) { return patch->my_rank; }

const block_info_t *patch_block(const patch_t *patch, int32_t id) {
  if (id < 0 || id >= patch->nblocks) return NULL;
  return &patch->blocks[id];
}

int32_t patch_block_at(const patch_t *patch, int ix, int iy, int iz) {
  const int *g = patch->opts.blocks;
  if (ix < 0 || iy < 0 || iz < 0 || ix >= g[0] || iy >= g[1] || iz >= g[2]) return -1;
  return ix + g[0] * (iy + g[1] * iz);
}

int32_t patch_neighbor(const patch_t *patch, int32_t id, int d) {
  if (id < 0 || id >= patch->nblocks || d < 0 || d >= DIRECTION_COUNT) return -1;
  const block_info_t *b = &patch->blocks[id];
  int pos[3];
  for (int a = 0; a < 3; ++a) {
    int n = patch->opts.blocks[a];
    pos[a] = b->grid[a] + direction_offsets[d][a];
    if (pos[a] < 0 || pos[a] >= n) {
      if (!patch->opts.periodic[a]) return -1;
      pos[a] = (pos[a] + n) % n;
    }
  }
  return patch_block_at(patch, pos[0], pos[1], pos[2]);
}

tsr_status patch_view_as(patch_t *patch, int rank, const int32_t *ids, int32_t n,
                         tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int32_t *grown = realloc(patch->local_ids, (size_t)(n ? n : 1) * sizeof *grown);
  TSR_CHECK(grown, TSR_ERR_NOMEM, "out of memory listing the blocks of rank %d", rank);
  patch->local_ids = grown;
  if (n) memcpy(grown, ids, (size_t)n * sizeof *ids);
  patch->nlocal = n;
  patch->my_rank = rank;
cleanup:
  return st;
}

int32_t patch_local_count(const patch_t *patch) { return patch->nlocal; }

int32_t patch_local_index(const patch_t *patch, int32_t id) {
  int32_t lo = 0, hi = patch->nlocal; /* local ids increase: bisect */
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (patch->local_ids[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < patch->nlocal && patch->local_ids[lo] == id ? lo : -1;
}

int32_t patch_local_id(const patch_t *patch, int32_t i) {
  if (i < 0 || i >= patch->nlocal) return -1;
  return patch->local_ids[i];
}

int32_t patch_rank_block_count(const patch_t *patch, int rank) {
  if (rank < 0 || rank >= patch->nranks) return 0;
  return patch->per_rank[rank];
}

block_data_t *patch_block_data(const patch_t *patch, int32_t id) {
  if (id < 0 || id >= patch->nblocks) return NULL;
  return patch->data[id];
}

tsr_status patch_set_bs(patch_t *patch, int32_t id, uint64_t bs, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(id >= 0 && id < patch->nblocks, TSR_ERR_INVALID,
            "BlockID %d does not exist (the patch has %d blocks)", (int)id, (int)patch->nblocks);
  patch->blocks[id].bs = bs;
cleanup:
  return st;
}

tsr_status patch_check_ghost_width(const patch_t *patch, const int width[3], const char *what,
                                   tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const patch_options_t *o = &patch->opts;
  for (int a = 0; a < 3; ++a) {
    TSR_CHECK(width[a] >= 0 && width[a] <= DIRECTION_MAX_WIDTH, TSR_ERR_INVALID,
              "'%s': a ghost layer of %d cells along %c; allowed are 0..%d", what, width[a],
              axis_names[a], DIRECTION_MAX_WIDTH);
    if (o->periodic[a] && o->blocks[a] == 1) continue; /* wraps around the block itself */
    for (int32_t id = 0; id < patch->nblocks; ++id) {
      const block_info_t *b = &patch->blocks[id];
      TSR_CHECK(b->size[a] >= width[a], TSR_ERR_INVALID,
                "'%s' has ghost layers of %d cells, but BlockID %d is %d cell%s thick along %c: "
                "a block must be at least as thick as the ghost layer along every axis, "
                "except along a periodic axis with one block; use fewer blocks along %c%s",
                what, width[a], (int)id, b->size[a], b->size[a] == 1 ? "" : "s", axis_names[a],
                axis_names[a], o->periodic[a] ? " (or one)" : "");
    }
  }
cleanup:
  return st;
}

/* ---- the Morton order of the blocks and the default assignment ---- */

static uint64_t patch_morton_bits(uint64_t v) {
  v &= 0x1fffff;
  v = (v | v << 32) & 0x1f00000000ffffULL;
  v = (v | v << 16) & 0x1f0000ff0000ffULL;
  v = (v | v << 8) & 0x100f00f00f00f00fULL;
  v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
  v = (v | v << 2) & 0x1249249249249249ULL;
  return v;
}

uint64_t patch_morton_code(int ix, int iy, int iz) {
  return patch_morton_bits((uint64_t)ix) | patch_morton_bits((uint64_t)iy) << 1 |
         patch_morton_bits((uint64_t)iz) << 2;
}

typedef struct patch_morton_key {
  uint64_t code;
  int32_t id;
} patch_morton_key_t;

static int patch_morton_key_cmp(const void *a, const void *b) {
  const patch_morton_key_t *x = a, *y = b;
  if (x->code != y->code) return x->code < y->code ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

tsr_status patch_morton_order(const patch_t *patch, int32_t *order, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int32_t n = patch_block_count(patch);
  patch_morton_key_t *keys = malloc((size_t)n * sizeof *keys);
  TSR_CHECK(keys, TSR_ERR_NOMEM, "out of memory ordering %d blocks", (int)n);
  for (int32_t i = 0; i < n; ++i) {
    const block_info_t *b = patch_block(patch, i);
    keys[i] = (patch_morton_key_t){patch_morton_code(b->grid[0], b->grid[1], b->grid[2]), i};
  }
  qsort(keys, (size_t)n, sizeof *keys, patch_morton_key_cmp);
  for (int32_t i = 0; i < n; ++i) order[i] = keys[i].id;
cleanup:
  free(keys);
  return st;
}

tsr_status patch_morton_even(const patch_t *patch, int nranks, const void *ctx,
                               int *rank_of_block, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int32_t n = patch_block_count(patch);
  int32_t *order = NULL;
  TSR_CHECK(nranks >= 1, TSR_ERR_INVALID, "cannot assign blocks to %d ranks", nranks);
  order = malloc((size_t)n * sizeof *order);
  TSR_CHECK(order, TSR_ERR_NOMEM, "out of memory assigning %d blocks", (int)n);
  TSR_TRY(patch_morton_order(patch, order, err));
  /* rank r takes positions [r*n/R, (r+1)*n/R) of the curve */
  for (int r = 0; r < nranks; ++r) {
    int64_t first = (int64_t)r * n / nranks, last = (int64_t)(r + 1) * n / nranks;
    for (int64_t i = first; i < last; ++i) rank_of_block[order[i]] = r;
  }
cleanup:
  free(order);
  return st;
}
