/* gpu_d2q37: the D2Q37 model on GPU blocks: its OpenCL program (d2q37.cl, from the cell
 * arithmetic shared with the CPU, d2q37_cell.h), the run's constants on the device, and
 * the stream-collide over groups of blocks (gpu_field_groups_t: the populations; each
 * group's key an int, its blocks' walls: bit 0 at y-, bit 1 at y+), one launch (two where
 * split) per group, plus one per wall. */
#ifndef GPU_D2Q37_H
#define GPU_D2Q37_H

#include "d2q37_kernels.h"
#include "gpu_buffer.h"
#include "gpu_field.h"
#include "gpu_program.h"
#include "opencl.h"
#include "tsr_error.h"

typedef struct gpu_d2q37 {
  gpu_program_t *prog;
  gpu_buffer_t consts; /* d2q37_consts_t of the precision */
  int split;           /* propagation and collision in two launches */
} gpu_d2q37_t;

/* The program for the precision (dp: double) and the constants k on the device. Single
 * precision asks for a correctly rounded division (1 / rho), as the CPU's. */
TSR_NODISCARD tsr_status gpu_d2q37_create(opencl_context_t *cl, int dp, int split,
                                          const d2q37_consts_t *k, gpu_d2q37_t *out,
                                          tsr_error_t *err);
void gpu_d2q37_free(gpu_d2q37_t *g);

/* One step of every group's blocks (d2q37_stream_collide's), from the populations' present
 * copy into the other: part 0 whole; 1 and 2 the parts of an overlapped step on the
 * groups' boxes (the walls' ghost rows of each box's columns and the inner box, then the
 * rest), as d2q37_stream_collide_box's. The caller swaps the copies after the whole or
 * part 2. */
TSR_NODISCARD tsr_status gpu_d2q37_stream_collide(const gpu_d2q37_t *g,
                                                  const gpu_field_groups_t *gs, int part,
                                                  tsr_error_t *err);

#endif
