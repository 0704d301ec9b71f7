/* lbm_gpu: the OpenCL side of the LBM sweep. A process whose blocks run on an OpenCL
 * device (hs gpu) hands lbm_sweep_register a program cache (kernels_gpu/gpu_pdf.h): the
 * device's context and the programs built so far (one per block size).
 *
 * The GPU items (hs gpu) mirror the CPU ones: allocator (PDFs on the device in SoA
 * layout, initialised on the host exactly as for the CPU and uploaded), boundary (the
 * bounce-back links as a kernel), stream-collide, moments (a kernel; only rho and u come
 * back to the host), and the ghost exchange of gpu_pdf.h. A coupled run (a force
 * field, the velocity written) reads and writes the coupling fields on the device
 * (field.h). GPU work is enqueued on
 * the context's in-order queue; "lbm.wait" waits for it at the end of each step. */
#ifndef LBM_GPU_H
#define LBM_GPU_H

#include "gpu_lbm.h"

#endif
