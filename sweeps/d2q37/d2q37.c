/* d2q37: the thermal compressible model on the D2Q37 lattice (kernels_cpu/d2q37/d2q37_cell.h;
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
 * sum f |c_i|^2 / 2 over the post-collision populations, and the kinetic energy of the
 * hydrodynamic velocity, sum rho |u|^2 / 2. The domain is 2-D (one cell along z) and
 * periodic along x; along y periodic too, or closed by two walls at fixed temperatures
 * (d37_wall_ghosts in kernels_cpu/d2q37/d2q37_cell.h: mirrored ghost rows, no mass across).
 * Blocks run on hs cpu (d2q37_kernels.c) and hs gpu (d2q37.cl), with bitwise the same
 * results. */
#include "d2q37.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "d2q37_kernels.h"
#include "direction.h"
#include "field.h"
#include "gpu_d2q37.h"
#include "grid.h"
#include "lattice.h"
#include "selector.h"
#include "sim.h"
#include "tsr_size.h"
#include "verdict.h"

#define D37_PDF "d2q37.pdf"
#define D37_STREAM_COLLIDE "d2q37.stream_collide"
#define D37_MACRO "d2q37.macro"

enum d37_initial {
  D37_UNIFORM,
  D37_SHEAR_WAVE,
  D37_TEMPERATURE_WAVE,
  D37_SOUND_WAVE,
  D37_TAYLOR_GREEN,
  D37_CONDUCTION,
  D37_RAYLEIGH_TAYLOR
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
  int walls;              /* walls at y- and y+ (the domain not periodic along y) */
  double wall_t[2];       /* their temperatures (units of T0) */
  double interface, width; /* rayleigh_taylor: the interface's height and half-width (cells) */
  int split;              /* propagation and collision in two passes */
} d37_opts_t;

/* What the items share (kept in the registry). */
typedef struct d37_ctx {
  d37_opts_t o;
  patch_options_t domain;
  d2q37_consts_t k;
  int pdf_id;
  int comps[DIRECTION_COUNT][D37_Q];
  int ncomps[DIRECTION_COUNT];
  const gpu_d2q37_t *gpu; /* NULL: this process has no OpenCL device */
  void **macro;          /* per BlockID: rho, ux, uy, T of its cells (AoS, the storage
                            precision) as the output step's D37_MACRO left them; owned by
                            the state */
} d37_ctx_t;

typedef struct d37_state d37_state_t;

/* A quantity: components of the hydrodynamic fields (density 0, velocity 1..2,
 * temperature 3). */
typedef struct d37_quantity {
  const d37_state_t *s;
  int first, count;
} d37_quantity_t;

struct d37_state {
  d37_opts_t o;
  d37_ctx_t *ctx;        /* after register_items */
  d37_quantity_t q[3];
  gpu_d2q37_t gpu;       /* the program of this process's OpenCL device, the constants */
  void **macro;          /* ctx->macro: one slot per BlockID of the domain */
  size_t nmacro;
};

static const char *const d37_initial_names[] = {"uniform", "shear_wave", "temperature_wave",
                                                "sound_wave", "taylor_green", "conduction",
                                                "rayleigh_taylor", NULL};
static const char *const d37_axis_names[] = {"x", "y", NULL};

/* The section d2q37.initial: the start's kind, state and wave or interface. */
static tsr_status d37_read_initial(config_node_t *ini, const simulation_options_t *so,
                                   const char *src, d37_opts_t *o, tsr_error_t *err) {
  tsr_status st = TSR_OK;
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
  TSR_CHECK((o->initial != D37_CONDUCTION && o->initial != D37_RAYLEIGH_TAYLOR) || o->walls,
            TSR_ERR_INVALID,
            "%s: d2q37.initial.kind = \"%s\" lies between the walls at y- and y+: set "
            "domain.periodic[1] to false and give d2q37.walls", src,
            d37_initial_names[o->initial]);
  if (o->initial == D37_RAYLEIGH_TAYLOR) {
    const double ny = (double)so->domain.cells[1];
    TSR_TRY(config_real(ini, "interface", false, 0, ny, &o->interface, err));
    TSR_TRY(config_real(ini, "width", false, 0.1, ny, &o->width, err));
  }
  if (o->initial != D37_UNIFORM) {
    TSR_TRY(config_real(ini, "amplitude", false, -1e6, 1e6, &o->amplitude, err));
    if (o->initial != D37_TAYLOR_GREEN && o->initial < D37_CONDUCTION)
      TSR_TRY(config_choice(ini, "axis", false, d37_axis_names, &o->axis, err));
    int64_t p = o->periods;
    TSR_TRY(config_int(ini, "periods", false, 1, 1 << 20, &p, err));
    o->periods = (int)p;
  }
cleanup:
  return st;
}

static tsr_status d37_read(config_t *cfg, const simulation_options_t *so, void **state,
                           tsr_error_t *err) {
  tsr_status st = TSR_OK;
  static const char *const precisions[] = {"dp", "sp", NULL};
  d37_state_t *s = calloc(1, sizeof *s);
  *state = NULL;
  TSR_CHECK(s, TSR_ERR_NOMEM, "out of memory");
  d37_opts_t *o = &s->o;
  *o = (d37_opts_t){.dp = 1, .tau = 0.8, .initial = D37_UNIFORM, .density = 1,
                    .temperature = 1, .amplitude = 1e-3, .periods = 1, .wall_t = {1, 1},
                    .width = 2};
  const char *src = config_source(cfg);
  TSR_CHECK(so->domain.cells[2] == 1, TSR_ERR_INVALID,
            "%s: domain.cells[2] = %lld: module \"d2q37\" is two-dimensional; allowed is 1",
            src, (long long)so->domain.cells[2]);
  TSR_CHECK(so->domain.periodic[0], TSR_ERR_INVALID,
            "%s: domain.periodic[0] = false: module \"d2q37\" runs on domains periodic along "
            "x (walls only at y- and y+)", src);
  o->walls = !so->domain.periodic[1];
  o->interface = 0.5 * (double)so->domain.cells[1];
  config_node_t *n;
  bool have_walls = false;
  TSR_TRY(config_object(config_root(cfg), "d2q37", false, &n, err));
  if (n) {
    int v = o->dp ? 0 : 1;
    TSR_TRY(config_choice(n, "precision", false, precisions, &v, err));
    o->dp = v == 0;
    static const char *const kernels[] = {"fused", "split", NULL};
    TSR_TRY(config_choice(n, "kernel", false, kernels, &o->split, err));
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
    config_node_t *walls;
    TSR_TRY(config_object(n, "walls", false, &walls, err));
    have_walls = walls != NULL;
    TSR_CHECK(!walls || o->walls, TSR_ERR_INVALID,
              "%s: d2q37.walls: the domain is periodic along y, so it has no walls; set "
              "domain.periodic[1] to false for walls at y- and y+", src);
    static const char *const faces[2] = {"y-", "y+"};
    for (int side = 0; walls && side < 2; ++side) {
      config_node_t *w;
      TSR_TRY(config_object(walls, faces[side], true, &w, err));
      TSR_TRY(config_real(w, "temperature", true, 1e-3, 1e3, &o->wall_t[side], err));
    }
    config_node_t *ini;
    TSR_TRY(config_object(n, "initial", false, &ini, err));
    if (ini) TSR_TRY(d37_read_initial(ini, so, src, o, err));
  }
  TSR_CHECK(have_walls || !o->walls, TSR_ERR_INVALID,
            "%s: domain.periodic[1] = false: module \"d2q37\" closes the domain along y "
            "with walls; give d2q37.walls.y-.temperature and d2q37.walls.y+.temperature",
            src);
  *state = s;
  s = NULL;
cleanup:
  free(s);
  return st;
}

static void d37_free(void *state) {
  d37_state_t *s = state;
  if (s) {
    gpu_d2q37_free(&s->gpu);
    for (size_t i = 0; i < s->nmacro; ++i) free(s->macro[i]);
    free(s->macro);
  }
  free(s);
}

/* The calibration's physics (hardware.balance.calibrate): the same model and kernels on a
 * periodic block, so without walls, from rest (the gravity stays: its term is part of
 * the kernel's work). */
static tsr_status d37_calibration(const void *state, void **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  d37_state_t *s = calloc(1, sizeof *s);
  *out = NULL;
  TSR_CHECK(s, TSR_ERR_NOMEM, "out of memory");
  s->o = ((const d37_state_t *)state)->o;
  s->o.walls = 0;
  s->o.initial = D37_UNIFORM;
  s->o.velocity[0] = s->o.velocity[1] = 0.0;
  *out = s;
cleanup:
  return st;
}

static void d37_describe(const void *state, bool cpu, bool gpu, char *out, size_t cap) {
  (void)cpu, (void)gpu;
  const d37_state_t *s = state;
  const double nu = (s->o.tau - 0.5) * lattice_d2q37.cs2;
  int n = snprintf(out, cap, "d2q37 %s, tau = %g, nu = kappa = %g T (T0 = c_s^2 = %.6f), "
                   "g = (%g, %g)", s->o.dp ? "dp" : "sp", s->o.tau, nu, lattice_d2q37.cs2,
                   s->o.g[0], s->o.g[1]);
  if (s->o.walls && n > 0 && (size_t)n < cap)
    snprintf(out + n, cap - (size_t)n, ", walls at T = %g (y-) and %g (y+)", s->o.wall_t[0],
             s->o.wall_t[1]);
}

static int d37_warnings(const void *state, const simulation_options_t *so, char *out,
                        size_t cap) {
  (void)so;
  const d37_state_t *s = state;
  int n = 0;
  const double mach = hypot(s->o.velocity[0], s->o.velocity[1]) /
                      sqrt(2.0 * s->o.temperature * lattice_d2q37.cs2);
  size_t used = 0;
  if (s->o.tau < 0.505) {
    const int k = snprintf(out, cap, "d2q37.tau = %g is close to 1/2: the run may go "
                           "unstable\n", s->o.tau);
    if (k > 0 && (size_t)k < cap) used = (size_t)k, ++n;
  }
  if (mach > 0.5) {
    const int k = snprintf(out + used, cap - used, "d2q37: initial Mach number %.2f: the "
                           "fourth-order equilibrium is accurate at small Mach numbers\n", mach);
    if (k > 0 && (size_t)k < cap - used) used += (size_t)k, ++n;
  }
  /* the band of temperatures where BGK D2Q37 ran stably near tau = 1/2 (physics.md, "Where
     it is stable"): measured at tau 0.53, 0.8 to 1.3 T0 */
  double tlo = s->o.temperature, thi = s->o.temperature;
  if (s->o.walls || s->o.initial == D37_CONDUCTION || s->o.initial == D37_RAYLEIGH_TAYLOR) {
    tlo = fmin(s->o.wall_t[0], s->o.wall_t[1]);
    thi = fmax(s->o.wall_t[0], s->o.wall_t[1]);
  }
  if (s->o.tau < 0.6 && (tlo < 0.8 || thi > 1.3)) {
    n += snprintf(out + used, cap - used, "d2q37.tau = %g with temperatures from %g to %g T0: "
                  "near tau = 1/2 the model ran stably from about 0.8 to 1.3 T0 (at tau = 0.53; "
                  "docs/physics.md)\n", s->o.tau, tlo, thi) > 0;
  }
  return n;
}

/* ---- blocks ---- */

typedef struct d37_init_ctx {
  const d37_ctx_t *c;
  const block_info_t *b;
} d37_init_ctx_t;

/* ln of the pressure at height Y (cells from the wall at y-) relative to the reference
 * height, in hydrostatic balance under gravity g_y (dp/dY = rho g_y, p = rho T c_s^2)
 * for the temperature T(Y) = a + c tanh((Y - Y0) / w) (conduction: c = 0 and a linear
 * profile instead, below). int dY / T over the tanh has the closed form
 * w [a s - c ln(a cosh s + c sinh s)] / (a^2 - c^2), s = (Y - Y0) / w, ln(...) taken as
 * |s| + ln((a + c sgn s) / 2 + (a - c sgn s) / 2 e^(-2 |s|)) so that nothing overflows. */
static double d37_tanh_log_p(double gy, double a, double c, double w, double s) {
  const double sg = s < 0 ? -1.0 : 1.0;
  const double l = fabs(s) + log(0.5 * (a + c * sg) + 0.5 * (a - c * sg) * exp(-2.0 * fabs(s)));
  const double f = a * s - c * l, f0 = -c * log(a);
  return gy / lattice_d2q37.cs2 * w * (f - f0) / (a * a - c * c);
}

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
  const double two_pi_ = 2.0 * 3.14159265358979323846;
  if (o->initial == D37_CONDUCTION || o->initial == D37_RAYLEIGH_TAYLOR) {
    /* between the walls (at Y = 0 and Y = ny), in hydrostatic balance; the mode of
       `periods` along x perturbs the temperature (conduction) or the interface */
    const double ny = (double)ic->c->domain.cells[1], Y = (double)at[1] + 0.5;
    const double mode = cos(two_pi_ * (double)o->periods * ((double)at[0] + 0.5) /
                            (double)ic->c->domain.cells[0]);
    const double tb = o->wall_t[0], tt = o->wall_t[1], gy = o->g[1];
    double t, lp;
    if (o->initial == D37_CONDUCTION) {
      const double beta = (tt - tb) / ny, tc = 0.5 * (tb + tt);
      t = tb + beta * Y;
      lp = fabs(beta) * ny < 1e-12 * tc
               ? gy / lattice_d2q37.cs2 * (Y - 0.5 * ny) / tc
               : gy / lattice_d2q37.cs2 / beta * log(t / tc);
      lp += log(o->density * tc);
      t += o->amplitude * mode * sin(3.14159265358979323846 * Y / ny);
    } else {
      const double a = 0.5 * (tb + tt), c = 0.5 * (tt - tb);
      const double sc = (Y - (o->interface + o->amplitude * mode)) / o->width;
      t = a + c * tanh(sc);
      lp = log(o->density * a) + d37_tanh_log_p(gy, a, c, o->width, sc);
    }
    out[0] = exp(lp) / t;
    out[3] = t;
    return;
  }
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

/* Which of the block's faces at y- (bit 0) and y+ (bit 1) are walls. */
static int d37_block_walls(const d37_ctx_t *c, const block_info_t *b) {
  if (!c->o.walls) return 0;
  return (b->lo[1] == 0 ? 1 : 0) | (b->lo[1] + b->size[1] == c->domain.cells[1] ? 2 : 0);
}

/* The stream-collide of a block: whole, or in two parts (registry_region_t): the walls'
 * ghost rows of the box's columns (which read the columns within 3 of them, no late
 * ghost column) and the inner box, then the walls of the other columns and the shell's
 * boxes. The walls lie at faces of the domain, where nothing arrives late. */
static tsr_status d37_stream_collide(const registry_work_t *wk, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const d37_ctx_t *c = vctx;
  const block_info_t *b = wk->batch->blocks[0];
  field_block_t *f = field_block_of(wk->batch->data[0], c->pdf_id);
  TSR_CHECK(f, TSR_ERR_INTERNAL, "BlockID %d lacks its d2q37 populations", (int)b->id);
  const int w = d37_block_walls(c, b), nx = b->size[0], ny = b->size[1];
  void *src = f->values[f->cur], *dst = f->values[f->cur ^ 1];
  if (!wk->part) {
    d2q37_stream_collide(c->o.dp, src, dst, &f->host.dims, &c->k, w & 1, w >> 1, c->o.split);
    field_swap(f);
    goto cleanup;
  }
  const registry_region_t *r = &wk->regions[0];
  if (wk->part == REGISTRY_PART_INNER) {
    d2q37_walls(c->o.dp, src, &f->host.dims, &c->k, w & 1, w >> 1, r->lo[0], r->hi[0]);
    d2q37_stream_collide_box(c->o.dp, src, dst, &f->host.dims, &c->k, r->lo, r->hi,
                             c->o.split);
    goto cleanup;
  }
  d2q37_walls(c->o.dp, src, &f->host.dims, &c->k, w & 1, w >> 1, 0, r->lo[0]);
  d2q37_walls(c->o.dp, src, &f->host.dims, &c->k, w & 1, w >> 1, r->hi[0], nx);
  /* the shell: the rows below and above the box, then the columns either side of it */
  const int boxes[4][4] = {{0, 0, nx, r->lo[1]}, {0, r->hi[1], nx, ny},
                           {0, r->lo[1], r->lo[0], r->hi[1]}, {r->hi[0], r->lo[1], nx, r->hi[1]}};
  for (int k = 0; k < 4; ++k)
    if (boxes[k][0] < boxes[k][2] && boxes[k][1] < boxes[k][3])
      d2q37_stream_collide_box(c->o.dp, src, dst, &f->host.dims, &c->k, &boxes[k][0],
                               &boxes[k][2], c->o.split);
  field_swap(f);
cleanup:
  return st;
}

/* GPU blocks: one launch per group of blocks of one size and one wall pattern (the
 * group's key). */
static int d37_group_key(const block_info_t *b, const void *vctx) {
  return d37_block_walls(vctx, b);
}

/* The stream-collide of every GPU block: whole, or the parts of an overlapped step, as
 * d37_stream_collide's; the swap after the whole or SHELL. */
static tsr_status d37_gpu_step(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const d37_ctx_t *c = vctx;
  TSR_TRY(gpu_d2q37_stream_collide(c->gpu, w->groups, (int)w->part, err));
  for (size_t k = 0; k < w->batch->n && w->part != REGISTRY_PART_INNER; ++k)
    field_swap(field_block_of(w->batch->data[k], c->pdf_id));
cleanup:
  return st;
}

/* ---- output ---- */

/* The output step's prepare item: the hydrodynamic fields rho, ux, uy, T of every interior
 * cell (x fastest, AoS, the storage precision) into the block's slot, once for all the
 * quantities sampled. */
static tsr_status d37_macro_item(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const d37_ctx_t *c = vctx;
  const block_info_t *b = w->batch->blocks[0];
  block_data_t *data = w->batch->data[0];
  const grid_field_t *h = NULL;
  TSR_TRY(field_sync(data, c->pdf_id, &h, err));
  TSR_CHECK(h, TSR_ERR_INTERNAL, "BlockID %d lacks its d2q37 populations", (int)b->id);
  const int n[3] = {b->size[0], b->size[1], 1};
  /* d2q37_macro writes a field of 4 components without ghosts in AoS: component q of
     cell i is element 4 i + q */
  const grid_dims_t od = grid_dims_make(n, 4, 0, GRID_AOS, h->esize);
  void **slot = &c->macro[b->id];
  if (!*slot) *slot = field_values_alloc(&od, h->esize);
  TSR_CHECK(*slot, TSR_ERR_NOMEM, "out of memory sampling BlockID %d", (int)b->id);
  d2q37_macro(c->o.dp, h->values, &h->dims, &c->k, c->o.g, *slot, &od);
cleanup:
  return st;
}

static tsr_status d37_sample(const block_info_t *b, const block_data_t *data, double *out,
                             void *vctx, tsr_error_t *err) {
  (void)data;
  tsr_status st = TSR_OK;
  const d37_quantity_t *q = vctx;
  const d37_ctx_t *c = q->s->ctx;
  const void *m = c->macro[b->id];
  TSR_CHECK(m, TSR_ERR_INTERNAL, "BlockID %d sampled before %s ran", (int)b->id, D37_MACRO);
  const size_t cells = (size_t)b->size[0] * (size_t)b->size[1], es = c->o.dp ? 8 : 4;
  if (q->count == 1) {
    for (size_t i = 0; i < cells; ++i) out[i] = field_value(m, es, 4 * i + (size_t)q->first);
  } else { /* a vector: 3 components per cell, z = 0 */
    for (size_t i = 0; i < cells; ++i) {
      out[3 * i] = field_value(m, es, 4 * i + 1);
      out[3 * i + 1] = field_value(m, es, 4 * i + 2);
      out[3 * i + 2] = 0;
    }
  }
cleanup:
  return st;
}

/* mass, momentum and energy of the post-collision populations (lattice units), and the
 * kinetic energy of the hydrodynamic velocity u - g/2 */
enum { D37_TOTALS = 5 };

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
    double sum[D37_TOTALS] = {0, 0, 0, 0, 0};
    for (int y = 0; y < b->size[1]; ++y)
      for (int x = 0; x < b->size[0]; ++x) {
        double cell[3] = {0, 0, 0};
        for (int q = 0; q < D37_Q; ++q) {
          const double f = field_value(h->values, h->esize, grid_index(&h->dims, x, y, 0, q));
          const int cx = l->c[0][q], cy = l->c[1][q];
          cell[0] += f;
          cell[1] += f * cx;
          cell[2] += f * cy;
          sum[3] += 0.5 * f * (double)(cx * cx + cy * cy);
        }
        const double ux = cell[1] / cell[0] - 0.5 * c->o.g[0],
                     uy = cell[2] / cell[0] - 0.5 * c->o.g[1];
        for (int k = 0; k < 3; ++k) sum[k] += cell[k];
        sum[4] += 0.5 * cell[0] * (ux * ux + uy * uy);
      }
    for (int k = 0; k < D37_TOTALS; ++k) part[(size_t)k * (size_t)nb + (size_t)id] = sum[k];
  }
  TSR_TRY(verdict_reduce(sim_comm(sim), st, 0, err));
  TSR_TRY(sim_block_sums(sim, part, D37_TOTALS, all, err));
  static const char *const tn[D37_TOTALS] = {"mass", "momentum_x", "momentum_y", "energy",
                                             "kinetic_energy"};
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
  const d2q37_params_t p = {.tau = c.o.tau, .g = {c.o.g[0], c.o.g[1]},
                            .wall_t = {c.o.wall_t[0], c.o.wall_t[1]}};
  d2q37_constants(&p, c.o.dp, &c.k);
  if (env->cl && !s->gpu.prog)
    TSR_TRY(gpu_d2q37_create(env->cl, c.o.dp, c.o.split, &c.k, &s->gpu, err));
  c.gpu = s->gpu.prog ? &s->gpu : NULL;
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    const int off[3] = {direction_offsets[d][0], direction_offsets[d][1],
                        direction_offsets[d][2]};
    c.ncomps[d] = lattice_crossing(&lattice_d2q37, off, c.comps[d]); /* none along z */
  }
  TSR_TRY(registry_data_id(reg, D37_PDF, &c.pdf_id, err));
  if (!s->macro) { /* one slot per BlockID (a state may be registered more than once) */
    s->nmacro = (size_t)c.domain.blocks[0] * (size_t)c.domain.blocks[1] *
                (size_t)c.domain.blocks[2];
    s->macro = calloc(s->nmacro, sizeof *s->macro);
    TSR_CHECK(s->macro, TSR_ERR_NOMEM, "out of memory for the d2q37 output of %zu blocks",
              s->nmacro);
  }
  c.macro = s->macro;
  void *ctx;
  TSR_TRY(registry_keep(reg, &c, sizeof c, &ctx, err));
  s->ctx = ctx;
  TSR_TRY(registry_add(reg, &(registry_item_t){
      .kind = REGISTRY_KIND_KERNEL, .name = D37_STREAM_COLLIDE, .fs = "*", .hs = "cpu",
      .bs = "*", .work = d37_stream_collide, .parts = 1, .ctx = ctx, .concurrent = 1}, err));
  TSR_TRY(registry_add(reg, &(registry_item_t){
      .kind = REGISTRY_KIND_KERNEL, .name = D37_STREAM_COLLIDE, .fs = "*", .hs = "gpu",
      .bs = "*", .work = d37_gpu_step, .batch = 1, .parts = 1, .group = {c.pdf_id},
      .ngroup = 1, .group_key = d37_group_key, .ctx = ctx}, err));
  /* the output's fields: CPU blocks side by side, GPU blocks one by one (each downloads) */
  TSR_TRY(registry_add(reg, &(registry_item_t){
      .kind = REGISTRY_KIND_KERNEL, .name = D37_MACRO, .fs = "*", .hs = "cpu", .bs = "*",
      .work = d37_macro_item, .ctx = ctx, .concurrent = 1}, err));
  TSR_TRY(registry_add(reg, &(registry_item_t){
      .kind = REGISTRY_KIND_KERNEL, .name = D37_MACRO, .fs = "*", .hs = "gpu", .bs = "*",
      .work = d37_macro_item, .ctx = ctx}, err));
  const int vb = c.o.dp ? 8 : 4;
  int w[3]; /* the reach along x and y, nothing along z */
  lattice_ghost_width(&lattice_d2q37, w);
  s->q[0] = (d37_quantity_t){s, 0, 1};
  s->q[1] = (d37_quantity_t){s, 1, 2};
  s->q[2] = (d37_quantity_t){s, 3, 1};
  *decl = (module_decl_t){
      .nsweeps = 1,
      .sweeps = {{.name = "d2q37", .reads_ghosts = {D37_PDF}, .nreads_ghosts = 1,
                  .writes = {D37_PDF}, .nwrites = 1, .kernel = D37_STREAM_COLLIDE}},
      .nquantities = 3,
      .quantities = {{.name = "density", .components = 1, .columns = {"rho"},
                      .prepare = D37_MACRO, .sample = d37_sample, .ctx = &s->q[0]},
                     {.name = "velocity", .components = 3, .columns = {"ux", "uy", "uz"},
                      .prepare = D37_MACRO, .sample = d37_sample, .ctx = &s->q[1]},
                     {.name = "temperature", .components = 1, .columns = {"T"},
                      .prepare = D37_MACRO, .sample = d37_sample, .ctx = &s->q[2]}}};
  TSR_TRY(module_declare_field(decl, reg, env, &(field_spec_t){
      .name = D37_PDF, .components = D37_Q, .esize = (size_t)vb, .width = {w[0], w[1], w[2]},
      .copies = 2, .layout = GRID_SOA, .crossing = &c.comps[0][0], .stride = D37_Q,
      .ncrossing = c.ncomps, .fill = d37_fill, .init_ctx = ctx}, err));
cleanup:
  return st;
}

/* Beyond the populations (the field kit's): the output's 4 values per cell (D37_MACRO),
 * on the host. */
static tsr_status d37_local_bytes(const void *state, registry_t *reg, const patch_t *patch,
                                  size_t *host, size_t *device, size_t *largest,
                                  tsr_error_t *err) {
  (void)reg, (void)device, (void)largest;
  tsr_status st = TSR_OK;
  const d37_state_t *s = state;
  const size_t es = s->o.dp ? 8 : 4;
  for (int32_t i = 0; i < patch_local_count(patch); ++i) {
    const block_info_t *b = patch_block(patch, patch_local_id(patch, i));
    size_t cells, macro;
    TSR_CHECK(tsr_box_cells(b->size, 0, &cells) && tsr_mul_size(cells, 4 * es, &macro) &&
                  tsr_add_size(*host, macro, host),
              TSR_ERR_INVALID, "BlockID %d: its d2q37 output values do not fit in a size_t",
              (int)b->id);
  }
cleanup:
  return st;
}

const module_def_t d2q37_module = {
    .name = "d2q37",
    .read = d37_read,
    .free = d37_free,
    .calibration = d37_calibration,
    .describe = d37_describe,
    .warnings = d37_warnings,
    .register_items = d37_register,
    .local_bytes = d37_local_bytes,
    .check = d37_check,
    .totals = d37_totals,
};
