/* lbm_impl: what the CPU and the GPU items of the LBM sweep share (private to sweeps/). */
#ifndef LBM_IMPL_H
#define LBM_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "direction.h"
#include "grid.h"
#include "lattice.h"
#include "lbm_kernels.h"
#include "lbm.h"
#include "lbm_gpu.h"

typedef struct lbm_ctx {
  lbm_options_t opts;
  patch_options_t domain;
  lbm_params_t params;
  const lattice_t *lattice;
  const lbm_kernels_t *kernels[2]; /* per CPU layout (grid_layout_t) */
  int pdf_id;
  int force_id, velocity_id; /* data ids of the coupling fields, -1: none (lbm.force_field,
                                lbm.write_velocity) */
  uint32_t bs_fluid, bs_boundary, bs_solid;
  int comps[DIRECTION_COUNT][LATTICE_MAX_Q]; /* PDFs crossing each direction */
  int ncomps[DIRECTION_COUNT];
  int width[3];       /* ghost widths of the PDF field (lbm_ghost_width) */
  gpu_pdf_cache_t *gpu; /* NULL: this process has no OpenCL device */
} lbm_ctx_t;

typedef struct lbm_block {
  grid_dims_t dims;
  size_t esize;
  void *src, *dst;       /* NULL for a solid block; 64-byte aligned */
  lbm_link_t *links;
  size_t nlinks;
  uint8_t *flags;        /* interior cells */
  double *rho, *u;       /* moments */
  int64_t unstable;      /* the last "lbm.check": first unstable interior cell, or -1 */
  int started;           /* a coupled stream-collide has run (lbm_coupling_t.start) */
} lbm_block_t;


/* Interior cells of a block. */
size_t lbm_cells(const grid_dims_t *d);

/* The CPU block in a layout: initial PDFs (both grids), flags, bounce-back links (element
 * indices of that layout), moment arrays; a solid block gets the struct alone. The GPU
 * allocator starts from the AoS block. */
tsr_status lbm_alloc_layout(const block_info_t *b, const lbm_ctx_t *c, grid_layout_t layout,
                            lbm_block_t **out, tsr_error_t *err);
void lbm_block_release(void *data, void *ctx);
/* Frees the arrays of a block (not the struct) and sets them to NULL. */
void lbm_block_clear(lbm_block_t *b);

/* Message bytes of a block in direction dir (0 for solid blocks). */
size_t lbm_size(const block_info_t *b, int dir, void *vctx);

/* Wall cells of the moment arrays read rho0 and the wall velocity. */
void lbm_mask_walls(const lbm_ctx_t *c, lbm_block_t *lb);

/* Items that do nothing (solid blocks, blocks without walls). */
tsr_status lbm_nothing(const block_info_t *b, block_data_t *data, void *vctx, tsr_error_t *err);
tsr_status lbm_nothing_extract(const block_info_t *b, const void *data, int dir, uint8_t *out,
                               size_t cap, size_t *written, void *vctx, tsr_error_t *err);
tsr_status lbm_nothing_insert(const block_info_t *b, void *data, int dir, const uint8_t *in,
                              size_t len, void *vctx, tsr_error_t *err);

/* Adds the items with ctx set to ctx. */
tsr_status lbm_add_items(registry_t *reg, const registry_item_t *items, size_t n, void *ctx,
                         tsr_error_t *err);

/* The GPU items (hs gpu), registered on every process so that every process can size
 * the messages of GPU blocks; ctx is the kept lbm_ctx_t. */
tsr_status lbm_gpu_register(registry_t *reg, void *ctx, tsr_error_t *err);

#endif
