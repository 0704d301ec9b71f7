/* d2q37.cl: the D2Q37 stream-collide on GPU blocks. The program source is
 * kernels_cpu/lattice_defs.h, kernels_cpu/d2q37/d2q37_cell.h (the cell's arithmetic, the CPU's
 * too) and this file; build define D37_DOUBLE (0 or 1). The populations are SoA arrays of
 * the block (the field kit's device layout): component i of cell (x, y) is element
 * origin + x + sy y + sc i of the block's copy, whose start in the set's array is
 * fb[block]. A launch covers many blocks of one size and one wall pattern
 * (gpu_program_launch_blocks); k: the run's constants (d2q37_constants). A block with
 * walls has their ghost rows written first (d37_walls_kernel). d2q37.kernel "split" runs
 * d37_propagate_kernel and then d37_collide_kernel in place instead of the fused
 * kernel, as Calore et al. run them: the same values. Every kernel takes the part of an
 * overlapped step last (GPU_PART_RETURN, part.cl); the walls kernel by the box's columns
 * alone. */

__kernel void d37_stream_collide_kernel(const int b0, const int nz,
                                        __global const D37_REAL *src_a,
                                        __global D37_REAL *dst_a, __global const long *fb,
                                        const long origin, const long sy, const long sc,
                                        __constant const d37_consts_t *k,
                                        __global const int *boxes, const int part) {
  const long x = get_global_id(0), y = get_global_id(1);
  const int b = b0 + (int)get_global_id(2) / nz;
  GPU_PART_RETURN(boxes, part, b, x, y, 0, 2)
  __global const D37_REAL *src = src_a + fb[b];
  __global D37_REAL *dst = dst_a + fb[b];
  const long c = origin + x + sy * y;
  D37_REAL f[D37_Q];
  D37_UNROLL
  for (int i = 0; i < D37_Q; ++i) f[i] = src[c + sc * i - d37_cx[i] - sy * d37_cy[i]];
  d37_collide(k, f);
  D37_UNROLL
  for (int i = 0; i < D37_Q; ++i) dst[c + sc * i] = f[i];
}

/* The propagation alone: each population pulled into dst at its cell. */
__kernel void d37_propagate_kernel(const int b0, const int nz, __global const D37_REAL *src_a,
                                   __global D37_REAL *dst_a, __global const long *fb,
                                   const long origin, const long sy, const long sc,
                                   __global const int *boxes, const int part) {
  const long x = get_global_id(0), y = get_global_id(1);
  const int b = b0 + (int)get_global_id(2) / nz;
  GPU_PART_RETURN(boxes, part, b, x, y, 0, 2)
  __global const D37_REAL *src = src_a + fb[b];
  __global D37_REAL *dst = dst_a + fb[b];
  const long c = origin + x + sy * y;
  D37_UNROLL
  for (int i = 0; i < D37_Q; ++i) dst[c + sc * i] = src[c + sc * i - d37_cx[i] - sy * d37_cy[i]];
}

/* The collision alone, in place: each cell's populations read and written at the cell. */
__kernel void d37_collide_kernel(const int b0, const int nz, __global D37_REAL *f_a,
                                 __global const long *fb, const long origin, const long sy,
                                 const long sc, __constant const d37_consts_t *k,
                                 __global const int *boxes, const int part) {
  const long x = get_global_id(0), y = get_global_id(1);
  const int b = b0 + (int)get_global_id(2) / nz;
  GPU_PART_RETURN(boxes, part, b, x, y, 0, 2)
  __global D37_REAL *g = f_a + fb[b];
  const long c = origin + x + sy * y;
  D37_REAL f[D37_Q];
  D37_UNROLL
  for (int i = 0; i < D37_Q; ++i) f[i] = g[c + sc * i];
  d37_collide(k, f);
  D37_UNROLL
  for (int i = 0; i < D37_Q; ++i) g[c + sc * i] = f[i];
}

/* The ghost rows of the wall at y- (side 0) or y+ (side 1) of every column of the blocks
 * (d37_wall_ghosts), into the copy the next step pulls from. */
__kernel void d37_walls_kernel(const int b0, const int nz, __global D37_REAL *src_a,
                               __global const long *fb, const long origin, const long sy,
                               const long sc, const int ny, const int side,
                               __constant const d37_consts_t *k, __global const int *boxes,
                               const int part) {
  const long x = get_global_id(0);
  const int b = b0 + (int)get_global_id(2) / nz;
  GPU_PART_RETURN(boxes, part, b, x, 0, 0, 1)
  d37_wall_ghosts(k, src_a + fb[b], origin + x, sy, sc, ny, side);
}
