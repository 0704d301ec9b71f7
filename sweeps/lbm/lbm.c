#include "lbm.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "direction.h"
#include "field.h"
#include "grid.h"
#include "inlet_profile.h"
#include "lbm_block.h"
#include "mesh.h"
#include "tsr_size.h"
#include "voxels.h"

/* ---- the CPU items ---- */

static tsr_status lbm_alloc_cells(const block_info_t *b, void *vctx, void **out,
                                  tsr_error_t *err) {
  const lbm_ctx_t *c = vctx;
  grid_layout_t l = c->opts.block_layout ? c->opts.block_layout[b->id] : c->opts.cpu_layout;
  return lbm_alloc_layout(b, c, l, (lbm_block_t **)out, err);
}

/* A CPU block's PDFs and cells. */
static tsr_status lbm_get(const block_info_t *b, block_data_t *data, const lbm_ctx_t *c,
                          field_block_t **pdf, lbm_block_t **cells, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *pdf = field_block_of(data, c->pdf_id);
  *cells = block_data_get(data, c->cells_id);
  TSR_CHECK(*pdf && *cells, TSR_ERR_INTERNAL, "BlockID %d lacks its LBM data", (int)b->id);
cleanup:
  return st;
}

/* ---- work ---- */

/* The boundary of a block, whole. */
static tsr_status lbm_boundary_whole(const block_info_t *b, block_data_t *data,
                                     const lbm_ctx_t *c, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  field_block_t *f;
  lbm_block_t *lb;
  TSR_TRY(lbm_get(b, data, c, &f, &lb, err));
  const lbm_kernels_t *k = c->kernels[f->host.dims.layout];
  double scale[LBM_LINK_GROUPS];
  const bool ramp = lbm_link_scale(&c->opts, lb->steps, scale);
  k->boundary(f->host.values, lb->links, lb->nlinks, 0, ramp ? scale : NULL);
  if (lb->nbody) { /* the forces of this boundary alone */
    int64_t none[3];
    if (lb->force) memset(lb->force, 0, 3 * (size_t)c->nbodies * sizeof *lb->force);
    k->bodies(f->host.values, lb->body, lb->nbody, lb->force ? lb->force : none, c->nbodies);
  }
  if (lb->nopen) k->outlet(f->host.values, &f->host.dims, lb->open, lb->nopen, &c->params);
cleanup:
  return st;
}

/* Sorts n links of `size` bytes (their ghost bits at offset `at`) so that those touching
 * no slice of late come first, in their order; returns how many they are. 0 where out
 * of memory (*ok false). */
static size_t lbm_sort_links(void *links, size_t n, size_t size, size_t at, uint32_t late,
                             bool *ok) {
  if (n == 0) return 0;
  uint8_t *a = links, *tmp = malloc(n * size);
  size_t early = 0, k = 0;
  if (!tmp) {
    *ok = false;
    return 0;
  }
  for (int pass = 0; pass < 2; ++pass)
    for (size_t j = 0; j < n; ++j) {
      uint32_t g;
      memcpy(&g, a + j * size + at, sizeof g);
      if (((g & late) != 0) != pass) continue;
      memcpy(tmp + k++ * size, a + j * size, size);
      early += pass == 0;
    }
  memcpy(a, tmp, n * size);
  free(tmp);
  return early;
}

/* The boundary, whole or in two parts (registry_region_t): the links that touch no late
 * ghost slice, then the others. A link writes a slot only its fluid cell pulls, and that
 * cell is next to every cell the link touches: a link on a late slice serves a shell
 * cell. */
static tsr_status lbm_boundary(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  const block_info_t *b = w->batch->blocks[0];
  field_block_t *f;
  lbm_block_t *lb;
  if (!w->part) return lbm_boundary_whole(b, w->batch->data[0], c, err);
  const registry_region_t *r = &w->regions[0];
  TSR_TRY(lbm_get(b, w->batch->data[0], c, &f, &lb, err));
  if (!lb->sorted || lb->sorted_late != r->late) {
    bool ok = true;
    lb->nlinks_early = lbm_sort_links(lb->links, lb->nlinks, sizeof *lb->links,
                                      offsetof(lbm_link_t, ghost), r->late, &ok);
    lb->nopen_early = lbm_sort_links(lb->open, lb->nopen, sizeof *lb->open,
                                     offsetof(lbm_open_link_t, ghost), r->late, &ok);
    lb->nbody_early = lbm_sort_links(lb->body, lb->nbody, sizeof *lb->body,
                                     offsetof(lbm_body_link_t, ghost), r->late, &ok);
    TSR_CHECK(ok, TSR_ERR_NOMEM, "out of memory sorting the links of BlockID %d", (int)b->id);
    lb->sorted = 1;
    lb->sorted_late = r->late;
  }
  const bool inner = w->part == REGISTRY_PART_INNER;
  const size_t l0 = inner ? 0 : lb->nlinks_early, l1 = inner ? lb->nlinks_early : lb->nlinks;
  const size_t o0 = inner ? 0 : lb->nopen_early, o1 = inner ? lb->nopen_early : lb->nopen;
  const size_t b0 = inner ? 0 : lb->nbody_early, b1 = inner ? lb->nbody_early : lb->nbody;
  const lbm_kernels_t *k = c->kernels[f->host.dims.layout];
  double scale[LBM_LINK_GROUPS];
  const bool ramp = lbm_link_scale(&c->opts, lb->steps, scale);
  k->boundary(f->host.values, lb->links + l0, l1 - l0, 0, ramp ? scale : NULL);
  if (lb->nbody) { /* the forces of this boundary alone: both parts add up */
    int64_t none[3];
    if (lb->force && inner) memset(lb->force, 0, 3 * (size_t)c->nbodies * sizeof *lb->force);
    k->bodies(f->host.values, lb->body + b0, b1 - b0, lb->force ? lb->force : none,
              c->nbodies);
  }
  if (o1 > o0) k->outlet(f->host.values, &f->host.dims, lb->open + o0, o1 - o0, &c->params);
cleanup:
  return st;
}

/* The stream-collide of the call's cells (every cell, or a part's); the step's end (the
 * swap, the step counted) with the last part. */
static tsr_status lbm_stream_collide(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  const block_info_t *b = w->batch->blocks[0];
  block_data_t *data = w->batch->data[0];
  grid_region_t g;
  const grid_region_t *r = field_work_region(w, 0, &g);
  field_block_t *pf;
  lbm_block_t *lb;
  TSR_TRY(lbm_get(b, data, c, &pf, &lb, err));
  const lbm_kernels_t *k = c->kernels[pf->host.dims.layout];
  void *src = pf->values[pf->cur], *dst = pf->values[pf->cur ^ 1];
  const lbm_variant_t v = lbm_variant(&c->opts);
  const lbm_coupling_flags_t *cf = &c->couple;
  const bool last = !r || r->part != GRID_PART_INNER;
  if (!cf->force && !cf->velocity) {
    k->stream_collide_region(src, dst, &pf->host.dims, &c->params, v, r);
  } else { /* coupled: a force per cell in, the velocity out */
    const grid_field_t *f = field_of(data, c->force_id), *u = field_of(data, c->velocity_id);
    TSR_CHECK((!cf->force || f) && (!cf->velocity || u), TSR_ERR_INTERNAL,
              "BlockID %d lacks a field of the flow's public face", (int)b->id);
    lbm_coupling_t cp = {.force = cf->force ? f->values : NULL,
                         .velocity = cf->velocity ? u->values : NULL,
                         .start = !lb->started};
    if (cf->force) cp.force_dims = f->dims;
    if (cf->velocity) cp.velocity_dims = u->dims;
    k->coupled_region(src, dst, &pf->host.dims, &c->params, v, &cp, r);
    if (last) lb->started = 1;
  }
  if (last) {
    field_swap(pf);
    lb->steps++;
  }
cleanup:
  return st;
}

/* The density the next collision will see (the sum of the pulled values, after the
 * boundary links), for the public face's lbm.density. */
static tsr_status lbm_density_item(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  const block_info_t *b = w->batch->blocks[0];
  block_data_t *data = w->batch->data[0];
  field_block_t *pf;
  lbm_block_t *lb;
  TSR_TRY(lbm_get(b, data, c, &pf, &lb, err));
  const grid_field_t *r = field_of(data, c->density_id);
  TSR_CHECK(r, TSR_ERR_INTERNAL, "BlockID %d lacks the field " LBM_DENSITY, (int)b->id);
  c->kernels[pf->host.dims.layout]->pulled_density(
      pf->host.values, &pf->host.dims, c->opts.shifted ? c->opts.rho0 : 0.0, r->values, &r->dims);
cleanup:
  return st;
}

static tsr_status lbm_moments_item(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  field_block_t *f;
  lbm_block_t *lb;
  TSR_TRY(lbm_get(w->batch->blocks[0], w->batch->data[0], c, &f, &lb, err));
  c->kernels[f->host.dims.layout]->moments(f->host.values, &f->host.dims, &c->params,
                                           c->opts.shifted, lb->rho, lb->u);
  lbm_mask_walls(c, lb);
  TSR_TRY(lbm_collision_velocity(c, w->batch->blocks[0], w->batch->data[0], lb, err));
cleanup:
  return st;
}

/* The moments view of a block (empty for a block without moments). */
static lbm_moments_view_t lbm_view(const lbm_block_t *lb) {
  if (!lb->rho) return (lbm_moments_view_t){.unstable = -1};
  return (lbm_moments_view_t){.rho = lb->rho, .u = lb->u, .flags = lb->flags,
                              .cells = (int64_t)lbm_cells(&lb->dims), .unstable = lb->unstable};
}

/* The moments, then the stability check on them (every cell's moments are needed for
 * the check on the CPU anyway). */
static tsr_status lbm_check_item(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  const lbm_ctx_t *c = vctx;
  lbm_block_t *lb = block_data_get(w->batch->data[0], c->cells_id);
  tsr_status st = lbm_moments_item(w, vctx, err);
  const double cs = lbm_sound_speed(&c->opts);
  lbm_moments_view_t v = lbm_view(lb);
  lb->unstable = st == TSR_OK ? lbm_first_unstable(&v, cs * cs) : -1;
  return st;
}

int64_t lbm_first_unstable(const lbm_moments_view_t *v, double cs2) {
  int64_t first = INT64_MAX;
#pragma omp parallel for schedule(static) reduction(min : first)
  for (int64_t k = 0; k < v->cells; ++k)
    if (v->flags[k] == GEOMETRY_FLUID && !lbm_cell_stable(cs2, v->rho[k], v->u + 3 * k) &&
        k < first)
      first = k;
  return first == INT64_MAX ? -1 : first;
}

lbm_moments_view_t lbm_block_moments(const block_data_t *data, int cells_id) {
  const lbm_block_t *lb = block_data_get(data, cells_id);
  return lb ? lbm_view(lb) : (lbm_moments_view_t){.unstable = -1};
}

/* ---- registration ---- */

/* The fields of the public face, in the order of their declaration. */
enum { LBM_FACE_FIELDS = 3 };
static const struct {
  const char *name;
  int components;
} lbm_face[LBM_FACE_FIELDS] = {{LBM_FORCE, 3}, {LBM_VELOCITY, 3}, {LBM_DENSITY, 1}};

/* The items' shared context for options o: lattice, kernels, collision parameters, data
 * ids, bs ids and the directions each population crosses. */
static tsr_status lbm_ctx_make(registry_t *reg, const patch_options_t *domain,
                               const lbm_options_t *o, gpu_lbm_cache_t *gpu, lbm_ctx_t *out,
                               tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_ctx_t c;
  memset(&c, 0, sizeof c);
  TSR_TRY(lbm_options_validate(o, err));
  TSR_TRY(lbm_options_check_domain(o, domain, err));
  c.opts = *o;
  c.domain = *domain;
  c.gpu = gpu;
  c.gradient_id = -1;
  c.lattice = o->lattice;
  const char *body_names[GEOMETRY_MAX_SHAPES];
  c.nbodies = geometry_bodies(&o->geometry, c.shape_body, body_names);
  c.kernels[GRID_AOS] = lbm_kernels_find(o->lattice, GRID_AOS, lbm_precision_storage(o->precision));
  c.kernels[GRID_SOA] = lbm_kernels_find(o->lattice, GRID_SOA, lbm_precision_storage(o->precision));
  TSR_CHECK(c.kernels[GRID_AOS] && c.kernels[GRID_SOA], TSR_ERR_INTERNAL,
            "no CPU kernels for lattice %s", o->lattice->name);
  c.params = lbm_options_params(o);
  TSR_TRY(registry_data_id(reg, LBM_PDF, &c.pdf_id, err));
  TSR_TRY(registry_data_id(reg, LBM_CELLS, &c.cells_id, err));
  int *const face_id[LBM_FACE_FIELDS] = {&c.force_id, &c.velocity_id, &c.density_id};
  for (int i = 0; i < LBM_FACE_FIELDS; ++i)
    TSR_TRY(registry_data_id(reg, lbm_face[i].name, face_id[i], err));
  selector_table_t *sel = registry_selectors(reg);
  TSR_TRY(selector_intern(sel, SELECTOR_BS, "fluid", &c.bs_fluid, err));
  TSR_TRY(selector_intern(sel, SELECTOR_BS, "fluid_boundary", &c.bs_boundary, err));
  TSR_TRY(selector_intern(sel, SELECTOR_BS, "solid", &c.bs_solid, err));
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    const int off[3] = {direction_offsets[d][0], direction_offsets[d][1], direction_offsets[d][2]};
    c.ncomps[d] = lattice_crossing(c.lattice, off, c.comps[d]);
  }
  lattice_ghost_width(c.lattice, c.width);
  *out = c;
cleanup:
  return st;
}

/* The flow's fields, in this order: the PDFs, the cells, the public face (ctx: the kept
 * context, c its contents). */
static tsr_status lbm_declare_fields(registry_t *reg, const lbm_ctx_t *c, void *ctx,
                                     gpu_field_programs_t *fields, module_decl_t *decl,
                                     tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_options_t *o = &c->opts;
  const module_env_t env = {.fields = fields};
  int stream[LATTICE_MAX_Q * 4]; /* GPU blocks may stream in place (fs in_place) */
  lattice_stream_table(c->lattice, stream);
  TSR_TRY(module_declare_field(decl, reg, &env, &(field_spec_t){
      .name = LBM_PDF, .components = c->lattice->q,
      .esize = lbm_storage_bytes(lbm_precision_storage(o->precision)),
      .width = {c->width[0], c->width[1], c->width[2]}, .copies = 2, .layout_by_fs = true,
      .block_layout = o->block_layout, .crossing = &c->comps[0][0], .stride = LATTICE_MAX_Q,
      .ncrossing = c->ncomps, .hollow_bs = "solid", .stream = stream, .fill = lbm_fill,
      .init_ctx = ctx}, err));
  if (decl) TSR_TRY(module_declare_data(decl, LBM_CELLS, err));
  /* the public face: the velocity and the density start as the initial state's, so that
     a module reading them before the first collision (a start sweep) sees it */
  static const field_init_fn face_init[] = {NULL, lbm_initial_velocity, lbm_initial_density};
  for (int i = 0; i < LBM_FACE_FIELDS; ++i) {
    /* the force and the velocity are stored with the populations' ghost layers (they
       travel only where a module reads them across faces), so that on SoA blocks a cell's
       values lie at its populations' element offsets: the coupled vector code reads and
       writes them with the populations' vectors (lbm_kernels_t.coupled) */
    const bool beside = i < 2;
    TSR_TRY(module_declare_field(decl, reg, &env, &(field_spec_t){.name = lbm_face[i].name,
                          .components = lbm_face[i].components,
                          .esize = lbm_precision_value_bytes(o->precision), .layout = GRID_SOA,
                          .width = {beside ? c->width[0] : 0, beside ? c->width[1] : 0,
                                    beside ? c->width[2] : 0},
                          .init = face_init[i], .init_ctx = ctx}, err));
  }
cleanup:
  return st;
}

tsr_status lbm_sweep_register(registry_t *reg, const patch_options_t *domain,
                              const lbm_options_t *o, gpu_lbm_cache_t *gpu,
                              gpu_field_programs_t *fields, module_decl_t *decl,
                              lbm_ctx_t **kept, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_ctx_t c;
  TSR_TRY(lbm_ctx_make(reg, domain, o, gpu, &c, err));
  void *ctx;
  TSR_TRY(registry_keep(reg, &c, sizeof c, &ctx, err));
  if (kept) *kept = ctx;
  TSR_TRY(registry_exclusive(reg, "srt,trt", err));
  TSR_TRY(registry_exclusive(reg, "sp,dp,fp16s,fp16c", err));
  TSR_TRY(registry_exclusive(reg, "aos,soa", err));
  TSR_TRY(lbm_declare_fields(reg, &c, ctx, fields, decl, err));
  const char *live = "fluid|fluid_boundary";
  const registry_item_t items[] = {
      {.kind = REGISTRY_KIND_ALLOCATOR, .name = LBM_CELLS, .fs = "*", .hs = "cpu", .bs = "*",
       .alloc = lbm_alloc_cells, .free = lbm_block_release},
      {.kind = REGISTRY_KIND_BOUNDARY, .name = LBM_BOUNDARY, .fs = "*", .hs = "cpu",
       .bs = "fluid_boundary", .work = lbm_boundary, .parts = 1, .concurrent = 1},
      {.kind = REGISTRY_KIND_BOUNDARY, .name = LBM_BOUNDARY, .fs = "*", .hs = "cpu|gpu",
       .bs = "fluid|solid", .work = registry_nothing},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_STREAM_COLLIDE, .fs = "*", .hs = "cpu",
       .bs = live, .work = lbm_stream_collide, .parts = 1, .concurrent = 1},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_STREAM_COLLIDE, .fs = "*", .hs = "cpu|gpu",
       .bs = "solid", .work = registry_nothing},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_PULLED_DENSITY, .fs = "*", .hs = "cpu",
       .bs = live, .work = lbm_density_item, .concurrent = 1},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_PULLED_DENSITY, .fs = "*", .hs = "cpu|gpu",
       .bs = "solid", .work = registry_nothing},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_MOMENTS, .fs = "*", .hs = "cpu", .bs = live,
       .work = lbm_moments_item, .concurrent = 1},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_MOMENTS, .fs = "*", .hs = "cpu|gpu",
       .bs = "solid", .work = registry_nothing},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_CHECK, .fs = "*", .hs = "cpu", .bs = live,
       .work = lbm_check_item, .concurrent = 1},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_CHECK, .fs = "*", .hs = "cpu|gpu",
       .bs = "solid", .work = registry_nothing},
  };
  TSR_TRY(lbm_add_items(reg, items, sizeof items / sizeof items[0], ctx, err));
cleanup:
  return st;
}

tsr_status lbm_classify(patch_t *patch, registry_t *reg, const lbm_options_t *o, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  uint32_t ids[3];
  selector_table_t *sel = registry_selectors(reg);
  TSR_TRY(selector_intern(sel, SELECTOR_BS, "fluid", &ids[GEOMETRY_CLASS_FLUID], err));
  TSR_TRY(selector_intern(sel, SELECTOR_BS, "fluid_boundary", &ids[GEOMETRY_CLASS_BOUNDARY], err));
  TSR_TRY(selector_intern(sel, SELECTOR_BS, "solid", &ids[GEOMETRY_CLASS_SOLID], err));
  const patch_options_t *domain = patch_options(patch);
  const uint64_t mine = patch_bs_bit(ids[0]) | patch_bs_bit(ids[1]) | patch_bs_bit(ids[2]);
  int32_t solid = 0;
  for (int32_t id = 0; id < patch_block_count(patch); ++id) {
    const block_info_t *b = patch_block(patch, id);
    geometry_class_t k = geometry_classify(&o->geometry, domain, b);
    solid += k == GEOMETRY_CLASS_SOLID;
    /* the LBM's class replaces its earlier one; other sweeps' names stay */
    TSR_TRY(patch_set_bs(patch, id, (b->bs & ~mine) | patch_bs_bit(ids[k]), err));
  }
  /* every process classifies every block: all see the same count */
  TSR_CHECK(solid < patch_block_count(patch), TSR_ERR_INVALID,
            "obstacles: the %d shape(s) cover every cell of the domain; there is no fluid to "
            "simulate", o->geometry.nshapes);
cleanup:
  return st;
}

