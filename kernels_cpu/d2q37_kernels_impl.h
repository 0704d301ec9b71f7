/* d2q37_kernels_impl.h: the stream-collide of d2q37_kernels.h for one CPU level (D37_LEVEL)
 * and one precision (D37_REAL, D37_FN), included by the generated d2q37_kernels_<level>.c.
 * Rows of a block run in parallel; along a row the cells run as SIMD lanes (each lane one
 * cell through d2q37_cell.h's functions, bitwise the scalar result). */
#define D37_CAT_(a, b, c) a##_##b##_##c
#define D37_CAT(a, b, c) D37_CAT_(a, b, c)

void D37_CAT(d2q37_sc, D37_SFX, D37_LEVEL)(const void *vsrc, void *vdst, const grid_dims_t *d,
                                          const void *vk, int y0, int y1);
void D37_CAT(d2q37_sc, D37_SFX, D37_LEVEL)(const void *vsrc, void *vdst, const grid_dims_t *d,
                                          const void *vk, int y0, int y1) {
  const D37_REAL *restrict src = vsrc;
  D37_REAL *restrict dst = vdst;
  const D37_FN(d37_consts_t) *k = vk;
  ptrdiff_t off[D37_Q];
  for (int i = 0; i < D37_Q; ++i)
    off[i] = (ptrdiff_t)i * d->sc - (ptrdiff_t)d37_cx[i] -
             (ptrdiff_t)d37_cy[i] * d->sy;
  const int nx = d->nx;
#pragma omp parallel for schedule(static)
  for (int y = y0; y < y1; ++y) {
    const ptrdiff_t row = d->origin + (ptrdiff_t)y * d->sy;
#pragma omp simd
    for (int x = 0; x < nx; ++x) {
      D37_REAL f[D37_Q];
      D37_UNROLL
      for (int i = 0; i < D37_Q; ++i) f[i] = src[row + x + off[i]];
      D37_FN(d37_collide)(k, f);
      D37_UNROLL
      for (int i = 0; i < D37_Q; ++i) dst[row + x + (ptrdiff_t)i * d->sc] = f[i];
    }
  }
}

/* The ghost rows of the wall `side` of every column (d37_wall_ghosts), columns as SIMD
 * lanes: each reads rows inside the wall and writes beyond it. */
void D37_CAT(d2q37_walls, D37_SFX, D37_LEVEL)(void *vsrc, const grid_dims_t *d, const void *vk,
                                             int side);
void D37_CAT(d2q37_walls, D37_SFX, D37_LEVEL)(void *vsrc, const grid_dims_t *d, const void *vk,
                                             int side) {
  D37_REAL *src = vsrc;
  const D37_FN(d37_consts_t) *k = vk;
#pragma omp parallel for simd schedule(static)
  for (int x = 0; x < d->nx; ++x)
    D37_FN(d37_wall_ghosts)(k, src, d->origin + x, d->sy, d->sc, d->ny, side);
}
#undef D37_CAT
#undef D37_CAT_
