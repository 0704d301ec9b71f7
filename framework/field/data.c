#include "data.h"

#include "verdict.h"

tsr_status data_allocate(MPI_Comm comm, registry_t *reg, patch_t *patch, const char *name,
                         uint64_t fs, int *data_id, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(registry_data_id(reg, name, data_id, err));
  for (int32_t i = 0; i < patch_local_count(patch); ++i) {
    int32_t id = patch_local_id(patch, i);
    const block_info_t *b = patch_block(patch, id);
    const registry_item_t *item;
    registry_request_t req = {.fs = fs, .hs = b->hs, .bs = b->bs};
    st = registry_lookup(reg, REGISTRY_KIND_ALLOCATOR, name, &req, &item, err);
    if (st != TSR_OK) {
      tsr_error_prefix(err, "allocating '%s' for BlockID %d", name, (int)id);
      goto cleanup;
    }
    void *ptr = NULL;
    st = item->alloc(b, item->ctx, &ptr, err);
    if (st != TSR_OK) {
      tsr_error_prefix(err, "allocating '%s' for BlockID %d on rank %d", name, (int)id,
                       patch_my_rank(patch));
      goto cleanup;
    }
    TSR_TRY(block_data_add_take(patch_block_data(patch, id), *data_id, ptr, item->free,
                                item->ctx, err));
  }
cleanup:
  return verdict_reduce(comm, st, 0, err);
}

tsr_status data_run_kernel(const registry_t *reg, patch_t *patch, const char *name, uint64_t fs,
                           tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (int32_t i = 0; i < patch_local_count(patch); ++i) {
    int32_t id = patch_local_id(patch, i);
    const block_info_t *b = patch_block(patch, id);
    const registry_item_t *item;
    registry_request_t req = {.fs = fs, .hs = b->hs, .bs = b->bs};
    st = registry_lookup(reg, REGISTRY_KIND_KERNEL, name, &req, &item, err);
    if (st != TSR_OK) {
      tsr_error_prefix(err, "BlockID %d", (int)id);
      goto cleanup;
    }
    st = item->kernel(b, patch_block_data(patch, id), item->ctx, err);
    if (st != TSR_OK) {
      tsr_error_prefix(err, "kernel '%s' on BlockID %d", name, (int)id);
      goto cleanup;
    }
  }
cleanup:
  return st;
}
