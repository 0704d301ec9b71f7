#include "field.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_copy.h"
#include "direction.h"
#include "gpu_buffer.h"
#include "selector.h"
#include "tsr_size.h"

/* What the items of one field share, kept by the registry. */
typedef struct field_ctx {
  field_spec_t spec;          /* name and tables pointing into this struct */
  char name[96];
  int comps[DIRECTION_COUNT][FIELD_MAX_COMPONENTS];
  int ncomps[DIRECTION_COUNT];
  int ghost;                  /* stored ghost layers: the largest width */
  int gz;                     /* along z: the width there (grid_ghost_of) */
  int hollow;                 /* spec.hollow_bs given */
  uint32_t hollow_bs;
  gpu_field_programs_t *gpu;  /* NULL: no device on this process */
  int stream[FIELD_MAX_COMPONENTS * 4]; /* spec.stream's table */
} field_ctx_t;

/* The bytes field_values_alloc takes for dims: whole 64-byte lines; false where there
 * are no elements or the bytes do not fit in a size_t. */
static bool field_values_bytes(const grid_dims_t *dims, size_t esize, size_t *bytes) {
  if (dims->elements == 0 || !tsr_mul_size(dims->elements, esize, bytes) ||
      !tsr_add_size(*bytes, 63, bytes))
    return false;
  *bytes = *bytes / 64 * 64;
  return true;
}

void *field_values_alloc(const grid_dims_t *dims, size_t esize) {
  size_t bytes = 0;
  if (!field_values_bytes(dims, esize, &bytes)) return NULL;
  void *v = aligned_alloc(64, bytes);
  if (v) memset(v, 0, bytes);
  return v;
}

static bool field_hollow(const field_ctx_t *c, const block_info_t *b) {
  return c->hollow && patch_has_bs(b, c->hollow_bs);
}

static void field_release(void *data, void *ctx) {
  (void)ctx;
  field_block_t *f = data;
  if (!f) return;
  gpu_field_release(&f->device); /* first: waits for the block's queue */
  for (int k = 0; k < 2; ++k) free(f->values[k]);
  if (f->copies == 0) free(f->host.values); /* a GPU block's host mirror */
  free(f);
}

/* The start values of a block's CPU grid. */
static tsr_status field_start(const field_ctx_t *c, const block_info_t *b, grid_field_t *g,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const field_spec_t *s = &c->spec;
  if (s->fill) TSR_TRY(s->fill(b, g->values, &g->dims, s->init_ctx, err));
  if (!s->init) goto cleanup;
  double v[FIELD_MAX_COMPONENTS] = {0};
  for (int z = 0; z < g->dims.nz; ++z)
    for (int y = 0; y < g->dims.ny; ++y)
      for (int x = 0; x < g->dims.nx; ++x) {
        s->init(b, x, y, z, s->init_ctx, v);
        for (int k = 0; k < s->components; ++k)
          field_set(g->values, s->esize, grid_index(&g->dims, x, y, z, k), v[k]);
      }
cleanup:
  return st;
}

/* A zeroed host grid of the block in a layout (values NULL for a hollow block). */
static tsr_status field_host(const field_ctx_t *c, const block_info_t *b, grid_layout_t layout,
                             grid_field_t *g, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const field_spec_t *s = &c->spec;
  g->esize = s->esize;
  g->dims = grid_dims_make_gz(b->size, s->components, c->ghost, c->gz, layout, s->esize);
  g->values = NULL;
  if (field_hollow(c, b)) goto cleanup;
  g->values = field_values_alloc(&g->dims, s->esize);
  TSR_CHECK(g->values, TSR_ERR_NOMEM,
            "out of memory for field '%s' of BlockID %d (%d x %d x %d cells, %zu values with "
            "ghost layers and padding, %zu bytes each)",
            s->name, (int)b->id, b->size[0], b->size[1], b->size[2], g->dims.elements, s->esize);
cleanup:
  return st;
}

/* A CPU block's field in a layout (the spec's block layout wins where it has one). */
static tsr_status field_cpu_alloc_layout(const block_info_t *b, const field_ctx_t *c,
                                         grid_layout_t layout, void **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  field_block_t *f = calloc(1, sizeof *f);
  *out = NULL;
  TSR_CHECK(f, TSR_ERR_NOMEM, "out of memory for field '%s' of BlockID %d", c->spec.name,
            (int)b->id);
  f->copies = c->spec.copies;
  if (c->spec.block_layout) layout = c->spec.block_layout[b->id];
  TSR_TRY(field_host(c, b, layout, &f->host, err));
  f->values[0] = f->host.values;
  if (f->host.values) {
    TSR_TRY(field_start(c, b, &f->host, err));
    if (f->copies == 2) {
      size_t bytes = f->host.dims.elements * f->host.esize;
      f->values[1] = field_values_alloc(&f->host.dims, f->host.esize);
      TSR_CHECK(f->values[1], TSR_ERR_NOMEM, "out of memory for the second copy of field '%s' "
                "of BlockID %d (%zu bytes)", c->spec.name, (int)b->id, bytes);
      memcpy(f->values[1], f->values[0], bytes);
    }
  }
  *out = f;
  f = NULL;
cleanup:
  field_release(f, NULL);
  return st;
}

static tsr_status field_cpu_alloc(const block_info_t *b, void *vctx, void **out,
                                  tsr_error_t *err) {
  const field_ctx_t *c = vctx;
  return field_cpu_alloc_layout(b, c, c->spec.layout, out, err);
}

/* The allocators of spec.layout_by_fs: the layout the run's fs switch names. */
static tsr_status field_cpu_alloc_aos(const block_info_t *b, void *vctx, void **out,
                                      tsr_error_t *err) {
  return field_cpu_alloc_layout(b, vctx, GRID_AOS, out, err);
}

static tsr_status field_cpu_alloc_soa(const block_info_t *b, void *vctx, void **out,
                                      tsr_error_t *err) {
  return field_cpu_alloc_layout(b, vctx, GRID_SOA, out, err);
}

/* The device fields of the batch's blocks, in one set (gpu_field.h), each started from
 * the values a CPU block would start from; in_place: one copy streamed in place. */
static tsr_status field_gpu_alloc_as(registry_batch_t *batch, const field_ctx_t *c,
                                     int in_place, void **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const field_spec_t *s = &c->spec;
  const size_t n = batch->n;
  field_block_t **blocks = calloc(n ? n : 1, sizeof *blocks);
  gpu_field_t **dev = calloc(n ? n : 1, sizeof *dev);
  gpu_field_shape_t *shapes = calloc(n ? n : 1, sizeof *shapes);
  size_t ndev = 0;
  grid_field_t start = {NULL};
  TSR_CHECK(blocks && dev && shapes, TSR_ERR_NOMEM, "out of memory for field '%s'", s->name);
  TSR_CHECK(c->gpu, TSR_ERR_INVALID,
            "BlockID %d is to run on hs gpu, but this process has no OpenCL device",
            (int)batch->blocks[0]->id);
  for (size_t k = 0; k < n; ++k) {
    const block_info_t *b = batch->blocks[k];
    field_block_t *f = blocks[k] = calloc(1, sizeof *f);
    TSR_CHECK(f, TSR_ERR_NOMEM, "out of memory for field '%s' of BlockID %d", s->name,
              (int)b->id);
    /* the host mirror's dims (filled by field_sync); no copies on the host */
    f->host.esize = s->esize;
    f->host.dims = grid_dims_make_gz(b->size, s->components, c->ghost, c->gz, GRID_SOA,
                                     s->esize);
    if (field_hollow(c, b)) continue;
    shapes[ndev] = (gpu_field_shape_t){
        .n = {b->size[0], b->size[1], b->size[2]}, .ghost = c->ghost, .gz = c->gz,
        .components = s->components, .esize = s->esize, .copies = in_place ? 1 : s->copies,
        .width = {s->width[0], s->width[1], s->width[2]}, .crossing = &c->comps[0][0],
        .stride = FIELD_MAX_COMPONENTS, .ncrossing = c->ncomps,
        .stream = in_place ? c->stream : NULL};
    dev[ndev++] = &f->device;
  }
  TSR_TRY(gpu_field_create_set(c->gpu, shapes, ndev, dev, err));
  for (size_t k = 0; k < n && (s->init || s->fill); ++k) {
    const block_info_t *b = batch->blocks[k];
    if (!field_on_device(blocks[k])) continue;
    TSR_TRY(field_host(c, b, GRID_AOS, &start, err));
    TSR_TRY(field_start(c, b, &start, err));
    TSR_TRY(gpu_field_upload(&blocks[k]->device, start.values, &start.dims, err));
    free(start.values);
    start.values = NULL;
  }
  for (size_t k = 0; k < n; ++k) {
    out[k] = blocks[k];
    blocks[k] = NULL;
  }
cleanup:
  free(start.values);
  for (size_t k = 0; blocks && k < n; ++k) field_release(blocks[k], NULL);
  free(blocks);
  free(dev);
  free(shapes);
  return st;
}

static tsr_status field_gpu_alloc(registry_batch_t *batch, void *vctx, void **out,
                                  tsr_error_t *err) {
  return field_gpu_alloc_as(batch, vctx, 0, out, err);
}

static tsr_status field_gpu_alloc_in_place(registry_batch_t *batch, void *vctx, void **out,
                                           tsr_error_t *err) {
  return field_gpu_alloc_as(batch, vctx, 1, out, err);
}

/* ---- the exchange of CPU blocks (cpu_copy.h) ---- */

static void field_grid(const block_info_t *b, const void *data, const void *vctx, void **grid,
                       grid_dims_t *dims) {
  (void)b, (void)vctx;
  const field_block_t *f = data;
  *grid = f->host.values;
  *dims = f->host.dims;
}

static cpu_copy_layout_t field_copy_layout(const field_ctx_t *c) {
  return (cpu_copy_layout_t){.field = field_grid, .esize = c->spec.esize,
                             .comps = &c->comps[0][0], .stride = FIELD_MAX_COMPONENTS,
                             .ncomps = c->ncomps,
                             .width = {c->spec.width[0], c->spec.width[1], c->spec.width[2]},
                             .ctx = c};
}

static size_t field_size(const block_info_t *b, int dir, void *vctx) {
  const field_ctx_t *c = vctx;
  if (field_hollow(c, b)) return 0;
  cpu_copy_layout_t l = field_copy_layout(c);
  return cpu_copy_size(&l, b, dir);
}

static tsr_status field_cpu_extract(const block_info_t *b, const void *data, int dir,
                                    uint8_t *out, size_t cap, size_t *written, void *vctx,
                                    tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const field_ctx_t *c = vctx;
  const field_block_t *f = data;
  cpu_copy_layout_t l = field_copy_layout(c);
  TSR_CHECK(f->host.values, TSR_ERR_INTERNAL, "extraction of '%s' from BlockID %d: the block "
            "holds none of it", c->spec.name, (int)b->id);
  TSR_TRY(cpu_copy_extract(&l, b, f->host.values, &f->host.dims, dir, out, cap, written,
                           c->spec.name, err));
cleanup:
  return st;
}

static tsr_status field_cpu_insert(const block_info_t *b, void *data, int dir, const uint8_t *in,
                                   size_t len, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const field_ctx_t *c = vctx;
  field_block_t *f = data;
  cpu_copy_layout_t l = field_copy_layout(c);
  TSR_CHECK(f->host.values, TSR_ERR_CORRUPT, "insertion of '%s' into BlockID %d: the block "
            "holds none of it", c->spec.name, (int)b->id);
  TSR_TRY(cpu_copy_insert(&l, b, f->host.values, &f->host.dims, dir, in, len, c->spec.name,
                          err));
cleanup:
  return st;
}

static tsr_status field_cpu_copy(const registry_copy_task_t *tasks, size_t n, void *vctx,
                                 tsr_error_t *err) {
  cpu_copy_layout_t l = field_copy_layout(vctx);
  return cpu_copy_run(tasks, n, &l, err);
}

/* ---- the exchange of GPU blocks (gpu_field.h) ---- */

/* The device fields of the tasks' blocks (and their host_bound flags) for the staging
 * functions of gpu_field.h. */
typedef struct field_stage_list {
  gpu_field_t **dev;
  uint32_t *extract_dirs;
} field_stage_list_t;

static tsr_status field_stage_list(const registry_stage_task_t *tasks, size_t n,
                                   field_stage_list_t *l, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  l->dev = malloc((n ? n : 1) * sizeof *l->dev);
  l->extract_dirs = malloc((n ? n : 1) * sizeof *l->extract_dirs);
  TSR_CHECK(l->dev && l->extract_dirs, TSR_ERR_NOMEM, "out of memory staging GPU fields");
  for (size_t k = 0; k < n; ++k) {
    l->dev[k] = &((field_block_t *)tasks[k].data)->device;
    l->extract_dirs[k] = tasks[k].extract_dirs;
  }
cleanup:
  return st;
}

static void field_stage_list_free(field_stage_list_t *l) {
  free(l->dev);
  free(l->extract_dirs);
}

static tsr_status field_gpu_stage_out(const registry_stage_task_t *tasks, size_t n, void *vctx,
                                      tsr_error_t *err) {
  (void)vctx;
  field_stage_list_t l = {0};
  tsr_status st = field_stage_list(tasks, n, &l, err);
  if (st == TSR_OK) st = gpu_field_stage_out(l.dev, n, l.extract_dirs, err);
  field_stage_list_free(&l);
  return st;
}

static tsr_status field_gpu_stage_wait(const registry_stage_task_t *tasks, size_t n, void *vctx,
                                       tsr_error_t *err) {
  (void)vctx;
  tsr_status st = TSR_OK;
  for (size_t k = 0; k < n && st == TSR_OK; ++k)
    st = gpu_field_stage_wait(&((field_block_t *)tasks[k].data)->device, err);
  return st;
}

static tsr_status field_gpu_extract(const block_info_t *b, const void *data, int dir,
                                    uint8_t *out, size_t cap, size_t *written, void *vctx,
                                    tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const field_ctx_t *c = vctx;
  field_block_t *f = (field_block_t *)(uintptr_t)data;
  const size_t need = field_size(b, dir, vctx);
  TSR_CHECK(need <= cap, TSR_ERR_INTERNAL,
            "extraction of '%s' from GPU BlockID %d in direction %s needs %zu bytes, has %zu",
            c->spec.name, (int)b->id, direction_name(dir), need, cap);
  st = gpu_field_extract(&f->device, dir, out, need, err);
  if (st != TSR_OK) {
    tsr_error_prefix(err, "'%s', GPU BlockID %d", c->spec.name, (int)b->id);
    goto cleanup;
  }
  *written = need;
cleanup:
  return st;
}

static tsr_status field_gpu_insert(const block_info_t *b, void *data, int dir, const uint8_t *in,
                                   size_t len, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const field_ctx_t *c = vctx;
  field_block_t *f = data;
  TSR_CHECK(len == field_size(b, dir, vctx), TSR_ERR_CORRUPT,
            "insertion of '%s' into GPU BlockID %d from direction %s: %zu bytes, expected %zu",
            c->spec.name, (int)b->id, direction_name(dir), len, field_size(b, dir, vctx));
  st = gpu_field_insert(&f->device, dir, in, len, err);
  if (st != TSR_OK) tsr_error_prefix(err, "'%s', GPU BlockID %d", c->spec.name, (int)b->id);
cleanup:
  return st;
}

static tsr_status field_gpu_stage_in(const registry_stage_task_t *tasks, size_t n, void *vctx,
                                     tsr_error_t *err) {
  (void)vctx;
  field_stage_list_t l = {0};
  tsr_status st = field_stage_list(tasks, n, &l, err);
  if (st == TSR_OK) st = gpu_field_stage_in(l.dev, n, err);
  field_stage_list_free(&l);
  return st;
}

/* Same device: the receiver's unpack reads the sender's pack buffer; no host trip. */
static tsr_status field_gpu_copy(const registry_copy_task_t *tasks, size_t n, void *vctx,
                                 tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const field_ctx_t *c = vctx;
  for (size_t k = 0; k < n; ++k) {
    const registry_copy_task_t *t = &tasks[k];
    const field_block_t *from = t->src_data;
    field_block_t *to = t->dst_data;
    st = gpu_field_copy_from(&to->device, &from->device, t->dir, err);
    if (st != TSR_OK) {
      tsr_error_prefix(err, "'%s': GPU copy BlockID %d -> %d", c->spec.name, (int)t->src->id,
                       (int)t->dst->id);
      goto cleanup;
    }
  }
cleanup:
  return st;
}

/* ---- declaration ---- */

static tsr_status field_validate(const field_spec_t *s, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(s->name && s->name[0], TSR_ERR_INTERNAL, "a field without a name");
  TSR_CHECK(s->components >= 1 && s->components <= FIELD_MAX_COMPONENTS, TSR_ERR_INTERNAL,
            "field '%s': %d components; allowed are 1..%d", s->name, s->components,
            FIELD_MAX_COMPONENTS);
  TSR_CHECK(s->esize == 2 || s->esize == 4 || s->esize == 8, TSR_ERR_INTERNAL,
            "field '%s': %zu bytes per value; allowed are 2, 4 and 8", s->name, s->esize);
  TSR_CHECK(s->esize != 2 || !s->init, TSR_ERR_INTERNAL,
            "field '%s': 16-bit values and an initializer; 16-bit fields are filled by their "
            "module (fill), which knows their format", s->name);
  TSR_CHECK(s->copies >= 0 && s->copies <= 2, TSR_ERR_INTERNAL,
            "field '%s': %d copies; allowed are 1 and 2", s->name, s->copies);
  TSR_CHECK(s->layout == GRID_AOS || s->layout == GRID_SOA, TSR_ERR_INTERNAL,
            "field '%s': layout %d; allowed are aos and soa", s->name, (int)s->layout);
  TSR_CHECK(!(s->init && s->fill), TSR_ERR_INTERNAL,
            "field '%s': an initializer and a fill function; give one", s->name);
  TSR_CHECK(!s->host || (!s->width[0] && !s->width[1] && !s->width[2] && s->copies <= 1 &&
                         !s->stream && !s->layout_by_fs),
            TSR_ERR_INTERNAL,
            "field '%s': a host field has no ghost layers, one copy, one CPU layout", s->name);
  for (int a = 0; a < 3; ++a)
    TSR_CHECK(s->width[a] >= 0 && s->width[a] <= DIRECTION_MAX_WIDTH, TSR_ERR_INTERNAL,
              "field '%s': width[%d] = %d; allowed are 0..%d", s->name, a, s->width[a],
              DIRECTION_MAX_WIDTH);
  for (int d = 0; s->crossing && d < DIRECTION_COUNT; ++d) {
    TSR_CHECK(s->ncrossing[d] >= 0 && s->ncrossing[d] <= s->components, TSR_ERR_INTERNAL,
              "field '%s': %d components cross direction %s, of %d", s->name, s->ncrossing[d],
              direction_name(d), s->components);
    for (int k = 0; k < s->ncrossing[d]; ++k)
      TSR_CHECK(s->crossing[d * s->stride + k] >= 0 &&
                    s->crossing[d * s->stride + k] < s->components,
                TSR_ERR_INTERNAL, "field '%s': component %d crosses direction %s, of %d",
                s->name, s->crossing[d * s->stride + k], direction_name(d), s->components);
  }
cleanup:
  return st;
}

tsr_status field_declare(registry_t *reg, gpu_field_programs_t *gpu, const field_spec_t *spec,
                         tsr_error_t *err) {
  tsr_status st = TSR_OK;
  field_ctx_t *c = calloc(1, sizeof *c);
  void *kept = NULL;
  TSR_CHECK(c, TSR_ERR_NOMEM, "out of memory declaring a field");
  TSR_TRY(field_validate(spec, err));
  TSR_CHECK(strlen(spec->name) < sizeof c->name, TSR_ERR_INTERNAL,
            "field name '%s': at most %zu characters", spec->name, sizeof c->name - 1);
  c->spec = *spec;
  if (c->spec.copies == 0) c->spec.copies = 1;
  snprintf(c->name, sizeof c->name, "%s", spec->name);
  grid_ghost_of(spec->width, &c->ghost, &c->gz);
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    c->ncomps[d] = spec->crossing ? spec->ncrossing[d] : spec->components;
    for (int k = 0; k < c->ncomps[d]; ++k)
      c->comps[d][k] = spec->crossing ? spec->crossing[d * spec->stride + k] : k;
  }
  if (spec->hollow_bs) {
    c->hollow = 1;
    TSR_TRY(selector_intern(registry_selectors(reg), SELECTOR_BS, spec->hollow_bs, &c->hollow_bs,
                            err));
  }
  c->gpu = gpu;
  for (int i = 0; spec->stream && i < 4 * spec->components; ++i) c->stream[i] = spec->stream[i];
  TSR_TRY(registry_keep(reg, c, sizeof *c, &kept, err));
  field_ctx_t *k = kept;
  k->spec.name = k->name;
  k->spec.crossing = &k->comps[0][0];
  k->spec.stride = FIELD_MAX_COMPONENTS;
  k->spec.ncrossing = k->ncomps;
  k->spec.hollow_bs = NULL;
  k->spec.stream = spec->stream ? k->stream : NULL;
  const char *name = k->name;
  const registry_item_t items[] = {
      {.kind = REGISTRY_KIND_ALLOCATOR, .name = name, .fs = "*", .hs = "cpu", .bs = "*",
       .alloc = field_cpu_alloc, .free = field_release, .ctx = k},
      {.kind = REGISTRY_KIND_EXTRACTION, .name = name, .fs = "*", .hs = "cpu", .bs = "*",
       .extract = field_cpu_extract, .size = field_size, .ctx = k},
      {.kind = REGISTRY_KIND_INSERTION, .name = name, .fs = "*", .hs = "cpu", .bs = "*",
       .insert = field_cpu_insert, .size = field_size, .ctx = k},
      {.kind = REGISTRY_KIND_COPY, .name = name, .fs = "*", .hs = "cpu", .bs = "*",
       .copy = field_cpu_copy, .ctx = k},
      {.kind = REGISTRY_KIND_ALLOCATOR, .name = name, .fs = "*", .hs = "gpu", .bs = "*",
       .alloc_batch = field_gpu_alloc, .free = field_release, .ctx = k},
      {.kind = REGISTRY_KIND_EXTRACTION, .name = name, .fs = "*", .hs = "gpu", .bs = "*",
       .extract = field_gpu_extract, .size = field_size, .stage_out = field_gpu_stage_out,
       .stage_wait = field_gpu_stage_wait, .ctx = k},
      {.kind = REGISTRY_KIND_INSERTION, .name = name, .fs = "*", .hs = "gpu", .bs = "*",
       .insert = field_gpu_insert, .size = field_size, .stage_in = field_gpu_stage_in,
       .ctx = k},
      {.kind = REGISTRY_KIND_COPY, .name = name, .fs = "*", .hs = "gpu", .bs = "*",
       .copy = field_gpu_copy, .ctx = k},
  };
  if (spec->host) { /* GPU blocks take the CPU blocks' items: the field is on the host */
    for (size_t i = 0; i < 4; ++i) {
      registry_item_t it = items[i];
      it.hs = "cpu|gpu";
      TSR_TRY(registry_add(reg, &it, err));
    }
    goto cleanup;
  }
  for (size_t i = spec->layout_by_fs ? 1 : 0; i < sizeof items / sizeof items[0]; ++i)
    if (!(spec->stream && items[i].alloc_batch)) TSR_TRY(registry_add(reg, &items[i], err));
  if (spec->stream) { /* two grids or in place on GPU blocks, the run's fs picks */
    TSR_TRY(registry_exclusive(reg, "two_grid,in_place", err));
    registry_item_t it = items[4];
    it.fs = "two_grid";
    TSR_TRY(registry_add(reg, &it, err));
    it.fs = "in_place";
    it.alloc_batch = field_gpu_alloc_in_place;
    TSR_TRY(registry_add(reg, &it, err));
  }
  if (spec->layout_by_fs) { /* one CPU allocator per layout, the run's fs picks */
    registry_item_t it = items[0];
    it.fs = "aos";
    it.alloc = field_cpu_alloc_aos;
    TSR_TRY(registry_add(reg, &it, err));
    it.fs = "soa";
    it.alloc = field_cpu_alloc_soa;
    TSR_TRY(registry_add(reg, &it, err));
  }
cleanup:
  free(c);
  return st;
}

field_block_t *field_block_of(block_data_t *data, int id) {
  field_block_t *f = id < 0 ? NULL : block_data_get(data, id);
  return f && (f->host.values || field_on_device(f)) ? f : NULL;
}

const grid_field_t *field_of(const block_data_t *data, int id) {
  const field_block_t *f = field_block_of((block_data_t *)(uintptr_t)data, id);
  return f && !field_on_device(f) ? &f->host : NULL;
}

void field_swap(field_block_t *f) {
  if (field_on_device(f)) {
    gpu_field_swap(&f->device);
    return;
  }
  if (f->copies != 2) return;
  f->cur ^= 1;
  f->host.values = f->values[f->cur];
}

tsr_status field_sync(const block_data_t *data, int id, const grid_field_t **out,
                      tsr_error_t *err) {
  tsr_status st = TSR_OK;
  field_block_t *f = field_block_of((block_data_t *)(uintptr_t)data, id);
  *out = NULL;
  if (!f) return st;
  if (field_on_device(f)) {
    if (!f->host.values) {
      f->host.values = field_values_alloc(&f->host.dims, f->host.esize);
      TSR_CHECK(f->host.values, TSR_ERR_NOMEM, "out of memory reading a GPU field back (%zu "
                "values)", f->host.dims.elements);
    }
    TSR_TRY(gpu_field_download(&f->device, f->host.values, &f->host.dims, err));
  }
  *out = &f->host;
cleanup:
  return st;
}

/* ---- checkpoints: the interior in cell order, little-endian ---- */

size_t field_interior_bytes(const block_data_t *data, int id) {
  const field_block_t *f = field_block_of((block_data_t *)(uintptr_t)data, id);
  if (!f) return 0;
  const grid_dims_t *d = &f->host.dims;
  return (size_t)d->nx * (size_t)d->ny * (size_t)d->nz * (size_t)d->ncomp * f->host.esize;
}

/* One value of esize bytes between the host's order and little-endian (the same on
 * little-endian hosts). */
static inline void field_le(uint8_t *to, const uint8_t *from, size_t esize) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  for (size_t k = 0; k < esize; ++k) to[k] = from[esize - 1 - k];
#else
  memcpy(to, from, esize);
#endif
}

size_t field_row_bytes(const grid_field_t *h) {
  return (size_t)h->dims.nx * (size_t)h->dims.ncomp * h->esize;
}

int64_t field_rows(const grid_field_t *h) { return (int64_t)h->dims.ny * h->dims.nz; }

/* Copies rows between a grid and the row-order bytes (to_bytes: grid -> bytes). */
static void field_rows_copy(const grid_field_t *h, int64_t first, int64_t n, uint8_t *bytes,
                            bool to_bytes) {
  const grid_dims_t *d = &h->dims;
  const size_t esize = h->esize, row = field_row_bytes(h);
  const int nx = d->nx, nc = d->ncomp;
  const ptrdiff_t sx = d->sx, sc = d->sc;
  uint8_t *values = h->values;
  /* a row of an AoS field is one copy, a row of an SoA field a transpose in the value's
     own type (the bytes are little-endian); callers share rows among threads */
  for (int64_t r = 0; r < n; ++r) {
    const int y = (int)((first + r) % d->ny), z = (int)((first + r) / d->ny);
    uint8_t *out = bytes + (size_t)r * row, *v = values + grid_index(d, 0, y, z, 0) * esize;
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
    if (sc == 1 && sx == nc) {
      if (to_bytes) memcpy(out, v, row);
      else memcpy(v, out, row);
      continue;
    }
    if (esize == 8 || esize == 4) {
      for (int c = 0; c < nc; ++c)
        for (int x = 0; x < nx; ++x) {
          uint8_t *a = out + ((size_t)x * (size_t)nc + (size_t)c) * esize;
          uint8_t *b = v + (size_t)((ptrdiff_t)x * sx + (ptrdiff_t)c * sc) * esize;
          if (to_bytes) memcpy(a, b, esize == 8 ? 8 : 4);
          else memcpy(b, a, esize == 8 ? 8 : 4);
        }
      continue;
    }
#endif
    for (int x = 0; x < nx; ++x)
      for (int c = 0; c < nc; ++c, out += esize) {
        uint8_t *b = v + (size_t)((ptrdiff_t)x * sx + (ptrdiff_t)c * sc) * esize;
        if (to_bytes) field_le(out, b, esize);
        else field_le(b, out, esize);
      }
  }
}

void field_rows_to_bytes(const grid_field_t *h, int64_t first, int64_t n, uint8_t *out) {
  field_rows_copy(h, first, n, out, true);
}

void field_rows_from_bytes(grid_field_t *h, int64_t first, int64_t n, const uint8_t *in) {
  field_rows_copy(h, first, n, (uint8_t *)(uintptr_t)in, false);
}

tsr_status field_host_for_load(block_data_t *data, int id, grid_field_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  field_block_t *f = field_block_of(data, id);
  *out = NULL;
  if (!f) goto cleanup;
  if (field_on_device(f) && !f->host.values) {
    f->host.values = field_values_alloc(&f->host.dims, f->host.esize);
    TSR_CHECK(f->host.values, TSR_ERR_NOMEM, "out of memory for a GPU field's host copy (%zu "
              "values)", f->host.dims.elements);
  }
  *out = &f->host;
cleanup:
  return st;
}

tsr_status field_upload_host(block_data_t *data, int id, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  field_block_t *f = field_block_of(data, id);
  if (f && field_on_device(f))
    TSR_TRY(gpu_field_upload(&f->device, f->host.values, &f->host.dims, err));
cleanup:
  return st;
}

tsr_status field_region_boxes(const registry_region_t *regions, size_t n, int **boxes,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *boxes = malloc(6 * (n ? n : 1) * sizeof **boxes);
  TSR_CHECK(*boxes, TSR_ERR_NOMEM, "out of memory for the inner boxes of %zu blocks", n);
  for (size_t k = 0; k < n; ++k)
    for (int a = 0; a < 3; ++a) {
      (*boxes)[6 * k + (size_t)a] = regions[k].lo[a];
      (*boxes)[6 * k + 3 + (size_t)a] = regions[k].hi[a];
    }
cleanup:
  return st;
}

/* ---- what the kit allocates ---- */

/* One block's bytes of the field behind allocator item it (a kit item). */
static bool field_block_bytes(const registry_item_t *it, const block_info_t *b,
                              field_bytes_t *sum) {
  const field_ctx_t *c = it->ctx;
  const field_spec_t *s = &c->spec;
  if (field_hollow(c, b)) return true;
  const bool gpu = it->alloc_batch != NULL;
  if (!gpu) {
    grid_layout_t layout = it->alloc == field_cpu_alloc_aos   ? GRID_AOS
                           : it->alloc == field_cpu_alloc_soa ? GRID_SOA
                                                              : s->layout;
    if (s->block_layout) layout = s->block_layout[b->id];
    const grid_dims_t d = grid_dims_make_gz(b->size, s->components, c->ghost, c->gz, layout,
                                            s->esize);
    size_t one = 0, all = 0;
    return field_values_bytes(&d, s->esize, &one) &&
           tsr_mul_size(one, s->copies == 2 ? 2 : 1, &all) &&
           tsr_add_size(sum->host, all, &sum->host);
  }
  const int copies = it->alloc_batch == field_gpu_alloc_in_place || s->copies != 2 ? 1 : 2;
  size_t cells = 0, with = 0, one = 0, all = 0, shell = 0;
  const bool exchanged = s->width[0] || s->width[1] || s->width[2];
  bool ok = tsr_box_cells(b->size, 0, &cells) &&
            tsr_box_cells_gz(b->size, c->ghost, c->gz, &with) &&
            tsr_mul_size(with, (size_t)s->components * s->esize, &one) &&
            tsr_mul_size(one, (size_t)copies, &all) &&
            tsr_mul_size(exchanged ? with - cells : 0, 2 * (size_t)s->components * s->esize,
                         &shell) &&
            tsr_add_size(sum->device, all, &sum->device) &&
            tsr_add_size(sum->device, shell, &sum->device);
  if (ok && one > sum->largest) sum->largest = one;
  if (ok && one > sum->staging) sum->staging = one;
  return ok;
}

tsr_status field_local_bytes(const registry_t *reg, const char *name, uint64_t fs,
                             const patch_t *patch, field_bytes_t *sum, bool *kit,
                             tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *kit = true;
  for (int32_t i = 0; i < patch_local_count(patch) && *kit; ++i) {
    const block_info_t *b = patch_block(patch, patch_local_id(patch, i));
    const registry_request_t req = {.fs = fs, .hs = b->hs, .bs = b->bs};
    const registry_item_t *it = NULL;
    TSR_TRY(registry_lookup(reg, REGISTRY_KIND_ALLOCATOR, name, &req, &it, err));
    *kit = it->alloc == field_cpu_alloc || it->alloc == field_cpu_alloc_aos ||
           it->alloc == field_cpu_alloc_soa || it->alloc_batch == field_gpu_alloc ||
           it->alloc_batch == field_gpu_alloc_in_place;
    if (*kit)
      TSR_CHECK(field_block_bytes(it, b, sum), TSR_ERR_INVALID,
                "BlockID %d (%d x %d x %d cells): the bytes of its field '%s' do not fit in a "
                "size_t", (int)b->id, b->size[0], b->size[1], b->size[2], name);
  }
cleanup:
  return st;
}
