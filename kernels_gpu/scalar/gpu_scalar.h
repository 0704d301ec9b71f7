/* gpu_scalar: the passive scalar on GPU blocks: its OpenCL program (scalar.cl, from the
 * cell arithmetic shared with the CPU, scalar_cell.h) and the step over groups of blocks
 * (gpu_field_groups_t: the scalar first, the velocity second; each group's key an int,
 * its blocks' closed faces as scalar_step's walls), one launch per group. */
#ifndef GPU_SCALAR_H
#define GPU_SCALAR_H

#include "gpu_field.h"
#include "gpu_program.h"
#include "opencl.h"
#include "tsr_error.h"

/* The program for the precision (dp: double). */
TSR_NODISCARD tsr_status gpu_scalar_program(opencl_context_t *cl, int dp, gpu_program_t **out,
                                            tsr_error_t *err);

/* scalar_step on every group's blocks, from the scalar's present copy into the other:
 * part 0 every cell, 1 and 2 the parts of an overlapped step on the groups' boxes. The
 * caller swaps the copies after the whole or part 2. */
TSR_NODISCARD tsr_status gpu_scalar_step(gpu_program_t *prog, const gpu_field_groups_t *gs,
                                         int nd, double d, int part, int dp, tsr_error_t *err);

#endif
