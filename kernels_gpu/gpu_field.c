#define CL_TARGET_OPENCL_VERSION 120
#include "gpu_field.h"

#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsr_size.h"

/* the program source, generated at build time from field.cl */
extern const char gpu_field_source[];

/* a row of field.cl's box tables */
enum { B_LO = 0, B_EXT = 3, B_NCOMP = 6, B_COMP = 7, B_SLOT = 8, B_ITEM = 9, B_VALUE = 10,
       B_ROW = 11 };

typedef struct gpu_field_program {
  cl_program program;
  cl_kernel pack, unpack;
} gpu_field_program_t;

struct gpu_field_programs {
  opencl_context_t *cl;
  gpu_field_program_t by_size[2]; /* 4 and 8 bytes */
};

tsr_status gpu_field_programs_create(opencl_context_t *cl, gpu_field_programs_t **out,
                                     tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_field_programs_t *p = calloc(1, sizeof *p);
  *out = NULL;
  TSR_CHECK(p, TSR_ERR_NOMEM, "out of memory for the OpenCL field programs");
  p->cl = cl;
  *out = p;
cleanup:
  return st;
}

void gpu_field_programs_free(gpu_field_programs_t **pp) {
  if (!pp || !*pp) return;
  gpu_field_programs_t *p = *pp;
  for (int k = 0; k < 2; ++k) {
    if (p->by_size[k].pack) clReleaseKernel(p->by_size[k].pack);
    if (p->by_size[k].unpack) clReleaseKernel(p->by_size[k].unpack);
    opencl_program_release(p->by_size[k].program);
  }
  free(p);
  *pp = NULL;
}

opencl_context_t *gpu_field_programs_context(const gpu_field_programs_t *p) { return p->cl; }

/* The program of element size esize, built on first use. */
static tsr_status gpu_field_program(gpu_field_programs_t *p, size_t esize,
                                    gpu_field_program_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(esize == 4 || esize == 8, TSR_ERR_INTERNAL,
            "a GPU field of %zu-byte values; 4 and 8 are allowed", esize);
  gpu_field_program_t *g = &p->by_size[esize == 8];
  if (!g->program) {
    char options[32];
    void *program = NULL;
    snprintf(options, sizeof options, "-DELEM_BYTES=%zu", esize);
    TSR_TRY(opencl_build_program(p->cl, gpu_field_source, options, "field.cl", &program, err));
    g->program = program;
    cl_int rc = CL_SUCCESS;
    g->pack = clCreateKernel(g->program, "field_pack", &rc);
    TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "clCreateKernel(field_pack) failed: %s",
              opencl_error_name(rc));
    g->unpack = clCreateKernel(g->program, "field_unpack", &rc);
    TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "clCreateKernel(field_unpack) failed: %s",
              opencl_error_name(rc));
  }
  *out = g;
cleanup:
  return st;
}

/* ---- a block's field ---- */

struct gpu_field_stage {
  void *out_event; /* read of the pack buffer into pin_out in flight */
  void *in_event;  /* write of pin_in into the unpack buffer in flight */
  int packed;      /* the pack buffer holds values of the present copy */
  int host_in;     /* insertions filled pin_in */
  uint32_t mask;   /* slots to unpack */
  const gpu_buffer_t *src[DIRECTION_COUNT];
  size_t src_offset[DIRECTION_COUNT]; /* values */
};

static tsr_status gpu_field_buffer(opencl_context_t *cl, const void *host, size_t bytes,
                                   void **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_int rc = CL_SUCCESS;
  *out = clCreateBuffer(opencl_context_cl(cl), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                        bytes, (void *)host, &rc);
  TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "clCreateBuffer (field tables) failed: %s",
            opencl_error_name(rc));
cleanup:
  return st;
}

/* The box tables of both sides, the crossing lists and the slot offsets. */
static tsr_status gpu_field_tables(gpu_field_t *f, const gpu_field_shape_t *s, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int *send = NULL, *recv = NULL, *comps = NULL;
  int rows = 0, ncomps = 0;
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    rows += direction_slice_boxes(s->n, s->width, d);
    ncomps += s->crossing ? s->ncrossing[d] : s->components;
  }
  send = calloc((size_t)rows * B_ROW + 1, sizeof *send);
  recv = calloc((size_t)rows * B_ROW + 1, sizeof *recv);
  comps = calloc((size_t)ncomps + 1, sizeof *comps);
  TSR_CHECK(send && recv && comps, TSR_ERR_NOMEM, "out of memory for the tables of a GPU field");
  long long items = 0, values = 0;
  int row = 0, nc = 0;
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    const int nb = direction_slice_boxes(s->n, s->width, d);
    const int n = s->crossing ? s->ncrossing[d] : s->components, first = nc;
    f->slot_offset[d] = (size_t)values;
    for (int c = 0; c < n; ++c) {
      const int k = s->crossing ? s->crossing[d * s->stride + c] : c;
      TSR_CHECK(k >= 0 && k < s->components, TSR_ERR_INTERNAL,
                "component %d crosses direction %s of a field of %d", k, direction_name(d),
                s->components);
      comps[nc++] = k;
    }
    long long slot_values = 0;
    for (int k = 0; k < nb && n > 0; ++k) {
      int lo[3], hi[3], rlo[3], rhi[3];
      long long cells = 1;
      direction_send_box(s->n, s->width, d, k, lo, hi);
      direction_recv_box(s->n, s->width, d, k, rlo, rhi);
      for (int a = 0; a < 3; ++a) cells *= hi[a] - lo[a];
      if (cells == 0) continue;
      int *ts = send + row * B_ROW, *tr = recv + row * B_ROW;
      for (int a = 0; a < 3; ++a) {
        ts[B_LO + a] = lo[a];
        tr[B_LO + a] = rlo[a];
        ts[B_EXT + a] = tr[B_EXT + a] = hi[a] - lo[a];
      }
      ts[B_NCOMP] = tr[B_NCOMP] = n;
      ts[B_COMP] = tr[B_COMP] = first;
      ts[B_SLOT] = tr[B_SLOT] = d;
      ts[B_ITEM] = tr[B_ITEM] = (int)items;
      ts[B_VALUE] = (int)(values + slot_values);
      tr[B_VALUE] = (int)slot_values;
      ++row;
      items += cells;
      slot_values += cells * n;
      TSR_CHECK(values + slot_values < (1LL << 31) && items < (1LL << 31), TSR_ERR_INVALID,
                "a block of %dx%dx%d cells has more ghost values than the OpenCL pack kernel "
                "counts (2^31); use smaller blocks", s->n[0], s->n[1], s->n[2]);
    }
    values += slot_values;
  }
  f->slot_offset[DIRECTION_COUNT] = (size_t)values;
  f->nboxes = row;
  f->nitems = (int)items;
  TSR_TRY(gpu_field_buffer(f->cl, send, ((size_t)row * B_ROW + 1) * sizeof *send, &f->tab_send, err));
  TSR_TRY(gpu_field_buffer(f->cl, recv, ((size_t)row * B_ROW + 1) * sizeof *recv, &f->tab_recv, err));
  TSR_TRY(gpu_field_buffer(f->cl, comps, ((size_t)ncomps + 1) * sizeof *comps, &f->comps, err));
cleanup:
  free(send);
  free(recv);
  free(comps);
  return st;
}

tsr_status gpu_field_create(gpu_field_t *f, gpu_field_programs_t *progs,
                            const gpu_field_shape_t *shape, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_field_program_t *prog;
  memset(f, 0, sizeof *f);
  f->cl = progs->cl;
  f->progs = progs;
  f->shape = *shape;
  f->shape.crossing = NULL;
  f->shape.ncrossing = NULL;
  f->stage = calloc(1, sizeof *f->stage);
  TSR_CHECK(f->stage, TSR_ERR_NOMEM, "out of memory for a GPU field");
  TSR_CHECK(shape->copies == 1 || shape->copies == 2, TSR_ERR_INTERNAL,
            "a GPU field of %d copies; 1 or 2 are allowed", shape->copies);
  TSR_CHECK(shape->components >= 1, TSR_ERR_INTERNAL, "a GPU field without components");
  for (int a = 0; a < 3; ++a)
    TSR_CHECK(shape->width[a] >= 0 && shape->width[a] <= shape->ghost, TSR_ERR_INTERNAL,
              "a GPU field exchanges %d ghost layers along axis %d and stores %d",
              shape->width[a], a, shape->ghost);
  TSR_TRY(gpu_field_program(progs, shape->esize, &prog, err));
  size_t bytes = 0, all = 0;
  char what[128];
  snprintf(what, sizeof what, "a field of %d component(s) of a block of %dx%dx%d cells",
           shape->components, shape->n[0], shape->n[1], shape->n[2]);
  TSR_CHECK(tsr_box_cells(shape->n, shape->ghost, &f->ncells) &&
                tsr_mul_size(f->ncells, (size_t)shape->components * shape->esize, &bytes) &&
                tsr_mul_size(bytes, (size_t)shape->copies, &all),
            TSR_ERR_INVALID, "%s: its bytes do not fit in a size_t", what);
  TSR_TRY(opencl_check_memory(f->cl, all, bytes, what, err));
  for (int k = 0; k < shape->copies; ++k) {
    TSR_TRY(gpu_buffer_create(f->cl, bytes, what, &f->grid[k], err));
    OPENCL_CHECK(clEnqueueFillBuffer((cl_command_queue)opencl_context_queue(f->cl),
                                     (cl_mem)f->grid[k].mem, &(cl_uint){0}, sizeof(cl_uint), 0,
                                     bytes, 0, NULL, NULL));
  }
  TSR_TRY(gpu_field_tables(f, shape, err));
  const size_t msg = f->slot_offset[DIRECTION_COUNT] * shape->esize;
  if (msg > 0) {
    TSR_TRY(gpu_buffer_create(f->cl, msg, "ghost messages (pack)", &f->out, err));
    TSR_TRY(gpu_buffer_create(f->cl, msg, "ghost messages (unpack)", &f->in, err));
    TSR_TRY(gpu_pinned_create(f->cl, msg, "ghost messages to the host", &f->pin_out, err));
    TSR_TRY(gpu_pinned_create(f->cl, msg, "ghost messages from the host", &f->pin_in, err));
  }
  TSR_TRY(gpu_queue_finish(f->cl, err));
cleanup:
  if (st != TSR_OK) gpu_field_release(f);
  return st;
}

void gpu_field_release(gpu_field_t *f) {
  tsr_error_t ignored;
  if (f->cl) {
    /* nothing may be in flight on buffers about to go */
    if (gpu_queue_finish(f->cl, &ignored) != TSR_OK) { /* released all the same */ }
  }
  if (f->stage) {
    if (gpu_event_wait(&f->stage->out_event, &ignored) != TSR_OK) { /* as above */ }
    if (gpu_event_wait(&f->stage->in_event, &ignored) != TSR_OK) { /* as above */ }
    free(f->stage);
  }
  for (int k = 0; k < 2; ++k) gpu_buffer_free(&f->grid[k]);
  gpu_buffer_free(&f->out);
  gpu_buffer_free(&f->in);
  gpu_pinned_free(&f->pin_out);
  gpu_pinned_free(&f->pin_in);
  void *mems[] = {f->tab_send, f->tab_recv, f->comps};
  for (size_t k = 0; k < sizeof mems / sizeof mems[0]; ++k)
    if (mems[k]) clReleaseMemObject((cl_mem)mems[k]);
  memset(f, 0, sizeof *f);
}

size_t gpu_field_copy_bytes(const gpu_field_t *f) { return f->grid[0].bytes; }

grid_dims_t gpu_field_dims(const gpu_field_t *f) {
  const gpu_field_shape_t *s = &f->shape;
  const ptrdiff_t g = s->ghost, sx = s->n[0] + 2 * g, sy = s->n[1] + 2 * g;
  grid_dims_t d = {.nx = s->n[0], .ny = s->n[1], .nz = s->n[2], .ncomp = s->components,
                   .ghost = s->ghost, .layout = GRID_SOA, .sx = 1, .sy = sx, .sz = sx * sy,
                   .sc = (ptrdiff_t)f->ncells, .elements = f->ncells * (size_t)s->components};
  d.origin = g + sx * (g + sy * g);
  return d;
}

/* Copies the cells both fields hold between the device layout (dev) and a CPU field. */
static void gpu_field_convert(const gpu_field_t *f, uint8_t *dev, uint8_t *host,
                              const grid_dims_t *hd, int to_device) {
  const grid_dims_t dd = gpu_field_dims(f);
  const size_t es = f->shape.esize;
  const int g = hd->ghost < dd.ghost ? hd->ghost : dd.ghost;
  for (int c = 0; c < dd.ncomp; ++c)
    for (int z = -g; z < dd.nz + g; ++z)
      for (int y = -g; y < dd.ny + g; ++y)
        for (int x = -g; x < dd.nx + g; ++x) {
          uint8_t *pd = dev + grid_index(&dd, x, y, z, c) * es;
          uint8_t *ph = host + grid_index(hd, x, y, z, c) * es;
          if (to_device) memcpy(pd, ph, es);
          else memcpy(ph, pd, es);
        }
}

static tsr_status gpu_field_check_host(const gpu_field_t *f, const grid_dims_t *d,
                                       tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const gpu_field_shape_t *s = &f->shape;
  TSR_CHECK(d->nx == s->n[0] && d->ny == s->n[1] && d->nz == s->n[2] &&
                d->ncomp == s->components,
            TSR_ERR_INTERNAL, "a host field of %dx%dx%d cells and %d components for a GPU "
            "field of %dx%dx%d and %d", d->nx, d->ny, d->nz, d->ncomp, s->n[0], s->n[1],
            s->n[2], s->components);
cleanup:
  return st;
}

tsr_status gpu_field_upload(gpu_field_t *f, const void *values, const grid_dims_t *dims,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const size_t bytes = gpu_field_copy_bytes(f);
  uint8_t *dev = NULL;
  TSR_TRY(gpu_field_check_host(f, dims, err));
  dev = malloc(bytes);
  TSR_CHECK(dev, TSR_ERR_NOMEM, "out of memory staging a GPU field (%zu bytes)", bytes);
  /* cells the host field lacks (a narrower ghost layer) keep the device's values; a host
     field with every cell needs no read-back (the device layout has no padding) */
  if (dims->ghost < f->shape.ghost)
    TSR_TRY(gpu_buffer_read(f->cl, &f->grid[f->cur], 0, bytes, dev, NULL, err));
  gpu_field_convert(f, dev, (uint8_t *)(uintptr_t)values, dims, 1);
  for (int k = 0; k < f->shape.copies; ++k)
    TSR_TRY(gpu_buffer_write(f->cl, &f->grid[k], 0, bytes, dev, NULL, err));
  f->stage->packed = 0;
cleanup:
  free(dev);
  return st;
}

tsr_status gpu_field_download(gpu_field_t *f, void *values, const grid_dims_t *dims,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const size_t bytes = gpu_field_copy_bytes(f);
  uint8_t *dev = NULL;
  TSR_TRY(gpu_field_check_host(f, dims, err));
  dev = malloc(bytes);
  TSR_CHECK(dev, TSR_ERR_NOMEM, "out of memory staging a GPU field (%zu bytes)", bytes);
  TSR_TRY(gpu_buffer_read(f->cl, &f->grid[f->cur], 0, bytes, dev, NULL, err));
  gpu_field_convert(f, dev, values, dims, 0);
cleanup:
  free(dev);
  return st;
}

void gpu_field_swap(gpu_field_t *f) {
  if (f->shape.copies == 2) f->cur ^= 1;
  f->stage->packed = 0;
}

size_t gpu_field_slot_bytes(const gpu_field_t *f, int d) {
  return (f->slot_offset[d + 1] - f->slot_offset[d]) * f->shape.esize;
}

/* A 1-D launch of n work items on the context's queue. */
static tsr_status gpu_field_launch(gpu_field_t *f, cl_kernel k, size_t n, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  if (n == 0) return st;
  OPENCL_CHECK(clEnqueueNDRangeKernel((cl_command_queue)opencl_context_queue(f->cl), k, 1, NULL,
                                      &n, NULL, 0, NULL, NULL));
cleanup:
  return st;
}

/* Arguments 0..9 of both kernels but the first two: tables and shape. */
static tsr_status gpu_field_shape_args(gpu_field_t *f, cl_kernel k, cl_uint tab_arg, void *tab,
                                       tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const cl_long sx = f->shape.n[0] + 2 * f->shape.ghost, sy = f->shape.n[1] + 2 * f->shape.ghost,
                nc = (cl_long)f->ncells;
  const cl_int ghost = f->shape.ghost;
  cl_uint a = tab_arg;
  OPENCL_CHECK(clSetKernelArg(k, a++, sizeof(cl_mem), &tab));
  OPENCL_CHECK(clSetKernelArg(k, a++, sizeof(cl_mem), &f->comps));
  OPENCL_CHECK(clSetKernelArg(k, a++, sizeof(cl_int), &f->nboxes));
  OPENCL_CHECK(clSetKernelArg(k, a++, sizeof(cl_int), &f->nitems));
  OPENCL_CHECK(clSetKernelArg(k, a++, sizeof sx, &sx));
  OPENCL_CHECK(clSetKernelArg(k, a++, sizeof sy, &sy));
  OPENCL_CHECK(clSetKernelArg(k, a++, sizeof nc, &nc));
  OPENCL_CHECK(clSetKernelArg(k, a++, sizeof ghost, &ghost));
cleanup:
  return st;
}

tsr_status gpu_field_stage_out(gpu_field_t *f, int host_bound, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_field_stage_t *s = f->stage;
  gpu_field_program_t *p;
  TSR_TRY(gpu_event_wait(&s->out_event, err));
  if (f->nitems > 0) {
    TSR_TRY(gpu_field_program(f->progs, f->shape.esize, &p, err));
    OPENCL_CHECK(clSetKernelArg(p->pack, 0, sizeof(cl_mem), &f->grid[f->cur].mem));
    OPENCL_CHECK(clSetKernelArg(p->pack, 1, sizeof(cl_mem), &f->out.mem));
    TSR_TRY(gpu_field_shape_args(f, p->pack, 2, f->tab_send, err));
    TSR_TRY(gpu_field_launch(f, p->pack, (size_t)f->nitems, err));
  }
  s->packed = 1;
  if (host_bound && f->out.bytes > 0) /* one transfer of every slot, left in flight */
    TSR_TRY(gpu_buffer_read(f->cl, &f->out, 0, f->out.bytes, f->pin_out.host, &s->out_event,
                            err));
cleanup:
  return st;
}

tsr_status gpu_field_stage_wait(gpu_field_t *f, tsr_error_t *err) {
  return gpu_event_wait(&f->stage->out_event, err);
}

tsr_status gpu_field_extract(gpu_field_t *f, int d, uint8_t *out, size_t len, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(f->stage->packed && d >= 0 && d < DIRECTION_COUNT &&
                len == gpu_field_slot_bytes(f, d),
            TSR_ERR_INTERNAL, "GPU field extraction in direction %d: %zu bytes asked, %zu in "
            "the slot%s", d, len, d >= 0 && d < DIRECTION_COUNT ? gpu_field_slot_bytes(f, d) : 0,
            f->stage->packed ? "" : " (not staged out)");
  TSR_TRY(gpu_event_wait(&f->stage->out_event, err));
  if (len) memcpy(out, (const uint8_t *)f->pin_out.host + f->slot_offset[d] * f->shape.esize, len);
cleanup:
  return st;
}

tsr_status gpu_field_insert(gpu_field_t *f, int d, const uint8_t *in, size_t len,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_field_stage_t *s = f->stage;
  TSR_CHECK(d >= 0 && d < DIRECTION_COUNT && len == gpu_field_slot_bytes(f, d), TSR_ERR_CORRUPT,
            "GPU field insertion from direction %d: %zu bytes, expected %zu", d, len,
            d >= 0 && d < DIRECTION_COUNT ? gpu_field_slot_bytes(f, d) : 0);
  if (len == 0) return st;
  TSR_TRY(gpu_event_wait(&s->in_event, err)); /* the last write has left pin_in */
  memcpy((uint8_t *)f->pin_in.host + f->slot_offset[d] * f->shape.esize, in, len);
  s->src[d] = &f->in;
  s->src_offset[d] = f->slot_offset[d];
  s->mask |= 1u << d;
  s->host_in = 1;
cleanup:
  return st;
}

tsr_status gpu_field_copy_from(gpu_field_t *to, const gpu_field_t *from, int d, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(from->stage->packed && from->cl == to->cl && d >= 0 && d < DIRECTION_COUNT &&
                gpu_field_slot_bytes(from, d) == gpu_field_slot_bytes(to, d),
            TSR_ERR_INTERNAL, "GPU field copy in direction %d: %s", d,
            !from->stage->packed ? "the sender was not staged out"
                                 : "the blocks differ in device or slice");
  if (gpu_field_slot_bytes(to, d) == 0) return st;
  to->stage->src[d] = &from->out;
  to->stage->src_offset[d] = from->slot_offset[d];
  to->stage->mask |= 1u << d;
cleanup:
  return st;
}

tsr_status gpu_field_stage_in(gpu_field_t *f, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_field_stage_t *s = f->stage;
  gpu_field_program_t *p;
  if (s->host_in) /* one transfer of every slot that came through the host */
    TSR_TRY(gpu_buffer_write(f->cl, &f->in, 0, f->in.bytes, f->pin_in.host, &s->in_event, err));
  if (s->mask) {
    TSR_TRY(gpu_field_program(f->progs, f->shape.esize, &p, err));
    cl_kernel k = p->unpack;
    OPENCL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &f->grid[f->cur].mem));
    TSR_TRY(gpu_field_shape_args(f, k, 1, f->tab_recv, err));
    cl_uint m = s->mask;
    OPENCL_CHECK(clSetKernelArg(k, 9, sizeof m, &m));
    for (int d = 0; d < DIRECTION_COUNT; ++d) {
      const int on = (s->mask >> d) & 1u;
      cl_long off = on ? (cl_long)s->src_offset[d] : 0;
      /* slots left out get a NULL buffer (allowed for __global arguments) */
      OPENCL_CHECK(clSetKernelArg(k, (cl_uint)(10 + 2 * d), sizeof(cl_mem),
                                  on ? &s->src[d]->mem : NULL));
      OPENCL_CHECK(clSetKernelArg(k, (cl_uint)(11 + 2 * d), sizeof off, &off));
    }
    TSR_TRY(gpu_field_launch(f, k, (size_t)f->nitems, err));
  }
cleanup:
  s->mask = 0;
  s->host_in = 0;
  return st;
}
