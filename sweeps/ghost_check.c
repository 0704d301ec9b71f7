#include "ghost_check.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_copy.h"
#include "direction.h"
#include "tsr_size.h"

/* What the items of one field share: its options, its data id, its exchange layout. */
typedef struct ghost_check_ctx {
  ghost_check_options_t opts; /* names pointing at field_name and fill_name */
  char field_name[64], fill_name[64];
  int data_id;
  int comps[DIRECTION_COUNT * GHOST_CHECK_MAX_COMPS];
  int ncomps[DIRECTION_COUNT];
} ghost_check_ctx_t;

ghost_check_options_t ghost_check_options_default(void) {
  return (ghost_check_options_t){.field = GHOST_CHECK_FIELD, .fill = GHOST_CHECK_FILL,
                                 .width = {1, 1, 1}, .layout = GRID_AOS, .comps = 2};
}

static int ghost_check_depth(const ghost_check_options_t *o) {
  int g = 0;
  for (int a = 0; a < 3; ++a)
    if (o->width[a] > g) g = o->width[a];
  return g;
}

static grid_dims_t ghost_check_dims(const block_info_t *b, const ghost_check_options_t *o) {
  return grid_dims_make(b->size, o->comps, ghost_check_depth(o), o->layout, sizeof(double));
}

double ghost_check_code(int64_t gx, int64_t gy, int64_t gz, int comp) {
  int64_t m = GHOST_CHECK_MAX_CELLS;
  return (double)((((gz * m + gy) * m + gx) * GHOST_CHECK_MAX_COMPS + comp) + 1);
}

static tsr_status ghost_check_alloc(const block_info_t *b, void *vctx, void **out,
                                    tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const ghost_check_ctx_t *c = vctx;
  grid_dims_t d = ghost_check_dims(b, &c->opts);
  size_t n = d.elements, bytes = 0;
  double *f = NULL;
  TSR_CHECK(n > 0 && tsr_mul_size(n, sizeof *f, &bytes), TSR_ERR_INVALID,
            "BlockID %d: %d x %d x %d cells are more than the ghost check field can address",
            (int)b->id, b->size[0], b->size[1], b->size[2]);
  f = aligned_alloc(64, (bytes + 63) / 64 * 64);
  TSR_CHECK(f, TSR_ERR_NOMEM, "out of memory: %zu bytes for the ghost check field of BlockID %d",
            bytes, (int)b->id);
  for (size_t i = 0; i < n; ++i) f[i] = GHOST_CHECK_EMPTY;
  *out = f;
cleanup:
  return st;
}

static void ghost_check_release(void *data, void *ctx) { free(data); }

static cpu_copy_layout_t ghost_check_layout(const ghost_check_ctx_t *c);

static size_t ghost_check_size(const block_info_t *b, int dir, void *vctx) {
  cpu_copy_layout_t l = ghost_check_layout(vctx);
  return cpu_copy_size(&l, b, dir);
}

static tsr_status ghost_check_extract(const block_info_t *b, const void *data, int dir,
                                      uint8_t *out, size_t cap, size_t *written, void *vctx,
                                      tsr_error_t *err) {
  const ghost_check_ctx_t *c = vctx;
  cpu_copy_layout_t l = ghost_check_layout(c);
  grid_dims_t d = ghost_check_dims(b, &c->opts);
  return cpu_copy_extract(&l, b, data, &d, dir, out, cap, written, c->opts.field, err);
}

static tsr_status ghost_check_insert(const block_info_t *b, void *data, int dir, const uint8_t *in,
                                     size_t len, void *vctx, tsr_error_t *err) {
  const ghost_check_ctx_t *c = vctx;
  cpu_copy_layout_t l = ghost_check_layout(c);
  grid_dims_t d = ghost_check_dims(b, &c->opts);
  return cpu_copy_insert(&l, b, data, &d, dir, in, len, c->opts.field, err);
}

static void ghost_check_field(const block_info_t *b, const void *data, const void *vctx,
                              void **field, grid_dims_t *dims) {
  const ghost_check_ctx_t *c = vctx;
  *field = (void *)data;
  *dims = ghost_check_dims(b, &c->opts);
}

static cpu_copy_layout_t ghost_check_layout(const ghost_check_ctx_t *c) {
  return (cpu_copy_layout_t){.field = ghost_check_field, .esize = sizeof(double),
                             .comps = c->comps, .stride = GHOST_CHECK_MAX_COMPS,
                             .ncomps = c->ncomps,
                             .width = {c->opts.width[0], c->opts.width[1], c->opts.width[2]},
                             .ctx = c};
}

static tsr_status ghost_check_copy(const registry_copy_task_t *tasks, size_t n, void *vctx,
                                   tsr_error_t *err) {
  cpu_copy_layout_t l = ghost_check_layout(vctx);
  return cpu_copy_run(tasks, n, &l, err);
}

/* Whether local cell (x, y, z) of block b lies in its interior. */
static bool ghost_check_interior(const block_info_t *b, const int local[3]) {
  for (int a = 0; a < 3; ++a)
    if (local[a] < 0 || local[a] >= b->size[a]) return false;
  return true;
}

static tsr_status ghost_check_fill(const block_info_t *b, block_data_t *data, void *vctx,
                                   tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const ghost_check_ctx_t *c = vctx;
  const ghost_check_options_t *o = &c->opts;
  double *f = block_data_get(data, c->data_id);
  TSR_CHECK(f, TSR_ERR_INTERNAL, "BlockID %d has no '%s' data to fill", (int)b->id, o->field);
  grid_dims_t d = ghost_check_dims(b, o);
  const int g = d.ghost;
  for (int z = -g; z < d.nz + g; ++z)
    for (int y = -g; y < d.ny + g; ++y)
      for (int x = -g; x < d.nx + g; ++x) {
        const int local[3] = {x, y, z};
        bool inside = ghost_check_interior(b, local);
        for (int k = 0; k < o->comps; ++k)
          f[grid_index(&d, x, y, z, k)] =
              inside ? ghost_check_code(b->lo[0] + x, b->lo[1] + y, b->lo[2] + z,
                                        o->first_comp + k)
                     : GHOST_CHECK_EMPTY;
      }
cleanup:
  return st;
}

static tsr_status ghost_check_options_validate(const ghost_check_options_t *o, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(o->field && o->fill, TSR_ERR_INVALID, "a ghost check field needs a name and a fill kernel name");
  TSR_CHECK(o->layout == GRID_AOS || o->layout == GRID_SOA, TSR_ERR_INVALID,
            "'%s': layout %d; allowed are aos and soa", o->field, (int)o->layout);
  TSR_CHECK(o->first_comp >= 0 && o->comps >= 1 && o->first_comp + o->comps <= GHOST_CHECK_MAX_COMPS,
            TSR_ERR_INVALID, "'%s': components %d..%d; allowed are 0..%d", o->field, o->first_comp,
            o->first_comp + o->comps - 1, GHOST_CHECK_MAX_COMPS - 1);
  for (int a = 0; a < 3; ++a)
    TSR_CHECK(o->width[a] >= 0 && o->width[a] <= DIRECTION_MAX_WIDTH, TSR_ERR_INVALID,
              "'%s': width[%d] = %d; allowed are 0..%d", o->field, a, o->width[a],
              DIRECTION_MAX_WIDTH);
cleanup:
  return st;
}

tsr_status ghost_check_options_read(config_t *cfg, ghost_check_options_t *o, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  config_node_t *ex = NULL;
  TSR_TRY(config_object(config_root(cfg), "exchange", false, &ex, err));
  if (!ex) goto cleanup;
  int64_t w[3] = {o->width[0], o->width[1], o->width[2]};
  TSR_TRY(config_int3(ex, "ghost", false, 0, DIRECTION_MAX_WIDTH, w, err));
  for (int a = 0; a < 3; ++a) o->width[a] = (int)w[a];
  static const char *const layouts[] = {"aos", "soa", NULL};
  int layout = (int)o->layout;
  TSR_TRY(config_choice(ex, "layout", false, layouts, &layout, err));
  o->layout = (grid_layout_t)layout;
cleanup:
  return st;
}

tsr_status ghost_check_register(registry_t *reg, const ghost_check_options_t *opts,
                                tsr_error_t *err) {
  tsr_status st = TSR_OK;
  ghost_check_ctx_t c;
  memset(&c, 0, sizeof c);
  c.opts = *opts;
  TSR_TRY(ghost_check_options_validate(opts, err));
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    c.ncomps[d] = opts->comps;
    for (int k = 0; k < opts->comps; ++k) c.comps[d * GHOST_CHECK_MAX_COMPS + k] = k;
  }
  TSR_TRY(registry_data_id(reg, opts->field, &c.data_id, err));
  TSR_CHECK(strlen(opts->field) < sizeof c.field_name && strlen(opts->fill) < sizeof c.fill_name,
            TSR_ERR_INVALID, "ghost check names '%s' and '%s': at most %zu characters", opts->field,
            opts->fill, sizeof c.field_name - 1);
  strcpy(c.field_name, opts->field);
  strcpy(c.fill_name, opts->fill);
  void *ctx;
  TSR_TRY(registry_keep(reg, &c, sizeof c, &ctx, err));
  ghost_check_ctx_t *kept = ctx;
  kept->opts.field = kept->field_name;
  kept->opts.fill = kept->fill_name;
  TSR_TRY(registry_add(reg, &(registry_item_t){
      .kind = REGISTRY_KIND_ALLOCATOR, .name = opts->field, .fs = "*", .hs = "cpu",
      .bs = "*", .alloc = ghost_check_alloc, .free = ghost_check_release, .ctx = ctx}, err));
  TSR_TRY(registry_add(reg, &(registry_item_t){
      .kind = REGISTRY_KIND_EXTRACTION, .name = opts->field, .fs = "*", .hs = "cpu",
      .bs = "*", .extract = ghost_check_extract, .size = ghost_check_size, .ctx = ctx}, err));
  TSR_TRY(registry_add(reg, &(registry_item_t){
      .kind = REGISTRY_KIND_INSERTION, .name = opts->field, .fs = "*", .hs = "cpu",
      .bs = "*", .insert = ghost_check_insert, .size = ghost_check_size, .ctx = ctx}, err));
  TSR_TRY(registry_add(reg, &(registry_item_t){
      .kind = REGISTRY_KIND_COPY, .name = opts->field, .fs = "*", .hs = "cpu",
      .bs = "*", .copy = ghost_check_copy, .ctx = ctx}, err));
  TSR_TRY(registry_add(reg, &(registry_item_t){
      .kind = REGISTRY_KIND_KERNEL, .name = opts->fill, .fs = "*", .hs = "cpu",
      .bs = "*", .kernel = ghost_check_fill, .ctx = ctx}, err));
cleanup:
  return st;
}

tsr_status ghost_check_verify(const patch_t *patch, int data_id, const ghost_check_options_t *opts,
                              ghost_check_report_t *rep, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const patch_options_t *o = patch_options(patch);
  memset(rep, 0, sizeof *rep);
  TSR_TRY(ghost_check_options_validate(opts, err));
  for (int a = 0; a < 3; ++a)
    TSR_CHECK(o->cells[a] <= GHOST_CHECK_MAX_CELLS, TSR_ERR_INVALID,
              "the ghost check codes cells of domains up to %d cells per axis; cells[%d] = %lld",
              GHOST_CHECK_MAX_CELLS, a, (long long)o->cells[a]);
  for (int32_t i = 0; i < patch_local_count(patch); ++i) {
    const block_info_t *b = patch_block(patch, patch_local_id(patch, i));
    const double *f = block_data_get(patch_block_data(patch, b->id), data_id);
    TSR_CHECK(f, TSR_ERR_INTERNAL, "BlockID %d has no '%s' data", (int)b->id, opts->field);
    grid_dims_t d = ghost_check_dims(b, opts);
    const int gw = d.ghost;
    for (int z = -gw; z < d.nz + gw; ++z)
      for (int y = -gw; y < d.ny + gw; ++y)
        for (int x = -gw; x < d.nx + gw; ++x) {
          int local[3] = {x, y, z}, order = 0;
          int64_t g[3];
          bool exists = true, reached = true;
          for (int a = 0; a < 3; ++a) {
            g[a] = b->lo[a] + local[a];
            int depth = local[a] < 0 ? -local[a] : local[a] - b->size[a] + 1;
            if (depth > 0) ++order;
            if (depth > opts->width[a]) reached = false; /* no exchange writes it */
            if (g[a] < 0 || g[a] >= o->cells[a]) {
              if (o->periodic[a]) g[a] = ((g[a] % o->cells[a]) + o->cells[a]) % o->cells[a];
              else exists = false;
            }
          }
          bool filled = exists && reached;
          ++rep->cells;
          if (order > 0) {
            ++rep->ghost_cells;
            if (filled) ++rep->filled[order];
            else ++rep->empty;
          }
          for (int k = 0; k < opts->comps; ++k) {
            double want = filled ? ghost_check_code(g[0], g[1], g[2], opts->first_comp + k)
                                 : GHOST_CHECK_EMPTY;
            double have = f[grid_index(&d, x, y, z, k)];
            if (have == want) continue;
            if (rep->mismatches++ == 0)
              tsr_error_set(err, TSR_ERR_CORRUPT, __FILE__, __LINE__,
                            "'%s', BlockID %d on rank %d, %s cell (%d, %d, %d) component %d "
                            "holds %.17g, expected %.17g (%s)",
                            opts->field, (int)b->id, b->rank, order ? "ghost" : "interior", x,
                            y, z, k, have, want,
                            filled   ? "the value of the cell it mirrors"
                            : exists ? "empty: beyond the ghost width"
                                     : "empty: the domain ends");
          }
        }
  }
  if (rep->mismatches) {
    st = TSR_ERR_CORRUPT;
    tsr_error_prefix(err, "%lld of %lld values wrong; first", (long long)rep->mismatches,
                     (long long)(rep->cells * opts->comps));
  }
cleanup:
  return st;
}
