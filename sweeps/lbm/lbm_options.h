/* lbm_options: the flow's options (the sections "lbm", "boundaries", "obstacles" and
 * "forces" of a configuration), read, checked and derived (relaxation rate, speeds,
 * warnings, the fs switches). */
#ifndef LBM_OPTIONS_H
#define LBM_OPTIONS_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "geometry.h"
#include "grid.h"
#include "lattice.h"
#include "lbm_kernels.h"
#include "patch.h"
#include "tsr_error.h"

typedef enum lbm_collision {
  LBM_SRT = 0,
  LBM_TRT = 1,
  LBM_MRT = 2,
  LBM_CUMULANT = 3 /* D2Q9 and D3Q27 */
} lbm_collision_t;
/* lbm.collision's values, indexed by lbm_collision_t, NULL-terminated. */
extern const char *const lbm_collision_names[];
/* The populations' storage: double or single precision, or 16 bits with single-precision
 * arithmetic (lbm_kernels.h lbm_storage_t; FP16S and FP16C need shifted storage). */
typedef enum lbm_precision { LBM_DP = 0, LBM_SP = 1, LBM_FP16S = 2, LBM_FP16C = 3 } lbm_precision_t;
enum { LBM_PRECISIONS = 4 };
/* lbm.precision's values, indexed by lbm_precision_t, NULL-terminated. */
extern const char *const lbm_precision_names[];
/* The kernels' storage of a precision, and the bytes of the arithmetic's values (the
 * public face's fields: 8 for dp, 4 for the others). */
lbm_storage_t lbm_precision_storage(lbm_precision_t p);
static inline size_t lbm_precision_value_bytes(lbm_precision_t p) { return p == LBM_DP ? 8 : 4; }
/* The Smagorinsky constant where lbm.les is "smagorinsky" and lbm.smagorinsky is not
 * given (0.1 to 0.17 are usual; 0.1 for wall-bounded flows, Krueger et al. 2017). */
#define LBM_SMAGORINSKY_DEFAULT 0.1
enum { LBM_MAX_REGIONS = 16, LBM_MAX_BODIES = 8 /* named obstacles: 3 totals each */ };

typedef enum lbm_init_kind {
  LBM_INIT_UNIFORM = 0,
  LBM_INIT_TAYLOR_GREEN = 1,
  LBM_INIT_SOUND_WAVE = 2, /* a standing sound wave: rho0 (1 + A cos k x_axis), at rest */
  LBM_INIT_TAYLOR_GREEN_3D = 3 /* the 3-D Taylor-Green vortex (3-D lattices) */
} lbm_init_kind_t;

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
  double mrt_rates[LATTICE_MOMENT_CLASSES]; /* MRT: the rate of each class of moments
                                               (lattice_defs.h LATTICE_MOMENT_*; SHEAR's
                                               is omega); 0: the lattice's default
                                               (lbm_mrt_default) */
  double cumulant_rates[5]; /* cumulant: the rates of the bulk and of orders 3 to 6
                               (lbm.cumulant: bulk, third, ..., sixth); 0: 1 */
  double smagorinsky;    /* the Smagorinsky constant C_s; 0: no LES model */
  double rho0;           /* reference density */
  bool shifted;          /* store f - w_i rho0 */
  double force[3];       /* constant body force density */
  lbm_init_kind_t init;
  double init_velocity[3]; /* uniform: the initial velocity; Taylor-Green (2-D, 3-D): u0 in [0] */
  double init_density;   /* uniform: the initial density; 0: rho0 */
  double init_amplitude; /* sound wave: A, the density's relative amplitude */
  int init_axis, init_periods; /* sound wave: along this axis, periods over the domain */
  geometry_shape_t init_regions[LBM_MAX_REGIONS]; /* uniform: regions of other density */
  double init_region_density[LBM_MAX_REGIONS];    /* (the last region holding a cell wins) */
  int ninit_regions;
  bool init_noneq; /* the start's non-equilibrium part from its strain rate (LBM_FILL_NONEQ;
                      default true, D3Q13 false): taken where lbm_init_strained */
  geometry_t geometry;
  int work_group[3];     /* GPU blocks: the work-group of the flow's kernels over a block's
                            cells; zeros: the rule of gpu_lbm */
  char kernel_sources[256]; /* "", or a folder the flow's OpenCL sources are read from
                               instead of the copies built in (kernel development) */
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
/* What the lattice asks of the domain: a 2-D lattice runs on one cell along z. */
TSR_NODISCARD tsr_status lbm_options_check_domain(const lbm_options_t *o,
                                                  const patch_options_t *domain,
                                                  tsr_error_t *err);

/* Reads the sections "lbm", "boundaries" and "obstacles" (see docs/configuration.md);
 * domain gives the periodicity (walls may only be set on non-periodic faces). */
TSR_NODISCARD tsr_status lbm_options_read(config_t *cfg, const patch_options_t *domain,
                                          lbm_options_t *o, tsr_error_t *err);

/* omega (1/tau) of the options. */
/* Whether the initial velocity of o's start varies in space (the Taylor-Green starts): the
 * non-equilibrium start (init_noneq) changes nothing elsewhere. */
bool lbm_init_strained(const lbm_options_t *o);

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

/* The kernel variant of the options' collision (LBM_VARIANT_SRT, _TRT or _MRT). */
lbm_variant_t lbm_variant(const lbm_options_t *o);

/* The published default rate of MRT moment class cls (LATTICE_MOMENT_BULK ..) on lattice
 * l; 0 where l has no moment of that class. */
double lbm_mrt_default(const lattice_t *l, int cls);

/* The kernels' parameters of the options: rates, force, the MRT rates per moment and the
 * Smagorinsky constant. */
lbm_params_t lbm_options_params(const lbm_options_t *o);

/* The fs set of the options, e.g. "trt,dp". */
const char *lbm_fs(const lbm_options_t *o);

#endif
