#include "lbm_sim.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_threads.h"
#include "field.h"
#include "gpu_lbm.h"
#include "grid.h"
#include "lbm_block.h"
#include "lbm_derived.h"
#include "lbm_gpu.h"
#include "lbm_surface.h"
#include "tsr_size.h"
#include "verdict.h"

/* The module's state: its options, its OpenCL environment on this process, and what it
 * declared. */
typedef struct lbm_state lbm_state_t;
typedef struct lbm_quantity {
  const lbm_state_t *state;
  int what; /* LBM_Q_* */
} lbm_quantity_t;
struct lbm_state {
  lbm_options_t opts;
  gpu_lbm_cache_t *gpu;
  int cells_id; /* lbm.cells: flags and moments */
  lbm_coupling_flags_t *couple; /* in the registry: which fields of the public face the
                                   run uses (lbm_bind) */
  lbm_ctx_t *ctx;                /* the items' context, in the registry */
  lbm_quantity_t quantities[LBM_QUANTITIES]; /* the samplers' contexts */
  int nbodies;                               /* named obstacles (geometry_bodies) */
  double speed;                              /* the largest speed given (lbm_largest_speed) */
  char force_names[5 * LBM_MAX_BODIES][GEOMETRY_NAME_MAX + 4]; /* "<body>.fx", ... "<body>.cl" */
  lbm_surfaces_t *surfaces;      /* the bodies' surfaces where output.surface_every asks
                                    for them; NULL: none */
};

static void lbm_state_free(void *state) {
  lbm_state_t *s = state;
  if (!s) return;
  gpu_lbm_cache_free(&s->gpu);
  lbm_surfaces_free(&s->surfaces);
  free(s);
}

tsr_status lbm_module_state(const lbm_options_t *lo, void **state, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_state_t *s = calloc(1, sizeof *s);
  *state = NULL;
  TSR_CHECK(s, TSR_ERR_NOMEM, "out of memory");
  s->opts = *lo;
  s->cells_id = -1;
  const char *what;
  s->speed = lbm_largest_speed(lo, NULL, &what);
  for (int q = 0; q < LBM_QUANTITIES; ++q) s->quantities[q] = (lbm_quantity_t){s, q};
  int body[GEOMETRY_MAX_SHAPES];
  const char *names[GEOMETRY_MAX_SHAPES];
  s->nbodies = geometry_bodies(&s->opts.geometry, body, names);
  TSR_CHECK(s->nbodies <= LBM_MAX_BODIES, TSR_ERR_INTERNAL, "%d named obstacles", s->nbodies);
  for (int k = 0; k < s->nbodies; ++k) {
    for (int a = 0; a < 3; ++a)
      snprintf(s->force_names[5 * k + a], sizeof s->force_names[0], "%s.f%c", names[k], "xyz"[a]);
    snprintf(s->force_names[5 * k + 3], sizeof s->force_names[0], "%s.cd", names[k]);
    snprintf(s->force_names[5 * k + 4], sizeof s->force_names[0], "%s.cl", names[k]);
  }
  *state = s;
cleanup:
  return st;
}

/* Reads the sections "lbm", "boundaries" and "obstacles". */
static tsr_status lbm_read(config_t *cfg, const simulation_options_t *so, void **state,
                           tsr_error_t *err) {
  lbm_options_t lo;
  tsr_status st = lbm_options_read(cfg, &so->domain, &lo, err);
  if (st == TSR_OK) st = lbm_module_state(&lo, state, err);
  if (st == TSR_OK) {
    const char *what;
    lbm_state_t *s = *state;
    s->speed = lbm_largest_speed(&lo, &so->domain, &what);
    if (so->surface_every > 0 && s->nbodies == 0)
      st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                         "%s: output.surface_every = %lld: the flow has no bodies, whose "
                         "surfaces it writes: give an obstacle a name (obstacles[i].name)",
                         so->source, (long long)so->surface_every);
    else if (so->surface_every > 0)
      st = lbm_surfaces_create(&s->opts, &s->surfaces, err);
    if (st != TSR_OK) {
      lbm_state_free(s);
      *state = NULL;
    }
  }
  return st;
}

static const char *lbm_state_fs(const void *state) {
  return lbm_fs(&((const lbm_state_t *)state)->opts);
}

/* The collision and precision, then the CPU blocks' layout and the GPU blocks' streaming
 * where blocks of that hs run (CPU blocks always stream with two grids). */
static void lbm_describe(const void *state, bool cpu, bool gpu, char *out, size_t cap) {
  const lbm_state_t *s = state;
  const char *layout = s->opts.cpu_layout == GRID_SOA ? "soa" : "aos";
  const char *streaming = s->opts.in_place ? "in_place" : "two_grid";
  char blocks[96];
  if (cpu && gpu)
    snprintf(blocks, sizeof blocks, " (CPU blocks %s, GPU blocks %s)", layout, streaming);
  else snprintf(blocks, sizeof blocks, ",%s", gpu ? streaming : layout);
  char les[48] = "";
  if (s->opts.smagorinsky > 0)
    snprintf(les, sizeof les, ", Smagorinsky C_s = %g", s->opts.smagorinsky);
  snprintf(out, cap, "%s,%s%s, nu = %g, tau = %.6g%s, Ma = %.3g",
           lbm_collision_names[s->opts.collision], lbm_precision_names[s->opts.precision], blocks,
           s->opts.viscosity, 1.0 / lbm_omega(&s->opts), les,
           s->speed / lbm_sound_speed(&s->opts));
}

static int lbm_warnings(const void *state, const simulation_options_t *so, char *out, size_t cap) {
  return lbm_options_warnings(&((const lbm_state_t *)state)->opts, &so->domain, out, cap);
}

/* The calibration's physics: the same, without walls, at rest. */
static tsr_status lbm_calibration(const void *state, void **out, tsr_error_t *err) {
  lbm_options_t l = ((const lbm_state_t *)state)->opts;
  l.geometry = geometry_default(); /* all periodic: no walls */
  l.init = LBM_INIT_UNIFORM;
  for (int a = 0; a < 3; ++a) l.init_velocity[a] = 0.0;
  return lbm_module_state(&l, out, err);
}

/* ---- quantities ---- */

/* One sampler for the three quantities: ctx is the state's lbm_quantity_t of one. */
static tsr_status lbm_sample(const block_info_t *b, const block_data_t *data, double *out,
                             void *ctx, tsr_error_t *err) {
  (void)err;
  const lbm_quantity_t *q = ctx;
  const lbm_state_t *s = q->state;
  lbm_moments_view_t v = lbm_block_moments(data, s->cells_id);
  const int64_t n = patch_block_cells(b);
  /* a block without PDFs (solid): a wall at rest */
  for (int64_t k = 0; q->what == LBM_Q_DENSITY && k < n; ++k) out[k] = v.rho ? v.rho[k] : s->opts.rho0;
  /* in fluid cells the velocity the collision used (lbm_collision_velocity) */
  for (int64_t k = 0; q->what == LBM_Q_VELOCITY && k < 3 * n; ++k) out[k] = v.u ? v.u[k] : 0.0;
  for (int64_t k = 0; q->what == LBM_Q_FLAGS && k < n; ++k)
    out[k] = v.flags ? (double)v.flags[k] : (double)GEOMETRY_NOSLIP;
  /* the pressure against the reference density's: c_s^2 (rho - rho0); 0 in walls */
  const double cs2 = lbm_sound_speed(&s->opts) * lbm_sound_speed(&s->opts);
  for (int64_t k = 0; q->what == LBM_Q_PRESSURE && k < n; ++k)
    out[k] = v.rho && v.flags[k] == GEOMETRY_FLUID ? cs2 * (v.rho[k] - s->opts.rho0) : 0.0;
  /* c_p = (p - p_ref) / (rho U^2 / 2), with the forces section's rho and U */
  const double dyn = 0.5 * s->opts.forces.density * s->opts.forces.velocity * s->opts.forces.velocity;
  for (int64_t k = 0; q->what == LBM_Q_PRESSURE_COEFFICIENT && k < n; ++k)
    out[k] = v.rho && v.flags[k] == GEOMETRY_FLUID ? cs2 * (v.rho[k] - s->opts.rho0) / dyn : 0.0;
  if (q->what >= LBM_Q_VORTICITY) return lbm_sample_gradient(s->ctx, q->what, b, data, out, err);
  return TSR_OK;
}

/* The derived quantities, shown where an output names them; for the gradient ones, where
 * one does, the scratch field and the output sweeps that fill it and its ghost layer. */
static tsr_status lbm_derived_register(lbm_state_t *s, registry_t *reg, const module_env_t *env,
                                       module_decl_t *decl, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const struct {
    const char *name, *columns[3];
    int what, components;
    units_dim_t dim;
  } d[6] = {{"pressure", {"p"}, LBM_Q_PRESSURE, 1, UNITS_PRESSURE},
            {"pressure_coefficient", {"cp"}, LBM_Q_PRESSURE_COEFFICIENT, 1, UNITS_NONE},
            {"vorticity", {"wx", "wy", "wz"}, LBM_Q_VORTICITY, 3, UNITS_RATE},
            {"vorticity_magnitude", {"w"}, LBM_Q_VORTICITY_MAGNITUDE, 1, UNITS_RATE},
            {"q_criterion", {"q"}, LBM_Q_Q_CRITERION, 1, UNITS_RATE2},
            {"strain_rate", {"s"}, LBM_Q_STRAIN_RATE, 1, UNITS_RATE}};
  TSR_CHECK(s->opts.forces.on || !module_env_named(env, "pressure_coefficient"),
            TSR_ERR_INVALID,
            "an output names pressure_coefficient, (p - p_ref) / (rho U^2 / 2), but there is no "
            "forces section to give its reference density and velocity (forces.density, "
            "forces.velocity)");
  for (int i = 0; i < 6; ++i) {
    module_quantity_t *q = &decl->quantities[decl->nquantities++];
    *q = (module_quantity_t){.name = d[i].name, .components = d[i].components,
                             .dim = d[i].dim, .prepare = LBM_MOMENTS, .sample = lbm_sample,
                             .ctx = &s->quantities[d[i].what], .on_request = true};
    for (int k = 0; k < d[i].components; ++k) q->columns[k] = d[i].columns[k];
  }
  if (!lbm_gradients_named(env) && !s->surfaces) goto cleanup; /* surfaces: wall shear */
  lbm_ctx_t *c = s->ctx;
  TSR_TRY(module_declare_field(decl, reg, env, &(field_spec_t){
      .name = LBM_GRADIENT_INPUT, .components = 4,
      .esize = lbm_precision_value_bytes(s->opts.precision), .layout = GRID_SOA,
      .width = {c->width[0] > 0, c->width[1] > 0, c->width[2] > 0}}, err));
  decl->fields[decl->nfields - 1].scratch = true;
  const registry_item_t items[] = {
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_GRADIENT_FILL, .fs = "*", .hs = "cpu|gpu",
       .bs = "fluid|fluid_boundary", .work = lbm_gradient_fill},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_GRADIENT_FILL, .fs = "*", .hs = "cpu|gpu",
       .bs = "solid", .work = registry_nothing},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_GRADIENT_READY, .fs = "*", .hs = "cpu|gpu",
       .bs = "*", .work = registry_nothing}};
  TSR_TRY(lbm_add_items(reg, items, sizeof items / sizeof items[0], c, err));
  TSR_TRY(registry_data_id(reg, LBM_GRADIENT_INPUT, &c->gradient_id, err));
  decl->noutput_sweeps = 2;
  decl->output_sweeps[0] = (module_sweep_t){.name = "lbm.gradient", .writes = {LBM_GRADIENT_INPUT},
                                            .nwrites = 1, .kernel = LBM_GRADIENT_FILL};
  decl->output_sweeps[1] = (module_sweep_t){.name = "lbm.gradient_ghosts",
                                            .reads_ghosts = {LBM_GRADIENT_INPUT},
                                            .nreads_ghosts = 1, .kernel = LBM_GRADIENT_READY};
cleanup:
  return st;
}

static tsr_status lbm_register(void *state, registry_t *reg, const module_env_t *env,
                               module_decl_t *decl, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_state_t *s = state;
  if (env->cl && !s->gpu)
    TSR_TRY(gpu_lbm_cache_create(env->cl, s->opts.kernel_sources, s->opts.work_group, &s->gpu,
                                 err));
  *decl = (module_decl_t){
      /* the density the next collision will see, after the exchange of the populations
         the collision wrote and the boundary links: a module computing the force of the
         next collision from it computes it for the density that collision has (bind
         drops the sweep where no module reads lbm.density) */
      .nsweeps = 2,
      .sweeps = {{.name = "lbm", .reads_ghosts = {LBM_PDF}, .nreads_ghosts = 1,
                  .reads = {LBM_FORCE}, .nreads = 1,
                  .writes = {LBM_PDF, LBM_VELOCITY}, .nwrites = 2,
                  .boundary = LBM_BOUNDARY,
                  .kernel = LBM_STREAM_COLLIDE},
                 {.name = "lbm.density", .reads_ghosts = {LBM_PDF}, .nreads_ghosts = 1,
                  .writes = {LBM_DENSITY}, .nwrites = 1, .boundary = LBM_BOUNDARY,
                  .kernel = LBM_PULLED_DENSITY}},
      .nquantities = 3,
      .quantities = {{.name = "density", .components = 1, .columns = {"rho"}, .dim = UNITS_DENSITY,
                      .prepare = LBM_MOMENTS, .sample = lbm_sample,
                      .ctx = &s->quantities[LBM_Q_DENSITY]},
                     {.name = "velocity", .components = 3, .columns = {"ux", "uy", "uz"},
                      .dim = UNITS_VELOCITY,
                      .prepare = LBM_MOMENTS, .sample = lbm_sample,
                      .ctx = &s->quantities[LBM_Q_VELOCITY]},
                     {.name = "flags", .components = 1, .columns = {"flags"},
                      .prepare = LBM_MOMENTS, .sample = lbm_sample,
                      .ctx = &s->quantities[LBM_Q_FLAGS],
                      .small_integer = true, .wall = true}},
      .nscalars = 3,
      .scalars = {{"lbm.viscosity", s->opts.viscosity}, {"lbm.rho0", s->opts.rho0},
                  {"lbm.obstacles", s->opts.geometry.nshapes}}};
  lbm_ctx_t *ctx = NULL;
  TSR_TRY(lbm_sweep_register(reg, &env->so->domain, &s->opts, s->gpu, env->fields, decl, &ctx,
                             err));
  TSR_TRY(lbm_gpu_register(reg, ctx, err));
  s->couple = &ctx->couple;
  s->ctx = ctx;
  TSR_TRY(lbm_derived_register(s, reg, env, decl, err));
  TSR_TRY(registry_data_id(reg, LBM_CELLS, &s->cells_id, err));
cleanup:
  return st;
}

/* The public face: the force is read where some other module writes it, the velocity and
 * the density are written where some module reads them (the velocity also with a force,
 * for the velocity quantity); the fields nobody uses are not allocated. */
static tsr_status lbm_bind(void *state, module_decl_t *decls, int n, int self,
                           tsr_error_t *err) {
  (void)err;
  lbm_state_t *s = state;
  module_decl_t *mine = &decls[self];
  /* the flow's own sweep reads the force and writes the others: ask the other modules */
  module_decl_t others[MODULE_MAX];
  int k = 0;
  for (int m = 0; m < n; ++m)
    if (m != self) others[k++] = decls[m];
  s->couple->force = module_writes_before(others, k, LBM_FORCE);
  /* with a force per cell the moments of the stored populations miss half of it: the
     velocity quantity then shows the velocity the collision used, from lbm.velocity */
  s->couple->velocity = s->couple->force || module_reads(others, k, LBM_VELOCITY);
  s->couple->density = module_reads(others, k, LBM_DENSITY);
  if (!s->couple->force) module_drop_field(mine, LBM_FORCE);
  if (!s->couple->velocity) module_drop_field(mine, LBM_VELOCITY);
  if (!s->couple->density) {
    module_drop_field(mine, LBM_DENSITY);
    mine->nsweeps = 1; /* without the density sweep */
  }
  return TSR_OK;
}

static tsr_status lbm_module_classify(void *state, patch_t *patch, registry_t *reg,
                                      tsr_error_t *err) {
  return lbm_classify(patch, reg, &((lbm_state_t *)state)->opts, err);
}

/* The bs id of solid blocks, or UINT32_MAX where none was named yet. */
static uint32_t lbm_solid(registry_t *reg) {
  uint32_t solid = UINT32_MAX;
  tsr_error_t ignored;
  if (selector_find(registry_selectors(reg), SELECTOR_BS, "solid", &solid, &ignored) != TSR_OK)
    solid = UINT32_MAX;
  return solid;
}

static double lbm_block_cells(const void *state, registry_t *reg, const block_info_t *b) {
  (void)state;
  return patch_has_bs(b, lbm_solid(reg)) ? 0.0
                                         : (double)b->size[0] * (double)b->size[1] * (double)b->size[2];
}

/* Beyond the fields (the field kit's), on this process's blocks: the moments and flags
 * of every non-solid block on the host (rho, u and a flag per cell); on GPU blocks also
 * on the device (the moments and the check's flags). Every product is checked: a block
 * whose bytes do not fit in a size_t is an error naming it. */
static tsr_status lbm_local_bytes(const void *state, registry_t *reg, const patch_t *patch,
                                  size_t *host, size_t *device, size_t *largest, tsr_error_t *err) {
  (void)largest;
  tsr_status st = TSR_OK;
  const lbm_state_t *s = state;
  const size_t moments_per_cell = 1 + 4 * 8;
  const uint32_t solid = lbm_solid(reg), gpu_hs = registry_gpu_hs(reg);
  for (int32_t i = 0; i < patch_local_count(patch); ++i) {
    const block_info_t *b = patch_block(patch, patch_local_id(patch, i));
    if (patch_has_bs(b, solid)) continue;
    size_t cells, moments;
    bool ok = tsr_box_cells(b->size, 0, &cells) &&
              tsr_mul_size(cells, moments_per_cell, &moments) && tsr_add_size(*host, moments, host);
    if (ok && b->hs == gpu_hs) ok = tsr_add_size(*device, moments, device);
    TSR_CHECK(ok, TSR_ERR_INVALID,
              "BlockID %d (%d x %d x %d cells, %s): its bytes do not fit in a size_t", (int)b->id,
              b->size[0], b->size[1], b->size[2], lbm_fs(&s->opts));
  }
cleanup:
  return st;
}

/* The fluid's mass and kinetic energy (sum of rho and of rho |u|^2 / 2 over fluid cells)
 * from the moments: per block, then over the blocks in BlockID order, so that the sums do
 * not depend on the decomposition or the ranks. */
static tsr_status lbm_sim_sums(lbm_sim_t *sim, double *mass, double *energy, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  patch_t *patch = sim_patch(sim);
  const int cells_id = sim_field_id(sim, LBM_CELLS);
  int32_t nb = patch_block_count(patch);
  double *part = calloc(2 * (size_t)nb, sizeof *part), sums[2];
  if (!part) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  for (int32_t i = 0; st == TSR_OK && i < patch_local_count(patch); ++i) {
    int32_t id = patch_local_id(patch, i);
    lbm_moments_view_t v = lbm_block_moments(patch_block_data(patch, id), cells_id);
    for (int64_t k = 0; k < v.cells; ++k)
      if (v.flags[k] == GEOMETRY_FLUID) {
        const double *u = v.u + 3 * k;
        part[id] += v.rho[k];
        part[nb + id] += 0.5 * v.rho[k] * (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
      }
  }
  TSR_TRY(verdict_reduce(sim_comm(sim), st, 0, err));
  TSR_TRY(sim_block_sums(sim, part, 2, sums, err));
  *mass = sums[0];
  *energy = sums[1];
cleanup:
  free(part);
  return st;
}

tsr_status lbm_sim_mass(lbm_sim_t *sim, double *mass, tsr_error_t *err) {
  double energy;
  return lbm_sim_sums(sim, mass, &energy, err);
}

static tsr_status lbm_check(void *state, sim_t *sim, int64_t step, bool moments_fresh,
                           sim_divergence_t *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_state_t *s = state;
  patch_t *patch = sim_patch(sim);
  const MPI_Comm comm = sim_comm(sim);
  /* each rank's first unstable cell as BlockID * 2^32 + cell index; the smallest wins */
  int64_t mine = INT64_MAX, first = INT64_MAX;
  const double cs2 = lbm_sound_speed(&s->opts) * lbm_sound_speed(&s->opts);
  if (!moments_fresh) TSR_TRY(sim_run_kernel(sim, LBM_CHECK, err));
  for (int32_t i = 0; i < patch_local_count(patch); ++i) {
    int32_t id = patch_local_id(patch, i);
    lbm_moments_view_t v = lbm_block_moments(patch_block_data(patch, id), s->cells_id);
    int64_t first_cell = moments_fresh ? lbm_first_unstable(&v, cs2) : v.unstable;
    if (first_cell >= 0 && ((int64_t)id << 32) + first_cell < mine)
      mine = ((int64_t)id << 32) + first_cell;
  }
  TSR_MPI(MPI_Allreduce(&mine, &first, 1, MPI_INT64_T, MPI_MIN, comm));
  *out = (sim_divergence_t){.step = step, .block = -1};
  if (first == INT64_MAX) goto cleanup;
  const int32_t id = (int32_t)(first >> 32);
  const int64_t k = first & 0xffffffff;
  const block_info_t *b = patch_block(patch, id);
  double vals[4] = {0};
  if (b->rank == patch_my_rank(patch)) {
    lbm_moments_view_t v = lbm_block_moments(patch_block_data(patch, id), s->cells_id);
    vals[0] = v.rho[k];
    for (int a = 0; a < 3; ++a) vals[1 + a] = v.u[3 * k + a];
  }
  TSR_MPI(MPI_Bcast(vals, 4, MPI_DOUBLE, b->rank, comm));
  const int64_t local[3] = {k % b->size[0], k / b->size[0] % b->size[1],
                            k / b->size[0] / b->size[1]};
  static const char *const names[4] = {"rho", "ux", "uy", "uz"};
  out->block = id;
  out->nvalues = 4;
  for (int a = 0; a < 3; ++a) out->cell[a] = b->lo[a] + local[a];
  for (int i = 0; i < 4; ++i) out->names[i] = names[i], out->values[i] = vals[i];
  st = tsr_error_set(err, TSR_ERR_DIVERGED, __FILE__, __LINE__,
                     "the simulation diverged at step %lld: BlockID %d, cell (%lld, %lld, %lld): "
                     "rho = %g, u = (%g, %g, %g); stable are finite values with rho > 0 and "
                     "|u| < c_s = %.4f (lattice units): lower the velocities or raise the "
                     "viscosity or the resolution",
                     (long long)step, (int)id, (long long)out->cell[0], (long long)out->cell[1],
                     (long long)out->cell[2], vals[0], vals[1], vals[2], vals[3],
                     lbm_sound_speed(&s->opts));
cleanup:
  return st;
}

/* The force on each body: the momentum its links exchanged in the last boundary (the
 * blocks' fixed-point sums added as integers over the blocks and ranks: the same whatever
 * the decomposition, the hardware and the order), in lattice units. */
static tsr_status lbm_sim_forces(lbm_state_t *s, sim_t *sim, double *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  patch_t *patch = sim_patch(sim);
  int64_t sum[3 * LBM_MAX_BODIES] = {0}, all[3 * LBM_MAX_BODIES];
  const int n = 3 * s->nbodies;
  for (int32_t i = 0; i < patch_local_count(patch); ++i) {
    const lbm_block_t *lb = block_data_get(patch_block_data(patch, patch_local_id(patch, i)),
                                           s->cells_id);
    if (lb && lb->force)
      for (int k = 0; k < n; ++k) sum[k] += lb->force[k];
  }
  TSR_MPI(MPI_Allreduce(sum, all, n, MPI_INT64_T, MPI_SUM, sim_comm(sim)));
  for (int k = 0; k < n; ++k) out[k] = ldexp((double)all[k], -LBM_FORCE_SHIFT);
cleanup:
  return st;
}

static tsr_status lbm_totals(void *state, sim_t *sim, const char **names, double *values, int cap,
                             int *n, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_state_t *s = state;
  *n = 0;
  TSR_CHECK(cap >= 2 + 5 * s->nbodies, TSR_ERR_INTERNAL, "no room for the LBM's totals");
  TSR_TRY(lbm_sim_sums(sim, &values[0], &values[1], err));
  names[0] = "mass";
  names[1] = "kinetic_energy";
  *n = 2;
  if (s->nbodies > 0) {
    double f[3 * LBM_MAX_BODIES];
    TSR_TRY(lbm_sim_forces(s, sim, f, err));
    /* c = 2 F / (rho U^2 A) along the drag and the lift axis */
    const double q = 0.5 * s->opts.forces.density * s->opts.forces.velocity *
                     s->opts.forces.velocity * s->opts.forces.area;
    for (int b = 0; b < s->nbodies; ++b) {
      for (int a = 0; a < 3; ++a) {
        names[*n] = s->force_names[5 * b + a];
        values[(*n)++] = f[3 * b + a];
      }
      if (!s->opts.forces.on) continue;
      names[*n] = s->force_names[5 * b + 3];
      values[(*n)++] = f[3 * b + s->opts.forces.drag] / q;
      names[*n] = s->force_names[5 * b + 4];
      values[(*n)++] = f[3 * b + s->opts.forces.lift] / q;
    }
  }
cleanup:
  return st;
}

/* The fluid's mass and kinetic energy; a body's force; its coefficients are numbers. */
static units_dim_t lbm_total_dim(const void *state, const char *name) {
  (void)state;
  const char *dot = strrchr(name, '.');
  if (strcmp(name, "mass") == 0) return UNITS_MASS;
  if (strcmp(name, "kinetic_energy") == 0) return UNITS_ENERGY;
  if (dot && dot[1] == 'f' && dot[2] && !dot[3]) return UNITS_FORCE; /* <body>.fx, .fy, .fz */
  return UNITS_NONE;
}

/* A coupled collision takes half the force on a block's first step (lbm_coupling_t.start):
 * after a restart past step 0 every block has had its first step. */
static tsr_status lbm_resume(void *state, sim_t *sim, int64_t step, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_state_t *s = state;
  patch_t *patch = sim_patch(sim);
  (void)err;
  for (int32_t i = 0; i < patch_local_count(patch); ++i) {
    lbm_block_t *lb = block_data_get(patch_block_data(patch, patch_local_id(patch, i)),
                                     s->cells_id);
    if (lb) {
      lb->started = step > 0;
      lb->steps = step;
    }
  }
  return st;
}

static int lbm_surfaces(const void *state, module_surface_t *out, int cap) {
  const lbm_state_t *s = state;
  return s->surfaces ? lbm_surfaces_list(s->surfaces, out, cap) : 0;
}

static tsr_status lbm_module_surface_points(void *state, sim_t *sim, int k, module_points_t *pts,
                                            tsr_error_t *err) {
  lbm_state_t *s = state;
  return lbm_surface_points(s->surfaces, s->ctx, sim_patch(sim), k, pts, err);
}

static const char *const lbm_restart_keys[] = {"lbm.cpu_layout", "lbm.gpu_streaming",
                                               "lbm.work_group", "lbm.kernel_sources", NULL};

const module_def_t lbm_module = {
    .name = "lbm",
    .read = lbm_read,
    .free = lbm_state_free,
    .fs = lbm_state_fs,
    .describe = lbm_describe,
    .warnings = lbm_warnings,
    .calibration = lbm_calibration,
    .register_items = lbm_register,
    .bind = lbm_bind,
    .classify = lbm_module_classify,
    .block_cells = lbm_block_cells,
    .local_bytes = lbm_local_bytes,
    .check = lbm_check,
    .totals = lbm_totals,
    .resume = lbm_resume,
    .restart_keys = lbm_restart_keys,
    .total_dim = lbm_total_dim,
    .physical_units = true,
    .surfaces = lbm_surfaces,
    .surface_points = lbm_module_surface_points,
};

/* ---- a simulation of the LBM alone, from options ---- */

tsr_status lbm_sim_create(MPI_Comm comm, const simulation_options_t *so, const lbm_options_t *lo,
                          lbm_sim_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  module_t m = {.def = &lbm_module};
  const sim_setup_t setup = {.set_threads = cpu_threads_set};
  *out = NULL;
  st = lbm_module_state(lo, &m.state, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_TRY(sim_create(comm, so, &setup, &m, 1, out, err));
cleanup:
  return st;
}

void lbm_sim_free(lbm_sim_t **sim) { sim_free(sim); }

tsr_status lbm_sim_step(lbm_sim_t *sim, int64_t steps, tsr_error_t *err) {
  return sim_step(sim, steps, err);
}

tsr_status lbm_sim_moments(lbm_sim_t *sim, tsr_error_t *err) {
  return sim_run_kernel(sim, LBM_MOMENTS, err);
}

tsr_status lbm_sim_gather(lbm_sim_t *sim, double *rho, double *u, tsr_error_t *err) {
  tsr_status st = sim_gather(sim, "density", rho, err);
  return st == TSR_OK ? sim_gather(sim, "velocity", u, err) : st;
}
