#define CL_TARGET_OPENCL_VERSION 120
#include "gpu_program.h"

#include <CL/cl.h>
#include <stdlib.h>

struct gpu_program {
  opencl_context_t *cl;
  void *program; /* cl_program */
  cl_kernel kernels[GPU_PROGRAM_MAX_KERNELS];
  const char *names[GPU_PROGRAM_MAX_KERNELS]; /* borrowed from the caller's static table */
  int n;
};

opencl_context_t *gpu_program_context(const gpu_program_t *p) { return p->cl; }

tsr_status gpu_program_create(opencl_context_t *cl, const char *source, const char *options,
                              const char *what, const char *const *names, int n,
                              gpu_program_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_program_t *p = calloc(1, sizeof *p);
  *out = NULL;
  TSR_CHECK(p, TSR_ERR_NOMEM, "out of memory for the OpenCL program %s", what);
  TSR_CHECK(n >= 1 && n <= GPU_PROGRAM_MAX_KERNELS, TSR_ERR_INTERNAL,
            "%s: %d kernels; 1..%d are allowed", what, n, GPU_PROGRAM_MAX_KERNELS);
  p->cl = cl;
  TSR_TRY(opencl_build_program(cl, source, options, what, &p->program, err));
  for (int k = 0; k < n; ++k) {
    cl_int rc = CL_SUCCESS;
    p->kernels[k] = clCreateKernel((cl_program)p->program, names[k], &rc);
    TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "%s: clCreateKernel(%s) failed: %s", what,
              names[k], opencl_error_name(rc));
    p->names[k] = names[k];
    p->n = k + 1;
  }
  *out = p;
  p = NULL;
cleanup:
  gpu_program_free(&p);
  return st;
}

void gpu_program_free(gpu_program_t **pp) {
  if (!pp || !*pp) return;
  gpu_program_t *p = *pp;
  for (int k = 0; k < p->n; ++k) clReleaseKernel(p->kernels[k]);
  opencl_program_release(p->program);
  free(p);
  *pp = NULL;
}

/* Sets args[nargs] as arguments first.. of kernel k. */
static tsr_status gpu_program_args(gpu_program_t *p, int k, cl_uint first, const gpu_arg_t *args,
                                   int nargs, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(k >= 0 && k < p->n && nargs <= GPU_PROGRAM_MAX_ARGS, TSR_ERR_INTERNAL,
            "gpu_program_launch: kernel %d of %d, %d arguments", k, p->n, nargs);
  cl_kernel kern = p->kernels[k];
  for (int a = 0; a < nargs; ++a) {
    const gpu_arg_t *g = &args[a];
    const cl_uint i = first + (cl_uint)a;
    switch (g->kind) {
    case GPU_ARG_BUFFER:
      OPENCL_CHECK(clSetKernelArg(kern, i, sizeof(cl_mem),
                                  g->buf && g->buf->mem ? &g->buf->mem : NULL));
      break;
    case GPU_ARG_INT: {
      const cl_int v = (cl_int)g->i;
      OPENCL_CHECK(clSetKernelArg(kern, i, sizeof v, &v));
      break;
    }
    case GPU_ARG_LONG: {
      const cl_long v = (cl_long)g->i;
      OPENCL_CHECK(clSetKernelArg(kern, i, sizeof v, &v));
      break;
    }
    case GPU_ARG_FLOAT: {
      const cl_float v = (cl_float)g->r;
      OPENCL_CHECK(clSetKernelArg(kern, i, sizeof v, &v));
      break;
    }
    case GPU_ARG_DOUBLE: {
      const cl_double v = g->r;
      OPENCL_CHECK(clSetKernelArg(kern, i, sizeof v, &v));
      break;
    }
    }
  }
cleanup:
  return st;
}

tsr_status gpu_program_launch(gpu_program_t *p, int k, const int n[3], const gpu_arg_t *args,
                              int nargs, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(gpu_program_args(p, k, 0, args, nargs, err));
  if (n[0] <= 0 || n[1] <= 0 || n[2] <= 0) goto cleanup;
  const size_t global[3] = {(size_t)n[0], (size_t)n[1], (size_t)n[2]};
  TSR_TRY(opencl_launch(p->cl, p->kernels[k], 3, global, NULL, p->names[k], err));
cleanup:
  return st;
}

tsr_status gpu_program_launch_blocks(gpu_program_t *p, int k, const int n[3], size_t nblocks,
                                     const gpu_arg_t *args, int nargs, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(gpu_program_args(p, k, 2, args, nargs, err));
  if (n[0] <= 0 || n[1] <= 0 || n[2] <= 0) goto cleanup;
  cl_kernel kern = p->kernels[k];
  const cl_int nz = n[2];
  OPENCL_CHECK(clSetKernelArg(kern, 1, sizeof nz, &nz));
  const size_t per = nz >= 65535 ? 1 : (size_t)(65535 / nz);
  for (size_t b0 = 0; b0 < nblocks; b0 += per) {
    const size_t m = nblocks - b0 < per ? nblocks - b0 : per;
    const size_t global[3] = {(size_t)n[0], (size_t)n[1], (size_t)nz * m};
    const cl_int first = (cl_int)b0;
    OPENCL_CHECK(clSetKernelArg(kern, 0, sizeof first, &first));
    TSR_TRY(opencl_launch(p->cl, kern, 3, global, NULL, p->names[k], err));
  }
cleanup:
  return st;
}
