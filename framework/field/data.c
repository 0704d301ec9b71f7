#include "data.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "field.h"
#include "gpu_field.h"
#include "verdict.h"

/* The blocks of one item with .batch, in local order. */
typedef struct data_batch {
  const registry_item_t *item;
  registry_batch_t batch;
  int32_t first;              /* local index of its first block, for messages */
  int32_t *local;             /* [batch.n] the local index of each block */
  registry_region_t *regions; /* [batch.n] where the batch splits (data_items_split) */
  bool parts;                 /* split: .work's parts in INNER and SHELL (else a boundary
                                 batch runs whole in INNER) */
  gpu_field_groups_t *groups; /* the item's .group fields grouped (at the first call) */
  bool boxed;                 /* the groups' boxes are set from regions */
} data_batch_t;

/* Drops a batch's grouping (made again at its next call). */
static void data_batch_drop_groups(data_batch_t *b) {
  if (b->groups) gpu_field_groups_clear(b->groups);
  free(b->groups);
  b->groups = NULL;
  b->boxed = false;
}

struct data_items {
  patch_t *patch;
  const registry_item_t **items; /* per local block */
  int32_t n;
  data_batch_t *batches;
  int nbatches;
  bool split; /* an overlapped step runs the batches in two parts (data_items_split) */
};

void data_items_free(data_items_t **pitems) {
  if (!pitems || !*pitems) return;
  data_items_t *d = *pitems;
  for (int k = 0; k < d->nbatches; ++k) {
    registry_batch_t *b = &d->batches[k].batch;
    if (b->state && b->state_free) b->state_free(b->state);
    data_batch_drop_groups(&d->batches[k]);
    free(b->blocks);
    free(b->data);
    free(d->batches[k].local);
    free(d->batches[k].regions);
  }
  free(d->batches);
  free(d->items);
  free(d);
  *pitems = NULL;
}

/* Files local block i under the batch of its item. */
static tsr_status data_batch_add(data_items_t *d, int32_t i, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const registry_item_t *it = d->items[i];
  int k = 0;
  while (k < d->nbatches && d->batches[k].item != it) ++k;
  if (k == d->nbatches) {
    data_batch_t *grown = realloc(d->batches, (size_t)(k + 1) * sizeof *grown);
    TSR_CHECK(grown, TSR_ERR_NOMEM, "out of memory grouping blocks for '%s'", it->name);
    d->batches = grown;
    d->batches[k] = (data_batch_t){.item = it, .first = i};
    d->batches[k].batch.blocks = calloc((size_t)d->n, sizeof *d->batches[k].batch.blocks);
    d->batches[k].batch.data = calloc((size_t)d->n, sizeof *d->batches[k].batch.data);
    d->batches[k].local = calloc((size_t)d->n, sizeof *d->batches[k].local);
    d->nbatches++;
    TSR_CHECK(d->batches[k].batch.blocks && d->batches[k].batch.data && d->batches[k].local,
              TSR_ERR_NOMEM, "out of memory grouping blocks for '%s'", it->name);
  }
  registry_batch_t *b = &d->batches[k].batch;
  const int32_t id = patch_local_id(d->patch, i);
  d->batches[k].local[b->n] = i;
  b->blocks[b->n] = patch_block(d->patch, id);
  b->data[b->n] = patch_block_data(d->patch, id);
  b->n++;
cleanup:
  return st;
}

tsr_status data_items_create(const registry_t *reg, patch_t *patch, registry_kind_t kind,
                             const char *name, uint64_t fs, data_items_t **out,
                             tsr_error_t *err) {
  tsr_status st = TSR_OK;
  data_items_t *d = calloc(1, sizeof *d);
  *out = NULL;
  TSR_CHECK(d, TSR_ERR_NOMEM, "out of memory resolving '%s'", name);
  d->patch = patch;
  d->n = patch_local_count(patch);
  d->items = calloc((size_t)(d->n ? d->n : 1), sizeof *d->items);
  TSR_CHECK(d->items, TSR_ERR_NOMEM, "out of memory resolving '%s'", name);
  for (int32_t i = 0; i < d->n; ++i) {
    const block_info_t *b = patch_block(patch, patch_local_id(patch, i));
    registry_request_t req = {.fs = fs, .hs = b->hs, .bs = b->bs};
    st = registry_lookup(reg, kind, name, &req, &d->items[i], err);
    if (st != TSR_OK) {
      tsr_error_prefix(err, "BlockID %d", (int)b->id);
      goto cleanup;
    }
    if (d->items[i]->batch) TSR_TRY(data_batch_add(d, i, err));
  }
  *out = d;
  d = NULL;
cleanup:
  data_items_free(&d);
  return st;
}

/* What local block i's item does in a phase (0: a step that does not overlap): 0
 * nothing, 1 the whole work, 2 the phase's part. */
static int data_call_of(const registry_item_t *it, int phase, const registry_region_t *r) {
  if (it->batch) return 0;
  if (phase == 0) return 1;
  const bool box = r->lo[0] < r->hi[0] && r->lo[1] < r->hi[1] && r->lo[2] < r->hi[2];
  if (!r->late) return phase == REGISTRY_PART_INNER ? 1 : 0; /* its ghosts are there */
  if (it->parts && box) return 2;
  return phase == REGISTRY_PART_SHELL ? 1 : 0; /* whole, once the exchange is done */
}

/* The kit's loop: local block i's work alone (a batch of one). */
static tsr_status data_call(const data_items_t *d, int32_t i, int call, int phase,
                            const registry_region_t *regions, tsr_error_t *err) {
  const registry_item_t *it = d->items[i];
  const int32_t id = patch_local_id(d->patch, i);
  const block_info_t *block = patch_block(d->patch, id);
  block_data_t *data = patch_block_data(d->patch, id);
  registry_batch_t one = {.n = 1, .blocks = &block, .data = &data};
  registry_work_t w = {.batch = &one};
  registry_region_t r;
  if (call == 2) {
    r = regions[i];
    r.part = (registry_part_t)phase;
    w.part = r.part;
    w.regions = &r;
  }
  return it->work(&w, it->ctx, err);
}

/* The device storage of the item's .group fields for the batch's blocks that hold the
 * first (grouped at the first call, kept with the batch); at the first part call each
 * group's boxes from the regions (fixed until data_items_split sets others). */
static tsr_status data_batch_groups(data_batch_t *b, int phase, tsr_error_t *err) {
  tsr_status st = TSR_OK;
#define DATA_K8(k) k, k + 1, k + 2, k + 3, k + 4, k + 5, k + 6, k + 7
  static const int keys[REGISTRY_MAX_KEYS] = {DATA_K8(0),  DATA_K8(8),  DATA_K8(16), DATA_K8(24),
                                              DATA_K8(32), DATA_K8(40), DATA_K8(48), DATA_K8(56)};
#undef DATA_K8
  const registry_item_t *it = b->item;
  const size_t n = b->batch.n, nf = (size_t)it->ngroup;
  gpu_field_t **f = NULL;
  const void **key = NULL;
  int *boxes = NULL;
  size_t m = 0;
  if (!b->groups) {
    f = calloc(nf * (n ? n : 1), sizeof *f);
    key = calloc(n ? n : 1, sizeof *key);
    b->groups = calloc(1, sizeof *b->groups);
    TSR_CHECK(f && key && b->groups, TSR_ERR_NOMEM, "out of memory grouping the GPU blocks");
    for (size_t k = 0; k < n; ++k) {
      if (!field_block_of(b->batch.data[k], it->group[0])) continue; /* not its block */
      for (size_t j = 0; j < nf; ++j) {
        field_block_t *fb = field_block_of(b->batch.data[k], it->group[j]);
        TSR_CHECK(fb, TSR_ERR_INTERNAL, "BlockID %d lacks field %zu of '%s'",
                  (int)b->batch.blocks[k]->id, j, it->name);
        f[m * nf + j] = &fb->device;
      }
      const int kv = it->group_key ? it->group_key(b->batch.blocks[k], it->ctx) : 0;
      TSR_CHECK(kv >= 0 && kv < REGISTRY_MAX_KEYS, TSR_ERR_INTERNAL,
                "'%s': group key %d out of range", it->name, kv);
      key[m++] = &keys[kv];
    }
    TSR_TRY(gpu_field_groups_make(f, key, m, it->ngroup, b->groups, err));
  }
  if (phase && !b->boxed && b->groups->count) { /* in the order of the grouped blocks */
    TSR_TRY(field_region_boxes(b->regions, n, &boxes, err));
    m = 0;
    for (size_t k = 0; k < n; ++k)
      if (field_block_of(b->batch.data[k], it->group[0]))
        memmove(&boxes[6 * m++], &boxes[6 * k], 6 * sizeof *boxes);
    TSR_TRY(gpu_field_groups_boxes(b->groups, b->groups->group[0].first[0]->cl, boxes, err));
    b->boxed = true;
  }
cleanup:
  if (st != TSR_OK && b->groups && !b->groups->group) {
    free(b->groups);
    b->groups = NULL;
  }
  free(f);
  free(key);
  free(boxes);
  return st;
}

/* A batch's work: the whole (phase 0) or a part. */
static tsr_status data_batch_run(data_batch_t *b, int phase, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const registry_item_t *it = b->item;
  registry_work_t w = {.batch = &b->batch, .part = (registry_part_t)phase,
                       .regions = phase ? b->regions : NULL};
  if (it->ngroup) {
    TSR_TRY(data_batch_groups(b, phase, err));
    w.groups = b->groups;
  }
  st = it->work(&w, it->ctx, err);
cleanup:
  return st;
}

tsr_status data_items_split(data_items_t *boundary, data_items_t *kernel,
                            const registry_region_t *regions, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  data_items_t *both[2] = {boundary, kernel};
  bool split = kernel && kernel->nbatches > 0;
  for (int s = 0; s < 2 && split; ++s)
    for (int k = 0; both[s] && k < both[s]->nbatches && split; ++k) {
      data_batch_t *b = &both[s]->batches[k];
      split = s == 0 ? b->item->batch_early != NULL : b->item->parts != 0;
      if (!split) break;
      data_batch_drop_groups(b); /* its boxes follow the new regions */
      free(b->regions);
      b->regions = malloc((b->batch.n ? b->batch.n : 1) * sizeof *b->regions);
      TSR_CHECK(b->regions, TSR_ERR_NOMEM, "out of memory planning an overlapped step");
      for (size_t j = 0; j < b->batch.n; ++j) b->regions[j] = regions[b->local[j]];
      b->parts = s == 1;
      if (s == 1) continue;
      int early = REGISTRY_EARLY_NO;
      st = b->item->batch_early(&b->batch, b->regions, b->item->ctx, &early, err);
      if (st != TSR_OK) {
        tsr_error_prefix(err, "%s '%s' on %zu block(s) from BlockID %d",
                         registry_kind_name(b->item->kind), b->item->name, b->batch.n,
                         (int)b->batch.blocks[0]->id);
        goto cleanup;
      }
      b->parts = early == REGISTRY_EARLY_PARTS && b->item->parts;
      split = early == REGISTRY_EARLY_WHOLE || b->parts;
    }
cleanup:
  for (int s = 0; s < 2; ++s)
    if (both[s]) both[s]->split = st == TSR_OK && split;
  return st;
}

int data_items_batch_count(const data_items_t *items) { return items->nbatches; }

bool data_items_splits(const data_items_t *items) { return items->split; }

static tsr_status data_items_run_how(data_items_t *d, int phase, data_what_t what,
                                     const registry_region_t *regions,
                                     void (*progress)(void *), void *arg, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const int32_t n = (what & DATA_BLOCKS) ? d->n : 0;
  for (int k = 0; k < d->nbatches && (what & DATA_BATCHES); ++k) {
    data_batch_t *b = &d->batches[k];
    if (phase != 0 && d->split && b->parts) /* a kernel batch's part, or a boundary's */
      st = data_batch_run(b, phase, err);
    else if (phase == (d->split ? REGISTRY_PART_SHELL : REGISTRY_PART_INNER))
      continue; /* split: an early boundary batch runs whole in INNER; else all in SHELL */
    else
      st = data_batch_run(b, 0, err);
    if (st != TSR_OK) {
      tsr_error_prefix(err, "%s '%s' on %zu block(s) from BlockID %d",
                       registry_kind_name(b->item->kind), b->item->name, b->batch.n,
                       (int)b->batch.blocks[0]->id);
      return st;
    }
  }
  int32_t nconc = 0, failed = n;
  for (int32_t i = 0; i < n; ++i)
    nconc += d->items[i]->concurrent &&
             data_call_of(d->items[i], phase, regions ? &regions[i] : NULL) != 0;
  const int spread = omp_get_max_threads() > 1 && nconc >= 2 * omp_get_max_threads();
  if (spread) {
    tsr_error_t first;
#pragma omp parallel for schedule(dynamic, 1)
    for (int32_t i = 0; i < n; ++i) {
      const registry_item_t *it = d->items[i];
      const int call = data_call_of(it, phase, regions ? &regions[i] : NULL);
      if (!call || !it->concurrent) continue;
      tsr_error_t e;
      if (data_call(d, i, call, phase, regions, &e) != TSR_OK) {
#pragma omp critical(data_items_failure)
        if (i < failed) {
          failed = i;
          first = e;
        }
      }
    }
    if (failed < n) *err = first;
  }
  for (int32_t i = 0; i < n && failed == n; ++i) {
    const registry_item_t *it = d->items[i];
    const int call = data_call_of(it, phase, regions ? &regions[i] : NULL);
    if (!call || (spread && it->concurrent)) continue;
    if (data_call(d, i, call, phase, regions, err) != TSR_OK) failed = i;
    else if (progress) progress(arg);
  }
  if (failed < n) {
    const registry_item_t *it = d->items[failed];
    st = err->code;
    tsr_error_prefix(err, "%s '%s' on BlockID %d", registry_kind_name(it->kind), it->name,
                     (int)patch_local_id(d->patch, failed));
  }
  return st;
}

tsr_status data_items_run(data_items_t *d, tsr_error_t *err) {
  return data_items_run_how(d, 0, DATA_ALL, NULL, NULL, NULL, err);
}

tsr_status data_items_run_part(data_items_t *d, registry_part_t phase, data_what_t what,
                               const registry_region_t *regions, void (*progress)(void *),
                               void *arg, tsr_error_t *err) {
  return data_items_run_how(d, (int)phase, what, regions, progress, arg, err);
}

tsr_status data_run_kernel(const registry_t *reg, patch_t *patch, const char *name, uint64_t fs,
                           tsr_error_t *err) {
  data_items_t *d = NULL;
  tsr_status st = data_items_create(reg, patch, REGISTRY_KIND_KERNEL, name, fs, &d, err);
  if (st == TSR_OK) st = data_items_run(d, err);
  data_items_free(&d);
  return st;
}

/* The allocator's batch: the local blocks that resolved to item, in local order. */
static tsr_status data_alloc_batch(patch_t *patch, const registry_item_t *const *items,
                                   const registry_item_t *item, registry_batch_t *b,
                                   int32_t **ids, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const int32_t n = patch_local_count(patch);
  b->blocks = calloc((size_t)n, sizeof *b->blocks);
  *ids = calloc((size_t)n, sizeof **ids);
  TSR_CHECK(b->blocks && *ids, TSR_ERR_NOMEM, "out of memory allocating '%s'", item->name);
  for (int32_t i = 0; i < n; ++i)
    if (items[i] == item) {
      (*ids)[b->n] = patch_local_id(patch, i);
      b->blocks[b->n] = patch_block(patch, (*ids)[b->n]);
      b->n++;
    }
cleanup:
  return st;
}

tsr_status data_allocate(MPI_Comm comm, registry_t *reg, patch_t *patch, const char *name,
                         uint64_t fs, int *data_id, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const int32_t n = patch_local_count(patch);
  const registry_item_t **items = calloc((size_t)(n ? n : 1), sizeof *items);
  registry_batch_t batch = {0};
  int32_t *ids = NULL;
  void **outs = NULL;
  const registry_item_t *batch_item = NULL; /* whose outs are in hand */
  TSR_CHECK(items, TSR_ERR_NOMEM, "out of memory allocating '%s'", name);
  TSR_TRY(registry_data_id(reg, name, data_id, err));
  for (int32_t i = 0; i < n; ++i) {
    int32_t id = patch_local_id(patch, i);
    const block_info_t *b = patch_block(patch, id);
    registry_request_t req = {.fs = fs, .hs = b->hs, .bs = b->bs};
    st = registry_lookup(reg, REGISTRY_KIND_ALLOCATOR, name, &req, &items[i], err);
    if (st != TSR_OK) {
      tsr_error_prefix(err, "allocating '%s' for BlockID %d", name, (int)id);
      goto cleanup;
    }
  }
  for (int32_t i = 0; i < n; ++i) {
    const registry_item_t *item = items[i];
    if (!item) continue; /* allocated with its batch */
    if (item->alloc_batch) {
      TSR_TRY(data_alloc_batch(patch, items, item, &batch, &ids, err));
      outs = calloc(batch.n, sizeof *outs);
      TSR_CHECK(outs, TSR_ERR_NOMEM, "out of memory allocating '%s'", name);
      batch_item = item;
      st = item->alloc_batch(&batch, item->ctx, outs, err);
      if (st != TSR_OK) {
        tsr_error_prefix(err, "allocating '%s' for %zu block(s) on rank %d", name, batch.n,
                         patch_my_rank(patch));
        goto cleanup;
      }
      for (size_t k = 0; k < batch.n; ++k) {
        void *ptr = outs[k];
        outs[k] = NULL;
        TSR_TRY(block_data_add_take(patch_block_data(patch, ids[k]), *data_id, ptr, item->free,
                                    item->ctx, err));
      }
      for (int32_t j = i; j < n; ++j)
        if (items[j] == item) items[j] = NULL;
      free(batch.blocks);
      batch = (registry_batch_t){0};
      free(ids);
      ids = NULL;
      free(outs);
      outs = NULL;
      continue;
    }
    int32_t id = patch_local_id(patch, i);
    void *ptr = NULL;
    st = item->alloc(patch_block(patch, id), item->ctx, &ptr, err);
    if (st != TSR_OK) {
      tsr_error_prefix(err, "allocating '%s' for BlockID %d on rank %d", name, (int)id,
                       patch_my_rank(patch));
      goto cleanup;
    }
    TSR_TRY(block_data_add_take(patch_block_data(patch, id), *data_id, ptr, item->free,
                                item->ctx, err));
  }
cleanup:
  if (outs) /* what the batch made and no block took */
    for (size_t k = 0; k < batch.n; ++k)
      if (outs[k]) batch_item->free(outs[k], batch_item->ctx);
  free(outs);
  free(batch.blocks);
  free(ids);
  free(items);
  return verdict_reduce(comm, st, 0, err);
}
