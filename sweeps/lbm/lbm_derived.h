/* lbm_derived: quantities derived from the flow (lbm_derived.c): pressure, and from the
 * velocity gradient vorticity, its magnitude, the Q-criterion and the strain rate. */
#ifndef LBM_DERIVED_H
#define LBM_DERIVED_H

#include <stdbool.h>

#include "lbm_block.h"
#include "module.h"
#include "registry.h"
#include "simulation.h"
#include "tsr_error.h"

/* The scratch field of the gradient's input: per cell the velocity the outputs show and
 * its kind (1 fluid, 0 wall), with a ghost layer; declared only where an output names a
 * gradient quantity. */
#define LBM_GRADIENT_INPUT "lbm.gradient_input"
#define LBM_GRADIENT_FILL "lbm.gradient_fill"   /* kernel item: the interior, from the moments */
#define LBM_GRADIENT_READY "lbm.gradient_ready" /* kernel item after its exchange: nothing */

/* The flow's quantities (lbm_module.c's samplers). */
enum { LBM_Q_DENSITY, LBM_Q_VELOCITY, LBM_Q_FLAGS, LBM_Q_PRESSURE, LBM_Q_PRESSURE_COEFFICIENT,
       LBM_Q_VORTICITY,
       LBM_Q_VORTICITY_MAGNITUDE, LBM_Q_Q_CRITERION, LBM_Q_STRAIN_RATE, LBM_QUANTITIES };

/* Whether an output or a module names vorticity, vorticity_magnitude, q_criterion or
 * strain_rate (module_env_named). */
bool lbm_gradients_named(const module_env_t *env);

/* The velocity gradient g[a][b] = d u_a / d x_b of fluid cell (x, y, z) of block b (h: its
 * gradient input, after the output sweeps), evaluated at the wall along the axes where
 * wall[a][0] (the wall on the -a side) or wall[a][1] (+a side) gives a body's wall at
 * that distance in (0, 1] (0: none); elsewhere as the derived quantities take it. The
 * wall is at rest: the derivative of the parabola through it, the cell and the next
 * cell. */
void lbm_gradient_wall(const lbm_ctx_t *c, const block_info_t *b, const grid_field_t *h, int x,
                       int y, int z, const double wall[3][2], double g[3][3]);

/* LBM_GRADIENT_FILL's work (registry_work_fn; vctx: the lbm_ctx_t). */
tsr_status lbm_gradient_fill(const registry_work_t *w, void *vctx, tsr_error_t *err);

/* Quantity what (LBM_Q_VORTICITY ... LBM_Q_STRAIN_RATE) of block b into out (x fastest,
 * components interleaved), after the output sweeps ran. */
TSR_NODISCARD tsr_status lbm_sample_gradient(const lbm_ctx_t *c, int what, const block_info_t *b,
                                             const block_data_t *data, double *out,
                                             tsr_error_t *err);

#endif
