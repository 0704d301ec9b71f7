/* lbm_gpu: the flow's GPU items. */
#ifndef LBM_GPU_H
#define LBM_GPU_H

#include "lbm_block.h"
#include "registry.h"
#include "tsr_error.h"

/* The GPU items (hs gpu; lbm_gpu.c), registered on every process so that every process
 * can size the messages of GPU blocks; ctx is the kept lbm_ctx_t. They mirror the CPU
 * ones: the cells' allocator (flags, links and moments built on the host exactly as for
 * the CPU, the links moved to the device), boundary (the bounce-back links as a kernel),
 * stream-collide (plain or coupled to the public face's fields on the device), moments
 * (a kernel; only rho and u come back to the host) and the stability check on the device.
 * The framework waits for the device's queue at the end of each step.
 * The PDFs themselves are a field of the field kit. */
TSR_NODISCARD tsr_status lbm_gpu_register(registry_t *reg, lbm_ctx_t *ctx, tsr_error_t *err);

#endif
