#include "block_data.h"

#include <stdlib.h>

typedef struct block_data_item {
  int id;
  void *item;
  block_data_free_fn free_fn;
  void *ctx;
} block_data_item_t;

struct block_data {
  block_data_item_t *items;
  int count, cap;
};

tsr_status block_data_create(block_data_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *out = NULL;
  block_data_t *list = calloc(1, sizeof *list);
  TSR_CHECK(list, TSR_ERR_NOMEM, "out of memory allocating a block data list");
  *out = list;
cleanup:
  return st;
}

void block_data_free(block_data_t **list) {
  if (!list || !*list) return;
  block_data_t *l = *list;
  for (int i = l->count - 1; i >= 0; --i)
    if (l->items[i].free_fn) l->items[i].free_fn(l->items[i].item, l->items[i].ctx);
  free(l->items);
  free(l);
  *list = NULL;
}

tsr_status block_data_add_take(block_data_t *list, int data_id, void *item,
                               block_data_free_fn free_fn, void *ctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  bool owned = true;
  TSR_CHECK(data_id >= 0, TSR_ERR_INVALID, "block data id %d is negative", data_id);
  TSR_CHECK(block_data_get(list, data_id) == NULL, TSR_ERR_INVALID,
            "block data id %d is already present in this block", data_id);
  if (list->count == list->cap) {
    int cap = list->cap ? 2 * list->cap : 4;
    block_data_item_t *grown = realloc(list->items, (size_t)cap * sizeof *grown);
    TSR_CHECK(grown, TSR_ERR_NOMEM, "out of memory growing a block data list");
    list->items = grown;
    list->cap = cap;
  }
  list->items[list->count++] = (block_data_item_t){data_id, item, free_fn, ctx};
  owned = false;
cleanup:
  if (owned && free_fn) free_fn(item, ctx);
  return st;
}

void *block_data_get(const block_data_t *list, int data_id) {
  if (!list) return NULL;
  for (int i = 0; i < list->count; ++i)
    if (list->items[i].id == data_id) return list->items[i].item;
  return NULL;
}

int block_data_count(const block_data_t *list) { return list ? list->count : 0; }
