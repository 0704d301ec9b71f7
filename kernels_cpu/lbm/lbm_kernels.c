#include "lbm_kernels.h"

#include "cpu_level.h"
#include "cpu_levels.h"   /* generated: CPU_LEVEL_LIST */
#include "lbm_lattices.h" /* generated: LBM_LATTICE_LIST */

double lbm_omega_minus(double omega_plus, double lambda) {
  return 1.0 / (lambda / (1.0 / omega_plus - 0.5) + 0.5);
}

/* The sets of the generated lbm_kernels_<lattice>_<level>.c, one per CPU level, lattice,
   layout and precision. */
#define LBM_KERNELS_DECLARE_(lower, level)                                               \
  extern const lbm_kernels_t lbm_kernels_aos_##lower##_f64_##level,                      \
      lbm_kernels_soa_##lower##_f64_##level, lbm_kernels_aos_##lower##_f32_##level,      \
      lbm_kernels_soa_##lower##_f32_##level;
#define LBM_KERNELS_ENTRY_(lower, level)                                                 \
  &lbm_kernels_aos_##lower##_f32_##level, &lbm_kernels_aos_##lower##_f64_##level,        \
      &lbm_kernels_soa_##lower##_f32_##level, &lbm_kernels_soa_##lower##_f64_##level,
#define LBM_KERNELS_DECLARE(level, name) LBM_LATTICE_LIST(LBM_KERNELS_DECLARE_, level)
#define LBM_KERNELS_ENTRY(level, name) {LBM_LATTICE_LIST(LBM_KERNELS_ENTRY_, level)},
#define LBM_COUNT_LATTICE(lower, level) +4
enum { LBM_SETS_PER_LEVEL = 0 LBM_LATTICE_LIST(LBM_COUNT_LATTICE, _) };
CPU_LEVEL_LIST(LBM_KERNELS_DECLARE)
static const lbm_kernels_t *const lbm_kernel_sets[][LBM_SETS_PER_LEVEL] = {
    CPU_LEVEL_LIST(LBM_KERNELS_ENTRY)};
#undef LBM_COUNT_LATTICE
#undef LBM_KERNELS_DECLARE_
#undef LBM_KERNELS_ENTRY_
#undef LBM_KERNELS_DECLARE
#undef LBM_KERNELS_ENTRY

const lbm_kernels_t *lbm_kernels_find_level(const lattice_t *lattice, grid_layout_t layout,
                                            int dp, int level) {
  if (level < 0 || level >= cpu_level_count()) return NULL;
  const size_t esize = dp ? sizeof(double) : sizeof(float);
  for (int k = 0; k < LBM_SETS_PER_LEVEL; ++k) {
    const lbm_kernels_t *s = lbm_kernel_sets[level][k];
    if (s->lattice == lattice && s->layout == layout && s->esize == esize) return s;
  }
  return NULL;
}

const lbm_kernels_t *lbm_kernels_find(const lattice_t *lattice, grid_layout_t layout, int dp) {
  return lbm_kernels_find_level(lattice, layout, dp, cpu_level_current());
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
