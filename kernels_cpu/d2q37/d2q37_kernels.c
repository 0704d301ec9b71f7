#include "d2q37_kernels.h"

#include <string.h>

#include "cpu_level.h"
#include "cpu_levels.h" /* generated: CPU_LEVEL_LIST */
#include "lattice.h"

/* the stream-collide of every level (d2q37_kernels_<level>.c) */
typedef void (*d37_sc_fn)(const void *, void *, const grid_dims_t *, const void *, const int *,
                          const int *, int);
typedef void (*d37_walls_fn)(void *, const grid_dims_t *, const void *, int, int, int);
#define D37_DECLARE(level, name)                                                         \
  void d2q37_sc_f64_##level(const void *, void *, const grid_dims_t *, const void *,         \
                            const int *, const int *, int);                              \
  void d2q37_sc_f32_##level(const void *, void *, const grid_dims_t *, const void *,         \
                            const int *, const int *, int);                              \
  void d2q37_walls_f64_##level(void *, const grid_dims_t *, const void *, int, int, int); \
  void d2q37_walls_f32_##level(void *, const grid_dims_t *, const void *, int, int, int);
CPU_LEVEL_LIST(D37_DECLARE)
#undef D37_DECLARE
#define D37_ENTRY(level, name) {d2q37_sc_f32_##level, d2q37_sc_f64_##level},
static const d37_sc_fn d37_sc[][2] = {CPU_LEVEL_LIST(D37_ENTRY)};
#undef D37_ENTRY
#define D37_ENTRY(level, name) {d2q37_walls_f32_##level, d2q37_walls_f64_##level},
static const d37_walls_fn d37_walls[][2] = {CPU_LEVEL_LIST(D37_ENTRY)};
#undef D37_ENTRY

/* The tables in double; each precision's constants are these rounded once. */
static void d37_tables(const d2q37_params_t *p, double w[D37_Q], double xx[D37_Q],
                       double xy[D37_Q], double x2[D37_CLASSES], double sh[3]) {
  static const int sq[D37_CLASSES] = {0, 1, 2, 4, 5, 8, 9, 10};
  const lattice_t *l = &lattice_d2q37;
  const double s = LATTICE_D2Q37_SCALE;
  for (int m = 0; m < D37_CLASSES; ++m) x2[m] = s * s * (double)sq[m];
  for (int i = 0; i < D37_Q; ++i) {
    w[i] = l->w[i];
    xx[i] = s * (double)l->c[0][i];
    xy[i] = s * (double)l->c[1][i];
  }
  const double gx = s * p->g[0], gy = s * p->g[1];
  sh[0] = p->tau * gx;
  sh[1] = p->tau * gy;
  sh[2] = p->tau * (1.0 - p->tau) * (gx * gx + gy * gy) * 0.5;
}

#define D37_FILL(K, T)                                                                   \
  do {                                                                                   \
    for (int i = 0; i < D37_Q; ++i) {                                                    \
      (K)->w[i] = (T)w[i];                                                               \
      (K)->xx[i] = (T)xx[i];                                                             \
      (K)->xy[i] = (T)xy[i];                                                             \
    }                                                                                    \
    for (int m = 0; m < D37_CLASSES; ++m) {                                              \
      (K)->x2[m] = (T)x2[m];                                                             \
      (K)->a[m] = (T)(x2[m] - 2.0);                                                      \
      (K)->b[m] = (T)(x2[m] - 4.0);                                                      \
      (K)->c[m] = (T)(x2[m] - 6.0);                                                      \
      (K)->h[m] = (T)(x2[m] * x2[m] - 8.0 * x2[m] + 8.0);                                \
    }                                                                                    \
    (K)->omega = (T)(1.0 / p->tau);                                                      \
    (K)->sgx = (T)sh[0];                                                                 \
    (K)->sgy = (T)sh[1];                                                                 \
    (K)->st = (T)sh[2];                                                                  \
  } while (0)

/* The walls (d37_wall_ghosts): their temperatures and twice their velocity in the frame
 * of the post-collision populations (as d2q37_init: T - g.g / 8 and u + g / 2, u = 0). */
#define D37_WALLS(K, T)                                                                  \
  do {                                                                                   \
    const double s = LATTICE_D2Q37_SCALE;                                                \
    const double tg = 0.125 * s * s * (p->g[0] * p->g[0] + p->g[1] * p->g[1]);           \
    for (int side = 0; side < 2; ++side) (K)->wt[side] = (T)(p->wall_t[side] - tg);      \
    (K)->wgx = (T)(s * p->g[0]);                                                         \
    (K)->wgy = (T)(s * p->g[1]);                                                         \
  } while (0)

void d2q37_constants(const d2q37_params_t *p, int dp, d2q37_consts_t *out) {
  double w[D37_Q], xx[D37_Q], xy[D37_Q], x2[D37_CLASSES], sh[3];
  memset(out, 0, sizeof *out);
  d37_tables(p, w, xx, xy, x2, sh);
  if (dp) {
    D37_FILL(&out->d, double);
    D37_WALLS(&out->d, double);
  } else {
    D37_FILL(&out->f, float);
    D37_WALLS(&out->f, float);
  }
}

static int d37_level(void) {
  const int level = cpu_level_current();
  return level < 0 ? 0 : level;
}

void d2q37_walls(int dp, void *src, const grid_dims_t *d, const d2q37_consts_t *k, int lo,
                 int hi, int x0, int x1) {
  for (int side = 0; side < 2 && x0 < x1; ++side)
    if (side == 0 ? lo : hi) d37_walls[d37_level()][dp ? 1 : 0](src, d, k, side, x0, x1);
}

void d2q37_stream_collide_box(int dp, const void *src, void *dst, const grid_dims_t *d,
                              const d2q37_consts_t *k, const int lo[2], const int hi[2],
                              int split) {
  if (lo[0] < hi[0] && lo[1] < hi[1])
    d37_sc[d37_level()][dp ? 1 : 0](src, dst, d, k, lo, hi, split);
}

void d2q37_stream_collide(int dp, void *src, void *dst, const grid_dims_t *d,
                          const d2q37_consts_t *k, int lo, int hi, int split) {
  const int all_lo[2] = {0, 0}, all_hi[2] = {d->nx, d->ny};
  d2q37_walls(dp, src, d, k, lo, hi, 0, d->nx);
  d2q37_stream_collide_box(dp, src, dst, d, k, all_lo, all_hi, split);
}

void d2q37_init(int dp, void *values, const grid_dims_t *d, const d2q37_consts_t *k,
                const double g[2], d2q37_init_fn fn, const void *ctx) {
  const double s = LATTICE_D2Q37_SCALE;
  const double tg = 0.125 * s * s * (g[0] * g[0] + g[1] * g[1]);
  const int gw = d->ghost;
  for (int y = -gw; y < d->ny + gw; ++y)
    for (int x = -gw; x < d->nx + gw; ++x) {
      double m[4] = {1, 0, 0, 1};
      if (x >= 0 && x < d->nx && y >= 0 && y < d->ny) fn(x, y, ctx, m);
      /* the populations after a collision whose hydrodynamic fields are m */
      m[1] = s * (m[1] + 0.5 * g[0]);
      m[2] = s * (m[2] + 0.5 * g[1]);
      m[3] -= tg;
      if (dp) {
        double feq[D37_Q];
        d37_equilibrium_d(&k->d, m[0], m[1], m[2], m[3], feq);
        for (int i = 0; i < D37_Q; ++i) ((double *)values)[grid_index(d, x, y, 0, i)] = feq[i];
      } else {
        float feq[D37_Q];
        d37_equilibrium_f(&k->f, (float)m[0], (float)m[1], (float)m[2], (float)m[3], feq);
        for (int i = 0; i < D37_Q; ++i) ((float *)values)[grid_index(d, x, y, 0, i)] = feq[i];
      }
    }
}

#define D37_MACRO(T, SUF)                                                                \
  do {                                                                                   \
    const T *v = values;                                                                 \
    T *o = out;                                                                          \
    const T inv_s = (T)(1.0 / LATTICE_D2Q37_SCALE), hx = (T)(0.5 * g[0]),                \
            hy = (T)(0.5 * g[1]), tg = (T)(0.125 * s * s * (g[0] * g[0] + g[1] * g[1])); \
    _Pragma("omp parallel for schedule(static)")                                         \
    for (int y = 0; y < d->ny; ++y)                                                      \
      for (int x = 0; x < d->nx; ++x) {                                                  \
        T f[D37_Q], rho, ux, uy, t;                                                      \
        for (int i = 0; i < D37_Q; ++i) f[i] = v[grid_index(d, x, y, 0, i)];             \
        d37_moments_##SUF(&k->SUF, f, &rho, &ux, &uy, &t);                               \
        o[grid_index(od, x, y, 0, 0)] = rho;                                             \
        o[grid_index(od, x, y, 0, 1)] = ux * inv_s - hx;                                 \
        o[grid_index(od, x, y, 0, 2)] = uy * inv_s - hy;                                 \
        o[grid_index(od, x, y, 0, 3)] = t + tg;                                          \
      }                                                                                  \
  } while (0)

void d2q37_macro(int dp, const void *values, const grid_dims_t *d, const d2q37_consts_t *k,
                 const double g[2], void *out, const grid_dims_t *od) {
  const double s = LATTICE_D2Q37_SCALE;
  if (dp) D37_MACRO(double, d);
  else D37_MACRO(float, f);
}
