/* lbm_sim: the LBM as a physics module (module.h), and an LBM simulation for programs
 * and tests that build one from options rather than from a configuration.
 *
 * The module "lbm" reads the sections "lbm", "boundaries" and "obstacles" (lbm.h) and
 * declares
 *   field     "lbm.pdf"       the PDFs: q values per cell, ghost layers of the lattice's
 *                             reach (lattice_ghost_width), SoA or AoS on CPU blocks, SoA on
 *                             GPU blocks
 *   sweep     "lbm"           reads the ghost layers of lbm.pdf and writes it; boundary
 *                             "lbm.boundary", kernel "lbm.stream_collide"
 *   quantities "density" (rho), "velocity" (ux, uy, uz) and "flags" (the cell flags,
 *             GEOMETRY_*: the wall mask of pictures), prepared by "lbm.moments"
 * Its check is the LBM's stability check (lbm_cell_stable) and its total the fluid
 * mass. Blocks are classified fluid, fluid_boundary and solid (lbm_classify); a solid
 * block costs nothing and allocates nothing.
 *
 * lbm_sim_create assembles a simulation of this module alone (sim_create) from options;
 * the other functions are those of sim.h under the names the tests know. All functions
 * are collective. */
#ifndef LBM_SIM_H
#define LBM_SIM_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "lbm.h"
#include "module.h"
#include "sim.h"
#include "tsr_error.h"

extern const module_def_t lbm_module;

/* A new state of the module from options (copied). */
TSR_NODISCARD tsr_status lbm_module_state(const lbm_options_t *lo, void **state,
                                          tsr_error_t *err);

typedef sim_t lbm_sim_t;

TSR_NODISCARD tsr_status lbm_sim_create(MPI_Comm comm, const simulation_options_t *so,
                                        const lbm_options_t *lo, lbm_sim_t **out, tsr_error_t *err);
void lbm_sim_free(lbm_sim_t **sim);

TSR_NODISCARD tsr_status lbm_sim_step(lbm_sim_t *sim, int64_t steps, tsr_error_t *err);

/* Runs "lbm.moments" on every local block (then lbm_block_moments has fresh values). */
TSR_NODISCARD tsr_status lbm_sim_moments(lbm_sim_t *sim, tsr_error_t *err);

/* Sum of the density over all fluid cells of the domain (after lbm_sim_moments), the
 * same value on every rank; summed in a fixed order (by BlockID), so it does not
 * depend on the number of ranks beyond round-off of the per-block sums. */
TSR_NODISCARD tsr_status lbm_sim_mass(lbm_sim_t *sim, double *mass, tsr_error_t *err);

/* Gathers density and velocity of the whole domain on rank 0 (after lbm_sim_moments):
 * rho[N], u[3N], N = nx*ny*nz, x fastest; other ranks may pass NULL. */
TSR_NODISCARD tsr_status lbm_sim_gather(lbm_sim_t *sim, double *rho, double *u, tsr_error_t *err);

static inline patch_t *lbm_sim_patch(const lbm_sim_t *sim) { return sim_patch(sim); }
static inline timeloop_timing_t lbm_sim_timing(const lbm_sim_t *sim) { return sim_timing(sim); }
static inline int64_t lbm_sim_cells(const lbm_sim_t *sim) { return sim_cells(sim); }
static inline const plan_t *lbm_sim_plan(const lbm_sim_t *sim) { return sim_plan(sim); }

#endif
