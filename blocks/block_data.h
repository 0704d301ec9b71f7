/* block_data: the list of simulation-data items of one block, keyed by data id.
 *
 * Only the process that owns a block holds its list (see patch_block_data). Each item
 * is taken over with the function that frees it; block_data_free frees the items in
 * the reverse order of their addition. */
#ifndef BLOCK_DATA_H
#define BLOCK_DATA_H

#include <stdbool.h>

#include "tsr_error.h"

typedef struct block_data block_data_t;

/* Frees one item; ctx is the pointer given with it. */
typedef void (*block_data_free_fn)(void *item, void *ctx);

TSR_NODISCARD tsr_status block_data_create(block_data_t **out, tsr_error_t *err);

/* NULL-safe; frees every item, sets *list = NULL. */
void block_data_free(block_data_t **list);

/* Takes ownership of item (also on failure, where it is freed at once). A data id may
 * be added once per block. free_fn may be NULL for items that own nothing. */
TSR_NODISCARD tsr_status block_data_add_take(block_data_t *list, int data_id, void *item,
                                             block_data_free_fn free_fn, void *ctx,
                                             tsr_error_t *err);

/* Borrowed pointer to the item with this data id, or NULL if the block has none. */
void *block_data_get(const block_data_t *list, int data_id);

/* Number of items in the list. */
int block_data_count(const block_data_t *list);

#endif
