/* lbm.cl: lattice Boltzmann kernels on the GPU layout (SoA), for any lattice of
 * kernels_cpu/lattice_defs.h. The program source is kernels_cpu/lattice_defs.h,
 * kernels_cpu/lbm_collide.h and this file, so the collision is the same expressions in
 * the same order as on the CPU; contraction into FMA is off.
 *
 * Build defines: LATTICE_NAME (D3Q19, ...), REAL_DOUBLE (0 or 1), NX, NY, NZ (interior
 * cells of the block), TRT, FORCE, ADE and COUPLED (0 or 1; ADE: the advection-diffusion
 * collision instead of the flow's; COUPLED: per-cell fields in and out). A field holds Q arrays (one per
 * direction) of SX*SY*SZ cells, the ghost layer included, x fastest:
 * f[i * NCELLS + x + SX * (y + SY * z)] for cell (x - 1, y - 1, z - 1) of the block.
 *
 * The stream-collide advances many blocks of this size in one launch: their fields lie
 * in the same arrays (a field set, kernels_gpu/gpu_field.h), block b's at element
 * bases[b]; the launch's third dimension runs over z of block b0, then of b0 + 1, ...
 * (global size NZ times the blocks). */
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

/* The lattice's tables, read with constant indices in unrolled loops (folded away). */
__constant int lat_cx[LAT(Q)] = {LAT(CX)};
__constant int lat_cy[LAT(Q)] = {LAT(CY)};
__constant int lat_cz[LAT(Q)] = {LAT(CZ)};
__constant int lat_inv[LAT(Q)] = {LAT(INV)};
#define LAT_CX(i) lat_cx[i]
#define LAT_CY(i) lat_cy[i]
#define LAT_CZ(i) lat_cz[i]
#define LAT_INV(i) lat_inv[i]

typedef struct lbm_consts {
  LBM_CONSTS_FIELDS(REAL)
} lbm_consts_t;

/* cell offset of c_i */
#define C_OFF(I) ((long)LAT_CX(I) + SX * ((long)LAT_CY(I) + SY * (long)LAT_CZ(I)))

#define LBM_T REAL
#define LBM_ZERO ((REAL)0)
#define LBM_K_T REAL
#define LBM_K_ZERO ((REAL)0)
#define LBM_LD(I) src[(long)(I) * NCELLS + cell - C_OFF(I)]
#define LBM_ST(I, V) dst[(long)(I) * NCELLS + cell] = (V)

/* The block and z of work item (., ., zb) of a launch from block b0, and the block's
 * field in the arrays (src0, dst0). */
#define LBM_BLOCK_CELL                                                                 \
  const int x = get_global_id(0), y = get_global_id(1), zb = get_global_id(2);        \
  const int b_ = b0 + zb / NZ, z = zb % NZ;                                            \
  if (x >= NX || y >= NY) return;                                                      \
  __global const REAL *restrict src = src0 + bases[b_];                                \
  __global REAL *restrict dst = dst0 + bases[b_];

#if !COUPLED
/* Pull stream and collide of every interior cell of every block. */
__kernel void lbm_stream_collide(__global const REAL *restrict src0, __global REAL *restrict dst0,
                                 __constant lbm_consts_t *k, __global const long *bases,
                                 const int b0) {
  LBM_BLOCK_CELL
  const long cell = (long)(x + 1) + SX * ((long)(y + 1) + SY * (long)(z + 1));
  LBM_COLLIDE_CONSTS;
#if ADE
  LBM_ADE_CELL(TRT)
#else
  LBM_COLLIDE_CELL(TRT, FORCE)
#endif
}
#else
/* The coupled stream-collide (lbm_kernels_t.coupled on the CPU): per-cell fields of 3
 * components of the block's interior, element origin + x + sy y + sz z + sc c (the CPU's
 * SoA field layout, copied as it is). The flow (ADE 0) always has the force terms; in: a
 * body force added to the constant one (NULL: none), counted half where start is 1;
 * out: the velocity the collision used (NULL: not written). ADE 1: in: the advection velocity (required); out: a
 * source linear in the cell's scalar C, beta (C - c0), written or (accumulate) added
 * (NULL: not written). Every per-cell field has the layout of the first (origin, sy,
 * sz, sc); block b's are at in_bases[b] and out_bases[b] of their arrays. */
__kernel void lbm_stream_collide(__global const REAL *restrict src0, __global REAL *restrict dst0,
                                 __constant lbm_consts_t *kg, __global const long *bases,
                                 const int b0, __global const REAL *aux_in0,
                                 __global REAL *aux_out0, __global const long *in_bases,
                                 __global const long *out_bases,
                                 const long origin, const long sy,
                                 const long sz, const long sc, const REAL bx, const REAL by,
                                 const REAL bz, const REAL c0, const int start,
                                 const int accumulate) {
  LBM_BLOCK_CELL
  __global const REAL *aux_in = aux_in0 ? aux_in0 + in_bases[b_] : aux_in0;
  __global REAL *aux_out = aux_out0 ? aux_out0 + out_bases[b_] : aux_out0;
  const long cell = (long)(x + 1) + SX * ((long)(y + 1) + SY * (long)(z + 1));
  const long a_ = origin + x + sy * y + sz * z;
  lbm_consts_t kc = *kg;
#if ADE
  kc.ax = aux_in[a_];
  kc.ay = aux_in[a_ + sc];
  kc.az = aux_in[a_ + 2 * sc];
#else
  if (aux_in) {
    const REAL fw_ = start ? (REAL)0.5 : (REAL)1;
    LBM_CELL_FORCE_CONSTS(kc, fw_ * (kg->fx + aux_in[a_]), fw_ * (kg->fy + aux_in[a_ + sc]),
                          fw_ * (kg->fz + aux_in[a_ + 2 * sc]));
  }
#endif
  const lbm_consts_t *k = &kc;
  LBM_COLLIDE_CONSTS;
#if ADE
  LBM_ADE_CELL(TRT)
  if (aux_out) {
    const REAL dc_ = rho - c0;
    aux_out[a_] = (accumulate ? aux_out[a_] : (REAL)0) + bx * dc_;
    aux_out[a_ + sc] = (accumulate ? aux_out[a_ + sc] : (REAL)0) + by * dc_;
    aux_out[a_ + 2 * sc] = (accumulate ? aux_out[a_ + 2 * sc] : (REAL)0) + bz * dc_;
  }
#else
  LBM_COLLIDE_CELL(TRT, 1)
  if (aux_out) {
    aux_out[a_] = ux;
    aux_out[a_ + sc] = uy;
    aux_out[a_ + 2 * sc] = uz;
  }
#endif
}
#endif

/* Bounce-back links of a block: f[to] = f[from] + extra (negate: -f[from] + extra, the
 * anti-bounce-back of a fixed scalar), independent of each other (links write wall slots
 * and read fluid slots). idx holds (to, from) pairs of field element indices. */
__kernel void lbm_boundary(__global REAL *f, __global const ulong2 *idx,
                             __global const REAL *extra, const ulong n, const int negate) {
  const size_t k = get_global_id(0);
  if (k >= n) return;
  const ulong2 l = idx[k];
  f[l.x] = (negate ? -f[l.y] : f[l.y]) + extra[k];
}

/* The density the next stream-collide will see in every interior cell (the sum of the
 * values it pulls, in direction order, plus shift), into out at origin + x + sy y + sz z:
 * lbm_pulled_density of the CPU. Many blocks as the stream-collide: block b's fields at
 * bases[b] and out_bases[b]. */
__kernel void lbm_pulled_density(__global const REAL *f0, __global REAL *out0,
                                 __global const long *bases, const int b0,
                                 __global const long *out_bases, const long origin,
                                 const long sy, const long sz, const REAL shift) {
  const int x = get_global_id(0), y = get_global_id(1), zb = get_global_id(2);
  const int b_ = b0 + zb / NZ, z = zb % NZ;
  if (x >= NX || y >= NY) return;
  __global const REAL *f = f0 + bases[b_];
  __global REAL *out = out0 + out_bases[b_];
  const long cell = (long)(x + 1) + SX * ((long)(y + 1) + SY * (long)(z + 1));
  REAL r = f[cell];
  for (int i = 1; i < LAT(Q); ++i) r = r + f[(long)i * NCELLS + cell - C_OFF(i)];
  out[origin + x + sy * y + sz * z] = r + shift;
}

/* Density and velocity of every interior cell, x fastest: out[n] = rho, out[N + 3n + a]
 * = u_a (N interior cells), summed in the order of the CPU moments (lbm_kernels_t.moments),
 * in double precision where the device has it (MOMENTS_DOUBLE). fhalf: -1/2 with a body
 * force (stored PDFs carry the whole force of the step, the velocity half of it), else 0. */
#if MOMENTS_DOUBLE
#define MREAL double
#else
#define MREAL float
#endif
/* The moments of interior cell (x, y, z): rho (plus rho0 where shifted) and u. */
static void cell_moments(__global const REAL *f, const int x, const int y, const int z,
                         const MREAL rho0, const MREAL fhalf, const MREAL fx, const MREAL fy,
                         const MREAL fz, const int shifted, MREAL *rho_out, MREAL *u) {
  const long cell = (long)(x + 1) + SX * ((long)(y + 1) + SY * (long)(z + 1));
  MREAL rho = 0, jx = 0, jy = 0, jz = 0;
  for (int i = 0; i < LAT(Q); ++i) {
    const MREAL v = (MREAL)f[(long)i * NCELLS + cell];
    rho += v;
    jx += (MREAL)lat_cx[i] * v;
    jy += (MREAL)lat_cy[i] * v;
    jz += (MREAL)lat_cz[i] * v;
  }
  *rho_out = shifted ? rho + rho0 : rho;
  u[0] = (jx + fhalf * fx) / rho0;
  u[1] = (jy + fhalf * fy) / rho0;
  u[2] = (jz + fhalf * fz) / rho0;
}

__kernel void lbm_moments(__global const REAL *f, __global MREAL *out, const MREAL rho0,
                            const MREAL fhalf, const MREAL fx, const MREAL fy, const MREAL fz,
                            const int shifted) {
  const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  if (x >= NX || y >= NY || z >= NZ) return;
  const long n = (long)x + NX * ((long)y + NY * (long)z), N = (long)NX * NY * NZ;
  MREAL rho, u[3];
  cell_moments(f, x, y, z, rho0, fhalf, fx, fy, fz, shifted, &rho, u);
  out[n] = rho;
  out[N + 3 * n] = u[0];
  out[N + 3 * n + 1] = u[1];
  out[N + 3 * n + 2] = u[2];
}

/* The stability check of the moments, on the device: *first becomes the smallest index n
 * of an interior cell with flags[n] == fluid whose rho is not finite or not above 0 or
 * whose |u|^2 is not below cs2 (as lbm_cell_stable); the host sets it to INT_MAX first.
 * Only 4 bytes come back, instead of the moments. */
__kernel void lbm_check(__global const REAL *f, __global const uchar *flags,
                        __global int *first, const MREAL rho0, const MREAL fhalf,
                        const MREAL fx, const MREAL fy, const MREAL fz, const int shifted,
                        const MREAL cs2, const uchar fluid) {
  const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  if (x >= NX || y >= NY || z >= NZ) return;
  const int n = x + NX * (y + NY * z); /* the host checks that a block's cells fit an int */
  if (flags[n] != fluid) return;
  MREAL rho, u[3];
  cell_moments(f, x, y, z, rho0, fhalf, fx, fy, fz, shifted, &rho, u);
  if (!(rho > 0 && isfinite(rho) && u[0] * u[0] + u[1] * u[1] + u[2] * u[2] < cs2))
    atomic_min(first, n);
}
