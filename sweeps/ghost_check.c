#include "ghost_check.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "grid.h"
#include "cpu_copy.h"
#include "direction.h"
#include "tsr_size.h"

static const int ghost_check_all_comps[GHOST_CHECK_COMPS] = {0, 1};

static grid_dims_t ghost_check_dims(const block_info_t *b) {
  return grid_dims_make(b->size, GHOST_CHECK_COMPS, 1, GRID_AOS, sizeof(double));
}

double ghost_check_code(int64_t gx, int64_t gy, int64_t gz, int comp) {
  int64_t m = GHOST_CHECK_MAX_CELLS;
  return (double)((((gz * m + gy) * m + gx) * GHOST_CHECK_COMPS + comp) + 1);
}

static tsr_status ghost_check_alloc(const block_info_t *b, void *ctx, void **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  grid_dims_t d = ghost_check_dims(b);
  size_t n = d.elements, bytes = 0;
  double *f = NULL;
  TSR_CHECK(n > 0 && tsr_mul_size(n, sizeof *f, &bytes), TSR_ERR_INVALID,
            "BlockID %d: %d x %d x %d cells are more than the ghost check field can address",
            (int)b->id, b->size[0], b->size[1], b->size[2]);
  f = malloc(bytes);
  TSR_CHECK(f, TSR_ERR_NOMEM, "out of memory: %zu bytes for the ghost check field of BlockID %d",
            bytes, (int)b->id);
  for (size_t i = 0; i < n; ++i) f[i] = GHOST_CHECK_EMPTY;
  *out = f;
cleanup:
  return st;
}

static void ghost_check_release(void *data, void *ctx) { free(data); }

static size_t ghost_check_size(const block_info_t *b, int dir, void *ctx) {
  return (size_t)direction_slice_cells(b->size, dir) * GHOST_CHECK_COMPS * sizeof(double);
}

static tsr_status ghost_check_extract(const block_info_t *b, const void *data, int dir,
                                      uint8_t *out, size_t cap, size_t *written, void *ctx,
                                      tsr_error_t *err) {
  tsr_status st = TSR_OK;
  grid_dims_t d = ghost_check_dims(b);
  int lo[3], hi[3];
  direction_send_slice(b->size, dir, lo, hi);
  size_t need = grid_slice_bytes(lo, hi, GHOST_CHECK_COMPS, sizeof(double));
  TSR_CHECK(need <= cap, TSR_ERR_INTERNAL,
            "ghost check extraction of BlockID %d in direction %s needs %zu bytes, has %zu",
            (int)b->id, direction_name(dir), need, cap);
  *written = grid_pack(data, &d, sizeof(double), lo, hi, ghost_check_all_comps, GHOST_CHECK_COMPS, out);
cleanup:
  return st;
}

static tsr_status ghost_check_insert(const block_info_t *b, void *data, int dir, const uint8_t *in,
                                     size_t len, void *ctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  grid_dims_t d = ghost_check_dims(b);
  int lo[3], hi[3];
  direction_recv_slice(b->size, dir, lo, hi);
  size_t need = grid_slice_bytes(lo, hi, GHOST_CHECK_COMPS, sizeof(double));
  TSR_CHECK(need == len, TSR_ERR_CORRUPT,
            "ghost check insertion into BlockID %d from direction %s: %zu bytes, expected %zu",
            (int)b->id, direction_name(dir), len, need);
  grid_unpack(data, &d, sizeof(double), lo, hi, ghost_check_all_comps, GHOST_CHECK_COMPS, in);
cleanup:
  return st;
}

static void ghost_check_field(const block_info_t *b, const void *data, void **field,
                              grid_dims_t *dims) {
  *field = (void *)data;
  *dims = ghost_check_dims(b);
}

static tsr_status ghost_check_copy(const registry_copy_task_t *tasks, size_t n, void *ctx,
                                   tsr_error_t *err) {
  static int comps[DIRECTION_COUNT * GHOST_CHECK_COMPS], ncomps[DIRECTION_COUNT];
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    ncomps[d] = GHOST_CHECK_COMPS;
    for (int c = 0; c < GHOST_CHECK_COMPS; ++c) comps[d * GHOST_CHECK_COMPS + c] = c;
  }
  cpu_copy_layout_t layout = {.field = ghost_check_field, .esize = sizeof(double),
                              .comps = comps, .stride = GHOST_CHECK_COMPS, .ncomps = ncomps};
  return cpu_copy_run(tasks, n, &layout, err);
}

static tsr_status ghost_check_fill(const block_info_t *b, block_data_t *data, void *ctx,
                                   tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int id = *(const int *)ctx;
  double *f = block_data_get(data, id);
  TSR_CHECK(f, TSR_ERR_INTERNAL, "BlockID %d has no '%s' data to fill", (int)b->id,
            GHOST_CHECK_FIELD);
  grid_dims_t d = ghost_check_dims(b);
  for (int z = -1; z <= d.nz; ++z)
    for (int y = -1; y <= d.ny; ++y)
      for (int x = -1; x <= d.nx; ++x) {
        bool ghost = x < 0 || y < 0 || z < 0 || x == d.nx || y == d.ny || z == d.nz;
        for (int c = 0; c < GHOST_CHECK_COMPS; ++c)
          f[grid_index(&d, x, y, z, c)] =
              ghost ? GHOST_CHECK_EMPTY
                    : ghost_check_code(b->lo[0] + x, b->lo[1] + y, b->lo[2] + z, c);
      }
cleanup:
  return st;
}

tsr_status ghost_check_register(registry_t *reg, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int field_id;
  void *fill_ctx; /* the fill kernel's context: the field's data id in this registry */
  TSR_TRY(registry_data_id(reg, GHOST_CHECK_FIELD, &field_id, err));
  TSR_TRY(registry_keep(reg, &field_id, sizeof field_id, &fill_ctx, err));
  TSR_TRY(registry_add(reg, &(registry_item_t){
      .kind = REGISTRY_KIND_ALLOCATOR, .name = GHOST_CHECK_FIELD, .fs = "*", .hs = "cpu",
      .bs = "*", .alloc = ghost_check_alloc, .free = ghost_check_release}, err));
  TSR_TRY(registry_add(reg, &(registry_item_t){
      .kind = REGISTRY_KIND_EXTRACTION, .name = GHOST_CHECK_FIELD, .fs = "*", .hs = "cpu",
      .bs = "*", .extract = ghost_check_extract, .size = ghost_check_size}, err));
  TSR_TRY(registry_add(reg, &(registry_item_t){
      .kind = REGISTRY_KIND_INSERTION, .name = GHOST_CHECK_FIELD, .fs = "*", .hs = "cpu",
      .bs = "*", .insert = ghost_check_insert, .size = ghost_check_size}, err));
  TSR_TRY(registry_add(reg, &(registry_item_t){
      .kind = REGISTRY_KIND_COPY, .name = GHOST_CHECK_FIELD, .fs = "*", .hs = "cpu",
      .bs = "*", .copy = ghost_check_copy}, err));
  TSR_TRY(registry_add(reg, &(registry_item_t){
      .kind = REGISTRY_KIND_KERNEL, .name = GHOST_CHECK_FILL, .fs = "*", .hs = "cpu",
      .bs = "*", .kernel = ghost_check_fill, .ctx = fill_ctx}, err));
cleanup:
  return st;
}

tsr_status ghost_check_verify(const patch_t *patch, int data_id, ghost_check_report_t *rep,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const patch_options_t *o = patch_options(patch);
  memset(rep, 0, sizeof *rep);
  for (int a = 0; a < 3; ++a)
    TSR_CHECK(o->cells[a] <= GHOST_CHECK_MAX_CELLS, TSR_ERR_INVALID,
              "the ghost check codes cells of domains up to %d cells per axis; cells[%d] = %lld",
              GHOST_CHECK_MAX_CELLS, a, (long long)o->cells[a]);
  for (int32_t i = 0; i < patch_local_count(patch); ++i) {
    const block_info_t *b = patch_block(patch, patch_local_id(patch, i));
    const double *f = block_data_get(patch_block_data(patch, b->id), data_id);
    TSR_CHECK(f, TSR_ERR_INTERNAL, "BlockID %d has no '%s' data", (int)b->id, GHOST_CHECK_FIELD);
    grid_dims_t d = ghost_check_dims(b);
    for (int z = -1; z <= d.nz; ++z)
      for (int y = -1; y <= d.ny; ++y)
        for (int x = -1; x <= d.nx; ++x) {
          int local[3] = {x, y, z}, order = 0;
          int64_t g[3];
          bool exists = true;
          for (int a = 0; a < 3; ++a) {
            g[a] = b->lo[a] + local[a];
            if (local[a] < 0 || local[a] == b->size[a]) ++order;
            if (g[a] < 0 || g[a] >= o->cells[a]) {
              if (o->periodic[a]) g[a] = (g[a] + o->cells[a]) % o->cells[a];
              else exists = false;
            }
          }
          ++rep->cells;
          if (order > 0) {
            ++rep->ghost_cells;
            if (exists) ++rep->filled[order];
            else ++rep->empty;
          }
          for (int c = 0; c < GHOST_CHECK_COMPS; ++c) {
            double want = exists ? ghost_check_code(g[0], g[1], g[2], c) : GHOST_CHECK_EMPTY;
            double have = f[grid_index(&d, x, y, z, c)];
            if (have == want) continue;
            if (rep->mismatches++ == 0)
              tsr_error_set(err, TSR_ERR_CORRUPT, __FILE__, __LINE__,
                            "BlockID %d on rank %d, %s cell (%d, %d, %d) component %d holds "
                            "%.17g, expected %.17g (%s)",
                            (int)b->id, b->rank, order ? "ghost" : "interior", x, y, z, c, have,
                            want, exists ? "the value of its neighbour's cell" : "empty: the domain ends");
          }
        }
  }
  if (rep->mismatches) {
    st = TSR_ERR_CORRUPT;
    tsr_error_prefix(err, "%lld of %lld values wrong; first", (long long)rep->mismatches,
                     (long long)(rep->cells * GHOST_CHECK_COMPS));
  }
cleanup:
  return st;
}
