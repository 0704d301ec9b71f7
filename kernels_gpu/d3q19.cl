/* d3q19.cl: D3Q19 kernels on the GPU layout (SoA). The program source is
 * kernels_cpu/d3q19_collide.h followed by this file, so the collision is the same
 * expressions in the same order as on the CPU; contraction into FMA is off.
 *
 * Build defines: REAL_DOUBLE (0 or 1), NX, NY, NZ (interior cells of the block), TRT and
 * FORCE (0 or 1). A field holds 19 arrays (one per direction) of SX*SY*SZ cells, the
 * ghost layer included, x fastest: f[i * NCELLS + x + SX * (y + SY * z)] for cell
 * (x - 1, y - 1, z - 1) of the block. Velocity set and order as kernels_cpu/d3q19.h. */
#pragma OPENCL FP_CONTRACT OFF
#if REAL_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define REAL double
#else
#define REAL float
#endif
#define SX (NX + 2)
#define SY (NY + 2)
#define SZ (NZ + 2)
#define NCELLS ((long)SX * SY * SZ)

typedef struct d3q19_consts {
  D3Q19_CONSTS_FIELDS(REAL)
} d3q19_consts_t;

/* cell offset of c_i, per direction */
#define C_0 0
#define C_1 1
#define C_2 (-1)
#define C_3 SX
#define C_4 (-SX)
#define C_5 (SX * SY)
#define C_6 (-(SX * SY))
#define C_7 (1 + SX)
#define C_8 (-1 - SX)
#define C_9 (1 - SX)
#define C_10 (-1 + SX)
#define C_11 (1 + SX * SY)
#define C_12 (-1 - SX * SY)
#define C_13 (1 - SX * SY)
#define C_14 (-1 + SX * SY)
#define C_15 (SX + SX * SY)
#define C_16 (-SX - SX * SY)
#define C_17 (SX - SX * SY)
#define C_18 (-SX + SX * SY)

#define LBM_T REAL
#define LBM_ZERO ((REAL)0)
#define LBM_LD(I) src[(long)(I) * NCELLS + cell - (long)(C_##I)]
#define LBM_ST(I, V) dst[(long)(I) * NCELLS + cell] = (V)

/* Pull stream and collide of every interior cell; global size (NX, NY, NZ) or more. */
__kernel void d3q19_stream_collide(__global const REAL *restrict src, __global REAL *restrict dst,
                                   __constant d3q19_consts_t *k) {
  const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  if (x >= NX || y >= NY || z >= NZ) return;
  const long cell = (long)(x + 1) + SX * ((long)(y + 1) + SY * (long)(z + 1));
  LBM_COLLIDE_CONSTS;
  LBM_COLLIDE_CELL(TRT, FORCE)
}
