#include "scalar_cpu.h"

#include <stddef.h>

/* the arithmetic and the loop, once per storage type */
#define SCALAR_REAL double
#define SCALAR_FN(name) name##_d
#include "scalar_cell.h"
#include "scalar_cpu_impl.h"
#undef SCALAR_REAL
#undef SCALAR_FN
#define SCALAR_REAL float
#define SCALAR_FN(name) name##_f
#include "scalar_cell.h"
#include "scalar_cpu_impl.h"
#undef SCALAR_REAL
#undef SCALAR_FN

void scalar_step(int nd, const int n[3], int walls, double d, const grid_field_t *src,
                 void *dst, const grid_field_t *u, const grid_region_t *r) {
  if (src->esize == 8) scalar_cells_d(nd, n, walls, d, src, dst, u, r);
  else scalar_cells_f(nd, n, walls, d, src, dst, u, r);
}
