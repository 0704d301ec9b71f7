/* gpu_lbm: the host side of the LBM OpenCL kernels (lbm.cl): builds the program for one
 * lattice, block size, precision, collision and force switch (-D defines), holds the two
 * SoA grids of a block on the device and enqueues the kernels on the context's queue.
 *
 * Device field layout: Q arrays of (nx+2)(ny+2)(nz+2) cells, ghost layer included,
 * x fastest: element i * ncells + cell. Host copies (upload/download) use the AoS CPU
 * layout (grid.h, element cell * Q + i, same cell numbering), so a block moves between
 * the devices without either knowing the other's layout. */
#ifndef GPU_LBM_H
#define GPU_LBM_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_buffer.h"
#include "grid.h"
#include "lattice.h"
#include "lbm_kernels.h"
#include "opencl.h"
#include "tsr_error.h"

/* Ghost exchange slots: the 6 faces, 12 edges and 8 corners of a block (the directions
 * of blocks/direction.h). A slot's slice: its first cell (local coordinates, -1 for the
 * ghost layer), its extent, and the directions i of the PDFs that cross it (none for
 * the corners of D3Q19; at most 9, a face of D3Q27). */
enum { GPU_LBM_SLOTS = 26, GPU_LBM_MAX_COMPS = 9 };
typedef struct gpu_lbm_slice {
  int lo[3];
  int extent[3];
  int ncomps;
  int comps[GPU_LBM_MAX_COMPS];
} gpu_lbm_slice_t;

typedef struct gpu_lbm_spec {
  const lattice_t *lattice; /* static storage (lattice.h) */
  int n[3];            /* interior cells of the block */
  int dp;              /* 1: double precision, 0: single */
  int trt;             /* 1: TRT, 0: SRT */
  int force;           /* 1: body force terms */
  int ade;             /* 1: the advection-diffusion collision (lbm_collide.h) */
  int coupled;         /* 1: per-cell fields in and out (gpu_lbm_step_coupled) */
  const char *source_dir; /* NULL: the sources built into the library; else a folder
                             holding lattice_defs.h, lbm_collide.h and lbm.cl
                             (kernel development) */
  gpu_lbm_slice_t send[GPU_LBM_SLOTS]; /* interior slices packed per slot */
  gpu_lbm_slice_t recv[GPU_LBM_SLOTS]; /* ghost slices unpacked per slot (same extents) */
} gpu_lbm_spec_t;

typedef struct gpu_lbm gpu_lbm_t;

/* Builds the program. consts: LBM_CONSTS_COUNT(Q) values in the storage precision
 * (lbm_kernels_t.constants), copied to the device. */
TSR_NODISCARD tsr_status gpu_lbm_create(opencl_context_t *ctx, const gpu_lbm_spec_t *spec,
                                          const void *consts, gpu_lbm_t **out,
                                          tsr_error_t *err);
void gpu_lbm_free(gpu_lbm_t **g);

/* Bytes of one grid of the block on the device. */
size_t gpu_lbm_grid_bytes(const gpu_lbm_t *g);

/* The two grids of a block; cur is the one holding the present state. */
typedef struct gpu_lbm_field {
  void *grid[2]; /* cl_mem */
  int cur;
} gpu_lbm_field_t;

/* Allocates both grids, after checking they fit in the device's memory. */
TSR_NODISCARD tsr_status gpu_lbm_field_create(gpu_lbm_t *g, gpu_lbm_field_t *f,
                                                tsr_error_t *err);
void gpu_lbm_field_free(gpu_lbm_field_t *f);

/* Whole field (ghosts included) from / to a host array in the CPU layout (AoS) of the
 * run's precision. Blocking. Upload writes both grids, so that the ghost layer is
 * defined whichever grid a step reads. */
TSR_NODISCARD tsr_status gpu_lbm_upload(gpu_lbm_t *g, gpu_lbm_field_t *f, const void *aos,
                                          tsr_error_t *err);
TSR_NODISCARD tsr_status gpu_lbm_download(gpu_lbm_t *g, const gpu_lbm_field_t *f,
                                            void *aos, tsr_error_t *err);

/* One pull stream-collide of the interior into the other grid, which becomes cur. */
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
  grid_dims_t dims;
  double beta[3], c0;
  int start;
} gpu_lbm_aux_t;

/* One coupled stream-collide (a program built with spec.coupled). */
TSR_NODISCARD tsr_status gpu_lbm_step_coupled(gpu_lbm_t *g, gpu_lbm_field_t *f,
                                              const gpu_lbm_aux_t *a, tsr_error_t *err);

/* Bytes per PDF value (4 or 8). */
size_t gpu_lbm_esize(const gpu_lbm_t *g);

/* Message buffers: every slot's values one after the other, slot 0 first, each in the
 * common message layout (slice cells in z-y-x order, crossing PDFs in list order).
 * Offsets and counts in values. */
size_t gpu_lbm_slot_offset(const gpu_lbm_t *g, int slot);
size_t gpu_lbm_slot_values(const gpu_lbm_t *g, int slot);
size_t gpu_lbm_message_values(const gpu_lbm_t *g);

/* Bounce-back links on the device: f[to] = f[from] + extra (negate: -f[from] + extra,
 * anti-bounce-back), to and from given as element indices of the AoS CPU layout
 * (cell * Q + i: the lbm_link_t of a block built in AoS), extra rounded to the run's
 * precision as on the CPU. */
typedef struct gpu_lbm_links {
  gpu_buffer_t idx, extra;
  size_t n;
  int negate;
} gpu_lbm_links_t;
TSR_NODISCARD tsr_status gpu_lbm_links_create(gpu_lbm_t *g, const lbm_link_t *links, size_t n,
                                                int negate, gpu_lbm_links_t *out,
                                                tsr_error_t *err);
void gpu_lbm_links_free(gpu_lbm_links_t *l);

/* Enqueues the links on the current grid. */
TSR_NODISCARD tsr_status gpu_lbm_boundary(gpu_lbm_t *g, gpu_lbm_field_t *f,
                                            const gpu_lbm_links_t *l, tsr_error_t *err);

/* Enqueues the pack of every slot of the current grid into out
 * (gpu_lbm_message_values values). */
TSR_NODISCARD tsr_status gpu_lbm_pack(gpu_lbm_t *g, const gpu_lbm_field_t *f,
                                        gpu_buffer_t *out, tsr_error_t *err);

/* Where the values of one slot come from for an unpack: a buffer in the message layout
 * and the value offset of the slot's first value there (a neighbour's pack buffer on the
 * same device, or the block's own buffer filled from the host). */
typedef struct gpu_lbm_source {
  const gpu_buffer_t *buf;
  size_t offset;
} gpu_lbm_source_t;

/* Enqueues the unpack of the slots whose bit (1 << slot) is set in mask into the ghost
 * layer of the current grid. */
TSR_NODISCARD tsr_status gpu_lbm_unpack(gpu_lbm_t *g, gpu_lbm_field_t *f,
                                          const gpu_lbm_source_t src[GPU_LBM_SLOTS],
                                          uint32_t mask, tsr_error_t *err);

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
 * gpu_lbm_moments computes them) are not stable in the sense of lbm_cell_stable, or -1.
 * flags: a device buffer of one byte per interior cell; first: a device buffer of at
 * least 4 bytes. Blocking; 4 bytes come back. */
TSR_NODISCARD tsr_status gpu_lbm_check(gpu_lbm_t *g, const gpu_lbm_field_t *f,
                                       const gpu_buffer_t *flags, uint8_t fluid,
                                       gpu_buffer_t *first, const gpu_lbm_moments_opts_t *o,
                                       double cs2, int64_t *out, tsr_error_t *err);


#endif
