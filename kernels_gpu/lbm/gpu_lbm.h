/* gpu_lbm: the host side of the LBM OpenCL kernels (lbm.cl): builds the program for one
 * lattice, block size, precision, collision and force switch (-D defines), keeps the
 * programs built so far in a cache, and enqueues the kernels on the context's queue over
 * the two copies of a block's populations.
 *
 * Device field layout: Q arrays of (nx+2)(ny+2)(nz+2) cells, ghost layer included,
 * x fastest: element i * ncells + cell: the layout of a field of the field kit with ghost
 * width 1 (kernels_gpu/gpu_field.h), which holds the copies, moves them to and from the
 * host and exchanges their ghost layers. */
#ifndef GPU_LBM_H
#define GPU_LBM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu_buffer.h"
#include "gpu_field.h"
#include "grid.h"
#include "lattice.h"
#include "lbm_kernels.h"
#include "opencl.h"
#include "tsr_error.h"

typedef struct gpu_lbm_spec {
  const lattice_t *lattice; /* static storage (lattice.h) */
  int n[3];            /* interior cells of the block */
  int dp;              /* 1: double precision, 0: single */
  int store16;         /* 0: the populations stored in that precision; LBM_STORAGE_F16S or
                          LBM_STORAGE_F16C (lbm_kernels.h; with dp 0): in 16 bits */
  int collision;       /* 0: SRT, 1: TRT, 2: MRT, 3: cumulant (ADE: 0 or 1) */
  int les;             /* 1: the Smagorinsky model (lbm_collide.h) */
  int force;           /* 1: body force terms */
  int ade;             /* 1: the advection-diffusion collision (lbm_collide.h) */
  int coupled;         /* 1: per-cell fields in and out (gpu_lbm_step_coupled) */
  const char *source_dir; /* NULL: the sources built into the library; else a folder
                             holding lattice_defs.h, lbm_collide.h and lbm.cl
                             (kernel development) */
  int group[3];        /* the work-group of the kernels over the cells of blocks (x, y,
                          1); zeros: the rule (an x row segment of a multiple of 32 work
                          items up to 128, and where that is shorter, as many rows as
                          make 128 and divide the block's rows) */
} gpu_lbm_spec_t;

typedef struct gpu_lbm gpu_lbm_t;

/* Builds the program. consts: LBM_CONSTS_COUNT(Q) values in the storage precision
 * (lbm_kernels_t.constants), copied to the device. */
TSR_NODISCARD tsr_status gpu_lbm_create(opencl_context_t *ctx, const gpu_lbm_spec_t *spec,
                                          const void *consts, gpu_lbm_t **out,
                                          tsr_error_t *err);
void gpu_lbm_free(gpu_lbm_t **g);

/* The two copies of a block's populations (cl_mem of a gpu_field_t); cur is the one
 * holding the present state. Or the populations of many blocks of one size in the
 * arrays of a field set (gpu_field_array), block b's at element bases[b]: one launch
 * advances them all. */
typedef struct gpu_lbm_field {
  void *grid[2]; /* cl_mem */
  int cur;
  int in_place;  /* one array (grid[0]) streamed in place (gpu_field_shape_t.stream, the
                    lattice's inverse directions and vectors): cur 0 natural, 1 swapped */
  const gpu_buffer_t *bases;     /* NULL: one block at element 0; else cl_long per block */
  int nblocks;                   /* with bases */
  const gpu_buffer_t *in_bases, *out_bases; /* coupled, with bases: cl_long per block,
                                               where its per-cell fields start in
                                               gpu_lbm_aux_t's in and out (NULL where that
                                               field is left out) */
  int part;                      /* the stream-collide's cells: 0 all; 1 those of each
                                    block's box, 2 the others (an overlapped step;
                                    registry_region_t), and then the step ends after 2 */
  const gpu_buffer_t *boxes;     /* with part: cl_int lo[3], hi[3] per block */
} gpu_lbm_field_t;

/* A cache of programs, built on first use (one per spec: block size, lattice, switches)
 * and kept for the run. cl is borrowed and must outlive the cache; source_dir: NULL or ""
 * for the kernels built into the library, else a folder of kernel sources
 * (gpu_lbm_spec_t.source_dir); group: NULL or the work-group of every program
 * (gpu_lbm_spec_t.group). A module keeps its own cache (its collision constants
 * are its own). */
typedef struct gpu_lbm_cache gpu_lbm_cache_t;
TSR_NODISCARD tsr_status gpu_lbm_cache_create(opencl_context_t *cl, const char *source_dir,
                                              const int *group, gpu_lbm_cache_t **out,
                                              tsr_error_t *err);
void gpu_lbm_cache_free(gpu_lbm_cache_t **cache);
opencl_context_t *gpu_lbm_cache_context(const gpu_lbm_cache_t *cache);
/* The program of spec (its source_dir is the cache's), built on first use; consts as for
 * gpu_lbm_create. */
TSR_NODISCARD tsr_status gpu_lbm_cache_program(gpu_lbm_cache_t *cache, const gpu_lbm_spec_t *spec,
                                               const void *consts, gpu_lbm_t **out,
                                               tsr_error_t *err);

/* One pull stream-collide of the interior into the other grid, which becomes cur; in
 * place: of the array, natural to swapped or back (cur changes all the same). */
TSR_NODISCARD tsr_status gpu_lbm_step(gpu_lbm_t *g, gpu_lbm_field_t *f, tsr_error_t *err);

/* The per-cell fields of a coupled step (lbm.cl; lbm_coupling_t on the CPU): device
 * buffers of 3 components per interior cell in the storage precision, laid out as dims
 * say (a CPU field of the block without ghost layer: grid.h), both the same.
 * Flow (spec.ade 0): in, a body force added to the constant one, counted half where
 * start is 1 (NULL: none); out, the velocity the collision used (NULL: not written).
 * ADE: in, the advection velocity (required); out, beta (C - c0) (NULL: not written). */
typedef struct gpu_lbm_aux {
  const gpu_buffer_t *in;
  gpu_buffer_t *out;
  grid_dims_t dims;      /* of every buffer */
  double beta[3], c0;
  int start;
  int accumulate;        /* ADE: out is added to, not written */
} gpu_lbm_aux_t;

/* One coupled stream-collide (a program built with spec.coupled). */
TSR_NODISCARD tsr_status gpu_lbm_step_coupled(gpu_lbm_t *g, gpu_lbm_field_t *f,
                                              const gpu_lbm_aux_t *a, tsr_error_t *err);

/* Enqueues lbm_pulled_density: the density the next stream-collide will see (the sum of
 * the pulled values of the current grid, plus shift) into out, a per-cell buffer laid out
 * as od says (origin, sy, sz), in the storage precision. */
TSR_NODISCARD tsr_status gpu_lbm_pulled_density(gpu_lbm_t *g, const gpu_lbm_field_t *f,
                                                gpu_buffer_t *out, const grid_dims_t *od,
                                                double shift, tsr_error_t *err);

/* Bounce-back links on the device: f[to] = f[from] + extra (negate: -f[from] + extra,
 * anti-bounce-back), to and from given as element indices of the AoS CPU layout
 * (cell * Q + i: the lbm_link_t of a block built in AoS), extra rounded to the run's
 * precision as on the CPU. gpu_lbm_links_create_many gathers the links of many blocks
 * of the program's size whose populations start at element base[k] of the same arrays
 * into one list (one launch for all). */
typedef struct gpu_lbm_links {
  gpu_buffer_t idx, extra;
  gpu_buffer_t group;       /* the links' groups (lbm_link_t.group), one byte each; none
                               where every link is of group 0 */
  gpu_buffer_t idx_swapped; /* in place: the same links on the swapped array */
  size_t n;
  size_t split; /* a batch's links in two parts: the first split, then the others (n: no
                   parts) */
  int negate;
} gpu_lbm_links_t;
TSR_NODISCARD tsr_status gpu_lbm_links_create(gpu_lbm_t *g, const lbm_link_t *links, size_t n,
                                                int negate, gpu_lbm_links_t *out,
                                                tsr_error_t *err);
TSR_NODISCARD tsr_status gpu_lbm_links_create_many(gpu_lbm_t *g, const lbm_link_t *const *links,
                                                  const size_t *n, const size_t *base,
                                                  size_t nblocks, int negate, int in_place,
                                                  gpu_lbm_links_t *out, tsr_error_t *err);
void gpu_lbm_links_free(gpu_lbm_links_t *l);

/* Pressure-outlet links on the device (lbm.cl lbm_outlet), built from the
 * lbm_open_link_t of blocks built in AoS, gathered as gpu_lbm_links_create_many does. */
typedef struct gpu_lbm_outlet {
  gpu_lbm_links_t links; /* to, from, extra (and the in-place indices) */
  gpu_buffer_t cells, dirs, w; /* w: w2, wrho0 per link */
  double hf[3], inv_rho0; /* F/2 (0 without a force), 1/rho0 */
} gpu_lbm_outlet_t;
TSR_NODISCARD tsr_status gpu_lbm_outlet_create_many(gpu_lbm_t *g,
                                                    const lbm_open_link_t *const *links,
                                                    const size_t *n, const size_t *base,
                                                    size_t nblocks, int in_place,
                                                    const lbm_params_t *p,
                                                    gpu_lbm_outlet_t *out, tsr_error_t *err);
void gpu_lbm_outlet_free(gpu_lbm_outlet_t *o);
/* part as gpu_lbm_boundary's. */
TSR_NODISCARD tsr_status gpu_lbm_outlet(gpu_lbm_t *g, gpu_lbm_field_t *f,
                                        const gpu_lbm_outlet_t *o, int part, tsr_error_t *err);

/* Links to obstacles on the device (lbm.cl lbm_bodies), from the lbm_body_link_t of
 * blocks built in AoS, gathered as gpu_lbm_links_create_many does; each link's momentum
 * exchange goes to out (3 int64 per link, fixed point, written by every launch). */
typedef struct gpu_lbm_bodies {
  gpu_lbm_links_t links, links2; /* (to, from) and (to, from2) */
  gpu_buffer_t coef, meta, out;
} gpu_lbm_bodies_t;
/* Where a block's links' momentum exchange lies on the device (out: a batch's buffer;
 * NULL: none yet): its links that touch no slice of late (lbm_body_link_t.ghost), in
 * their order, are n[0] links from link first[0]; the others n[1] from first[1]. */
typedef struct gpu_lbm_force_slice {
  opencl_context_t *ctx;
  const gpu_buffer_t *out;
  size_t first[2], n[2];
  uint32_t late;
} gpu_lbm_force_slice_t;
/* Adds the momentum the links of a slice exchanged in their last launch to acc[3 body +
 * a] (fixed point, lbm_kernels.h), the bodies those of links[0 .. n[0] + n[1]) (the
 * block's own list, as it was when gathered). Blocking. */
TSR_NODISCARD tsr_status gpu_lbm_force_read(const gpu_lbm_force_slice_t *s,
                                            const lbm_body_link_t *links, int64_t *acc,
                                            tsr_error_t *err);

/* Enqueues the links on the current grid; scale: the factors of the links' groups
 * (LBM_LINK_GROUPS; NULL: none, extra as it is), as lbm_kernels_t.boundary. part 0: every
 * link; 1: the first l->split; 2: the others. */
TSR_NODISCARD tsr_status gpu_lbm_boundary(gpu_lbm_t *g, gpu_lbm_field_t *f,
                                            const gpu_lbm_links_t *l, const double *scale,
                                            int part, tsr_error_t *err);

/* Density and velocity of the interior cells of the current grid, as
 * the CPU moments compute them: rho[n], u[3n], x fastest. scratch: a device
 * buffer of at least gpu_lbm_moments_bytes. Blocking. */
typedef struct gpu_lbm_moments_opts {
  double rho0;
  double force[3];
  int use_force;
  int shifted;
} gpu_lbm_moments_opts_t;
size_t gpu_lbm_moments_bytes(const gpu_lbm_t *g);
TSR_NODISCARD tsr_status gpu_lbm_moments(gpu_lbm_t *g, const gpu_lbm_field_t *f,
                                           gpu_buffer_t *scratch,
                                           const gpu_lbm_moments_opts_t *o, double *rho,
                                           double *u, tsr_error_t *err);

/* The stability check on the device (lbm.cl's lbm_check): *out becomes the first
 * interior cell (x fastest) whose flags byte is fluid and whose moments (as
 * gpu_lbm_moments computes them; the velocity from velocity, laid out as vdims says,
 * where that is not NULL) are not stable in the sense of lbm_cell_stable, or -1.
 * flags: a device buffer of one byte per interior cell; first: a device buffer of at
 * least 4 bytes. Blocking; 4 bytes come back. */
TSR_NODISCARD tsr_status gpu_lbm_check(gpu_lbm_t *g, const gpu_lbm_field_t *f,
                                       const gpu_buffer_t *flags, uint8_t fluid,
                                       gpu_buffer_t *first, const gpu_lbm_moments_opts_t *o,
                                       const gpu_buffer_t *velocity, const grid_dims_t *vdims,
                                       double cs2, int64_t *out, tsr_error_t *err);


/* ---- batches: the blocks of a process advanced with a fixed number of launches ---- */

/* One block of a batch: its program, its populations (a field of two copies), the
 * per-cell fields of a coupled program (NULL: none; one copy each) and its bounce-back
 * links (element indices of the AoS CPU layout, as for gpu_lbm_links_create: [0] plain,
 * [1] negated). */
typedef struct gpu_lbm_member {
  gpu_lbm_t *prog;
  gpu_field_t *pdf;
  gpu_field_t *aux_in, *aux_out;
  const lbm_link_t *links[2];
  size_t nlinks[2];
  const lbm_open_link_t *open; /* pressure-outlet links (AoS indices) */
  size_t nopen;
  const lbm_body_link_t *body; /* links to obstacles (AoS indices) */
  size_t nbody;
  gpu_lbm_force_slice_t *slice; /* out: where its links' momentum exchange will lie */
  uint32_t late; /* the boundary in two parts (gpu_lbm_batch_boundary): the links of every
                    kind that touch a ghost slice of late (their .ghost) in the second;
                    0: all in the first */
} gpu_lbm_member_t;

/* The blocks grouped by program and field sets (a group per block size, as a rule), each
 * group with its tables on the device: a step launches one stream-collide per group, a
 * boundary one launch per group and kind of link. p: the flow's parameters for the
 * members' pressure-outlet links (NULL: they have none). Members are read during create only;
 * their fields must outlive the batch. */
typedef struct gpu_lbm_batch gpu_lbm_batch_t;
TSR_NODISCARD tsr_status gpu_lbm_batch_create(const gpu_lbm_member_t *m, size_t n,
                                              const lbm_params_t *p, gpu_lbm_batch_t **out,
                                              tsr_error_t *err);
void gpu_lbm_batch_free(gpu_lbm_batch_t **b);
/* gpu_lbm_batch_free of a batch given as a void pointer (a registry batch's state). */
void gpu_lbm_batch_release(void *b);
/* One stream-collide of every block (a: the coupling's constants for coupled programs,
 * its in, out and dims taken from the members; NULL for plain ones), after which every
 * block's populations are swapped. Fails where the blocks of a group are not in step
 * (their present copies differ). */
TSR_NODISCARD tsr_status gpu_lbm_batch_step(gpu_lbm_batch_t *b, const gpu_lbm_aux_t *a,
                                            tsr_error_t *err);
/* The same in two parts (an overlapped step): part 1 the cells of each block's box,
 * boxes[6 k .. 6 k + 5] (lo x, y, z, hi x, y, z, interior cells) for member k; part 2
 * the others, after which the populations are swapped. The boxes go to the device at
 * the first call and must stay the same for the batch. */
TSR_NODISCARD tsr_status gpu_lbm_batch_step_part(gpu_lbm_batch_t *b, const gpu_lbm_aux_t *a,
                                                 const int *boxes, int part,
                                                 tsr_error_t *err);
/* The bounce-back links of every block (scale as gpu_lbm_boundary's), its links to
 * obstacles, then its pressure-outlet links: part 0 all of them; 1 those that touch no
 * ghost slice of their member's late mask; 2 the others. */
TSR_NODISCARD tsr_status gpu_lbm_batch_boundary(gpu_lbm_batch_t *b, const double *scale,
                                                int part, tsr_error_t *err);
/* Whether the batch was made for a boundary in parts (some member's late mask not 0). */
bool gpu_lbm_batch_parts(const gpu_lbm_batch_t *b);
/* gpu_lbm_pulled_density of every block, into its aux_out (one component, the layout of
 * every block's the same). */
/* The same in two parts (as gpu_lbm_batch_step_part: part 1 the cells of each member's
 * box, part 2 the others). */
TSR_NODISCARD tsr_status gpu_lbm_batch_pulled_density_part(gpu_lbm_batch_t *b, double shift,
                                                           const int *boxes, int part,
                                                           tsr_error_t *err);
TSR_NODISCARD tsr_status gpu_lbm_batch_pulled_density(gpu_lbm_batch_t *b, double shift,
                                                      tsr_error_t *err);

#endif
