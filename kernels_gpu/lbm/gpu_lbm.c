#define CL_TARGET_OPENCL_VERSION 120
#include "gpu_lbm.h"

#include "lattice_defs.h"
#include "lbm_collide.h"
#include "tsr_size.h"

#include <CL/cl.h>
#include <ctype.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the program source, generated at build time from lattice_defs.h, store16.h,
   lbm_collide.h and lbm.cl */
extern const char gpu_lbm_source[];
extern const size_t gpu_lbm_source_size;

struct gpu_lbm {
  opencl_context_t *ctx;
  gpu_lbm_spec_t spec;
  size_t esize, ncells, q; /* esize: bytes of the arithmetic's values (constants, link
                              coefficients, scalars) */
  size_t sbytes;           /* bytes of a stored population (2 with store16) */
  size_t moments_bytes; /* checked in gpu_lbm_create */
  int moments_double;
  cl_program program;
  cl_kernel stream_collide, boundary, outlet, bodies, moments, check, pulled_density;
  cl_kernel in_place[2]; /* the stream-collide in place: natural -> swapped, and back */
  cl_mem consts;
  gpu_buffer_t zero; /* the tables of one block at element 0 (bases, aux_bases) */
};

static tsr_status gpu_kernel(gpu_lbm_t *g, const char *name, cl_kernel *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_int rc = CL_SUCCESS;
  *out = clCreateKernel(g->program, name, &rc);
  TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "clCreateKernel(%s) failed: %s", name,
            opencl_error_name(rc));
cleanup:
  return st;
}


/* The source files from folder dir, concatenated. */
static tsr_status gpu_read_sources(const char *dir, char **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *names[4] = {"lattice_defs.h", "store16.h", "lbm_collide.h", "lbm.cl"};
  char *text = NULL;
  size_t len = 0;
  FILE *fp = NULL;
  for (int i = 0; i < 4; ++i) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    fp = fopen(path, "rb");
    TSR_CHECK(fp, TSR_ERR_IO, "cannot open OpenCL source %s (the kernel source folder must "
              "hold lattice_defs.h, store16.h, lbm_collide.h and lbm.cl)", path);
    TSR_CHECK(fseek(fp, 0, SEEK_END) == 0, TSR_ERR_IO, "cannot read %s", path);
    long sz = ftell(fp);
    TSR_CHECK(sz >= 0 && fseek(fp, 0, SEEK_SET) == 0, TSR_ERR_IO, "cannot read %s", path);
    char line[4200]; /* each file's lines counted from 1 in the build log */
    int nl = snprintf(line, sizeof line, "#line 1 \"%s\"\n", names[i]);
    char *grown = realloc(text, len + (size_t)nl + (size_t)sz + 2);
    TSR_CHECK(grown, TSR_ERR_NOMEM, "out of memory reading %s", path);
    text = grown;
    memcpy(text + len, line, (size_t)nl);
    len += (size_t)nl;
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

/* Builds g's program for spec (from source, or the built-in one where NULL) with the
 * lattice, the block and the variants as defines; gz: the ghost layers along z. */
static tsr_status gpu_lbm_build(gpu_lbm_t *g, const gpu_lbm_spec_t *spec, int gz,
                                const char *source, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  void *program = NULL;
  char options[384], upper[16]; /* the lattice's name as lattice_defs.h spells it */
  snprintf(upper, sizeof upper, "%s", spec->lattice->name);
  for (char *c = upper; *c; ++c) *c = (char)toupper((unsigned char)*c);
  snprintf(options, sizeof options,
           "-DLATTICE_NAME=%s -DREAL_DOUBLE=%d -DSTORE16=%d -DNX=%d -DNY=%d -DNZ=%d -DGZ=%d "
           "-DCOLLISION=%d -DLES=%d -DFORCE=%d -DADE=%d -DCOUPLED=%d -DMOMENTS_DOUBLE=%d "
           "-DFORCE_SHIFT=%d%s",
           upper, spec->dp ? 1 : 0, spec->store16, spec->n[0], spec->n[1], spec->n[2], gz, spec->collision,
           spec->les ? 1 : 0, spec->force ? 1 : 0, spec->ade ? 1 : 0, spec->coupled ? 1 : 0,
           g->moments_double, (int)LBM_FORCE_SHIFT,
           /* the Smagorinsky rate's and the cumulant's divisions and square roots as the
              CPU's, in SP too */
           spec->les || (!spec->ade && spec->collision == 3)
               ? " -cl-fp32-correctly-rounded-divide-sqrt" : "");
  TSR_TRY(opencl_build_program(g->ctx, source ? source : gpu_lbm_source, options,
                               spec->source_dir ? "lbm.cl (from the kernel source folder)"
                                                : "lbm.cl",
                               &program, err));
  g->program = program;
cleanup:
  return st;
}

/* The kernels of g's program. */
static tsr_status gpu_lbm_kernels(gpu_lbm_t *g, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(gpu_kernel(g, "lbm_stream_collide", &g->stream_collide, err));
  TSR_TRY(gpu_kernel(g, "lbm_boundary", &g->boundary, err));
  TSR_TRY(gpu_kernel(g, "lbm_outlet", &g->outlet, err));
  TSR_TRY(gpu_kernel(g, "lbm_bodies", &g->bodies, err));
  TSR_TRY(gpu_kernel(g, "lbm_moments", &g->moments, err));
  TSR_TRY(gpu_kernel(g, "lbm_check", &g->check, err));
  TSR_TRY(gpu_kernel(g, "lbm_pulled_density", &g->pulled_density, err));
  TSR_TRY(gpu_kernel(g, "lbm_stream_collide_even", &g->in_place[0], err));
  TSR_TRY(gpu_kernel(g, "lbm_stream_collide_odd", &g->in_place[1], err));
cleanup:
  return st;
}

/* Checks that the kernels take the work-group spec asks for (a work-group that they may
 * not take is one message). */
static tsr_status gpu_lbm_check_group(const gpu_lbm_t *g, const gpu_lbm_spec_t *spec,
                                      tsr_error_t *err) {
  tsr_status st = TSR_OK;
  opencl_context_t *ctx = g->ctx;
  const opencl_device_desc_t *desc = opencl_context_desc(ctx);
  size_t most = 0;
  const size_t want = (size_t)spec->group[0] * (size_t)spec->group[1] * (size_t)spec->group[2];
  cl_kernel ks[] = {g->stream_collide, g->in_place[0], g->in_place[1], g->pulled_density};
  for (size_t k = 0; k < sizeof ks / sizeof ks[0]; ++k) {
    OPENCL_CHECK(clGetKernelWorkGroupInfo(ks[k], (cl_device_id)opencl_context_device(ctx),
                                          CL_KERNEL_WORK_GROUP_SIZE, sizeof most, &most,
                                          NULL));
    TSR_CHECK(want <= most, TSR_ERR_INVALID,
              "lbm.work_group = [%d, %d, %d]: %zu work items, but the LBM kernels on "
              "%s take at most %zu per group", spec->group[0], spec->group[1],
              spec->group[2], want, desc->name, most);
  }
cleanup:
  return st;
}

tsr_status gpu_lbm_create(opencl_context_t *ctx, const gpu_lbm_spec_t *spec,
                            const void *consts, gpu_lbm_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_lbm_t *g = NULL;
  char *source = NULL;
  *out = NULL;
  const opencl_device_desc_t *desc = opencl_context_desc(ctx);
  TSR_CHECK(!spec->dp || desc->double_precision, TSR_ERR_INVALID,
            "double precision (fs dp) asked for, but OpenCL device %s does not support doubles",
            desc->name);
  TSR_CHECK(spec->lattice && spec->n[0] > 0 && spec->n[1] > 0 && spec->n[2] > 0, TSR_ERR_INTERNAL,
            "gpu_lbm_create: empty block");
  g = calloc(1, sizeof *g);
  TSR_CHECK(g, TSR_ERR_NOMEM, "out of memory for a GPU program");
  g->ctx = ctx;
  g->spec = *spec;
  g->spec.source_dir = NULL;
  TSR_CHECK(!spec->store16 || (!spec->dp && (spec->store16 == LBM_STORAGE_F16S ||
                                              spec->store16 == LBM_STORAGE_F16C)),
            TSR_ERR_INTERNAL, "gpu_lbm_create: 16-bit storage %d with dp %d", spec->store16,
            spec->dp);
  g->esize = spec->dp ? sizeof(double) : sizeof(float);
  g->sbytes = spec->store16 ? 2 : g->esize;
  g->q = (size_t)spec->lattice->q;
  g->moments_double = desc->double_precision ? 1 : 0;
  size_t cells = 0, grid_bytes = 0;
  /* the ghost layers the field kit stores for the lattice's populations (lbm.cl: one
     cell, none along z for a 2-D lattice) */
  int width[3], ghost, gz;
  lattice_ghost_width(spec->lattice, width);
  grid_ghost_of(width, &ghost, &gz);
  TSR_CHECK(tsr_box_cells_gz(spec->n, ghost, gz, &g->ncells) &&
                tsr_box_cells(spec->n, 0, &cells) &&
                tsr_mul_size(g->ncells, g->q * g->sbytes, &grid_bytes) &&
                tsr_mul_size(cells, 4 * (g->moments_double ? sizeof(double) : sizeof(float)),
                             &g->moments_bytes),
            TSR_ERR_INVALID, "a GPU block of %d x %d x %d cells: its bytes do not fit in a size_t",
            spec->n[0], spec->n[1], spec->n[2]);
  if (spec->source_dir) TSR_TRY(gpu_read_sources(spec->source_dir, &source, err));
  TSR_TRY(gpu_lbm_build(g, spec, gz, source, err));
  TSR_TRY(gpu_lbm_kernels(g, err));
  if (spec->group[0] > 0) TSR_TRY(gpu_lbm_check_group(g, spec, err));
  cl_int rc = CL_SUCCESS;
  g->consts = clCreateBuffer(opencl_context_cl(ctx), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             (size_t)LBM_CONSTS_COUNT(g->q) * g->esize, (void *)consts, &rc);
  TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "clCreateBuffer (collision constants) failed: %s",
            opencl_error_name(rc));
  const cl_long zero[2] = {0, 0};
  TSR_TRY(gpu_buffer_create(ctx, sizeof zero, "block tables", &g->zero, err));
  TSR_TRY(gpu_buffer_write(ctx, &g->zero, 0, sizeof zero, zero, NULL, err));
  *out = g;
  g = NULL;
cleanup:
  gpu_lbm_free(&g);
  free(source);
  return st;
}

void gpu_lbm_free(gpu_lbm_t **gp) {
  if (!gp || !*gp) return;
  gpu_lbm_t *g = *gp;
  cl_kernel kernels[] = {g->stream_collide, g->boundary, g->outlet, g->bodies, g->moments, g->check,
                         g->pulled_density, g->in_place[0], g->in_place[1]};
  for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; ++k)
    if (kernels[k]) clReleaseKernel(kernels[k]);
  if (g->consts) clReleaseMemObject(g->consts);
  gpu_buffer_free(&g->zero);
  opencl_program_release(g->program);
  free(g);
  *gp = NULL;
}

/* ---- the program cache ---- */

struct gpu_lbm_cache {
  opencl_context_t *cl;
  char *source_dir; /* NULL: built in */
  int group[3];     /* every program's work-group (zeros: the rule) */
  gpu_lbm_t **progs;
  gpu_lbm_spec_t *specs;
  int nprogs;
};

tsr_status gpu_lbm_cache_create(opencl_context_t *cl, const char *source_dir,
                                const int *group, gpu_lbm_cache_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_lbm_cache_t *c = calloc(1, sizeof *c);
  *out = NULL;
  TSR_CHECK(c, TSR_ERR_NOMEM, "out of memory for the OpenCL programs");
  c->cl = cl;
  for (int a = 0; group && a < 3; ++a) c->group[a] = group[a];
  if (source_dir && source_dir[0]) {
    c->source_dir = malloc(strlen(source_dir) + 1);
    TSR_CHECK(c->source_dir, TSR_ERR_NOMEM, "out of memory for the OpenCL programs");
    strcpy(c->source_dir, source_dir);
  }
  *out = c;
  c = NULL;
cleanup:
  gpu_lbm_cache_free(&c);
  return st;
}

void gpu_lbm_cache_free(gpu_lbm_cache_t **cache) {
  if (!cache || !*cache) return;
  gpu_lbm_cache_t *c = *cache;
  for (int k = 0; k < c->nprogs; ++k) gpu_lbm_free(&c->progs[k]);
  free(c->progs);
  free(c->specs);
  free(c->source_dir);
  free(c);
  *cache = NULL;
}

opencl_context_t *gpu_lbm_cache_context(const gpu_lbm_cache_t *cache) { return cache->cl; }

static int gpu_lbm_same(const gpu_lbm_spec_t *a, const gpu_lbm_spec_t *b) {
  return a->lattice == b->lattice && memcmp(a->n, b->n, sizeof a->n) == 0 && a->dp == b->dp &&
         a->store16 == b->store16 &&
         a->collision == b->collision && a->les == b->les && a->force == b->force &&
         a->ade == b->ade &&
         a->coupled == b->coupled;
}

tsr_status gpu_lbm_cache_program(gpu_lbm_cache_t *cache, const gpu_lbm_spec_t *want,
                                 const void *consts, gpu_lbm_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (int k = 0; k < cache->nprogs; ++k)
    if (gpu_lbm_same(&cache->specs[k], want)) {
      *out = cache->progs[k];
      return st;
    }
  gpu_lbm_spec_t spec = *want;
  spec.source_dir = cache->source_dir;
  memcpy(spec.group, cache->group, sizeof spec.group);
  gpu_lbm_t **gp = realloc(cache->progs, (size_t)(cache->nprogs + 1) * sizeof *gp);
  TSR_CHECK(gp, TSR_ERR_NOMEM, "out of memory for GPU programs");
  cache->progs = gp;
  gpu_lbm_spec_t *sp = realloc(cache->specs, (size_t)(cache->nprogs + 1) * sizeof *sp);
  TSR_CHECK(sp, TSR_ERR_NOMEM, "out of memory for GPU programs");
  cache->specs = sp;
  TSR_TRY(gpu_lbm_create(cache->cl, &spec, consts, &cache->progs[cache->nprogs], err));
  cache->specs[cache->nprogs] = spec;
  *out = cache->progs[cache->nprogs++];
cleanup:
  return st;
}

/* A launch over the interior cells: work-groups of one x row segment (a multiple of 32
 * work items up to 128, so that a GPU's warps run whole and consecutive work items touch
 * consecutive cells), the global size rounded up to whole groups (the kernels skip
 * cells past the block). */
static tsr_status gpu_launch_cells(gpu_lbm_t *g, cl_kernel k, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t nx = (size_t)g->spec.n[0], lx = (nx + 31) / 32 * 32;
  if (lx > 128) lx = 128;
  const size_t local[3] = {lx, 1, 1};
  const size_t global[3] = {(nx + lx - 1) / lx * lx, (size_t)g->spec.n[1], (size_t)g->spec.n[2]};
  TSR_TRY(opencl_launch(g->ctx, k, 3, global, local, "of lbm.cl", err));
cleanup:
  return st;
}

/* The array holding f's present values. */
static int gpu_present(const gpu_lbm_field_t *f) { return f->in_place ? 0 : f->cur; }

/* Whether f is streamed in place and swapped (the kernels' argument swapped). */
static cl_int gpu_swapped(const gpu_lbm_field_t *f) { return f->in_place && f->cur ? 1 : 0; }

/* The stream-collide kernel for f: two grids, or in place from f's parity. */
static cl_kernel gpu_stream_kernel(const gpu_lbm_t *g, const gpu_lbm_field_t *f) {
  return f->in_place ? g->in_place[f->cur & 1] : g->stream_collide;
}

/* Arguments arg and arg + 1 of a kernel over the blocks' cells: f's boxes and part
 * (gpu_lbm_field_t; without a part the boxes are not read: a NULL buffer, allowed for
 * __global). */
static tsr_status gpu_part_args(cl_kernel k, cl_uint arg, const gpu_lbm_field_t *f,
                                tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const cl_int part = f->part && f->boxes ? f->part : 0;
  OPENCL_CHECK(clSetKernelArg(k, arg, sizeof(cl_mem), part ? &f->boxes->mem : NULL));
  OPENCL_CHECK(clSetKernelArg(k, arg + 1, sizeof part, &part));
cleanup:
  return st;
}

/* Arguments 0..2 of the stream-collide: the present copy, the other (in place: the array
 * twice), the constants; 5 and 6: the boxes and the part (gpu_part_args). */
static tsr_status gpu_stream_args(gpu_lbm_t *g, cl_kernel k, const gpu_lbm_field_t *f,
                                  tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_mem src = (cl_mem)f->grid[f->in_place ? 0 : f->cur],
         dst = (cl_mem)f->grid[f->in_place ? 0 : 1 - f->cur];
  OPENCL_CHECK(clSetKernelArg(k, 0, sizeof src, &src));
  OPENCL_CHECK(clSetKernelArg(k, 1, sizeof dst, &dst));
  OPENCL_CHECK(clSetKernelArg(k, 2, sizeof g->consts, &g->consts));
  TSR_TRY(gpu_part_args(k, 5, f, err));
cleanup:
  return st;
}

/* The work-group of a launch over the cells of blocks of n: the one given (group, where
 * non-zero), else an x row segment (a multiple of 32 work items up to 128, so that a
 * GPU's warps run whole and consecutive work items touch consecutive cells) and, where
 * that is shorter than 128, as many rows as make it 128 or less and divide the block's
 * rows (2-D groups: a 32-cell row alone leaves a GPU's multiprocessor a quarter full). */
static void gpu_group(const int n[3], const int group[3], size_t local[3]) {
  if (group && group[0] > 0) {
    for (int a = 0; a < 3; ++a) local[a] = (size_t)group[a];
    return;
  }
  size_t lx = ((size_t)n[0] + 31) / 32 * 32;
  if (lx > 128) lx = 128;
  size_t ly = 128 / lx;
  while (ly > 1 && (size_t)n[1] % ly != 0) --ly;
  local[0] = lx;
  local[1] = ly;
  local[2] = 1;
}

/* Launches kernel k over every interior cell of every block of f: z of block b0 + j at
 * (., ., j NZ + z), the blocks in launches of at most 65535 z values (a GPU's limit on
 * the groups along a dimension); the block table is argument arg, b0 the next. */
static tsr_status gpu_launch_blocks(gpu_lbm_t *g, cl_kernel k, const gpu_lbm_field_t *f,
                                    cl_uint arg, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const gpu_buffer_t *bases = f->bases ? f->bases : &g->zero;
  const int nb = f->bases ? f->nblocks : 1, nz = g->spec.n[2];
  OPENCL_CHECK(clSetKernelArg(k, arg, sizeof(cl_mem), &bases->mem));
  const size_t nx = (size_t)g->spec.n[0];
  size_t local[3];
  gpu_group(g->spec.n, g->spec.group, local);
  const size_t lx = local[0], ly = local[1];
  const int per = nz >= 65535 ? 1 : 65535 / nz;
  for (cl_int b0 = 0; b0 < nb; b0 += per) {
    const int m = nb - b0 < per ? nb - b0 : per;
    const size_t ny = (size_t)g->spec.n[1];
    const size_t global[3] = {(nx + lx - 1) / lx * lx, (ny + ly - 1) / ly * ly,
                              (size_t)nz * (size_t)m};
    OPENCL_CHECK(clSetKernelArg(k, arg + 1, sizeof b0, &b0));
    TSR_TRY(opencl_launch(g->ctx, k, 3, global, local, "of lbm.cl", err));
  }
cleanup:
  return st;
}

tsr_status gpu_lbm_step(gpu_lbm_t *g, gpu_lbm_field_t *f, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(!g->spec.coupled, TSR_ERR_INTERNAL, "gpu_lbm_step on a coupled program");
  cl_kernel k = gpu_stream_kernel(g, f);
  TSR_TRY(gpu_stream_args(g, k, f, err));
  TSR_TRY(gpu_launch_blocks(g, k, f, 3, err));
  f->cur = 1 - f->cur;
cleanup:
  return st;
}

/* A scalar argument of kernel k: a double where dbl, else a float. */
static tsr_status gpu_set_scalar(cl_kernel k, cl_uint arg, double v, int dbl, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  float f = (float)v;
  if (dbl) OPENCL_CHECK(clSetKernelArg(k, arg, sizeof v, &v));
  else OPENCL_CHECK(clSetKernelArg(k, arg, sizeof f, &f));
cleanup:
  return st;
}

/* A scalar argument in the storage precision. */
static tsr_status gpu_set_real(gpu_lbm_t *g, cl_kernel k, cl_uint arg, double v,
                               tsr_error_t *err) {
  return gpu_set_scalar(k, arg, v, g->esize == sizeof(double), err);
}

tsr_status gpu_lbm_step_coupled(gpu_lbm_t *g, gpu_lbm_field_t *f, const gpu_lbm_aux_t *a,
                                tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_kernel k = gpu_stream_kernel(g, f);
  TSR_CHECK(g->spec.coupled && (!g->spec.ade || (a->in && a->in->mem)), TSR_ERR_INTERNAL,
            "gpu_lbm_step_coupled: %s", g->spec.coupled ? "no advection velocity"
                                                         : "the program is not coupled");
  const cl_long geo[4] = {(cl_long)a->dims.origin, (cl_long)a->dims.sy, (cl_long)a->dims.sz,
                          (cl_long)a->dims.sc};
  const cl_int start = a->start ? 1 : 0;
  /* fields left out get a NULL buffer (allowed for __global arguments) */
  /* arguments 0..6: as the plain stream-collide's (gpu_stream_args, gpu_launch_blocks) */
  OPENCL_CHECK(clSetKernelArg(k, 7, sizeof(cl_mem), a->in ? &a->in->mem : NULL));
  OPENCL_CHECK(clSetKernelArg(k, 8, sizeof(cl_mem), a->out ? &a->out->mem : NULL));
  const gpu_buffer_t *ib = f->bases && f->in_bases ? f->in_bases : &g->zero,
                     *ob = f->bases && f->out_bases ? f->out_bases : &g->zero;
  OPENCL_CHECK(clSetKernelArg(k, 9, sizeof(cl_mem), &ib->mem));
  OPENCL_CHECK(clSetKernelArg(k, 10, sizeof(cl_mem), &ob->mem));
  for (cl_uint i = 0; i < 4; ++i) OPENCL_CHECK(clSetKernelArg(k, 11 + i, sizeof geo[i], &geo[i]));
  for (cl_uint i = 0; i < 3; ++i) TSR_TRY(gpu_set_real(g, k, 15 + i, a->beta[i], err));
  TSR_TRY(gpu_set_real(g, k, 18, a->c0, err));
  OPENCL_CHECK(clSetKernelArg(k, 19, sizeof start, &start));
  const cl_int acc = a->accumulate ? 1 : 0;
  OPENCL_CHECK(clSetKernelArg(k, 20, sizeof acc, &acc));
  TSR_TRY(gpu_stream_args(g, k, f, err));
  TSR_TRY(gpu_launch_blocks(g, k, f, 3, err));
  f->cur = 1 - f->cur;
cleanup:
  return st;
}

/* The links of part (0: all, 1: the first l->split, 2: the others) as a range [lo, hi). */
static void gpu_links_range(const gpu_lbm_links_t *l, int part, size_t *lo, size_t *hi) {
  *lo = part == 2 ? l->split : 0;
  *hi = part == 1 ? l->split : l->n;
}

/* A 1-D launch of work items lo .. hi - 1 (global ids; none where hi <= lo). */
static tsr_status gpu_launch_1d(gpu_lbm_t *g, cl_kernel k, size_t lo, size_t hi,
                                tsr_error_t *err) {
  tsr_status st = TSR_OK;
  if (hi <= lo) return st;
  const size_t n = hi - lo;
  TSR_TRY(opencl_launch_at(g->ctx, k, 1, lo ? &lo : NULL, &n, NULL, "of lbm.cl", err));
cleanup:
  return st;
}

tsr_status gpu_lbm_links_create_many(gpu_lbm_t *g, const lbm_link_t *const *links,
                                     const size_t *nlinks, const size_t *base, size_t nblocks,
                                     int negate, int in_place, gpu_lbm_links_t *out,
                                     tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_ulong *idx = NULL;
  uint8_t *ex = NULL, *group = NULL;
  bool grouped = false;
  memset(out, 0, sizeof *out);
  out->negate = negate ? 1 : 0;
  size_t n = 0;
  for (size_t b = 0; b < nblocks; ++b)
    TSR_CHECK(tsr_add_size(n, nlinks[b], &n), TSR_ERR_INVALID, "too many boundary links");
  if (n == 0) return st;
  size_t idx_bytes = 0, ex_bytes = 0;
  TSR_CHECK(tsr_mul_size(n, 2 * sizeof *idx, &idx_bytes) && tsr_mul_size(n, g->esize, &ex_bytes),
            TSR_ERR_INVALID, "%zu boundary links: their bytes do not fit in a size_t", n);
  idx = malloc(idx_bytes);
  ex = malloc(ex_bytes);
  group = malloc(n);
  TSR_CHECK(idx && ex && group, TSR_ERR_NOMEM, "out of memory for %zu boundary links", n);
  size_t k = 0;
  for (size_t b = 0; b < nblocks; ++b)
    for (size_t j = 0; j < nlinks[b]; ++j, ++k) {
      /* AoS CPU layout cell * Q + i -> device layout base + i * ncells + cell */
      const lbm_link_t *l = &links[b][j];
      TSR_CHECK(l->group >= 0 && l->group < LBM_LINK_GROUPS, TSR_ERR_INTERNAL,
                "a boundary link of group %d", l->group);
      group[k] = (uint8_t)l->group;
      grouped = grouped || l->group != 0;
      idx[2 * k] = (cl_ulong)(base[b] + (l->to % g->q) * g->ncells + l->to / g->q);
      idx[2 * k + 1] = (cl_ulong)(base[b] + (l->from % g->q) * g->ncells + l->from / g->q);
      if (g->esize == sizeof(float)) {
        float v = (float)l->extra;
        memcpy(ex + k * sizeof v, &v, sizeof v);
      } else {
        memcpy(ex + k * sizeof l->extra, &l->extra, sizeof l->extra);
      }
    }
  TSR_TRY(gpu_buffer_create(g->ctx, idx_bytes, "boundary links", &out->idx, err));
  TSR_TRY(gpu_buffer_create(g->ctx, ex_bytes, "boundary links", &out->extra, err));
  TSR_TRY(gpu_buffer_write(g->ctx, &out->idx, 0, out->idx.bytes, idx, NULL, err));
  TSR_TRY(gpu_buffer_write(g->ctx, &out->extra, 0, out->extra.bytes, ex, NULL, err));
  if (grouped) {
    TSR_TRY(gpu_buffer_create(g->ctx, n, "boundary links", &out->group, err));
    TSR_TRY(gpu_buffer_write(g->ctx, &out->group, 0, n, group, NULL, err));
  }
  if (in_place) { /* slot (i, cell) of the natural array lies at (inv i, cell + c_i) */
    const lattice_t *l = g->spec.lattice;
    const long long sx = g->spec.n[0] + 2, sy = g->spec.n[1] + 2;
    k = 0;
    for (size_t b = 0; b < nblocks; ++b)
      for (size_t j = 0; j < 2 * nlinks[b]; ++j, ++k) {
        const size_t local = (size_t)idx[k] - base[b], i = local / g->ncells,
                     cell = local % g->ncells;
        const long long off = l->c[0][i] + sx * (l->c[1][i] + sy * (long long)l->c[2][i]);
        idx[k] = (cl_ulong)(base[b] + (size_t)l->inv[i] * g->ncells +
                            (size_t)((long long)cell + off));
      }
    TSR_TRY(gpu_buffer_create(g->ctx, idx_bytes, "boundary links", &out->idx_swapped, err));
    TSR_TRY(gpu_buffer_write(g->ctx, &out->idx_swapped, 0, idx_bytes, idx, NULL, err));
  }
  out->n = out->split = n;
cleanup:
  free(idx);
  free(ex);
  free(group);
  if (st != TSR_OK) gpu_lbm_links_free(out);
  return st;
}

tsr_status gpu_lbm_links_create(gpu_lbm_t *g, const lbm_link_t *links, size_t n, int negate,
                                gpu_lbm_links_t *out, tsr_error_t *err) {
  const size_t zero = 0;
  return gpu_lbm_links_create_many(g, &links, &n, &zero, 1, negate, 0, out, err);
}

void gpu_lbm_links_free(gpu_lbm_links_t *l) {
  gpu_buffer_free(&l->idx);
  gpu_buffer_free(&l->idx_swapped);
  gpu_buffer_free(&l->extra);
  gpu_buffer_free(&l->group);
  l->n = l->split = 0;
}

tsr_status gpu_lbm_boundary(gpu_lbm_t *g, gpu_lbm_field_t *f, const gpu_lbm_links_t *l,
                            const double *scale, int part, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t lo, hi;
  gpu_links_range(l, part, &lo, &hi);
  if (hi <= lo) return st;
  const int swapped = f->in_place && f->cur;
  TSR_CHECK(!swapped || l->idx_swapped.mem, TSR_ERR_INTERNAL,
            "boundary links made for two grids on a field streamed in place");
  cl_mem grid = (cl_mem)f->grid[gpu_present(f)];
  cl_ulong n = (cl_ulong)hi;
  OPENCL_CHECK(clSetKernelArg(g->boundary, 0, sizeof grid, &grid));
  OPENCL_CHECK(clSetKernelArg(g->boundary, 1, sizeof(cl_mem),
                              swapped ? &l->idx_swapped.mem : &l->idx.mem));
  OPENCL_CHECK(clSetKernelArg(g->boundary, 2, sizeof(cl_mem), &l->extra.mem));
  OPENCL_CHECK(clSetKernelArg(g->boundary, 3, sizeof n, &n));
  const cl_int negate = l->negate;
  OPENCL_CHECK(clSetKernelArg(g->boundary, 4, sizeof negate, &negate));
  /* the factors, in the storage precision; no groups (NULL): extra as it is */
  const cl_mem group = scale ? l->group.mem : NULL;
  OPENCL_CHECK(clSetKernelArg(g->boundary, 5, sizeof group, &group));
  cl_double8 sd = {{1, 1, 1, 1, 1, 1, 1, 1}};
  cl_float8 sf = {{1, 1, 1, 1, 1, 1, 1, 1}};
  for (int k = 0; scale && k < LBM_LINK_GROUPS && k < 8; ++k) {
    sd.s[k] = scale[k];
    sf.s[k] = (float)scale[k];
  }
  if (g->esize == sizeof(float)) OPENCL_CHECK(clSetKernelArg(g->boundary, 6, sizeof sf, &sf));
  else OPENCL_CHECK(clSetKernelArg(g->boundary, 6, sizeof sd, &sd));
  TSR_TRY(gpu_launch_1d(g, g->boundary, lo, hi, err));
cleanup:
  return st;
}

tsr_status gpu_lbm_outlet_create_many(gpu_lbm_t *g, const lbm_open_link_t *const *links,
                                      const size_t *nlinks, const size_t *base, size_t nblocks,
                                      int in_place, const lbm_params_t *p,
                                      gpu_lbm_outlet_t *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_link_t **plain = NULL;
  cl_long *cells = NULL;
  cl_int *dirs = NULL;
  uint8_t *w = NULL;
  memset(out, 0, sizeof *out);
  for (int a = 0; a < 3; ++a) out->hf[a] = p->use_force ? 0.5 * p->force[a] : 0.0;
  out->inv_rho0 = 1.0 / p->rho0;
  size_t n = 0;
  for (size_t b = 0; b < nblocks; ++b)
    TSR_CHECK(tsr_add_size(n, nlinks[b], &n), TSR_ERR_INVALID, "too many outlet links");
  if (n == 0) return st;
  /* to, from and extra as plain links: the same indices, in place or not */
  plain = calloc(nblocks, sizeof *plain);
  TSR_CHECK(plain, TSR_ERR_NOMEM, "out of memory for %zu outlet links", n);
  for (size_t b = 0; b < nblocks; ++b) {
    plain[b] = malloc((nlinks[b] ? nlinks[b] : 1) * sizeof **plain);
    TSR_CHECK(plain[b], TSR_ERR_NOMEM, "out of memory for %zu outlet links", n);
    for (size_t j = 0; j < nlinks[b]; ++j)
      plain[b][j] = (lbm_link_t){.to = links[b][j].to, .from = links[b][j].from,
                                  .extra = links[b][j].extra};
  }
  TSR_TRY(gpu_lbm_links_create_many(g, (const lbm_link_t *const *)plain, nlinks, base, nblocks,
                                    0, in_place, &out->links, err));
  cells = malloc(n * 2 * sizeof *cells);
  dirs = malloc(n * sizeof *dirs);
  w = malloc(n * 2 * g->esize);
  TSR_CHECK(cells && dirs && w, TSR_ERR_NOMEM, "out of memory for %zu outlet links", n);
  size_t k = 0;
  for (size_t b = 0; b < nblocks; ++b)
    for (size_t j = 0; j < nlinks[b]; ++j, ++k) {
      const lbm_open_link_t *l = &links[b][j];
      for (int c = 0; c < 2; ++c) /* AoS cell * Q -> device base + cell (component 0) */
        cells[2 * k + (size_t)c] = (cl_long)(base[b] + l->cell[c] / g->q);
      dirs[k] = l->dir;
      const double wv[2] = {l->w2, l->wrho0};
      for (int c = 0; c < 2; ++c) {
        if (g->esize == sizeof(float)) {
          float v = (float)wv[c];
          memcpy(w + (2 * k + (size_t)c) * sizeof v, &v, sizeof v);
        } else {
          memcpy(w + (2 * k + (size_t)c) * sizeof wv[c], &wv[c], sizeof wv[c]);
        }
      }
    }
  TSR_TRY(gpu_buffer_create(g->ctx, n * 2 * sizeof *cells, "outlet links", &out->cells, err));
  TSR_TRY(gpu_buffer_create(g->ctx, n * sizeof *dirs, "outlet links", &out->dirs, err));
  TSR_TRY(gpu_buffer_create(g->ctx, n * 2 * g->esize, "outlet links", &out->w, err));
  TSR_TRY(gpu_buffer_write(g->ctx, &out->cells, 0, out->cells.bytes, cells, NULL, err));
  TSR_TRY(gpu_buffer_write(g->ctx, &out->dirs, 0, out->dirs.bytes, dirs, NULL, err));
  TSR_TRY(gpu_buffer_write(g->ctx, &out->w, 0, out->w.bytes, w, NULL, err));
cleanup:
  for (size_t b = 0; plain && b < nblocks; ++b) free(plain[b]);
  free(plain);
  free(cells);
  free(dirs);
  free(w);
  if (st != TSR_OK) gpu_lbm_outlet_free(out);
  return st;
}

void gpu_lbm_outlet_free(gpu_lbm_outlet_t *o) {
  gpu_lbm_links_free(&o->links);
  gpu_buffer_free(&o->cells);
  gpu_buffer_free(&o->dirs);
  gpu_buffer_free(&o->w);
}

tsr_status gpu_lbm_outlet(gpu_lbm_t *g, gpu_lbm_field_t *f, const gpu_lbm_outlet_t *o,
                          int part, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const gpu_lbm_links_t *l = &o->links;
  size_t lo, hi;
  gpu_links_range(l, part, &lo, &hi);
  if (hi <= lo) return st;
  const cl_int swapped = f->in_place && f->cur ? 1 : 0;
  TSR_CHECK(!swapped || l->idx_swapped.mem, TSR_ERR_INTERNAL,
            "outlet links made for two grids on a field streamed in place");
  cl_mem grid = (cl_mem)f->grid[gpu_present(f)];
  cl_ulong n = (cl_ulong)hi;
  cl_kernel k = g->outlet;
  OPENCL_CHECK(clSetKernelArg(k, 0, sizeof grid, &grid));
  OPENCL_CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), swapped ? &l->idx_swapped.mem : &l->idx.mem));
  OPENCL_CHECK(clSetKernelArg(k, 2, sizeof(cl_mem), &l->extra.mem));
  OPENCL_CHECK(clSetKernelArg(k, 3, sizeof(cl_mem), &o->cells.mem));
  OPENCL_CHECK(clSetKernelArg(k, 4, sizeof(cl_mem), &o->dirs.mem));
  OPENCL_CHECK(clSetKernelArg(k, 5, sizeof(cl_mem), &o->w.mem));
  OPENCL_CHECK(clSetKernelArg(k, 6, sizeof n, &n));
  OPENCL_CHECK(clSetKernelArg(k, 7, sizeof swapped, &swapped));
  for (cl_uint a = 0; a < 3; ++a) TSR_TRY(gpu_set_real(g, k, 8 + a, o->hf[a], err));
  TSR_TRY(gpu_set_real(g, k, 11, o->inv_rho0, err));
  TSR_TRY(gpu_launch_1d(g, k, lo, hi, err));
cleanup:
  return st;
}

static void gpu_lbm_bodies_free(gpu_lbm_bodies_t *o) {
  gpu_lbm_links_free(&o->links);
  gpu_lbm_links_free(&o->links2);
  gpu_buffer_free(&o->coef);
  gpu_buffer_free(&o->meta);
  gpu_buffer_free(&o->out);
}

static tsr_status gpu_lbm_bodies_create_many(gpu_lbm_t *g, const lbm_body_link_t *const *links,
                                             const size_t *nlinks, const size_t *base,
                                             size_t nblocks, int in_place,
                                             gpu_lbm_bodies_t *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_link_t **plain = NULL;
  cl_int *meta = NULL;
  uint8_t *coef = NULL;
  memset(out, 0, sizeof *out);
  size_t n = 0;
  for (size_t b = 0; b < nblocks; ++b)
    TSR_CHECK(tsr_add_size(n, nlinks[b], &n), TSR_ERR_INVALID, "too many obstacle links");
  if (n == 0) return st;
  plain = calloc(2 * nblocks, sizeof *plain);
  TSR_CHECK(plain, TSR_ERR_NOMEM, "out of memory for %zu obstacle links", n);
  for (size_t b = 0; b < nblocks; ++b)
    for (int w = 0; w < 2; ++w) {
      lbm_link_t *p = malloc((nlinks[b] ? nlinks[b] : 1) * sizeof *p);
      TSR_CHECK(p, TSR_ERR_NOMEM, "out of memory for %zu obstacle links", n);
      plain[2 * b + (size_t)w] = p;
      for (size_t j = 0; j < nlinks[b]; ++j)
        p[j] = (lbm_link_t){.to = links[b][j].to,
                            .from = w ? links[b][j].from2 : links[b][j].from};
    }
  for (int w = 0; w < 2; ++w) {
    const lbm_link_t **lists = calloc(nblocks, sizeof *lists);
    TSR_CHECK(lists, TSR_ERR_NOMEM, "out of memory for %zu obstacle links", n);
    for (size_t b = 0; b < nblocks; ++b) lists[b] = plain[2 * b + (size_t)w];
    st = gpu_lbm_links_create_many(g, lists, nlinks, base, nblocks, 0, in_place,
                                   w ? &out->links2 : &out->links, err);
    free(lists);
    TSR_TRY(st);
  }
  meta = malloc(n * 2 * sizeof *meta);
  coef = malloc(n * 2 * g->esize);
  TSR_CHECK(meta && coef, TSR_ERR_NOMEM, "out of memory for %zu obstacle links", n);
  size_t k = 0;
  for (size_t b = 0; b < nblocks; ++b)
    for (size_t j = 0; j < nlinks[b]; ++j, ++k) {
      const lbm_body_link_t *l = &links[b][j];
      meta[2 * k] = l->body;
      meta[2 * k + 1] = l->dir;
      const double cv[2] = {l->a, l->b};
      for (int c = 0; c < 2; ++c) {
        if (g->esize == sizeof(float)) {
          float v = (float)cv[c];
          memcpy(coef + (2 * k + (size_t)c) * sizeof v, &v, sizeof v);
        } else {
          memcpy(coef + (2 * k + (size_t)c) * sizeof cv[c], &cv[c], sizeof cv[c]);
        }
      }
    }
  TSR_TRY(gpu_buffer_create(g->ctx, n * 2 * sizeof *meta, "obstacle links", &out->meta, err));
  TSR_TRY(gpu_buffer_create(g->ctx, n * 2 * g->esize, "obstacle links", &out->coef, err));
  TSR_TRY(gpu_buffer_create(g->ctx, n * 3 * sizeof(cl_long), "obstacle forces", &out->out, err));
  TSR_TRY(gpu_buffer_write(g->ctx, &out->meta, 0, out->meta.bytes, meta, NULL, err));
  TSR_TRY(gpu_buffer_write(g->ctx, &out->coef, 0, out->coef.bytes, coef, NULL, err));
cleanup:
  for (size_t b = 0; plain && b < 2 * nblocks; ++b) free(plain[b]);
  free(plain);
  free(meta);
  free(coef);
  if (st != TSR_OK) gpu_lbm_bodies_free(out);
  return st;
}

static tsr_status gpu_lbm_bodies(gpu_lbm_t *g, gpu_lbm_field_t *f, const gpu_lbm_bodies_t *o,
                                 int part, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const gpu_lbm_links_t *l = &o->links, *l2 = &o->links2;
  size_t lo, hi;
  gpu_links_range(l, part, &lo, &hi);
  if (hi <= lo) return st;
  const int swapped = f->in_place && f->cur;
  TSR_CHECK(!swapped || (l->idx_swapped.mem && l2->idx_swapped.mem), TSR_ERR_INTERNAL,
            "obstacle links made for two grids on a field streamed in place");
  cl_mem grid = (cl_mem)f->grid[gpu_present(f)];
  cl_ulong n = (cl_ulong)hi;
  cl_kernel k = g->bodies;
  OPENCL_CHECK(clSetKernelArg(k, 0, sizeof grid, &grid));
  OPENCL_CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), swapped ? &l->idx_swapped.mem : &l->idx.mem));
  OPENCL_CHECK(clSetKernelArg(k, 2, sizeof(cl_mem), swapped ? &l2->idx_swapped.mem : &l2->idx.mem));
  OPENCL_CHECK(clSetKernelArg(k, 3, sizeof(cl_mem), &o->coef.mem));
  OPENCL_CHECK(clSetKernelArg(k, 4, sizeof(cl_mem), &o->meta.mem));
  OPENCL_CHECK(clSetKernelArg(k, 5, sizeof n, &n));
  OPENCL_CHECK(clSetKernelArg(k, 6, sizeof(cl_mem), &o->out.mem));
  TSR_TRY(gpu_launch_1d(g, k, lo, hi, err));
cleanup:
  return st;
}

tsr_status gpu_lbm_force_read(const gpu_lbm_force_slice_t *s, const lbm_body_link_t *links,
                              int64_t *acc, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_long *v = NULL;
  const size_t n = s->n[0] + s->n[1];
  if (!s->out || n == 0) return st;
  v = malloc(n * 3 * sizeof *v);
  TSR_CHECK(v, TSR_ERR_NOMEM, "out of memory reading %zu obstacle links' forces", n);
  for (int r = 0; r < 2; ++r)
    if (s->n[r])
      TSR_TRY(gpu_buffer_read(s->ctx, s->out, s->first[r] * 3 * sizeof *v,
                              s->n[r] * 3 * sizeof *v, v + (r ? 3 * s->n[0] : 0), NULL, err));
  size_t at[2] = {0, s->n[0]}; /* the links of each range, in the block's order */
  for (size_t j = 0; j < n; ++j) {
    const cl_long *x = v + 3 * at[(links[j].ghost & s->late) != 0]++;
    if (links[j].body >= 0)
      for (int a = 0; a < 3; ++a) acc[3 * links[j].body + a] += (int64_t)x[a];
  }
cleanup:
  free(v);
  return st;
}

size_t gpu_lbm_moments_bytes(const gpu_lbm_t *g) { return g->moments_bytes; }

/* A scalar argument of kernel k in the moments precision. */
static tsr_status gpu_set_mreal(gpu_lbm_t *g, cl_kernel k, cl_uint arg, double v,
                                tsr_error_t *err) {
  return gpu_set_scalar(k, arg, v, g->moments_double, err);
}

/* Arguments first.. of kernel k: rho0, fhalf, the force and shifted (lbm_moments' order). */
static tsr_status gpu_set_moments_args(gpu_lbm_t *g, cl_kernel k, cl_uint first,
                                       const gpu_lbm_moments_opts_t *o, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_int shifted = o->shifted ? 1 : 0;
  TSR_TRY(gpu_set_mreal(g, k, first, o->rho0, err));
  TSR_TRY(gpu_set_mreal(g, k, first + 1, o->use_force ? -0.5 : 0.0, err));
  for (cl_uint a = 0; a < 3; ++a) TSR_TRY(gpu_set_mreal(g, k, first + 2 + a, o->force[a], err));
  OPENCL_CHECK(clSetKernelArg(k, first + 5, sizeof shifted, &shifted));
cleanup:
  return st;
}

tsr_status gpu_lbm_pulled_density(gpu_lbm_t *g, const gpu_lbm_field_t *f, gpu_buffer_t *out,
                                  const grid_dims_t *od, double shift, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const cl_long geo[3] = {(cl_long)od->origin, (cl_long)od->sy, (cl_long)od->sz};
  cl_kernel k = g->pulled_density;
  const gpu_buffer_t *ob = f->bases && f->out_bases ? f->out_bases : &g->zero;
  cl_mem grid = (cl_mem)f->grid[gpu_present(f)];
  OPENCL_CHECK(clSetKernelArg(k, 0, sizeof grid, &grid));
  OPENCL_CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &out->mem));
  OPENCL_CHECK(clSetKernelArg(k, 4, sizeof(cl_mem), &ob->mem));
  for (cl_uint i = 0; i < 3; ++i) OPENCL_CHECK(clSetKernelArg(k, 5 + i, sizeof geo[i], &geo[i]));
  TSR_TRY(gpu_set_real(g, k, 8, shift, err));
  const cl_int swapped = gpu_swapped(f);
  OPENCL_CHECK(clSetKernelArg(k, 9, sizeof swapped, &swapped));
  TSR_TRY(gpu_part_args(k, 10, f, err));
  TSR_TRY(gpu_launch_blocks(g, k, f, 2, err));
cleanup:
  return st;
}

tsr_status gpu_lbm_moments(gpu_lbm_t *g, const gpu_lbm_field_t *f, gpu_buffer_t *scratch,
                             const gpu_lbm_moments_opts_t *o, double *rho, double *u,
                             tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const size_t n = (size_t)g->spec.n[0] * (size_t)g->spec.n[1] * (size_t)g->spec.n[2];
  const size_t bytes = gpu_lbm_moments_bytes(g);
  float *tmp = NULL;
  TSR_CHECK(scratch->bytes >= bytes, TSR_ERR_INTERNAL, "moments buffer of %zu bytes, %zu needed",
            scratch->bytes, bytes);
  cl_mem grid = (cl_mem)f->grid[gpu_present(f)];
  OPENCL_CHECK(clSetKernelArg(g->moments, 0, sizeof grid, &grid));
  OPENCL_CHECK(clSetKernelArg(g->moments, 1, sizeof(cl_mem), &scratch->mem));
  TSR_TRY(gpu_set_moments_args(g, g->moments, 2, o, err));
  const cl_int swapped = gpu_swapped(f);
  OPENCL_CHECK(clSetKernelArg(g->moments, 8, sizeof swapped, &swapped));
  TSR_TRY(gpu_launch_cells(g, g->moments, err));
  if (g->moments_double) {
    TSR_TRY(gpu_buffer_read(g->ctx, scratch, 0, n * sizeof *rho, rho, NULL, err));
    TSR_TRY(gpu_buffer_read(g->ctx, scratch, n * sizeof *rho, 3 * n * sizeof *u, u, NULL, err));
  } else {
    tmp = malloc(bytes); /* 4 n floats */
    TSR_CHECK(tmp, TSR_ERR_NOMEM, "out of memory reading moments");
    TSR_TRY(gpu_buffer_read(g->ctx, scratch, 0, 4 * n * sizeof *tmp, tmp, NULL, err));
    for (size_t k = 0; k < n; ++k) rho[k] = tmp[k];
    for (size_t k = 0; k < 3 * n; ++k) u[k] = tmp[n + k];
  }
cleanup:
  free(tmp);
  return st;
}

tsr_status gpu_lbm_check(gpu_lbm_t *g, const gpu_lbm_field_t *f, const gpu_buffer_t *flags,
                         uint8_t fluid, gpu_buffer_t *first, const gpu_lbm_moments_opts_t *o,
                         const gpu_buffer_t *velocity, const grid_dims_t *vdims, double cs2,
                         int64_t *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const size_t n = (size_t)g->spec.n[0] * (size_t)g->spec.n[1] * (size_t)g->spec.n[2];
  TSR_CHECK(n <= INT_MAX && flags->bytes >= n && first->bytes >= sizeof(cl_int), TSR_ERR_INTERNAL,
            "stability check of %zu cells with %zu flag bytes and %zu result bytes", n,
            flags->bytes, first->bytes);
  cl_int none = INT_MAX, found = INT_MAX;
  cl_uchar fl = fluid;
  cl_mem grid = (cl_mem)f->grid[gpu_present(f)];
  TSR_TRY(gpu_buffer_write(g->ctx, first, 0, sizeof none, &none, NULL, err));
  OPENCL_CHECK(clSetKernelArg(g->check, 0, sizeof grid, &grid));
  OPENCL_CHECK(clSetKernelArg(g->check, 1, sizeof(cl_mem), &flags->mem));
  OPENCL_CHECK(clSetKernelArg(g->check, 2, sizeof(cl_mem), &first->mem));
  TSR_TRY(gpu_set_moments_args(g, g->check, 3, o, err));
  TSR_TRY(gpu_set_mreal(g, g->check, 9, cs2, err));
  OPENCL_CHECK(clSetKernelArg(g->check, 10, sizeof fl, &fl));
  const cl_int swapped = gpu_swapped(f);
  OPENCL_CHECK(clSetKernelArg(g->check, 11, sizeof swapped, &swapped));
  /* no velocity: a NULL buffer (allowed for __global arguments) */
  OPENCL_CHECK(clSetKernelArg(g->check, 12, sizeof(cl_mem), velocity ? &velocity->mem : NULL));
  const cl_long geo[4] = {vdims ? (cl_long)vdims->origin : 0, vdims ? (cl_long)vdims->sy : 0,
                          vdims ? (cl_long)vdims->sz : 0, vdims ? (cl_long)vdims->sc : 0};
  for (cl_uint i = 0; i < 4; ++i) OPENCL_CHECK(clSetKernelArg(g->check, 13 + i, sizeof geo[i], &geo[i]));
  TSR_TRY(gpu_launch_cells(g, g->check, err));
  TSR_TRY(gpu_buffer_read(g->ctx, first, 0, sizeof found, &found, NULL, err));
  *out = found == INT_MAX ? -1 : (int64_t)found;
cleanup:
  return st;
}

/* ---- batches ---- */

/* The blocks grouped by program and field sets (pdf, aux_in, aux_out), with the links
 * of each group's blocks in one list per kind. */
struct gpu_lbm_batch {
  gpu_field_groups_t groups;
  gpu_field_t **pdf; /* per member, for the swap (borrowed) */
  gpu_lbm_links_t *links; /* 2 per group */
  gpu_lbm_outlet_t *outlets; /* 1 per group */
  gpu_lbm_bodies_t *bodies;  /* 1 per group */
  bool parts; /* some member has a late mask (gpu_lbm_batch_boundary's parts) */
};

bool gpu_lbm_batch_parts(const gpu_lbm_batch_t *b) { return b->parts; }

void gpu_lbm_batch_free(gpu_lbm_batch_t **pb) {
  if (!pb || !*pb) return;
  gpu_lbm_batch_t *b = *pb;
  for (size_t k = 0; b->links && k < 2 * b->groups.count; ++k) gpu_lbm_links_free(&b->links[k]);
  for (size_t k = 0; b->outlets && k < b->groups.count; ++k) gpu_lbm_outlet_free(&b->outlets[k]);
  free(b->outlets);
  for (size_t k = 0; b->bodies && k < b->groups.count; ++k) gpu_lbm_bodies_free(&b->bodies[k]);
  free(b->bodies);
  gpu_field_groups_clear(&b->groups);
  free(b->links);
  free(b->pdf);
  free(b);
  *pb = NULL;
}

void gpu_lbm_batch_release(void *b) {
  gpu_lbm_batch_t *x = b;
  gpu_lbm_batch_free(&x);
}

/* The links of one kind (0 plain, 1 negated, 2 pressure outlets, 3 obstacles) of a
 * group's members as lists for the *_create_many functions: each member's links copied,
 * those that touch no slice of its late mask (gpu_lbm_member_t.late) first; list[j] the
 * early ones of member j of the group, list[nb + j] its others, n and base likewise;
 * split: how many early links in all (the first split links of the gathered list). */
typedef struct gpu_split_lists {
  void **copy; /* [nb] */
  const void **list;
  size_t *n, *base; /* [2 nb] */
  size_t nb, split;
} gpu_split_lists_t;

static void gpu_split_lists_clear(gpu_split_lists_t *sl) {
  for (size_t j = 0; sl->copy && j < sl->nb; ++j) free(sl->copy[j]);
  free(sl->copy);
  free(sl->list);
  free(sl->n);
  free(sl->base);
  memset(sl, 0, sizeof *sl);
}

static tsr_status gpu_split_lists_make(const gpu_lbm_member_t *m, const gpu_field_group_t *gr,
                                       int kind, gpu_split_lists_t *sl, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const size_t nb = gr->nblocks;
  memset(sl, 0, sizeof *sl);
  sl->nb = nb;
  sl->copy = calloc(nb ? nb : 1, sizeof *sl->copy);
  sl->list = calloc(2 * nb + 1, sizeof *sl->list);
  sl->n = calloc(2 * nb + 1, sizeof *sl->n);
  sl->base = calloc(2 * nb + 1, sizeof *sl->base);
  TSR_CHECK(sl->copy && sl->list && sl->n && sl->base, TSR_ERR_NOMEM,
            "out of memory grouping GPU blocks' links");
  static const size_t size[4] = {sizeof(lbm_link_t), sizeof(lbm_link_t),
                                 sizeof(lbm_open_link_t), sizeof(lbm_body_link_t)};
  static const size_t at[4] = {offsetof(lbm_link_t, ghost), offsetof(lbm_link_t, ghost),
                               offsetof(lbm_open_link_t, ghost),
                               offsetof(lbm_body_link_t, ghost)};
  for (size_t j = 0; j < nb; ++j) {
    const gpu_lbm_member_t *x = &m[gr->members[j]];
    const void *src = kind < 2 ? (const void *)x->links[kind]
                      : kind == 2 ? (const void *)x->open : (const void *)x->body;
    const size_t n = kind < 2 ? x->nlinks[kind] : kind == 2 ? x->nopen : x->nbody;
    uint8_t *c = malloc(n ? n * size[kind] : 1);
    TSR_CHECK(c, TSR_ERR_NOMEM, "out of memory grouping GPU blocks' links");
    sl->copy[j] = c;
    size_t k = 0, early = 0;
    for (int pass = 0; pass < 2; ++pass)
      for (size_t i = 0; i < n; ++i) {
        const uint8_t *l = (const uint8_t *)src + i * size[kind];
        uint32_t ghost;
        memcpy(&ghost, l + at[kind], sizeof ghost);
        if (((ghost & x->late) != 0) != pass) continue;
        memcpy(c + k++ * size[kind], l, size[kind]);
        early += pass == 0;
      }
    sl->list[j] = c;
    sl->list[nb + j] = c + early * size[kind];
    sl->n[j] = early;
    sl->n[nb + j] = n - early;
    sl->base[j] = sl->base[nb + j] = x->pdf->base;
    sl->split += early;
  }
cleanup:
  return st;
}

tsr_status gpu_lbm_batch_create(const gpu_lbm_member_t *m, size_t n, const lbm_params_t *p,
                                gpu_lbm_batch_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_lbm_batch_t *b = calloc(1, sizeof *b);
  gpu_field_t **fields = calloc(3 * (n ? n : 1), sizeof *fields);
  const void **keys = calloc(n ? n : 1, sizeof *keys);
  gpu_split_lists_t sl = {0};
  *out = NULL;
  TSR_CHECK(b && fields && keys, TSR_ERR_NOMEM, "out of memory grouping GPU blocks");
  b->pdf = calloc(n ? n : 1, sizeof *b->pdf);
  TSR_CHECK(b->pdf, TSR_ERR_NOMEM, "out of memory grouping GPU blocks");
  for (size_t k = 0; k < n; ++k) {
    TSR_CHECK(m[k].prog && m[k].pdf && m[k].pdf->set, TSR_ERR_INTERNAL,
              "a GPU block of a batch without its program or populations");
    fields[3 * k] = b->pdf[k] = m[k].pdf;
    b->parts = b->parts || m[k].late != 0;
    fields[3 * k + 1] = m[k].aux_in;
    fields[3 * k + 2] = m[k].aux_out;
    keys[k] = m[k].prog;
  }
  TSR_TRY(gpu_field_groups_make(fields, keys, n, 3, &b->groups, err));
  b->links = calloc(2 * (b->groups.count ? b->groups.count : 1), sizeof *b->links);
  b->outlets = calloc(b->groups.count ? b->groups.count : 1, sizeof *b->outlets);
  b->bodies = calloc(b->groups.count ? b->groups.count : 1, sizeof *b->bodies);
  TSR_CHECK(b->links && b->outlets && b->bodies, TSR_ERR_NOMEM, "out of memory grouping GPU blocks");
  for (size_t g = 0; g < b->groups.count; ++g) {
    const gpu_field_group_t *gr = &b->groups.group[g];
    gpu_lbm_t *prog = (gpu_lbm_t *)(uintptr_t)gr->key;
    const int in_place = gpu_field_in_place(gr->first[0]);
    for (int kind = 0; kind < 4; ++kind) {
      TSR_TRY(gpu_split_lists_make(m, gr, kind, &sl, err));
      const size_t nl = 2 * gr->nblocks;
      if (kind < 2) {
        gpu_lbm_links_t *l = &b->links[2 * g + (size_t)kind];
        TSR_TRY(gpu_lbm_links_create_many(prog, (const lbm_link_t *const *)sl.list, sl.n,
                                          sl.base, nl, kind, in_place, l, err));
        l->split = sl.split;
      } else if (kind == 2) {
        if (p)
          TSR_TRY(gpu_lbm_outlet_create_many(prog, (const lbm_open_link_t *const *)sl.list,
                                             sl.n, sl.base, nl, in_place, p, &b->outlets[g],
                                             err));
        b->outlets[g].links.split = b->outlets[g].links.n ? sl.split : 0;
      } else {
        gpu_lbm_bodies_t *o = &b->bodies[g];
        TSR_TRY(gpu_lbm_bodies_create_many(prog, (const lbm_body_link_t *const *)sl.list,
                                           sl.n, sl.base, nl, in_place, o, err));
        o->links.split = o->links2.split = sl.split;
        size_t first[2] = {0, sl.split};
        for (size_t j = 0; j < gr->nblocks; ++j) {
          const gpu_lbm_member_t *x = &m[gr->members[j]];
          const size_t n0 = sl.n[j], n1 = sl.n[gr->nblocks + j];
          if (x->slice)
            *x->slice = (gpu_lbm_force_slice_t){prog->ctx, &o->out, {first[0], first[1]},
                                                {n0, n1}, x->late};
          first[0] += n0;
          first[1] += n1;
        }
      }
      gpu_split_lists_clear(&sl);
    }
  }
  *out = b;
  b = NULL;
cleanup:
  gpu_split_lists_clear(&sl);
  gpu_lbm_batch_free(&b);
  free(fields);
  free(keys);
  return st;
}

/* The arrays of group g's populations as the programs see them; fails where its blocks
 * are not in step. */
static tsr_status gpu_lbm_group_field(const gpu_lbm_batch_t *b, const gpu_field_group_t *g,
                                      gpu_lbm_field_t *f, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const int cur = g->first[0]->cur, in_place = gpu_field_in_place(g->first[0]);
  for (size_t k = 1; k < g->nblocks; ++k)
    TSR_CHECK(b->pdf[g->members[k]]->cur == cur, TSR_ERR_INTERNAL,
              "GPU blocks of one batch are not in step (their present copies differ)");
  *f = (gpu_lbm_field_t){.grid = {gpu_field_array(g->first[0], 0), gpu_field_array(g->first[0], 1)},
                         .cur = cur, .in_place = in_place, .bases = &g->bases[0],
                         .nblocks = (int)g->nblocks,
                         .in_bases = g->first[1] ? &g->bases[1] : NULL,
                         .out_bases = g->first[2] ? &g->bases[2] : NULL};
cleanup:
  return st;
}

/* The boxes of part (none for part 0) on the device, once. */
static tsr_status gpu_lbm_batch_boxes(gpu_lbm_batch_t *b, const int *boxes, int part,
                                      tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(part == 0 || (boxes && (part == 1 || part == 2)), TSR_ERR_INTERNAL,
            "a GPU batch's part %d without its boxes", part);
  if (part && b->groups.count)
    TSR_TRY(gpu_field_groups_boxes(&b->groups,
                                   ((gpu_lbm_t *)(uintptr_t)b->groups.group[0].key)->ctx, boxes,
                                   err));
cleanup:
  return st;
}

tsr_status gpu_lbm_batch_step(gpu_lbm_batch_t *b, const gpu_lbm_aux_t *a, tsr_error_t *err) {
  return gpu_lbm_batch_step_part(b, a, NULL, 0, err);
}

tsr_status gpu_lbm_batch_step_part(gpu_lbm_batch_t *b, const gpu_lbm_aux_t *a,
                                   const int *boxes, int part, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(gpu_lbm_batch_boxes(b, boxes, part, err));
  for (size_t k = 0; k < b->groups.count; ++k) {
    const gpu_field_group_t *g = &b->groups.group[k];
    gpu_lbm_t *prog = (gpu_lbm_t *)(uintptr_t)g->key;
    gpu_lbm_field_t f;
    TSR_TRY(gpu_lbm_group_field(b, g, &f, err));
    f.part = part;
    f.boxes = part ? &g->boxes : NULL;
    if (!prog->spec.coupled) {
      TSR_TRY(gpu_lbm_step(prog, &f, err));
    } else {
      TSR_CHECK(a, TSR_ERR_INTERNAL, "a coupled GPU batch step without its coupling");
      /* the per-cell fields: one copy each, their arrays */
      gpu_buffer_t in = {g->first[1] ? gpu_field_array(g->first[1], 0) : NULL, 0},
                   out = {g->first[2] ? gpu_field_array(g->first[2], 0) : NULL, 0};
      gpu_lbm_aux_t x = *a;
      x.in = in.mem ? &in : NULL;
      x.out = out.mem ? &out : NULL;
      x.dims = gpu_field_dims(g->first[1] ? g->first[1] : g->first[2]);
      TSR_TRY(gpu_lbm_step_coupled(prog, &f, &x, err));
    }
    if (part == 1) continue; /* the step ends with part 2 */
    for (size_t j = 0; j < g->nblocks; ++j) gpu_field_swap(b->pdf[g->members[j]]);
  }
cleanup:
  return st;
}

tsr_status gpu_lbm_batch_boundary(gpu_lbm_batch_t *b, const double *scale, int part,
                                  tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(part >= 0 && part <= 2, TSR_ERR_INTERNAL, "a GPU batch's boundary part %d", part);
  for (size_t k = 0; k < b->groups.count; ++k) {
    const gpu_field_group_t *g = &b->groups.group[k];
    gpu_lbm_t *prog = (gpu_lbm_t *)(uintptr_t)g->key;
    gpu_lbm_field_t f;
    TSR_TRY(gpu_lbm_group_field(b, g, &f, err));
    for (int neg = 0; neg < 2; ++neg)
      TSR_TRY(gpu_lbm_boundary(prog, &f, &b->links[2 * k + (size_t)neg], scale, part, err));
    TSR_TRY(gpu_lbm_bodies(prog, &f, &b->bodies[k], part, err));
    TSR_TRY(gpu_lbm_outlet(prog, &f, &b->outlets[k], part, err));
  }
cleanup:
  return st;
}

tsr_status gpu_lbm_batch_pulled_density(gpu_lbm_batch_t *b, double shift, tsr_error_t *err) {
  return gpu_lbm_batch_pulled_density_part(b, shift, NULL, 0, err);
}

tsr_status gpu_lbm_batch_pulled_density_part(gpu_lbm_batch_t *b, double shift, const int *boxes,
                                             int part, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(gpu_lbm_batch_boxes(b, boxes, part, err));
  for (size_t k = 0; k < b->groups.count; ++k) {
    const gpu_field_group_t *g = &b->groups.group[k];
    gpu_lbm_field_t f;
    TSR_TRY(gpu_lbm_group_field(b, g, &f, err));
    f.part = part;
    f.boxes = part ? &g->boxes : NULL;
    TSR_CHECK(g->first[2], TSR_ERR_INTERNAL, "a GPU batch's pulled density has nowhere to go");
    gpu_buffer_t out = {gpu_field_array(g->first[2], 0), 0};
    const grid_dims_t od = gpu_field_dims(g->first[2]);
    TSR_TRY(gpu_lbm_pulled_density((gpu_lbm_t *)(uintptr_t)g->key, &f, &out, &od, shift, err));
  }
cleanup:
  return st;
}
