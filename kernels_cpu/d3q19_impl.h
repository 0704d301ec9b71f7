/* d3q19_impl.h: the D3Q19 kernels, written once for both precisions. Included by d3q19.c
 * only, with REAL (float or double) and SFX (f32 or f64) defined, and the precision-free
 * helpers of d3q19.c (D3Q19_CHUNK, D3Q19_ALIGNED, the run stores, and on AVX-512 the
 * vector gathers and puts) in scope. The collision itself is d3q19_collide.h.
 *
 * Stream-collide goes along x rows. Where the CPU has AVX-512, runs of one vector of
 * cells are collided in vector lanes (d3q19.c describes the loads and stores); rows
 * shorter than a vector, and every row on other CPUs, take the portable code: runs of at
 * most D3Q19_CHUNK cells, vectorised by the compiler over x (the 19 pulled values are
 * loads with stride 19 from the source field, the results go to a per-thread buffer of
 * 19 rows, which is put back into the cell layout and written out as one contiguous
 * run). Every cell goes through the same operations in the same order whatever its
 * position, block or run, and the kernels are compiled without floating-point
 * contraction. */
#include "d3q19_collide.h"

#define LBM_CAT2(a, b) a##_##b
#define LBM_CAT(a, b) LBM_CAT2(a, b)
#define LBM_FN(name) LBM_CAT(name, SFX)
/* f_i pulled into cell x of the run (s: the run's first cell, off: see below) and the
 * post-collision f_i of cell x (out: one row per direction). */
#define LBM_LD(I) s[off[I] + (ptrdiff_t)x * D3Q19_Q]
#define LBM_ST(I, V) out[I][x] = (V)

/* Per-run constants of the collision, in the storage precision (d3q19_collide.h). */
typedef struct LBM_FN(d3q19_consts) {
  D3Q19_CONSTS_FIELDS(REAL)
} LBM_FN(d3q19_consts_t);

static void LBM_FN(d3q19_consts_init)(LBM_FN(d3q19_consts_t) *k, const d3q19_params_t *p, int trt) {
  const REAL rho0 = (REAL)p->rho0;
  const REAL fx = (REAL)p->force[0], fy = (REAL)p->force[1], fz = (REAL)p->force[2];
  const REAL sp = (REAL)(1.0 - 0.5 * p->omega_plus);
  const REAL sm = (REAL)(1.0 - 0.5 * (trt ? p->omega_minus : p->omega_plus));
  for (int i = 0; i < D3Q19_Q; ++i) {
    const REAL w = (REAL)d3q19_w[i];
    const REAL cf = (REAL)d3q19_c[i][0] * fx + (REAL)d3q19_c[i][1] * fy + (REAL)d3q19_c[i][2] * fz;
    k->w[i] = w;
    k->wr3[i] = w * rho0 * (REAL)3;
    k->cf[i] = cf;
    k->cf3[i] = (REAL)3 * cf;
    k->spw[i] = sp * w;
    k->smw3cf[i] = sm * w * (REAL)3 * cf;
  }
  k->rho0 = rho0;
  k->inv_rho0 = (REAL)(1.0 / p->rho0);
  k->op = (REAL)p->omega_plus;
  k->om = (REAL)(trt ? p->omega_minus : p->omega_plus);
  k->fx = fx;
  k->fy = fy;
  k->fz = fz;
  k->hfx = (REAL)0.5 * fx;
  k->hfy = (REAL)0.5 * fy;
  k->hfz = (REAL)0.5 * fz;
}

void LBM_FN(d3q19_collision_constants)(const d3q19_params_t *p, int trt, REAL *out) {
  LBM_FN(d3q19_consts_t) k;
  _Static_assert(sizeof k == D3Q19_CONSTS_COUNT * sizeof(REAL), "constants are packed");
  LBM_FN(d3q19_consts_init)(&k, p, trt);
  memcpy(out, &k, sizeof k);
}

/* Streaming alone (no collision): each pulled value is stored as it is. */
#define LBM_COPY_CELL                                                                    \
  for (int i = 0; i < D3Q19_Q; ++i) LBM_ST(i, LBM_LD(i));

#define LBM_DEFINE_COLLIDE(NAME, BODY)                                                   \
  static void LBM_FN(NAME)(int n, const REAL *restrict s, const ptrdiff_t *restrict off, \
                           REAL (*restrict out)[D3Q19_CHUNK],                            \
                           const LBM_FN(d3q19_consts_t) *restrict k) {                   \
    LBM_COLLIDE_CONSTS;                                                                  \
    _Pragma("omp simd")                                                                  \
    for (int x = 0; x < n; ++x) {                                                        \
      BODY                                                                               \
    }                                                                                    \
  }

/* The five kernel variants of a code path whose functions are named P_<variant>, and
 * the one of them a run uses (trt: 0 SRT, 1 TRT, 2 streaming alone, 3 copy of cells). */
#define LBM_VARIANTS(DEFINE, P)                                                          \
  DEFINE(P##_srt, LBM_COLLIDE_CELL(0, 0))                                                \
  DEFINE(P##_srt_force, LBM_COLLIDE_CELL(0, 1))                                          \
  DEFINE(P##_trt, LBM_COLLIDE_CELL(1, 0))                                                \
  DEFINE(P##_trt_force, LBM_COLLIDE_CELL(1, 1))                                          \
  DEFINE(P##_copy, LBM_COPY_CELL)
#define LBM_PICK(P)                                                                      \
  (trt >= 2 ? LBM_FN(P##_copy)                                                           \
   : trt    ? (p->use_force ? LBM_FN(P##_trt_force) : LBM_FN(P##_trt))                   \
            : (p->use_force ? LBM_FN(P##_srt_force) : LBM_FN(P##_srt)))

#define LBM_T REAL
#define LBM_ZERO ((REAL)0)
LBM_VARIANTS(LBM_DEFINE_COLLIDE, d3q19_collide)
#undef LBM_T
#undef LBM_ZERO

typedef void (*LBM_FN(d3q19_collide_fn))(int n, const REAL *restrict s,
                                          const ptrdiff_t *restrict off,
                                          REAL (*restrict out)[D3Q19_CHUNK],
                                          const LBM_FN(d3q19_consts_t) *restrict k);

#ifdef D3Q19_SIMD
/* One vector of cells: the first n <= D3Q19_VW cells from s (the first cell's slot 0
 * in the source field) to d (the same cell in the destination field). */
#undef LBM_LD
#undef LBM_ST
#define LBM_LD(I) LBM_FN(d3q19_gather)(s + off[I], lanes)
#define LBM_ST(I, V) o[I] = (V)
#define LBM_DEFINE_COLLIDE_VEC(NAME, BODY)                                               \
  static void LBM_FN(NAME)(int n, const REAL *restrict s, const ptrdiff_t *restrict off, \
                           REAL *restrict d, const LBM_FN(d3q19_consts_t) *restrict k) { \
    LBM_COLLIDE_CONSTS;                                                                  \
    const unsigned lanes = (1u << n) - 1;                                                \
    LBM_T o[D3Q19_Q];                                                                    \
    BODY                                                                                 \
    LBM_FN(d3q19_put)(o, d, n);                                                          \
  }
#define LBM_T LBM_FN(d3q19_vec)
#define LBM_ZERO ((LBM_T){0})
LBM_VARIANTS(LBM_DEFINE_COLLIDE_VEC, d3q19_collide_vec)
#undef LBM_T
#undef LBM_ZERO
typedef void (*LBM_FN(d3q19_collide_vec_fn))(int n, const REAL *restrict s,
                                              const ptrdiff_t *restrict off, REAL *restrict d,
                                              const LBM_FN(d3q19_consts_t) *restrict k);
#define LBM_VW LBM_CAT(D3Q19_VW, SFX)
#else
#define LBM_VW 0
#endif

/* trt: 0 SRT, 1 TRT, 2 streaming alone, 3 every cell's values copied from the same cell
   (no pull) */
static void LBM_FN(d3q19_stream_collide)(const REAL *restrict src, REAL *restrict dst,
                                         const aos_dims_t *dims, const d3q19_params_t *p,
                                         int trt) {
  const int nx = dims->nx, ny = dims->ny, nz = dims->nz;
  const ptrdiff_t sx = (ptrdiff_t)nx + 2, sxy = sx * ((ptrdiff_t)ny + 2);
  /* element offset of the value pulled into slot i: cell - c_i, component i */
  ptrdiff_t off[D3Q19_Q];
  for (int i = 0; i < D3Q19_Q; ++i)
    off[i] = ((ptrdiff_t)d3q19_c[i][0] + (ptrdiff_t)d3q19_c[i][1] * sx +
              (ptrdiff_t)d3q19_c[i][2] * sxy) * -D3Q19_Q + i;
  if (trt == 3)
    for (int i = 0; i < D3Q19_Q; ++i) off[i] = i;
  LBM_FN(d3q19_consts_t) k;
  LBM_FN(d3q19_consts_init)(&k, p, trt);
  const LBM_FN(d3q19_collide_fn) collide = LBM_PICK(d3q19_collide);
#ifdef D3Q19_SIMD
  const LBM_FN(d3q19_collide_vec_fn) collide_vec = LBM_PICK(d3q19_collide_vec);
#endif
#pragma omp parallel
  {
    D3Q19_ALIGNED REAL out[D3Q19_Q][D3Q19_CHUNK];
    D3Q19_ALIGNED REAL cells[D3Q19_CHUNK * D3Q19_Q];
#pragma omp for collapse(2) schedule(static)
    for (int z = 0; z < nz; ++z)
      for (int y = 0; y < ny; ++y) {
        const ptrdiff_t row = (ptrdiff_t)(z + 1) * sxy + (ptrdiff_t)(y + 1) * sx + 1;
        int x0 = 0;
#ifdef D3Q19_SIMD
        /* vectors; the last one of a row may have lanes masked off. Rows shorter than
           a vector take the scalar code. Of the nine source rows of a row only one,
           (y + 1, z + 1) (where direction 16, c = (0, -1, -1), pulls from), is new to
           the caches when rows advance along y then z: its lines are asked for two
           vectors ahead (prefetches past the row's end are harmless). */
        if (nx >= LBM_VW)
          for (; x0 < nx; x0 += LBM_VW) {
            d3q19_prefetch_run((uintptr_t)(src + (row + x0) * D3Q19_Q + off[16]) +
                               2 * D3Q19_RUN_BYTES);
            collide_vec(nx - x0 < LBM_VW ? nx - x0 : LBM_VW, src + (row + x0) * D3Q19_Q, off,
                        dst + (row + x0) * D3Q19_Q, &k);
          }
#endif
        for (; x0 < nx; x0 += D3Q19_CHUNK) {
          const int n = nx - x0 < D3Q19_CHUNK ? nx - x0 : D3Q19_CHUNK;
          const ptrdiff_t base = (row + x0) * D3Q19_Q;
          collide(n, src + base, off, out, &k);
          /* back to the cell layout, then out to the field in one sweep of stores */
          for (int x = 0; x < n; ++x)
            for (int i = 0; i < D3Q19_Q; ++i) cells[x * D3Q19_Q + i] = out[i][x];
          LBM_FN(d3q19_store_run)(dst + base, cells, (size_t)n * D3Q19_Q);
        }
      }
    d3q19_store_fence();
  }
}

void LBM_FN(d3q19_stream_collide_srt)(const REAL *restrict src, REAL *restrict dst,
                                    const aos_dims_t *dims, const d3q19_params_t *p) {
  LBM_FN(d3q19_stream_collide)(src, dst, dims, p, 0);
}

void LBM_FN(d3q19_stream_collide_trt)(const REAL *restrict src, REAL *restrict dst,
                                    const aos_dims_t *dims, const d3q19_params_t *p) {
  LBM_FN(d3q19_stream_collide)(src, dst, dims, p, 1);
}

void LBM_FN(d3q19_stream_only)(const REAL *restrict src, REAL *restrict dst,
                             const aos_dims_t *dims) {
  const d3q19_params_t p = {1.0, 1.0, 1.0, {0, 0, 0}, 0};
  LBM_FN(d3q19_stream_collide)(src, dst, dims, &p, 2);
}

void LBM_FN(d3q19_copy_cells)(const REAL *restrict src, REAL *restrict dst,
                             const aos_dims_t *dims) {
  const d3q19_params_t p = {1.0, 1.0, 1.0, {0, 0, 0}, 0};
  LBM_FN(d3q19_stream_collide)(src, dst, dims, &p, 3);
}

void LBM_FN(d3q19_init)(REAL *f, const aos_dims_t *dims, const d3q19_params_t *p, int shifted,
                      d3q19_init_fn init, void *ctx) {
  /* parallel like the kernels, so that pages land near the threads that use them */
#pragma omp parallel for schedule(static)
  for (int z = -1; z <= dims->nz; ++z)
    for (int y = -1; y <= dims->ny; ++y)
      for (int x = -1; x <= dims->nx; ++x) {
        bool ghost = x < 0 || y < 0 || z < 0 || x == dims->nx || y == dims->ny || z == dims->nz;
        double m[4] = {p->rho0, 0, 0, 0};
        if (!ghost && init) init(x, y, z, ctx, m);
        double usq = 1.5 * (m[1] * m[1] + m[2] * m[2] + m[3] * m[3]);
        REAL *out = f + aos_index(dims, x, y, z, 0);
        for (int i = 0; i < D3Q19_Q; ++i) {
          double cu = d3q19_c[i][0] * m[1] + d3q19_c[i][1] * m[2] + d3q19_c[i][2] * m[3];
          double rho = shifted ? m[0] - p->rho0 : m[0];
          out[i] = (REAL)(d3q19_w[i] * (rho + p->rho0 * (3.0 * cu + 4.5 * cu * cu - usq)));
        }
      }
}

void LBM_FN(d3q19_moments)(const REAL *f, const aos_dims_t *dims, const d3q19_params_t *p,
                         int shifted, double *rho_out, double *u_out) {
  /* stored PDFs are post-collision: their momentum holds the whole force of the step,
     the fluid velocity half of it */
  const double half = p->use_force ? -0.5 : 0.0;
  size_t n = 0;
  for (int z = 0; z < dims->nz; ++z)
    for (int y = 0; y < dims->ny; ++y)
      for (int x = 0; x < dims->nx; ++x, ++n) {
        const REAL *c = f + aos_index(dims, x, y, z, 0);
        double rho = 0, j[3] = {0, 0, 0};
        for (int i = 0; i < D3Q19_Q; ++i) {
          rho += (double)c[i];
          for (int a = 0; a < 3; ++a) j[a] += d3q19_c[i][a] * (double)c[i];
        }
        rho_out[n] = shifted ? rho + p->rho0 : rho;
        for (int a = 0; a < 3; ++a) u_out[3 * n + (size_t)a] = (j[a] + half * p->force[a]) / p->rho0;
      }
}

void LBM_FN(d3q19_boundary_apply)(REAL *f, const d3q19_link_t *links, size_t n) {
  /* links write wall slots and read fluid slots: independent, in any order */
#pragma omp parallel for schedule(static) if (n > 8192)
  for (size_t k = 0; k < n; ++k) f[links[k].to] = f[links[k].from] + (REAL)links[k].extra;
}

#undef LBM_FN
#undef LBM_LD
#undef LBM_ST
#undef LBM_CAT
#undef LBM_CAT2
#undef LBM_DEFINE_COLLIDE
#undef LBM_DEFINE_COLLIDE_VEC
#undef LBM_COPY_CELL
#undef LBM_VARIANTS
#undef LBM_PICK
#undef LBM_VW
