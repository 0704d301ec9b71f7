#include "shan_chen_cpu.h"

#include <math.h>
#include <stddef.h>

/* the arithmetic, once per storage type (shan_chen_kernels.h) */
#define SC_FLOOR floor
#define SC_LDEXP ldexp
#define SC_REAL double
#define SC_FN(name) name##_d
#include "shan_chen_kernels.h"
#undef SC_FLOOR
#undef SC_LDEXP
#undef SC_REAL
#undef SC_FN
#define SC_FLOOR floorf
#define SC_LDEXP ldexpf
#define SC_REAL float
#define SC_FN(name) name##_f
#include "shan_chen_kernels.h"
#undef SC_FLOOR
#undef SC_LDEXP
#undef SC_REAL
#undef SC_FN

#define SC_DEFINE_CPU(SUF, T)                                                              \
  static void sc_psi_cells_##SUF(const int n[3], const grid_field_t *rho, grid_field_t *psi,     \
                           double rho_psi_d) {                                             \
    const T rho_psi = (T)rho_psi_d, inv = (T)(1.0 / rho_psi_d);                            \
    const T *r = rho->values;                                                              \
    T *p = psi->values;                                                                    \
    _Pragma("omp parallel for collapse(2) schedule(static)")                               \
    for (int z = 0; z < n[2]; ++z)                                                         \
      for (int y = 0; y < n[1]; ++y)                                                       \
        for (int x = 0; x < n[0]; ++x)                                                     \
          p[grid_index(&psi->dims, x, y, z, 0)] =                                          \
              sc_psi_##SUF(r[grid_index(&rho->dims, x, y, z, 0)], rho_psi, inv);           \
  }                                                                                        \
  static void sc_force_cells_##SUF(const grid_field_t *psi, grid_field_t *force,                 \
                             const lattice_t *l, double g_d, int acc,                      \
                             const grid_region_t *r) {                                     \
    T w[LATTICE_MAX_Q];                                                                    \
    ptrdiff_t off[LATTICE_MAX_Q];                                                          \
    for (int i = 0; i < l->q; ++i) {                                                       \
      w[i] = (T)l->w[i];                                                                   \
      off[i] = l->c[0][i] * psi->dims.sx + l->c[1][i] * psi->dims.sy +                     \
               l->c[2][i] * psi->dims.sz;                                                  \
    }                                                                                      \
    const T g = (T)g_d;                                                                    \
    const T *p = psi->values;                                                              \
    T *f = force->values;                                                                  \
    const ptrdiff_t fsc = force->dims.sc;                                                  \
    int y0, y1, z0, z1;                                                                    \
    grid_region_rows(&psi->dims, r, &y0, &y1, &z0, &z1);                                   \
    _Pragma("omp parallel for collapse(2) schedule(static)")                               \
    for (int z = z0; z < z1; ++z)                                                          \
      for (int y = y0; y < y1; ++y) {                                                      \
        int xs[2], xe[2];                                                                  \
        const int m = grid_region_row(&psi->dims, r, y, z, xs, xe);                        \
        for (int k = 0; k < m; ++k)                                                        \
        for (int x = xs[k]; x < xe[k]; ++x) {                                              \
          const size_t pc = grid_index(&psi->dims, x, y, z, 0);                            \
          const size_t fi = grid_index(&force->dims, x, y, z, 0);                          \
          T fx, fy, fz;                                                                    \
          SC_FORCE_CELL(l->q, w, l->c[0], l->c[1], l->c[2], SC_CPU_PSI_AT, p[pc], g, fx,   \
                        fy, fz);                                                           \
          f[fi] = (acc ? f[fi] : (T)0) + fx;                                               \
          f[fi + fsc] = (acc ? f[fi + fsc] : (T)0) + fy;                                   \
          f[fi + 2 * fsc] = (acc ? f[fi + 2 * fsc] : (T)0) + fz;                           \
        }                                                                                  \
      }                                                                                    \
  }
#define SC_CPU_PSI_AT(I) p[(ptrdiff_t)pc + off[I]]
#define SC_REAL double
SC_DEFINE_CPU(d, double)
#undef SC_REAL
#define SC_REAL float
SC_DEFINE_CPU(f, float)
#undef SC_REAL
#undef SC_CPU_PSI_AT

void shan_chen_psi(const int n[3], const grid_field_t *rho, grid_field_t *psi, double rho_psi) {
  if (psi->esize == 8) sc_psi_cells_d(n, rho, psi, rho_psi);
  else sc_psi_cells_f(n, rho, psi, rho_psi);
}

void shan_chen_force(const grid_field_t *psi, grid_field_t *force, const lattice_t *l, double g,
                     int accumulate, const grid_region_t *r) {
  if (psi->esize == 8) sc_force_cells_d(psi, force, l, g, accumulate, r);
  else sc_force_cells_f(psi, force, l, g, accumulate, r);
}
