/* lbm: the lattice Boltzmann sweep (any flow lattice of kernels_cpu/lattice.h) on CPU
 * blocks (OpenMP; SoA or AoS) and on OpenCL devices (SoA; lbm_gpu.c).
 *
 * lbm_sweep_register declares the PDFs through the field kit (framework/field/field.h)
 * and adds to the registry, under the fs switches srt|trt, sp|dp and soa|aos (the layout
 * of CPU blocks):
 *   field      "lbm.pdf"            PDFs (two copies, in the layout of the fs on CPU
 *                                   blocks), with the kit's allocators and the exchange of
 *                                   the PDFs that cross a face, edge or corner of a block
 *                                   (D3Q19: 5, 1, 0) on every hs; a solid block holds none
 *   allocator  "lbm.cells"          flags, boundary links and moments of a block (nothing
 *                                   for a solid block)
 *   boundary   "lbm.boundary"       the links of fluid_boundary blocks: no-slip and
 *                                   moving walls, inlets (2 w_i rho0 c_i.u_w / c_s^2),
 *                                   outflows (copies), then pressure outlets
 *   kernel     "lbm.stream_collide" pull stream + SRT/TRT collide, then swaps the grids
 *                                   and counts the step
 *   kernel     "lbm.moments"        density and velocity of every cell into the block's
 *                                   moment arrays (lbm_block_moments), for output
 *   kernel     "lbm.check"          the stability check: the block's first fluid cell
 *                                   whose moments are not stable (lbm_cell_stable), or
 *                                   -1 (lbm_moments_view_t.unstable); CPU blocks compute
 *                                   the moments and check them, GPU blocks check on the
 *                                   device and bring 4 bytes back (the moments only when
 *                                   a cell failed)
 * Blocks are classified with lbm_classify into bs fluid (no wall in or around it: no
 * boundary work), fluid_boundary and solid (allocates nothing, runs nothing). */
#ifndef LBM_SWEEP_H
#define LBM_SWEEP_H

#include <float.h>
#include <stdbool.h>
#include <stdint.h>

#include "block_data.h"
#include "config.h"
#include "geometry.h"
#include "grid.h"
#include "lattice.h"
#include "gpu_field.h"
#include "gpu_lbm.h"
#include "lbm_options.h"
#include "module.h"
#include "patch.h"
#include "registry.h"
#include "tsr_error.h"

#define LBM_PDF "lbm.pdf"
#define LBM_CELLS "lbm.cells"
#define LBM_BOUNDARY "lbm.boundary"
#define LBM_STREAM_COLLIDE "lbm.stream_collide"
#define LBM_PULLED_DENSITY "lbm.pulled_density" /* lbm.density for the next collision */
#define LBM_MOMENTS "lbm.moments"
#define LBM_CHECK "lbm.check"
/* The flow's public face: fields other modules read or add to by name. */
#define LBM_VELOCITY "lbm.velocity" /* the velocity the collision used (3 components) */
#define LBM_DENSITY "lbm.density"   /* the density the collision used (1 component) */
#define LBM_FORCE "lbm.force"       /* the body force per cell the next collision adds to
                                       lbm.force (3 components): an accumulator the first
                                       module of a step that writes it sets, later ones
                                       add to */

/* The sweep's context (lbm_block.h), kept in the registry. */
typedef struct lbm_ctx lbm_ctx_t;

/* Registers the items above for hs cpu, and declares the fields of the public face and
 * the PDFs through the field kit; the options are copied into the registry. gpu and
 * fields: this process's OpenCL programs (borrowed, must outlive the registry and the
 * blocks), NULL where it has none; the GPU items are lbm_gpu_register's (lbm_gpu.h),
 * with *ctx, which every process registers too, so that it can size the messages of GPU
 * blocks. *ctx (unless ctx is NULL): the kept context; its `couple` says where the run's
 * coupling is set (all false at first), up to the first allocation. decl (unless NULL):
 * the module's declaration, which gets the fields lbm.pdf, lbm.cells, lbm.force,
 * lbm.velocity and lbm.density in this order (module_declare_field). */
TSR_NODISCARD tsr_status lbm_sweep_register(registry_t *reg, const patch_options_t *domain,
                                            const lbm_options_t *o, gpu_lbm_cache_t *gpu,
                                            gpu_field_programs_t *fields,
                                            module_decl_t *decl, lbm_ctx_t **ctx,
                                            tsr_error_t *err);

/* Sets every block's bs from the geometry (the same on every process). */
TSR_NODISCARD tsr_status lbm_classify(patch_t *patch, registry_t *reg, const lbm_options_t *o,
                                      tsr_error_t *err);

/* Moments of the last "lbm.moments" run on a block: rho[n], u[3n] over its interior
 * cells, x fastest; wall cells read rho0 and the wall velocity. Borrowed; NULL for a
 * block without PDFs. */
typedef struct lbm_moments_view {
  const double *rho;
  const double *u;
  const uint8_t *flags; /* per interior cell, GEOMETRY_* */
  int64_t cells;
  int64_t unstable; /* the last "lbm.check": its first unstable cell (see below), or -1 */
} lbm_moments_view_t;
lbm_moments_view_t lbm_block_moments(const block_data_t *data, int pdf_id);

/* The first interior cell (x fastest) of the moments that is fluid and not stable
 * (lbm_cell_stable with cs2), or -1. */
int64_t lbm_first_unstable(const lbm_moments_view_t *v, double cs2);


#endif
