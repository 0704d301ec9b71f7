/* shan_chen.cl: the Shan-Chen model on GPU blocks (the program source is
 * shan_chen_kernels.h, the arithmetic the CPU runs too, then this file). Build defines:
 * SC_DOUBLE (0 or 1), SC_Q and the
 * stencil's tables SC_W (weights, hexadecimal literals of the storage type), SC_CX,
 * SC_CY, SC_CZ. Fields are per-cell arrays of the block, element origin + x + sy y + sz z
 * (+ sc c for component c): the device layout of the field kit. A launch covers many
 * blocks of one size (gpu_program_launch_blocks): block b's fields start at element
 * rb[b], pb[b] and fb[b] of the arrays. */

/* The cell of this work item and its block. */
#define SC_BLOCK_CELL                                                                  \
  const long x = get_global_id(0), y = get_global_id(1);                               \
  const int zb_ = get_global_id(2), b = b0 + zb_ / nz;                                  \
  const long z = zb_ % nz;
__constant SC_REAL sc_w[SC_Q] = {SC_W};
__constant int sc_cx[SC_Q] = {SC_CX};
__constant int sc_cy[SC_Q] = {SC_CY};
__constant int sc_cz[SC_Q] = {SC_CZ};

/* psi of every interior cell from the density. */
__kernel void sc_psi_kernel(const int b0, const int nz, __global const SC_REAL *rho_a,
                            __global const long *rb, __global SC_REAL *psi_a,
                            __global const long *pb, const long r0,
                            const long rsy, const long rsz, const long p0, const long psy,
                            const long psz, const SC_REAL rho_psi, const SC_REAL inv_rho_psi) {
  SC_BLOCK_CELL
  __global const SC_REAL *rho = rho_a + rb[b];
  __global SC_REAL *psi = psi_a + pb[b];
  psi[p0 + x + psy * y + psz * z] = sc_psi(rho[r0 + x + rsy * y + rsz * z], rho_psi, inv_rho_psi);
}

/* The force of every interior cell, written (accumulate 0) or added to what the field
 * holds (accumulate 1); part 1 only the cells of block b's box boxes[6 b .. 6 b + 5] (lo
 * x, y, z, hi x, y, z: the inner part of an overlapped step), part 2 only the others,
 * part 0 all. */
__kernel void sc_force_kernel(const int b0, const int nz, __global const SC_REAL *psi_a,
                              __global const long *pb, __global SC_REAL *force_a,
                              __global const long *fb,
                              const long p0, const long psy, const long psz, const long f0,
                              const long fsy, const long fsz, const long fsc, const SC_REAL g,
                              const int accumulate, __global const int *boxes,
                              const int part) {
  SC_BLOCK_CELL
  GPU_PART_RETURN(boxes, part, b, x, y, z, 3)
  __global const SC_REAL *psi = psi_a + pb[b];
  __global SC_REAL *force = force_a + fb[b];
  const long c = p0 + x + psy * y + psz * z, f = f0 + x + fsy * y + fsz * z;
#define SC_PSI_AT(I) psi[c + sc_cx[I] + psy * sc_cy[I] + psz * sc_cz[I]]
  SC_REAL fx, fy, fz;
  SC_FORCE_CELL(SC_Q, sc_w, sc_cx, sc_cy, sc_cz, SC_PSI_AT, psi[c], g, fx, fy, fz);
#undef SC_PSI_AT
  force[f] = (accumulate ? force[f] : (SC_REAL)0) + fx;
  force[f + fsc] = (accumulate ? force[f + fsc] : (SC_REAL)0) + fy;
  force[f + 2 * fsc] = (accumulate ? force[f + 2 * fsc] : (SC_REAL)0) + fz;
}
