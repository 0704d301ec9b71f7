#include "gpu_peak.h"

#include <stdint.h>

#include "gpu_buffer.h"
#include "gpu_program.h"

static const char gpu_peak_source[] =
    "#if PEAK_DP\n"
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "typedef double R;\n"
    "#else\n"
    "typedef float R;\n"
    "#endif\n"
    "__kernel void fma_chains(__global R *out, const int iters, const R a, const R b) {\n"
    "  const size_t g = get_global_id(0);\n"
    "  R x0 = (R)1 + (R)g * (R)1e-9, x1 = x0 + (R)0.125, x2 = x0 + (R)0.25,\n"
    "    x3 = x0 + (R)0.375, x4 = x0 + (R)0.5, x5 = x0 + (R)0.625, x6 = x0 + (R)0.75,\n"
    "    x7 = x0 + (R)0.875;\n"
    "  for (int i = 0; i < iters; ++i) {\n"
    "    x0 = fma(x0, a, b); x1 = fma(x1, a, b); x2 = fma(x2, a, b); x3 = fma(x3, a, b);\n"
    "    x4 = fma(x4, a, b); x5 = fma(x5, a, b); x6 = fma(x6, a, b); x7 = fma(x7, a, b);\n"
    "  }\n"
    "  out[g] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));\n"
    "}\n";

tsr_status gpu_fma_peak_gflops(opencl_context_t *cl, int dp, double seconds, double *out,
                               tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_program_t *prog = NULL;
  gpu_buffer_t buf = {0};
  static const char *const names[] = {"fma_chains"};
  *out = 0;
  const opencl_device_desc_t *d = opencl_context_desc(cl);
  TSR_CHECK(!dp || d->double_precision, TSR_ERR_OPENCL,
            "the FMA peak in double precision: %s has no doubles", d->name);
  /* enough work items to fill every compute unit many times over */
  const int items = (int)(d->compute_units ? d->compute_units : 1) * 8192;
  TSR_TRY(gpu_program_create(cl, gpu_peak_source, dp ? "-DPEAK_DP=1" : "-DPEAK_DP=0",
                             "the FMA peak", names, 1, &prog, err));
  TSR_TRY(gpu_buffer_create(cl, (size_t)items * (dp ? 8u : 4u), "the FMA peak's sums", &buf, err));
  for (int64_t iters = 16;; iters *= 4) {
    const int n[3] = {items, 1, 1};
    const gpu_arg_t args[] = {gpu_arg_buffer(&buf), gpu_arg_int((int)iters),
                              gpu_arg_real(0.9999999, dp), gpu_arg_real(1e-7, dp)};
    TSR_TRY(gpu_queue_finish(cl, err));
    const double t0 = gpu_now();
    TSR_TRY(gpu_program_launch(prog, 0, n, args, 4, err));
    TSR_TRY(gpu_queue_finish(cl, err));
    const double dt = gpu_now() - t0;
    if (dt >= seconds || iters >= ((int64_t)1 << 28)) {
      *out = 2.0 * 8.0 * (double)iters * (double)items / dt * 1e-9;
      break;
    }
  }
cleanup:
  gpu_buffer_free(&buf);
  gpu_program_free(&prog);
  return st;
}
