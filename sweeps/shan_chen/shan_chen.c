/* shan_chen: single-component multiphase flow with the Shan-Chen pseudopotential (Shan &
 * Chen, Phys. Rev. E 47, 1815 (1993) and 49, 2941 (1994); docs/physics.md, "Multiphase
 * flow").
 *
 * Every step, after the flow's collision published its density (lbm.density):
 *   shan_chen.psi    psi = rho_psi (1 - exp(-rho / rho_psi)) in every cell, into the field
 *                    shan_chen.psi, whose ghost layer (the stencil's reach) then travels;
 *   shan_chen.force  F = -G psi(x) sum_i w_i psi(x + c_i) c_i over the stencil (D2Q9 on
 *                    a 2-D domain, D3Q19 on a 3-D one), into the flow's body-force
 *                    accumulator lbm.force: written where no module before this one
 *                    writes it in a step, else added; the flow's next collision adds it
 *                    with Guo's forcing.
 * The equation of state is p = c_s^2 rho + G c_s^2 psi^2 / 2. CPU and GPU blocks compute
 * the same expressions (shan_chen_kernels.h), so they agree bit for bit. Ghost cells of
 * psi beyond a wall hold 0: walls do not attract the fluid (a neutral, non-wetting
 * wall). */
#include "shan_chen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "field.h"
#include "gpu_shan_chen.h"
#include "lattice.h"
#include "shan_chen_cpu.h"

#define SC_PSI_FIELD "shan_chen.psi"
#define SC_PSI_ITEM "shan_chen.psi"
#define SC_FORCE_ITEM "shan_chen.force"
/* the flow's public face (fields it publishes) */
#define FLOW_DENSITY "lbm.density"
#define FLOW_FORCE "lbm.force"

typedef struct sc_opts {
  double g;       /* interaction strength G (< 0: attraction) */
  double rho_psi; /* the density scale of psi */
  int dp;
} sc_opts_t;

/* What the items share (kept in the registry). */
typedef struct sc_ctx {
  sc_opts_t o;
  const lattice_t *stencil;
  int psi_id, density_id, force_id;
  int accumulate;      /* lbm.force: add to it (a module before this one writes it) */
  gpu_program_t *prog; /* NULL: this process has no OpenCL device */
} sc_ctx_t;

typedef struct sc_state {
  sc_opts_t o;
  sc_ctx_t *ctx;       /* after register_items */
  gpu_program_t *prog; /* the programs of this process's OpenCL device */
} sc_state_t;

static tsr_status sc_read(config_t *cfg, const simulation_options_t *so, void **state,
                          tsr_error_t *err) {
  tsr_status st = TSR_OK;
  static const char *const precisions[] = {"dp", "sp", NULL};
  sc_state_t *s = calloc(1, sizeof *s);
  config_node_t *n = NULL;
  *state = NULL;
  (void)so;
  TSR_CHECK(s, TSR_ERR_NOMEM, "out of memory");
  s->o = (sc_opts_t){.g = -5.0, .rho_psi = 1.0, .dp = 1};
  TSR_TRY(config_object(config_root(cfg), "shan_chen", false, &n, err));
  if (n) {
    TSR_TRY(config_real(n, "g", false, -1e3, 1e3, &s->o.g, err));
    TSR_TRY(config_real(n, "rho_psi", false, 1e-9, 1e9, &s->o.rho_psi, err));
    int v = s->o.dp ? 0 : 1;
    TSR_TRY(config_choice(n, "precision", false, precisions, &v, err));
    s->o.dp = v == 0;
  }
  *state = s;
  s = NULL;
cleanup:
  free(s);
  return st;
}

static void sc_free(void *state) {
  sc_state_t *s = state;
  if (s) gpu_program_free(&s->prog);
  free(s);
}

/* The calibration's physics (hardware.balance.calibrate): the same interaction (the flow's
 * calibration starts it at rest and uniform). */
static tsr_status sc_calibration(const void *state, void **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  sc_state_t *s = calloc(1, sizeof *s);
  *out = NULL;
  TSR_CHECK(s, TSR_ERR_NOMEM, "out of memory");
  s->o = ((const sc_state_t *)state)->o;
  *out = s;
cleanup:
  return st;
}

static void sc_describe(const void *state, bool cpu, bool gpu, char *out, size_t cap) {
  (void)cpu, (void)gpu;
  const sc_state_t *s = state;
  snprintf(out, cap, "shan_chen %s, G = %g, rho_psi = %g", s->o.dp ? "dp" : "sp", s->o.g,
           s->o.rho_psi);
}

/* ---- work ---- */

/* The fields of a block: the flow's density or force, and psi. */
static tsr_status sc_fields(const block_info_t *b, block_data_t *data, const sc_ctx_t *c,
                            int flow_id, field_block_t **flow, field_block_t **psi,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *flow = field_block_of(data, flow_id);
  *psi = field_block_of(data, c->psi_id);
  TSR_CHECK(*flow && *psi, TSR_ERR_INTERNAL, "BlockID %d lacks the fields of shan_chen",
            (int)b->id);
cleanup:
  return st;
}

static tsr_status sc_psi_item(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const sc_ctx_t *c = vctx;
  const block_info_t *b = w->batch->blocks[0];
  field_block_t *rho, *psi;
  if (!field_block_of(w->batch->data[0], c->density_id)) return st; /* a block without fluid */
  TSR_TRY(sc_fields(b, w->batch->data[0], c, c->density_id, &rho, &psi, err));
  shan_chen_psi(b->size, &rho->host, &psi->host, c->o.rho_psi);
cleanup:
  return st;
}

/* The force on the cells of the call's part (every cell, or a part's). */
static tsr_status sc_force_item(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const sc_ctx_t *c = vctx;
  field_block_t *force, *psi;
  grid_region_t g;
  const grid_region_t *r = field_work_region(w, 0, &g);
  if (!field_block_of(w->batch->data[0], c->force_id)) return st;
  TSR_TRY(sc_fields(w->batch->blocks[0], w->batch->data[0], c, c->force_id, &force, &psi, err));
  shan_chen_force(&psi->host, &force->host, c->stencil, c->o.g, c->accumulate, r);
cleanup:
  return st;
}

/* GPU blocks: one launch per group of blocks (the flow's field, then psi) */
static tsr_status sc_gpu_psi_item(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  const sc_ctx_t *c = vctx;
  return gpu_shan_chen_psi(c->prog, w->groups, c->o.rho_psi, c->o.dp, err);
}

static tsr_status sc_gpu_force_item(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  const sc_ctx_t *c = vctx;
  return gpu_shan_chen_force(c->prog, w->groups, c->o.g, c->accumulate, (int)w->part, c->o.dp,
                             err);
}

/* ---- registration ---- */

static tsr_status sc_register(void *state, registry_t *reg, const module_env_t *env,
                              module_decl_t *decl, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  sc_state_t *s = state;
  sc_ctx_t c;
  memset(&c, 0, sizeof c);
  c.o = s->o;
  /* the stencil: D2Q9 on a 2-D domain (one cell along z), D3Q19 on a 3-D one */
  c.stencil = env->so->domain.cells[2] == 1 ? lattice_find("d2q9") : lattice_find("d3q19");
  TSR_CHECK(c.stencil, TSR_ERR_INTERNAL, "shan_chen: no stencil");
  if (env->cl && !s->prog)
    TSR_TRY(gpu_shan_chen_program(env->cl, c.stencil, c.o.dp, &s->prog, err));
  c.prog = s->prog;
  TSR_TRY(registry_data_id(reg, SC_PSI_FIELD, &c.psi_id, err));
  TSR_TRY(registry_data_id(reg, FLOW_DENSITY, &c.density_id, err));
  TSR_TRY(registry_data_id(reg, FLOW_FORCE, &c.force_id, err));
  void *ctx;
  TSR_TRY(registry_keep(reg, &c, sizeof c, &ctx, err));
  s->ctx = ctx;
  const int vb = c.o.dp ? 8 : 4;
  const int reach = c.stencil->reach;
  const registry_item_t items[] = {
      {.kind = REGISTRY_KIND_KERNEL, .name = SC_PSI_ITEM, .fs = "*", .hs = "cpu", .bs = "*",
       .work = sc_psi_item, .ctx = ctx, .concurrent = 1},
      {.kind = REGISTRY_KIND_KERNEL, .name = SC_FORCE_ITEM, .fs = "*", .hs = "cpu", .bs = "*",
       .work = sc_force_item, .parts = 1, .ctx = ctx, .concurrent = 1},
      {.kind = REGISTRY_KIND_KERNEL, .name = SC_PSI_ITEM, .fs = "*", .hs = "gpu", .bs = "*",
       .work = sc_gpu_psi_item, .batch = 1, .group = {c.density_id, c.psi_id}, .ngroup = 2,
       .ctx = ctx},
      {.kind = REGISTRY_KIND_KERNEL, .name = SC_FORCE_ITEM, .fs = "*", .hs = "gpu", .bs = "*",
       .work = sc_gpu_force_item, .batch = 1, .parts = 1, .group = {c.force_id, c.psi_id},
       .ngroup = 2, .ctx = ctx},
  };
  for (size_t i = 0; i < sizeof items / sizeof items[0]; ++i)
    TSR_TRY(registry_add(reg, &items[i], err));
  *decl = (module_decl_t){
      .nsweeps = 2,
      .sweeps = {{.name = "shan_chen.psi", .reads = {FLOW_DENSITY}, .nreads = 1,
                  .writes = {SC_PSI_FIELD}, .nwrites = 1, .kernel = SC_PSI_ITEM},
                 {.name = "shan_chen.force", .reads_ghosts = {SC_PSI_FIELD}, .nreads_ghosts = 1,
                  .writes = {FLOW_FORCE}, .nwrites = 1, .kernel = SC_FORCE_ITEM}}};
  /* the same before the first step, from the flow's initial density: its first
     collision then counts the force with half its weight, as Guo's forcing starts from
     rest (without it a staggered momentum mode, which no collision damps, stays) */
  decl->nstart_sweeps = 2;
  memcpy(decl->start_sweeps, decl->sweeps, 2 * sizeof decl->sweeps[0]);
  TSR_TRY(module_declare_field(decl, reg, env, &(field_spec_t){
      .name = SC_PSI_FIELD, .components = 1, .esize = (size_t)vb,
      .width = {reach, reach, c.stencil->d == 3 ? reach : 0}, .layout = GRID_SOA}, err));
cleanup:
  return st;
}

/* The flow's public face: its density gives psi, its force takes the Shan-Chen force
 * (written where no module before this one writes lbm.force in a step, else added). */
static tsr_status sc_bind(void *state, module_decl_t *decls, int n, int self, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  sc_state_t *s = state;
  const module_field_t *rho = module_find_field(decls, n, FLOW_DENSITY);
  TSR_CHECK(rho && module_find_field(decls, n, FLOW_FORCE), TSR_ERR_INVALID,
            "module \"shan_chen\" acts on the flow: it needs the flow's density and force ("
            FLOW_DENSITY ", " FLOW_FORCE "), which no module of this run publishes; add "
            "\"lbm\" to \"modules\"");
  TSR_TRY(module_check_precision(decls, n, "shan_chen", FLOW_DENSITY, s->o.dp ? 8 : 4, err));
  s->ctx->accumulate = module_writes_before(decls, self, FLOW_FORCE);
cleanup:
  return st;
}

const module_def_t shan_chen_module = {
    .name = "shan_chen",
    .read = sc_read,
    .free = sc_free,
    .calibration = sc_calibration,
    .describe = sc_describe,
    .register_items = sc_register,
    .bind = sc_bind,
};
