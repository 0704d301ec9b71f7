/* lbm: the lattice Boltzmann sweep (any flow lattice of kernels_cpu/lattice.h) on CPU
 * blocks (OpenMP; SoA or AoS) and on OpenCL devices (SoA; lbm_gpu.c).
 *
 * lbm_sweep_register declares the PDFs through the field kit (framework/field/field.h)
 * and adds to the registry, under the fs switches srt|trt, sp|dp and soa|aos (the layout
 * of CPU blocks):
 *   field      "lbm.pdf"            PDFs (two copies, in the layout of the fs on CPU
 *                                   blocks), with the kit's allocators and the exchange of
 *                                   the PDFs that cross a face, edge or corner of a block
 *                                   (D3Q19: 5, 1, 0) on every hs; a solid block holds none
 *   allocator  "lbm.cells"          flags, boundary links and moments of a block (nothing
 *                                   for a solid block)
 *   boundary   "lbm.boundary"       the links of fluid_boundary blocks: no-slip and
 *                                   moving walls, inlets (2 w_i rho0 c_i.u_w / c_s^2),
 *                                   outflows (copies), then pressure outlets
 *   kernel     "lbm.stream_collide" pull stream + SRT/TRT collide, then swaps the grids
 *   kernel     "lbm.moments"        density and velocity of every cell into the block's
 *                                   moment arrays (lbm_block_moments), for output
 *   kernel     "lbm.check"          the stability check: the block's first fluid cell
 *                                   whose moments are not stable (lbm_cell_stable), or
 *                                   -1 (lbm_moments_view_t.unstable); CPU blocks compute
 *                                   the moments and check them, GPU blocks check on the
 *                                   device and bring 4 bytes back (the moments only when
 *                                   a cell failed)
 *   kernel     "lbm.wait"           waits until the block's work is done (GPU blocks:
 *                                   their queue; CPU blocks: nothing)
 * Blocks are classified with lbm_classify into bs fluid (no wall in or around it: no
 * boundary work), fluid_boundary and solid (allocates nothing, runs nothing). */
#ifndef LBM_SWEEP_H
#define LBM_SWEEP_H

#include <float.h>
#include <stdbool.h>
#include <stdint.h>

#include "block_data.h"
#include "config.h"
#include "geometry.h"
#include "grid.h"
#include "lattice.h"
#include "gpu_field.h"
#include "gpu_lbm.h"
#include "patch.h"
#include "registry.h"
#include "tsr_error.h"

#define LBM_PDF "lbm.pdf"
#define LBM_CELLS "lbm.cells"
#define LBM_BOUNDARY "lbm.boundary"
#define LBM_STREAM_COLLIDE "lbm.stream_collide"
#define LBM_PULLED_DENSITY "lbm.pulled_density" /* lbm.density for the next collision */
#define LBM_MOMENTS "lbm.moments"
#define LBM_CHECK "lbm.check"
#define LBM_WAIT "lbm.wait"
/* The flow's public face: fields other modules read or add to by name. */
#define LBM_VELOCITY "lbm.velocity" /* the velocity the collision used (3 components) */
#define LBM_DENSITY "lbm.density"   /* the density the collision used (1 component) */
#define LBM_FORCE "lbm.force"       /* the body force per cell the next collision adds to
                                       lbm.force (3 components): an accumulator the first
                                       module of a step that writes it sets, later ones
                                       add to */

typedef enum lbm_collision { LBM_SRT = 0, LBM_TRT = 1 } lbm_collision_t;
typedef enum lbm_precision { LBM_DP = 0, LBM_SP = 1 } lbm_precision_t;
enum { LBM_MAX_REGIONS = 16, LBM_MAX_BODIES = 8 /* named obstacles: 3 totals each */ };

typedef enum lbm_init_kind { LBM_INIT_UNIFORM = 0, LBM_INIT_TAYLOR_GREEN = 1 } lbm_init_kind_t;

typedef struct lbm_options {
  const lattice_t *lattice;    /* the velocity set (static storage, lattice.h) */
  grid_layout_t cpu_layout;    /* the field layout of CPU blocks */
  bool in_place;               /* GPU blocks stream in place (one copy of the populations,
                                  fs in_place), not between two grids (fs two_grid) */
  const grid_layout_t *block_layout; /* per BlockID, borrowed (must outlive the sweep's
                                        registry); NULL: every CPU block in cpu_layout.
                                        Not a configuration key: tests mix layouts */
  lbm_collision_t collision;
  lbm_precision_t precision;
  double viscosity;      /* kinematic, lattice units: omega = 1 / (3 nu + 1/2) */
  double magic;          /* TRT magic parameter Lambda */
  double rho0;           /* reference density */
  bool shifted;          /* store f - w_i rho0 */
  double force[3];       /* constant body force density */
  lbm_init_kind_t init;
  double init_velocity[3]; /* uniform: the initial velocity; Taylor-Green: u0 in [0] */
  double init_density;   /* uniform: the initial density; 0: rho0 */
  geometry_shape_t init_regions[LBM_MAX_REGIONS]; /* uniform: regions of other density */
  double init_region_density[LBM_MAX_REGIONS];    /* (the last region holding a cell wins) */
  int ninit_regions;
  geometry_t geometry;
  struct {               /* "forces": drag and lift coefficients of the bodies */
    bool on;
    double velocity, length, area, density; /* references, lattice units */
    int drag, lift;      /* axes 0..2 */
  } forces;
} lbm_options_t;

/* D3Q19, SoA on CPU blocks, TRT, double precision, nu = 1/6 (omega = 1), Lambda = 3/16, rho0 = 1, no force, at rest,
 * all non-periodic faces no-slip, no obstacles. */
lbm_options_t lbm_options_default(void);
TSR_NODISCARD tsr_status lbm_options_validate(const lbm_options_t *o, tsr_error_t *err);

/* Reads the sections "lbm", "boundaries" and "obstacles" (see docs/configuration.md);
 * domain gives the periodicity (walls may only be set on non-periodic faces). */
TSR_NODISCARD tsr_status lbm_options_read(config_t *cfg, const patch_options_t *domain,
                                          lbm_options_t *o, tsr_error_t *err);

/* omega (1/tau) of the options. */
double lbm_omega(const lbm_options_t *o);

/* The lattice speed of sound c_s (1/sqrt(3) for the flow lattices). No velocity given
 * (initial, wall) may reach it, and a cell whose speed reaches it has diverged. */
double lbm_sound_speed(const lbm_options_t *o);

/* The largest speed the options give anywhere (initial field, moving walls) on this
 * domain, and in *what which one ("lbm.initial.velocity", "boundaries.y+.velocity"). */
double lbm_largest_speed(const lbm_options_t *o, const patch_options_t *domain, const char **what);

/* Warnings on options that are valid but near the limits of stability (Mach number of
 * the largest speed above 0.3; tau within 0.01 of 1/2 with a velocity given), one line
 * each, separated by newlines, into out (cap >= 1 bytes, always terminated, cut where
 * it is too short); returns how many. */
int lbm_options_warnings(const lbm_options_t *o, const patch_options_t *domain, char *out,
                         size_t cap);

/* Whether a cell's density and velocity are in the range where the method is stable:
 * finite, rho > 0, |u| < c_s (cs2 = c_s^2). Written so that NaN fails every comparison. */
static inline bool lbm_cell_stable(double cs2, double rho, const double u[3]) {
  return rho > 0 && rho <= DBL_MAX && u[0] * u[0] + u[1] * u[1] + u[2] * u[2] < cs2;
}

/* The fs set of the options, e.g. "trt,dp". */
const char *lbm_fs(const lbm_options_t *o);

/* Which fields of the public face a run uses: the stream-collide reads lbm.force, writes
 * lbm.velocity and lbm.density where set (every step, in the same pass), and otherwise
 * runs without them. */
typedef struct lbm_coupling_flags {
  bool force, velocity, density;
} lbm_coupling_flags_t;

/* Registers the items above for hs cpu and hs gpu, and declares the fields of the public
 * face through the field kit; the options are copied into the registry. gpu and fields:
 * this process's OpenCL programs (borrowed, must outlive the registry and the blocks),
 * NULL where it has none; every process registers the GPU items, so that it can size
 * the messages of GPU blocks. *flags (unless flags is NULL): where the run's coupling is
 * set (all false at first), up to the first allocation. */
TSR_NODISCARD tsr_status lbm_sweep_register(registry_t *reg, const patch_options_t *domain,
                                            const lbm_options_t *o, gpu_lbm_cache_t *gpu,
                                            gpu_field_programs_t *fields,
                                            lbm_coupling_flags_t **flags, tsr_error_t *err);

/* Sets every block's bs from the geometry (the same on every process). */
TSR_NODISCARD tsr_status lbm_classify(patch_t *patch, registry_t *reg, const lbm_options_t *o,
                                      tsr_error_t *err);

/* Moments of the last "lbm.moments" run on a block: rho[n], u[3n] over its interior
 * cells, x fastest; wall cells read rho0 and the wall velocity. Borrowed; NULL for a
 * block without PDFs. */
typedef struct lbm_moments_view {
  const double *rho;
  const double *u;
  const uint8_t *flags; /* per interior cell, GEOMETRY_* */
  int64_t cells;
  int64_t unstable; /* the last "lbm.check": its first unstable cell (see below), or -1 */
} lbm_moments_view_t;
lbm_moments_view_t lbm_block_moments(const block_data_t *data, int pdf_id);

/* The first interior cell (x fastest) of the moments that is fluid and not stable
 * (lbm_cell_stable with cs2), or -1. */
int64_t lbm_first_unstable(const lbm_moments_view_t *v, double cs2);


#endif
