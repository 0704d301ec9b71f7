#include "lbm_options.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "direction.h"
#include "field.h"
#include "grid.h"
#include "inlet_profile.h"
#include "mesh.h"
#include "tsr_size.h"
#include "voxels.h"

/* ---- options ---- */

lbm_options_t lbm_options_default(void) {
  lbm_options_t o;
  memset(&o, 0, sizeof o);
  o.lattice = &lattice_d3q19;
  o.cpu_layout = GRID_SOA;
  o.in_place = true; /* on GPU blocks: 1.19-1.38 times two grids on an H200 (performance.md) */
  o.collision = LBM_TRT;
  o.precision = LBM_DP;
  o.viscosity = 1.0 / 6.0;
  o.magic = 3.0 / 16.0;
  o.rho0 = 1.0;
  o.init = LBM_INIT_UNIFORM;
  o.init_noneq = true;
  o.geometry = geometry_default();
  return o;
}

bool lbm_init_strained(const lbm_options_t *o) {
  return o->init == LBM_INIT_TAYLOR_GREEN || o->init == LBM_INIT_TAYLOR_GREEN_3D;
}

double lbm_omega(const lbm_options_t *o) { return 1.0 / (3.0 * o->viscosity + 0.5); }

double lbm_sound_speed(const lbm_options_t *o) {
  return o->lattice ? 1.0 / sqrt(o->lattice->inv_cs2) : 1.0 / sqrt(3.0);
}

static double lbm_norm(const double u[3]) { return sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]); }

static const char *const lbm_face_names[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};

double lbm_largest_speed(const lbm_options_t *o, const patch_options_t *domain, const char **what) {
  static const char *const wall_keys[6] = {
      "boundaries.x-.velocity", "boundaries.x+.velocity", "boundaries.y-.velocity",
      "boundaries.y+.velocity", "boundaries.z-.velocity", "boundaries.z+.velocity"};
  double best = lbm_norm(o->init_velocity);
  *what = "lbm.initial.velocity";
  if (o->init == LBM_INIT_TAYLOR_GREEN || o->init == LBM_INIT_TAYLOR_GREEN_3D) {
    /* u = u0 (sin cos, -kx/ky cos sin, 0) (3-D: times cos z): the peak of |u| is
       |u0| max(1, kx/ky) */
    double ratio = domain && domain->cells[0] > 0 ? (double)domain->cells[1] / (double)domain->cells[0] : 1.0;
    best = fabs(o->init_velocity[0]) * (ratio > 1.0 ? ratio : 1.0);
    *what = "lbm.initial.u0";
  } else if (o->init == LBM_INIT_SOUND_WAVE) {
    best = fabs(o->init_amplitude) * lbm_sound_speed(o);
    *what = "lbm.initial.amplitude";
  }
  for (int f = 0; f < 6; ++f) {
    if (!geometry_wall_moves(o->geometry.walls[f].kind)) continue;
    double v = lbm_norm(o->geometry.walls[f].velocity);
    if (v > best) {
      best = v;
      *what = wall_keys[f];
    }
  }
  return best;
}

/* Appends one line to the warnings (separated by newlines; cut where out is full). */
static void lbm_warn(char *out, size_t cap, int *n, const char *fmt, ...) {
  size_t used = strlen(out);
  if (used + 1 < cap) {
    va_list ap;
    va_start(ap, fmt);
    if (*n) out[used++] = '\n', out[used] = '\0';
    vsnprintf(out + used, cap - used, fmt, ap);
    va_end(ap);
  }
  ++*n;
}

int lbm_options_warnings(const lbm_options_t *o, const patch_options_t *domain, char *out,
                         size_t cap) {
  const char *what;
  const double u = lbm_largest_speed(o, domain, &what), cs = lbm_sound_speed(o);
  const double tau = 3.0 * o->viscosity + 0.5;
  int n = 0;
  out[0] = '\0';
  if (u > 0.3 * cs)
    lbm_warn(out, cap, &n, "%s: |u| = %g is Mach %.2f (lattice units, c_s = %.4f); above Mach "
             "0.3 (|u| > %.3f) compressibility errors grow and a run may diverge", what, u,
             u / cs, cs, 0.3 * cs);
  if (tau - 0.5 < 0.01 && u > 0)
    lbm_warn(out, cap, &n, "lbm.viscosity = %g gives tau = 0.5 + %.3g; this close to 1/2 a run "
             "is stable only for slow flows on fine grids (|u|/nu = %.3g with %s)",
             o->viscosity, tau - 0.5, u / o->viscosity, what);
  return n;
}

const char *const lbm_collision_names[] = {"srt", "trt", "mrt", "cumulant", NULL};

/* The keys of lbm.cumulant, by rate (lbm_params_t.cumulant_rate); 2-D lattices have
   cumulants up to order four. */
static const char *const lbm_cumulant_names[5] = {"bulk", "third", "fourth", "fifth", "sixth"};
#define LBM_CUMULANT_RATES(l) ((l)->d == 3 ? 5 : 3)

/* The keys of lbm.mrt, by moment class (lattice_defs.h LATTICE_MOMENT_*). */
static const char *const lbm_mrt_names[LATTICE_MOMENT_CLASSES] = {
    "", "", "bulk", "epsilon", "q", "pi", "m"};

double lbm_mrt_default(const lattice_t *l, int cls) {
  /* D2Q9: Lallemand & Luo (2000); D3Q15 and D3Q19: d'Humieres et al. (2002); D3Q27: the
     D3Q19 rates by order (3: q, 4: pi, 5: m, 6: epsilon); D3Q13: e 1.5 and the third
     order 1.8, the rates of Sailfish's D3Q13 model (Januszewski & Kostur, Comput. Phys.
     Commun. 185 (2014) 2350), stable there for nu in [0.00255, 0.125] and speeds to 0.1 */
  static const struct {
    const lattice_t *l;
    double r[LATTICE_MOMENT_CLASSES];
  } table[] = {{&lattice_d2q9, {0, 0, 1.64, 1.54, 1.9, 0, 0}},
               {&lattice_d3q13, {0, 0, 1.5, 0, 0, 0, 1.8}},
               {&lattice_d3q15, {0, 0, 1.6, 1.2, 1.6, 0, 1.2}},
               {&lattice_d3q19, {0, 0, 1.19, 1.4, 1.2, 1.4, 1.98}},
               {&lattice_d3q27, {0, 0, 1.19, 1.4, 1.2, 1.4, 1.98}}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i)
    if (table[i].l == l && cls >= 0 && cls < LATTICE_MOMENT_CLASSES) return table[i].r[cls];
  return 0;
}

/* The lbm.mrt keys lattice l has, as "bulk, epsilon, q" (static storage, per call). */
static const char *lbm_mrt_list(const lattice_t *l) {
  static char out[64];
  out[0] = '\0';
  for (int c = LATTICE_MOMENT_BULK; c < LATTICE_MOMENT_CLASSES; ++c)
    if (lbm_mrt_default(l, c) > 0)
      snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", out[0] ? ", " : "",
               lbm_mrt_names[c]);
  return out;
}

lbm_variant_t lbm_variant(const lbm_options_t *o) {
  return o->collision == LBM_CUMULANT ? LBM_VARIANT_CUMULANT
         : o->collision == LBM_MRT    ? LBM_VARIANT_MRT
         : o->collision == LBM_TRT    ? LBM_VARIANT_TRT
                                      : LBM_VARIANT_SRT;
}

lbm_params_t lbm_options_params(const lbm_options_t *o) {
  const double omega = lbm_omega(o);
  lbm_params_t p = {
      .omega_plus = omega,
      .omega_minus = o->collision == LBM_TRT ? lbm_omega_minus(omega, o->magic) : omega,
      .rho0 = o->rho0,
      .force = {o->force[0], o->force[1], o->force[2]},
      .use_force = o->force[0] != 0 || o->force[1] != 0 || o->force[2] != 0,
      .smagorinsky = o->smagorinsky,
      .magic = o->magic,
      .shift = o->shifted ? o->rho0 : 0};
  for (int k = 0; o->collision == LBM_MRT && k < o->lattice->q; ++k) {
    const int c = o->lattice->moment_class(k);
    const double r = o->mrt_rates[c] > 0 ? o->mrt_rates[c] : lbm_mrt_default(o->lattice, c);
    /* the shear rate omega, except where the lattice's kappa is not c_s^2 (D3Q13):
       nu = kappa (1/s - 1/2) for the nu of omega */
    const double kappa = o->lattice->shear_cs2(k), nu = (1 / omega - 0.5) * o->lattice->cs2;
    const double shear = kappa == o->lattice->cs2 ? omega : 1 / (nu / kappa + 0.5);
    p.mrt_rate[k] = c == LATTICE_MOMENT_SHEAR ? shear : c == LATTICE_MOMENT_CONSERVED ? 0 : r;
  }
  for (int r = 0; r < 5; ++r) p.cumulant_rate[r] = o->cumulant_rates[r] > 0 ? o->cumulant_rates[r] : 1;
  return p;
}

/* The flow lattices (D3Q7 has too few moments for the Navier-Stokes equations). */
static const char *const lbm_lattices[] = {"d2q9", "d3q13", "d3q15", "d3q19", "d3q27", NULL};

tsr_status lbm_options_validate(const lbm_options_t *o, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int flow = 0;
  for (int k = 0; o->lattice && lbm_lattices[k]; ++k)
    flow = flow || lattice_find(lbm_lattices[k]) == o->lattice;
  TSR_CHECK(flow, TSR_ERR_INVALID, "lbm.lattice = %s: allowed are the flow lattices d2q9, "
            "d3q13, d3q15, d3q19, d3q27", o->lattice ? o->lattice->name : "none");
  TSR_CHECK(!o->lattice->moment_eq || o->collision == LBM_MRT, TSR_ERR_INVALID,
            "lbm.lattice = %s: its equilibrium is set in moment space; allowed is lbm.collision "
            "= mrt (not %s)", o->lattice->name, lbm_collision_names[o->collision]);
  TSR_CHECK(!o->lattice->moment_eq || o->smagorinsky == 0, TSR_ERR_INVALID,
            "lbm.smagorinsky with lbm.lattice = %s: its shear moments relax at two rates; the "
            "Smagorinsky model runs on d2q9, d3q15, d3q19, d3q27", o->lattice->name);
  TSR_CHECK(!o->lattice->moment_eq || !o->init_noneq || !lbm_init_strained(o), TSR_ERR_INVALID,
            "lbm.initial.nonequilibrium = true with lbm.lattice = %s: its shear moments relax "
            "at two rates; the non-equilibrium start runs on d2q9, d3q15, d3q19, d3q27 (set it "
            "to false: the equilibrium start)", o->lattice->name);
  TSR_CHECK(o->cpu_layout == GRID_AOS || o->cpu_layout == GRID_SOA, TSR_ERR_INVALID,
            "lbm.cpu_layout: unknown value %d; allowed are soa, aos", (int)o->cpu_layout);
  TSR_CHECK(o->collision >= LBM_SRT && o->collision <= LBM_CUMULANT, TSR_ERR_INVALID,
            "lbm.collision: unknown value %d; allowed are srt, trt, mrt, cumulant",
            (int)o->collision);
  TSR_CHECK(o->collision != LBM_CUMULANT || lbm_cumulant_lattice(o->lattice),
            TSR_ERR_INVALID, "lbm.collision = cumulant: lattice %s is not a tensor product of "
            "three velocities per axis; allowed are d2q9, d3q27", o->lattice->name);
  for (int r = 0; r < 5; ++r) {
    TSR_CHECK(o->cumulant_rates[r] == 0 || (o->cumulant_rates[r] > 0 && o->cumulant_rates[r] < 2),
              TSR_ERR_INVALID, "lbm.cumulant.%s = %g: allowed are rates in (0, 2)",
              lbm_cumulant_names[r], o->cumulant_rates[r]);
    TSR_CHECK(o->cumulant_rates[r] == 0 || r < LBM_CUMULANT_RATES(o->lattice), TSR_ERR_INVALID,
              "lbm.cumulant.%s: lattice %s has cumulants up to order four; its keys are bulk, "
              "third, fourth", lbm_cumulant_names[r], o->lattice->name);
  }
  for (int c = LATTICE_MOMENT_BULK; c < LATTICE_MOMENT_CLASSES; ++c) {
    const double r = o->mrt_rates[c];
    TSR_CHECK(r == 0 || (r > 0 && r < 2), TSR_ERR_INVALID,
              "lbm.mrt.%s = %g: allowed are rates in (0, 2)", lbm_mrt_names[c], r);
    TSR_CHECK(r == 0 || lbm_mrt_default(o->lattice, c) > 0, TSR_ERR_INVALID,
              "lbm.mrt.%s: lattice %s has no moments of that class; its keys are %s",
              lbm_mrt_names[c], o->lattice->name, lbm_mrt_list(o->lattice));
  }
  TSR_CHECK(o->smagorinsky >= 0 && o->smagorinsky <= 0.5, TSR_ERR_INVALID,
            "lbm.smagorinsky = %g: allowed are constants C_s in (0, 0.5] (0.1 to 0.17 are usual)",
            o->smagorinsky);
  TSR_CHECK(o->precision >= LBM_DP && o->precision <= LBM_FP16C, TSR_ERR_INVALID,
            "lbm.precision: unknown value %d; allowed are dp, sp, fp16s, fp16c", (int)o->precision);
  TSR_CHECK(o->shifted || (o->precision != LBM_FP16S && o->precision != LBM_FP16C),
            TSR_ERR_INVALID, "lbm.shifted = false with lbm.precision \"%s\": 16-bit storage "
            "keeps f_i - w_i rho0 (values near 0, where its bits are); remove lbm.shifted or set "
            "it to true", lbm_precision_names[o->precision]);
  TSR_CHECK(o->viscosity > 0 && isfinite(o->viscosity), TSR_ERR_INVALID,
            "lbm.viscosity = %g: allowed are finite values > 0 (lattice units; omega = 1/(3 nu + "
            "1/2) then lies in (0, 2))", o->viscosity);
  TSR_CHECK(o->magic > 0 && isfinite(o->magic), TSR_ERR_INVALID,
            "lbm.magic = %g: allowed are finite values > 0 (3/16 places walls exactly half-way)",
            o->magic);
  TSR_CHECK(o->rho0 > 0 && isfinite(o->rho0), TSR_ERR_INVALID,
            "lbm.rho0 = %g: allowed are finite values > 0", o->rho0);
  for (int a = 0; a < 3; ++a) {
    TSR_CHECK(isfinite(o->force[a]), TSR_ERR_INVALID, "lbm.force[%d] = %g is not finite", a,
              o->force[a]);
    TSR_CHECK(isfinite(o->init_velocity[a]) && fabs(o->init_velocity[a]) < 0.5, TSR_ERR_INVALID,
              "lbm.initial velocity[%d] = %g: allowed are |u| < 0.5 (lattice units; keep Mach "
              "numbers small, |u| <~ 0.1)", a, o->init_velocity[a]);
  }
  st = geometry_validate(&o->geometry, err);
cleanup:
  return st;
}

/* What the lattice asks of the domain: a 2-D lattice runs on one cell along z. */
tsr_status lbm_options_check_domain(const lbm_options_t *o, const patch_options_t *domain,
                                   tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(o->lattice->d == 3 || domain->cells[2] == 1, TSR_ERR_INVALID,
            "lbm.lattice = \"%s\" is two-dimensional: domain.cells[2] must be 1, not %lld",
            o->lattice->name, (long long)domain->cells[2]);
  TSR_CHECK(o->init != LBM_INIT_TAYLOR_GREEN_3D || o->lattice->d == 3, TSR_ERR_INVALID,
            "lbm.initial.kind = taylor_green_3d: lattice %s is two-dimensional; allowed are "
            "d3q13, d3q15, d3q19, d3q27 (taylor_green is the 2-D vortex)", o->lattice->name);
  /* speeds as vectors (each component below its limit is not enough), the Taylor-Green
     peak on this domain */
  const char *what;
  const double u = lbm_largest_speed(o, domain, &what), cs = lbm_sound_speed(o);
  TSR_CHECK(u < cs, TSR_ERR_INVALID, "%s: |u| = %g reaches the lattice speed of sound c_s = "
            "%.4f; allowed are |u| < c_s (lattice units; keep |u| <~ 0.1)", what, u, cs);
  for (int i = 0; i < o->geometry.nshapes; ++i)
    TSR_CHECK(geometry_covers_a_cell(&o->geometry.shapes[i], domain), TSR_ERR_INVALID,
              "obstacles[%d] covers no cell of the domain (cells 0..%lld x 0..%lld x 0..%lld; a "
              "cell is solid when its centre, at index + 0.5, lies in the shape): move or "
              "enlarge it, or remove it", i, (long long)domain->cells[0] - 1,
              (long long)domain->cells[1] - 1, (long long)domain->cells[2] - 1);
  /* an open face's links read the cell next inwards from the face's cells in their own
     block (ghost cells hold only what crosses into a block) */
  for (int f = 0; f < 6; ++f) {
    const int a = f / 2;
    TSR_CHECK(!geometry_wall_open(o->geometry.walls[f].kind) ||
                  domain->cells[a] / domain->blocks[a] >= 2,
              TSR_ERR_INVALID,
              "boundaries.%s is an open face: the blocks along %c must be at least 2 cells "
              "thick (domain.cells[%d] = %lld over domain.blocks[%d] = %d)",
              lbm_face_names[f], "xyz"[a], a, (long long)domain->cells[a], a, domain->blocks[a]);
  }
cleanup:
  return st;
}

/* A voxel image's keys (voxels.h), and the image. */
static tsr_status lbm_read_image(config_node_t *n, const config_t *cfg,
                                 const patch_options_t *domain, const char *where,
                                 geometry_shape_t *s, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  static const char *const types[] = {"uint8", "uint16", NULL};
  static const char *const endians[] = {"little", "big", NULL};
  static const char *const sides[] = {"above", "below", NULL};
  voxels_options_t o = {.spacing = 1.0};
  char file[1024];
  int type = 0, endian = 0, side = 0;
  TSR_TRY(config_string(n, "file", true, file, sizeof file, err));
  TSR_TRY(config_choice(n, "type", true, types, &type, err));
  if (type == 1) TSR_TRY(config_choice(n, "endian", false, endians, &endian, err));
  TSR_TRY(config_int3(n, "size", true, 1, INT32_MAX, o.size, err));
  TSR_TRY(config_int(n, "header", false, 0, INT64_MAX / 2, &o.header, err));
  TSR_TRY(config_measure(n, "spacing", false, UNITS_LENGTH, 1e-6, 1e6, &o.spacing, err));
  TSR_TRY(config_measure3(n, "offset", false, UNITS_LENGTH, -1e9, 1e9, o.offset, err));
  TSR_TRY(config_real(n, "threshold", true, -1e9, 1e9, &o.threshold, err));
  TSR_TRY(config_choice(n, "solid", false, sides, &side, err));
  o.bytes = type == 1 ? 2 : 1;
  o.big_endian = endian == 1;
  o.solid_below = side == 1;
  config_path_beside(cfg, file, o.path, sizeof o.path);
  st = voxels_load(&o, domain, &s->voxels, err);
  if (st != TSR_OK) tsr_error_prefix(err, "%s: %s.file = \"%s\"", config_source(cfg), where, file);
cleanup:
  return st;
}

/* A shape (messages name it as where: "obstacles[2]"); an STL file's path is taken
 * relative to the folder of the configuration file source (absolute paths as they are).
 * domain: the domain a voxel image is laid on; NULL where images are not allowed. */
static tsr_status lbm_read_shape(config_node_t *n, const config_t *cfg,
                                 const patch_options_t *domain, const char *where,
                                 geometry_shape_t *s, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *source = config_source(cfg);
  static const char *const shapes[] = {"box", "sphere", "cylinder", "stl", "image", NULL};
  static const char *const axes[] = {"x", "y", "z", NULL};
  int kind = 0;
  const double big = 1e9;
  memset(s, 0, sizeof *s);
  TSR_TRY(config_choice(n, "shape", true, shapes, &kind, err));
  s->kind = (geometry_shape_kind_t)kind;
  if (s->kind == GEOMETRY_BOX) {
    TSR_TRY(config_measure3(n, "min", true, UNITS_LENGTH, -big, big, s->min, err));
    TSR_TRY(config_measure3(n, "max", true, UNITS_LENGTH, -big, big, s->max, err));
  } else if (s->kind == GEOMETRY_MESH) {
    char file[1024], path[2048];
    double scale = 1.0, rotate[3] = {0, 0, 0}, offset[3] = {0, 0, 0};
    TSR_TRY(config_string(n, "file", true, file, sizeof file, err));
    /* with units the file's coordinates times scale are metres: scale in cells per unit
       of the file is scale / dx, a length */
    scale = units_to_lattice(config_units(cfg), UNITS_LENGTH, 1.0);
    TSR_TRY(config_measure(n, "scale", false, UNITS_LENGTH, 1e-12, big, &scale, err));
    TSR_TRY(config_real3(n, "rotate", false, -360.0, 360.0, rotate, err));
    TSR_TRY(config_measure3(n, "offset", false, UNITS_LENGTH, -big, big, offset, err));
    config_path_beside(cfg, file, path, sizeof path);
    st = geometry_mesh_load(path, scale, rotate, offset, &s->mesh, err);
    if (st != TSR_OK) {
      tsr_error_prefix(err, "%s: %s.file = \"%s\"", source, where, file);
      goto cleanup;
    }
  } else if (s->kind == GEOMETRY_IMAGE) {
    TSR_CHECK(domain, TSR_ERR_INVALID, "%s: %s.shape = \"image\": a voxel image is an obstacle "
              "only; allowed here are \"box\", \"sphere\", \"cylinder\", \"stl\"", source, where);
    TSR_TRY(lbm_read_image(n, cfg, domain, where, s, err));
  } else {
    TSR_TRY(config_measure3(n, "center", true, UNITS_LENGTH, -big, big, s->center, err));
    TSR_TRY(config_measure(n, "radius", true, UNITS_LENGTH, 1e-9, big, &s->radius, err));
    if (s->kind == GEOMETRY_CYLINDER) TSR_TRY(config_choice(n, "axis", true, axes, &s->axis, err));
  }
cleanup:
  return st;
}

/* lbm.initial.density (default lbm.rho0) and lbm.initial.regions: shapes as the
 * obstacles' with a "density" each. */
static tsr_status lbm_read_regions(config_node_t *init, const config_t *cfg, lbm_options_t *r,
                                   tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t n = 0;
  TSR_TRY(config_measure(init, "density", false, UNITS_DENSITY, 1e-12, 1e12, &r->init_density,
                         err));
  TSR_TRY(config_list(init, "regions", &n, err));
  TSR_CHECK(n <= LBM_MAX_REGIONS, TSR_ERR_INVALID,
            "lbm.initial.regions: %zu regions; at most %d are allowed", n, LBM_MAX_REGIONS);
  for (size_t i = 0; i < n; ++i) {
    config_node_t *item;
    TSR_TRY(config_list_item(init, "regions", i, &item, err));
    char where[48];
    snprintf(where, sizeof where, "lbm.initial.regions[%zu]", i);
    TSR_TRY(lbm_read_shape(item, cfg, NULL, where, &r->init_regions[i], err));
    TSR_TRY(config_measure(item, "density", true, UNITS_DENSITY, 1e-12, 1e12,
                           &r->init_region_density[i], err));
  }
  r->ninit_regions = (int)n;
cleanup:
  return st;
}

/* lbm.mrt (the rates of the MRT collision's moment classes; only with collision mrt),
 * lbm.cumulant (the cumulant collision's rates; only with collision cumulant)
 * and lbm.les with lbm.smagorinsky (the LES model and its constant). */
static tsr_status lbm_read_collision(config_t *cfg, config_node_t *lbm, lbm_options_t *r,
                                     tsr_error_t *err) {
  tsr_status st = TSR_OK;
  static const char *const les[] = {"none", "smagorinsky", NULL};
  config_node_t *mrt;
  TSR_TRY(config_object(lbm, "mrt", false, &mrt, err));
  TSR_CHECK(!mrt || r->collision == LBM_MRT, TSR_ERR_INVALID,
            "%s: lbm.mrt: the rates of the MRT collision; lbm.collision is %s, not mrt",
            config_source(cfg), lbm_collision_names[r->collision]);
  for (int c = LATTICE_MOMENT_BULK; mrt && c < LATTICE_MOMENT_CLASSES; ++c)
    TSR_TRY(config_real(mrt, lbm_mrt_names[c], false, 0.001, 1.999, &r->mrt_rates[c], err));
  config_node_t *cum;
  TSR_TRY(config_object(lbm, "cumulant", false, &cum, err));
  TSR_CHECK(!cum || r->collision == LBM_CUMULANT, TSR_ERR_INVALID,
            "%s: lbm.cumulant: the rates of the cumulant collision; lbm.collision is %s, not "
            "cumulant", config_source(cfg), lbm_collision_names[r->collision]);
  for (int c = 0; cum && c < 5; ++c)
    TSR_TRY(config_real(cum, lbm_cumulant_names[c], false, 0.001, 1.999, &r->cumulant_rates[c],
                        err));
  int v = r->smagorinsky > 0 ? 1 : 0;
  TSR_TRY(config_choice(lbm, "les", false, les, &v, err));
  double cs = -1;
  TSR_TRY(config_real(lbm, "smagorinsky", false, 1e-6, 0.5, &cs, err));
  TSR_CHECK(cs < 0 || v == 1, TSR_ERR_INVALID,
            "%s: lbm.smagorinsky = %g: the constant of the LES model; set lbm.les to "
            "\"smagorinsky\" to use it", config_source(cfg), cs);
  r->smagorinsky = v == 0   ? 0
                   : cs > 0 ? cs
                   : r->smagorinsky > 0 ? r->smagorinsky : LBM_SMAGORINSKY_DEFAULT;
cleanup:
  return st;
}

/* The section "lbm": lattice, layouts, collision, precision, viscosity, force and the
 * initial state, into r. */
static tsr_status lbm_read_section(config_t *cfg, config_node_t *lbm, lbm_options_t *r,
                                   tsr_error_t *err) {
  tsr_status st = TSR_OK;
  static const char *const inits[] = {"uniform", "taylor_green", "sound_wave", "taylor_green_3d",
                                      NULL};
  static const char *const layouts[] = {"aos", "soa", NULL};
  static const char *const streamings[] = {"two_grid", "in_place", NULL};
  const units_t *units = config_units(cfg);
  config_node_t *init;
  int v = 0; /* the default's index (lbm_options_default) */
  while (lbm_lattices[v + 1] && lattice_find(lbm_lattices[v]) != r->lattice) ++v;
  TSR_TRY(config_choice(lbm, "lattice", false, lbm_lattices, &v, err));
  r->lattice = lattice_find(lbm_lattices[v]);
  if (r->lattice->moment_eq) r->collision = LBM_MRT; /* D3Q13: MRT only, its default */
  v = (int)r->cpu_layout;
  TSR_TRY(config_choice(lbm, "cpu_layout", false, layouts, &v, err));
  r->cpu_layout = (grid_layout_t)v;
  v = r->in_place ? 1 : 0;
  TSR_TRY(config_choice(lbm, "gpu_streaming", false, streamings, &v, err));
  r->in_place = v == 1;
  v = (int)r->collision;
  TSR_TRY(config_choice(lbm, "collision", false, lbm_collision_names, &v, err));
  r->collision = (lbm_collision_t)v;
  v = (int)r->precision;
  TSR_TRY(config_choice(lbm, "precision", false, lbm_precision_names, &v, err));
  r->precision = (lbm_precision_t)v;
  if (r->precision == LBM_FP16S || r->precision == LBM_FP16C) r->shifted = true; /* needed */
  double nu = -1;
  TSR_TRY(config_real(lbm, "viscosity", false, 1e-12, 1e6, &nu, err));
  TSR_CHECK(nu <= 0 || !units->on, TSR_ERR_INVALID,
            "%s: lbm.viscosity: with a units section the fluid's viscosity is units.viscosity "
            "(m^2/s; here %g, %.6g in lattice units): remove lbm.viscosity",
            config_source(cfg), units->in.viscosity, units->lattice_viscosity);
  if (nu > 0) r->viscosity = nu;
  TSR_TRY(config_real(lbm, "magic", false, 1e-12, 1e6, &r->magic, err));
  TSR_TRY(lbm_read_collision(cfg, lbm, r, err));
  TSR_TRY(config_measure(lbm, "rho0", false, UNITS_DENSITY, 1e-12, 1e12, &r->rho0, err));
  TSR_TRY(config_bool(lbm, "shifted", false, &r->shifted, err));
  TSR_TRY(config_measure3(lbm, "force", false, UNITS_FORCE_DENSITY, -1.0, 1.0, r->force, err));
  char sources[sizeof r->kernel_sources] = "";
  TSR_TRY(config_string(lbm, "kernel_sources", false, sources, sizeof sources, err));
  if (sources[0]) { /* a folder beside the configuration, as every file it names */
    config_path_beside(cfg, sources, r->kernel_sources, sizeof r->kernel_sources);
    static const char *const names[3] = {"lattice_defs.h", "lbm_collide.h", "lbm.cl"};
    for (int i = 0; i < 3; ++i) {
      char file[sizeof r->kernel_sources + 32];
      snprintf(file, sizeof file, "%s/%s", r->kernel_sources, names[i]);
      TSR_CHECK(access(file, R_OK) == 0, TSR_ERR_INVALID,
                "%s: lbm.kernel_sources = \"%s\": cannot read %s (%s); the folder, relative "
                "to the configuration's, must hold lattice_defs.h, lbm_collide.h and lbm.cl",
                config_source(cfg), sources, file, strerror(errno));
    }
  }
  int64_t wg[3] = {0, 0, 0};
  TSR_TRY(config_int3(lbm, "work_group", false, 1, 1024, wg, err));
  TSR_CHECK(wg[0] == 0 || (wg[2] == 1 && wg[0] * wg[1] <= 1024), TSR_ERR_INVALID,
            "%s: lbm.work_group = [%lld, %lld, %lld]: allowed are [x, y, 1] with x y <= 1024 "
            "(the third dimension of a launch runs over blocks)", config_source(cfg),
            (long long)wg[0], (long long)wg[1], (long long)wg[2]);
  for (int a = 0; a < 3; ++a) r->work_group[a] = (int)wg[a];
  TSR_TRY(config_object(lbm, "initial", false, &init, err));
  if (!init) goto cleanup;
  v = (int)r->init;
  TSR_TRY(config_choice(init, "kind", false, inits, &v, err));
  r->init = (lbm_init_kind_t)v;
  if (r->lattice->moment_eq) r->init_noneq = false; /* D3Q13: the equilibrium start */
  TSR_TRY(config_bool(init, "nonequilibrium", false, &r->init_noneq, err));
  if (r->init == LBM_INIT_UNIFORM) {
    TSR_TRY(config_measure3(init, "velocity", false, UNITS_VELOCITY, -0.4, 0.4,
                            r->init_velocity, err));
    TSR_TRY(lbm_read_regions(init, cfg, r, err));
  } else if (r->init == LBM_INIT_TAYLOR_GREEN || r->init == LBM_INIT_TAYLOR_GREEN_3D) {
    TSR_TRY(config_measure(init, "u0", true, UNITS_VELOCITY, -0.4, 0.4, &r->init_velocity[0],
                           err));
  } else { /* the sound wave: |u| peaks at A c_s */
    static const char *const axes[] = {"x", "y", "z", NULL};
    int64_t periods = 1;
    TSR_TRY(config_real(init, "amplitude", true, -0.1, 0.1, &r->init_amplitude, err));
    TSR_TRY(config_choice(init, "axis", false, axes, &r->init_axis, err));
    TSR_TRY(config_int(init, "periods", false, 1, 1 << 20, &periods, err));
    r->init_periods = (int)periods;
  }
cleanup:
  return st;
}

/* The wall of face f (boundaries.<face>): its kind, profile or velocity, ramp, density. */
static tsr_status lbm_read_face(config_t *cfg, config_node_t *face, int f,
                                const patch_options_t *domain, lbm_options_t *r,
                                tsr_error_t *err) {
  tsr_status st = TSR_OK;
  static const char *const walls[] = {"noslip", "moving", "velocity", "pressure", "outflow", NULL};
  static const char *const profiles[] = {"uniform", "parabolic", "file", NULL};
  TSR_CHECK(!domain->periodic[f / 2], TSR_ERR_INVALID,
            "%s: boundaries.%s: the domain is periodic along %c; walls go on non-periodic "
            "faces only", config_source(cfg), lbm_face_names[f], "xyz"[f / 2]);
  geometry_wall_t *w = &r->geometry.walls[f];
  int v = (int)w->kind;
  TSR_TRY(config_choice(face, "kind", true, walls, &v, err));
  w->kind = (geometry_wall_kind_t)v;
  if (w->kind == GEOMETRY_WALL_VELOCITY) {
    v = (int)w->profile;
    TSR_TRY(config_choice(face, "profile", false, profiles, &v, err));
    w->profile = (geometry_profile_t)v;
  }
  if (w->profile == GEOMETRY_PROFILE_FILE) { /* the velocity from a table */
    char file[1024], path[2048];
    TSR_TRY(config_string(face, "file", true, file, sizeof file, err));
    config_path_beside(cfg, file, path, sizeof path);
    st = inlet_profile_load(path, f, domain, config_units(cfg), &w->table, err);
    if (st != TSR_OK) {
      tsr_error_prefix(err, "%s: boundaries.%s.file = \"%s\"", config_source(cfg),
                       lbm_face_names[f], file);
      goto cleanup;
    }
    inlet_profile_peak(w->table, w->velocity);
  } else if (geometry_wall_moves(w->kind)) {
    TSR_TRY(config_measure3(face, "velocity", true, UNITS_VELOCITY, -0.4, 0.4, w->velocity,
                            err));
  }
  if (geometry_wall_moves(w->kind))
    TSR_TRY(config_measure(face, "ramp", false, UNITS_TIME, 0.0, 1e15, &w->ramp, err));
  if (w->kind == GEOMETRY_WALL_PRESSURE) {
    w->density = r->rho0;
    TSR_TRY(config_measure(face, "density", false, UNITS_DENSITY, 1e-12, 1e12, &w->density,
                           err));
  }
cleanup:
  return st;
}

/* The list "obstacles": each shape, its wall and its name. */
static tsr_status lbm_read_obstacles(config_t *cfg, const patch_options_t *domain,
                                     lbm_options_t *r, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  static const char *const wall_kinds[] = {"halfway", "interpolated", NULL};
  config_node_t *root = config_root(cfg);
  size_t n = 0;
  TSR_TRY(config_list(root, "obstacles", &n, err));
  TSR_CHECK(n <= GEOMETRY_MAX_SHAPES, TSR_ERR_INVALID,
            "%s: obstacles: %zu shapes; at most %d are allowed", config_source(cfg), n,
            GEOMETRY_MAX_SHAPES);
  for (size_t i = 0; i < n; ++i) {
    config_node_t *item;
    TSR_TRY(config_list_item(root, "obstacles", i, &item, err));
    geometry_shape_t *s = &r->geometry.shapes[i];
    char where[32];
    snprintf(where, sizeof where, "obstacles[%zu]", i);
    TSR_TRY(lbm_read_shape(item, cfg, domain, where, s, err));
    int v = 0;
    TSR_TRY(config_choice(item, "wall", false, wall_kinds, &v, err));
    s->interpolated = v == 1;
    s->name[0] = '\001'; /* stays where the key is absent */
    TSR_TRY(config_string(item, "name", false, s->name, sizeof s->name, err));
    const bool named = s->name[0] != '\001';
    if (!named) s->name[0] = '\0';
    bool name_ok = !named || s->name[0] != '\0';
    for (const char *p = s->name; *p; ++p)
      name_ok = name_ok && (isalnum((unsigned char)*p) || *p == '_' || *p == '-');
    TSR_CHECK(name_ok, TSR_ERR_INVALID,
              "%s: obstacles[%zu].name = \"%s\": allowed are 1 to %d letters, digits, '_' "
              "and '-'", config_source(cfg), i, s->name, GEOMETRY_NAME_MAX - 1);
  }
  r->geometry.nshapes = (int)n;
cleanup:
  return st;
}

/* The section "forces" (drag and lift of the named bodies), with the bodies' count. */
static tsr_status lbm_read_forces(config_t *cfg, lbm_options_t *r, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  static const char *const axes[] = {"x", "y", "z", NULL};
  int body[GEOMETRY_MAX_SHAPES];
  const char *names[GEOMETRY_MAX_SHAPES];
  const int nb = geometry_bodies(&r->geometry, body, names);
  config_node_t *forces;
  TSR_CHECK(nb <= LBM_MAX_BODIES, TSR_ERR_INVALID,
            "%s: obstacles: %d bodies (distinct names); at most %d are allowed",
            config_source(cfg), nb, LBM_MAX_BODIES);
  TSR_TRY(config_object(config_root(cfg), "forces", false, &forces, err));
  if (!forces) goto cleanup;
  r->forces.on = true;
  r->forces.density = r->rho0;
  r->forces.drag = 0;
  r->forces.lift = 1;
  TSR_TRY(config_measure(forces, "velocity", true, UNITS_VELOCITY, 1e-12, 1.0,
                         &r->forces.velocity, err));
  TSR_TRY(config_measure(forces, "length", true, UNITS_LENGTH, 1e-12, 1e12, &r->forces.length,
                         err));
  r->forces.area = r->forces.length; /* 2-D: per cell of depth */
  TSR_TRY(config_measure(forces, "area", r->lattice->d == 3, UNITS_AREA, 1e-12, 1e24,
                         &r->forces.area, err));
  TSR_TRY(config_measure(forces, "density", false, UNITS_DENSITY, 1e-12, 1e12,
                         &r->forces.density, err));
  TSR_TRY(config_choice(forces, "drag", false, axes, &r->forces.drag, err));
  TSR_TRY(config_choice(forces, "lift", false, axes, &r->forces.lift, err));
  TSR_CHECK(nb > 0, TSR_ERR_INVALID,
            "%s: forces: no obstacle has a name (the bodies whose drag and lift it is for)",
            config_source(cfg));
  TSR_CHECK(r->forces.drag != r->forces.lift, TSR_ERR_INVALID,
            "%s: forces.drag and forces.lift are both \"%s\": give two different axes",
            config_source(cfg), axes[r->forces.drag]);
cleanup:
  return st;
}

/* hardware.work_group and hardware.kernel_sources, where an older configuration gives them,
 * are the flow's lbm.work_group and lbm.kernel_sources: one message naming the new key. */
static tsr_status lbm_refuse_moved_keys(config_t *cfg, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  config_node_t *hw;
  int64_t wg[3] = {INT64_MIN, INT64_MIN, INT64_MIN};
  char dir[256] = "\001";
  TSR_TRY(config_object(config_root(cfg), "hardware", false, &hw, err));
  if (!hw) goto cleanup;
  TSR_TRY(config_int3(hw, "work_group", false, INT64_MIN + 1, INT64_MAX, wg, err));
  TSR_CHECK(wg[0] == INT64_MIN, TSR_ERR_INVALID,
            "%s: hardware.work_group is an option of the flow's GPU kernels: give it as "
            "lbm.work_group", config_source(cfg));
  TSR_TRY(config_string(hw, "kernel_sources", false, dir, sizeof dir, err));
  TSR_CHECK(dir[0] == '\001', TSR_ERR_INVALID,
            "%s: hardware.kernel_sources is an option of the flow's GPU kernels: give it as "
            "lbm.kernel_sources", config_source(cfg));
cleanup:
  return st;
}

tsr_status lbm_options_read(config_t *cfg, const patch_options_t *domain, lbm_options_t *o,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_options_t r = lbm_options_default();
  config_node_t *root = config_root(cfg), *lbm, *bnd, *face;
  TSR_TRY(lbm_refuse_moved_keys(cfg, err));
  if (config_units(cfg)->on) r.viscosity = config_units(cfg)->lattice_viscosity;
  TSR_TRY(config_object(root, "lbm", false, &lbm, err));
  if (lbm) TSR_TRY(lbm_read_section(cfg, lbm, &r, err));
  TSR_TRY(config_object(root, "boundaries", false, &bnd, err));
  for (int f = 0; bnd && f < 6; ++f) {
    TSR_TRY(config_object(bnd, lbm_face_names[f], false, &face, err));
    if (face) TSR_TRY(lbm_read_face(cfg, face, f, domain, &r, err));
  }
  TSR_TRY(lbm_read_obstacles(cfg, domain, &r, err));
  TSR_TRY(lbm_read_forces(cfg, &r, err));
  st = lbm_options_validate(&r, err);
  if (st == TSR_OK) st = lbm_options_check_domain(&r, domain, err);
  if (st != TSR_OK) {
    tsr_error_prefix(err, "%s", config_source(cfg));
    goto cleanup;
  }
  *o = r;
cleanup:
  return st;
}

const char *const lbm_precision_names[] = {"dp", "sp", "fp16s", "fp16c", NULL};

lbm_storage_t lbm_precision_storage(lbm_precision_t p) {
  static const lbm_storage_t s[LBM_PRECISIONS] = {LBM_STORAGE_F64, LBM_STORAGE_F32,
                                                   LBM_STORAGE_F16S, LBM_STORAGE_F16C};
  return s[p];
}

const char *lbm_fs(const lbm_options_t *o) {
  /* every combination's set, written once (the names are static storage) */
  enum { COLL = 4, PREC = LBM_PRECISIONS, LEN = 40 };
  static char names[COLL][PREC][2][2][LEN];
  static bool made = false;
  if (!made) {
    for (int c = 0; c < COLL; ++c)
      for (int p = 0; p < PREC; ++p)
        for (int l = 0; l < 2; ++l)
          for (int s = 0; s < 2; ++s)
            snprintf(names[c][p][l][s], LEN, "%s,%s,%s,%s", lbm_collision_names[c],
                     lbm_precision_names[p], l ? "soa" : "aos", s ? "in_place" : "two_grid");
    made = true;
  }
  return names[o->collision][o->precision][o->cpu_layout == GRID_SOA][o->in_place ? 1 : 0];
}
