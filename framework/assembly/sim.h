/* sim: one simulation assembled from physics modules (module.h) — the only assembly
 * `tessera run`, `plan` and `bench` and the validation tests go through.
 *
 * sim_create: every process finds the hardware its node configuration gives it
 * (node_resolve: hs, OpenCL device, OpenMP threads) and opens its device when it has
 * GPU blocks; the modules register their items and declare fields, sweeps and
 * quantities; with hardware.balance.calibrate every process measures its own
 * throughput; plan_create assigns the blocks (the modules classify them); the memory is
 * checked against the device and the node; every field is allocated; and the time loop
 * gets every module's sweeps in order. Before each sweep, one exchange round carries
 * every field the sweep reads across block faces that a sweep wrote since that field's
 * ghost layers were last brought up to date (a field nobody writes: before every such
 * sweep). Where some block runs on a GPU, the step ends with one wait for each device's
 * queue (the sweep "device.wait"), so that its time is the device's work.
 *
 * Output reads quantities by name: the prepare items of the quantities run once per
 * output step on every block (on its own hardware), then the samplers fill host arrays
 * block by block. The writers (output/sim_output.h) and checkpoints
 * (output/sim_checkpoint.h) read the simulation through the functions below.
 *
 * All functions taking a sim_t are collective unless they say otherwise. */
#ifndef SIM_H
#define SIM_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "module.h"
#include "patch.h"
#include "plan.h"
#include "registry.h"
#include "simulation.h"
#include "timeloop.h"
#include "tsr_error.h"

/* What the program gives the assembly beside the configuration. */
typedef struct sim_setup {
  /* sets the OpenMP team of the CPU kernels (a process's "threads"); NULL: left alone */
  void (*set_threads)(int n);
} sim_setup_t;

/* Takes over the n module states in modules (freed by sim_free, or here on failure). */
TSR_NODISCARD tsr_status sim_create(MPI_Comm comm, const simulation_options_t *so,
                                    const sim_setup_t *setup, module_t *modules, int n,
                                    sim_t **out, tsr_error_t *err);
void sim_free(sim_t **sim);

TSR_NODISCARD tsr_status sim_step(sim_t *sim, int64_t steps, tsr_error_t *err);

/* Runs every quantity's prepare item once on every local block (the output's values);
 * a no-op when they ran already since the last step or kernel (the progress line, a
 * probe, the steady-state sample and the check of one step share one preparation). */
TSR_NODISCARD tsr_status sim_prepare(sim_t *sim, tsr_error_t *err);
/* Collective: sim_prepare, then the modules' output sweeps (module_decl_t.output_sweeps):
 * what sampling quantities needs, where totals need only sim_prepare. */
TSR_NODISCARD tsr_status sim_prepare_outputs(sim_t *sim, tsr_error_t *err);

/* Every module's stability check (module_def_t.check), in module order; stops at the
 * first that fails. prepared: sim_prepare ran since the last step. */
TSR_NODISCARD tsr_status sim_check(sim_t *sim, int64_t step, bool prepared, sim_divergence_t *out,
                                   tsr_error_t *err);

/* Every module's observe (module_def_t.observe) at `step`, in module order: after every
 * step of a run and at its step 0, before the step's check and output. */
TSR_NODISCARD tsr_status sim_observe(sim_t *sim, int64_t step, tsr_error_t *err);

/* Sums over the blocks that do not depend on the decomposition: part[nb * k + id] holds
 * value k (of n) of local block id (zeros elsewhere: the ranks add their parts up), and
 * out[k] becomes the sum over the blocks in BlockID order, the same on every rank
 * whatever ranks hold the blocks (totals stay bitwise across a restart on other ranks).
 * Collective. */
TSR_NODISCARD tsr_status sim_block_sums(sim_t *sim, const double *part, int n, double *out,
                                        tsr_error_t *err);

/* The modules' totals (after sim_prepare): names[i] = values[i], at most cap, in lattice
 * units. */
TSR_NODISCARD tsr_status sim_totals(sim_t *sim, const char **names, double *values, int cap,
                                    int *n, tsr_error_t *err);
/* The totals values[0..n) of the last sim_totals in the units the run writes (physical
 * with units.output "physical", else as they are), in place. */
void sim_totals_output(const sim_t *sim, double *values, int n);
/* The dimension of the total called name (the first module that gives it one; none for
 * numbers and names no module knows). */
units_dim_t sim_total_dim(const sim_t *sim, const char *name);
/* The time of a step in the units the run writes: seconds with physical output, else the
 * step itself. */
double sim_output_time(const sim_t *sim, int64_t step);
/* The configuration's units (lattice units without a units section). */
const units_t *sim_units(const sim_t *sim);

/* The quantity called name, or NULL. */
const module_quantity_t *sim_quantity(const sim_t *sim, const char *name);
/* Samples a quantity of one local block into out[components * cells] (after sim_prepare),
 * in the units the run writes (physical with units.output "physical"). Not collective. */
TSR_NODISCARD tsr_status sim_sample(sim_t *sim, const module_quantity_t *q, int32_t block,
                                    double *out, tsr_error_t *err);

/* Gathers a quantity of the whole domain on rank 0 (after sim_prepare): out[components *
 * N], N = nx*ny*nz, x fastest; other ranks may pass NULL. For tests and small domains. */
TSR_NODISCARD tsr_status sim_gather(sim_t *sim, const char *quantity, double *out,
                                    tsr_error_t *err);

/* One exchange of every field a sweep reads across faces: the start, and a restart once
 * every field was loaded (the values prepared for output are stale afterwards). */
TSR_NODISCARD tsr_status sim_exchange_all(sim_t *sim, tsr_error_t *err);

/* The cells of the largest block (*cells), checked against what one buffer of comps
 * doubles per cell and one MPI message of them can carry; the error names what. Not
 * collective. */
TSR_NODISCARD tsr_status sim_largest_block(const sim_t *sim, int comps, const char *what,
                                           size_t *cells, tsr_error_t *err);

/* The calibration's blocks per axis (hardware.balance.calibrate): about `want` blocks of
 * `size` cells, k[a] <= run_blocks[a], together at most 2^21 cells (at least one block),
 * grown one block at a time along the axis whose extent is shortest. */
void sim_calibration_blocks(const int64_t size[3], const int run_blocks[3], int64_t want,
                            int k[3]);

MPI_Comm sim_comm(const sim_t *sim);
patch_t *sim_patch(const sim_t *sim);
registry_t *sim_registry(const sim_t *sim);
uint64_t sim_fs(const sim_t *sim);
/* Runs a kernel item once on every local block (timeloop_run_kernel). */
TSR_NODISCARD tsr_status sim_run_kernel(sim_t *sim, const char *item, tsr_error_t *err);
/* The data id of a declared field, or -1. */
int sim_field_id(const sim_t *sim, const char *field);
timeloop_timing_t sim_timing(const sim_t *sim);
/* The time loop (per-sweep timing: timeloop_sweep_timing). */
const timeloop_t *sim_timeloop(const sim_t *sim);
/* Cells updated per step on all ranks (plan_t.block_cells summed). */
int64_t sim_cells(const sim_t *sim);
/* The assignment of blocks to processes, each process's hardware and its predicted time
 * per step (the patch itself is sim_patch). */
const plan_t *sim_plan(const sim_t *sim);
/* This process's OpenCL device (NULL where it has none). */
opencl_context_t *sim_opencl(const sim_t *sim);
/* The run's modules (n of them), in order, and their declarations. */
const module_t *sim_modules(const sim_t *sim, int *n);
const module_decl_t *sim_decls(const sim_t *sim, int *n);
/* The fs switches of all modules, e.g. "trt,dp,soa" (for reports). */
const char *sim_fs_text(const sim_t *sim);

#endif
