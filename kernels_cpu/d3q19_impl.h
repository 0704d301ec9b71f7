/* d3q19_impl.h: the D3Q19 kernels, written once for both precisions. Included by d3q19.c
 * only, with REAL (float or double) and SFX (f32 or f64) defined. */
#define LBM_CAT2(a, b) a##_##b
#define LBM_CAT(a, b) LBM_CAT2(a, b)
#define LBM_FN(name) LBM_CAT(name, SFX)

/* One cell: gather, collide, store. TRT_ selects the two-rate collision. */
#define LBM_CELL_BODY(TRT_)                                                              \
  do {                                                                                   \
    REAL f[D3Q19_Q];                                                                       \
    for (int i = 0; i < D3Q19_Q; ++i) f[i] = src[(cell - off[i]) * D3Q19_Q + (size_t)i];     \
    REAL rho = 0, jx = 0, jy = 0, jz = 0;                                                \
    for (int i = 0; i < D3Q19_Q; ++i) {                                                    \
      rho += f[i];                                                                       \
      jx += (REAL)d3q19_c[i][0] * f[i];                                                    \
      jy += (REAL)d3q19_c[i][1] * f[i];                                                    \
      jz += (REAL)d3q19_c[i][2] * f[i];                                                    \
    }                                                                                    \
    const REAL ux = (jx + half_f[0]) * inv_rho0, uy = (jy + half_f[1]) * inv_rho0,       \
               uz = (jz + half_f[2]) * inv_rho0;                                         \
    const REAL usq = (REAL)1.5 * (ux * ux + uy * uy + uz * uz);                          \
    const REAL uf = ux * fx + uy * fy + uz * fz;                                         \
    REAL *out = dst + cell * D3Q19_Q;                                                      \
    if (!(TRT_)) {                                                                       \
      for (int i = 0; i < D3Q19_Q; ++i) {                                                  \
        const REAL cu = (REAL)d3q19_c[i][0] * ux + (REAL)d3q19_c[i][1] * uy +                \
                        (REAL)d3q19_c[i][2] * uz;                                          \
        const REAL feq = w[i] * (rho + rho0 * ((REAL)3 * cu + (REAL)4.5 * cu * cu - usq));\
        REAL s = 0;                                                                      \
        if (use_force) {                                                                 \
          const REAL cf = (REAL)d3q19_c[i][0] * fx + (REAL)d3q19_c[i][1] * fy +              \
                          (REAL)d3q19_c[i][2] * fz;                                        \
          s = sp * w[i] * ((REAL)3 * cf + (REAL)9 * cu * cf - (REAL)3 * uf);             \
        }                                                                                \
        out[i] = f[i] - op * (f[i] - feq) + s;                                           \
      }                                                                                  \
    } else {                                                                             \
      {                                                                                  \
        const REAL feq0 = w[0] * (rho - rho0 * usq);                                     \
        out[0] = f[0] - op * (f[0] - feq0) + (use_force ? sp * w[0] * (-(REAL)3 * uf) : (REAL)0); \
      }                                                                                  \
      for (int i = 1; i < D3Q19_Q; i += 2) {                                               \
        const int k = i + 1; /* the inverse of i */                                      \
        const REAL cu = (REAL)d3q19_c[i][0] * ux + (REAL)d3q19_c[i][1] * uy +                \
                        (REAL)d3q19_c[i][2] * uz;                                          \
        const REAL eqp = w[i] * (rho + rho0 * ((REAL)4.5 * cu * cu - usq));              \
        const REAL eqm = w[i] * rho0 * (REAL)3 * cu;                                     \
        const REAL fp = (REAL)0.5 * (f[i] + f[k]), fm = (REAL)0.5 * (f[i] - f[k]);       \
        const REAL dp = op * (fp - eqp), dm = om * (fm - eqm);                           \
        REAL sp_ = 0, sm_ = 0;                                                           \
        if (use_force) {                                                                 \
          const REAL cf = (REAL)d3q19_c[i][0] * fx + (REAL)d3q19_c[i][1] * fy +              \
                          (REAL)d3q19_c[i][2] * fz;                                        \
          sp_ = sp * w[i] * ((REAL)9 * cu * cf - (REAL)3 * uf);                          \
          sm_ = sm * w[i] * (REAL)3 * cf;                                                \
        }                                                                                \
        out[i] = f[i] - dp - dm + sp_ + sm_;                                             \
        out[k] = f[k] - dp + dm + sp_ - sm_;                                             \
      }                                                                                  \
    }                                                                                    \
  } while (0)

static void LBM_FN(d3q19_stream_collide)(const REAL *restrict src, REAL *restrict dst,
                                       const aos_dims_t *dims, const d3q19_params_t *p, int trt) {
  const int nx = dims->nx, ny = dims->ny, nz = dims->nz;
  const size_t sx = (size_t)nx + 2, sxy = sx * ((size_t)ny + 2);
  ptrdiff_t off[D3Q19_Q];
  REAL w[D3Q19_Q];
  for (int i = 0; i < D3Q19_Q; ++i) {
    off[i] = (ptrdiff_t)d3q19_c[i][0] + (ptrdiff_t)d3q19_c[i][1] * (ptrdiff_t)sx +
             (ptrdiff_t)d3q19_c[i][2] * (ptrdiff_t)sxy;
    w[i] = (REAL)d3q19_w[i];
  }
  const REAL rho0 = (REAL)p->rho0, inv_rho0 = (REAL)(1.0 / p->rho0);
  const REAL op = (REAL)p->omega_plus, om = (REAL)(trt ? p->omega_minus : p->omega_plus);
  const int use_force = p->use_force;
  const REAL fx = (REAL)p->force[0], fy = (REAL)p->force[1], fz = (REAL)p->force[2];
  const REAL half_f[3] = {use_force ? (REAL)0.5 * fx : (REAL)0, use_force ? (REAL)0.5 * fy : (REAL)0,
                          use_force ? (REAL)0.5 * fz : (REAL)0};
  const REAL sp = (REAL)(1.0 - 0.5 * p->omega_plus);
  const REAL sm = (REAL)(1.0 - 0.5 * (trt ? p->omega_minus : p->omega_plus));
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y) {
      size_t row = (size_t)(z + 1) * sxy + (size_t)(y + 1) * sx + 1;
      if (trt) {
        for (int x = 0; x < nx; ++x) {
          const size_t cell = row + (size_t)x;
          LBM_CELL_BODY(1);
        }
      } else {
        for (int x = 0; x < nx; ++x) {
          const size_t cell = row + (size_t)x;
          LBM_CELL_BODY(0);
        }
      }
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
  for (size_t k = 0; k < n; ++k) f[links[k].to] = f[links[k].from] + (REAL)links[k].extra;
}

#undef LBM_FN
#undef LBM_CAT
#undef LBM_CAT2
#undef LBM_CELL_BODY
