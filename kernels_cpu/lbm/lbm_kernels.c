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
      lbm_kernels_soa_##lower##_f32_##level, lbm_kernels_aos_##lower##_h16s_##level,     \
      lbm_kernels_soa_##lower##_h16s_##level, lbm_kernels_aos_##lower##_h16c_##level,    \
      lbm_kernels_soa_##lower##_h16c_##level;
#define LBM_KERNELS_ENTRY_(lower, level)                                                 \
  &lbm_kernels_aos_##lower##_f32_##level, &lbm_kernels_aos_##lower##_f64_##level,        \
      &lbm_kernels_soa_##lower##_f32_##level, &lbm_kernels_soa_##lower##_f64_##level,    \
      &lbm_kernels_aos_##lower##_h16s_##level, &lbm_kernels_soa_##lower##_h16s_##level,  \
      &lbm_kernels_aos_##lower##_h16c_##level, &lbm_kernels_soa_##lower##_h16c_##level,
#define LBM_KERNELS_DECLARE(level, name) LBM_LATTICE_LIST(LBM_KERNELS_DECLARE_, level)
#define LBM_KERNELS_ENTRY(level, name) {LBM_LATTICE_LIST(LBM_KERNELS_ENTRY_, level)},
#define LBM_COUNT_LATTICE(lower, level) +8
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
                                            int storage, int level) {
  if (level < 0 || level >= cpu_level_count()) return NULL;
  for (int k = 0; k < LBM_SETS_PER_LEVEL; ++k) {
    const lbm_kernels_t *s = lbm_kernel_sets[level][k];
    if (s->lattice == lattice && s->layout == layout && (int)s->storage == storage) return s;
  }
  return NULL;
}

const lbm_kernels_t *lbm_kernels_find(const lattice_t *lattice, grid_layout_t layout,
                                      int storage) {
  return lbm_kernels_find_level(lattice, layout, storage, cpu_level_current());
}

