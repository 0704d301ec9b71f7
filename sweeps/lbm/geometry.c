#include "geometry.h"

#include "inlet_profile.h"
#include "mesh.h"
#include "voxels.h"

#include <math.h>
#include <string.h>

bool geometry_wall_moves(geometry_wall_kind_t kind) {
  return kind == GEOMETRY_WALL_MOVING || kind == GEOMETRY_WALL_VELOCITY;
}

bool geometry_wall_open(geometry_wall_kind_t kind) {
  return kind == GEOMETRY_WALL_PRESSURE || kind == GEOMETRY_WALL_OUTFLOW;
}

int geometry_open_face(uint8_t flag) {
  return flag >= GEOMETRY_OPEN && flag < GEOMETRY_OPEN + 6 ? flag - GEOMETRY_OPEN : -1;
}

geometry_t geometry_default(void) {
  geometry_t g = {0};
  for (int f = 0; f < 6; ++f) g.walls[f].kind = GEOMETRY_WALL_NOSLIP, g.walls[f].density = 1.0;
  return g;
}

tsr_status geometry_validate(const geometry_t *g, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(g->nshapes >= 0 && g->nshapes <= GEOMETRY_MAX_SHAPES, TSR_ERR_INVALID,
            "obstacles: %d shapes; at most %d are allowed", g->nshapes, GEOMETRY_MAX_SHAPES);
  static const char *const faces[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};
  for (int f = 0; f < 6; ++f) {
    const geometry_wall_t *w = &g->walls[f];
    TSR_CHECK(w->kind == GEOMETRY_WALL_NOSLIP || geometry_wall_moves(w->kind) ||
                  geometry_wall_open(w->kind),
              TSR_ERR_INVALID,
              "boundaries.%s: unknown wall kind %d", faces[f], (int)w->kind);
    TSR_CHECK(w->profile == GEOMETRY_PROFILE_UNIFORM || w->profile == GEOMETRY_PROFILE_PARABOLIC ||
                  (w->profile == GEOMETRY_PROFILE_FILE && w->table),
              TSR_ERR_INVALID, "boundaries.%s: unknown profile %d", faces[f], (int)w->profile);
    TSR_CHECK(w->kind != GEOMETRY_WALL_PRESSURE || (w->density > 0 && isfinite(w->density)),
              TSR_ERR_INVALID, "boundaries.%s.density = %g; allowed are finite values > 0",
              faces[f], w->density);
    TSR_CHECK(w->kind != GEOMETRY_WALL_MOVING || w->velocity[f / 2] == 0.0, TSR_ERR_INVALID,
              "boundaries.%s.velocity[%d] = %g: a wall moves along its own plane; the normal "
              "component must be 0", faces[f], f / 2, w->velocity[f / 2]);
  }
  for (int i = 0; i < g->nshapes; ++i) {
    const geometry_shape_t *s = &g->shapes[i];
    switch (s->kind) {
    case GEOMETRY_BOX:
      for (int a = 0; a < 3; ++a)
        TSR_CHECK(s->min[a] <= s->max[a], TSR_ERR_INVALID,
                  "obstacles[%d]: box min[%d] = %g exceeds max[%d] = %g", i, a, s->min[a], a,
                  s->max[a]);
      break;
    case GEOMETRY_SPHERE:
    case GEOMETRY_CYLINDER:
      TSR_CHECK(s->radius > 0 && isfinite(s->radius), TSR_ERR_INVALID,
                "obstacles[%d]: radius = %g; allowed are finite values > 0", i, s->radius);
      TSR_CHECK(s->kind != GEOMETRY_CYLINDER || (s->axis >= 0 && s->axis <= 2), TSR_ERR_INVALID,
                "obstacles[%d]: cylinder axis %d; allowed are x, y, z", i, s->axis);
      break;
    case GEOMETRY_MESH:
      TSR_CHECK(s->mesh, TSR_ERR_INVALID, "obstacles[%d]: a mesh shape without its mesh", i);
      break;
    case GEOMETRY_IMAGE:
      TSR_CHECK(s->voxels, TSR_ERR_INVALID, "obstacles[%d]: an image shape without its image", i);
      break;
    default:
      TSR_FAIL(TSR_ERR_INVALID, "obstacles[%d]: unknown shape kind %d", i, (int)s->kind);
    }
  }
cleanup:
  return st;
}

bool geometry_inside(const geometry_shape_t *s, const double p[3]) {
  switch (s->kind) {
  case GEOMETRY_BOX:
    return p[0] >= s->min[0] && p[0] <= s->max[0] && p[1] >= s->min[1] && p[1] <= s->max[1] &&
           p[2] >= s->min[2] && p[2] <= s->max[2];
  case GEOMETRY_SPHERE: {
    double r2 = 0;
    for (int a = 0; a < 3; ++a) r2 += (p[a] - s->center[a]) * (p[a] - s->center[a]);
    return r2 <= s->radius * s->radius;
  }
  case GEOMETRY_CYLINDER: {
    double r2 = 0;
    for (int a = 0; a < 3; ++a)
      if (a != s->axis) r2 += (p[a] - s->center[a]) * (p[a] - s->center[a]);
    return r2 <= s->radius * s->radius;
  }
  case GEOMETRY_MESH:
    return geometry_mesh_inside(s->mesh, p);
  case GEOMETRY_IMAGE:
    return voxels_inside(s->voxels, p);
  }
  return false;
}

/* geometry_flag, with voxel images or without them (images: false). */
static uint8_t geometry_flag_of(const geometry_t *g, const patch_options_t *domain, int64_t gx,
                                int64_t gy, int64_t gz, bool images) {
  int64_t c[3] = {gx, gy, gz};
  int moving_face = -1, open_face = -1;
  bool wall = false;
  for (int a = 0; a < 3; ++a) {
    int64_t n = domain->cells[a];
    if (c[a] >= 0 && c[a] < n) continue;
    if (domain->periodic[a]) {
      c[a] = (c[a] % n + n) % n;
      continue;
    }
    int face = 2 * a + (c[a] >= n ? 1 : 0);
    if (geometry_wall_open(g->walls[face].kind)) {
      if (open_face < 0) open_face = face;
      continue;
    }
    wall = true;
    if (geometry_wall_moves(g->walls[face].kind) && moving_face < 0) moving_face = face;
  }
  if (moving_face >= 0) return (uint8_t)(GEOMETRY_MOVING + moving_face);
  if (wall) return GEOMETRY_NOSLIP;
  if (open_face >= 0) return (uint8_t)(GEOMETRY_OPEN + open_face);
  double p[3] = {(double)c[0] + 0.5, (double)c[1] + 0.5, (double)c[2] + 0.5};
  for (int i = 0; i < g->nshapes; ++i)
    if ((images || g->shapes[i].kind != GEOMETRY_IMAGE) && geometry_inside(&g->shapes[i], p))
      return GEOMETRY_NOSLIP;
  return GEOMETRY_FLUID;
}

uint8_t geometry_flag(const geometry_t *g, const patch_options_t *domain, int64_t gx, int64_t gy,
                      int64_t gz) {
  return geometry_flag_of(g, domain, gx, gy, gz, true);
}

void geometry_flag_velocity(const geometry_t *g, uint8_t flag, double u[3]) {
  for (int a = 0; a < 3; ++a) u[a] = 0;
  if (flag >= GEOMETRY_MOVING && flag < GEOMETRY_MOVING + 6)
    for (int a = 0; a < 3; ++a) u[a] = g->walls[flag - GEOMETRY_MOVING].velocity[a];
}

void geometry_wall_velocity_at(const geometry_t *g, const patch_options_t *domain, uint8_t flag,
                               const double p[3], double u[3]) {
  geometry_flag_velocity(g, flag, u);
  if (flag < GEOMETRY_MOVING || flag >= GEOMETRY_MOVING + 6) return;
  const int face = flag - GEOMETRY_MOVING;
  const geometry_wall_t *w = &g->walls[face];
  if (w->kind == GEOMETRY_WALL_VELOCITY && w->profile == GEOMETRY_PROFILE_FILE) {
    inlet_profile_velocity(w->table, p, u);
    return;
  }
  if (w->kind != GEOMETRY_WALL_VELOCITY || w->profile != GEOMETRY_PROFILE_PARABOLIC) return;
  double scale = 1.0;
  for (int a = 0; a < 3; ++a) {
    if (a == face / 2 || domain->periodic[a]) continue;
    const double n = (double)domain->cells[a], s = fmin(fmax(p[a], 0.0), n);
    scale *= 4.0 * s * (n - s) / (n * n);
  }
  for (int a = 0; a < 3; ++a) u[a] *= scale;
}

static void geometry_bounds(const geometry_shape_t *s, double lo[3], double hi[3]);

/* c[] wrapped into the domain on periodic axes; false where it lies beyond a
   non-periodic face. */
static bool geometry_wrap(const patch_options_t *domain, int64_t c[3]) {
  for (int a = 0; a < 3; ++a) {
    const int64_t n = domain->cells[a];
    if (c[a] >= 0 && c[a] < n) continue;
    if (!domain->periodic[a]) return false;
    c[a] = (c[a] % n + n) % n;
  }
  return true;
}

int geometry_bodies(const geometry_t *g, int body[GEOMETRY_MAX_SHAPES],
                    const char *names[GEOMETRY_MAX_SHAPES]) {
  int n = 0;
  for (int i = 0; i < g->nshapes; ++i) {
    body[i] = -1;
    if (!g->shapes[i].name[0]) continue;
    for (int k = 0; k < n && body[i] < 0; ++k)
      if (strcmp(names[k], g->shapes[i].name) == 0) body[i] = k;
    if (body[i] < 0) {
      names[n] = g->shapes[i].name;
      body[i] = n++;
    }
  }
  return n;
}

int geometry_shape_at(const geometry_t *g, const patch_options_t *domain, int64_t gx, int64_t gy,
                      int64_t gz) {
  int64_t c[3] = {gx, gy, gz};
  if (!geometry_wrap(domain, c)) return -1;
  const double p[3] = {(double)c[0] + 0.5, (double)c[1] + 0.5, (double)c[2] + 0.5};
  for (int i = 0; i < g->nshapes; ++i)
    if (geometry_inside(&g->shapes[i], p)) return i;
  return -1;
}

/* The smallest t in [0, 1] where p + t d lies in shape s (p outside it), or 2 where the
   segment misses it. */
static double geometry_entry(const geometry_shape_t *s, const double p[3], const double d[3]) {
  if (s->kind == GEOMETRY_MESH) return geometry_mesh_entry(s->mesh, p, d);
  if (s->kind == GEOMETRY_IMAGE) return voxels_entry(s->voxels, p, d);
  if (s->kind == GEOMETRY_BOX) { /* slabs: the latest entry, the earliest exit */
    double t0 = 0.0, t1 = 1.0;
    for (int a = 0; a < 3; ++a) {
      if (d[a] == 0.0) {
        if (p[a] < s->min[a] || p[a] > s->max[a]) return 2.0;
        continue;
      }
      double ta = (s->min[a] - p[a]) / d[a], tb = (s->max[a] - p[a]) / d[a];
      if (ta > tb) {
        const double x = ta;
        ta = tb;
        tb = x;
      }
      t0 = fmax(t0, ta);
      t1 = fmin(t1, tb);
    }
    return t0 <= t1 ? t0 : 2.0;
  }
  /* sphere, cylinder: |(p - c) + t d|^2 = r^2 (the cylinder's axis left out) */
  double A = 0, B = 0, C = 0;
  for (int a = 0; a < 3; ++a) {
    if (s->kind == GEOMETRY_CYLINDER && a == s->axis) continue;
    const double q = p[a] - s->center[a];
    A += d[a] * d[a];
    B += q * d[a];
    C += q * q;
  }
  C -= s->radius * s->radius;
  const double disc = B * B - A * C;
  if (A == 0.0 || disc < 0.0) return 2.0;
  /* the smaller root, in the form without cancellation */
  const double t = C / (-B + sqrt(disc));
  return t >= 0.0 && t <= 1.0 ? t : 2.0;
}

double geometry_link_fraction(const geometry_t *g, const patch_options_t *domain, int64_t gx,
                              int64_t gy, int64_t gz, const int c[3], int *shape) {
  int64_t s[3] = {gx + c[0], gy + c[1], gz + c[2]};
  *shape = -1;
  if (!geometry_wrap(domain, s)) return 1.0;
  /* the fluid centre in the frame of the wrapped solid cell */
  const double p[3] = {(double)(s[0] - c[0]) + 0.5, (double)(s[1] - c[1]) + 0.5,
                       (double)(s[2] - c[2]) + 0.5};
  const double d[3] = {c[0], c[1], c[2]};
  double best = 2.0;
  for (int i = 0; i < g->nshapes; ++i) {
    const double t = geometry_entry(&g->shapes[i], p, d);
    if (t < best) {
      best = t;
      *shape = i;
    }
  }
  /* the solid centre lies in a shape, so the segment enters one; rounding aside */
  if (best > 1.0) {
    *shape = geometry_shape_at(g, domain, s[0], s[1], s[2]);
    return 1.0;
  }
  return best > 0.0 ? best : 1e-12;
}

bool geometry_covers_a_cell(const geometry_shape_t *s, const patch_options_t *domain) {
  double lo[3], hi[3], p[3], r0[3], r1[3];
  if (s->kind == GEOMETRY_IMAGE) return voxels_any(s->voxels); /* it lies in the domain */
  geometry_bounds(s, lo, hi);
  for (int a = 0; a < 3; ++a) {
    /* cells i with lo <= i + 0.5 <= hi, inside the domain */
    const double n = (double)domain->cells[a];
    const double i0 = fmax(0.0, ceil(lo[a] - 0.5)), i1 = fmin(n - 1.0, floor(hi[a] - 0.5));
    if (i0 > i1) return false;
    r0[a] = i0;
    r1[a] = i1;
    if (s->kind == GEOMETRY_MESH) continue;
    /* the squared distance is a sum over axes, so the nearest centre along each axis
       (cell floor(c), clamped to the range) gives the nearest centre of all */
    const double c = s->kind == GEOMETRY_BOX ? lo[a] : s->center[a];
    p[a] = fmin(fmax(floor(c), i0), i1) + 0.5;
  }
  if (s->kind == GEOMETRY_MESH) { /* the centres in the bounds until one is inside */
    for (p[2] = r0[2] + 0.5; p[2] <= r1[2] + 0.5; p[2] += 1.0)
      for (p[1] = r0[1] + 0.5; p[1] <= r1[1] + 0.5; p[1] += 1.0)
        for (p[0] = r0[0] + 0.5; p[0] <= r1[0] + 0.5; p[0] += 1.0)
          if (geometry_inside(s, p)) return true;
    return false;
  }
  return s->kind == GEOMETRY_BOX || geometry_inside(s, p);
}

/* Axis-aligned bounds of a shape (cell-centre coordinates); cylinders are unbounded
 * along their axis. */
static void geometry_bounds(const geometry_shape_t *s, double lo[3], double hi[3]) {
  if (s->kind == GEOMETRY_MESH) {
    geometry_mesh_bounds(s->mesh, lo, hi);
    return;
  }
  if (s->kind == GEOMETRY_IMAGE) {
    voxels_bounds(s->voxels, lo, hi);
    return;
  }
  for (int a = 0; a < 3; ++a) {
    if (s->kind == GEOMETRY_BOX) {
      lo[a] = s->min[a];
      hi[a] = s->max[a];
    } else if (s->kind == GEOMETRY_CYLINDER && a == s->axis) {
      lo[a] = -1e300;
      hi[a] = 1e300;
    } else {
      lo[a] = s->center[a] - s->radius;
      hi[a] = s->center[a] + s->radius;
    }
  }
}

/* Some shape but a voxel image may cover a cell of the block or of its ghost layer, also
 * seen across a periodic boundary. */
static bool geometry_shapes_near(const geometry_t *g, const patch_options_t *d, const block_info_t *b) {
  for (int i = 0; i < g->nshapes; ++i) {
    double lo[3], hi[3];
    if (g->shapes[i].kind == GEOMETRY_IMAGE) continue;
    geometry_bounds(&g->shapes[i], lo, hi);
    for (int sz = -1; sz <= 1; ++sz)
      for (int sy = -1; sy <= 1; ++sy)
        for (int sx = -1; sx <= 1; ++sx) {
          int shift[3] = {sx, sy, sz};
          bool hit = true;
          for (int a = 0; a < 3 && hit; ++a) {
            if (shift[a] != 0 && !d->periodic[a]) hit = false;
            double off = (double)shift[a] * (double)d->cells[a];
            double blo = (double)b->lo[a] - 0.5 + off, bhi = (double)(b->lo[a] + b->size[a]) + 0.5 + off;
            hit = hit && lo[a] <= bhi && hi[a] >= blo;
          }
          if (hit) return true;
        }
  }
  return false;
}

geometry_class_t geometry_classify(const geometry_t *g, const patch_options_t *domain,
                                   const block_info_t *b) {
  bool image_touches = false, image_fills = false; /* the images' summaries of the block */
  for (int i = 0; i < g->nshapes; ++i)
    if (g->shapes[i].kind == GEOMETRY_IMAGE) {
      image_touches = image_touches || voxels_block_touched(g->shapes[i].voxels, b->id);
      image_fills = image_fills || voxels_block_full(g->shapes[i].voxels, b->id);
    }
  if (image_fills) return GEOMETRY_CLASS_SOLID;
  if (!geometry_shapes_near(g, domain, b)) {
    /* only the domain's walls matter: decided from the block's place, without a scan */
    for (int a = 0; a < 3; ++a)
      if (!domain->periodic[a] && (b->lo[a] == 0 || b->lo[a] + b->size[a] == domain->cells[a]))
        return GEOMETRY_CLASS_BOUNDARY;
    return image_touches ? GEOMETRY_CLASS_BOUNDARY : GEOMETRY_CLASS_FLUID;
  }
  bool any_wall = false, all_wall = true;
  for (int z = -1; z <= b->size[2]; ++z)
    for (int y = -1; y <= b->size[1]; ++y)
      for (int x = -1; x <= b->size[0]; ++x) {
        bool wall = geometry_flag_of(g, domain, b->lo[0] + x, b->lo[1] + y, b->lo[2] + z,
                                     false) != GEOMETRY_FLUID;
        bool interior = x >= 0 && y >= 0 && z >= 0 && x < b->size[0] && y < b->size[1] && z < b->size[2];
        any_wall = any_wall || wall;
        if (interior && !wall) all_wall = false;
      }
  if (all_wall) return GEOMETRY_CLASS_SOLID;
  return any_wall || image_touches ? GEOMETRY_CLASS_BOUNDARY : GEOMETRY_CLASS_FLUID;
}

tsr_status geometry_prepare(const geometry_t *g, const block_info_t *b, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (int i = 0; i < g->nshapes; ++i)
    if (g->shapes[i].kind == GEOMETRY_IMAGE)
      TSR_TRY(voxels_prepare(g->shapes[i].voxels, b->lo, b->size, err));
cleanup:
  return st;
}
