/* balance: static block -> rank assignment.
 *
 * balance_morton_even orders blocks along a Morton (Z-order) curve over their grid
 * positions and gives every rank a contiguous run of that order; run lengths differ by
 * at most one block, so the blocks of a process stay spatially together. It has the
 * patch_assign_fn signature and is the default of patch_create. */
#ifndef BALANCE_H
#define BALANCE_H

#include <stdint.h>

#include "patch.h"
#include "tsr_error.h"

/* Morton code of a grid position (21 bits per axis). */
uint64_t balance_morton_code(int ix, int iy, int iz);

/* Fills order[patch_block_count] with BlockIDs sorted by Morton code. */
TSR_NODISCARD tsr_status balance_morton_order(const patch_t *patch, int32_t *order,
                                              tsr_error_t *err);

TSR_NODISCARD tsr_status balance_morton_even(const patch_t *patch, int nranks, const void *ctx,
                                             int *rank_of_block, tsr_error_t *err);

#endif
