/* gpu_program: an OpenCL program of a module's own kernels, and launches over the cells
 * of a block: what a physics module needs to run its own OpenCL C on GPU blocks without
 * calling OpenCL itself (OpenCL calls stay in framework/ and kernels_gpu/).
 *
 * A module embeds its .cl source at build time (kernels_gpu/CMakeLists.txt:
 * tessera_embed_cl) and specialises it with -D defines; gpu_program_create builds it and
 * finds the kernels by name; gpu_program_launch sets the arguments in order and enqueues
 * the kernel on the context's in-order queue over n[0] x n[1] x n[2] work items. */
#ifndef GPU_PROGRAM_H
#define GPU_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_buffer.h"
#include "opencl.h"
#include "tsr_error.h"

enum { GPU_PROGRAM_MAX_KERNELS = 8, GPU_PROGRAM_MAX_ARGS = 24 };

typedef struct gpu_program gpu_program_t;

/* Builds source with options (what names the source in a build error: "shan_chen.cl")
 * and creates the kernels names[n] (n <= GPU_PROGRAM_MAX_KERNELS), kernel k being
 * names[k]. */
TSR_NODISCARD tsr_status gpu_program_create(opencl_context_t *cl, const char *source,
                                            const char *options, const char *what,
                                            const char *const *names, int n,
                                            gpu_program_t **out, tsr_error_t *err);
void gpu_program_free(gpu_program_t **p);
/* The context p was built for. */
opencl_context_t *gpu_program_context(const gpu_program_t *p);

typedef enum gpu_arg_kind {
  GPU_ARG_BUFFER, /* a device buffer (NULL or an empty one: a NULL __global pointer) */
  GPU_ARG_INT,    /* int */
  GPU_ARG_LONG,   /* long */
  GPU_ARG_FLOAT,  /* float */
  GPU_ARG_DOUBLE  /* double */
} gpu_arg_kind_t;

typedef struct gpu_arg {
  gpu_arg_kind_t kind;
  const gpu_buffer_t *buf;
  int64_t i;
  double r;
} gpu_arg_t;

static inline gpu_arg_t gpu_arg_buffer(const gpu_buffer_t *b) {
  return (gpu_arg_t){.kind = GPU_ARG_BUFFER, .buf = b};
}
static inline gpu_arg_t gpu_arg_int(int v) { return (gpu_arg_t){.kind = GPU_ARG_INT, .i = v}; }
static inline gpu_arg_t gpu_arg_long(int64_t v) {
  return (gpu_arg_t){.kind = GPU_ARG_LONG, .i = v};
}
/* A real in the program's precision: double where dp, else rounded to float. */
static inline gpu_arg_t gpu_arg_real(double v, int dp) {
  return (gpu_arg_t){.kind = dp ? GPU_ARG_DOUBLE : GPU_ARG_FLOAT, .r = v};
}

/* Enqueues kernel k with args[nargs] over n[3] work items (none where a count is 0). */
TSR_NODISCARD tsr_status gpu_program_launch(gpu_program_t *p, int k, const int n[3],
                                            const gpu_arg_t *args, int nargs, tsr_error_t *err);

/* Enqueues kernel k over the cells n[3] of nblocks blocks of that size: work item
 * (x, y, j n[2] + z) is cell (x, y, z) of block b0 + j, where b0 (an int) is argument 0
 * and n[2] (an int) argument 1, args[nargs] follow. The blocks go in launches of at
 * most 65535 z values (a GPU's limit on the groups along a dimension), so a kernel finds
 * its block as b0 + get_global_id(2) / nz and the block's fields through tables of
 * per-block offsets (gpu_field_groups_make). */
TSR_NODISCARD tsr_status gpu_program_launch_blocks(gpu_program_t *p, int k, const int n[3],
                                                   size_t nblocks, const gpu_arg_t *args,
                                                   int nargs, tsr_error_t *err);

#endif
