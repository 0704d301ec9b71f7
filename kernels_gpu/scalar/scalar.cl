/* scalar.cl: the passive scalar on GPU blocks (the program source is scalar_cell.h, the
 * arithmetic the CPU runs too, part.cl, then this file). Build define: SCALAR_DOUBLE (0
 * or 1). Fields are per-cell arrays of the block, element origin + x + sy y + sz z
 * (+ sc a for component a): the device layout of the field kit. A launch covers many
 * blocks of one size and one wall pattern (gpu_program_launch_blocks): block b's fields
 * start at element cb[b] and ub[b] of the arrays. */

/* One step of every interior cell of block b: src into dst (the scalar's two copies),
 * with the velocity u; walls: bit 2a the block's face at -a closed, bit 2a + 1 at +a;
 * part 1 only the cells of the block's box, part 2 the others, part 0 all (part.cl). */
__kernel void scalar_step_kernel(const int b0, const int nz, __global const SCALAR_REAL *src_a,
                                 __global SCALAR_REAL *dst_a, __global const long *cb,
                                 __global const SCALAR_REAL *u_a, __global const long *ub,
                                 const long c0, const long csy, const long csz, const long u0,
                                 const long usy, const long usz, const long usc, const int nx,
                                 const int ny, const int nd, const int walls,
                                 const SCALAR_REAL d, __global const int *boxes,
                                 const int part) {
  const long x = get_global_id(0), y = get_global_id(1);
  const int zb = get_global_id(2), b = b0 + zb / nz;
  const long z = zb % nz;
  GPU_PART_RETURN(boxes, part, b, x, y, z, 3)
  __global const SCALAR_REAL *c = src_a + cb[b];
  __global const SCALAR_REAL *u = u_a + ub[b];
  const long i = c0 + x + csy * y + csz * z, j = u0 + x + usy * y + usz * z;
  const long cs[3] = {1, csy, csz}, us[3] = {1, usy, usz}, pos[3] = {x, y, z},
             n[3] = {nx, ny, nz};
  int lo[3], hi[3];
  for (int a = 0; a < 3; ++a) {
    lo[a] = (walls >> (2 * a) & 1) && pos[a] == 0;
    hi[a] = (walls >> (2 * a + 1) & 1) && pos[a] == n[a] - 1;
  }
#define SCALAR_C_AT(A, S) c[i + (S) * cs[A]]
#define SCALAR_U_AT(A, S) u[j + (S) * us[A] + (A) * usc]
  SCALAR_REAL out;
  SCALAR_CELL(nd, SCALAR_C_AT, SCALAR_U_AT, lo, hi, d, out);
  dst_a[cb[b] + i] = out;
}
