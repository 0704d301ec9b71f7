/* sim_impl: the simulation's state, shared by the files of module sim (sim.c: assembly
 * and time steps; sim_output.c: output writers). Included by nobody else. */
#ifndef SIM_IMPL_H
#define SIM_IMPL_H

#include "opencl.h"
#include "series.h"
#include "sim.h"

enum { SIM_SERIES_NAME_MAX = 80 };

struct sim {
  MPI_Comm comm;
  module_t modules[MODULE_MAX];
  module_decl_t decls[MODULE_MAX];
  int nmodules;
  plan_t *plan;         /* the assignment and its prediction (the patch is taken out) */
  opencl_context_t *cl; /* hs gpu: this process's device */
  gpu_field_programs_t *fields; /* its field programs (field.h) */
  patch_t *patch;
  registry_t *reg;
  timeloop_t *loop;
  uint64_t fs;
  char fs_text[MODULE_FS_MAX];
  int field_id[MODULE_MAX][MODULE_MAX_FIELDS];
  int64_t cells;
  int64_t *vtk_steps; /* output steps written so far */
  int64_t nvtk;
  bool prepared;          /* sim_prepare ran since the last step or kernel */
  units_t units;          /* of the configuration (its outputs' units) */
  units_dim_t total_dim[MODULE_MAX_VALUES]; /* of the totals of the last sim_totals */
  output_series_t series; /* rank 0: series.csv */
  output_series_t probe_series[SIMULATION_MAX_PROBES]; /* rank 0: probe_<name>.csv */
  char probe_series_name[SIMULATION_MAX_PROBES][SIMULATION_NAME_MAX + 16];
  output_series_t group_series[MODULE_MAX_VALUES]; /* rank 0: series_<group>.csv */
  char group_file[MODULE_MAX_VALUES][SIM_SERIES_NAME_MAX];
  int ngroups;
};

/* The group series whose file is `file` ("series_<group>.csv"), made where it is new;
 * NULL when every slot is taken. */
output_series_t *sim_series_named(sim_t *sim, const char *file);

/* The calibration's blocks per axis (hardware.balance.calibrate): about `want` blocks of
 * `size` cells, k[a] <= run_blocks[a], together at most 2^21 cells (at least one block),
 * grown one block at a time along the axis whose extent is shortest. */
void sim_calibration_blocks(const int64_t size[3], const int run_blocks[3], int64_t want,
                            int k[3]);

/* One exchange of every field a sweep reads across faces (the start, a restart). */
TSR_NODISCARD tsr_status sim_exchange_all(sim_t *s, tsr_error_t *err);

#endif
