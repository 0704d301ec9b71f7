/* Quantities derived from the flow: pressure (local) and, from the velocity gradient,
 * vorticity, its magnitude, the Q-criterion and the strain-rate magnitude.
 *
 * The gradient needs the neighbours' velocities, also across block faces and on every
 * hs alike: an output sweep (module_decl_t.output_sweeps) writes each block's velocity
 * (the one the outputs show) and a kind per cell (fluid, wall) into the scratch field
 * LBM_GRADIENT_INPUT, whose ghost layer the next output sweep's exchange fills; the
 * sampler then differentiates on the host. Derivatives along an axis, at cell c with
 * neighbours L and R:
 *   both fluid              (u_R - u_L) / 2
 *   a wall on one side      the parabola through the wall (half a cell away, with its
 *                           velocity: half-way bounce-back puts it there) and the two
 *                           fluid values: -4/3 u_W + u_c + 1/3 u_R (wall on the left)
 *   walls on both sides     (u_WR - u_WL) / 1
 *   an open face on a side  one-sided with the other neighbour (or 0 with none)
 * Cells beyond a non-periodic face of the domain take the face's kind (geometry_flag):
 * a wall with its velocity, or open. Along an axis the domain is one cell thick (2-D),
 * the derivative is 0. Non-fluid cells get 0. */
#include "lbm_derived.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "field.h"
#include "geometry.h"
#include "grid.h"

enum { KIND_WALL = 0, KIND_FLUID = 1, KIND_OPEN = 2 };

static const char *const lbm_gradient_names[] = {"vorticity", "vorticity_magnitude",
                                                 "q_criterion", "strain_rate", NULL};

bool lbm_gradients_named(const module_env_t *env) {
  for (const char *const *n = lbm_gradient_names; *n; ++n)
    if (module_env_named(env, *n)) return true;
  return false;
}

/* The output sweep's work on a block whose moments are current (the prepare item): its
 * velocities and kinds into the scratch field's interior, on the host, then onto the
 * device where the block lives there (its ghost layer comes with the next exchange). */
tsr_status lbm_gradient_fill(const registry_work_t *w, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  const block_info_t *b = w->batch->blocks[0];
  block_data_t *data = w->batch->data[0];
  const lbm_block_t *lb = block_data_get(data, c->cells_id); /* a GPU block's host part */
  grid_field_t *h = NULL;
  TSR_CHECK(lb && lb->u, TSR_ERR_INTERNAL, "BlockID %d lacks its moments", (int)b->id);
  TSR_TRY(field_host_for_load(data, c->gradient_id, &h, err));
  TSR_CHECK(h, TSR_ERR_INTERNAL, "BlockID %d lacks " LBM_GRADIENT_INPUT, (int)b->id);
  for (int z = 0; z < b->size[2]; ++z)
    for (int y = 0; y < b->size[1]; ++y)
      for (int x = 0; x < b->size[0]; ++x) {
        const int64_t k = ((int64_t)z * b->size[1] + y) * b->size[0] + x;
        for (int a = 0; a < 3; ++a)
          field_set(h->values, h->esize, grid_index(&h->dims, x, y, z, a), lb->u[3 * k + a]);
        field_set(h->values, h->esize, grid_index(&h->dims, x, y, z, 3),
                  lb->flags[k] == GEOMETRY_FLUID ? KIND_FLUID : KIND_WALL);
      }
  TSR_TRY(field_upload_host(data, c->gradient_id, err));
cleanup:
  return st;
}

/* A cell's velocity and kind beside the one being differentiated. */
typedef struct lbm_side {
  double u[3];
  int kind;
} lbm_side_t;

/* The cell at local (x, y, z) of block b, inside the block or one cell outside it. */
static lbm_side_t lbm_side(const lbm_ctx_t *c, const block_info_t *b, const grid_field_t *h,
                           const int p[3]) {
  lbm_side_t s = {{0, 0, 0}, KIND_FLUID};
  int64_t g[3];
  bool outside = false;
  for (int a = 0; a < 3; ++a) {
    g[a] = b->lo[a] + p[a];
    outside = outside || (!c->domain.periodic[a] && (g[a] < 0 || g[a] >= c->domain.cells[a]));
  }
  if (outside) { /* beyond a face of the domain: the face's wall or opening */
    const uint8_t flag = geometry_flag(&c->opts.geometry, &c->domain, g[0], g[1], g[2]);
    if (geometry_open_face(flag) >= 0) return (lbm_side_t){{0, 0, 0}, KIND_OPEN};
    double q[3];
    for (int a = 0; a < 3; ++a)
      q[a] = fmin(fmax((double)g[a] + 0.5, 0.0), (double)c->domain.cells[a]);
    s.kind = KIND_WALL;
    geometry_wall_velocity_at(&c->opts.geometry, &c->domain, flag, q, s.u);
    return s;
  }
  for (int a = 0; a < 3; ++a)
    s.u[a] = field_value(h->values, h->esize, grid_index(&h->dims, p[0], p[1], p[2], a));
  s.kind = (int)field_value(h->values, h->esize, grid_index(&h->dims, p[0], p[1], p[2], 3));
  return s;
}

/* d u / d x_axis at a fluid cell of velocity uc, from its neighbours l and r. */
static void lbm_derivative(const lbm_side_t *l, const double uc[3], const lbm_side_t *r,
                           double d[3]) {
  for (int a = 0; a < 3; ++a) {
    const double ul = l->u[a], ur = r->u[a], u = uc[a];
    if (l->kind == KIND_FLUID && r->kind == KIND_FLUID) d[a] = 0.5 * (ur - ul);
    else if (l->kind == KIND_WALL && r->kind == KIND_FLUID) d[a] = -4.0 / 3.0 * ul + u + ur / 3.0;
    else if (l->kind == KIND_FLUID && r->kind == KIND_WALL) d[a] = 4.0 / 3.0 * ur - u - ul / 3.0;
    else if (l->kind == KIND_WALL && r->kind == KIND_WALL) d[a] = ur - ul;
    else if (l->kind == KIND_WALL) d[a] = 2.0 * (u - ul); /* open on the right */
    else if (r->kind == KIND_WALL) d[a] = 2.0 * (ur - u); /* open on the left */
    else if (l->kind == KIND_FLUID) d[a] = u - ul;
    else if (r->kind == KIND_FLUID) d[a] = ur - u;
    else d[a] = 0.0;
  }
}

/* d u / d x at the wall a distance h in (0, 1] from a fluid cell of velocity uc, on the
 * side of sign (-1: the wall at -h, 1: at +h), through the cell and its neighbour o on the
 * other side: the derivative there of the parabola through the wall (at rest), the cell
 * and o (o not fluid: the line through the wall and the cell). */
static void lbm_wall_derivative(double h, int sign, const double uc[3], const lbm_side_t *o,
                                double d[3]) {
  for (int a = 0; a < 3; ++a) {
    /* the parabola's nodes at -h (wall), 0 (cell), 1 (o), seen with the wall on the left */
    const double v = o->kind == KIND_FLUID ? (h + 1.0) / h * uc[a] - h / (1.0 + h) * o->u[a]
                                           : uc[a] / h;
    d[a] = sign < 0 ? v : -v;
  }
}

void lbm_gradient_wall(const lbm_ctx_t *c, const block_info_t *b, const grid_field_t *h, int x,
                       int y, int z, const double wall[3][2], double g[3][3]) {
  const int p[3] = {x, y, z};
  double uc[3];
  for (int a = 0; a < 3; ++a) uc[a] = field_value(h->values, h->esize, grid_index(&h->dims, x, y, z, a));
  for (int ax = 0; ax < 3; ++ax) {
    double d[3] = {0, 0, 0};
    if (c->domain.cells[ax] > 1) {
      int pl[3] = {p[0], p[1], p[2]}, pr[3] = {p[0], p[1], p[2]};
      --pl[ax];
      ++pr[ax];
      const lbm_side_t l = lbm_side(c, b, h, pl), r = lbm_side(c, b, h, pr);
      if (wall[ax][0] > 0) lbm_wall_derivative(wall[ax][0], -1, uc, &r, d);
      else if (wall[ax][1] > 0) lbm_wall_derivative(wall[ax][1], 1, uc, &l, d);
      else lbm_derivative(&l, uc, &r, d);
    }
    for (int a = 0; a < 3; ++a) g[a][ax] = d[a];
  }
}

/* The velocity gradient g[a][b] = d u_a / d x_b at interior cell (x, y, z). */
static void lbm_gradient(const lbm_ctx_t *c, const block_info_t *b, const grid_field_t *h,
                         int x, int y, int z, double g[3][3]) {
  static const double none[3][2] = {{0, 0}, {0, 0}, {0, 0}};
  lbm_gradient_wall(c, b, h, x, y, z, none, g);
}

/* The derived value(s) of gradient g into out. */
static void lbm_from_gradient(int what, double g[3][3], double *out) {
  const double w[3] = {g[2][1] - g[1][2], g[0][2] - g[2][0], g[1][0] - g[0][1]};
  double s2 = 0, o2 = 0; /* S_ij S_ij and Omega_ij Omega_ij */
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const double s = 0.5 * (g[i][j] + g[j][i]), o = 0.5 * (g[i][j] - g[j][i]);
      s2 += s * s;
      o2 += o * o;
    }
  switch (what) {
  case LBM_Q_VORTICITY: out[0] = w[0], out[1] = w[1], out[2] = w[2]; break;
  case LBM_Q_VORTICITY_MAGNITUDE: out[0] = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]); break;
  case LBM_Q_Q_CRITERION: out[0] = 0.5 * (o2 - s2); break;
  default: out[0] = sqrt(2.0 * s2); break; /* LBM_Q_STRAIN_RATE */
  }
}

tsr_status lbm_sample_gradient(const lbm_ctx_t *c, int what, const block_info_t *b,
                               const block_data_t *data, double *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const int n = what == LBM_Q_VORTICITY ? 3 : 1;
  const lbm_block_t *lb = block_data_get(data, c->cells_id);
  const grid_field_t *h = NULL;
  if (lb && lb->flags) TSR_TRY(field_sync(data, c->gradient_id, &h, err));
  for (int z = 0; z < b->size[2]; ++z)
    for (int y = 0; y < b->size[1]; ++y)
      for (int x = 0; x < b->size[0]; ++x) {
        const int64_t k = ((int64_t)z * b->size[1] + y) * b->size[0] + x;
        double *o = out + (size_t)n * (size_t)k;
        if (!h || lb->flags[k] != GEOMETRY_FLUID) { /* walls, and blocks without fluid */
          for (int i = 0; i < n; ++i) o[i] = 0.0;
          continue;
        }
        double g[3][3];
        lbm_gradient(c, b, h, x, y, z, g);
        lbm_from_gradient(what, g, o);
      }
cleanup:
  return st;
}
