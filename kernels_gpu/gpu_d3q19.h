/* gpu_d3q19: the host side of the D3Q19 OpenCL kernels (d3q19.cl): builds the program for
 * one block size, precision, collision and force switch (-D defines), holds the two SoA
 * grids of a block on the device and enqueues the kernels on the context's queue.
 *
 * Device field layout: 19 arrays of (nx+2)(ny+2)(nz+2) cells, ghost layer included,
 * x fastest: element i * ncells + cell. Host copies (upload/download) use the CPU
 * layout (AoS, element cell * 19 + i, same cell numbering), so a block moves between
 * the devices without either knowing the other's layout. */
#ifndef GPU_D3Q19_H
#define GPU_D3Q19_H

#include <stddef.h>
#include <stdint.h>

#include "opencl.h"
#include "tsr_error.h"

typedef struct gpu_d3q19_spec {
  int n[3];            /* interior cells of the block */
  int dp;              /* 1: double precision, 0: single */
  int trt;             /* 1: TRT, 0: SRT */
  int force;           /* 1: body force terms */
  const char *source_dir; /* NULL: the sources built into the library; else a folder
                             holding d3q19.cl and d3q19_collide.h (kernel development) */
} gpu_d3q19_spec_t;

typedef struct gpu_d3q19 gpu_d3q19_t;

/* Builds the program. consts: D3Q19_CONSTS_COUNT values in the storage precision
 * (d3q19_collision_constants_*), copied to the device. */
TSR_NODISCARD tsr_status gpu_d3q19_create(opencl_context_t *ctx, const gpu_d3q19_spec_t *spec,
                                          const void *consts, gpu_d3q19_t **out,
                                          tsr_error_t *err);
void gpu_d3q19_free(gpu_d3q19_t **g);

/* Bytes of one grid of the block on the device. */
size_t gpu_d3q19_grid_bytes(const gpu_d3q19_t *g);

/* The two grids of a block; cur is the one holding the present state. */
typedef struct gpu_d3q19_field {
  void *grid[2]; /* cl_mem */
  int cur;
} gpu_d3q19_field_t;

/* Allocates both grids, after checking they fit in the device's memory. */
TSR_NODISCARD tsr_status gpu_d3q19_field_create(gpu_d3q19_t *g, gpu_d3q19_field_t *f,
                                                tsr_error_t *err);
void gpu_d3q19_field_free(gpu_d3q19_field_t *f);

/* Whole field (ghosts included) from / to a host array in the CPU layout (AoS) of the
 * run's precision. Blocking. Upload writes both grids, so that the ghost layer is
 * defined whichever grid a step reads. */
TSR_NODISCARD tsr_status gpu_d3q19_upload(gpu_d3q19_t *g, gpu_d3q19_field_t *f, const void *aos,
                                          tsr_error_t *err);
TSR_NODISCARD tsr_status gpu_d3q19_download(gpu_d3q19_t *g, const gpu_d3q19_field_t *f,
                                            void *aos, tsr_error_t *err);

/* One pull stream-collide of the interior into the other grid, which becomes cur. */
TSR_NODISCARD tsr_status gpu_d3q19_step(gpu_d3q19_t *g, gpu_d3q19_field_t *f, tsr_error_t *err);

/* Waits for the queue. */
TSR_NODISCARD tsr_status gpu_d3q19_finish(gpu_d3q19_t *g, tsr_error_t *err);

#endif
