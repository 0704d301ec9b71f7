/* d2q37_kernels: the CPU kernels of the thermal compressible D2Q37 model (d2q37_cell.h) on
 * SoA fields of 37 components with a ghost layer of 3 (grid.h), in double or single
 * precision. Compiled once per CPU level (cpu_level.h), like the LBM kernels; every level
 * computes bitwise the same values (every FMA written out, no contraction). Plain C: no
 * MPI, no registry.
 *
 * Units: lattice units (cell, step) for velocities and the body force at this interface;
 * temperatures in units of T0 = c_s^2 (d2q37_cell.h). */
#ifndef D2Q37_KERNELS_H
#define D2Q37_KERNELS_H

#include <math.h>
#include <stddef.h>

#include "grid.h"

#define D37_REAL double
#define D37_FMA fma
#define D37_FN(name) name##_d
#include "d2q37_cell.h"
#undef D37_REAL
#undef D37_FMA
#undef D37_FN
#define D37_REAL float
#define D37_FMA fmaf
#define D37_FN(name) name##_f
#include "d2q37_cell.h"
#undef D37_REAL
#undef D37_FMA
#undef D37_FN

/* The physics of a run: relaxation time tau (> 1/2), body force g (cells/step^2) and
 * the temperatures of the walls at y- and y+ (units of T0; used by blocks whose face is
 * a wall). */
typedef struct d2q37_params {
  double tau;
  double g[2];
  double wall_t[2];
} d2q37_params_t;

/* The constants of either precision (dp: .d, else .f). */
typedef union d2q37_consts {
  d37_consts_t_d d;
  d37_consts_t_f f;
} d2q37_consts_t;

void d2q37_constants(const d2q37_params_t *p, int dp, d2q37_consts_t *out);

/* One step of a block (z = 0): pull from src (ghost layers current), collide, write to
 * dst. lo, hi: 1 where the block's face at y- or y+ is a wall: its ghost rows in src are
 * written first (d37_wall_ghosts). split 0: propagation and collision fused in one pass;
 * 1: the propagation into dst, then the collision in place (the same values). OpenMP
 * threads share the rows. */
void d2q37_stream_collide(int dp, void *src, void *dst, const grid_dims_t *d,
                          const d2q37_consts_t *k, int lo, int hi, int split);

/* The same in parts, for a bulk and a frame whose exchange overlaps the bulk's work (the
 * inner/outer split of Calore et al.): the walls' ghost rows of the columns [x0, x1)
 * (d2q37_walls; every column once, before a cell of it pulls from them: a cell pulls
 * only what its own column's walls wrote), then the stream-collide of any set of boxes
 * [lo, hi) that tile the block (interior cells), in any order; the same values as
 * d2q37_stream_collide. The walls of column x read rows 0..2 of columns x - 3 .. x + 3
 * (the populations that leave into the wall): near a face, its ghost columns. The bulk,
 * [3, nx - 3) x [3, ny - 3), reads no ghost cell. */
void d2q37_walls(int dp, void *src, const grid_dims_t *d, const d2q37_consts_t *k, int lo,
                 int hi, int x0, int x1);
void d2q37_stream_collide_box(int dp, const void *src, void *dst, const grid_dims_t *d,
                              const d2q37_consts_t *k, const int lo[2], const int hi[2],
                              int split);

/* The fields of a cell for the start: rho, ux, uy (cells/step) and T (units of T0). */
typedef void (*d2q37_init_fn)(int x, int y, const void *ctx, double out[4]);

/* In every interior cell of values the populations after a collision whose hydrodynamic
 * fields (under the body force g, cells/step^2) are fn's: the equilibrium of rho,
 * u + g/2 and T - g.g/8 (d2q37_cell.h); ghost cells get fn's fields (1, 0, 0, 1). */
void d2q37_init(int dp, void *values, const grid_dims_t *d, const d2q37_consts_t *k,
                const double g[2], d2q37_init_fn fn, const void *ctx);

/* The hydrodynamic fields of the interior cells from the post-collision populations of
 * values (d2q37_cell.h: u_H = u - g/2, T_H = T + g.g/8): out has 4 components (rho, ux,
 * uy in cells/step, T), of dims od, in the storage precision. */
void d2q37_macro(int dp, const void *values, const grid_dims_t *d, const d2q37_consts_t *k,
                 const double g[2], void *out, const grid_dims_t *od);

#endif
