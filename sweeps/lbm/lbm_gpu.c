
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "field.h"
#include "gpu_buffer.h"
#include "gpu_lbm.h"
#include "lbm_collide.h"
#include "lbm_gpu.h"
#include "lbm.h"

/* The program for blocks of this size, built on first use. */
static tsr_status lbm_gpu_program(const lbm_ctx_t *c, const int size[3], gpu_lbm_t **out,
                                  tsr_error_t *err) {
  gpu_lbm_spec_t spec;
  memset(&spec, 0, sizeof spec);
  for (int a = 0; a < 3; ++a) spec.n[a] = size[a];
  spec.dp = c->opts.precision == LBM_DP;
  const lbm_storage_t storage = lbm_precision_storage(c->opts.precision);
  spec.store16 = storage == LBM_STORAGE_F16S || storage == LBM_STORAGE_F16C ? (int)storage : 0;
  spec.lattice = c->lattice;
  const lbm_variant_t v = lbm_variant(&c->opts);
  spec.collision = (int)c->opts.collision; /* 0 SRT, 1 TRT, 2 MRT, 3 cumulant */
  spec.les = c->params.smagorinsky > 0;
  spec.force = c->params.use_force;
  spec.coupled = c->couple.force || c->couple.velocity;
  double consts[LBM_CONSTS_COUNT(LATTICE_MAX_Q)]; /* room for either precision */
  c->kernels[GRID_AOS]->constants(&c->params, v, consts);
  return gpu_lbm_cache_program(c->gpu, &spec, consts, out, err);
}

/* ---- GPU blocks ---- */

typedef struct lbm_gpu_block {
  lbm_block_t host; /* first member: lbm_block_moments reads flags, rho and u from it;
                       links stay NULL (they live on the device) */
  gpu_lbm_t *prog;  /* the program of the block's size (borrowed from the cache); NULL for
                       a solid block */
  gpu_buffer_t moments;
  gpu_buffer_t flags, first; /* for the stability check on the device */
  gpu_lbm_force_slice_t slice; /* its obstacle links' momentum exchange on the device */
} lbm_gpu_block_t;

static void lbm_gpu_block_release(void *data, void *vctx) {
  (void)vctx;
  lbm_gpu_block_t *gb = data;
  if (!gb) return;
  gpu_buffer_free(&gb->moments);
  gpu_buffer_free(&gb->flags);
  gpu_buffer_free(&gb->first);
  lbm_block_clear(&gb->host);
  free(gb);
}

static tsr_status lbm_gpu_alloc(const block_info_t *b, void *vctx, void **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  lbm_gpu_block_t *gb = NULL;
  lbm_block_t *h = NULL;
  gpu_lbm_t *prog = NULL;
  *out = NULL;
  TSR_CHECK(c->gpu, TSR_ERR_INVALID,
            "BlockID %d is to run on hs gpu, but this process has no OpenCL device", (int)b->id);
  gb = calloc(1, sizeof *gb);
  TSR_CHECK(gb, TSR_ERR_NOMEM, "out of memory for the LBM data of BlockID %d", (int)b->id);
  /* the host builds the block exactly as for the CPU: initial PDFs, flags, links */
  TSR_TRY(lbm_alloc_layout(b, c, GRID_AOS, &h, err));
  gb->host = *h;
  free(h);
  h = NULL;
  if (!gb->host.flags) goto done; /* solid: nothing on the device */
  opencl_context_t *cl = gpu_lbm_cache_context(c->gpu);
  TSR_TRY(lbm_gpu_program(c, b->size, &prog, err));
  gb->prog = prog;

  /* the links stay on the host until a batch gathers those of its blocks */
  TSR_TRY(gpu_buffer_create(cl, gpu_lbm_moments_bytes(prog), "moments", &gb->moments, err));
  size_t cells = lbm_cells(&gb->host.dims);
  TSR_TRY(gpu_buffer_create(cl, cells, "cell flags", &gb->flags, err));
  TSR_TRY(gpu_buffer_write(cl, &gb->flags, 0, cells, gb->host.flags, NULL, err));
  TSR_TRY(gpu_buffer_create(cl, sizeof(int32_t), "stability check", &gb->first, err));
done:
  *out = gb;
  gb = NULL;
cleanup:
  if (st != TSR_OK) tsr_error_prefix(err, "BlockID %d on OpenCL device", (int)b->id);
  lbm_block_release(h, NULL);
  lbm_gpu_block_release(gb, NULL);
  return st;
}

/* A GPU block's cells, its PDFs and the two copies of them as the LBM program sees
 * them. */
static tsr_status lbm_gpu_get(const block_info_t *b, block_data_t *data, const lbm_ctx_t *c,
                              lbm_gpu_block_t **gb, field_block_t **pdf, gpu_lbm_field_t *dev,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *gb = block_data_get(data, c->cells_id);
  *pdf = field_block_of(data, c->pdf_id);
  TSR_CHECK(*gb && (*gb)->prog && *pdf && field_on_device(*pdf), TSR_ERR_INTERNAL,
            "GPU BlockID %d lacks its LBM data on the device", (int)b->id);
  const gpu_field_t *f = &(*pdf)->device;
  *dev = (gpu_lbm_field_t){.grid = {f->grid[0].mem, f->grid[1].mem}, .cur = f->cur,
                           .in_place = gpu_field_in_place(f)};
cleanup:
  return st;
}

/* ---- work: every GPU block of the process at once ---- */

/* What a batch's grouping needs: the module's context and which fields go with the
 * populations. */
typedef struct lbm_gpu_want {
  const lbm_ctx_t *c;
  int density; /* lbm.density to write, instead of the public face's stream-collide fields */
  int boundary; /* the batch of the boundary item: its obstacle links' forces are the
                   blocks' (lbm_gpu_block_t.slice) */
  const registry_region_t *regions; /* the boundary in two parts: the blocks' late slices
                                       (gpu_lbm_member_t.late); NULL: whole */
} lbm_gpu_want_t;

/* The batch's blocks grouped for the device, with the fields of the public face the
 * stream-collide uses, or (density) with lbm.density to write. */
static tsr_status lbm_gpu_group(registry_batch_t *batch, const void *vwant, void **state,
                                tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_gpu_want_t *want = vwant;
  const lbm_ctx_t *c = want->c;
  const int density = want->density;
  gpu_lbm_member_t *m = calloc(batch->n, sizeof *m);
  TSR_CHECK(m, TSR_ERR_NOMEM, "out of memory grouping the GPU blocks");
  const lbm_coupling_flags_t *cf = &c->couple;
  for (size_t k = 0; k < batch->n; ++k) {
    lbm_gpu_block_t *gb;
    field_block_t *pdf;
    gpu_lbm_field_t dev;
    TSR_TRY(lbm_gpu_get(batch->blocks[k], batch->data[k], c, &gb, &pdf, &dev, err));
    const int use_force = cf->force && !density, use_u = cf->velocity && !density;
    field_block_t *f = field_block_of(batch->data[k], c->force_id),
                  *u = field_block_of(batch->data[k], density ? c->density_id : c->velocity_id);
    TSR_CHECK((!use_force || (f && field_on_device(f))) &&
                  (!(use_u || density) || (u && field_on_device(u))),
              TSR_ERR_INTERNAL, "GPU BlockID %d lacks a field of the flow's public face on the "
              "device", (int)batch->blocks[k]->id);
    /* the links go to the device for the boundary's batch alone */
    const lbm_block_t *h = want->boundary ? &gb->host : &(const lbm_block_t){0};
    m[k] = (gpu_lbm_member_t){.prog = gb->prog, .pdf = &pdf->device,
                              .aux_in = use_force ? &f->device : NULL,
                              .aux_out = use_u || density ? &u->device : NULL,
                              .links = {h->links, NULL}, .nlinks = {h->nlinks, 0},
                              .open = h->open, .nopen = h->nopen,
                              .body = h->body, .nbody = h->nbody,
                              .slice = want->boundary ? &gb->slice : NULL,
                              .late = want->regions ? want->regions[k].late : 0};
  }
  TSR_TRY(gpu_lbm_batch_create(m, batch->n, &c->params, (gpu_lbm_batch_t **)state, err));
cleanup:
  free(m);
  return st;
}

/* The batch's grouping, made at its first call and kept with it (regions: the boundary's
 * in two parts, as lbm_gpu_want_t's). */
static tsr_status lbm_gpu_batch(registry_batch_t *batch, const lbm_ctx_t *c, int density,
                                int boundary, const registry_region_t *regions,
                                gpu_lbm_batch_t **out, tsr_error_t *err) {
  const lbm_gpu_want_t want = {c, density, boundary, regions};
  void *state = NULL;
  tsr_status st = registry_batch_state(batch, lbm_gpu_group, gpu_lbm_batch_release, &want,
                                       &state, err);
  *out = state;
  return st;
}

/* The boundary of every block: all of it, or in an overlapped step's parts its links
 * that touch no late ghost slice of the regions, and the others. */
static tsr_status lbm_gpu_boundary(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  registry_batch_t *batch = w->batch;
  const int part = (int)w->part;
  gpu_lbm_batch_t *b;
  TSR_TRY(lbm_gpu_batch(batch, c, 0, 1, w->regions, &b, err));
  TSR_CHECK(!part || gpu_lbm_batch_parts(b), TSR_ERR_INTERNAL,
            "the GPU boundary of %zu block(s) in parts, but grouped whole", batch->n);
  /* the blocks of a process are in step: the first one's count is the time */
  const lbm_gpu_block_t *first = block_data_get(batch->data[0], c->cells_id);
  double scale[LBM_LINK_GROUPS];
  const bool ramp = lbm_link_scale(&c->opts, first->host.steps, scale);
  TSR_TRY(gpu_lbm_batch_boundary(b, ramp ? scale : NULL, part, err));
cleanup:
  return st;
}

/* Local cell x and direction *i of element e of a field in AoS (grid_index inverted). */
static void lbm_aos_slot(const grid_dims_t *d, size_t e, int x[3], int *i) {
  const size_t q = (size_t)d->sx, rx = (size_t)(d->sy / d->sx), ry = (size_t)(d->sz / d->sy);
  const size_t o = (size_t)d->origin / q, p = e / q;
  *i = (int)(e % q);
  x[0] = (int)(p % rx) - (int)(o % rx);
  x[1] = (int)(p / rx % ry) - (int)(o / rx % ry);
  x[2] = (int)(p / rx / ry) - (int)(o / rx / ry);
}

/* Whether slot e (AoS, natural: f_i at cell y) belongs to a cell of the box [lo, hi).
 * Streamed in place, a cell reads and writes exactly the slots (i, y) with y + c_i = the
 * cell, in both parities: slot (i, y) belongs to cell y + c_i. */
static bool lbm_slot_in_box(const lattice_t *l, const grid_dims_t *d, size_t e,
                            const registry_region_t *r) {
  int y[3], i;
  lbm_aos_slot(d, e, y, &i);
  bool in = true;
  for (int a = 0; a < 3 && in; ++a) {
    const int owner = y[a] + l->c[a][i];
    in = owner >= r->lo[a] && owner < r->hi[a];
  }
  return in;
}

/* Whether a late link (to, from, from2; cells: the outlet's two cells, all of whose
 * slots it reads, or NULL) touches a slot of a cell of the inner box: in place, the
 * inner kernel would then change what the link reads or writes before it runs. */
static bool lbm_link_meets_box(const lbm_ctx_t *c, const grid_dims_t *d, const size_t *slots,
                               int nslots, const size_t *cells, const registry_region_t *r) {
  const lattice_t *l = c->lattice;
  for (int k = 0; k < nslots; ++k)
    if (lbm_slot_in_box(l, d, slots[k], r)) return true;
  for (int k = 0; cells && k < 2; ++k)
    for (int i = 0; i < l->q; ++i)
      if (lbm_slot_in_box(l, d, cells[k] + (size_t)i * (size_t)d->sc, r)) return true;
  return false;
}

/* When the batch's links (plain, outlets, obstacles) may run in an overlapped step
 * (registry_batch_early_fn): whole before the kernel's inner part where none touches a
 * cell of a late ghost slice (lbm_link_t.ghost); else in two parts, the links that touch
 * one after the exchange. A link writes a slot only its fluid cell pulls and reads slots
 * of cells next to it, so with two copies of the populations (the inner kernel writes
 * the other one) a late link and the inner kernel touch nothing of each other's. In
 * place they may (a Bouzidi link's slot i of its fluid cell belongs to the cell after
 * it, an outlet reads every slot of two cells): then the batch runs whole after the
 * exchange. */
static tsr_status lbm_gpu_boundary_early(registry_batch_t *batch, const registry_region_t *regions,
                                         void *vctx, int *early, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  bool late_links = false, meets = false;
  for (size_t k = 0; k < batch->n && !meets; ++k) {
    const lbm_gpu_block_t *gb = block_data_get(batch->data[k], c->cells_id);
    const registry_region_t *r = &regions[k];
    if (!gb || !r->late) continue;
    const field_block_t *pdf = field_block_of(batch->data[k], c->pdf_id);
    TSR_CHECK(pdf && field_on_device(pdf), TSR_ERR_INTERNAL,
              "GPU BlockID %d lacks its populations on the device", (int)batch->blocks[k]->id);
    const bool in_place = gpu_field_in_place(&pdf->device);
    const lbm_block_t *h = &gb->host;
    const grid_dims_t *d = &h->dims;
    for (size_t j = 0; j < h->nlinks && !meets; ++j) {
      if (!(h->links[j].ghost & r->late)) continue;
      late_links = true;
      const size_t s[2] = {h->links[j].to, h->links[j].from};
      meets = in_place && lbm_link_meets_box(c, d, s, 2, NULL, r);
    }
    for (size_t j = 0; j < h->nbody && !meets; ++j) {
      if (!(h->body[j].ghost & r->late)) continue;
      late_links = true;
      const size_t s[3] = {h->body[j].to, h->body[j].from, h->body[j].from2};
      meets = in_place && lbm_link_meets_box(c, d, s, 3, NULL, r);
    }
    for (size_t j = 0; j < h->nopen && !meets; ++j) {
      if (!(h->open[j].ghost & r->late)) continue;
      late_links = true;
      const size_t s[2] = {h->open[j].to, h->open[j].from};
      meets = in_place && lbm_link_meets_box(c, d, s, 2, h->open[j].cell, r);
    }
  }
  *early = meets ? REGISTRY_EARLY_NO : late_links ? REGISTRY_EARLY_PARTS : REGISTRY_EARLY_WHOLE;
cleanup:
  return st;
}

/* Plain, or coupled: a force per cell in, the velocity out (as lbm_stream_collide); the
 * fields of the public face have the same device layout. The whole step, or its parts
 * on the boxes of the regions; the step is counted with the last. */
static tsr_status lbm_gpu_stream_collide(const registry_work_t *w, void *vctx,
                                         tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  registry_batch_t *batch = w->batch;
  const int part = (int)w->part;
  gpu_lbm_batch_t *b;
  int *boxes = NULL;
  TSR_TRY(lbm_gpu_batch(batch, c, 0, 0, NULL, &b, err));
  if (part) TSR_TRY(field_region_boxes(w->regions, batch->n, &boxes, err));
  const lbm_coupling_flags_t *cf = &c->couple;
  lbm_gpu_block_t *first = block_data_get(batch->data[0], c->cells_id);
  const gpu_lbm_aux_t aux = {.start = !first->host.started};
  TSR_TRY(gpu_lbm_batch_step_part(b, cf->force || cf->velocity ? &aux : NULL, boxes, part,
                                  err));
  for (size_t k = 0; k < batch->n && part != REGISTRY_PART_INNER; ++k) {
    lbm_gpu_block_t *gb = block_data_get(batch->data[k], c->cells_id);
    gb->host.started = gb->host.started || cf->force || cf->velocity;
    gb->host.steps++;
  }
cleanup:
  free(boxes);
  return st;
}

/* ---- work on one block ---- */

/* lbm.pulled_density on the device, every block at once: every cell, or the parts of an
 * overlapped step on the boxes of the regions. */
static tsr_status lbm_gpu_density(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  gpu_lbm_batch_t *b;
  int *boxes = NULL;
  TSR_TRY(lbm_gpu_batch(w->batch, c, 1, 0, NULL, &b, err));
  if (w->part) TSR_TRY(field_region_boxes(w->regions, w->batch->n, &boxes, err));
  TSR_TRY(gpu_lbm_batch_pulled_density_part(b, c->opts.shifted ? c->opts.rho0 : 0.0, boxes,
                                            (int)w->part, err));
cleanup:
  free(boxes);
  return st;
}

static gpu_lbm_moments_opts_t lbm_gpu_moments_opts(const lbm_ctx_t *c) {
  return (gpu_lbm_moments_opts_t){
      .rho0 = c->opts.rho0,
      .force = {c->params.force[0], c->params.force[1], c->params.force[2]},
      .use_force = c->params.use_force,
      .shifted = c->opts.shifted};
}

static tsr_status lbm_gpu_moments(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const block_info_t *b = w->batch->blocks[0];
  block_data_t *data = w->batch->data[0];
  const lbm_ctx_t *c = vctx;
  lbm_gpu_block_t *gb;
  field_block_t *pdf;
  gpu_lbm_field_t dev;
  TSR_TRY(lbm_gpu_get(b, data, c, &gb, &pdf, &dev, err));
  gpu_lbm_moments_opts_t mo = lbm_gpu_moments_opts(c);
  TSR_TRY(gpu_lbm_moments(gb->prog, &dev, &gb->moments, &mo, gb->host.rho, gb->host.u, err));
  lbm_mask_walls(c, &gb->host);
  TSR_TRY(lbm_collision_velocity(c, b, data, &gb->host, err));
  if (gb->host.force) { /* the forces of the last boundary, as on CPU blocks */
    memset(gb->host.force, 0, 3 * (size_t)c->nbodies * sizeof *gb->host.force);
    TSR_TRY(gpu_lbm_force_read(&gb->slice, gb->host.body, gb->host.force, err));
  }
cleanup:
  return st;
}

/* The stability check on the device; the moments come to the host only for a block that
 * failed it (for the message). */
static tsr_status lbm_gpu_check(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const block_info_t *b = w->batch->blocks[0];
  block_data_t *data = w->batch->data[0];
  const lbm_ctx_t *c = vctx;
  lbm_gpu_block_t *gb;
  field_block_t *pdf;
  gpu_lbm_field_t dev;
  TSR_TRY(lbm_gpu_get(b, data, c, &gb, &pdf, &dev, err));
  gpu_lbm_moments_opts_t mo = lbm_gpu_moments_opts(c);
  const double cs = lbm_sound_speed(&c->opts);
  /* the velocity the collision used, where the block keeps it (lbm_collision_velocity) */
  field_block_t *u = field_block_of(data, c->velocity_id);
  const bool vel = u && field_on_device(u);
  const grid_dims_t vdims = vel ? gpu_field_dims(&u->device) : (grid_dims_t){0};
  TSR_TRY(gpu_lbm_check(gb->prog, &dev, &gb->flags, GEOMETRY_FLUID, &gb->first, &mo,
                        vel ? &u->device.grid[u->device.cur] : NULL, vel ? &vdims : NULL,
                        cs * cs, &gb->host.unstable, err));
  if (gb->host.unstable >= 0) TSR_TRY(lbm_gpu_moments(w, vctx, err));
cleanup:
  return st;
}

tsr_status lbm_gpu_register(registry_t *reg, lbm_ctx_t *ctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *live = "fluid|fluid_boundary";
  const registry_item_t items[] = {
      {.kind = REGISTRY_KIND_ALLOCATOR, .name = LBM_CELLS, .fs = "*", .hs = "gpu", .bs = "*",
       .alloc = lbm_gpu_alloc, .free = lbm_gpu_block_release},
      {.kind = REGISTRY_KIND_BOUNDARY, .name = LBM_BOUNDARY, .fs = "*", .hs = "gpu",
       .bs = "fluid_boundary", .work = lbm_gpu_boundary, .batch = 1, .parts = 1,
       .batch_early = lbm_gpu_boundary_early},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_STREAM_COLLIDE, .fs = "*", .hs = "gpu",
       .bs = live, .work = lbm_gpu_stream_collide, .batch = 1, .parts = 1},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_MOMENTS, .fs = "*", .hs = "gpu", .bs = live,
       .work = lbm_gpu_moments},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_PULLED_DENSITY, .fs = "*", .hs = "gpu",
       .bs = live, .work = lbm_gpu_density, .batch = 1, .parts = 1},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_CHECK, .fs = "*", .hs = "gpu", .bs = live,
       .work = lbm_gpu_check},
  };
  TSR_TRY(lbm_add_items(reg, items, sizeof items / sizeof items[0], ctx, err));
cleanup:
  return st;
}
