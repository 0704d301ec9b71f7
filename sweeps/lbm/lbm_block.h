/* lbm_block: the flow's block data and sweep context, shared by its CPU items (lbm.c),
 * its GPU items (lbm_gpu.c) and its module (lbm_module.c). Not for other modules: the
 * flow's public face is lbm.h. */
#ifndef LBM_BLOCK_H
#define LBM_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "direction.h"
#include "grid.h"
#include "lattice.h"
#include "lbm_kernels.h"
#include "lbm_options.h"
#include "gpu_lbm.h"
#include "registry.h"

/* Which fields of the public face a run uses: the stream-collide reads lbm.force, writes
 * lbm.velocity and lbm.density where set (every step, in the same pass), and otherwise
 * runs without them. */
typedef struct lbm_coupling_flags {
  bool force, velocity, density;
} lbm_coupling_flags_t;

typedef struct lbm_ctx lbm_ctx_t;
struct lbm_ctx {
  lbm_options_t opts;
  patch_options_t domain;
  lbm_params_t params;
  const lattice_t *lattice;
  const lbm_kernels_t *kernels[2]; /* per CPU layout (grid_layout_t) */
  int pdf_id;   /* the PDFs: a field of the field kit (two copies) */
  int cells_id; /* the block's cells: lbm_block_t (CPU) or lbm_gpu_block_t (GPU) */
  int force_id, velocity_id, density_id; /* data ids of the public face's fields */
  int gradient_id; /* lbm_derived.h's scratch field; -1 where no output needs it */
  lbm_coupling_flags_t couple; /* which of them the run uses (lbm_module's bind) */
  uint32_t bs_fluid, bs_boundary, bs_solid;
  int comps[DIRECTION_COUNT][LATTICE_MAX_Q]; /* PDFs crossing each direction */
  int ncomps[DIRECTION_COUNT];
  int width[3];       /* ghost widths of the PDF field (lattice_ghost_width) */
  int nbodies;        /* named obstacles (geometry_bodies) */
  int shape_body[GEOMETRY_MAX_SHAPES];
  gpu_lbm_cache_t *gpu; /* NULL: this process has no OpenCL device */
};

/* A block's cells beside its PDFs: flags, the bounce-back links (element indices of the
 * PDF field's layout, dims), the moments. Empty (flags NULL) for a solid block. */
typedef struct lbm_block {
  grid_dims_t dims;      /* of the block's PDF field */
  size_t esize;
  lbm_link_t *links;
  size_t nlinks;
  lbm_open_link_t *open; /* pressure-outlet links (same indices) */
  size_t nopen;
  lbm_body_link_t *body; /* links to named or curved obstacles (same indices) */
  size_t nbody;
  int64_t *force;        /* 3 per body: the momentum the links exchanged since the last
                            read (lbm_body_link_t), fixed point; NULL without bodies */
  uint8_t *flags;        /* interior cells */
  double *rho, *u;       /* moments */
  int64_t unstable;      /* the last "lbm.check": first unstable interior cell, or -1 */
  int started;           /* a coupled stream-collide has run (lbm_coupling_t.start) */
  int64_t steps;         /* steps completed (the stream-collide counts them; a restart
                            sets it):
                            the time of walls whose velocity changes (lbm_link_scale) */
  /* for a step that overlaps its exchange: the links are sorted, those that touch no late
     ghost slice (lbm_link_t.ghost & late == 0) first: n*_early of them */
  int sorted;
  uint32_t sorted_late;
  size_t nlinks_early, nopen_early, nbody_early;
} lbm_block_t;


/* Interior cells of a block. */
size_t lbm_cells(const grid_dims_t *d);

/* The cells of a CPU block whose PDFs lie in a layout: flags, bounce-back links (element
 * indices of that layout), moment arrays; a solid block gets the struct alone. The GPU
 * allocator starts from the AoS block. */
tsr_status lbm_alloc_layout(const block_info_t *b, const lbm_ctx_t *c, grid_layout_t layout,
                            lbm_block_t **out, tsr_error_t *err);
void lbm_block_release(void *data, void *ctx);
/* Frees the arrays of a block (not the struct) and sets them to NULL. */
void lbm_block_clear(lbm_block_t *b);

/* Wall cells of the moment arrays read rho0 and the wall velocity. */
void lbm_mask_walls(const lbm_ctx_t *c, lbm_block_t *lb);

/* In the fluid cells of the moments, the velocity the collision used: the public face's
 * velocity field where the block has one (read back from the device on a GPU block).
 * With a force per cell the moments of the stored PDFs miss half of it; the outputs, the
 * totals and the stability check all see this velocity. */
TSR_NODISCARD tsr_status lbm_collision_velocity(const lbm_ctx_t *c, const block_info_t *b,
                                                const block_data_t *data, lbm_block_t *lb,
                                                tsr_error_t *err);

/* The factors of the link groups (lbm_link_t.group: 1 + the face of a wall whose
 * velocity is ramped) at `step` steps done: the smooth ramp (1 - cos(pi step / T)) / 2
 * of each face over its T = ramp steps, 1 after; group 0 and the others 1. Returns false
 * where every factor is 1 (no ramp, or every ramp over): the links then need none. */
bool lbm_link_scale(const lbm_options_t *o, int64_t step, double scale[LBM_LINK_GROUPS]);

/* The start velocity and density of interior cell (x, y, z) (the public face's fields'
 * init functions; ctx: the kept lbm_ctx_t). */
void lbm_initial_velocity(const block_info_t *b, int x, int y, int z, const void *ctx,
                          double *out);
void lbm_initial_density(const block_info_t *b, int x, int y, int z, const void *ctx,
                         double *out);

/* The start PDFs of a block, ghost layers included (the field kit's fill function). */
tsr_status lbm_fill(const block_info_t *b, void *values, const grid_dims_t *dims,
                    const void *vctx, tsr_error_t *err);

/* Adds the items with ctx set to ctx. */
tsr_status lbm_add_items(registry_t *reg, const registry_item_t *items, size_t n, void *ctx,
                         tsr_error_t *err);

#endif
