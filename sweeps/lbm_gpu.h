/* lbm_gpu: the OpenCL side of the LBM sweep. A process whose blocks run on an OpenCL
 * device (hs gpu) hands lbm_sweep_register an environment: the device's context and the
 * programs built so far (one per block size, built on first use and kept for the run).
 *
 * The GPU items (hs gpu) mirror the CPU ones: allocator (PDFs on the device in SoA
 * layout, initialised on the host exactly as for the CPU and uploaded), boundary (the
 * bounce-back links as a kernel), stream-collide, moments (a kernel; only rho and u come
 * back to the host), and the ghost exchange: stage_out packs all faces and edges of a
 * block into a device buffer in the common message layout and, where messages leave
 * the device, reads it in one transfer into pinned host memory, from which extraction
 * copies; insertion copies into a pinned buffer and stage_in writes it in one transfer
 * and unpacks. Neighbours on the same device never go through the host: the copy item
 * points the receiver's unpack at the sender's pack buffer. GPU work is enqueued on
 * the context's in-order queue; "lbm.wait" waits for it at the end of each step. */
#ifndef LBM_GPU_H
#define LBM_GPU_H

#include "opencl.h"
#include "tsr_error.h"

typedef struct lbm_gpu_env lbm_gpu_env_t;

/* cl is borrowed and must outlive the environment; source_dir: NULL or "" for the
 * kernels built into the library, else a folder with d3q19.cl and d3q19_collide.h. */
TSR_NODISCARD tsr_status lbm_gpu_env_create(opencl_context_t *cl, const char *source_dir,
                                            lbm_gpu_env_t **out, tsr_error_t *err);
void lbm_gpu_env_free(lbm_gpu_env_t **env);

opencl_context_t *lbm_gpu_env_context(const lbm_gpu_env_t *env);

#endif
