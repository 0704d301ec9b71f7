/* lbm_block: the flow's block data and sweep context, shared by its CPU items (lbm.c),
 * its GPU items (lbm_gpu.c) and its module (lbm_module.c): a block's cells (flags,
 * links, moments) built from the geometry, the start populations, the ramps of moving
 * walls. */
#include "lbm_block.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "field.h"
#include "grow.h"
#include "inlet_profile.h"
#include "mesh.h"
#include "tsr_size.h"
#include "voxels.h"

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
  const double two_pi = 6.283185307179586;
  if (o->init == LBM_INIT_SOUND_WAVE) { /* a standing wave, at rest: |u| peaks a quarter
                                           period later at A c_s */
    const int a = o->init_axis;
    const double k = two_pi * o->init_periods / (double)ic->c->domain.cells[a];
    const int64_t g[3] = {ic->b->lo[0] + x, ic->b->lo[1] + y, ic->b->lo[2] + z};
    out[0] = o->rho0 * (1.0 + o->init_amplitude * cos(k * ((double)g[a] + 0.5)));
    out[1] = out[2] = out[3] = 0;
    return;
  }
  if (o->init == LBM_INIT_TAYLOR_GREEN_3D) { /* one period along each axis (Brachet et al.
                                                 1983): u = u0 (sin cos cos, -kx/ky cos sin
                                                 cos, 0), p = rho0 u0^2/16 (cos 2x + cos 2y)
                                                 (cos 2z + 2) */
    double k[3], ph[3];
    for (int a = 0; a < 3; ++a) {
      k[a] = two_pi / (double)ic->c->domain.cells[a];
      ph[a] = ((double)(ic->b->lo[a] + (a == 0 ? x : a == 1 ? y : z)) + 0.5) * k[a];
    }
    const double u0 = o->init_velocity[0];
    out[1] = u0 * sin(ph[0]) * cos(ph[1]) * cos(ph[2]);
    out[2] = -u0 * k[0] / k[1] * cos(ph[0]) * sin(ph[1]) * cos(ph[2]);
    out[3] = 0;
    const double p = o->rho0 * u0 * u0 / 16.0 * (cos(2 * ph[0]) + cos(2 * ph[1])) *
                     (cos(2 * ph[2]) + 2.0);
    out[0] = o->rho0 + 3.0 * p;
    return;
  }
  /* Taylor-Green vortex in x-y, uniform along z, one period over the domain */
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
void lbm_initial_velocity(const block_info_t *b, int x, int y, int z, const void *ctx,
                                 double *out) {
  lbm_init_ctx_t ic = {ctx, b};
  double v[4];
  lbm_initial(x, y, z, &ic, v);
  for (int a = 0; a < 3; ++a) out[a] = v[1 + a];
}

void lbm_initial_density(const block_info_t *b, int x, int y, int z, const void *ctx,
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
  const bool noneq = c->opts.init_noneq && lbm_init_strained(&c->opts);
  const int flags = (c->opts.shifted ? LBM_FILL_SHIFTED : 0) | (noneq ? LBM_FILL_NONEQ : 0);
  c->kernels[dims->layout]->init(values, dims, &c->params, flags, lbm_initial, &ic);
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

/* What the link arrays of a block hold room for. */
typedef struct lbm_link_caps {
  size_t links, open, body;
} lbm_link_caps_t;

/* The links of the fluid cell (x, y, z) of block b to each wall cell it pulls from
 * (interior or ghost): pressure outlets (open links), obstacles that are bodies or
 * interpolated walls (body links), and the rest (bounce-back, moving walls, outflow). */
static tsr_status lbm_cell_links(const lbm_ctx_t *c, const block_info_t *b, lbm_block_t *lb,
                                 int x, int y, int z, lbm_link_caps_t *cap, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lattice_t *l = c->lattice;
  const grid_dims_t *d = &lb->dims;
  const int cell[3] = {x, y, z};
  for (int i = 1; i < l->q; ++i) {
    const int sx = x - l->c[0][i], sy = y - l->c[1][i], sz = z - l->c[2][i];
    const uint8_t sf = geometry_flag(&c->opts.geometry, &c->domain, b->lo[0] + sx,
                                     b->lo[1] + sy, b->lo[2] + sz);
    if (sf == GEOMETRY_FLUID) continue;
    const int face = geometry_open_face(sf);
    if (face >= 0 && c->opts.geometry.walls[face].kind == GEOMETRY_WALL_PRESSURE) {
      TSR_CHECK(grow_for_one((void **)&lb->open, &cap->open, lb->nopen, sizeof *lb->open, 64),
                TSR_ERR_NOMEM, "out of memory for the boundary links of BlockID %d", (int)b->id);
      lb->open[lb->nopen++] = lbm_open_link(c, b, d, cell, i, face);
      continue;
    }
    const int shape = sf == GEOMETRY_NOSLIP
                          ? geometry_shape_at(&c->opts.geometry, &c->domain, b->lo[0] + sx,
                                              b->lo[1] + sy, b->lo[2] + sz)
                          : -1;
    if (shape >= 0 &&
        (c->shape_body[shape] >= 0 || c->opts.geometry.shapes[shape].interpolated)) {
      TSR_CHECK(grow_for_one((void **)&lb->body, &cap->body, lb->nbody, sizeof *lb->body, 256),
                TSR_ERR_NOMEM, "out of memory for the boundary links of BlockID %d", (int)b->id);
      lb->body[lb->nbody++] = lbm_body_link(c, b, d, cell, i);
      continue;
    }
    TSR_CHECK(grow_for_one((void **)&lb->links, &cap->links, lb->nlinks, sizeof *lb->links, 256),
              TSR_ERR_NOMEM, "out of memory for the boundary links of BlockID %d", (int)b->id);
    if (face >= 0) { /* outflow: s takes the values of the cell next inwards */
      const lbm_open_link_t o = lbm_open_link(c, b, d, cell, i, face);
      lb->links[lb->nlinks++] = (lbm_link_t){.to = o.to, .from = o.from, .ghost = o.ghost};
      continue;
    }
    /* the wall's velocity where the link crosses it, half-way between the cells */
    double uw[3], at[3];
    for (int a = 0; a < 3; ++a) at[a] = (double)(b->lo[a] + cell[a]) + 0.5 - 0.5 * l->c[a][i];
    geometry_wall_velocity_at(&c->opts.geometry, &c->domain, sf, at, uw);
    double cu = l->c[0][i] * uw[0] + l->c[1][i] * uw[1] + l->c[2][i] * uw[2];
    /* moving wall: 2 w_i rho0 c_i.u_w / c_s^2; a ramped face's links in its group */
    const int moving = sf >= GEOMETRY_MOVING && sf < GEOMETRY_MOVING + 6 ? sf - GEOMETRY_MOVING
                                                                          : -1;
    lb->links[lb->nlinks++] = (lbm_link_t){
        .to = grid_index(d, sx, sy, sz, i),
        .from = grid_index(d, x, y, z, l->inv[i]),
        .extra = 2.0 * l->inv_cs2 * l->w[i] * c->opts.rho0 * cu,
        .group = moving >= 0 && c->opts.geometry.walls[moving].ramp > 0 ? 1 + moving : 0,
        .ghost = lbm_ghost_bit(d, (const int[3]){sx, sy, sz})};
  }
cleanup:
  return st;
}

tsr_status lbm_alloc_layout(const block_info_t *b, const lbm_ctx_t *c, grid_layout_t layout,
                            lbm_block_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lattice_t *l = c->lattice;
  lbm_block_t *lb = calloc(1, sizeof *lb);
  *out = NULL;
  TSR_CHECK(lb, TSR_ERR_NOMEM, "out of memory for the LBM data of BlockID %d", (int)b->id);
  lb->unstable = -1;
  lb->esize = lbm_storage_bytes(lbm_precision_storage(c->opts.precision));
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
  if (c->nbodies > 0) {
    lb->force = calloc(3 * (size_t)c->nbodies, sizeof *lb->force);
    TSR_CHECK(lb->force, TSR_ERR_NOMEM, "out of memory for the forces of BlockID %d", (int)b->id);
  }
  /* flags of the interior, and the links of every fluid cell next to a wall */
  const grid_dims_t *d = &lb->dims;
  lbm_link_caps_t cap = {0, 0, 0};
  size_t k = 0;
  for (int z = 0; z < d->nz; ++z)
    for (int y = 0; y < d->ny; ++y)
      for (int x = 0; x < d->nx; ++x, ++k) {
        uint8_t fl = geometry_flag(&c->opts.geometry, &c->domain, b->lo[0] + x, b->lo[1] + y,
                                   b->lo[2] + z);
        lb->flags[k] = fl;
        if (fl == GEOMETRY_FLUID && patch_has_bs(b, c->bs_boundary))
          TSR_TRY(lbm_cell_links(c, b, lb, x, y, z, &cap, err));
      }
done:
  *out = lb;
  lb = NULL;
cleanup:
  lbm_block_release(lb, NULL);
  return st;
}

/* The allocator of the cells of CPU blocks: the layout of the block's PDFs. */

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

void lbm_mask_walls(const lbm_ctx_t *c, lbm_block_t *lb) {
  size_t cells = lbm_cells(&lb->dims);
  for (size_t k = 0; k < cells; ++k) {
    if (lb->flags[k] == GEOMETRY_FLUID) continue;
    lb->rho[k] = c->opts.rho0;
    geometry_flag_velocity(&c->opts.geometry, lb->flags[k], lb->u + 3 * k);
  }
}

tsr_status lbm_collision_velocity(const lbm_ctx_t *c, const block_info_t *b,
                                  const block_data_t *data, lbm_block_t *lb, tsr_error_t *err) {
  const grid_field_t *uf = NULL;
  tsr_status st = field_sync(data, c->velocity_id, &uf, err);
  if (st != TSR_OK || !uf) return st;
  for (int z = 0; z < b->size[2]; ++z)
    for (int y = 0; y < b->size[1]; ++y)
      for (int x = 0; x < b->size[0]; ++x) {
        const int64_t k = ((int64_t)z * b->size[1] + y) * b->size[0] + x;
        if (lb->flags[k] != GEOMETRY_FLUID) continue; /* walls: as the flags say */
        for (int a = 0; a < 3; ++a)
          lb->u[3 * k + a] = field_value(uf->values, uf->esize, grid_index(&uf->dims, x, y, z, a));
      }
  return st;
}

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
