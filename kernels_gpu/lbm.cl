/* lbm.cl: lattice Boltzmann kernels on the GPU layout (SoA), for any lattice of
 * kernels_cpu/lattice_defs.h. The program source is kernels_cpu/lattice_defs.h,
 * kernels_cpu/lbm_collide.h and this file, so the collision is the same expressions in
 * the same order as on the CPU; contraction into FMA is off.
 *
 * Build defines: LATTICE_NAME (D3Q19, ...), REAL_DOUBLE (0 or 1), NX, NY, NZ (interior
 * cells of the block), TRT, FORCE, ADE and COUPLED (0 or 1; ADE: the advection-diffusion
 * collision instead of the flow's; COUPLED: per-cell fields in and out). A field holds Q arrays (one per
 * direction) of SX*SY*SZ cells, the ghost layer included, x fastest:
 * f[i * NCELLS + x + SX * (y + SY * z)] for cell (x - 1, y - 1, z - 1) of the block. */
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
#define LBM_LD(I) src[(long)(I) * NCELLS + cell - C_OFF(I)]
#define LBM_ST(I, V) dst[(long)(I) * NCELLS + cell] = (V)

#if !COUPLED
/* Pull stream and collide of every interior cell; global size (NX, NY, NZ) or more. */
__kernel void lbm_stream_collide(__global const REAL *restrict src, __global REAL *restrict dst,
                                 __constant lbm_consts_t *k) {
  const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  if (x >= NX || y >= NY || z >= NZ) return;
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
 * out: the velocity the collision used (NULL: not written). ADE 1: in: the advection
 * velocity (required); out: beta (C - c0), the force of the cell's scalar C (NULL: not
 * written). */
__kernel void lbm_stream_collide(__global const REAL *restrict src, __global REAL *restrict dst,
                                 __constant lbm_consts_t *kg, __global const REAL *aux_in,
                                 __global REAL *aux_out, const long origin, const long sy,
                                 const long sz, const long sc, const REAL bx, const REAL by,
                                 const REAL bz, const REAL c0, const int start) {
  const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  if (x >= NX || y >= NY || z >= NZ) return;
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
    aux_out[a_] = bx * dc_;
    aux_out[a_ + sc] = by * dc_;
    aux_out[a_ + 2 * sc] = bz * dc_;
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

/* Ghost exchange. The 26 slots are the faces, edges and corners of the block in the
 * numbering of blocks/direction.h; a table row per slot (GHOST_TAB ints): the slice's
 * first cell (lo, 3), its extent (3), the number of crossing PDFs and their directions
 * (up to 9), the slot's first work item and its first element in the message buffer.
 * A slot's values are its cells in z-y-x order, each with its crossing PDFs in list
 * order: the common message layout of every hardware. */
#define GHOST_SLOTS 26
#define T_NCOMP 6
#define T_COMP 7
#define T_ITEM 16
#define T_OFFSET 17
#define GHOST_TAB 18

/* The slot of work item g, and the field cell of its slice cell. */
static int ghost_slot(__constant const int *tab, const int g) {
  int s = 0;
  while (s + 1 < GHOST_SLOTS && tab[(s + 1) * GHOST_TAB + T_ITEM] <= g) ++s;
  return s;
}

static long ghost_cell(__constant const int *t, const int k) {
  const int x = t[0] + k % t[3], y = t[1] + (k / t[3]) % t[4], z = t[2] + k / (t[3] * t[4]);
  return (long)(x + 1) + SX * ((long)(y + 1) + SY * (long)(z + 1));
}

/* Writes the crossing PDFs of all slots into out; one work item per slice cell. */
__kernel void lbm_pack(__global const REAL *f, __global REAL *out, __constant int *tab,
                         const int nitems) {
  const int g = get_global_id(0);
  if (g >= nitems) return;
  __constant const int *t = tab + ghost_slot(tab, g) * GHOST_TAB;
  const int k = g - t[T_ITEM];
  const long cell = ghost_cell(t, k);
  const long o = (long)t[T_OFFSET] + (long)k * t[T_NCOMP];
  for (int c = 0; c < t[T_NCOMP]; ++c) out[o + c] = f[(long)t[T_COMP + c] * NCELLS + cell];
}

/* Reads the slots whose bit is set in mask into the ghost layer (tab: the receiving
 * slices). Slot s comes from buffer s<s> at element o<s>: the block's own message buffer
 * (data that came through the host) or a neighbour's pack buffer on this device. */
#define GHOST_SRC(S) __global const REAL *s##S, const long o##S
#define GHOST_CASE(S) case S: src = s##S + o##S; break;
__kernel void lbm_unpack(__global REAL *f, __constant int *tab, const int nitems,
                           const uint mask, GHOST_SRC(0), GHOST_SRC(1), GHOST_SRC(2),
                           GHOST_SRC(3), GHOST_SRC(4), GHOST_SRC(5), GHOST_SRC(6), GHOST_SRC(7),
                           GHOST_SRC(8), GHOST_SRC(9), GHOST_SRC(10), GHOST_SRC(11),
                           GHOST_SRC(12), GHOST_SRC(13), GHOST_SRC(14), GHOST_SRC(15),
                           GHOST_SRC(16), GHOST_SRC(17), GHOST_SRC(18), GHOST_SRC(19),
                           GHOST_SRC(20), GHOST_SRC(21), GHOST_SRC(22), GHOST_SRC(23),
                           GHOST_SRC(24), GHOST_SRC(25)) {
  const int g = get_global_id(0);
  if (g >= nitems) return;
  const int s = ghost_slot(tab, g);
  if (!((mask >> s) & 1u)) return;
  __global const REAL *src = 0;
  switch (s) {
    GHOST_CASE(0) GHOST_CASE(1) GHOST_CASE(2) GHOST_CASE(3) GHOST_CASE(4) GHOST_CASE(5)
    GHOST_CASE(6) GHOST_CASE(7) GHOST_CASE(8) GHOST_CASE(9) GHOST_CASE(10) GHOST_CASE(11)
    GHOST_CASE(12) GHOST_CASE(13) GHOST_CASE(14) GHOST_CASE(15) GHOST_CASE(16) GHOST_CASE(17)
    GHOST_CASE(18) GHOST_CASE(19) GHOST_CASE(20) GHOST_CASE(21) GHOST_CASE(22) GHOST_CASE(23)
    GHOST_CASE(24) GHOST_CASE(25)
  }
  __constant const int *t = tab + s * GHOST_TAB;
  const int k = g - t[T_ITEM];
  const long cell = ghost_cell(t, k);
  for (int c = 0; c < t[T_NCOMP]; ++c)
    f[(long)t[T_COMP + c] * NCELLS + cell] = src[(long)k * t[T_NCOMP] + c];
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
