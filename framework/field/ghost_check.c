#include "ghost_check.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "direction.h"
#include "field.h"
#include "tsr_size.h"

/* What the fill kernel shares with the field's start values: its options and data id. */
typedef struct ghost_check_ctx {
  ghost_check_options_t opts; /* names pointing at field_name and fill_name */
  char field_name[64], fill_name[64];
  int data_id;
} ghost_check_ctx_t;

ghost_check_options_t ghost_check_options_default(void) {
  return (ghost_check_options_t){.field = GHOST_CHECK_FIELD, .fill = GHOST_CHECK_FILL,
                                 .width = {1, 1, 1}, .layout = GRID_AOS, .comps = 2};
}

double ghost_check_code(int64_t gx, int64_t gy, int64_t gz, int comp) {
  int64_t m = GHOST_CHECK_MAX_CELLS;
  return (double)((((gz * m + gy) * m + gx) * GHOST_CHECK_MAX_COMPS + comp) + 1);
}

/* Whether local cell (x, y, z) of block b lies in its interior. */
static bool ghost_check_interior(const block_info_t *b, const int local[3]) {
  for (int a = 0; a < 3; ++a)
    if (local[a] < 0 || local[a] >= b->size[a]) return false;
  return true;
}

/* The codes of the interior, GHOST_CHECK_EMPTY in every ghost cell. */
static tsr_status ghost_check_values(const block_info_t *b, void *values, const grid_dims_t *d,
                                     const void *vctx, tsr_error_t *err) {
  (void)err;
  const ghost_check_ctx_t *c = vctx;
  const ghost_check_options_t *o = &c->opts;
  double *f = values;
  const int g = d->ghost;
  for (int z = -d->gz; z < d->nz + d->gz; ++z)
    for (int y = -g; y < d->ny + g; ++y)
      for (int x = -g; x < d->nx + g; ++x) {
        const int local[3] = {x, y, z};
        bool inside = ghost_check_interior(b, local);
        for (int k = 0; k < o->comps; ++k)
          f[grid_index(d, x, y, z, k)] =
              inside ? ghost_check_code(b->lo[0] + x, b->lo[1] + y, b->lo[2] + z,
                                        o->first_comp + k)
                     : GHOST_CHECK_EMPTY;
      }
  return TSR_OK;
}

/* Writes the start values again: on the host, and on a GPU block uploaded to every copy. */
static tsr_status ghost_check_fill(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const block_info_t *b = w->batch->blocks[0];
  block_data_t *data = w->batch->data[0];
  const ghost_check_ctx_t *c = vctx;
  field_block_t *f = field_block_of(data, c->data_id);
  grid_field_t *h = f ? &f->host : NULL;
  TSR_CHECK(f, TSR_ERR_INTERNAL, "BlockID %d has no '%s' data to fill", (int)b->id, c->opts.field);
  if (field_on_device(f)) {
    const grid_field_t *mirror;
    TSR_TRY(field_sync(data, c->data_id, &mirror, err)); /* allocates the host mirror */
  }
  TSR_TRY(ghost_check_values(b, h->values, &h->dims, c, err));
  if (field_on_device(f)) TSR_TRY(gpu_field_upload(&f->device, h->values, &h->dims, err));
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

tsr_status ghost_check_register(registry_t *reg, gpu_field_programs_t *gpu,
                                const ghost_check_options_t *opts, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  ghost_check_ctx_t c;
  memset(&c, 0, sizeof c);
  c.opts = *opts;
  TSR_TRY(ghost_check_options_validate(opts, err));
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
  TSR_TRY(field_declare(reg, gpu, &(field_spec_t){
      .name = opts->field, .components = opts->comps, .esize = sizeof(double),
      .width = {opts->width[0], opts->width[1], opts->width[2]}, .layout = opts->layout,
      .fill = ghost_check_values, .init_ctx = kept}, err));
  TSR_TRY(registry_add(reg, &(registry_item_t){
      .kind = REGISTRY_KIND_KERNEL, .name = opts->fill, .fs = "*", .hs = "cpu|gpu",
      .bs = "*", .work = ghost_check_fill, .ctx = ctx}, err));
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
    const grid_field_t *h;
    TSR_TRY(field_sync(patch_block_data(patch, b->id), data_id, &h, err));
    TSR_CHECK(h, TSR_ERR_INTERNAL, "BlockID %d has no '%s' data", (int)b->id, opts->field);
    const double *f = h->values;
    grid_dims_t d = h->dims;
    const int gw = d.ghost;
    for (int z = -d.gz; z < d.nz + d.gz; ++z)
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
