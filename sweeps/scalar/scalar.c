/* scalar: a passive scalar c carried by the flow, dc/dt + div(u c) = D lap c
 * (docs/adding-a-sweep.md builds this module step by step).
 *
 * Every step, after the flow's collision published its velocity (lbm.velocity), one sweep
 * exchanges the ghost layers of the scalar and of the velocity and moves c by one
 * finite-volume step: first-order upwind advection with the face velocity, central
 * diffusion (kernels_cpu/scalar/scalar_cell.h, the arithmetic CPU and GPU blocks share,
 * so they agree bit for bit). The total of c changes by round-off only: the faces of the
 * domain that are not periodic are closed to it (no flux), whatever the flow does there.
 * The scalar does not see obstacles: a run whose flow has any is refused. Lattice units
 * only (a run with "units" is refused). */
#include "scalar.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "field.h"
#include "gpu_scalar.h"
#include "scalar_cpu.h"
#include "sim.h"
#include "verdict.h"

#define SCALAR_FIELD "scalar.c"
#define SCALAR_STEP "scalar.step"
/* the flow's public face */
#define FLOW_VELOCITY "lbm.velocity"
#define FLOW_OBSTACLES "lbm.obstacles"

enum { SCALAR_UNIFORM, SCALAR_SINE, SCALAR_GAUSSIAN };

typedef struct scalar_opts {
  double d;             /* diffusivity, cells^2 / step */
  int dp;
  int initial;          /* SCALAR_* */
  double value, amplitude; /* c = value + amplitude * shape */
  int axis, periods;    /* sine: along axis, periods over the domain */
  double center[3], width; /* gaussian: centre (cells) and standard deviation */
} scalar_opts_t;

/* What the items share (kept in the registry). */
typedef struct scalar_ctx {
  scalar_opts_t o;
  patch_options_t domain;
  int nd;               /* 2 on a domain one cell thick along z, else 3 */
  int c_id, u_id;
  gpu_program_t *prog;  /* NULL: this process has no OpenCL device */
} scalar_ctx_t;

typedef struct scalar_state {
  scalar_opts_t o;
  scalar_ctx_t *ctx;    /* after register_items */
  gpu_program_t *prog;
} scalar_state_t;

static tsr_status scalar_read(config_t *cfg, const simulation_options_t *so, void **state,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  static const char *const precisions[] = {"dp", "sp", NULL};
  static const char *const kinds[] = {"uniform", "sine", "gaussian", NULL};
  scalar_state_t *s = calloc(1, sizeof *s);
  config_node_t *n = NULL, *init = NULL;
  *state = NULL;
  TSR_CHECK(s, TSR_ERR_NOMEM, "out of memory");
  const int nd = so->domain.cells[2] == 1 ? 2 : 3;
  scalar_opts_t *o = &s->o;
  *o = (scalar_opts_t){.d = 0.01, .dp = 1, .amplitude = 1, .periods = 1, .width = 0};
  for (int a = 0; a < 3; ++a) o->center[a] = 0.5 * (double)so->domain.cells[a];
  o->width = (double)so->domain.cells[0] / 8;
  TSR_TRY(config_object(config_root(cfg), "scalar", false, &n, err));
  if (!n) goto done;
  /* explicit diffusion is stable for 2 nd D <= 1 */
  TSR_TRY(config_real(n, "diffusivity", false, 0, 1.0 / (2 * nd), &o->d, err));
  int v = 0;
  TSR_TRY(config_choice(n, "precision", false, precisions, &v, err));
  o->dp = v == 0;
  TSR_TRY(config_object(n, "initial", false, &init, err));
  if (!init) goto done;
  TSR_TRY(config_choice(init, "kind", false, kinds, &o->initial, err));
  TSR_TRY(config_real(init, "value", false, -1e12, 1e12, &o->value, err));
  TSR_TRY(config_real(init, "amplitude", false, -1e12, 1e12, &o->amplitude, err));
  int64_t axis = 0, periods = 1;
  TSR_TRY(config_int(init, "axis", false, 0, nd - 1, &axis, err));
  TSR_TRY(config_int(init, "periods", false, 0, 1 << 20, &periods, err));
  o->axis = (int)axis, o->periods = (int)periods;
  TSR_TRY(config_real3(init, "center", false, -1e9, 1e9, o->center, err));
  TSR_TRY(config_real(init, "width", false, 1e-3, 1e9, &o->width, err));
done:
  *state = s;
  s = NULL;
cleanup:
  free(s);
  return st;
}

static void scalar_free(void *state) {
  scalar_state_t *s = state;
  if (s) gpu_program_free(&s->prog);
  free(s);
}

/* The calibration's physics: the same scalar (the flow's calibration is at rest). */
static tsr_status scalar_calibration(const void *state, void **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  scalar_state_t *s = calloc(1, sizeof *s);
  *out = NULL;
  TSR_CHECK(s, TSR_ERR_NOMEM, "out of memory");
  s->o = ((const scalar_state_t *)state)->o;
  *out = s;
cleanup:
  return st;
}

static void scalar_describe(const void *state, bool cpu, bool gpu, char *out, size_t cap) {
  (void)cpu, (void)gpu;
  const scalar_state_t *s = state;
  snprintf(out, cap, "scalar %s, D = %g", s->o.dp ? "dp" : "sp", s->o.d);
}

/* The start value of a cell (its centre at the cell's coordinates + 1/2). */
static void scalar_initial(const block_info_t *b, int x, int y, int z, const void *vctx,
                           double *out) {
  const scalar_ctx_t *c = vctx;
  const scalar_opts_t *o = &c->o;
  const double p[3] = {(double)(b->lo[0] + x) + 0.5, (double)(b->lo[1] + y) + 0.5,
                       (double)(b->lo[2] + z) + 0.5};
  double shape = 0;
  if (o->initial == SCALAR_SINE) {
    shape = sin(2 * 3.14159265358979323846 * o->periods * p[o->axis] / (double)c->domain.cells[o->axis]);
  } else if (o->initial == SCALAR_GAUSSIAN) {
    double r2 = 0;
    for (int a = 0; a < c->nd; ++a) r2 += (p[a] - o->center[a]) * (p[a] - o->center[a]);
    shape = exp(-r2 / (2 * o->width * o->width));
  }
  out[0] = o->value + o->amplitude * shape;
}

/* The block's faces closed to the scalar (scalar_step's walls): the domain's faces along
 * the axes that are not periodic. */
static int scalar_walls(const block_info_t *b, const void *vctx) {
  const scalar_ctx_t *c = vctx;
  int w = 0;
  for (int a = 0; a < c->nd; ++a) {
    if (c->domain.periodic[a]) continue;
    w |= (b->lo[a] == 0 ? 1 : 0) << (2 * a);
    w |= (b->lo[a] + b->size[a] == c->domain.cells[a] ? 1 : 0) << (2 * a + 1);
  }
  return w;
}

/* ---- work ---- */

/* A CPU block's step on the call's cells; the copies swap after the whole or SHELL. */
static tsr_status scalar_step_cpu(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const scalar_ctx_t *c = vctx;
  const block_info_t *b = w->batch->blocks[0];
  field_block_t *f = field_block_of(w->batch->data[0], c->c_id);
  const grid_field_t *u = field_of(w->batch->data[0], c->u_id);
  TSR_CHECK(f && u, TSR_ERR_INTERNAL, "BlockID %d lacks the scalar or the flow's velocity",
            (int)b->id);
  grid_region_t g;
  const grid_region_t *r = field_work_region(w, 0, &g);
  scalar_step(c->nd, b->size, scalar_walls(b, c), c->o.d, &f->host, f->values[f->cur ^ 1], u,
              r);
  if (w->part != REGISTRY_PART_INNER) field_swap(f);
cleanup:
  return st;
}

/* Every GPU block at once (the framework's groups: the scalar, the velocity). */
static tsr_status scalar_step_gpu(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const scalar_ctx_t *c = vctx;
  TSR_TRY(gpu_scalar_step(c->prog, w->groups, c->nd, c->o.d, (int)w->part, c->o.dp, err));
  for (size_t k = 0; k < w->batch->n && w->part != REGISTRY_PART_INNER; ++k)
    field_swap(field_block_of(w->batch->data[k], c->c_id));
cleanup:
  return st;
}

/* ---- output ---- */

static tsr_status scalar_sample(const block_info_t *b, const block_data_t *data, double *out,
                                void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const scalar_state_t *s = vctx;
  const grid_field_t *h = NULL;
  TSR_TRY(field_sync(data, s->ctx->c_id, &h, err)); /* a GPU block: read back */
  TSR_CHECK(h, TSR_ERR_INTERNAL, "BlockID %d lacks the scalar", (int)b->id);
  size_t i = 0;
  for (int z = 0; z < b->size[2]; ++z)
    for (int y = 0; y < b->size[1]; ++y)
      for (int x = 0; x < b->size[0]; ++x)
        out[i++] = field_value(h->values, h->esize, grid_index(&h->dims, x, y, z, 0));
cleanup:
  return st;
}

/* The total of c over the domain. */
static tsr_status scalar_totals(void *state, sim_t *sim, const char **names, double *values,
                                int cap, int *n, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const scalar_state_t *s = state;
  patch_t *patch = sim_patch(sim);
  const int32_t nb = patch_block_count(patch);
  double *part = calloc((size_t)(nb > 0 ? nb : 1), sizeof *part);
  *n = 0;
  TSR_CHECK(cap >= 1, TSR_ERR_INTERNAL, "no room for the scalar's total");
  if (!part) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__,
                                "out of memory for the scalar's total");
  for (int32_t i = 0; st == TSR_OK && i < patch_local_count(patch); ++i) {
    const int32_t id = patch_local_id(patch, i);
    const block_info_t *b = patch_block(patch, id);
    const grid_field_t *h = NULL;
    st = field_sync(patch_block_data(patch, id), s->ctx->c_id, &h, err);
    for (int z = 0; st == TSR_OK && h && z < b->size[2]; ++z)
      for (int y = 0; y < b->size[1]; ++y)
        for (int x = 0; x < b->size[0]; ++x)
          part[id] += field_value(h->values, h->esize, grid_index(&h->dims, x, y, z, 0));
  }
  TSR_TRY(verdict_reduce(sim_comm(sim), st, 0, err));
  TSR_TRY(sim_block_sums(sim, part, 1, values, err));
  names[0] = "scalar";
  *n = 1;
cleanup:
  free(part);
  return st;
}

/* ---- registration ---- */

static tsr_status scalar_register(void *state, registry_t *reg, const module_env_t *env,
                                  module_decl_t *decl, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  scalar_state_t *s = state;
  scalar_ctx_t c = {.o = s->o, .domain = env->so->domain};
  c.nd = c.domain.cells[2] == 1 ? 2 : 3;
  if (env->cl && !s->prog) TSR_TRY(gpu_scalar_program(env->cl, c.o.dp, &s->prog, err));
  c.prog = s->prog;
  TSR_TRY(registry_data_id(reg, SCALAR_FIELD, &c.c_id, err));
  TSR_TRY(registry_data_id(reg, FLOW_VELOCITY, &c.u_id, err));
  void *ctx;
  TSR_TRY(registry_keep(reg, &c, sizeof c, &ctx, err));
  s->ctx = ctx;
  const registry_item_t items[] = {
      {.kind = REGISTRY_KIND_KERNEL, .name = SCALAR_STEP, .fs = "*", .hs = "cpu", .bs = "*",
       .work = scalar_step_cpu, .parts = 1, .concurrent = 1, .ctx = ctx},
      {.kind = REGISTRY_KIND_KERNEL, .name = SCALAR_STEP, .fs = "*", .hs = "gpu", .bs = "*",
       .work = scalar_step_gpu, .batch = 1, .parts = 1, .group = {c.c_id, c.u_id},
       .ngroup = 2, .group_key = scalar_walls, .ctx = ctx}};
  for (size_t i = 0; i < sizeof items / sizeof items[0]; ++i)
    TSR_TRY(registry_add(reg, &items[i], err));
  *decl = (module_decl_t){
      .nsweeps = 1,
      .sweeps = {{.name = "scalar", .reads_ghosts = {SCALAR_FIELD, FLOW_VELOCITY},
                  .nreads_ghosts = 2, .writes = {SCALAR_FIELD}, .nwrites = 1,
                  .kernel = SCALAR_STEP}},
      .nquantities = 1,
      .quantities = {{.name = "scalar", .components = 1, .columns = {"c"},
                      .sample = scalar_sample, .ctx = s}}};
  TSR_TRY(module_declare_field(decl, reg, env, &(field_spec_t){
      .name = SCALAR_FIELD, .components = 1, .esize = c.o.dp ? 8 : 4,
      .width = {1, 1, c.nd == 3 ? 1 : 0}, .copies = 2, .layout = GRID_SOA,
      .init = scalar_initial, .init_ctx = ctx}, err));
cleanup:
  return st;
}

/* The flow's public face: its velocity carries the scalar, in the scalar's precision, and
 * it has no obstacles (the scalar would cross into them). */
static tsr_status scalar_bind(void *state, module_decl_t *decls, int n, int self,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const scalar_state_t *s = state;
  double obstacles = 0;
  (void)self;
  TSR_CHECK(module_find_field(decls, n, FLOW_VELOCITY), TSR_ERR_INVALID,
            "module \"scalar\" is carried by the flow: it needs the flow's velocity ("
            FLOW_VELOCITY "), which no module of this run publishes; add \"lbm\" to "
            "\"modules\"");
  TSR_TRY(module_check_precision(decls, n, "scalar", FLOW_VELOCITY, s->o.dp ? 8 : 4, err));
  TSR_CHECK(!module_find_scalar(decls, n, FLOW_OBSTACLES, &obstacles) || obstacles == 0,
            TSR_ERR_INVALID, "module \"scalar\": the flow has %g obstacle(s), which the scalar "
            "does not see (it would cross into them); run it without \"obstacles\"",
            obstacles);
cleanup:
  return st;
}

const module_def_t scalar_module = {
    .name = "scalar",
    .read = scalar_read,
    .free = scalar_free,
    .calibration = scalar_calibration,
    .describe = scalar_describe,
    .register_items = scalar_register,
    .bind = scalar_bind,
    .totals = scalar_totals,
};
