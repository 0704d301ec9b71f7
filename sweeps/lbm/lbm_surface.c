/* The bodies' surfaces (lbm_surface.h). */
#include "lbm_surface.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "field.h"
#include "lbm.h"
#include "lbm_derived.h"
#include "mesh.h"

/* A fluid cell next to a body. */
typedef struct lbm_surface_cell {
  int p[3];           /* in the block */
  int body;
  double normal[3];   /* out of the body, into the fluid */
  double area;        /* the surface it stands for (per cell of depth in 2-D) */
  double wall[3][2];  /* the body's wall along -a and +a (lbm_gradient_wall) */
} lbm_surface_cell_t;

typedef struct lbm_surface_block {
  lbm_surface_cell_t *cells;
  size_t n;
  bool built;
} lbm_surface_block_t;

struct lbm_surfaces {
  int nbodies;
  const char *names[LBM_MAX_BODIES];
  double *triangles[LBM_MAX_BODIES]; /* the body's meshes' triangles, 9 values each */
  size_t ntriangles[LBM_MAX_BODIES];
  bool coefficients;                 /* a forces section: c_p and c_f too */
  int32_t nblocks;
  lbm_surface_block_t *blocks;       /* per BlockID, made at a block's first output */
};

void lbm_surfaces_free(lbm_surfaces_t **s) {
  if (!s || !*s) return;
  for (int k = 0; k < (*s)->nbodies; ++k) free((*s)->triangles[k]);
  for (int32_t i = 0; (*s)->blocks && i < (*s)->nblocks; ++i) free((*s)->blocks[i].cells);
  free((*s)->blocks);
  free(*s);
  *s = NULL;
}

/* The triangles of the meshes of body k. */
static tsr_status lbm_surfaces_meshes(lbm_surfaces_t *s, const lbm_options_t *o,
                                      const int body[GEOMETRY_MAX_SHAPES], int k,
                                      tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const geometry_t *g = &o->geometry;
  size_t n = 0;
  for (int i = 0; i < g->nshapes; ++i)
    if (body[i] == k && g->shapes[i].kind == GEOMETRY_MESH) n += geometry_mesh_triangles(g->shapes[i].mesh);
  if (n == 0) goto cleanup;
  s->triangles[k] = malloc(9 * n * sizeof *s->triangles[k]);
  TSR_CHECK(s->triangles[k], TSR_ERR_NOMEM, "out of memory for the triangles of body '%s'",
            s->names[k]);
  for (int i = 0; i < g->nshapes; ++i) {
    if (body[i] != k || g->shapes[i].kind != GEOMETRY_MESH) continue;
    const size_t m = geometry_mesh_triangles(g->shapes[i].mesh);
    memcpy(s->triangles[k] + 9 * s->ntriangles[k], geometry_mesh_vertices(g->shapes[i].mesh),
           9 * m * sizeof(double));
    s->ntriangles[k] += m;
  }
cleanup:
  return st;
}

tsr_status lbm_surfaces_create(const lbm_options_t *o, lbm_surfaces_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_surfaces_t *s = calloc(1, sizeof *s);
  int body[GEOMETRY_MAX_SHAPES];
  *out = NULL;
  TSR_CHECK(s, TSR_ERR_NOMEM, "out of memory");
  const char *names[GEOMETRY_MAX_SHAPES]; /* into o's shapes: o must outlive s */
  s->nbodies = geometry_bodies(&o->geometry, body, names);
  TSR_CHECK(s->nbodies <= LBM_MAX_BODIES, TSR_ERR_INTERNAL, "%d bodies", s->nbodies);
  for (int k = 0; k < s->nbodies; ++k) s->names[k] = names[k];
  s->coefficients = o->forces.on;
  for (int k = 0; k < s->nbodies && k < LBM_MAX_BODIES; ++k)
    TSR_TRY(lbm_surfaces_meshes(s, o, body, k, err));
  *out = s;
  s = NULL;
cleanup:
  lbm_surfaces_free(&s);
  return st;
}

/* The values of a point, in order. */
enum { LBM_S_NORMAL, LBM_S_AREA, LBM_S_PRESSURE, LBM_S_SHEAR, LBM_S_SHEAR_MAGNITUDE, LBM_S_CP,
       LBM_S_CF, LBM_S_VALUES };

int lbm_surfaces_list(const lbm_surfaces_t *s, module_surface_t *out, int cap) {
  static const char *const names[LBM_S_VALUES] = {
      "normal", "area", "pressure", "wall_shear_stress", "wall_shear_stress_magnitude",
      "pressure_coefficient", "skin_friction_coefficient"};
  static const int comps[LBM_S_VALUES] = {3, 1, 1, 3, 1, 1, 1};
  const units_dim_t dims[LBM_S_VALUES] = {UNITS_NONE, UNITS_AREA, UNITS_PRESSURE, UNITS_PRESSURE,
                                          UNITS_PRESSURE, UNITS_NONE, UNITS_NONE};
  int n = 0;
  for (int k = 0; k < s->nbodies && n < cap; ++k, ++n) {
    module_surface_t *m = &out[n];
    *m = (module_surface_t){.name = s->names[k], .nvalues = s->coefficients ? 7 : 5,
                            .triangles = s->triangles[k], .ntriangles = s->ntriangles[k]};
    for (int v = 0; v < m->nvalues; ++v) {
      m->values[v] = names[v];
      m->components[v] = comps[v];
      m->dims[v] = dims[v];
      /* the plot: c_p and c_f where given, else p and |tau| */
      m->plot[v] = s->coefficients ? v >= LBM_S_CP : v == LBM_S_PRESSURE || v == LBM_S_SHEAR_MAGNITUDE;
    }
  }
  return n;
}

/* Whether the cell at global g (one cell outside the block at most) is a solid cell of
 * a body: its body (and the shape that makes it solid in *shape), else -1. */
static int lbm_surface_body(const lbm_ctx_t *c, const block_info_t *b, const uint8_t *flags,
                            const int64_t g[3], int *shape) {
  bool inside = true;
  for (int a = 0; a < 3; ++a) inside = inside && g[a] >= b->lo[a] && g[a] < b->lo[a] + b->size[a];
  if (inside) {
    const int64_t k = ((g[2] - b->lo[2]) * b->size[1] + (g[1] - b->lo[1])) * b->size[0] +
                      (g[0] - b->lo[0]);
    if (flags[k] == GEOMETRY_FLUID) return -1;
  } else if (geometry_flag(&c->opts.geometry, &c->domain, g[0], g[1], g[2]) == GEOMETRY_FLUID) {
    return -1;
  }
  *shape = geometry_shape_at(&c->opts.geometry, &c->domain, g[0], g[1], g[2]);
  return *shape < 0 ? -1 : c->shape_body[*shape];
}

/* The normal of a sphere or cylinder at the point nearest p, out of the shape, or of an
 * STL mesh at its triangle nearest p (towards p): true; else false (the links' normal
 * serves: boxes, voxel images). */
static bool lbm_shape_normal(const geometry_shape_t *s, const double p[3], double n[3]) {
  if (s->kind == GEOMETRY_MESH) return geometry_mesh_normal(s->mesh, p, n);
  if (s->kind != GEOMETRY_SPHERE && s->kind != GEOMETRY_CYLINDER) return false;
  double len = 0;
  for (int a = 0; a < 3; ++a) {
    n[a] = s->kind == GEOMETRY_CYLINDER && a == s->axis ? 0.0 : p[a] - s->center[a];
    len += n[a] * n[a];
  }
  len = sqrt(len);
  for (int a = 0; a < 3; ++a) n[a] = len > 0 ? n[a] / len : 0.0;
  return len > 0;
}

/* Fluid cell p of block b against body k: its links into the body (normal, area, walls
 * along the axes) into *cell; false where it has no link along an axis into the body (a
 * cell that touches it across an edge or corner only stands for none of its surface). */
static bool lbm_surface_links(const lbm_ctx_t *c, const block_info_t *b, const uint8_t *flags,
                              const int p[3], int k, lbm_surface_cell_t *cell) {
  const lattice_t *l = c->lattice;
  const int64_t g[3] = {b->lo[0] + p[0], b->lo[1] + p[1], b->lo[2] + p[2]};
  double sum[3] = {0, 0, 0};
  bool any = false;
  const geometry_shape_t *solid = NULL; /* the shape of the cell's last link */
  *cell = (lbm_surface_cell_t){.p = {p[0], p[1], p[2]}, .body = k};
  for (int i = 0; i < l->q; ++i) {
    const int ci[3] = {l->c[0][i], l->c[1][i], l->c[2][i]};
    if (!ci[0] && !ci[1] && !ci[2]) continue;
    const int64_t n[3] = {g[0] + ci[0], g[1] + ci[1], g[2] + ci[2]};
    int shape = -1;
    if (lbm_surface_body(c, b, flags, n, &shape) != k) continue;
    solid = &c->opts.geometry.shapes[shape];
    for (int a = 0; a < 3; ++a) sum[a] -= l->w[i] * ci[a];
    const int axis = ci[0] ? (ci[1] || ci[2] ? -1 : 0) : ci[1] ? (ci[2] ? -1 : 1) : 2;
    if (axis < 0) continue;
    any = true; /* a face of the staircase */
    const double q = geometry_link_fraction(&c->opts.geometry, &c->domain, g[0], g[1], g[2], ci,
                                            &shape);
    const bool exact = shape >= 0 && c->opts.geometry.shapes[shape].interpolated;
    cell->wall[axis][ci[axis] > 0] = exact && q > 0 && q <= 1 ? q : 0.5;
  }
  if (!any) return false;
  const double len = sqrt(sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]);
  const double centre[3] = {(double)g[0] + 0.5, (double)g[1] + 0.5, (double)g[2] + 0.5};
  if (!solid || !lbm_shape_normal(solid, centre, cell->normal))
    for (int a = 0; a < 3; ++a) cell->normal[a] = len > 0 ? sum[a] / len : 0.0;
  /* a face across axis a stands for |n_a| of the surface (the staircase's faces across
     a add up to the surface's projection on that plane) */
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side)
      if (cell->wall[a][side] > 0) cell->area += fabs(cell->normal[a]);
  return true;
}

/* The surface cells of block b, every body's. */
static tsr_status lbm_surface_build(const lbm_ctx_t *c, const block_info_t *b,
                                    const uint8_t *flags, lbm_surface_block_t *sb,
                                    int nbodies, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t cap = 0;
  int p[3];
  sb->built = true;
  for (p[2] = 0; p[2] < b->size[2]; ++p[2])
    for (p[1] = 0; p[1] < b->size[1]; ++p[1])
      for (p[0] = 0; p[0] < b->size[0]; ++p[0]) {
        const int64_t i = ((int64_t)p[2] * b->size[1] + p[1]) * b->size[0] + p[0];
        if (flags[i] != GEOMETRY_FLUID) continue;
        for (int k = 0; k < nbodies; ++k) {
          lbm_surface_cell_t cell;
          if (!lbm_surface_links(c, b, flags, p, k, &cell)) continue;
          if (sb->n == cap) {
            cap = cap ? 2 * cap : 64;
            lbm_surface_cell_t *m = realloc(sb->cells, cap * sizeof *m);
            TSR_CHECK(m, TSR_ERR_NOMEM, "out of memory for the surface cells of BlockID %d",
                      (int)b->id);
            sb->cells = m;
          }
          sb->cells[sb->n++] = cell;
        }
      }
cleanup:
  return st;
}

/* The values of surface cell s: pressure from the density, the wall shear stress from
 * the velocity gradient at the wall (lbm_gradient_wall). */
static void lbm_surface_values(const lbm_ctx_t *c, const block_info_t *b, const grid_field_t *h,
                               const lbm_surface_cell_t *s, double rho, double *v) {
  const lbm_options_t *o = &c->opts;
  const double cs = lbm_sound_speed(o), mu = o->rho0 * o->viscosity;
  const double *n = s->normal;
  double g[3][3], t[3], tn = 0, mag = 0;
  lbm_gradient_wall(c, b, h, s->p[0], s->p[1], s->p[2], s->wall, g);
  for (int i = 0; i < 3; ++i) { /* the viscous traction sigma n, sigma = mu (g + g^T) */
    t[i] = 0;
    for (int j = 0; j < 3; ++j) t[i] += mu * (g[i][j] + g[j][i]) * n[j];
    tn += t[i] * n[i];
  }
  for (int a = 0; a < 3; ++a) {
    v[a] = n[a];
    v[5 + a] = t[a] - tn * n[a]; /* its part along the wall */
    mag += v[5 + a] * v[5 + a];
  }
  v[3] = s->area;
  v[4] = cs * cs * (rho - o->rho0);
  v[8] = sqrt(mag);
  const double dyn = 0.5 * o->forces.density * o->forces.velocity * o->forces.velocity;
  v[9] = o->forces.on ? v[4] / dyn : 0.0;
  v[10] = o->forces.on ? v[8] / dyn : 0.0;
}

tsr_status lbm_surface_points(lbm_surfaces_t *s, const lbm_ctx_t *c, patch_t *patch, int k,
                              module_points_t *pts, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const patch_options_t *d = &c->domain;
  if (!s->blocks) {
    s->nblocks = patch_block_count(patch);
    s->blocks = calloc((size_t)(s->nblocks > 0 ? s->nblocks : 1), sizeof *s->blocks);
    TSR_CHECK(s->blocks, TSR_ERR_NOMEM, "out of memory for the surfaces' cells");
  }
  for (int32_t i = 0; i < patch_local_count(patch); ++i) {
    const int32_t id = patch_local_id(patch, i);
    const block_info_t *b = patch_block(patch, id);
    const block_data_t *data = patch_block_data(patch, id);
    const lbm_moments_view_t mv = lbm_block_moments(data, c->cells_id);
    if (!mv.flags) continue; /* solid */
    lbm_surface_block_t *sb = &s->blocks[id];
    if (!sb->built) TSR_TRY(lbm_surface_build(c, b, mv.flags, sb, s->nbodies, err));
    size_t first = 0; /* the block's first cell of body k: none, no read-back */
    while (first < sb->n && sb->cells[first].body != k) ++first;
    if (first == sb->n) continue;
    const grid_field_t *h = NULL;
    TSR_TRY(field_sync(data, c->gradient_id, &h, err));
    for (size_t j = first; j < sb->n; ++j) {
      const lbm_surface_cell_t *sc = &sb->cells[j];
      if (sc->body != k) continue;
      const int *p = sc->p;
      const int64_t local = ((int64_t)p[2] * b->size[1] + p[1]) * b->size[0] + p[0];
      const int64_t g[3] = {b->lo[0] + p[0], b->lo[1] + p[1], b->lo[2] + p[2]};
      const double xyz[3] = {(double)g[0] + 0.5, (double)g[1] + 0.5, (double)g[2] + 0.5};
      double v[11];
      lbm_surface_values(c, b, h, sc, mv.rho[local], v); /* pts->width of them */
      TSR_TRY(module_points_add(pts, (g[2] * d->cells[1] + g[1]) * d->cells[0] + g[0], xyz, v,
                                err));
    }
  }
cleanup:
  return st;
}
