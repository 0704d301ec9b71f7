/* lbm_sim: one LBM simulation assembled from its parts — patch and block assignment,
 * registry with the LBM sweep, block classification, PDF data, and the time loop
 * (exchange "lbm.pdf", boundary "lbm.boundary", kernel "lbm.stream_collide").
 * Every process runs on the hardware its node configuration gives it (node_resolve: hs,
 * OpenCL device, OpenMP threads) and gets the blocks lbm_plan assigns it; with
 * hardware.balance.calibrate, every process first measures its own kernel.
 * Shared by `tessera run` and the validation tests. All functions are collective. */
#ifndef LBM_SIM_H
#define LBM_SIM_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "lbm.h"
#include "lbm_plan.h"
#include "output.h"
#include "patch.h"
#include "registry.h"
#include "simulation.h"
#include "timeloop.h"
#include "tsr_error.h"

typedef struct lbm_sim lbm_sim_t;

TSR_NODISCARD tsr_status lbm_sim_create(MPI_Comm comm, const simulation_options_t *so,
                                        const lbm_options_t *lo, lbm_sim_t **out, tsr_error_t *err);
void lbm_sim_free(lbm_sim_t **sim);

TSR_NODISCARD tsr_status lbm_sim_step(lbm_sim_t *sim, int64_t steps, tsr_error_t *err);

/* Runs "lbm.moments" on every local block (then lbm_block_moments has fresh values). */
TSR_NODISCARD tsr_status lbm_sim_moments(lbm_sim_t *sim, tsr_error_t *err);

/* Where a run left the stable range: the first fluid cell (lowest BlockID, then z-y-x
 * order within the block) that fails lbm_cell_stable. */
typedef struct lbm_divergence {
  int64_t step;
  int32_t block;   /* BlockID; -1: every cell is stable */
  int64_t cell[3]; /* global cell */
  double rho, u[3];
} lbm_divergence_t;

/* Checks the moments of every fluid cell of the domain: with moments_fresh, those the
 * last lbm_sim_moments computed (on the host); else each block checks its own
 * ("lbm.check": GPU blocks on the device, without moving the moments). Every rank gets
 * the same *out; when a cell fails, TSR_ERR_DIVERGED and a message naming the step, the
 * BlockID, the global cell and its values. */
TSR_NODISCARD tsr_status lbm_sim_check(lbm_sim_t *sim, int64_t step, bool moments_fresh,
                                       lbm_divergence_t *out, tsr_error_t *err);

/* Sum of the density over all fluid cells of the domain (after lbm_sim_moments), the
 * same value on every rank; summed in a fixed order (by BlockID), so it does not
 * depend on the number of ranks beyond round-off of the per-block sums. */
TSR_NODISCARD tsr_status lbm_sim_mass(lbm_sim_t *sim, double *mass, tsr_error_t *err);

/* Gathers density and velocity of the whole domain on rank 0 (after lbm_sim_moments):
 * rho[N], u[3N], N = nx*ny*nz, x fastest; other ranks may pass NULL. For tests and small
 * domains. */
TSR_NODISCARD tsr_status lbm_sim_gather(lbm_sim_t *sim, double *rho, double *u, tsr_error_t *err);

/* The names (fnmatch patterns relative to the output folder) of the files the output
 * functions below write: what an earlier run may have left in a folder. */
extern const char *const lbm_sim_output_patterns[];
enum { LBM_SIM_OUTPUT_PATTERNS = 5 };

/* The output functions write into the folder out, every file through a temporary name
 * (output.h), and rank 0 records each file in out's manifest. */

/* Writes the moments (after lbm_sim_moments) as VTK: every rank its own blocks'
 * density, velocity and flags (see vtk.h), rank 0 the step's .vtm and the .pvd of all
 * steps written by this simulation so far. */
TSR_NODISCARD tsr_status lbm_sim_write_vtk(lbm_sim_t *sim, output_folder_t *out, int64_t step,
                                           tsr_error_t *err);

/* Samples the moments (after lbm_sim_moments) along the line of cells from `from` to
 * `to` (inclusive; max |to - from| + 1 cells, rounded to the nearest cell) and writes
 * <folder>/probe_<name>_<step>.csv with columns x,y,z,rho,ux,uy,uz (rank 0). */
TSR_NODISCARD tsr_status lbm_sim_write_probe(lbm_sim_t *sim, output_folder_t *out,
                                             const simulation_probe_t *probe, int64_t step,
                                             tsr_error_t *err);

/* Writes a picture of the velocity magnitude |u| (after lbm_sim_moments) on the plane of
 * cells at slice->position across slice->axis, wall cells grey, with a legend, as
 * <folder>/slice_<name>_<step>.png (see image.h). Only the plane's cells travel: every
 * rank sends those of its own blocks to rank 0, which assembles and writes the picture.
 * Horizontal in the picture is x for z and y slices and y for x slices; vertical is y
 * for z slices and z otherwise, growing upwards. */
TSR_NODISCARD tsr_status lbm_sim_write_png(lbm_sim_t *sim, output_folder_t *out,
                                           const simulation_slice_t *slice, int64_t step,
                                           tsr_error_t *err);

patch_t *lbm_sim_patch(const lbm_sim_t *sim);
timeloop_timing_t lbm_sim_timing(const lbm_sim_t *sim);
/* Cells updated per step on all ranks (interior cells of every block that is not solid). */
int64_t lbm_sim_cells(const lbm_sim_t *sim);
/* The assignment of blocks to processes, each process's hardware and its predicted time
 * per step (the patch itself is lbm_sim_patch). */
const lbm_plan_t *lbm_sim_plan(const lbm_sim_t *sim);

#endif
