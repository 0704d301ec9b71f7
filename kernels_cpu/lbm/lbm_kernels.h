/* lbm_kernels: lattice Boltzmann kernels for every lattice of lattice_defs.h, both CPU
 * layouts (grid.h: AoS and SoA) and every storage (double, single, two 16-bit formats
 * with single-precision arithmetic: lbm_storage_t), written once (lbm_kernels_impl.h
 * over the collision of lbm_collide.h) and instantiated per lattice at compile time.
 * lbm_kernels_find hands out the set for a lattice, layout and storage.
 *
 * Stream-collide: pull, two grids. dst(x) = collide(src(x - c_i)) for every interior
 * cell; the ghost layer of src must hold what streams in (neighbours' post-collision
 * values or boundary values). No boundary branches. The equations are those of
 * lbm_collide.h. The stored PDFs may be f_i or f_i - w_i rho0 ("shifted", for
 * single-precision accuracy); the kernels are the same for both, since the collision
 * sees only differences f - f_eq and the sum of the stored values, rho or rho - rho0,
 * enters the equilibrium in the same place. Only initialisation and the density
 * read-out differ. Every cell goes through the same operations in the same order
 * whatever its position, block, layout or vector lane: the layouts give bitwise equal
 * results, and so do the OpenCL kernels (kernels_gpu/lbm/lbm.cl). */
#ifndef LBM_KERNELS_H
#define LBM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "lattice.h"

typedef struct lbm_params {
  double omega_plus;   /* 1/tau; viscosity nu = c_s^2 (1/omega_plus - 1/2) */
  double omega_minus;  /* TRT only: from the magic parameter, see lbm_omega_minus */
  double rho0;         /* reference density */
  double force[3];     /* body force density */
  int use_force;       /* 0: the force terms are skipped */
  double velocity[3];  /* advection velocity of the ADE variants */
  double mrt_rate[LATTICE_MAX_Q]; /* MRT: the rate s_k of moment k of the lattice's basis
                                     (lattice_defs.h; conserved moments: not used) */
  double cumulant_rate[5]; /* cumulant: the rates of the bulk and of orders 3 to 6 */
  double shift;        /* the stored values are f_i - w_i shift (shifted storage: rho0;
                          the collisions but the cumulant do not depend on it) */
  double smagorinsky;  /* C_s of the Smagorinsky model; 0: off (lbm_collide.h) */
  double magic;        /* TRT with Smagorinsky: Lambda, kept per cell */
} lbm_params_t;

/* omega_minus for magic parameter Lambda = (1/omega_plus - 1/2)(1/omega_minus - 1/2). */
double lbm_omega_minus(double omega_plus, double lambda);

/* What a stream-collide call does. SRT, TRT, MRT, CUMULANT: the flow collision (lbm_collide.h;
 * with the Smagorinsky model where lbm_params_t.smagorinsky > 0).
 * ADE_SRT, ADE_TRT: advection-diffusion of a scalar with the advection velocity of the
 * parameters (no force). STREAM: streaming alone, dst(x)_i = src(x - c_i)_i, with the
 * kernels' loop, loads and stores: the ceiling of the access pattern. COPY:
 * dst(x)_i = src(x)_i, the pull taken out. Both for tessera bench. */
typedef enum lbm_variant {
  LBM_VARIANT_SRT = 0,
  LBM_VARIANT_TRT = 1,
  LBM_VARIANT_STREAM = 2,
  LBM_VARIANT_COPY = 3,
  LBM_VARIANT_ADE_SRT = 4,
  LBM_VARIANT_ADE_TRT = 5,
  LBM_VARIANT_MRT = 6,
  LBM_VARIANT_CUMULANT = 7 /* D2Q9 and D3Q27 */
} lbm_variant_t;

/* Whether lattice l has the cumulant collision (LBM_VARIANT_CUMULANT): D2Q9 and D3Q27,
 * the tensor products of three velocities per axis (lbm_collide.h LBM_CUMULANT_LATTICE). */
static inline int lbm_cumulant_lattice(const lattice_t *l) {
  return l->q == (l->d == 3 ? 27 : 9);
}

/* Initial density and velocity of interior cell (x, y, z) into out[4] (rho, u). Called
 * from several OpenMP threads at once, also for the neighbours of interior cells
 * (LBM_FILL_NONEQ). */
typedef void (*lbm_init_fn)(int x, int y, int z, void *ctx, double out[4]);

/* Flags of lbm_kernels_t.init. SHIFTED: the stored values are f_i - w_i rho0. NONEQ: the
 * interior cells' populations get the non-equilibrium part of the initial velocity's
 * strain rate S (Chapman-Enskog, first order: before collision f_i^eq - w_i rho0 tau /
 * c_s^2 Q_i : S, Q_i = c_i c_i - c_s^2 I); the fields hold populations after collision,
 * so f_i = f_i^eq - w_i rho0 (tau - 1) / c_s^2 Q_i : S. S by central differences of init,
 * tau = 1 / omega_plus (with the Smagorinsky model tau + 3 C_s^2 |S|, |S| = sqrt(2 S:S),
 * the model's relaxation time for that S). For the lattices with the weights' equilibrium
 * (not D3Q13's). */
#define LBM_FILL_SHIFTED 1
#define LBM_FILL_NONEQ 2

/* Boundary links: dst slot = src slot value + extra (or -value + extra: the
 * anti-bounce-back of a fixed scalar, lbm_kernels_t.boundary's negate), both element
 * indices into the field (grid_index). No link reads a slot another link writes (links write wall slots
 * and read fluid slots), so they are applied in parallel. A link of group g > 0 takes its
 * extra times a factor of the step, scale[g] (a wall whose velocity changes in time):
 * (REAL)extra * (REAL)scale[g], in the storage precision, as the OpenCL lbm_boundary. */
enum { LBM_LINK_GROUPS = 8 }; /* group 0: extra as it is; 1..7: scaled */
typedef struct lbm_link {
  size_t to;     /* ghost or solid cell's slot i */
  size_t from;   /* fluid cell's slot inverse(i) */
  double extra;  /* moving-wall term 2 a w_i rho0 c_i.u_w, 0 for no-slip */
  int group;     /* 0..LBM_LINK_GROUPS - 1: the factor scale[group] its extra takes */
  uint32_t ghost; /* the ghost slices its cells lie in (bit d: the slice of direction d of
                     the block's neighbourhood); 0: interior cells only. Not for the kernels:
                     what a step that overlaps its exchange sorts links by */
} lbm_link_t;

/* Pressure-outlet links (lbm_collide.h LBM_OUTLET_CELL and _LINK, the non-equilibrium
 * extrapolation of Guo et al. to the ghost cell s = x - c_i beyond the face):
 *   f[to] = f[from] + e_i(2 rho_w - rho, 2 u - u2) - e_i(rho, u),
 * from slot i of the cell s + n next to s inwards (n the face's inward normal), rho and u
 * the density and velocity of the link's fluid cell x (cell[0]), u2 that of x + n
 * (cell[1]), u = (j - F/2) / rho0 with F the uniform body force. The links of a cell are
 * listed one after the other. Like the plain links,
 * they write wall slots and read fluid slots only: independent of each other and of the
 * plain links. Cells x and x + n are interior cells of the block (all their values are
 * there; ghost cells hold only what crosses into the block), s + n may be a ghost cell:
 * its slot i crosses into the block. */
typedef struct lbm_open_link {
  size_t to, from;  /* as lbm_link_t; from is slot i of s + n */
  size_t cell[2];   /* component 0 of x and of x + n (x again where x + n is no fluid) */
  int dir;          /* i, the direction of to */
  double extra;     /* 2 w_i (rho_w - shift), shift = rho0 for shifted storage, else 0 */
  double w2;        /* 2 w_i */
  double wrho0;     /* w_i rho0 */
  uint32_t ghost;   /* as lbm_link_t */
} lbm_open_link_t;

/* Links to obstacles that are bodies (forces) or have curved walls: the interpolated
 * bounce-back of Bouzidi, Firdaouss and Lallemand (2001) for a wall a fraction q of the
 * link from the fluid cell x (q < 1/2: a = 2q, from2 = slot o of x + c_i, b = 1 - 2q;
 * q >= 1/2: a = 1/(2q), from2 = slot i of x, b = (2q - 1)/(2q); half-way: a = 1, b = 0,
 * from2 = from), o the direction from x to the wall:
 *   f[to] = a f[from] + b f[from2],
 * and, for a body (body >= 0), the momentum the link exchanges with it, c_o (f[from] +
 * f[to]) (Ladd; Mei et al. 2002 for interpolated links), added in fixed point,
 * round(v 2^LBM_FORCE_SHIFT) as 64-bit integers: sums in any order, on any device and
 * any decomposition, are the same. */
enum { LBM_FORCE_SHIFT = 36 };
typedef struct lbm_body_link {
  size_t to, from, from2;
  double a, b;
  int body; /* -1: none */
  int dir;  /* o: the direction of from, towards the wall */
  uint32_t ghost; /* as lbm_link_t */
} lbm_body_link_t;

/* The per-cell inputs and outputs of a coupled stream-collide (lbm_kernels_t.coupled):
 * fields of the same block (the same interior cells, any layout, ghost width and
 * component stride), in the storage precision. A NULL pointer: not used. */
typedef struct lbm_coupling {
  const void *force;        /* flow: a body force per cell (3 components), added to
                               lbm_params_t.force */
  grid_dims_t force_dims;
  void *velocity;           /* flow: out, the velocity u the collision used (3 comp.) */
  grid_dims_t velocity_dims;
  const void *advection;    /* ADE: the advection velocity per cell (3 components) */
  grid_dims_t advection_dims;
  void *source_force;       /* ADE: out, a source linear in the cell's scalar C, beta
                               (C - c0) (3 components; e.g. a buoyancy force); written, or
                               added to what it holds where accumulate is 1 */
  grid_dims_t source_force_dims;
  double beta[3], c0;
  int accumulate;
  /* flow with a force field: 1 on a block's first step from its initial state: the
     force (field and lbm_params_t.force) counts half. Guo's forcing keeps populations of
     momentum rho u - F/2; initial populations without that shift leave a staggered
     momentum sum_x (-1)^(x_a + t) j_a that no collision damps (only the force's
     staggered sum changes it, each step), a period-2 oscillation of amplitude F/2. Half
     the force once puts that sum where it stays. */
  int start;
} lbm_coupling_t;

/* How the populations are stored; the arithmetic is in double for F64, in float for the
 * others. F16S and F16C: 16 bits (store16.h), for shifted storage (f_i - w_i rho0), whose
 * values lie near 0. 0 and 1 are single and double precision, so that a flag "dp" serves
 * where 16 bits are not asked for. */
typedef enum lbm_storage {
  LBM_STORAGE_F32 = 0,
  LBM_STORAGE_F64 = 1,
  LBM_STORAGE_F16S = 2,
  LBM_STORAGE_F16C = 3
} lbm_storage_t;
enum { LBM_STORAGES = 4 };

/* Bytes of a stored value, and of a value of the arithmetic (the collision's constants,
 * the coupling fields, the density of pulled_density): 8 for F64, 4 for the others. */
static inline size_t lbm_storage_bytes(lbm_storage_t s) {
  return s == LBM_STORAGE_F64 ? 8 : s == LBM_STORAGE_F32 ? 4 : 2;
}
static inline size_t lbm_arith_bytes(lbm_storage_t s) { return s == LBM_STORAGE_F64 ? 8 : 4; }

typedef struct lbm_kernels {
  const lattice_t *lattice;
  grid_layout_t layout;
  size_t esize;        /* bytes per stored value: 8, 4 or 2 (lbm_storage_bytes) */
  lbm_storage_t storage;
  int nontemporal;     /* 1: stream-collide writes whole lines with nontemporal stores */
  /* One pull stream-collide of the interior (the field's dims: ncomp = Q, ghost >= reach).
   * The ghost layer of dst is left as it was (AoS) or unspecified (SoA: the kernel runs
   * whole vectors across it); nothing outside the field is written. */
  void (*stream_collide)(const void *restrict src, void *restrict dst, const grid_dims_t *d,
                         const lbm_params_t *p, lbm_variant_t v);
  /* Every cell (ghosts included) to the equilibrium of the density and velocity init
   * gives for interior cells (NULL: rho0 and rest), and of (rho0, 0) for ghosts;
   * shifted storage subtracts w_i rho0. */
  /* stream_collide of the flow's variants (always with the force terms) and the ADE ones, with
   * the per-cell inputs and outputs of c: one scalar code path for both layouts, every
   * cell through the same operations as in the OpenCL kernels. The ADE variants take
   * the advection velocity from c->advection (required). */
  void (*coupled)(const void *restrict src, void *restrict dst, const grid_dims_t *d,
                  const lbm_params_t *p, lbm_variant_t v, const lbm_coupling_t *c);
  /* stream_collide and coupled on the cells of region r alone (grid.h; NULL or
   * GRID_PART_ALL: every cell), for a step that overlaps its exchange: the inner box needs
   * no value of the ghost layers beyond the reach it was cut for, the shell gets them.
   * Run GRID_PART_INNER before GRID_PART_SHELL: the SoA code computes whole vectors, so
   * the inner call may leave values from stale ghost layers in shell cells next to the
   * box, which the shell call then writes right (and it writes inner cells in its
   * vectors again, with the same values). Together they give what one call gives. */
  void (*stream_collide_region)(const void *restrict src, void *restrict dst,
                                const grid_dims_t *d, const lbm_params_t *p, lbm_variant_t v,
                                const grid_region_t *r);
  void (*coupled_region)(const void *restrict src, void *restrict dst, const grid_dims_t *d,
                         const lbm_params_t *p, lbm_variant_t v, const lbm_coupling_t *c,
                         const grid_region_t *r);
  /* The populations of the initial state init gives (NULL: rho0 at rest), ghost cells at
   * rest; flags: LBM_FILL_SHIFTED, LBM_FILL_NONEQ. */
  void (*init)(void *f, const grid_dims_t *d, const lbm_params_t *p, int flags,
               lbm_init_fn init, void *ctx);
  /* Density and velocity of every interior cell of a stored (post-collision) field into
   * rho[n] and u[3n] (n = nx*ny*nz, x fastest), summed in double precision in direction
   * order: u = (j - F/2) / rho0, the velocity the collision of the step saw, since j
   * after collision carries the step's whole force. */
  void (*moments)(const void *f, const grid_dims_t *d, const lbm_params_t *p, int shifted,
                  double *rho, double *u);
  /* The links, in the storage precision: f[to] = f[from] + extra, or -f[from] + extra
   * where negate is 1 (as the OpenCL lbm_boundary); with scale (LBM_LINK_GROUPS factors;
   * NULL: none), extra times scale[group] of each link. */
  void (*boundary)(void *f, const lbm_link_t *links, size_t n, int negate, const double *scale);
  /* The body links; acc[3 body + a] += the momentum exchanged along axis a, fixed point. */
  void (*bodies)(void *f, const lbm_body_link_t *links, size_t n, int64_t *acc, int nbodies);
  /* The pressure-outlet links on a field of dims d (its component stride), with the
   * uniform force and rho0 of p. */
  void (*outlet)(void *f, const grid_dims_t *d, const lbm_open_link_t *links, size_t n,
                 const lbm_params_t *p);
  /* The collision's constants for the parameters and variant v (lbm_collide.h:
   * LBM_CONSTS_COUNT(Q) values in the order of LBM_CONSTS_FIELDS), in the storage
   * precision: what other devices' kernels need to compute exactly what these do. */
  void (*constants)(const lbm_params_t *p, lbm_variant_t v, void *out);
  /* The density the next stream-collide will see in every interior cell: the sum of the
   * values it pulls, sum_i f_i(x - c_i) in direction order, plus shift (rho0 for shifted
   * storage), in the arithmetic's precision (lbm_arith_bytes), into out (a field of the
   * block's interior cells, dims od). f: the populations with their ghost layers up to
   * date. The same sum in the same order as lbm.cl's lbm_pulled_density. */
  void (*pulled_density)(const void *f, const grid_dims_t *d, double shift, void *out,
                         const grid_dims_t *od);
} lbm_kernels_t;

/* The kernels of a lattice, layout and storage (lbm_storage_t; a dp flag serves for 0 and
 * 1) built for the CPU level in use (cpu_level_current); NULL for an unknown lattice or
 * storage, or where no level can be used (cpu_level_from_environment failed). Static
 * storage. */
const lbm_kernels_t *lbm_kernels_find(const lattice_t *lattice, grid_layout_t layout, int storage);

/* The same for a given level (cpu_level.h: 0 <= level < cpu_level_count()); NULL for a
 * level out of range. The caller makes sure the CPU supports it (cpu_level_supported). */
const lbm_kernels_t *lbm_kernels_find_level(const lattice_t *lattice, grid_layout_t layout,
                                            int storage, int level);

#endif
