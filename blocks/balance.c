#include "balance.h"

#include <stdlib.h>

static uint64_t balance_spread_bits(uint64_t v) {
  v &= 0x1fffff;
  v = (v | v << 32) & 0x1f00000000ffffULL;
  v = (v | v << 16) & 0x1f0000ff0000ffULL;
  v = (v | v << 8) & 0x100f00f00f00f00fULL;
  v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
  v = (v | v << 2) & 0x1249249249249249ULL;
  return v;
}

uint64_t balance_morton_code(int ix, int iy, int iz) {
  return balance_spread_bits((uint64_t)ix) | balance_spread_bits((uint64_t)iy) << 1 |
         balance_spread_bits((uint64_t)iz) << 2;
}

typedef struct balance_key {
  uint64_t code;
  int32_t id;
} balance_key_t;

static int balance_key_cmp(const void *a, const void *b) {
  const balance_key_t *x = a, *y = b;
  if (x->code != y->code) return x->code < y->code ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

tsr_status balance_morton_order(const patch_t *patch, int32_t *order, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int32_t n = patch_block_count(patch);
  balance_key_t *keys = malloc((size_t)n * sizeof *keys);
  TSR_CHECK(keys, TSR_ERR_NOMEM, "out of memory ordering %d blocks", (int)n);
  for (int32_t i = 0; i < n; ++i) {
    const block_info_t *b = patch_block(patch, i);
    keys[i] = (balance_key_t){balance_morton_code(b->grid[0], b->grid[1], b->grid[2]), i};
  }
  qsort(keys, (size_t)n, sizeof *keys, balance_key_cmp);
  for (int32_t i = 0; i < n; ++i) order[i] = keys[i].id;
cleanup:
  free(keys);
  return st;
}

tsr_status balance_morton_even(const patch_t *patch, int nranks, const void *ctx,
                               int *rank_of_block, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int32_t n = patch_block_count(patch);
  int32_t *order = NULL;
  TSR_CHECK(nranks >= 1, TSR_ERR_INVALID, "cannot assign blocks to %d ranks", nranks);
  order = malloc((size_t)n * sizeof *order);
  TSR_CHECK(order, TSR_ERR_NOMEM, "out of memory assigning %d blocks", (int)n);
  TSR_TRY(balance_morton_order(patch, order, err));
  /* rank r takes positions [r*n/R, (r+1)*n/R) of the curve */
  for (int r = 0; r < nranks; ++r) {
    int64_t first = (int64_t)r * n / nranks, last = (int64_t)(r + 1) * n / nranks;
    for (int64_t i = first; i < last; ++i) rank_of_block[order[i]] = r;
  }
cleanup:
  free(order);
  return st;
}
