/* gpu_pdf: a block's PDF field on an OpenCL device and its ghost exchange, for any lattice
 * and any module (the flow, an advection-diffusion scalar, ...).
 *
 * - A program cache: the programs of gpu_lbm, built on first use (one per block size and
 *   spec) and kept for the run. A module keeps its own cache (its collision constants are
 *   its own).
 * - gpu_pdf_t: the two device grids of a block, its message buffers on the device and
 *   their pinned host copies, and the staging state of an exchange.
 * - The registry items of the ghost exchange (hs gpu): stage_out packs every face, edge
 *   and corner of a block into a device buffer in the common message layout and, where
 *   messages leave the device, reads it in one transfer into pinned host memory, from
 *   which extraction copies; insertion copies into a pinned buffer and stage_in writes it
 *   in one transfer and unpacks. Neighbours on the same device never go through the host:
 *   the copy item points the receiver's unpack at the sender's pack buffer. */
#ifndef GPU_PDF_H
#define GPU_PDF_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_buffer.h"
#include "gpu_lbm.h"
#include "lattice.h"
#include "opencl.h"
#include "registry.h"
#include "tsr_error.h"

typedef struct gpu_pdf_cache gpu_pdf_cache_t;

/* cl is borrowed and must outlive the cache; source_dir: NULL or "" for the kernels built
 * into the library, else a folder of kernel sources (gpu_lbm_spec_t.source_dir). */
TSR_NODISCARD tsr_status gpu_pdf_cache_create(opencl_context_t *cl, const char *source_dir,
                                              gpu_pdf_cache_t **out, tsr_error_t *err);
void gpu_pdf_cache_free(gpu_pdf_cache_t **cache);
opencl_context_t *gpu_pdf_cache_context(const gpu_pdf_cache_t *cache);

/* The program of spec (lattice, n, dp, trt, force, ade and coupled set; the ghost slices
 * are filled here: for every direction d of blocks/direction.h the slices of ghost width
 * width[3] and the PDFs comps[d][0 .. ncomps[d]) that cross it), built on first use.
 * consts: the collision constants (gpu_lbm_create). */
TSR_NODISCARD tsr_status gpu_pdf_program(gpu_pdf_cache_t *cache, const gpu_lbm_spec_t *spec,
                                         const int width[3],
                                         const int comps[][LATTICE_MAX_Q], const int *ncomps,
                                         const void *consts, gpu_lbm_t **out,
                                         tsr_error_t *err);

typedef struct gpu_pdf_stage gpu_pdf_stage_t;

typedef struct gpu_pdf {
  opencl_context_t *cl;
  gpu_lbm_t *prog; /* borrowed from the cache */
  gpu_lbm_field_t field;
  gpu_buffer_t out, in;          /* message buffers on the device (pack, unpack) */
  gpu_pinned_t pin_out, pin_in;  /* their host copies */
  gpu_pdf_stage_t *stage;        /* what changes during an exchange (extraction gets the
                                    block as const) */
} gpu_pdf_t;

/* The field of a block on the device: both grids from aos (the whole field, ghosts
 * included, in the CPU's AoS layout: gpu_lbm_upload) and the message buffers. */
TSR_NODISCARD tsr_status gpu_pdf_create(gpu_pdf_t *p, opencl_context_t *cl, gpu_lbm_t *prog,
                                        const void *aos, tsr_error_t *err);
/* Waits for what is in flight on the block's buffers, then frees them. */
void gpu_pdf_release(gpu_pdf_t *p);

/* One stream-collide (gpu_lbm_step, or gpu_lbm_step_coupled where aux is not NULL); the
 * pack buffer no longer holds the present values. */
TSR_NODISCARD tsr_status gpu_pdf_step(gpu_pdf_t *p, const gpu_lbm_aux_t *aux, tsr_error_t *err);

/* The registry items of the ghost exchange of field `name` (hs gpu, bs `bs`: extraction,
 * insertion and copy). offset: where the gpu_pdf_t lies in the field's block data; size:
 * the message bytes of a block in a direction (the items' size, also for blocks of other
 * processes), called with size_ctx, which must outlive the registry. */
typedef struct gpu_pdf_items {
  const char *name;
  const char *bs;
  size_t offset;
  size_t (*size)(const block_info_t *b, int dir, void *size_ctx);
  void *size_ctx;
} gpu_pdf_items_t;
TSR_NODISCARD tsr_status gpu_pdf_register(registry_t *reg, const gpu_pdf_items_t *items,
                                          tsr_error_t *err);

#endif
