/* gpu_shan_chen: the Shan-Chen model on GPU blocks: its OpenCL program (shan_chen.cl, from
 * the cell arithmetic shared with the CPU) and the launches over groups of blocks
 * (gpu_field_groups_t: the flow's field first, psi second; one launch per group). */
#ifndef GPU_SHAN_CHEN_H
#define GPU_SHAN_CHEN_H

#include "gpu_field.h"
#include "gpu_program.h"
#include "lattice.h"
#include "opencl.h"
#include "tsr_error.h"

/* The program for the stencil l and the precision (dp: double): its tables as build
 * defines, every weight a hexadecimal literal of the storage type (the value the CPU
 * rounds it to). */
TSR_NODISCARD tsr_status gpu_shan_chen_program(opencl_context_t *cl, const lattice_t *l, int dp,
                                               gpu_program_t **out, tsr_error_t *err);

/* psi from the density: groups of (density, psi). */
TSR_NODISCARD tsr_status gpu_shan_chen_psi(gpu_program_t *prog, const gpu_field_groups_t *gs,
                                           double rho_psi, int dp, tsr_error_t *err);

/* The force from psi: groups of (force, psi); written, or added where accumulate; part 0
 * every cell, else the part's cells of each group's boxes (gpu_field_groups_boxes). */
TSR_NODISCARD tsr_status gpu_shan_chen_force(gpu_program_t *prog, const gpu_field_groups_t *gs,
                                             double g, int accumulate, int part, int dp,
                                             tsr_error_t *err);

#endif
