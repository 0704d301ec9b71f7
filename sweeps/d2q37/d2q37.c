/* d2q37: the thermal compressible model on the D2Q37 lattice (kernels_cpu/d2q37_cell.h;
 * docs/physics.md, "Thermal compressible flow (D2Q37)").
 *
 * One field, d2q37.pdf: 37 populations per cell with ghost layers 3 cells wide along x
 * and y (the lattice's reach), two copies. Each step one sweep pulls the populations
 * across the block faces (the ghost layers exchanged first: only the populations that
 * cross each face, edge or corner travel), collides with BGK and the body force (shifted
 * equilibrium fields) and writes the other copy.
 *
 * Units: lattice units (cells, steps) for lengths, times and velocities; temperatures in
 * units of the reference T0 = c_s^2, the lattice's sound-speed squared (0.69795 cells^2 /
 * step^2): the sound speed of the gas is sqrt(2 T) c_s (an ideal gas of two degrees of
 * freedom, gamma = 2). The relaxation time tau gives the kinematic viscosity
 * nu = (tau - 1/2) T c_s^2 and, the Prandtl number of BGK being 1, the thermal
 * diffusivity kappa = nu.
 *
 * Quantities: density, velocity (ux, uy, 0; the hydrodynamic velocity u + g/2) and
 * temperature. Totals: mass, momentum (x, y) and energy, sum f, sum f c_i and
 * sum f |c_i|^2 / 2 over the post-collision populations. The domain is 2-D (one cell
 * along z) and periodic along x and y. */
#include "d2q37.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "d2q37_kernels.h"
#include "direction.h"
#include "field.h"
#include "grid.h"
#include "lattice.h"
#include "selector.h"
#include "sim.h"
#include "tsr_size.h"
#include "verdict.h"

#define D37_PDF "d2q37.pdf"
#define D37_STREAM_COLLIDE "d2q37.stream_collide"

enum d37_initial {
  D37_UNIFORM,
  D37_SHEAR_WAVE,
  D37_TEMPERATURE_WAVE,
  D37_SOUND_WAVE,
  D37_TAYLOR_GREEN
};

typedef struct d37_opts {
  int dp;
  double tau;
  double g[2];            /* body force, cells/step^2 */
  int initial;            /* enum d37_initial */
  double density, velocity[2], temperature; /* the uniform state (and the waves' base) */
  double amplitude;       /* of a wave */
  int axis;               /* the wave vector's axis: 0 x, 1 y */
  int periods;            /* of the wave along the domain */
} d37_opts_t;

/* What the items share (kept in the registry). */
typedef struct d37_ctx {
  d37_opts_t o;
  patch_options_t domain;
  d2q37_consts_t k;
  int pdf_id;
  int comps[DIRECTION_COUNT][D37_Q];
  int ncomps[DIRECTION_COUNT];
} d37_ctx_t;

typedef struct d37_state d37_state_t;

/* A quantity: components of d37_fields (density 0, velocity 1..2, temperature 3). */
typedef struct d37_quantity {
  const d37_state_t *s;
  int first, count;
} d37_quantity_t;

struct d37_state {
  d37_opts_t o;
  d37_ctx_t *ctx; /* after register_items */
  d37_quantity_t q[3];
};

static const char *const d37_initial_names[] = {"uniform", "shear_wave", "temperature_wave",
                                                "sound_wave", "taylor_green", NULL};
static const char *const d37_axis_names[] = {"x", "y", NULL};

static tsr_status d37_read(config_t *cfg, const simulation_options_t *so, void **state,
                           tsr_error_t *err) {
  tsr_status st = TSR_OK;
  static const char *const precisions[] = {"dp", "sp", NULL};
  d37_state_t *s = calloc(1, sizeof *s);
  *state = NULL;
  TSR_CHECK(s, TSR_ERR_NOMEM, "out of memory");
  d37_opts_t *o = &s->o;
  *o = (d37_opts_t){.dp = 1, .tau = 0.8, .initial = D37_UNIFORM, .density = 1,
                    .temperature = 1, .amplitude = 1e-3, .periods = 1};
  const char *src = config_source(cfg);
  TSR_CHECK(so->domain.cells[2] == 1, TSR_ERR_INVALID,
            "%s: domain.cells[2] = %lld: module \"d2q37\" is two-dimensional; allowed is 1",
            src, (long long)so->domain.cells[2]);
  TSR_CHECK(so->domain.periodic[0] && so->domain.periodic[1], TSR_ERR_INVALID,
            "%s: domain.periodic = [%s, %s, ...]: module \"d2q37\" runs on domains periodic "
            "along x and y (it has no walls)", src, so->domain.periodic[0] ? "true" : "false",
            so->domain.periodic[1] ? "true" : "false");
  config_node_t *n;
  TSR_TRY(config_object(config_root(cfg), "d2q37", false, &n, err));
  if (n) {
    int v = o->dp ? 0 : 1;
    TSR_TRY(config_choice(n, "precision", false, precisions, &v, err));
    o->dp = v == 0;
    double nu = -1, tau = -1;
    TSR_TRY(config_real(n, "tau", false, 0.5000001, 1e3, &tau, err));
    TSR_TRY(config_real(n, "viscosity", false, 1e-9, 1e3, &nu, err));
    TSR_CHECK(!(nu > 0 && tau > 0), TSR_ERR_INVALID,
              "%s: d2q37.tau = %g and d2q37.viscosity = %g: give one of them", src, tau, nu);
    if (tau > 0) o->tau = tau;
    if (nu > 0) o->tau = 0.5 + nu / lattice_d2q37.cs2;
    double g3[3] = {0, 0, 0};
    TSR_TRY(config_real3(n, "gravity", false, -1, 1, g3, err));
    TSR_CHECK(g3[2] == 0, TSR_ERR_INVALID,
              "%s: d2q37.gravity[2] = %g: the model is two-dimensional; allowed is 0", src, g3[2]);
    o->g[0] = g3[0];
    o->g[1] = g3[1];
    config_node_t *ini;
    TSR_TRY(config_object(n, "initial", false, &ini, err));
    if (ini) {
      TSR_TRY(config_choice(ini, "kind", true, d37_initial_names, &o->initial, err));
      TSR_TRY(config_real(ini, "density", false, 1e-6, 1e6, &o->density, err));
      TSR_TRY(config_real(ini, "temperature", false, 1e-3, 1e3, &o->temperature, err));
      double u3[3] = {0, 0, 0};
      TSR_TRY(config_real3(ini, "velocity", false, -2, 2, u3, err));
      TSR_CHECK(u3[2] == 0, TSR_ERR_INVALID,
                "%s: d2q37.initial.velocity[2] = %g: the model is two-dimensional; allowed is 0",
                src, u3[2]);
      o->velocity[0] = u3[0];
      o->velocity[1] = u3[1];
      if (o->initial != D37_UNIFORM) {
        TSR_TRY(config_real(ini, "amplitude", false, -1, 1, &o->amplitude, err));
        if (o->initial != D37_TAYLOR_GREEN)
          TSR_TRY(config_choice(ini, "axis", false, d37_axis_names, &o->axis, err));
        int64_t p = o->periods;
        TSR_TRY(config_int(ini, "periods", false, 1, 1 << 20, &p, err));
        o->periods = (int)p;
      }
    }
  }
  *state = s;
  s = NULL;
cleanup:
  free(s);
  return st;
}

static void d37_free(void *state) { free(state); }

static void d37_describe(const void *state, char *out, size_t cap) {
  const d37_state_t *s = state;
  const double nu = (s->o.tau - 0.5) * lattice_d2q37.cs2;
  snprintf(out, cap, "d2q37 %s, tau = %g, nu = kappa = %g T (T0 = c_s^2 = %.6f), g = (%g, %g)",
           s->o.dp ? "dp" : "sp", s->o.tau, nu, lattice_d2q37.cs2, s->o.g[0], s->o.g[1]);
}

static int d37_warnings(const void *state, const simulation_options_t *so, char *out,
                        size_t cap) {
  (void)so;
  const d37_state_t *s = state;
  int n = 0;
  const double mach = hypot(s->o.velocity[0], s->o.velocity[1]) /
                      sqrt(2.0 * s->o.temperature * lattice_d2q37.cs2);
  if (s->o.tau < 0.52) {
    n += snprintf(out, cap, "d2q37.tau = %g is close to 1/2: the run may go unstable\n", s->o.tau) > 0;
  } else if (mach > 0.5) {
    n += snprintf(out, cap, "d2q37: initial Mach number %.2f: the fourth-order equilibrium "
                  "is accurate at small Mach numbers\n", mach) > 0;
  }
  return n;
}

/* ---- blocks ---- */

typedef struct d37_init_ctx {
  const d37_ctx_t *c;
  const block_info_t *b;
} d37_init_ctx_t;

/* The start fields of a cell: rho, ux, uy, T. */
static void d37_initial(int x, int y, const void *vctx, double out[4]) {
  const d37_init_ctx_t *ic = vctx;
  const d37_opts_t *o = &ic->c->o;
  out[0] = o->density;
  out[1] = o->velocity[0];
  out[2] = o->velocity[1];
  out[3] = o->temperature;
  if (o->initial == D37_UNIFORM) return;
  const int at[2] = {ic->b->lo[0] + x, ic->b->lo[1] + y};
  if (o->initial == D37_TAYLOR_GREEN) { /* vortices of `periods` along both axes */
    const double two_pi = 2.0 * 3.14159265358979323846;
    const double px = two_pi * (double)o->periods * ((double)at[0] + 0.5) /
                      (double)ic->c->domain.cells[0];
    const double py = two_pi * (double)o->periods * ((double)at[1] + 0.5) /
                      (double)ic->c->domain.cells[1];
    out[1] += o->amplitude * cos(px) * sin(py);
    out[2] -= o->amplitude * sin(px) * cos(py);
    return;
  }
  const double n = (double)ic->c->domain.cells[o->axis];
  const double ph = 2.0 * 3.14159265358979323846 * (double)o->periods *
                    ((double)at[o->axis] + 0.5) / n;
  const double a = o->amplitude;
  switch (o->initial) {
    case D37_SHEAR_WAVE: /* the velocity across the wave vector */
      out[1 + (1 - o->axis)] += a * sin(ph);
      break;
    case D37_TEMPERATURE_WAVE: /* at constant pressure rho T */
      out[3] = o->temperature * (1.0 + a * cos(ph));
      out[0] = o->density / (1.0 + a * cos(ph));
      break;
    case D37_SOUND_WAVE: /* a standing wave, adiabatic: dT / T = (gamma - 1) drho / rho */
      out[0] = o->density * (1.0 + a * cos(ph));
      out[3] = o->temperature * (1.0 + a * cos(ph));
      break;
    default:
      break;
  }
}

static tsr_status d37_fill(const block_info_t *b, void *values, const grid_dims_t *d,
                           const void *vctx, tsr_error_t *err) {
  (void)err;
  const d37_ctx_t *c = vctx;
  const d37_init_ctx_t ic = {c, b};
  d2q37_init(c->o.dp, values, d, &c->k, c->o.g, d37_initial, &ic);
  return TSR_OK;
}

/* ---- work ---- */

static tsr_status d37_stream_collide(const block_info_t *b, block_data_t *data, void *vctx,
                                     tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const d37_ctx_t *c = vctx;
  field_block_t *f = field_block_of(data, c->pdf_id);
  TSR_CHECK(f, TSR_ERR_INTERNAL, "BlockID %d lacks its d2q37 populations", (int)b->id);
  d2q37_stream_collide(c->o.dp, f->values[f->cur], f->values[f->cur ^ 1], &f->host.dims, &c->k,
                       0, b->size[1]);
  field_swap(f);
cleanup:
  return st;
}

/* ---- output ---- */

/* The hydrodynamic fields of every interior cell, x fastest: rho, ux, uy, T into
 * out[4 cells] (component-major). */
static tsr_status d37_fields(const d37_ctx_t *c, const block_info_t *b,
                             const block_data_t *data, double *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const grid_field_t *h = NULL;
  TSR_TRY(field_sync(data, c->pdf_id, &h, err));
  TSR_CHECK(h, TSR_ERR_INTERNAL, "BlockID %d lacks its d2q37 populations", (int)b->id);
  const int n[3] = {b->size[0], b->size[1], 1};
  /* d2q37_macro writes the storage precision into a field of 4 components without ghosts
     in AoS: component q of cell i is element 4 i + q */
  const grid_dims_t od = grid_dims_make(n, 4, 0, GRID_AOS, h->esize);
  void *m = field_values_alloc(&od, h->esize);
  TSR_CHECK(m, TSR_ERR_NOMEM, "out of memory sampling BlockID %d", (int)b->id);
  d2q37_macro(c->o.dp, h->values, &h->dims, &c->k, c->o.g, m, &od);
  const size_t cells = (size_t)n[0] * (size_t)n[1];
  for (size_t i = 0; i < cells; ++i)
    for (int q = 0; q < 4; ++q) out[(size_t)q * cells + i] = field_value(m, h->esize, 4 * i + (size_t)q);
  free(m);
cleanup:
  return st;
}

static tsr_status d37_sample(const block_info_t *b, const block_data_t *data, double *out,
                             void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const d37_quantity_t *q = vctx;
  const size_t cells = (size_t)b->size[0] * (size_t)b->size[1];
  double *all = malloc(4 * cells * sizeof *all);
  TSR_CHECK(all, TSR_ERR_NOMEM, "out of memory sampling BlockID %d", (int)b->id);
  TSR_TRY(d37_fields(q->s->ctx, b, data, all, err));
  if (q->count == 1) {
    memcpy(out, all + (size_t)q->first * cells, cells * sizeof *out);
  } else { /* a vector: 3 components per cell, z = 0 */
    for (size_t i = 0; i < cells; ++i) {
      out[3 * i] = all[cells + i];
      out[3 * i + 1] = all[2 * cells + i];
      out[3 * i + 2] = 0;
    }
  }
cleanup:
  free(all);
  return st;
}

/* mass, momentum and energy of the post-collision populations (lattice units) */
enum { D37_TOTALS = 4 };

static tsr_status d37_totals(void *state, sim_t *sim, const char **names, double *values,
                             int cap, int *n, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const d37_state_t *s = state;
  const d37_ctx_t *c = s->ctx;
  const lattice_t *l = &lattice_d2q37;
  patch_t *patch = sim_patch(sim);
  const int32_t nb = patch_block_count(patch);
  double all[D37_TOTALS];
  double *part = calloc(D37_TOTALS * (size_t)(nb > 0 ? nb : 1), sizeof *part);
  *n = 0;
  TSR_CHECK(cap >= D37_TOTALS, TSR_ERR_INTERNAL, "no room for the d2q37 totals");
  if (!part) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__,
                                "out of memory for the d2q37 totals");
  for (int32_t i = 0; st == TSR_OK && i < patch_local_count(patch); ++i) {
    const int32_t id = patch_local_id(patch, i);
    const block_info_t *b = patch_block(patch, id);
    const grid_field_t *h = NULL;
    st = field_sync(patch_block_data(patch, id), c->pdf_id, &h, err);
    if (st != TSR_OK) break;
    if (!h) continue;
    double sum[D37_TOTALS] = {0, 0, 0, 0};
    for (int y = 0; y < b->size[1]; ++y)
      for (int x = 0; x < b->size[0]; ++x)
        for (int q = 0; q < D37_Q; ++q) {
          const double f = field_value(h->values, h->esize, grid_index(&h->dims, x, y, 0, q));
          const int cx = l->c[0][q], cy = l->c[1][q];
          sum[0] += f;
          sum[1] += f * cx;
          sum[2] += f * cy;
          sum[3] += 0.5 * f * (double)(cx * cx + cy * cy);
        }
    for (int k = 0; k < D37_TOTALS; ++k) part[(size_t)k * (size_t)nb + (size_t)id] = sum[k];
  }
  TSR_TRY(verdict_reduce(sim_comm(sim), st, 0, err));
  TSR_TRY(sim_block_sums(sim, part, D37_TOTALS, all, err));
  static const char *const tn[D37_TOTALS] = {"mass", "momentum_x", "momentum_y", "energy"};
  for (int k = 0; k < D37_TOTALS; ++k) names[k] = tn[k], values[k] = all[k];
  *n = D37_TOTALS;
cleanup:
  free(part);
  return st;
}

/* Stable: the totals finite. */
static tsr_status d37_check(void *state, sim_t *sim, int64_t step, bool prepared,
                            sim_divergence_t *out, tsr_error_t *err) {
  (void)prepared;
  const char *names[D37_TOTALS];
  double values[D37_TOTALS];
  int n = 0;
  tsr_status st = d37_totals(state, sim, names, values, D37_TOTALS, &n, err);
  *out = (sim_divergence_t){.step = step, .block = -1};
  bool finite = true;
  for (int k = 0; k < n; ++k) finite = finite && isfinite(values[k]);
  if (st == TSR_OK && !finite) {
    out->nvalues = n;
    for (int k = 0; k < n; ++k) out->names[k] = names[k], out->values[k] = values[k];
    st = tsr_error_set(err, TSR_ERR_DIVERGED, __FILE__, __LINE__,
                       "the d2q37 populations diverged at step %lld (mass %g, energy %g): raise "
                       "d2q37.tau or lower the velocities, the temperature jumps or the force",
                       (long long)step, values[0], values[3]);
  }
  return st;
}

/* ---- registration ---- */

static tsr_status d37_register(void *state, registry_t *reg, const module_env_t *env,
                               module_decl_t *decl, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  d37_state_t *s = state;
  d37_ctx_t c;
  memset(&c, 0, sizeof c);
  c.o = s->o;
  c.domain = env->so->domain;
  const d2q37_params_t p = {.tau = c.o.tau, .g = {c.o.g[0], c.o.g[1]}};
  d2q37_constants(&p, c.o.dp, &c.k);
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    const int off[3] = {direction_offsets[d][0], direction_offsets[d][1],
                        direction_offsets[d][2]};
    c.ncomps[d] = lattice_crossing(&lattice_d2q37, off, c.comps[d]); /* none along z */
  }
  TSR_TRY(registry_data_id(reg, D37_PDF, &c.pdf_id, err));
  void *ctx;
  TSR_TRY(registry_keep(reg, &c, sizeof c, &ctx, err));
  s->ctx = ctx;
  TSR_TRY(registry_add(reg, &(registry_item_t){
      .kind = REGISTRY_KIND_KERNEL, .name = D37_STREAM_COLLIDE, .fs = "*", .hs = "cpu",
      .bs = "*", .kernel = d37_stream_collide, .ctx = ctx, .concurrent = 1}, err));
  const int vb = c.o.dp ? 8 : 4, r = lattice_d2q37.reach;
  TSR_TRY(field_declare(reg, env->fields, &(field_spec_t){
      .name = D37_PDF, .components = D37_Q, .esize = (size_t)vb, .width = {r, r, 0},
      .copies = 2, .layout = GRID_SOA, .crossing = &c.comps[0][0], .stride = D37_Q,
      .ncrossing = c.ncomps, .fill = d37_fill, .init_ctx = ctx}, err));
  s->q[0] = (d37_quantity_t){s, 0, 1};
  s->q[1] = (d37_quantity_t){s, 1, 2};
  s->q[2] = (d37_quantity_t){s, 3, 1};
  *decl = (module_decl_t){
      .nfields = 1,
      .fields = {{.name = D37_PDF, .components = D37_Q, .value_bytes = vb, .width = {r, r, 0},
                  .layout = {"soa", "soa"}}},
      .nsweeps = 1,
      .sweeps = {{.name = "d2q37", .reads_ghosts = {D37_PDF}, .nreads_ghosts = 1,
                  .writes = {D37_PDF}, .nwrites = 1, .kernel = D37_STREAM_COLLIDE}},
      .nquantities = 3,
      .quantities = {{.name = "density", .components = 1, .columns = {"rho"},
                      .sample = d37_sample, .ctx = &s->q[0]},
                     {.name = "velocity", .components = 3, .columns = {"ux", "uy", "uz"},
                      .sample = d37_sample, .ctx = &s->q[1]},
                     {.name = "temperature", .components = 1, .columns = {"T"},
                      .sample = d37_sample, .ctx = &s->q[2]}}};
cleanup:
  return st;
}

/* Per block: the two population grids with their ghost layers, on the host. */
static tsr_status d37_local_bytes(const void *state, registry_t *reg, const patch_t *patch,
                                  size_t *host, size_t *device, size_t *largest,
                                  tsr_error_t *err) {
  tsr_status st = TSR_OK;
  (void)reg, (void)device, (void)largest;
  const d37_state_t *s = state;
  const size_t es = s->o.dp ? 8 : 4;
  for (int32_t i = 0; i < patch_local_count(patch); ++i) {
    const block_info_t *b = patch_block(patch, patch_local_id(patch, i));
    const grid_dims_t d = grid_dims_make(b->size, D37_Q, lattice_d2q37.reach, GRID_SOA, es);
    size_t grid, grids;
    bool ok = d.elements > 0 && tsr_mul_size(d.elements, es, &grid) &&
              tsr_mul_size(grid, 2, &grids) && tsr_add_size(*host, grids, host);
    TSR_CHECK(ok, TSR_ERR_INVALID, "BlockID %d: its d2q37 populations do not fit in a size_t",
              (int)b->id);
  }
cleanup:
  return st;
}

const module_def_t d2q37_module = {
    .name = "d2q37",
    .read = d37_read,
    .free = d37_free,
    .describe = d37_describe,
    .warnings = d37_warnings,
    .register_items = d37_register,
    .local_bytes = d37_local_bytes,
    .check = d37_check,
    .totals = d37_totals,
};
