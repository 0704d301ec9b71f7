/* sim_impl: the simulation's state, shared by the files of module sim (sim.c: assembly
 * and time steps; sim_output.c: output writers). Included by nobody else. */
#ifndef SIM_IMPL_H
#define SIM_IMPL_H

#include "opencl.h"
#include "sim.h"

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
  char *series;       /* rank 0: series.csv's text so far */
  size_t series_len, series_cap;
  double series_written; /* MPI_Wtime of its last write */
};

#endif
