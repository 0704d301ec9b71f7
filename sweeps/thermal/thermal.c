/* thermal: a temperature T advected by the flow and diffusing, coupled back to the flow
 * by Boussinesq buoyancy (docs/physics.md, "Thermal convection").
 *
 * T is a D3Q7 advection-diffusion LBM (TRT, lbm_kernels_t.coupled): every step its sweep
 * pulls the D3Q7 populations, advects with the velocity the flow's collision used
 * ("lbm.velocity", read in the block's own cells) and writes the buoyancy force
 * F = rho0 g beta (T - T0) along "up" into the flow's force accumulator "lbm.force" (or
 * adds it there, where a module before this one writes it in the step), which the flow's
 * next collision adds; the start item adds the buoyancy of the initial temperature
 * before the first step. The walls normal to the gravity axis hold
 * a fixed temperature (anti-bounce-back: the wall lies half-way between the last cell
 * and the ghost cell); every other face that is not periodic is adiabatic (bounce-back:
 * no flux). Obstacles of the flow geometry are not walls for T.
 *
 * Units: the distance between the walls is H cells (the cells along the gravity axis),
 * the temperature difference is hot - cold; from the Rayleigh and Prandtl numbers and the
 * flow's viscosity nu (the scalar lbm.viscosity it publishes): kappa = nu / Pr,
 * g beta = Ra nu kappa / (dT H^3).
 * The Nusselt number Nu = 1 + <u_up T> H / (kappa dT) (the mean over every cell) is the
 * module's total: in the progress line, series.csv and summary.json. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "direction.h"
#include "field.h"
#include "gpu_lbm.h"
#include "grid.h"
#include "lattice.h"
#include "lbm_collide.h"
#include "lbm_kernels.h"
#include "sim.h"
#include "thermal.h"
#include "tsr_size.h"
#include "verdict.h"

#define THERMAL_PDF "thermal.pdf"
#define THERMAL_WALLS "thermal.walls"
#define THERMAL_START "thermal.start"
/* the flow's public face (fields and scalars it publishes) */
#define FLOW_VELOCITY "lbm.velocity"
#define FLOW_FORCE "lbm.force"
#define FLOW_VISCOSITY "lbm.viscosity"
#define FLOW_RHO0 "lbm.rho0"
#define THERMAL_BOUNDARY "thermal.boundary"
#define THERMAL_STREAM_COLLIDE "thermal.stream_collide"

typedef struct thermal_opts {
  double rayleigh, prandtl, hot, cold, perturbation, magic;
  int rolls;                /* of the perturbation, along the first axis across gravity */
  int axis;                 /* gravity acts along -axis; walls at its two faces unless the
                               domain is periodic along it (initial pulse only) */
  int pulse;                /* initial T: 0 the conduction profile, 1 a Gaussian pulse */
  double center[3], width;  /* the pulse: centre (cells) and standard deviation */
  int dp;                   /* double precision */
  grid_layout_t layout;
  double viscosity, rho0;   /* the flow's (its scalars lbm.viscosity and lbm.rho0: bind) */
} thermal_opts_t;

/* What the items share (kept in the registry). */
typedef struct thermal_ctx {
  thermal_opts_t o;
  patch_options_t domain;
  const lattice_t *lattice;
  const lbm_kernels_t *kernels[2];
  lbm_params_t params;
  lbm_coupling_t coupling;  /* beta and c0; the fields per block */
  double kappa, gbeta, height;
  int pdf_id, walls_id, force_id, velocity_id;
  int comps[DIRECTION_COUNT][LATTICE_MAX_Q];
  int ncomps[DIRECTION_COUNT];
  gpu_lbm_cache_t *gpu;     /* NULL: this process has no OpenCL device */
} thermal_ctx_t;

/* A block's walls (the populations are a field of the field kit, THERMAL_PDF): links of
 * element indices of the block's population field ([0] adiabatic, f[to] = f[from]; [1]
 * fixed temperature, f[to] = -f[from] + extra; in the storage precision; on a GPU block
 * of the AoS layout, gathered onto the device by the batch of the block's items) and on
 * a GPU block its D3Q7 program. */
typedef struct thermal_walls {
  lbm_link_t *links[2];
  size_t nlinks[2];
  gpu_lbm_t *prog; /* GPU blocks: borrowed from the module's program cache */
} thermal_walls_t;

typedef struct thermal_state {
  thermal_opts_t o;
  thermal_ctx_t *ctx;       /* after register_items (kept by the registry) */
  gpu_lbm_cache_t *gpu;     /* the programs of this process's OpenCL device */
} thermal_state_t;

static const char *const axis_names[] = {"x", "y", "z", NULL};

static tsr_status thermal_read(config_t *cfg, const simulation_options_t *so, void **state,
                               tsr_error_t *err) {
  tsr_status st = TSR_OK;
  static const char *const precisions[] = {"dp", "sp", NULL};
  static const char *const layouts[] = {"aos", "soa", NULL};
  thermal_state_t *s = calloc(1, sizeof *s);
  *state = NULL;
  TSR_CHECK(s, TSR_ERR_NOMEM, "out of memory");
  thermal_opts_t *o = &s->o;
  *o = (thermal_opts_t){.rayleigh = 1e4, .prandtl = 0.71, .hot = 1, .cold = 0,
                        .perturbation = 1e-3, .magic = 0.25, .rolls = 2,
                        .axis = so->domain.cells[2] == 1 ? 1 : 2, .dp = 1,
                        .layout = GRID_SOA, .viscosity = 1.0 / 6.0, .rho0 = 1};
  config_node_t *root = config_root(cfg), *t;
  TSR_TRY(config_object(root, "thermal", false, &t, err));
  if (t) {
    TSR_TRY(config_real(t, "rayleigh", false, 0, 1e12, &o->rayleigh, err));
    TSR_TRY(config_real(t, "prandtl", false, 1e-6, 1e6, &o->prandtl, err));
    TSR_TRY(config_real(t, "hot", false, -1e6, 1e6, &o->hot, err));
    TSR_TRY(config_real(t, "cold", false, -1e6, 1e6, &o->cold, err));
    TSR_TRY(config_real(t, "perturbation", false, 0, 1, &o->perturbation, err));
    int64_t rolls = o->rolls;
    TSR_TRY(config_int(t, "rolls", false, 1, 1 << 20, &rolls, err));
    o->rolls = (int)rolls;
    TSR_TRY(config_real(t, "magic", false, 1e-6, 1e6, &o->magic, err));
    TSR_TRY(config_choice(t, "axis", false, axis_names, &o->axis, err));
    int v = o->dp ? 0 : 1;
    TSR_TRY(config_choice(t, "precision", false, precisions, &v, err));
    o->dp = v == 0;
    v = (int)o->layout;
    TSR_TRY(config_choice(t, "cpu_layout", false, layouts, &v, err));
    o->layout = (grid_layout_t)v;
    static const char *const kinds[] = {"conduction", "pulse", NULL};
    config_node_t *ini;
    TSR_TRY(config_object(t, "initial", false, &ini, err));
    if (ini) {
      TSR_TRY(config_choice(ini, "kind", true, kinds, &o->pulse, err));
      if (o->pulse) {
        TSR_TRY(config_real3(ini, "center", true, -1e9, 1e9, o->center, err));
        TSR_TRY(config_real(ini, "width", true, 1e-3, 1e9, &o->width, err));
      }
    }
  }
  TSR_CHECK(o->hot != o->cold, TSR_ERR_INVALID,
            "%s: thermal.hot = thermal.cold = %g: the walls need a temperature difference",
            config_source(cfg), o->hot);
  TSR_CHECK(o->pulse || !so->domain.periodic[o->axis], TSR_ERR_INVALID,
            "%s: thermal.axis = \"%s\": the domain is periodic along %s; the hot and cold walls "
            "need its faces (a periodic axis is allowed with thermal.initial.kind \"pulse\", "
            "without walls)", config_source(cfg), axis_names[o->axis], axis_names[o->axis]);
  const int across = o->axis == 0 ? 1 : 0; /* the perturbation's axis */
  TSR_CHECK(o->rolls % 2 == 0 || !so->domain.periodic[across], TSR_ERR_INVALID,
            "%s: thermal.rolls = %d: the domain is periodic along %s, which takes an even "
            "number of rolls", config_source(cfg), o->rolls, axis_names[across]);
  TSR_CHECK(so->domain.cells[o->axis] >= 2, TSR_ERR_INVALID,
            "%s: thermal.axis = \"%s\": %lld cell(s) between the walls; at least 2 are needed",
            config_source(cfg), axis_names[o->axis], (long long)so->domain.cells[o->axis]);
  *state = s;
  s = NULL;
cleanup:
  free(s);
  return st;
}

static void thermal_free(void *state) {
  thermal_state_t *s = state;
  if (s) gpu_lbm_cache_free(&s->gpu);
  free(s);
}

/* The calibration's physics (hardware.balance.calibrate): the same fields and kernels on
 * a periodic block, so without walls, from a pulse (the conduction profile needs them). */
static tsr_status thermal_calibration(const void *state, void **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  thermal_state_t *s = calloc(1, sizeof *s);
  *out = NULL;
  TSR_CHECK(s, TSR_ERR_NOMEM, "out of memory");
  s->o = ((const thermal_state_t *)state)->o;
  s->o.pulse = 1;
  s->o.width = 4.0;
  for (int a = 0; a < 3; ++a) s->o.center[a] = 0.0;
  *out = s;
cleanup:
  return st;
}

static const char *thermal_fs(const void *state) {
  (void)state;
  return "";
}

static double thermal_height(const thermal_opts_t *o, const patch_options_t *d) {
  return (double)d->cells[o->axis];
}

static void thermal_describe(const void *state, bool cpu, bool gpu, char *out, size_t cap) {
  (void)cpu, (void)gpu;
  const thermal_state_t *s = state;
  snprintf(out, cap, "thermal d3q7 trt,%s, Ra = %g, Pr = %g", s->o.dp ? "dp" : "sp",
           s->o.rayleigh, s->o.prandtl);
}

/* ---- blocks ---- */

static void thermal_release(void *data, void *ctx) {
  (void)ctx;
  thermal_walls_t *w = data;
  if (!w) return;
  for (int k = 0; k < 2; ++k) free(w->links[k]);
  free(w);
}

typedef struct thermal_init_ctx {
  const thermal_ctx_t *c;
  const block_info_t *b;
} thermal_init_ctx_t;

/* The conduction profile, hot below, cold above, and a small convection roll along the
 * first horizontal axis (one period over the domain) to start convection. */
static void thermal_initial(int x, int y, int z, void *vctx, double out[4]) {
  const thermal_init_ctx_t *ic = vctx;
  const thermal_opts_t *o = &ic->c->o;
  const int at[3] = {x, y, z};
  out[1] = out[2] = out[3] = 0;
  if (o->pulse) { /* cold + (hot - cold) exp(-r^2 / (2 width^2)), nearest periodic image */
    double r2 = 0;
    for (int a = 0; a < 3; ++a) {
      const double n = (double)ic->c->domain.cells[a];
      if (n == 1) continue; /* 2-D */
      double d = (double)(ic->b->lo[a] + at[a]) + 0.5 - o->center[a];
      if (ic->c->domain.periodic[a]) d -= n * floor(d / n + 0.5);
      r2 += d * d;
    }
    out[0] = o->cold + (o->hot - o->cold) * exp(-r2 / (2.0 * o->width * o->width));
    return;
  }
  const int a = o->axis, hx = a == 0 ? 1 : 0;
  const double h = ((double)(ic->b->lo[a] + at[a]) + 0.5) / ic->c->height;
  const double w = ((double)(ic->b->lo[hx] + at[hx]) + 0.5) / (double)ic->c->domain.cells[hx];
  const double dt = o->hot - o->cold;
  const double pi = 3.14159265358979323846;
  out[0] = o->hot - dt * h + o->perturbation * dt * sin(pi * h) * cos(pi * o->rolls * w);
}

/* lbm.force at the start: the buoyancy of the initial temperature added, so that the
 * flow's first collision feels it already (with half its weight, as the flow starts at
 * rest: lbm_coupling_t.start). GPU blocks: on the host, then to the device. */
static tsr_status thermal_start(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const block_info_t *b = w->batch->blocks[0];
  block_data_t *data = w->batch->data[0];
  const thermal_ctx_t *c = vctx;
  field_block_t *f = field_block_of(data, c->force_id);
  const grid_field_t *h = NULL;
  TSR_CHECK(f, TSR_ERR_INTERNAL, "BlockID %d lacks the flow's force field", (int)b->id);
  TSR_TRY(field_sync(data, c->force_id, &h, err));
  thermal_init_ctx_t ic = {c, b};
  for (int z = 0; z < b->size[2]; ++z)
    for (int y = 0; y < b->size[1]; ++y)
      for (int x = 0; x < b->size[0]; ++x) {
        double t[4];
        thermal_initial(x, y, z, &ic, t);
        for (int a = 0; a < 3; ++a) {
          const size_t i = grid_index(&h->dims, x, y, z, a);
          field_set(h->values, h->esize, i,
                    field_value(h->values, h->esize, i) + c->coupling.beta[a] * (t[0] - c->coupling.c0));
        }
      }
  if (field_on_device(f)) TSR_TRY(gpu_field_upload(&f->device, h->values, &h->dims, err));
cleanup:
  return st;
}

/* The walls on the domain's faces, as links of a field with dims d: for every direction i
 * pulled from the ghost cell beyond a wall, the ghost value is the fluid cell's
 * post-collision value of the opposite direction, negated plus 2 w_i T_wall at the hot
 * and cold walls (anti-bounce-back; the wall lies half-way) and as it is at adiabatic
 * faces (bounce-back: no flux). */
static tsr_status thermal_links(const thermal_ctx_t *c, const block_info_t *b,
                                const grid_dims_t *d, thermal_walls_t *tb, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lattice_t *l = c->lattice;
  for (int pass = 0; pass < 2; ++pass) { /* count, then fill */
    size_t n[2] = {0, 0};
    for (int a = 0; a < 3; ++a) {
      if (c->domain.periodic[a]) continue;
      for (int side = 0; side < 2; ++side) {
        if (side == 0 ? b->lo[a] != 0 : b->lo[a] + b->size[a] != c->domain.cells[a]) continue;
        const bool fixed = a == c->o.axis;
        const double tw = side == 0 ? c->o.hot : c->o.cold;
        const int ghost = side == 0 ? -1 : b->size[a], fluid = side == 0 ? 0 : b->size[a] - 1;
        const int u = a == 0 ? 1 : 0, v = a == 2 ? 1 : 2;
        for (int i = 0; i < l->q; ++i) {
          if (l->c[a][i] != (side == 0 ? 1 : -1)) continue; /* pulled from beyond this wall */
          for (int q = 0; q < b->size[v]; ++q)
            for (int p = 0; p < b->size[u]; ++p, ++n[fixed]) {
              if (pass == 0) continue;
              int g[3], f[3];
              g[a] = ghost, f[a] = fluid, g[u] = f[u] = p, g[v] = f[v] = q;
              tb->links[fixed][n[fixed]] = (lbm_link_t){
                  .to = grid_index(d, g[0], g[1], g[2], i),
                  .from = grid_index(d, f[0], f[1], f[2], l->inv[i]),
                  .extra = fixed ? 2.0 * l->w[i] * tw : 0.0};
            }
        }
      }
    }
    for (int k = 0; pass == 0 && k < 2; ++k) {
      tb->nlinks[k] = n[k];
      tb->links[k] = malloc((n[k] ? n[k] : 1) * sizeof *tb->links[k]);
      TSR_CHECK(tb->links[k], TSR_ERR_NOMEM,
                "out of memory for the thermal walls of BlockID %d", (int)b->id);
    }
  }
cleanup:
  return st;
}

/* The populations at the start: the equilibrium of the initial temperature at rest,
 * ghost cells at the mean temperature (the field kit's fill function). */
static tsr_status thermal_fill(const block_info_t *b, void *values, const grid_dims_t *d,
                               const void *vctx, tsr_error_t *err) {
  (void)err;
  const thermal_ctx_t *c = vctx;
  lbm_params_t p = c->params;
  p.rho0 = 0.5 * (c->o.hot + c->o.cold); /* ghost cells: the mean temperature */
  thermal_init_ctx_t ic = {c, b};
  c->kernels[d->layout]->init(values, d, &p, 0, thermal_initial, &ic);
  return TSR_OK;
}

/* The walls of a block whose populations lie in a layout. */
static tsr_status thermal_walls_make(const block_info_t *b, const thermal_ctx_t *c,
                                     grid_layout_t layout, thermal_walls_t **out,
                                     tsr_error_t *err) {
  tsr_status st = TSR_OK;
  thermal_walls_t *w = calloc(1, sizeof *w);
  *out = NULL;
  TSR_CHECK(w, TSR_ERR_NOMEM, "out of memory for the thermal walls of BlockID %d", (int)b->id);
  const grid_dims_t d = grid_dims_make(b->size, c->lattice->q, 1, layout, c->o.dp ? 8 : 4);
  TSR_TRY(thermal_links(c, b, &d, w, err));
  *out = w;
  w = NULL;
cleanup:
  thermal_release(w, NULL);
  return st;
}

static tsr_status thermal_alloc(const block_info_t *b, void *vctx, void **out, tsr_error_t *err) {
  const thermal_ctx_t *c = vctx;
  return thermal_walls_make(b, c, c->o.layout, (thermal_walls_t **)out, err);
}

/* The links built on the host as for an AoS block (the batch moves them to the
 * device). */
static tsr_status thermal_gpu_alloc(const block_info_t *b, void *vctx, void **out,
                                    tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const thermal_ctx_t *c = vctx;
  thermal_walls_t *w = NULL;
  *out = NULL;
  TSR_CHECK(c->gpu, TSR_ERR_INVALID,
            "BlockID %d is to run on hs gpu, but this process has no OpenCL device", (int)b->id);
  TSR_TRY(thermal_walls_make(b, c, GRID_AOS, &w, err));
  gpu_lbm_spec_t spec = {.lattice = c->lattice, .n = {b->size[0], b->size[1], b->size[2]},
                         .dp = c->o.dp, .collision = 1, .ade = 1, .coupled = 1};
  double consts[LBM_CONSTS_COUNT(LATTICE_MAX_Q)]; /* room for either precision */
  c->kernels[GRID_AOS]->constants(&c->params, LBM_VARIANT_ADE_TRT, consts);
  TSR_TRY(gpu_lbm_cache_program(c->gpu, &spec, consts, &w->prog, err));
  *out = w;
  w = NULL;
cleanup:
  if (st != TSR_OK) tsr_error_prefix(err, "thermal: BlockID %d on OpenCL device", (int)b->id);
  thermal_release(w, NULL);
  return st;
}

/* A block's populations and walls. */
static tsr_status thermal_get(const block_info_t *b, block_data_t *data, const thermal_ctx_t *c,
                              field_block_t **pdf, thermal_walls_t **walls, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *pdf = field_block_of(data, c->pdf_id);
  *walls = block_data_get(data, c->walls_id);
  TSR_CHECK(*pdf && *walls, TSR_ERR_INTERNAL, "BlockID %d lacks its thermal data", (int)b->id);
cleanup:
  return st;
}

/* The batch's GPU blocks grouped for the device: the populations, the velocity in, the
 * force out, the walls. */
static tsr_status thermal_gpu_group(registry_batch_t *batch, const void *vctx, void **state,
                                    tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const thermal_ctx_t *c = vctx;
  gpu_lbm_member_t *m = calloc(batch->n, sizeof *m);
  TSR_CHECK(m, TSR_ERR_NOMEM, "out of memory grouping the GPU blocks");
  for (size_t k = 0; k < batch->n; ++k) {
    field_block_t *f;
    thermal_walls_t *w;
    TSR_TRY(thermal_get(batch->blocks[k], batch->data[k], c, &f, &w, err));
    field_block_t *u = field_block_of(batch->data[k], c->velocity_id),
                  *force = field_block_of(batch->data[k], c->force_id);
    TSR_CHECK(u && force && field_on_device(u) && field_on_device(force) && field_on_device(f),
              TSR_ERR_INTERNAL, "GPU BlockID %d lacks its populations, the velocity or the "
              "force field on the device", (int)batch->blocks[k]->id);
    m[k] = (gpu_lbm_member_t){.prog = w->prog, .pdf = &f->device, .aux_in = &u->device,
                              .aux_out = &force->device,
                              .links = {w->links[0], w->links[1]},
                              .nlinks = {w->nlinks[0], w->nlinks[1]}};
  }
  TSR_TRY(gpu_lbm_batch_create(m, batch->n, NULL, (gpu_lbm_batch_t **)state, err));
cleanup:
  free(m);
  return st;
}

/* The batch's grouping, made at its first call and kept with it. */
static tsr_status thermal_gpu_batch(registry_batch_t *batch, const thermal_ctx_t *c,
                                    gpu_lbm_batch_t **out, tsr_error_t *err) {
  void *state = NULL;
  tsr_status st = registry_batch_state(batch, thermal_gpu_group, gpu_lbm_batch_release, c,
                                       &state, err);
  *out = state;
  return st;
}

/* ---- work ---- */

/* The wall links (the kernels' boundary, in the storage precision as on the GPU). In an
 * overlapped step every link writes a ghost cell of a wall at a face of the domain, where
 * no neighbour sends anything, so none touches a late ghost slice: all of them run with
 * the inner part. */
static tsr_status thermal_boundary(const registry_work_t *wk, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const thermal_ctx_t *c = vctx;
  field_block_t *f;
  thermal_walls_t *w;
  if (wk->part == REGISTRY_PART_SHELL) return st;
  TSR_TRY(thermal_get(wk->batch->blocks[0], wk->batch->data[0], c, &f, &w, err));
  for (int negate = 0; negate < 2; ++negate)
    c->kernels[f->host.dims.layout]->boundary(f->host.values, w->links[negate], w->nlinks[negate],
                                              negate, NULL);
cleanup:
  return st;
}

/* On GPU blocks likewise: the walls never touch a late ghost slice. */
static tsr_status thermal_gpu_boundary_early(registry_batch_t *batch,
                                             const registry_region_t *regions, void *vctx,
                                             int *early, tsr_error_t *err) {
  (void)batch, (void)regions, (void)vctx, (void)err;
  *early = REGISTRY_EARLY_WHOLE;
  return TSR_OK;
}

static tsr_status thermal_gpu_boundary(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_lbm_batch_t *b;
  TSR_TRY(thermal_gpu_batch(w->batch, vctx, &b, err));
  TSR_TRY(gpu_lbm_batch_boundary(b, NULL, 0, err));
cleanup:
  return st;
}

/* The stream-collide of the call's cells (every cell, or a part's); the swap with the
 * last part. */
static tsr_status thermal_stream_collide(const registry_work_t *w, void *vctx,
                                         tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const thermal_ctx_t *c = vctx;
  const block_info_t *b = w->batch->blocks[0];
  block_data_t *data = w->batch->data[0];
  grid_region_t g;
  const grid_region_t *r = field_work_region(w, 0, &g);
  field_block_t *f;
  thermal_walls_t *walls;
  TSR_TRY(thermal_get(b, data, c, &f, &walls, err));
  const grid_field_t *u = field_of(data, c->velocity_id), *force = field_of(data, c->force_id);
  TSR_CHECK(u && force, TSR_ERR_INTERNAL, "BlockID %d lacks the velocity or the force field",
            (int)b->id);
  lbm_coupling_t cp = c->coupling;
  cp.advection = u->values, cp.advection_dims = u->dims;
  cp.source_force = force->values, cp.source_force_dims = force->dims;
  c->kernels[f->host.dims.layout]->coupled_region(f->values[f->cur], f->values[f->cur ^ 1],
                                                  &f->host.dims, &c->params,
                                                  LBM_VARIANT_ADE_TRT, &cp, r);
  if (!r || r->part != GRID_PART_INNER) field_swap(f);
cleanup:
  return st;
}

/* Every GPU block: the velocity in, the buoyancy out (written or added to); the whole
 * step or its parts on the boxes of the regions. */
static tsr_status thermal_gpu_stream_collide(const registry_work_t *w, void *vctx,
                                             tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const thermal_ctx_t *c = vctx;
  gpu_lbm_batch_t *b;
  int *boxes = NULL;
  TSR_TRY(thermal_gpu_batch(w->batch, c, &b, err));
  if (w->part) TSR_TRY(field_region_boxes(w->regions, w->batch->n, &boxes, err));
  const gpu_lbm_aux_t aux = {
      .beta = {c->coupling.beta[0], c->coupling.beta[1], c->coupling.beta[2]},
      .c0 = c->coupling.c0, .accumulate = c->coupling.accumulate};
  TSR_TRY(gpu_lbm_batch_step_part(b, &aux, boxes, (int)w->part, err));
cleanup:
  free(boxes);
  return st;
}

/* ---- output ---- */

/* The temperature of every interior cell: the sum of the stored populations (after the
 * collision, which keeps it). */
static tsr_status thermal_sample(const block_info_t *b, const block_data_t *data, double *out,
                                 void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const thermal_state_t *s = vctx;
  const grid_field_t *h = NULL;
  TSR_TRY(field_sync(data, s->ctx->pdf_id, &h, err)); /* a GPU block: read back */
  TSR_CHECK(h, TSR_ERR_INTERNAL, "BlockID %d lacks the temperature populations", (int)b->id);
  const int q = s->ctx->lattice->q;
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = 0; z < b->size[2]; ++z)
    for (int y = 0; y < b->size[1]; ++y)
      for (int x = 0; x < b->size[0]; ++x) {
        double t = 0;
        for (int i = 0; i < q; ++i)
          t += field_value(h->values, h->esize, grid_index(&h->dims, x, y, z, i));
        out[((size_t)z * (size_t)b->size[1] + (size_t)y) * (size_t)b->size[0] + (size_t)x] = t;
      }
cleanup:
  return st;
}

/* Nu = 1 + <u_up T> H / (kappa dT), and the mean temperature, over every cell. */
static tsr_status thermal_totals(void *state, sim_t *sim, const char **names, double *values,
                                 int cap, int *n, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const thermal_state_t *s = state;
  const thermal_ctx_t *c = s->ctx;
  patch_t *patch = sim_patch(sim);
  double all[3]; /* sum u_up T, sum T, cells */
  double *t = NULL, *part = NULL; /* part: the three sums per block */
  const int32_t nb = patch_block_count(patch);
  size_t most = 0;
  *n = 0;
  TSR_CHECK(cap >= 2, TSR_ERR_INTERNAL, "no room for the thermal totals");
  for (int32_t i = 0; i < patch_local_count(patch); ++i) {
    const block_info_t *b = patch_block(patch, patch_local_id(patch, i));
    size_t cells = (size_t)b->size[0] * (size_t)b->size[1] * (size_t)b->size[2];
    if (cells > most) most = cells;
  }
  t = malloc((most ? most : 1) * sizeof *t);
  part = calloc(3 * (size_t)nb, sizeof *part);
  if (!t || !part) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__,
                                      "out of memory for the Nusselt number");
  /* a block's error ends this process's part; every process learns it before the sum */
  for (int32_t i = 0; st == TSR_OK && i < patch_local_count(patch); ++i) {
    int32_t id = patch_local_id(patch, i);
    const block_info_t *b = patch_block(patch, id);
    const block_data_t *data = patch_block_data(patch, id);
    const grid_field_t *u = NULL;
    st = thermal_sample(b, data, t, (void *)s, err);
    if (st == TSR_OK) st = field_sync(data, c->velocity_id, &u, err);
    if (st == TSR_OK && !u)
      st = tsr_error_set(err, TSR_ERR_INTERNAL, __FILE__, __LINE__,
                         "BlockID %d lacks the velocity field", (int)id);
    if (st != TSR_OK) break;
    for (int z = 0; z < b->size[2]; ++z)
      for (int y = 0; y < b->size[1]; ++y)
        for (int x = 0; x < b->size[0]; ++x) {
          const size_t k = ((size_t)z * (size_t)b->size[1] + (size_t)y) * (size_t)b->size[0] + (size_t)x;
          const size_t ui = grid_index(&u->dims, x, y, z, c->o.axis);
          const double uu = field_value(u->values, u->esize, ui);
          part[id] += uu * t[k];
          part[nb + id] += t[k];
          part[2 * nb + id] += 1;
        }
  }
  TSR_TRY(verdict_reduce(sim_comm(sim), st, 0, err));
  TSR_TRY(sim_block_sums(sim, part, 3, all, err));
  const double dt = c->o.hot - c->o.cold;
  names[0] = "nusselt";
  values[0] = 1.0 + all[0] / all[2] * c->height / (c->kappa * dt);
  names[1] = "mean_temperature";
  values[1] = all[1] / all[2];
  *n = 2;
cleanup:
  free(t);
  free(part);
  return st;
}

/* ---- registration ---- */

/* What follows from the options and the flow's viscosity and reference density: the
 * diffusivity, g beta, the collision and the buoyancy. */
static void thermal_physics(thermal_ctx_t *c) {
  c->kappa = c->o.viscosity / c->o.prandtl;
  const double dt = c->o.hot - c->o.cold;
  c->gbeta = c->o.rayleigh * c->o.viscosity * c->kappa / (dt * c->height * c->height * c->height);
  /* TRT for advection-diffusion: omega_minus sets kappa = c_s^2 (1/omega_minus - 1/2)
     (c_s^2 = 1/4 on D3Q7), omega_plus follows from the magic parameter */
  const double om = 1.0 / (4.0 * c->kappa + 0.5);
  c->params = (lbm_params_t){.omega_plus = lbm_omega_minus(om, c->o.magic), .omega_minus = om,
                             .rho0 = c->o.rho0};
  c->coupling.c0 = 0.5 * (c->o.hot + c->o.cold);
  for (int a = 0; a < 3; ++a) c->coupling.beta[a] = 0;
  c->coupling.beta[c->o.axis] = c->o.rho0 * c->gbeta; /* up: +axis */
}

/* The flow's public face: its viscosity and reference density set the diffusivity and
 * the force, its velocity advects T and its force takes the buoyancy (written where no
 * module before this one writes lbm.force in a step, else added). */
static tsr_status thermal_bind(void *state, module_decl_t *decls, int n, int self,
                               tsr_error_t *err) {
  tsr_status st = TSR_OK;
  thermal_state_t *s = state;
  thermal_ctx_t *c = s->ctx;
  TSR_CHECK(module_find_scalar(decls, n, FLOW_VISCOSITY, &c->o.viscosity) &&
                module_find_scalar(decls, n, FLOW_RHO0, &c->o.rho0) &&
                module_find_field(decls, n, FLOW_VELOCITY) &&
                module_find_field(decls, n, FLOW_FORCE),
            TSR_ERR_INVALID,
            "module \"thermal\" is advected by the flow and pushes it: it needs the flow's "
            "viscosity, velocity and force (" FLOW_VISCOSITY ", " FLOW_VELOCITY ", " FLOW_FORCE
            "), which no module of this run publishes; add \"lbm\" to \"modules\"");
  TSR_TRY(module_check_precision(decls, n, "thermal", FLOW_VELOCITY, c->o.dp ? 8 : 4, err));
  s->o.viscosity = c->o.viscosity;
  s->o.rho0 = c->o.rho0;
  thermal_physics(c);
  c->coupling.accumulate = module_writes_before(decls, self, FLOW_FORCE);
cleanup:
  return st;
}

static tsr_status thermal_register(void *state, registry_t *reg, const module_env_t *env,
                                   module_decl_t *decl, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  thermal_state_t *s = state;
  thermal_ctx_t c;
  memset(&c, 0, sizeof c);
  c.o = s->o;
  c.domain = env->so->domain;
  c.lattice = &lattice_d3q7;
  c.kernels[GRID_AOS] = lbm_kernels_find(c.lattice, GRID_AOS, c.o.dp);
  c.kernels[GRID_SOA] = lbm_kernels_find(c.lattice, GRID_SOA, c.o.dp);
  TSR_CHECK(c.kernels[GRID_AOS] && c.kernels[GRID_SOA], TSR_ERR_INTERNAL, "no D3Q7 kernels");
  if (env->cl && !s->gpu)
    TSR_TRY(gpu_lbm_cache_create(env->cl, "", NULL, &s->gpu, err));
  c.gpu = s->gpu;
  c.height = thermal_height(&c.o, &c.domain);
  thermal_physics(&c); /* again in thermal_bind, with the flow's viscosity and rho0 */
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    const int off[3] = {direction_offsets[d][0], direction_offsets[d][1], direction_offsets[d][2]};
    c.ncomps[d] = lattice_crossing(c.lattice, off, c.comps[d]);
  }
  TSR_TRY(registry_data_id(reg, THERMAL_PDF, &c.pdf_id, err));
  TSR_TRY(registry_data_id(reg, THERMAL_WALLS, &c.walls_id, err));
  TSR_TRY(registry_data_id(reg, FLOW_FORCE, &c.force_id, err));
  TSR_TRY(registry_data_id(reg, FLOW_VELOCITY, &c.velocity_id, err));
  void *ctx;
  TSR_TRY(registry_keep(reg, &c, sizeof c, &ctx, err));
  s->ctx = ctx;
  const registry_item_t items[] = {
      {.kind = REGISTRY_KIND_ALLOCATOR, .name = THERMAL_WALLS, .fs = "*", .hs = "cpu", .bs = "*",
       .alloc = thermal_alloc, .free = thermal_release},
      {.kind = REGISTRY_KIND_BOUNDARY, .name = THERMAL_BOUNDARY, .fs = "*", .hs = "cpu",
       .bs = "*", .work = thermal_boundary, .parts = 1, .concurrent = 1},
      {.kind = REGISTRY_KIND_KERNEL, .name = THERMAL_STREAM_COLLIDE, .fs = "*", .hs = "cpu",
       .bs = "*", .work = thermal_stream_collide, .parts = 1, .concurrent = 1},
      {.kind = REGISTRY_KIND_ALLOCATOR, .name = THERMAL_WALLS, .fs = "*", .hs = "gpu", .bs = "*",
       .alloc = thermal_gpu_alloc, .free = thermal_release},
      {.kind = REGISTRY_KIND_BOUNDARY, .name = THERMAL_BOUNDARY, .fs = "*", .hs = "gpu",
       .bs = "*", .work = thermal_gpu_boundary, .batch = 1,
       .batch_early = thermal_gpu_boundary_early},
      {.kind = REGISTRY_KIND_KERNEL, .name = THERMAL_STREAM_COLLIDE, .fs = "*", .hs = "gpu",
       .bs = "*", .work = thermal_gpu_stream_collide, .batch = 1, .parts = 1},
      {.kind = REGISTRY_KIND_KERNEL, .name = THERMAL_START, .fs = "*", .hs = "cpu|gpu",
       .bs = "*", .work = thermal_start},
  };
  for (size_t i = 0; i < sizeof items / sizeof items[0]; ++i) {
    registry_item_t it = items[i];
    it.ctx = ctx;
    TSR_TRY(registry_add(reg, &it, err));
  }
  const int vb = c.o.dp ? 8 : 4;
  int stream[LATTICE_MAX_Q * 4]; /* GPU blocks stream in place where the run's fs says */
  lattice_stream_table(c.lattice, stream);
  *decl = (module_decl_t){
      .nsweeps = 1,
      .sweeps = {{.name = "thermal", .reads_ghosts = {THERMAL_PDF}, .nreads_ghosts = 1,
                  .reads = {FLOW_VELOCITY}, .nreads = 1,
                  .writes = {THERMAL_PDF, FLOW_FORCE}, .nwrites = 2,
                  .boundary = THERMAL_BOUNDARY, .kernel = THERMAL_STREAM_COLLIDE}},
      .nquantities = 1,
      .quantities = {{.name = "temperature", .components = 1, .columns = {"T"},
                      .sample = thermal_sample, .ctx = s}},
      .start = THERMAL_START};
  TSR_TRY(module_declare_field(decl, reg, env, &(field_spec_t){
      .name = THERMAL_PDF, .components = c.lattice->q, .esize = (size_t)vb, .width = {1, 1, 1},
      .copies = 2, .layout = c.o.layout, .crossing = &c.comps[0][0], .stride = LATTICE_MAX_Q,
      .ncrossing = c.ncomps, .stream = stream, .fill = thermal_fill, .init_ctx = ctx}, err));
  TSR_TRY(module_declare_data(decl, THERMAL_WALLS, err));
cleanup:
  return st;
}

/* Stable: every temperature finite (checked on the sampled values). */
static tsr_status thermal_check(void *state, sim_t *sim, int64_t step, bool prepared,
                                sim_divergence_t *out, tsr_error_t *err) {
  (void)prepared;
  const char *names[2];
  double values[2];
  int n = 0;
  tsr_status st = thermal_totals(state, sim, names, values, 2, &n, err);
  *out = (sim_divergence_t){.step = step, .block = -1};
  if (st == TSR_OK && !(isfinite(values[0]) && isfinite(values[1]))) {
    out->nvalues = 2;
    for (int i = 0; i < 2; ++i) out->names[i] = names[i], out->values[i] = values[i];
    st = tsr_error_set(err, TSR_ERR_DIVERGED, __FILE__, __LINE__,
                       "the temperature diverged at step %lld (Nu = %g): lower the Rayleigh "
                       "number or the velocities, or raise the resolution",
                       (long long)step, values[0]);
  }
  return st;
}

static const char *const thermal_restart_keys[] = {"thermal.cpu_layout", NULL};

const module_def_t thermal_module = {
    .name = "thermal",
    .read = thermal_read,
    .free = thermal_free,
    .calibration = thermal_calibration,
    .fs = thermal_fs,
    .describe = thermal_describe,
    .register_items = thermal_register,
    .bind = thermal_bind,
    .check = thermal_check,
    .totals = thermal_totals,
    .restart_keys = thermal_restart_keys,
};
