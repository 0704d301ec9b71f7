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
#include "lbm_impl.h"
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
  o.geometry = geometry_default();
  return o;
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
  if (o->init == LBM_INIT_TAYLOR_GREEN) {
    /* u = u0 (sin cos, -kx/ky cos sin, 0): the peak of |u| is |u0| max(1, kx/ky) */
    double ratio = domain && domain->cells[0] > 0 ? (double)domain->cells[1] / (double)domain->cells[0] : 1.0;
    best = fabs(o->init_velocity[0]) * (ratio > 1.0 ? ratio : 1.0);
    *what = "lbm.initial.u0";
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

/* The flow lattices (D3Q7 has too few moments for the Navier-Stokes equations). */
static const char *const lbm_lattices[] = {"d2q9", "d3q15", "d3q19", "d3q27", NULL};

tsr_status lbm_options_validate(const lbm_options_t *o, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int flow = 0;
  for (int k = 0; o->lattice && lbm_lattices[k]; ++k)
    flow = flow || lattice_find(lbm_lattices[k]) == o->lattice;
  TSR_CHECK(flow, TSR_ERR_INVALID, "lbm.lattice = %s: allowed are the flow lattices d2q9, "
            "d3q15, d3q19, d3q27", o->lattice ? o->lattice->name : "none");
  TSR_CHECK(o->cpu_layout == GRID_AOS || o->cpu_layout == GRID_SOA, TSR_ERR_INVALID,
            "lbm.cpu_layout: unknown value %d; allowed are soa, aos", (int)o->cpu_layout);
  TSR_CHECK(o->collision == LBM_SRT || o->collision == LBM_TRT, TSR_ERR_INVALID,
            "lbm.collision: unknown value %d; allowed are srt, trt", (int)o->collision);
  TSR_CHECK(o->precision == LBM_DP || o->precision == LBM_SP, TSR_ERR_INVALID,
            "lbm.precision: unknown value %d; allowed are sp, dp", (int)o->precision);
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
static tsr_status lbm_check_domain(const lbm_options_t *o, const patch_options_t *domain,
                                   tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(o->lattice->d == 3 || domain->cells[2] == 1, TSR_ERR_INVALID,
            "lbm.lattice = \"%s\" is two-dimensional: domain.cells[2] must be 1, not %lld",
            o->lattice->name, (long long)domain->cells[2]);
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

tsr_status lbm_options_read(config_t *cfg, const patch_options_t *domain, lbm_options_t *o,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  static const char *const collisions[] = {"srt", "trt", NULL};
  static const char *const precisions[] = {"dp", "sp", NULL};
  static const char *const inits[] = {"uniform", "taylor_green", NULL};
  static const char *const layouts[] = {"aos", "soa", NULL};
  static const char *const streamings[] = {"two_grid", "in_place", NULL};
  static const char *const walls[] = {"noslip", "moving", "velocity", "pressure", "outflow", NULL};
  static const char *const profiles[] = {"uniform", "parabolic", "file", NULL};
  lbm_options_t r = lbm_options_default();
  config_node_t *root = config_root(cfg), *lbm, *init, *bnd, *face;
  const units_t *units = config_units(cfg);
  int v;
  if (units->on) r.viscosity = units->lattice_viscosity;
  TSR_TRY(config_object(root, "lbm", false, &lbm, err));
  if (lbm) {
    v = 2;
    TSR_TRY(config_choice(lbm, "lattice", false, lbm_lattices, &v, err));
    r.lattice = lattice_find(lbm_lattices[v]);
    v = (int)r.cpu_layout;
    TSR_TRY(config_choice(lbm, "cpu_layout", false, layouts, &v, err));
    r.cpu_layout = (grid_layout_t)v;
    v = r.in_place ? 1 : 0;
    TSR_TRY(config_choice(lbm, "gpu_streaming", false, streamings, &v, err));
    r.in_place = v == 1;
    v = (int)r.collision;
    TSR_TRY(config_choice(lbm, "collision", false, collisions, &v, err));
    r.collision = (lbm_collision_t)v;
    v = (int)r.precision;
    TSR_TRY(config_choice(lbm, "precision", false, precisions, &v, err));
    r.precision = (lbm_precision_t)v;
    double nu = -1;
    TSR_TRY(config_real(lbm, "viscosity", false, 1e-12, 1e6, &nu, err));
    if (nu > 0 && units->on) {
      st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                         "%s: lbm.viscosity: with a units section the fluid's viscosity is "
                         "units.viscosity (m^2/s; here %g, %.6g in lattice units): remove "
                         "lbm.viscosity", config_source(cfg), units->in.viscosity,
                         units->lattice_viscosity);
      goto cleanup;
    }
    if (nu > 0) r.viscosity = nu;
    TSR_TRY(config_real(lbm, "magic", false, 1e-12, 1e6, &r.magic, err));
    TSR_TRY(config_measure(lbm, "rho0", false, UNITS_DENSITY, 1e-12, 1e12, &r.rho0, err));
    TSR_TRY(config_bool(lbm, "shifted", false, &r.shifted, err));
    TSR_TRY(config_measure3(lbm, "force", false, UNITS_FORCE_DENSITY, -1.0, 1.0, r.force, err));
    TSR_TRY(config_object(lbm, "initial", false, &init, err));
    if (init) {
      v = (int)r.init;
      TSR_TRY(config_choice(init, "kind", false, inits, &v, err));
      r.init = (lbm_init_kind_t)v;
      if (r.init == LBM_INIT_UNIFORM) {
        TSR_TRY(config_measure3(init, "velocity", false, UNITS_VELOCITY, -0.4, 0.4,
                                r.init_velocity, err));
        TSR_TRY(lbm_read_regions(init, cfg, &r, err));
      } else {
        TSR_TRY(config_measure(init, "u0", true, UNITS_VELOCITY, -0.4, 0.4, &r.init_velocity[0],
                               err));
      }
    }
  }
  TSR_TRY(config_object(root, "boundaries", false, &bnd, err));
  for (int f = 0; bnd && f < 6; ++f) {
    TSR_TRY(config_object(bnd, lbm_face_names[f], false, &face, err));
    if (!face) continue;
    if (domain->periodic[f / 2]) {
      st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                         "%s: boundaries.%s: the domain is periodic along %c; walls go on "
                         "non-periodic faces only", config_source(cfg), lbm_face_names[f], "xyz"[f / 2]);
      goto cleanup;
    }
    v = (int)r.geometry.walls[f].kind;
    TSR_TRY(config_choice(face, "kind", true, walls, &v, err));
    r.geometry.walls[f].kind = (geometry_wall_kind_t)v;
    geometry_wall_t *w = &r.geometry.walls[f];
    if (w->kind == GEOMETRY_WALL_VELOCITY) {
      v = (int)w->profile;
      TSR_TRY(config_choice(face, "profile", false, profiles, &v, err));
      w->profile = (geometry_profile_t)v;
    }
    if (w->profile == GEOMETRY_PROFILE_FILE) { /* the velocity from a table */
      char file[1024], path[2048];
      TSR_TRY(config_string(face, "file", true, file, sizeof file, err));
      config_path_beside(cfg, file, path, sizeof path);
      st = inlet_profile_load(path, f, domain, units, &w->table, err);
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
    if (r.geometry.walls[f].kind == GEOMETRY_WALL_PRESSURE) {
      r.geometry.walls[f].density = r.rho0;
      TSR_TRY(config_measure(face, "density", false, UNITS_DENSITY, 1e-12, 1e12,
                             &r.geometry.walls[f].density, err));
    }
  }
  size_t n = 0;
  TSR_TRY(config_list(root, "obstacles", &n, err));
  if (n > GEOMETRY_MAX_SHAPES) {
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                       "%s: obstacles: %zu shapes; at most %d are allowed", config_source(cfg), n,
                       GEOMETRY_MAX_SHAPES);
    goto cleanup;
  }
  for (size_t i = 0; i < n; ++i) {
    config_node_t *item;
    TSR_TRY(config_list_item(root, "obstacles", i, &item, err));
    geometry_shape_t *s = &r.geometry.shapes[i];
    char where[32];
    snprintf(where, sizeof where, "obstacles[%zu]", i);
    TSR_TRY(lbm_read_shape(item, cfg, domain, where, s, err));
    static const char *const wall_kinds[] = {"halfway", "interpolated", NULL};
    v = 0;
    TSR_TRY(config_choice(item, "wall", false, wall_kinds, &v, err));
    s->interpolated = v == 1;
    s->name[0] = '\001'; /* stays where the key is absent */
    TSR_TRY(config_string(item, "name", false, s->name, sizeof s->name, err));
    const bool named = s->name[0] != '\001';
    if (!named) s->name[0] = '\0';
    bool name_ok = !named || s->name[0] != '\0';
    for (const char *p = s->name; *p; ++p)
      name_ok = name_ok && (isalnum((unsigned char)*p) || *p == '_' || *p == '-');
    if (!name_ok) {
      st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                         "%s: obstacles[%zu].name = \"%s\": allowed are 1 to %d letters, digits, "
                         "'_' and '-'", config_source(cfg), i, s->name, GEOMETRY_NAME_MAX - 1);
      goto cleanup;
    }
  }
  r.geometry.nshapes = (int)n;
  {
    int body[GEOMETRY_MAX_SHAPES];
    const char *names[GEOMETRY_MAX_SHAPES];
    const int nb = geometry_bodies(&r.geometry, body, names);
    if (nb > LBM_MAX_BODIES) {
      st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                         "%s: obstacles: %d bodies (distinct names); at most %d are allowed",
                         config_source(cfg), nb, LBM_MAX_BODIES);
      goto cleanup;
    }
    config_node_t *forces;
    TSR_TRY(config_object(root, "forces", false, &forces, err));
    if (forces) {
      static const char *const axes[] = {"x", "y", "z", NULL};
      r.forces.on = true;
      r.forces.density = r.rho0;
      r.forces.drag = 0;
      r.forces.lift = 1;
      TSR_TRY(config_measure(forces, "velocity", true, UNITS_VELOCITY, 1e-12, 1.0,
                             &r.forces.velocity, err));
      TSR_TRY(config_measure(forces, "length", true, UNITS_LENGTH, 1e-12, 1e12, &r.forces.length,
                             err));
      r.forces.area = r.forces.length; /* 2-D: per cell of depth */
      TSR_TRY(config_measure(forces, "area", r.lattice->d == 3, UNITS_AREA, 1e-12, 1e24,
                             &r.forces.area, err));
      TSR_TRY(config_measure(forces, "density", false, UNITS_DENSITY, 1e-12, 1e12,
                             &r.forces.density, err));
      TSR_TRY(config_choice(forces, "drag", false, axes, &r.forces.drag, err));
      TSR_TRY(config_choice(forces, "lift", false, axes, &r.forces.lift, err));
      if (nb == 0) {
        st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                           "%s: forces: no obstacle has a name (the bodies whose drag and "
                           "lift it is for)", config_source(cfg));
        goto cleanup;
      }
      if (r.forces.drag == r.forces.lift) {
        st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                           "%s: forces.drag and forces.lift are both \"%s\": give two "
                           "different axes", config_source(cfg), axes[r.forces.drag]);
        goto cleanup;
      }
    }
  }
  st = lbm_options_validate(&r, err);
  if (st == TSR_OK) st = lbm_check_domain(&r, domain, err);
  if (st != TSR_OK) {
    tsr_error_prefix(err, "%s", config_source(cfg));
    goto cleanup;
  }
  *o = r;
cleanup:
  return st;
}

const char *lbm_fs(const lbm_options_t *o) {
  static const char *const names[2][2][2][2] = {
      {{{"srt,dp,aos,two_grid", "srt,dp,aos,in_place"}, {"srt,dp,soa,two_grid", "srt,dp,soa,in_place"}},
       {{"srt,sp,aos,two_grid", "srt,sp,aos,in_place"}, {"srt,sp,soa,two_grid", "srt,sp,soa,in_place"}}},
      {{{"trt,dp,aos,two_grid", "trt,dp,aos,in_place"}, {"trt,dp,soa,two_grid", "trt,dp,soa,in_place"}},
       {{"trt,sp,aos,two_grid", "trt,sp,aos,in_place"}, {"trt,sp,soa,two_grid", "trt,sp,soa,in_place"}}}};
  return names[o->collision == LBM_TRT][o->precision == LBM_SP][o->cpu_layout == GRID_SOA]
              [o->in_place ? 1 : 0];
}

/* ---- what the items share ---- */

size_t lbm_cells(const grid_dims_t *d) { return (size_t)d->nx * (size_t)d->ny * (size_t)d->nz; }

void lbm_block_clear(lbm_block_t *b) {
  free(b->links);
  free(b->open);
  free(b->body);
  free(b->force);
  free(b->flags);
  free(b->rho);
  free(b->u);
  b->links = NULL;
  b->open = NULL;
  b->body = NULL;
  b->force = NULL;
  b->flags = NULL;
  b->rho = b->u = NULL;
}

void lbm_block_release(void *data, void *ctx) {
  lbm_block_t *b = data;
  if (!b) return;
  lbm_block_clear(b);
  free(b);
}

typedef struct lbm_init_ctx {
  const lbm_ctx_t *c;
  const block_info_t *b;
} lbm_init_ctx_t;

/* Initial density and velocity of one cell. */
static void lbm_initial(int x, int y, int z, void *vctx, double out[4]) {
  const lbm_init_ctx_t *ic = vctx;
  const lbm_options_t *o = &ic->c->opts;
  out[0] = o->rho0;
  if (o->init == LBM_INIT_UNIFORM) {
    for (int a = 0; a < 3; ++a) out[1 + a] = o->init_velocity[a];
    const double p[3] = {(double)(ic->b->lo[0] + x) + 0.5, (double)(ic->b->lo[1] + y) + 0.5,
                         (double)(ic->b->lo[2] + z) + 0.5};
    out[0] = o->init_density > 0 ? o->init_density : o->rho0;
    for (int k = 0; k < o->ninit_regions; ++k)
      if (geometry_inside(&o->init_regions[k], p)) out[0] = o->init_region_density[k];
    return;
  }
  /* Taylor-Green vortex in x-y, uniform along z, one period over the domain */
  const double two_pi = 6.283185307179586;
  double kx = two_pi / (double)ic->c->domain.cells[0], ky = two_pi / (double)ic->c->domain.cells[1];
  double px = ((double)(ic->b->lo[0] + x) + 0.5) * kx, py = ((double)(ic->b->lo[1] + y) + 0.5) * ky;
  double u0 = o->init_velocity[0];
  out[1] = u0 * sin(px) * cos(py);
  out[2] = -u0 * kx / ky * cos(px) * sin(py);
  out[3] = 0;
  double p = o->rho0 * u0 * u0 / 4.0 * (cos(2 * px) + kx * kx / (ky * ky) * cos(2 * py));
  out[0] = o->rho0 + 3.0 * p;
}

/* The public face's start values (field_init_fn): the initial state's velocity and
 * density of an interior cell. */
static void lbm_initial_velocity(const block_info_t *b, int x, int y, int z, const void *ctx,
                                 double *out) {
  lbm_init_ctx_t ic = {ctx, b};
  double v[4];
  lbm_initial(x, y, z, &ic, v);
  for (int a = 0; a < 3; ++a) out[a] = v[1 + a];
}

static void lbm_initial_density(const block_info_t *b, int x, int y, int z, const void *ctx,
                                double *out) {
  lbm_init_ctx_t ic = {ctx, b};
  double v[4];
  lbm_initial(x, y, z, &ic, v);
  out[0] = v[0];
}

tsr_status lbm_fill(const block_info_t *b, void *values, const grid_dims_t *dims,
                    const void *vctx, tsr_error_t *err) {
  (void)err;
  const lbm_ctx_t *c = vctx;
  lbm_init_ctx_t ic = {c, b};
  c->kernels[dims->layout]->init(values, dims, &c->params, c->opts.shifted, lbm_initial, &ic);
  return TSR_OK;
}

/* Whether local cell p + off of block b is an interior fluid cell of the block. */
static bool lbm_interior_fluid(const lbm_ctx_t *c, const block_info_t *b, const int p[3],
                               const int off[3]) {
  int64_t g[3];
  for (int a = 0; a < 3; ++a) {
    const int q = p[a] + off[a];
    if (q < 0 || q >= b->size[a]) return false;
    g[a] = b->lo[a] + q;
  }
  return geometry_flag(&c->opts.geometry, &c->domain, g[0], g[1], g[2]) == GEOMETRY_FLUID;
}

/* The link of an open face from fluid cell x (local) in direction i (s = x - c_i lies
 * beyond the face): lbm_open_link_t (an outflow uses its to and from only). The cell next
 * inwards from s along the face's normal n is fluid but for an obstacle touching the face
 * (then x stands in for it); x + n is an interior fluid cell of the block but where an
 * obstacle is there (blocks are at least 2 cells thick along an open face's normal,
 * lbm_check_domain; then x stands in: u_g = u). */
/* The ghost slice of local cell (x, y, z) of a block of dims d, as a bit of direction.h
 * (lbm_link_t.ghost); 0 for an interior cell. */
static uint32_t lbm_ghost_bit(const grid_dims_t *d, const int x[3]) {
  const int n[3] = {d->nx, d->ny, d->nz};
  int o[3];
  for (int a = 0; a < 3; ++a) o[a] = x[a] < 0 ? -1 : x[a] >= n[a] ? 1 : 0;
  return o[0] || o[1] || o[2] ? 1u << direction_from_offset(o[0], o[1], o[2]) : 0u;
}

static lbm_open_link_t lbm_open_link(const lbm_ctx_t *c, const block_info_t *b,
                                     const grid_dims_t *d, const int x[3], int i, int face) {
  const lattice_t *l = c->lattice;
  const geometry_wall_t *w = &c->opts.geometry.walls[face];
  int n[3] = {0, 0, 0}, s[3];
  n[face / 2] = face % 2 ? -1 : 1;
  for (int a = 0; a < 3; ++a) s[a] = x[a] - l->c[a][i];
  const bool s_next = geometry_flag(&c->opts.geometry, &c->domain, b->lo[0] + s[0] + n[0],
                                    b->lo[1] + s[1] + n[1], b->lo[2] + s[2] + n[2]) == GEOMETRY_FLUID;
  const int zero[3] = {0, 0, 0};
  const int *next = lbm_interior_fluid(c, b, x, n) ? n : zero;
  lbm_open_link_t o = {
      .to = grid_index(d, s[0], s[1], s[2], i),
      .from = s_next ? grid_index(d, s[0] + n[0], s[1] + n[1], s[2] + n[2], i)
                     : grid_index(d, x[0], x[1], x[2], i),
      .cell = {grid_index(d, x[0], x[1], x[2], 0),
               grid_index(d, x[0] + next[0], x[1] + next[1], x[2] + next[2], 0)},
      .dir = i,
      .wrho0 = l->w[i] * c->opts.rho0};
  const int sn[3] = {s[0] + n[0], s[1] + n[1], s[2] + n[2]};
  o.ghost = lbm_ghost_bit(d, s) | (s_next ? lbm_ghost_bit(d, sn) : 0u);
  if (w->kind == GEOMETRY_WALL_PRESSURE) { /* rho_g = 2 rho_w - rho */
    o.extra = 2.0 * l->w[i] * (w->density - (c->opts.shifted ? c->opts.rho0 : 0.0));
    o.w2 = 2.0 * l->w[i];
  } /* an outflow's links are plain copies (to, from) */
  return o;
}

/* The link from fluid cell x (local) of block b in direction i to an obstacle (s = x - c_i
 * solid by a shape): lbm_body_link_t, with the shape's body, and Bouzidi's coefficients
 * where its wall is interpolated. Where q < 1/2 needs the fluid cell x + c_i and that is
 * no fluid (a gap one cell wide), the link is half-way. */
static lbm_body_link_t lbm_body_link(const lbm_ctx_t *c, const block_info_t *b,
                                     const grid_dims_t *d, const int x[3], int i) {
  const lattice_t *l = c->lattice;
  const int o = l->inv[i];
  const int co[3] = {l->c[0][o], l->c[1][o], l->c[2][o]};
  int shape = -1;
  const double q = geometry_link_fraction(&c->opts.geometry, &c->domain, b->lo[0] + x[0],
                                          b->lo[1] + x[1], b->lo[2] + x[2], co, &shape);
  const size_t from = grid_index(d, x[0], x[1], x[2], o);
  lbm_body_link_t k = {.to = grid_index(d, x[0] - l->c[0][i], x[1] - l->c[1][i], x[2] - l->c[2][i], i),
                       .from = from, .from2 = from, .a = 1.0, .b = 0.0,
                       .body = shape >= 0 ? c->shape_body[shape] : -1, .dir = o};
  const int s[3] = {x[0] - l->c[0][i], x[1] - l->c[1][i], x[2] - l->c[2][i]};
  k.ghost = lbm_ghost_bit(d, s);
  if (shape < 0 || !c->opts.geometry.shapes[shape].interpolated) return k;
  if (q < 0.5) {
    const bool next = geometry_flag(&c->opts.geometry, &c->domain, b->lo[0] + x[0] + l->c[0][i],
                                    b->lo[1] + x[1] + l->c[1][i], b->lo[2] + x[2] + l->c[2][i]) ==
                      GEOMETRY_FLUID;
    if (!next) return k;
    k.a = 2.0 * q;
    k.b = 1.0 - 2.0 * q;
    k.from2 = grid_index(d, x[0] + l->c[0][i], x[1] + l->c[1][i], x[2] + l->c[2][i], o);
    const int next_cell[3] = {x[0] + l->c[0][i], x[1] + l->c[1][i], x[2] + l->c[2][i]};
    k.ghost |= lbm_ghost_bit(d, next_cell);
  } else {
    k.a = 1.0 / (2.0 * q);
    k.b = (2.0 * q - 1.0) / (2.0 * q);
    k.from2 = grid_index(d, x[0], x[1], x[2], i);
  }
  return k;
}

tsr_status lbm_alloc_layout(const block_info_t *b, const lbm_ctx_t *c, grid_layout_t layout,
                            lbm_block_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lattice_t *l = c->lattice;
  lbm_block_t *lb = calloc(1, sizeof *lb);
  *out = NULL;
  TSR_CHECK(lb, TSR_ERR_NOMEM, "out of memory for the LBM data of BlockID %d", (int)b->id);
  lb->unstable = -1;
  lb->esize = c->opts.precision == LBM_SP ? sizeof(float) : sizeof(double);
  int width[3], ghost, gz;
  lattice_ghost_width(l, width);
  grid_ghost_of(width, &ghost, &gz); /* as the field kit stores the populations */
  lb->dims = grid_dims_make_gz(b->size, l->q, ghost, gz, layout, lb->esize);
  if (patch_has_bs(b, c->bs_solid)) goto done; /* all solid: no PDFs */
  TSR_TRY(geometry_prepare(&c->opts.geometry, b, err)); /* voxel images around the block */

  size_t n = lb->dims.elements, cells = 0, rho_bytes = 0, u_bytes = 0;
  TSR_CHECK(n > 0 && tsr_box_cells(b->size, 0, &cells) &&
                tsr_mul_size(cells, sizeof *lb->rho, &rho_bytes) &&
                tsr_mul_size(rho_bytes, 3, &u_bytes),
            TSR_ERR_INVALID, "BlockID %d: %d x %d x %d cells are more than a %s field can address",
            (int)b->id, b->size[0], b->size[1], b->size[2], grid_layout_name(layout));
  lb->flags = malloc(cells);
  lb->rho = malloc(rho_bytes);
  lb->u = malloc(u_bytes);
  TSR_CHECK(lb->flags && lb->rho && lb->u, TSR_ERR_NOMEM,
            "out of memory: BlockID %d needs %.1f MiB for its flags and moments", (int)b->id,
            (double)(cells + rho_bytes + u_bytes) / 1048576.0);

  /* flags of the interior, and bounce-back links from every fluid cell to each wall cell
     (interior or ghost) it pulls from */
  const grid_dims_t *d = &lb->dims;
  size_t cap = 0, ocap = 0, bcap = 0, k = 0;
  if (c->nbodies > 0) {
    lb->force = calloc(3 * (size_t)c->nbodies, sizeof *lb->force);
    TSR_CHECK(lb->force, TSR_ERR_NOMEM, "out of memory for the forces of BlockID %d", (int)b->id);
  }
  for (int z = 0; z < d->nz; ++z)
    for (int y = 0; y < d->ny; ++y)
      for (int x = 0; x < d->nx; ++x, ++k) {
        uint8_t fl = geometry_flag(&c->opts.geometry, &c->domain, b->lo[0] + x, b->lo[1] + y, b->lo[2] + z);
        lb->flags[k] = fl;
        if (fl != GEOMETRY_FLUID || !patch_has_bs(b, c->bs_boundary)) continue;
        for (int i = 1; i < l->q; ++i) {
          int sx = x - l->c[0][i], sy = y - l->c[1][i], sz = z - l->c[2][i];
          uint8_t sf = geometry_flag(&c->opts.geometry, &c->domain, b->lo[0] + sx, b->lo[1] + sy,
                                     b->lo[2] + sz);
          if (sf == GEOMETRY_FLUID) continue;
          const int face = geometry_open_face(sf);
          if (face >= 0 && c->opts.geometry.walls[face].kind == GEOMETRY_WALL_PRESSURE) {
            if (lb->nopen == ocap) {
              ocap = ocap ? 2 * ocap : 64;
              lbm_open_link_t *g = realloc(lb->open, ocap * sizeof *g);
              TSR_CHECK(g, TSR_ERR_NOMEM, "out of memory for the boundary links of BlockID %d", (int)b->id);
              lb->open = g;
            }
            const int at[3] = {x, y, z};
            lb->open[lb->nopen++] = lbm_open_link(c, b, d, at, i, face);
            continue;
          }
          const int shape = sf == GEOMETRY_NOSLIP
                                ? geometry_shape_at(&c->opts.geometry, &c->domain, b->lo[0] + sx,
                                                    b->lo[1] + sy, b->lo[2] + sz)
                                : -1;
          if (shape >= 0 && (c->shape_body[shape] >= 0 ||
                             c->opts.geometry.shapes[shape].interpolated)) {
            if (lb->nbody == bcap) {
              bcap = bcap ? 2 * bcap : 256;
              lbm_body_link_t *g = realloc(lb->body, bcap * sizeof *g);
              TSR_CHECK(g, TSR_ERR_NOMEM, "out of memory for the boundary links of BlockID %d", (int)b->id);
              lb->body = g;
            }
            const int at[3] = {x, y, z};
            lb->body[lb->nbody++] = lbm_body_link(c, b, d, at, i);
            continue;
          }
          if (lb->nlinks == cap) {
            cap = cap ? 2 * cap : 256;
            lbm_link_t *g = realloc(lb->links, cap * sizeof *g);
            TSR_CHECK(g, TSR_ERR_NOMEM, "out of memory for the boundary links of BlockID %d", (int)b->id);
            lb->links = g;
          }
          const int cell[3] = {x, y, z};
          if (face >= 0) { /* outflow: s takes the values of the cell next inwards */
            const lbm_open_link_t o = lbm_open_link(c, b, d, cell, i, face);
            lb->links[lb->nlinks++] = (lbm_link_t){.to = o.to, .from = o.from, .ghost = o.ghost};
            continue;
          }
          /* the wall's velocity where the link crosses it, half-way between the cells */
          double uw[3], at[3];
          for (int a = 0; a < 3; ++a)
            at[a] = (double)(b->lo[a] + cell[a]) + 0.5 - 0.5 * l->c[a][i];
          geometry_wall_velocity_at(&c->opts.geometry, &c->domain, sf, at, uw);
          double cu = l->c[0][i] * uw[0] + l->c[1][i] * uw[1] + l->c[2][i] * uw[2];
          /* moving wall: 2 w_i rho0 c_i.u_w / c_s^2; a ramped face's links in its group */
          const int moving = sf >= GEOMETRY_MOVING && sf < GEOMETRY_MOVING + 6
                                 ? sf - GEOMETRY_MOVING : -1;
          lb->links[lb->nlinks++] = (lbm_link_t){
              .to = grid_index(d, sx, sy, sz, i),
              .from = grid_index(d, x, y, z, l->inv[i]),
              .extra = 2.0 * l->inv_cs2 * l->w[i] * c->opts.rho0 * cu,
              .group = moving >= 0 && c->opts.geometry.walls[moving].ramp > 0 ? 1 + moving : 0,
              .ghost = lbm_ghost_bit(d, (const int[3]){sx, sy, sz})};
        }
      }
done:
  *out = lb;
  lb = NULL;
cleanup:
  lbm_block_release(lb, NULL);
  return st;
}

/* The allocator of the cells of CPU blocks: the layout of the block's PDFs. */
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

static tsr_status lbm_boundary(const block_info_t *b, block_data_t *data, void *vctx,
                               tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
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

/* The boundary in two parts (registry_region_t): the links that touch no late ghost
 * slice, then the others. A link writes a slot only its fluid cell pulls, and that cell
 * is next to every cell the link touches: a link on a late slice serves a shell cell. */
static tsr_status lbm_boundary_part(const block_info_t *b, block_data_t *data,
                                    const registry_region_t *r, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  field_block_t *f;
  lbm_block_t *lb;
  TSR_TRY(lbm_get(b, data, c, &f, &lb, err));
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
  const bool inner = r->part == REGISTRY_PART_INNER;
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

bool lbm_link_scale(const lbm_options_t *o, int64_t step, double scale[LBM_LINK_GROUPS]) {
  bool any = false;
  for (int g = 0; g < LBM_LINK_GROUPS; ++g) scale[g] = 1.0;
  for (int f = 0; f < 6; ++f) {
    const double T = o->geometry.walls[f].ramp;
    if (!geometry_wall_moves(o->geometry.walls[f].kind) || !(T > 0) || (double)step >= T)
      continue;
    scale[1 + f] = 0.5 * (1.0 - cos(3.14159265358979323846 * (double)step / T));
    any = true;
  }
  return any;
}

/* The end of a step on a CPU block: counted. */
static tsr_status lbm_step_done(const block_info_t *b, block_data_t *data, void *vctx,
                                tsr_error_t *err) {
  const lbm_ctx_t *c = vctx;
  (void)b, (void)err;
  lbm_block_t *lb = block_data_get(data, c->cells_id);
  if (lb) lb->steps++;
  return TSR_OK;
}

/* The stream-collide of region r (NULL: every cell); the step's end (the swap) with the
 * last part. */
static tsr_status lbm_stream_collide_region(const block_info_t *b, block_data_t *data,
                                            const lbm_ctx_t *c, const grid_region_t *r,
                                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  field_block_t *pf;
  lbm_block_t *lb;
  TSR_TRY(lbm_get(b, data, c, &pf, &lb, err));
  const lbm_kernels_t *k = c->kernels[pf->host.dims.layout];
  void *src = pf->values[pf->cur], *dst = pf->values[pf->cur ^ 1];
  const lbm_variant_t v = c->opts.collision == LBM_TRT ? LBM_VARIANT_TRT : LBM_VARIANT_SRT;
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
  if (last) field_swap(pf);
cleanup:
  return st;
}

static tsr_status lbm_stream_collide(const block_info_t *b, block_data_t *data, void *vctx,
                                     tsr_error_t *err) {
  return lbm_stream_collide_region(b, data, vctx, NULL, err);
}

static tsr_status lbm_stream_collide_part(const block_info_t *b, block_data_t *data,
                                          const registry_region_t *r, void *vctx,
                                          tsr_error_t *err) {
  const grid_region_t g = field_grid_region(r);
  return lbm_stream_collide_region(b, data, vctx, &g, err);
}

/* The density the next collision will see (the sum of the pulled values, after the
 * boundary links), for the public face's lbm.density. */
static tsr_status lbm_density_item(const block_info_t *b, block_data_t *data, void *vctx,
                                   tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  field_block_t *pf;
  lbm_block_t *lb;
  TSR_TRY(lbm_get(b, data, c, &pf, &lb, err));
  const grid_field_t *r = field_of(data, c->density_id);
  TSR_CHECK(r, TSR_ERR_INTERNAL, "BlockID %d lacks the field " LBM_DENSITY, (int)b->id);
  lbm_pulled_density(c->lattice, pf->host.values, &pf->host.dims, pf->host.esize,
                     c->opts.shifted ? c->opts.rho0 : 0.0, r->values, &r->dims);
cleanup:
  return st;
}

void lbm_mask_walls(const lbm_ctx_t *c, lbm_block_t *lb) {
  size_t cells = lbm_cells(&lb->dims);
  for (size_t k = 0; k < cells; ++k) {
    if (lb->flags[k] == GEOMETRY_FLUID) continue;
    lb->rho[k] = c->opts.rho0;
    geometry_flag_velocity(&c->opts.geometry, lb->flags[k], lb->u + 3 * k);
  }
}

static tsr_status lbm_moments_item(const block_info_t *b, block_data_t *data, void *vctx,
                                   tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  field_block_t *f;
  lbm_block_t *lb;
  TSR_TRY(lbm_get(b, data, c, &f, &lb, err));
  c->kernels[f->host.dims.layout]->moments(f->host.values, &f->host.dims, &c->params,
                                           c->opts.shifted, lb->rho, lb->u);
  lbm_mask_walls(c, lb);
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
static tsr_status lbm_check_item(const block_info_t *b, block_data_t *data, void *vctx,
                                 tsr_error_t *err) {
  const lbm_ctx_t *c = vctx;
  lbm_block_t *lb = block_data_get(data, c->cells_id);
  tsr_status st = lbm_moments_item(b, data, vctx, err);
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

tsr_status lbm_add_items(registry_t *reg, const registry_item_t *items, size_t n, void *ctx,
                         tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (size_t i = 0; i < n; ++i) {
    registry_item_t it = items[i];
    it.ctx = ctx;
    TSR_TRY(registry_add(reg, &it, err));
  }
cleanup:
  return st;
}

tsr_status lbm_sweep_register(registry_t *reg, const patch_options_t *domain,
                              const lbm_options_t *o, gpu_lbm_cache_t *gpu,
                              gpu_field_programs_t *fields, lbm_coupling_flags_t **flags,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_ctx_t c;
  memset(&c, 0, sizeof c);
  TSR_TRY(lbm_options_validate(o, err));
  TSR_TRY(lbm_check_domain(o, domain, err));
  c.opts = *o;
  c.domain = *domain;
  c.gpu = gpu;
  double omega = lbm_omega(o);
  c.lattice = o->lattice;
  const char *body_names[GEOMETRY_MAX_SHAPES];
  c.nbodies = geometry_bodies(&o->geometry, c.shape_body, body_names);
  c.kernels[GRID_AOS] = lbm_kernels_find(o->lattice, GRID_AOS, o->precision == LBM_DP);
  c.kernels[GRID_SOA] = lbm_kernels_find(o->lattice, GRID_SOA, o->precision == LBM_DP);
  TSR_CHECK(c.kernels[GRID_AOS] && c.kernels[GRID_SOA], TSR_ERR_INTERNAL,
            "no CPU kernels for lattice %s", o->lattice->name);
  c.params = (lbm_params_t){
      .omega_plus = omega,
      .omega_minus = o->collision == LBM_TRT ? lbm_omega_minus(omega, o->magic) : omega,
      .rho0 = o->rho0,
      .force = {o->force[0], o->force[1], o->force[2]},
      .use_force = o->force[0] != 0 || o->force[1] != 0 || o->force[2] != 0};
  TSR_TRY(registry_data_id(reg, LBM_PDF, &c.pdf_id, err));
  TSR_TRY(registry_data_id(reg, LBM_CELLS, &c.cells_id, err));
  const struct {
    const char *name;
    int components, *id;
  } face[] = {{LBM_FORCE, 3, &c.force_id}, {LBM_VELOCITY, 3, &c.velocity_id},
              {LBM_DENSITY, 1, &c.density_id}};
  for (size_t i = 0; i < sizeof face / sizeof face[0]; ++i)
    TSR_TRY(registry_data_id(reg, face[i].name, face[i].id, err));
  selector_table_t *sel = registry_selectors(reg);
  TSR_TRY(selector_intern(sel, SELECTOR_BS, "fluid", &c.bs_fluid, err));
  TSR_TRY(selector_intern(sel, SELECTOR_BS, "fluid_boundary", &c.bs_boundary, err));
  TSR_TRY(selector_intern(sel, SELECTOR_BS, "solid", &c.bs_solid, err));
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    const int off[3] = {direction_offsets[d][0], direction_offsets[d][1], direction_offsets[d][2]};
    c.ncomps[d] = lattice_crossing(c.lattice, off, c.comps[d]);
  }
  lattice_ghost_width(c.lattice, c.width);
  void *ctx;
  TSR_TRY(registry_keep(reg, &c, sizeof c, &ctx, err));
  if (flags) *flags = &((lbm_ctx_t *)ctx)->couple;
  /* the public face: the velocity and the density start as the initial state's, so that
     a module reading them before the first collision (a start sweep) sees it */
  static const field_init_fn face_init[] = {NULL, lbm_initial_velocity, lbm_initial_density};
  for (size_t i = 0; i < sizeof face / sizeof face[0]; ++i) {
    /* the force and the velocity are stored with the populations' ghost layers (nothing
       exchanges them: no sweep reads their ghosts), so that on SoA blocks a cell's values
       lie at its populations' element offsets: the coupled vector code reads and writes
       them with the populations' vectors (lbm_kernels_t.coupled) */
    const bool beside = i < 2;
    TSR_TRY(field_declare(reg, fields, &(field_spec_t){.name = face[i].name,
                          .components = face[i].components,
                          .esize = o->precision == LBM_SP ? 4 : 8, .layout = GRID_SOA,
                          .width = {beside ? c.width[0] : 0, beside ? c.width[1] : 0,
                                    beside ? c.width[2] : 0},
                          .init = face_init[i], .init_ctx = ctx}, err));
  }
  TSR_TRY(registry_exclusive(reg, "srt,trt", err));
  TSR_TRY(registry_exclusive(reg, "sp,dp", err));
  TSR_TRY(registry_exclusive(reg, "aos,soa", err));

  int stream[LATTICE_MAX_Q * 4]; /* GPU blocks may stream in place (fs in_place) */
  lattice_stream_table(c.lattice, stream);
  TSR_TRY(field_declare(reg, fields, &(field_spec_t){
      .name = LBM_PDF, .components = c.lattice->q,
      .esize = o->precision == LBM_SP ? sizeof(float) : sizeof(double),
      .width = {c.width[0], c.width[1], c.width[2]}, .copies = 2, .layout_by_fs = true,
      .block_layout = o->block_layout, .crossing = &c.comps[0][0], .stride = LATTICE_MAX_Q,
      .ncrossing = c.ncomps, .hollow_bs = "solid", .stream = stream, .fill = lbm_fill,
      .init_ctx = ctx}, err));

  const char *live = "fluid|fluid_boundary";
  const registry_item_t items[] = {
      {.kind = REGISTRY_KIND_ALLOCATOR, .name = LBM_CELLS, .fs = "*", .hs = "cpu", .bs = "*",
       .alloc = lbm_alloc_cells, .free = lbm_block_release},
      {.kind = REGISTRY_KIND_BOUNDARY, .name = LBM_BOUNDARY, .fs = "*", .hs = "cpu",
       .bs = "fluid_boundary", .kernel = lbm_boundary, .part = lbm_boundary_part,
       .concurrent = 1},
      {.kind = REGISTRY_KIND_BOUNDARY, .name = LBM_BOUNDARY, .fs = "*", .hs = "cpu|gpu",
       .bs = "fluid|solid", .kernel = registry_nothing},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_STREAM_COLLIDE, .fs = "*", .hs = "cpu",
       .bs = live, .kernel = lbm_stream_collide, .part = lbm_stream_collide_part,
       .concurrent = 1},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_STREAM_COLLIDE, .fs = "*", .hs = "cpu|gpu",
       .bs = "solid", .kernel = registry_nothing},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_PULLED_DENSITY, .fs = "*", .hs = "cpu",
       .bs = live, .kernel = lbm_density_item, .concurrent = 1},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_PULLED_DENSITY, .fs = "*", .hs = "cpu|gpu",
       .bs = "solid", .kernel = registry_nothing},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_MOMENTS, .fs = "*", .hs = "cpu", .bs = live,
       .kernel = lbm_moments_item, .concurrent = 1},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_MOMENTS, .fs = "*", .hs = "cpu|gpu",
       .bs = "solid", .kernel = registry_nothing},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_CHECK, .fs = "*", .hs = "cpu", .bs = live,
       .kernel = lbm_check_item, .concurrent = 1},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_CHECK, .fs = "*", .hs = "cpu|gpu",
       .bs = "solid", .kernel = registry_nothing},
      /* CPU work is done when its item returns (the step is counted); GPU blocks wait for
         their queue */
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_WAIT, .fs = "*", .hs = "cpu", .bs = "*",
       .kernel = lbm_step_done, .concurrent = 1},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_WAIT, .fs = "*", .hs = "gpu", .bs = "solid",
       .kernel = registry_nothing},
  };
  TSR_TRY(lbm_add_items(reg, items, sizeof items / sizeof items[0], ctx, err));
  TSR_TRY(lbm_gpu_register(reg, ctx, err));
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

