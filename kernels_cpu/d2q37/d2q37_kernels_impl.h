/* d2q37_kernels_impl.h: the stream-collide of d2q37_kernels.h for one CPU level (D37_LEVEL)
 * and one precision (D37_REAL, D37_FN), included by the generated d2q37_kernels_<level>.c.
 * Rows of a block run in parallel; along a row the cells run in tiles of one 64-byte
 * vector per population (d37_collide_tile: each lane bitwise the scalar d37_collide). */
#include "simd.h" /* 64-byte vectors and their nontemporal stores */
/* tiles ahead that each population's next line is asked for: 37 streams are more than the
   hardware prefetchers follow */
#ifndef D37_PREFETCH
#define D37_PREFETCH 2
#endif
#define D37_CAT2_(a, b) a##_##b
#define D37_CAT2(a, b) D37_CAT2_(a, b)
#define D37_VLOAD(p) D37_CAT2(simd_vload, D37_SFX)(p)
#define D37_VSTORE(p, v) D37_CAT2(simd_vstore, D37_SFX)(p, v)
#define D37_CAT_(a, b, c) a##_##b##_##c
#define D37_CAT(a, b, c) D37_CAT_(a, b, c)

/* The cells [lo[0], hi[0]) x [lo[1], hi[1]): each cell's populations from src at its
 * element + off[i], collided, to dst at its element + i sc (src may be dst: in place,
 * off[i] = i sc). */
static void D37_CAT(d37_box, D37_SFX, D37_LEVEL)(const D37_REAL *src, D37_REAL *dst,
                                                 const ptrdiff_t *off, const grid_dims_t *d,
                                                 const D37_FN(d37_consts_t) * k,
                                                 const int lo[2], const int hi[2]) {
  const int xa = lo[0], xb = hi[0];
#pragma omp parallel for schedule(static)
  for (int y = lo[1]; y < hi[1]; ++y) {
    const ptrdiff_t row = d->origin + (ptrdiff_t)y * d->sy;
    /* tiles of D37_W cells aligned to the arrays (every component starts a cache line):
       the first starts up to D37_W - 1 cells before the box, the last may end past it;
       their lanes outside the box read cells around it, ghost cells or the field's guard
       lines, and are not written. Whole tiles inside the box go out with nontemporal
       stores (the field is far larger than the caches and read only in the next step) */
    enum { VW = 64 / (int)sizeof(D37_REAL) }; /* a vector: a cache line */
    const int xs = xa - (int)((((row + xa) % VW) + VW) % VW);
    for (int x0 = xs; x0 < xb; x0 += D37_W) {
      _Alignas(64) D37_REAL f[D37_Q][D37_W];
      D37_UNROLL
      for (int i = 0; i < D37_Q; ++i) {
        const D37_REAL *s = src + row + x0 + off[i];
        __builtin_prefetch(s + D37_PREFETCH * D37_W);
        D37_LANES f[i][l] = s[l];
      }
      D37_FN(d37_collide_tile)(k, f);
      D37_REAL *o = dst + row + x0;
      if (x0 >= xa && x0 + D37_W <= xb) {
        D37_UNROLL
        for (int i = 0; i < D37_Q; ++i)
          for (int v = 0; v < D37_W; v += 64 / (int)sizeof(D37_REAL))
            D37_VSTORE(o + (ptrdiff_t)i * d->sc + v, D37_VLOAD(f[i] + v));
      } else {
        const int a = x0 < xa ? xa - x0 : 0, b = xb - x0 < D37_W ? xb - x0 : D37_W;
        for (int i = 0; i < D37_Q; ++i)
          for (int l = a; l < b; ++l) o[(ptrdiff_t)i * d->sc + l] = f[i][l];
      }
    }
  }
  simd_store_fence();
}

/* One step on the cells of the box [lo, hi): fused (split 0), each cell pulls its
 * populations and collides them; or split, the propagation first (each population's rows
 * shifted into dst) and then the collision in place in dst, as Calore et al. (2016) run
 * it: the same values, one more pass over the field. */
void D37_CAT(d2q37_sc, D37_SFX, D37_LEVEL)(const void *vsrc, void *vdst, const grid_dims_t *d,
                                          const void *vk, const int lo[2], const int hi[2],
                                          int split);
void D37_CAT(d2q37_sc, D37_SFX, D37_LEVEL)(const void *vsrc, void *vdst, const grid_dims_t *d,
                                          const void *vk, const int lo[2], const int hi[2],
                                          int split) {
  const D37_REAL *src = vsrc;
  D37_REAL *dst = vdst;
  const D37_FN(d37_consts_t) *k = vk;
  ptrdiff_t pull[D37_Q], here[D37_Q];
  for (int i = 0; i < D37_Q; ++i) {
    pull[i] = (ptrdiff_t)i * d->sc - (ptrdiff_t)d37_cx[i] - (ptrdiff_t)d37_cy[i] * d->sy;
    here[i] = (ptrdiff_t)i * d->sc;
  }
  if (!split) {
    D37_CAT(d37_box, D37_SFX, D37_LEVEL)(src, dst, pull, d, k, lo, hi);
    return;
  }
  const int xa = lo[0], xb = hi[0];
#pragma omp parallel for schedule(static)
  for (int y = lo[1]; y < hi[1]; ++y) {
    const ptrdiff_t row = d->origin + (ptrdiff_t)y * d->sy;
    for (int i = 0; i < D37_Q; ++i) {
      const D37_REAL *restrict s = src + row + pull[i];
      D37_REAL *restrict o = dst + row + here[i];
#pragma omp simd
      for (int x = xa; x < xb; ++x) o[x] = s[x];
    }
  }
  D37_CAT(d37_box, D37_SFX, D37_LEVEL)(dst, dst, here, d, k, lo, hi);
}

/* The ghost rows of the wall `side` of every column (d37_wall_ghosts), columns as SIMD
 * lanes: each reads rows inside the wall and writes beyond it. */
void D37_CAT(d2q37_walls, D37_SFX, D37_LEVEL)(void *vsrc, const grid_dims_t *d, const void *vk,
                                             int side, int x0, int x1);
void D37_CAT(d2q37_walls, D37_SFX, D37_LEVEL)(void *vsrc, const grid_dims_t *d, const void *vk,
                                             int side, int x0, int x1) {
  D37_REAL *src = vsrc;
  const D37_FN(d37_consts_t) *k = vk;
#pragma omp parallel for simd schedule(static)
  for (int x = x0; x < x1; ++x)
    D37_FN(d37_wall_ghosts)(k, src, d->origin + x, d->sy, d->sc, d->ny, side);
}
#undef D37_CAT
#undef D37_CAT_
#undef D37_VLOAD
#undef D37_VSTORE
#undef D37_CAT2
#undef D37_CAT2_
