/* scalar_cpu_impl.h: the loop of scalar_step for one storage type (SCALAR_REAL,
 * SCALAR_FN), included by scalar_cpu.c once per type. */
static void SCALAR_FN(scalar_cells)(int nd, const int n[3], int walls, double d_,
                                    const grid_field_t *src, void *dst_,
                                    const grid_field_t *u_, const grid_region_t *r) {
  const SCALAR_REAL d = (SCALAR_REAL)d_;
  const SCALAR_REAL *c = src->values, *u = u_->values;
  SCALAR_REAL *dst = dst_;
  const ptrdiff_t cs[3] = {src->dims.sx, src->dims.sy, src->dims.sz};
  const ptrdiff_t us[3] = {u_->dims.sx, u_->dims.sy, u_->dims.sz}, usc = u_->dims.sc;
  int y0, y1, z0, z1;
  grid_region_rows(&src->dims, r, &y0, &y1, &z0, &z1);
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = z0; z < z1; ++z)
    for (int y = y0; y < y1; ++y) {
      int xs[2], xe[2];
      const int m = grid_region_row(&src->dims, r, y, z, xs, xe);
      for (int k = 0; k < m; ++k)
        for (int x = xs[k]; x < xe[k]; ++x) {
          const int pos[3] = {x, y, z};
          int lo[3], hi[3];
          for (int a = 0; a < 3; ++a) {
            lo[a] = (walls >> (2 * a) & 1) && pos[a] == 0;
            hi[a] = (walls >> (2 * a + 1) & 1) && pos[a] == n[a] - 1;
          }
          const size_t i = grid_index(&src->dims, x, y, z, 0);
          const size_t j = grid_index(&u_->dims, x, y, z, 0);
#define SCALAR_C_AT(A, S) c[(ptrdiff_t)i + (S) * cs[A]]
#define SCALAR_U_AT(A, S) u[(ptrdiff_t)j + (S) * us[A] + (A) * usc]
          SCALAR_CELL(nd, SCALAR_C_AT, SCALAR_U_AT, lo, hi, d, dst[i]);
#undef SCALAR_C_AT
#undef SCALAR_U_AT
        }
    }
}
