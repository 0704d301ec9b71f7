/* gpu_peak: the floating-point peak of an OpenCL device, measured: every work item runs 8
 * independent chains of fused multiply-adds, many work items per compute unit; what a
 * compute-bound kernel's GFLOPS on the device are compared with (tessera bench --fma). */
#ifndef GPU_PEAK_H
#define GPU_PEAK_H

#include "opencl.h"
#include "tsr_error.h"

/* GFLOPS (an FMA counts 2) of the device in double (dp 1; the device must have doubles)
 * or single precision, over at least `seconds` of work. */
TSR_NODISCARD tsr_status gpu_fma_peak_gflops(opencl_context_t *cl, int dp, double seconds,
                                             double *out, tsr_error_t *err);

#endif
