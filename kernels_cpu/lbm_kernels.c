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
