#define CL_TARGET_OPENCL_VERSION 120
#include "gpu_d3q19.h"

#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the program source, generated at build time from d3q19_collide.h and d3q19.cl */
extern const char gpu_d3q19_source[];
extern const size_t gpu_d3q19_source_size;

/* the collision constants: D3Q19_CONSTS_COUNT of kernels_cpu/d3q19_collide.h */
enum { GPU_Q = 19, GPU_CONSTS = 6 * 19 + 10 };

struct gpu_d3q19 {
  opencl_context_t *ctx;
  gpu_d3q19_spec_t spec;
  size_t esize, ncells;
  cl_program program;
  cl_kernel stream_collide;
  cl_mem consts;
};


/* The two source files from folder dir, concatenated. */
static tsr_status gpu_read_sources(const char *dir, char **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *names[2] = {"d3q19_collide.h", "d3q19.cl"};
  char *text = NULL;
  size_t len = 0;
  FILE *fp = NULL;
  for (int i = 0; i < 2; ++i) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    fp = fopen(path, "rb");
    TSR_CHECK(fp, TSR_ERR_IO, "cannot open OpenCL source %s (the kernel source folder must "
              "hold d3q19_collide.h and d3q19.cl)", path);
    TSR_CHECK(fseek(fp, 0, SEEK_END) == 0, TSR_ERR_IO, "cannot read %s", path);
    long sz = ftell(fp);
    TSR_CHECK(sz >= 0 && fseek(fp, 0, SEEK_SET) == 0, TSR_ERR_IO, "cannot read %s", path);
    char *grown = realloc(text, len + (size_t)sz + 2);
    TSR_CHECK(grown, TSR_ERR_NOMEM, "out of memory reading %s", path);
    text = grown;
    TSR_CHECK(fread(text + len, 1, (size_t)sz, fp) == (size_t)sz, TSR_ERR_IO, "cannot read %s", path);
    len += (size_t)sz;
    text[len++] = '\n';
    text[len] = '\0';
    fclose(fp);
    fp = NULL;
  }
  *out = text;
  text = NULL;
cleanup:
  if (fp) fclose(fp);
  free(text);
  return st;
}

tsr_status gpu_d3q19_create(opencl_context_t *ctx, const gpu_d3q19_spec_t *spec,
                            const void *consts, gpu_d3q19_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_d3q19_t *g = NULL;
  char *source = NULL;
  void *program = NULL;
  *out = NULL;
  const opencl_device_desc_t *desc = opencl_context_desc(ctx);
  TSR_CHECK(!spec->dp || desc->double_precision, TSR_ERR_INVALID,
            "double precision (fs dp) asked for, but OpenCL device %s does not support doubles",
            desc->name);
  TSR_CHECK(spec->n[0] > 0 && spec->n[1] > 0 && spec->n[2] > 0, TSR_ERR_INTERNAL,
            "gpu_d3q19_create: empty block");
  g = calloc(1, sizeof *g);
  TSR_CHECK(g, TSR_ERR_NOMEM, "out of memory for a GPU program");
  g->ctx = ctx;
  g->spec = *spec;
  g->spec.source_dir = NULL;
  g->esize = spec->dp ? sizeof(double) : sizeof(float);
  g->ncells = (size_t)(spec->n[0] + 2) * (size_t)(spec->n[1] + 2) * (size_t)(spec->n[2] + 2);
  if (spec->source_dir) TSR_TRY(gpu_read_sources(spec->source_dir, &source, err));
  char options[256];
  snprintf(options, sizeof options, "-DREAL_DOUBLE=%d -DNX=%d -DNY=%d -DNZ=%d -DTRT=%d -DFORCE=%d",
           spec->dp ? 1 : 0, spec->n[0], spec->n[1], spec->n[2], spec->trt ? 1 : 0,
           spec->force ? 1 : 0);
  TSR_TRY(opencl_build_program(ctx, source ? source : gpu_d3q19_source, options,
                               spec->source_dir ? "d3q19.cl (from the kernel source folder)"
                                                : "d3q19.cl",
                               &program, err));
  g->program = program;
  cl_int rc = CL_SUCCESS;
  g->stream_collide = clCreateKernel(g->program, "d3q19_stream_collide", &rc);
  TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "clCreateKernel(d3q19_stream_collide) failed: %s",
            opencl_error_name(rc));
  g->consts = clCreateBuffer(opencl_context_cl(ctx), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             (size_t)GPU_CONSTS * g->esize, (void *)consts, &rc);
  TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "clCreateBuffer (collision constants) failed: %s",
            opencl_error_name(rc));
  *out = g;
  g = NULL;
cleanup:
  gpu_d3q19_free(&g);
  free(source);
  return st;
}

void gpu_d3q19_free(gpu_d3q19_t **gp) {
  if (!gp || !*gp) return;
  gpu_d3q19_t *g = *gp;
  if (g->stream_collide) clReleaseKernel(g->stream_collide);
  if (g->consts) clReleaseMemObject(g->consts);
  opencl_program_release(g->program);
  free(g);
  *gp = NULL;
}

size_t gpu_d3q19_grid_bytes(const gpu_d3q19_t *g) { return g->ncells * GPU_Q * g->esize; }

tsr_status gpu_d3q19_field_create(gpu_d3q19_t *g, gpu_d3q19_field_t *f, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  memset(f, 0, sizeof *f);
  const size_t bytes = gpu_d3q19_grid_bytes(g);
  char what[96];
  snprintf(what, sizeof what, "a block of %dx%dx%d cells (two PDF grids)", g->spec.n[0],
           g->spec.n[1], g->spec.n[2]);
  TSR_TRY(opencl_check_memory(g->ctx, 2 * (uint64_t)bytes, bytes, what, err));
  for (int k = 0; k < 2; ++k) {
    cl_int rc = CL_SUCCESS;
    f->grid[k] = clCreateBuffer(opencl_context_cl(g->ctx), CL_MEM_READ_WRITE, bytes, NULL, &rc);
    TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL,
              "allocating %zu bytes for %s on %s failed: %s", bytes, what,
              opencl_context_desc(g->ctx)->name, opencl_error_name(rc));
  }
cleanup:
  if (st != TSR_OK) gpu_d3q19_field_free(f);
  return st;
}

void gpu_d3q19_field_free(gpu_d3q19_field_t *f) {
  for (int k = 0; k < 2; ++k)
    if (f->grid[k]) clReleaseMemObject((cl_mem)f->grid[k]);
  memset(f, 0, sizeof *f);
}

/* AoS <-> SoA on the host, element by element in the run's precision. */
static void gpu_transpose(const gpu_d3q19_t *g, const uint8_t *in, uint8_t *out, int to_soa) {
  const size_t es = g->esize, nc = g->ncells;
  for (size_t c = 0; c < nc; ++c)
    for (size_t i = 0; i < GPU_Q; ++i) {
      size_t aos = (c * GPU_Q + i) * es, soa = (i * nc + c) * es;
      if (to_soa) memcpy(out + soa, in + aos, es);
      else memcpy(out + aos, in + soa, es);
    }
}

tsr_status gpu_d3q19_upload(gpu_d3q19_t *g, gpu_d3q19_field_t *f, const void *aos,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const size_t bytes = gpu_d3q19_grid_bytes(g);
  uint8_t *soa = malloc(bytes);
  TSR_CHECK(soa, TSR_ERR_NOMEM, "out of memory staging a GPU field");
  gpu_transpose(g, aos, soa, 1);
  for (int k = 0; k < 2; ++k)
    OPENCL_CHECK(clEnqueueWriteBuffer((cl_command_queue)opencl_context_queue(g->ctx),
                                (cl_mem)f->grid[k], CL_TRUE, 0, bytes, soa, 0, NULL, NULL));
cleanup:
  free(soa);
  return st;
}

tsr_status gpu_d3q19_download(gpu_d3q19_t *g, const gpu_d3q19_field_t *f, void *aos,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const size_t bytes = gpu_d3q19_grid_bytes(g);
  uint8_t *soa = malloc(bytes);
  TSR_CHECK(soa, TSR_ERR_NOMEM, "out of memory staging a GPU field");
  OPENCL_CHECK(clEnqueueReadBuffer((cl_command_queue)opencl_context_queue(g->ctx),
                             (cl_mem)f->grid[f->cur], CL_TRUE, 0, bytes, soa, 0, NULL, NULL));
  gpu_transpose(g, soa, aos, 0);
cleanup:
  free(soa);
  return st;
}

tsr_status gpu_d3q19_step(gpu_d3q19_t *g, gpu_d3q19_field_t *f, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_mem src = (cl_mem)f->grid[f->cur], dst = (cl_mem)f->grid[1 - f->cur];
  OPENCL_CHECK(clSetKernelArg(g->stream_collide, 0, sizeof src, &src));
  OPENCL_CHECK(clSetKernelArg(g->stream_collide, 1, sizeof dst, &dst));
  OPENCL_CHECK(clSetKernelArg(g->stream_collide, 2, sizeof g->consts, &g->consts));
  const size_t global[3] = {(size_t)g->spec.n[0], (size_t)g->spec.n[1], (size_t)g->spec.n[2]};
  OPENCL_CHECK(clEnqueueNDRangeKernel((cl_command_queue)opencl_context_queue(g->ctx),
                                g->stream_collide, 3, NULL, global, NULL, 0, NULL, NULL));
  f->cur = 1 - f->cur;
cleanup:
  return st;
}

tsr_status gpu_d3q19_finish(gpu_d3q19_t *g, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  OPENCL_CHECK(clFinish((cl_command_queue)opencl_context_queue(g->ctx)));
cleanup:
  return st;
}
