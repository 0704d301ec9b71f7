#include "lbm_kernels.h"

double lbm_omega_minus(double omega_plus, double lambda) {
  return 1.0 / (lambda / (1.0 / omega_plus - 0.5) + 0.5);
}

/* The sets of the generated lbm_kernels_<lattice>.c, one per lattice, layout and
   precision. */
#define LBM_KERNELS_DECLARE(lower, UPPER)                                                \
  extern const lbm_kernels_t lbm_kernels_aos_##lower##_f64, lbm_kernels_soa_##lower##_f64, \
      lbm_kernels_aos_##lower##_f32, lbm_kernels_soa_##lower##_f32;
LATTICE_LIST(LBM_KERNELS_DECLARE)
#undef LBM_KERNELS_DECLARE

#define LBM_KERNELS_ENTRY(lower, UPPER)                                                  \
  {&lbm_kernels_aos_##lower##_f32, &lbm_kernels_aos_##lower##_f64,                       \
   &lbm_kernels_soa_##lower##_f32, &lbm_kernels_soa_##lower##_f64},
static const lbm_kernels_t *const lbm_kernel_sets[][4] = {LATTICE_LIST(LBM_KERNELS_ENTRY)};
#undef LBM_KERNELS_ENTRY

const lbm_kernels_t *lbm_kernels_find(const lattice_t *lattice, grid_layout_t layout, int dp) {
  int n;
  const lattice_t *const *all = lattice_all(&n);
  for (int k = 0; k < n; ++k)
    if (all[k] == lattice)
      return lbm_kernel_sets[k][2 * (layout == GRID_SOA) + (dp != 0)];
  return NULL;
}

#define LBM_PULLED_DENSITY(T)                                                            \
  do {                                                                                   \
    const T *fv = f;                                                                     \
    T *ov = out;                                                                         \
    const T sh = (T)shift;                                                               \
    _Pragma("omp parallel for collapse(2) schedule(static)")                             \
    for (int z = 0; z < d->nz; ++z)                                                      \
      for (int y = 0; y < d->ny; ++y)                                                    \
        for (int x = 0; x < d->nx; ++x) {                                                \
          T r = fv[grid_index(d, x, y, z, 0)];                                           \
          for (int i = 1; i < l->q; ++i)                                                 \
            r = r + fv[grid_index(d, x - l->c[0][i], y - l->c[1][i], z - l->c[2][i], i)]; \
          ov[grid_index(od, x, y, z, 0)] = r + sh;                                       \
        }                                                                                \
  } while (0)

void lbm_pulled_density(const lattice_t *l, const void *f, const grid_dims_t *d, size_t esize,
                        double shift, void *out, const grid_dims_t *od) {
  if (esize == sizeof(double)) LBM_PULLED_DENSITY(double);
  else LBM_PULLED_DENSITY(float);
}
