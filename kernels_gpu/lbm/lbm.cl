/* lbm.cl: lattice Boltzmann kernels on the GPU layout (SoA), for any lattice of
 * kernels_cpu/lattice_defs.h. The program source is kernels_cpu/lattice_defs.h,
 * kernels_cpu/lbm/lbm_collide.h and this file, so the collision is the same expressions in
 * the same order as on the CPU; contraction into FMA is off.
 *
 * Build defines: LATTICE_NAME (D3Q19, ...), REAL_DOUBLE (0 or 1), STORE16 (0: populations
 * stored as REAL; 2, 3: in 16 bits, format S or C of kernels_cpu/store16.h, part of the
 * program source, with float arithmetic), NX, NY, NZ (interior
 * cells of the block), GZ (the ghost layers along z: 1, or 0 for a 2-D lattice),
 * COLLISION (0 SRT, 1 TRT, 2 MRT, 3 cumulant), LES, FORCE, ADE and COUPLED (0 or 1; LES: the
 * Smagorinsky model; ADE: the advection-diffusion collision instead of the
 * flow's; COUPLED: per-cell fields in and out). A field holds Q arrays (one per
 * direction) of SX*SY*SZ cells, the ghost layer included, x fastest:
 * f[i * NCELLS + x + SX * (y + SY * z)] for cell (x - 1, y - 1, z - GZ) of the block.
 *
 * The stream-collide advances many blocks of this size in one launch: their fields lie
 * in the same arrays (a field set, kernels_gpu/gpu_field.h), block b's at element
 * bases[b]; the launch's third dimension runs over z of block b0, then of b0 + 1, ...
 * (global size NZ times the blocks). */
#pragma OPENCL FP_CONTRACT OFF
#if REAL_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define REAL double
#define REAL8 double8
#else
#define REAL float
#define REAL8 float8
#endif
/* The populations' storage: STORE_T the type of a stored value, SLD(p, i) the value at
 * element i as REAL, SST(p, i, v) stores v there (format S by the binary16 conversions of
 * OpenCL, which store16.h's scale by 2^15 makes the same bits as the CPU's). */
#if STORE16 == 2
#define STORE_T ushort
#define SLD(p, i) (vload_half((i), (const __global half *)(p)) * 0x1p-15f)
#define SST(p, i, v) vstore_half_rte((v) * 0x1p15f, (i), (__global half *)(p))
#elif STORE16 == 3
#define STORE_T ushort
#define SLD(p, i) store16_c_decode((p)[i])
#define SST(p, i, v) ((p)[i] = store16_c_encode(v))
#else
#define STORE_T REAL
#define SLD(p, i) ((p)[i])
#define SST(p, i, v) ((p)[i] = (v))
#endif

#define SX (NX + 2)
#define SY (NY + 2)
#define SZ (NZ + 2 * GZ)
#define NCELLS ((long)SX * SY * SZ)

/* The lattice's tables, read with constant indices in unrolled loops (folded away). */
__constant int lat_cx[LAT(Q)] = {LAT(CX)};
__constant int lat_cy[LAT(Q)] = {LAT(CY)};
__constant int lat_cz[LAT(Q)] = {LAT(CZ)};
__constant int lat_inv[LAT(Q)] = {LAT(INV)};
__constant int lat_m[LATTICE_MAX_Q][LATTICE_MAX_Q] = LATTICE_MOMENT_TABLE;
#define LAT_CX(i) lat_cx[i]
#define LAT_CY(i) lat_cy[i]
#define LAT_CZ(i) lat_cz[i]
#define LAT_INV(i) lat_inv[i]
#define LAT_M(k, i) lat_m[k][i]

typedef struct lbm_consts {
  LBM_CONSTS_FIELDS(REAL)
} lbm_consts_t;

/* cell offset of c_i */
#define C_OFF(I) ((long)LAT_CX(I) + SX * ((long)LAT_CY(I) + SY * (long)LAT_CZ(I)))

#define LBM_T REAL
#define LBM_ZERO ((REAL)0)
#define LBM_K_T REAL
#define LBM_K_ZERO ((REAL)0)
/* Which cells of block b_ a launch computes: part 1 only those of its box
 * boxes[6 b_ .. 6 b_ + 5] (lo x, y, z, hi x, y, z; the inner part of an overlapped
 * step), part 2 only the others, 0 every cell. */
#define LBM_PART_CELL                                                                  \
  if (part) {                                                                          \
    __global const int *bx_ = boxes + 6 * b_;                                          \
    const int in_ = x >= bx_[0] && x < bx_[3] && y >= bx_[1] && y < bx_[4] &&          \
                    z >= bx_[2] && z < bx_[5];                                         \
    if (in_ != (part == 1)) return;                                                    \
  }
/* The block and z of work item (., ., zb) of a launch from block b0, those of its part,
 * and the block's field in the arrays (src0, dst0; the same array for a field streamed
 * in place). */
#define LBM_BLOCK_CELL(RESTRICT)                                                       \
  const int x = get_global_id(0), y = get_global_id(1), zb = get_global_id(2);        \
  const int b_ = b0 + zb / NZ, z = zb % NZ;                                            \
  if (x >= NX || y >= NY) return;                                                      \
  LBM_PART_CELL                                                                        \
  __global const STORE_T *RESTRICT src = src0 + bases[b_];                             \
  __global STORE_T *RESTRICT dst = dst0 + bases[b_];                                   \
  const long cell = (long)(x + 1) + SX * ((long)(y + 1) + SY * (long)(z + GZ));

/* Three ways to stream (LBM_LD: the value pulled into direction I, LBM_ST: where the
 * post-collision value of direction I goes); the collision between is the same.
 *   two grids:       pull from the neighbours of src, store into the cell of dst;
 *   in place, even:  the array natural (as two grids' src): pull from the neighbours,
 *                    store each value into the slot it came from, reversed (I's value to
 *                    inv(I) of the cell c_I away), which leaves the array swapped;
 *   in place, odd:   the array swapped: the values pulled lie in the cell itself, in the
 *                    reversed slots; store into the cell's own slots: natural again.
 * Every work item writes exactly the slots it read, so one array suffices (the AA
 * pattern of Bailey et al. 2009), and the collision sees bitwise what two grids give it. */
#define LD_TWO(I) SLD(src, (long)(I) * NCELLS + cell - C_OFF(I))
#define ST_TWO(I, V) SST(dst, (long)(I) * NCELLS + cell, (V))
#define LD_EVEN(I) SLD(src, (long)(I) * NCELLS + cell - C_OFF(I))
#define ST_EVEN(I, V) SST(dst, (long)LAT_INV(I) * NCELLS + cell + C_OFF(I), (V))
#define LD_ODD(I) SLD(src, (long)LAT_INV(I) * NCELLS + cell)
#define ST_ODD(I, V) SST(dst, (long)(I) * NCELLS + cell, (V))

#define LBM_T REAL
#define LBM_ZERO ((REAL)0)
#define LBM_K_T REAL
#define LBM_K_ZERO ((REAL)0)

#define LBM_SQRT(V) sqrt(V)
#if ADE
#define LBM_CELL_UPDATE(FORCE_) LBM_ADE_CELL(COLLISION)
#else /* MRT, the cumulant and the Smagorinsky variants always with the force terms, as on the CPU */
#define LBM_CELL_UPDATE(FORCE_) LBM_FLOW_CELL(COLLISION, LES, (LES || COLLISION >= 2 || FORCE_))
#endif

#if !COUPLED
/* Stream and collide of every interior cell of every block. */
#define LBM_SC_KERNEL(NAME, RESTRICT)                                                  \
  __kernel void NAME(__global const STORE_T *RESTRICT src0,                            \
                     __global STORE_T *RESTRICT dst0,                                   \
                     __constant lbm_consts_t *k, __global const long *bases,            \
                     const int b0, __global const int *boxes, const int part) {         \
    LBM_BLOCK_CELL(RESTRICT)                                                            \
    LBM_COLLIDE_CONSTS;                                                                 \
    LBM_CELL_UPDATE(FORCE)                                                              \
  }
#else
/* The coupled stream-collide (lbm_kernels_t.coupled on the CPU): per-cell fields of 3
 * components of the block's interior, element origin + x + sy y + sz z + sc c (the CPU's
 * SoA field layout, copied as it is). The flow (ADE 0) always has the force terms; in: a
 * body force added to the constant one (NULL: none), counted half where start is 1;
 * out: the velocity the collision used (NULL: not written). ADE 1: in: the advection
 * velocity (required); out: a source linear in the cell's scalar C, beta (C - c0),
 * written or (accumulate) added (NULL: not written). Every per-cell field has the layout
 * of the first (origin, sy, sz, sc); block b's are at in_bases[b] and out_bases[b] of
 * their arrays. */
#if ADE
#define LBM_COUPLED_IN                                                                 \
  kc.ax = aux_in[a_];                                                                  \
  kc.ay = aux_in[a_ + sc];                                                             \
  kc.az = aux_in[a_ + 2 * sc];
#define LBM_COUPLED_OUT                                                                \
  if (aux_out) {                                                                       \
    const REAL dc_ = rho - c0;                                                         \
    aux_out[a_] = (accumulate ? aux_out[a_] : (REAL)0) + bx * dc_;                     \
    aux_out[a_ + sc] = (accumulate ? aux_out[a_ + sc] : (REAL)0) + by * dc_;           \
    aux_out[a_ + 2 * sc] = (accumulate ? aux_out[a_ + 2 * sc] : (REAL)0) + bz * dc_;   \
  }
#else
#define LBM_COUPLED_IN                                                                 \
  if (aux_in) {                                                                        \
    const REAL fw_ = start ? (REAL)0.5 : (REAL)1;                                      \
    LBM_CELL_FORCE_CONSTS(kc, fw_ * (kg->fx + aux_in[a_]), fw_ * (kg->fy + aux_in[a_ + sc]), \
                          fw_ * (kg->fz + aux_in[a_ + 2 * sc]));                       \
  }
#define LBM_COUPLED_OUT                                                                \
  if (aux_out) {                                                                       \
    aux_out[a_] = ux;                                                                  \
    aux_out[a_ + sc] = uy;                                                             \
    aux_out[a_ + 2 * sc] = uz;                                                         \
  }
#endif
#define LBM_SC_KERNEL(NAME, RESTRICT)                                                  \
  __kernel void NAME(__global const STORE_T *RESTRICT src0,                            \
                     __global STORE_T *RESTRICT dst0,                                   \
                     __constant lbm_consts_t *kg, __global const long *bases,           \
                     const int b0, __global const int *boxes, const int part,           \
                     __global const REAL *aux_in0,                                      \
                     __global REAL *aux_out0, __global const long *in_bases,            \
                     __global const long *out_bases, const long origin, const long sy,  \
                     const long sz, const long sc, const REAL bx, const REAL by,        \
                     const REAL bz, const REAL c0, const int start,                     \
                     const int accumulate) {                                            \
    LBM_BLOCK_CELL(RESTRICT)                                                            \
    __global const REAL *aux_in = aux_in0 ? aux_in0 + in_bases[b_] : aux_in0;           \
    __global REAL *aux_out = aux_out0 ? aux_out0 + out_bases[b_] : aux_out0;            \
    const long a_ = origin + x + sy * y + sz * z;                                       \
    lbm_consts_t kc = *kg;                                                              \
    LBM_COUPLED_IN                                                                      \
    const lbm_consts_t *k = &kc;                                                        \
    LBM_COLLIDE_CONSTS;                                                                 \
    LBM_CELL_UPDATE(1)                                                                  \
    LBM_COUPLED_OUT                                                                     \
  }
#endif

#define LBM_LD LD_TWO
#define LBM_ST ST_TWO
LBM_SC_KERNEL(lbm_stream_collide, restrict)
#undef LBM_LD
#undef LBM_ST
#define LBM_LD LD_EVEN
#define LBM_ST ST_EVEN
LBM_SC_KERNEL(lbm_stream_collide_even, )
#undef LBM_LD
#undef LBM_ST
#define LBM_LD LD_ODD
#define LBM_ST ST_ODD
LBM_SC_KERNEL(lbm_stream_collide_odd, )
#undef LBM_LD
#undef LBM_ST

/* Bounce-back links of a block: f[to] = f[from] + extra (negate: -f[from] + extra, the
 * anti-bounce-back of a fixed scalar), independent of each other (links write wall slots
 * and read fluid slots). idx holds (to, from) pairs of field element indices. With group
 * (not NULL), extra times the factor of the link's group, scale.s0..s7 (lbm_kernels.h
 * lbm_link_t: walls whose velocity changes in time). */
__kernel void lbm_boundary(__global STORE_T *f, __global const ulong2 *idx,
                             __global const REAL *extra, const ulong n, const int negate,
                             __global const uchar *group, const REAL8 scale) {
  const size_t k = get_global_id(0);
  if (k >= n) return;
  const ulong2 l = idx[k];
  REAL e = extra[k];
  if (group) { /* the group's factor, picked by component (vstore8 of a double8 to private
                  memory made PoCL warn on every build: a vector ABI beyond AVX2) */
    const uchar g = group[k];
    const REAL s = g < 4 ? (g < 2 ? (g == 0 ? scale.s0 : scale.s1) : (g == 2 ? scale.s2 : scale.s3))
                         : (g < 6 ? (g == 4 ? scale.s4 : scale.s5) : (g == 6 ? scale.s6 : scale.s7));
    e = e * s;
  }
  const REAL from = SLD(f, l.y);
  SST(f, l.x, (negate ? -from : from) + e);
}

/* Links to obstacles (lbm_kernels.h lbm_body_link_t): f[to] = a f[from] + b f[from2]
 * (idx: (to, from), idx2: (to, from2), coef: a, b), and the momentum each exchanges with
 * its body (meta.x >= 0), c_o (f[from] + f[to]) in fixed point, into out[3k..3k+2]
 * (zeros for a link without a body; the host sums them as integers). */
__kernel void lbm_bodies(__global STORE_T *f, __global const ulong2 *idx,
                         __global const ulong2 *idx2,
                         __global const REAL *coef, __global const int2 *meta, const ulong n,
                         __global long *out) {
  const size_t k = get_global_id(0);
  if (k >= n) return;
  const ulong2 l = idx[k], l2 = idx2[k];
  const REAL from = SLD(f, l.y);
  SST(f, l.x, coef[2 * k] * from + coef[2 * k + 1] * SLD(f, l2.y));
  const int2 m = meta[k];
  long q = 0; /* with the stored value (16 bits: rounded), as the CPU's */
  if (m.x >= 0) q = convert_long_rte((from + SLD(f, l.x)) * (REAL)(1L << FORCE_SHIFT));
  const int c[3] = {lat_cx[m.y], lat_cy[m.y], lat_cz[m.y]};
  for (int a = 0; a < 3; ++a) out[3 * k + a] = c[a] > 0 ? q : c[a] < 0 ? -q : 0;
}

/* Pressure-outlet links (lbm_kernels.h lbm_open_link_t, lbm_collide.h
 * LBM_OUTLET_CELL and _LINK) from the two cells whose component 0 lies at cells[k]
 * (natural layout; swapped: a field streamed in place, the values of a cell lie at inv(i)
 * of the cell c_i away). idx and extra as lbm_boundary's, dirs the links' directions,
 * w[2k], w[2k + 1] their w2 and wrho0. */
__kernel void lbm_outlet(__global STORE_T *f, __global const ulong2 *idx,
                         __global const REAL *extra, __global const long2 *cells,
                         __global const int *dirs, __global const REAL *w, const ulong n,
                         const int swapped, const REAL hfx, const REAL hfy, const REAL hfz,
                         const REAL inv_rho0) {
  const size_t k = get_global_id(0);
  if (k >= n) return;
  const ulong2 l = idx[k];
  const long2 c = cells[k];
#define OUTLET_LD1(i)                                                                    \
  (swapped ? SLD(f, c.x + (long)LAT_INV(i) * NCELLS + C_OFF(i)) : SLD(f, c.x + (long)(i) * NCELLS))
#define OUTLET_LD2(i)                                                                    \
  (swapped ? SLD(f, c.y + (long)LAT_INV(i) * NCELLS + C_OFF(i)) : SLD(f, c.y + (long)(i) * NCELLS))
  REAL r, fx, fy, fz, gx, gy, gz, v;
  LBM_OUTLET_CELL(OUTLET_LD1, OUTLET_LD2, r, fx, fy, fz, gx, gy, gz, hfx, hfy, hfz, inv_rho0);
  LBM_OUTLET_LINK(v, dirs[k], SLD(f, l.y), extra[k], w[2 * k], w[2 * k + 1], r, fx, fy, fz, gx,
                  gy, gz);
#undef OUTLET_LD1
#undef OUTLET_LD2
  SST(f, l.x, v);
}

/* The density the next stream-collide will see in every interior cell (the sum of the
 * values it pulls, in direction order, plus shift), into out at origin + x + sy y + sz z:
 * lbm_pulled_density of the CPU. Many blocks as the stream-collide: block b's fields at
 * bases[b] and out_bases[b]. swapped: a field streamed in place, swapped (the values
 * pulled lie in the cell itself, reversed). part and boxes: as the stream-collide's. */
__kernel void lbm_pulled_density(__global const STORE_T *f0, __global REAL *out0,
                                 __global const long *bases, const int b0,
                                 __global const long *out_bases, const long origin,
                                 const long sy, const long sz, const REAL shift,
                                 const int swapped, __global const int *boxes,
                                 const int part) {
  const int x = get_global_id(0), y = get_global_id(1), zb = get_global_id(2);
  const int b_ = b0 + zb / NZ, z = zb % NZ;
  if (x >= NX || y >= NY) return;
  LBM_PART_CELL
  __global const STORE_T *f = f0 + bases[b_];
  __global REAL *out = out0 + out_bases[b_];
  const long cell = (long)(x + 1) + SX * ((long)(y + 1) + SY * (long)(z + GZ));
  REAL r = SLD(f, cell);
  for (int i = 1; i < LAT(Q); ++i)
    r = r + (swapped ? SLD(f, (long)LAT_INV(i) * NCELLS + cell)
                     : SLD(f, (long)i * NCELLS + cell - C_OFF(i)));
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
/* The moments of interior cell (x, y, z): rho (plus rho0 where shifted) and u. swapped:
 * a field streamed in place, swapped (value i of the cell lies at inv(i) of the cell c_i
 * away). */
static void cell_moments(__global const STORE_T *f, const int x, const int y, const int z,
                         const MREAL rho0, const MREAL fhalf, const MREAL fx, const MREAL fy,
                         const MREAL fz, const int shifted, const int swapped,
                         MREAL *rho_out, MREAL *u) {
  const long cell = (long)(x + 1) + SX * ((long)(y + 1) + SY * (long)(z + GZ));
  MREAL rho = 0, jx = 0, jy = 0, jz = 0;
  for (int i = 0; i < LAT(Q); ++i) {
    const MREAL v = (MREAL)(swapped ? SLD(f, (long)LAT_INV(i) * NCELLS + cell + C_OFF(i))
                                    : SLD(f, (long)i * NCELLS + cell));
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

__kernel void lbm_moments(__global const STORE_T *f, __global MREAL *out, const MREAL rho0,
                            const MREAL fhalf, const MREAL fx, const MREAL fy, const MREAL fz,
                            const int shifted, const int swapped) {
  const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  if (x >= NX || y >= NY || z >= NZ) return;
  const long n = (long)x + NX * ((long)y + NY * (long)z), N = (long)NX * NY * NZ;
  MREAL rho, u[3];
  cell_moments(f, x, y, z, rho0, fhalf, fx, fy, fz, shifted, swapped, &rho, u);
  out[n] = rho;
  out[N + 3 * n] = u[0];
  out[N + 3 * n + 1] = u[1];
  out[N + 3 * n + 2] = u[2];
}

/* The stability check of the moments, on the device: *first becomes the smallest index n
 * of an interior cell with flags[n] == fluid whose rho is not finite or not above 0 or
 * whose |u|^2 is not below cs2 (as lbm_cell_stable); the host sets it to INT_MAX first.
 * Only 4 bytes come back, instead of the moments. */
__kernel void lbm_check(__global const STORE_T *f, __global const uchar *flags,
                        __global int *first, const MREAL rho0, const MREAL fhalf,
                        const MREAL fx, const MREAL fy, const MREAL fz, const int shifted,
                        const MREAL cs2, const uchar fluid, const int swapped,
                        __global const REAL *vel, const long vorigin, const long vsy,
                        const long vsz, const long vsc) {
  const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  if (x >= NX || y >= NY || z >= NZ) return;
  const int n = x + NX * (y + NY * z); /* the host checks that a block's cells fit an int */
  if (flags[n] != fluid) return;
  MREAL rho, u[3];
  cell_moments(f, x, y, z, rho0, fhalf, fx, fy, fz, shifted, swapped, &rho, u);
  if (vel) { /* the velocity the collision used (a force per cell: half of it) */
    const long a = vorigin + x + vsy * y + vsz * z;
    u[0] = vel[a];
    u[1] = vel[a + vsc];
    u[2] = vel[a + 2 * vsc];
  }
  if (!(rho > 0 && isfinite(rho) && u[0] * u[0] + u[1] * u[1] + u[2] * u[2] < cs2))
    atomic_min(first, n);
}
