#define CL_TARGET_OPENCL_VERSION 120
#include "gpu_field.h"

#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsr_size.h"

/* the program source, generated at build time from field.cl */
extern const char gpu_field_source[];

/* a row of field.cl's box table and of its block table */
enum { R_LO = 0, R_EXT = 3, R_NCOMP = 6, R_COMP = 7, R_BLOCK = 8, R_ITEM = 9, R_VALUE = 10,
       R_ROW = 11 };
enum { K_BASE = 0, K_SX = 1, K_SY = 2, K_NCELLS = 3, K_FLIP = 4, K_GZ = 5, K_ROW = 6 };
enum { ROW_CHUNK = 64 }; /* field.cl's chunks of work items */

typedef struct gpu_field_program {
  cl_program program;
  cl_kernel pack, unpack;
} gpu_field_program_t;

/* The messages of every set of the process that go through the host, in one array
 * each way: a set's values take the next place in the array when it packs or receives
 * them, so that one read and one write per exchange move all of them, exactly their
 * bytes, on the context's transfer queue (gpu_buffer_read_after, _write_before: in
 * order with the kernels). The device arrays and their pinned host copies hold what
 * every set could send at once (reserved: the sum over the sets). */
typedef struct gpu_field_xfer {
  gpu_buffer_t out, in;
  gpu_pinned_t pin_out, pin_in;
  size_t cap, reserved;      /* bytes of each array; bytes the sets need */
  size_t out_used, in_used;  /* bytes placed in this exchange */
  int out_state;             /* 0: nothing packed, 1: packed and not read, 2: read */
  int in_written;            /* the insertions of this exchange went to the device */
  void *out_event, *in_event;
  void *in_free;             /* a marker after the last unpack, the last reader of in: the
                                next write waits for it alone, not for the kernels since
                                (an overlapped step's inner part) */
} gpu_field_xfer_t;

struct gpu_field_programs {
  opencl_context_t *cl;
  gpu_field_program_t by_size[3]; /* 2, 4 and 8 bytes */
  gpu_field_xfer_t xfer;
};

static void gpu_field_xfer_free(gpu_field_xfer_t *x) {
  tsr_error_t ignored;
  if (gpu_event_wait(&x->out_event, &ignored) != TSR_OK) { /* released all the same */ }
  if (gpu_event_wait(&x->in_event, &ignored) != TSR_OK) { /* as above */ }
  if (gpu_event_wait(&x->in_free, &ignored) != TSR_OK) { /* as above */ }
  gpu_buffer_free(&x->out);
  gpu_buffer_free(&x->in);
  gpu_pinned_free(&x->pin_out);
  gpu_pinned_free(&x->pin_in);
  x->cap = 0;
}

/* Room for bytes more (a new set's messages): the arrays grow (between exchanges, when
 * sets are made). */
static tsr_status gpu_field_xfer_reserve(gpu_field_programs_t *p, size_t bytes,
                                         tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_field_xfer_t *x = &p->xfer;
  const size_t cap = x->reserved + (bytes + 7) / 8 * 8;
  if (cap <= x->cap) {
    x->reserved = cap;
    return st;
  }
  TSR_TRY(gpu_queue_finish(p->cl, err));
  gpu_field_xfer_free(x);
  TSR_TRY(gpu_buffer_create(p->cl, cap, "ghost messages (to the host)", &x->out, err));
  TSR_TRY(gpu_buffer_create(p->cl, cap, "ghost messages (from the host)", &x->in, err));
  TSR_TRY(gpu_pinned_create(p->cl, cap, "ghost messages to the host", &x->pin_out, err));
  TSR_TRY(gpu_pinned_create(p->cl, cap, "ghost messages from the host", &x->pin_in, err));
  x->cap = x->reserved = cap;
  x->out_used = x->in_used = 0;
  x->out_state = 0;
  x->in_written = 0;
cleanup:
  return st;
}

/* Where the next bytes of this exchange go in the array to the host (8-byte aligned);
 * the first pack of an exchange starts it again at 0, once the last read has landed. */
static tsr_status gpu_field_xfer_place_out(gpu_field_xfer_t *x, size_t bytes, size_t *at,
                                           tsr_error_t *err) {
  tsr_status st = TSR_OK;
  if (x->out_state == 2) {
    TSR_TRY(gpu_event_wait(&x->out_event, err));
    x->out_used = 0;
    x->out_state = 0;
  }
  *at = (x->out_used + 7) / 8 * 8;
  TSR_CHECK(*at + bytes <= x->cap, TSR_ERR_INTERNAL,
            "GPU messages to the host: %zu bytes at %zu, %zu reserved", bytes, *at, x->cap);
  x->out_used = *at + bytes;
  x->out_state = 1;
cleanup:
  return st;
}

/* The one read of everything packed in this exchange, issued at the first wait for it,
 * then waited for. */
static tsr_status gpu_field_xfer_out_ready(gpu_field_programs_t *p, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_field_xfer_t *x = &p->xfer;
  if (x->out_state == 1) {
    TSR_TRY(gpu_buffer_read_after(p->cl, &x->out, 0, x->out_used, x->pin_out.host,
                                  &x->out_event, err));
    x->out_state = 2;
  }
  TSR_TRY(gpu_event_wait(&x->out_event, err));
cleanup:
  return st;
}

/* Where an insertion of bytes goes in the array from the host (8-byte aligned); the
 * first insertion of an exchange starts it again at 0, once the last write has left. */
static tsr_status gpu_field_xfer_place_in(gpu_field_xfer_t *x, size_t bytes, size_t *at,
                                          tsr_error_t *err) {
  tsr_status st = TSR_OK;
  if (x->in_written) {
    TSR_TRY(gpu_event_wait(&x->in_event, err));
    x->in_used = 0;
    x->in_written = 0;
  }
  *at = (x->in_used + 7) / 8 * 8;
  TSR_CHECK(*at + bytes <= x->cap, TSR_ERR_INTERNAL,
            "GPU messages from the host: %zu bytes at %zu, %zu reserved", bytes, *at, x->cap);
  x->in_used = *at + bytes;
cleanup:
  return st;
}

/* The one write of everything inserted in this exchange, at the first unpack. */
static tsr_status gpu_field_xfer_in_send(gpu_field_programs_t *p, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_field_xfer_t *x = &p->xfer;
  if (x->in_written || x->in_used == 0) return st;
  TSR_TRY(gpu_buffer_write_before(p->cl, &x->in, 0, x->in_used, x->pin_in.host, x->in_free,
                                  &x->in_event, err));
  x->in_written = 1;
cleanup:
  return st;
}

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
  gpu_field_xfer_free(&p->xfer);
  for (int k = 0; k < 3; ++k) {
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
  TSR_CHECK(esize == 2 || esize == 4 || esize == 8, TSR_ERR_INTERNAL,
            "a GPU field of %zu-byte values; 2, 4 and 8 are allowed", esize);
  gpu_field_program_t *g = &p->by_size[esize == 8 ? 2 : esize == 4];
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

/* ---- sets of fields ---- */

/* What one exchange changes in a field. */
struct gpu_field_stage {
  uint32_t mask;                      /* slots to unpack */
  int8_t src[DIRECTION_COUNT];        /* 0: the set's in array, 2: a block of the set */
  size_t src_offset[DIRECTION_COUNT]; /* 0: the value where the slot's message starts
                                         there; 2: the sending block's index */
};

struct gpu_field_set {
  opencl_context_t *cl;
  gpu_field_programs_t *progs;
  int refs;                 /* fields still in it */
  size_t esize;
  int copies, ghost, nblocks;
  int rows;                 /* a work item per x row of a box (a CPU device), not per cell */
  int in_place;             /* streamed in place (gpu_field_shape_t.stream) */
  int stream_host[64][4];   /* its table, and on the device (stream) */
  gpu_field_t **fields;     /* per block; NULL once released */
  gpu_buffer_t grid[2];     /* the copies of every block */
  size_t msg_bytes;          /* its messages, every slot: reserved in the process's arrays */
  gpu_buffer_t tab_send, tab_recv, blocks, comps, src, chunks, stream; /* field.cl's tables */
  long long nrows, nitems;
  int *row_block, *row_slot; /* per row, on the host */
  int *slot_row;             /* per block and slot: its first row (-1: none) */
  cl_long *blocks_host;      /* the block table as on the device */
  cl_long *src_host, *src_dev; /* per row (x, y): built for this exchange, on the device */
  size_t out_at;             /* where its packed values lie in the process's array */
  int packed;               /* the pack array holds the present copies' values */
  /* the messages through the host, one after the other from value 0 of the arrays:
     the slots extracted (planned by stage_out from the extraction directions, which only
     grow) and those inserted (placed at their first insertion); -1 where none */
  cl_long *send_host;       /* the box table, on the host */
  uint32_t *out_dirs;       /* per block */
  long long *out_pos;        /* per block and slot */
  gpu_buffer_t tab_host, chunks_host; /* field_pack's tables for those slots */
  long long host_items, host_values;
  int host_in;              /* insertions came in this exchange */
};

static void gpu_field_set_free(gpu_field_set_t *s) {
  if (!s) return;
  tsr_error_t ignored;
  if (s->cl && gpu_queue_finish(s->cl, &ignored) != TSR_OK) { /* released all the same */ }
  if (s->progs) s->progs->xfer.reserved -= (s->msg_bytes + 7) / 8 * 8;
  gpu_buffer_t *bufs[] = {&s->grid[0], &s->grid[1], &s->tab_send,
                          &s->tab_recv, &s->blocks, &s->comps, &s->src, &s->chunks,
                          &s->stream};
  for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; ++k) gpu_buffer_free(bufs[k]);
  free(s->fields);
  free(s->row_block);
  free(s->row_slot);
  free(s->slot_row);
  free(s->send_host);
  free(s->out_dirs);
  free(s->out_pos);
  gpu_buffer_free(&s->tab_host);
  gpu_buffer_free(&s->chunks_host);
  free(s->blocks_host);
  free(s->src_host);
  free(s->src_dev);
  free(s);
}

/* A device buffer holding bytes of host (at least 8 bytes: OpenCL has no empty
 * buffers). */
static tsr_status gpu_field_table(opencl_context_t *cl, const void *host, size_t bytes,
                                  const char *what, gpu_buffer_t *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const cl_long zero = 0;
  TSR_TRY(gpu_buffer_create(cl, bytes ? bytes : sizeof zero, what, out, err));
  TSR_TRY(gpu_buffer_write(cl, out, 0, bytes ? bytes : sizeof zero, bytes ? host : &zero, NULL,
                           err));
cleanup:
  return st;
}

static size_t gpu_field_round(size_t v, size_t align) { return (v + align - 1) / align * align; }

/* The slot offsets of a field and its boxes: rows (NULL: counted only) of both tables
 * from row *row on, its block index b, its messages from value msg_first, items from
 * *items. The crossing lists come from comp_first (per direction, in comps). */
static tsr_status gpu_field_boxes(gpu_field_t *f, const int *comp_first, const int *ncomp,
                                  int b, int rows, cl_long *send, cl_long *recv, int *row_block,
                                  int *row_slot, int *slot_row, long long *row,
                                  long long *items, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const gpu_field_shape_t *s = &f->shape;
  long long values = 0;
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    const int nb = direction_slice_boxes(s->n, s->width, d), n = ncomp[d];
    f->slot_offset[d] = (size_t)values;
    long long slot_values = 0;
    for (int k = 0; k < nb && n > 0; ++k) {
      int lo[3], hi[3], rlo[3], rhi[3];
      long long cells = 1;
      direction_send_box(s->n, s->width, d, k, lo, hi);
      direction_recv_box(s->n, s->width, d, k, rlo, rhi);
      for (int a = 0; a < 3; ++a) cells *= hi[a] - lo[a];
      if (cells == 0) continue;
      if (send) {
        cl_long *ts = send + *row * R_ROW, *tr = recv + *row * R_ROW;
        for (int a = 0; a < 3; ++a) {
          ts[R_LO + a] = lo[a];
          tr[R_LO + a] = rlo[a];
          ts[R_EXT + a] = tr[R_EXT + a] = hi[a] - lo[a];
        }
        ts[R_NCOMP] = tr[R_NCOMP] = n;
        ts[R_COMP] = tr[R_COMP] = comp_first[d];
        ts[R_BLOCK] = tr[R_BLOCK] = b;
        ts[R_ITEM] = tr[R_ITEM] = *items;
        ts[R_VALUE] = (cl_long)(f->msg_first + (size_t)values + (size_t)slot_values);
        tr[R_VALUE] = slot_values;
        row_block[*row] = b;
        row_slot[*row] = d;
        if (slot_row[b * DIRECTION_COUNT + d] < 0)
          slot_row[b * DIRECTION_COUNT + d] = (int)*row;
      }
      ++*row;
      *items += rows ? cells / (hi[0] - lo[0]) : cells;
      slot_values += cells * n;
    }
    values += slot_values;
  }
  f->slot_offset[DIRECTION_COUNT] = (size_t)values;
  TSR_CHECK(*items < (1LL << 53), TSR_ERR_INVALID, "a set of GPU fields with %lld ghost cells",
            *items);
cleanup:
  return st;
}

/* The table of a set streamed in place (gpu_field_shape_t.stream), checked. */
static tsr_status gpu_field_set_stream(gpu_field_set_t *set, const gpu_field_shape_t *s0,
                                       tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(!set->in_place || s0->copies == 1, TSR_ERR_INTERNAL,
            "a GPU field streamed in place has one copy, not %d", s0->copies);
  for (int c = 0; set->in_place && c < s0->components; ++c) {
    for (int a = 0; a < 4; ++a) set->stream_host[c][a] = s0->stream[4 * c + a];
    TSR_CHECK(set->stream_host[c][0] >= 0 && set->stream_host[c][0] < s0->components &&
                  abs(set->stream_host[c][1]) <= s0->ghost &&
                  abs(set->stream_host[c][2]) <= s0->ghost &&
                  abs(set->stream_host[c][3]) <= s0->ghost,
              TSR_ERR_INTERNAL, "a GPU field streamed in place: component %d goes to %d, "
              "(%d, %d, %d) away, with %d ghost layers", c, set->stream_host[c][0],
              set->stream_host[c][1], set->stream_host[c][2], set->stream_host[c][3], s0->ghost);
  }
cleanup:
  return st;
}

/* The components crossing each direction d: comps[comp_first[d]..+ncomp[d]), *nc in all. */
static tsr_status gpu_field_set_comps(const gpu_field_shape_t *s0, int *comps, int *comp_first,
                                      int *ncomp, int *nc, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    ncomp[d] = s0->crossing ? s0->ncrossing[d] : s0->components;
    comp_first[d] = *nc;
    for (int c = 0; c < ncomp[d]; ++c) {
      const int k = s0->crossing ? s0->crossing[d * s0->stride + c] : c;
      TSR_CHECK(k >= 0 && k < s0->components && *nc < DIRECTION_COUNT * 64, TSR_ERR_INTERNAL,
                "component %d crosses direction %s of a field of %d", k, direction_name(d),
                s0->components);
      comps[(*nc)++] = k;
    }
  }
cleanup:
  return st;
}

/* The places of the blocks in the arrays (the block table), and the rows they need:
 * *elements of the arrays, *values of the messages. */
static tsr_status gpu_field_set_place(gpu_field_set_t *set, const gpu_field_shape_t *shapes,
                                      size_t n, gpu_field_t *const *fields,
                                      const int *comp_first, const int *ncomp, size_t *elements,
                                      size_t *values, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const gpu_field_shape_t *s0 = &shapes[0];
  const size_t es = set->esize, align = opencl_context_desc(set->cl)->base_align;
  long long rows = 0, items = 0;
  for (size_t b = 0; b < n; ++b) {
    gpu_field_t *f = fields[b];
    const gpu_field_shape_t *s = &shapes[b];
    TSR_CHECK(s->esize == es && s->copies == s0->copies && s->ghost == s0->ghost &&
                  s->gz == s0->gz &&
                  s->components == s0->components && (s->stream != NULL) == set->in_place,
              TSR_ERR_INTERNAL, "the fields of one GPU set differ in shape");
    size_t bytes = 0;
    TSR_CHECK(tsr_box_cells_gz(s->n, s->ghost, s->gz, &f->ncells) &&
                  tsr_mul_size(f->ncells, (size_t)s->components * es, &bytes),
              TSR_ERR_INVALID, "a field of a block of %dx%dx%d cells: its bytes do not fit in "
              "a size_t", s->n[0], s->n[1], s->n[2]);
    f->base = *elements;
    f->msg_first = *values;
    TSR_TRY(gpu_field_boxes(f, comp_first, ncomp, (int)b, set->rows, NULL, NULL, NULL, NULL,
                            NULL, &rows, &items, err));
    *values += f->slot_offset[DIRECTION_COUNT];
    *elements = gpu_field_round(*elements + bytes / es, align / es ? align / es : 1);
    cl_long *bk = set->blocks_host + b * K_ROW;
    bk[K_BASE] = (cl_long)f->base;
    bk[K_SX] = s->n[0] + 2 * s->ghost;
    bk[K_SY] = s->n[1] + 2 * s->ghost;
    bk[K_NCELLS] = (cl_long)f->ncells;
    bk[K_GZ] = s->gz;
  }
  set->nrows = rows;
  set->nitems = items;
cleanup:
  return st;
}

/* The copies of the set's arrays on the device, of elements each, zeroed. */
static tsr_status gpu_field_set_grid(gpu_field_set_t *set, const gpu_field_shape_t *s0,
                                     size_t n, size_t elements, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  opencl_context_t *cl = set->cl;
  const size_t array = elements * set->esize, all = array * (size_t)set->copies;
  char what[160];
  snprintf(what, sizeof what, "a field of %d component(s) of %zu block(s) of %dx%dx%d cells%s",
           s0->components, n, s0->n[0], s0->n[1], s0->n[2], n > 1 ? " (the first)" : "");
  TSR_TRY(opencl_check_memory(cl, all, array, what, err));
  for (int k = 0; k < set->copies; ++k) {
    TSR_TRY(gpu_buffer_create(cl, array, what, &set->grid[k], err));
    OPENCL_CHECK(clEnqueueFillBuffer((cl_command_queue)opencl_context_queue(cl),
                                     (cl_mem)set->grid[k].mem, &(cl_uint){0}, sizeof(cl_uint), 0,
                                     array, 0, NULL, NULL));
  }
cleanup:
  return st;
}

/* field.cl's tables of the set on the device, from the host's (send, recv: rows + 1 rows;
 * chunks: nchunks; comps: nc). */
static tsr_status gpu_field_set_upload(gpu_field_set_t *set, size_t n, const cl_long *send,
                                       const cl_long *recv, const int *chunks, size_t nchunks,
                                       const int *comps, int nc, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  opencl_context_t *cl = set->cl;
  const long long rows = set->nrows;
  TSR_TRY(gpu_field_table(cl, send, ((size_t)rows + 1) * R_ROW * sizeof *send, "field tables",
                          &set->tab_send, err));
  TSR_TRY(gpu_field_table(cl, recv, ((size_t)rows + 1) * R_ROW * sizeof *recv, "field tables",
                          &set->tab_recv, err));
  TSR_TRY(gpu_field_table(cl, chunks, nchunks * sizeof *chunks, "field tables", &set->chunks,
                          err));
  TSR_TRY(gpu_field_table(cl, set->blocks_host, n * K_ROW * sizeof *set->blocks_host,
                          "field tables", &set->blocks, err));
  TSR_TRY(gpu_field_table(cl, comps, (size_t)nc * sizeof *comps, "field tables", &set->comps,
                          err));
  TSR_TRY(gpu_field_table(cl, set->stream_host, sizeof set->stream_host, "field tables",
                          &set->stream, err));
  TSR_TRY(gpu_field_table(cl, set->src_dev, 2 * (size_t)rows * sizeof *set->src_dev,
                          "field tables", &set->src, err));
cleanup:
  return st;
}

/* The set's tables: its rows on the host and field.cl's tables on the device; *send_out
 * takes the send table on success. */
static tsr_status gpu_field_set_tables(gpu_field_set_t *set, size_t n, gpu_field_t *const *fields,
                                       const int *comps, int nc, const int *comp_first,
                                       const int *ncomp, cl_long **send_out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const long long rows = set->nrows;
  /* a row past the last (its first item: the count) ends the kernels' search */
  cl_long *send = calloc(((size_t)rows + 1) * R_ROW, sizeof *send);
  cl_long *recv = calloc(((size_t)rows + 1) * R_ROW, sizeof *recv);
  const size_t nchunks = (size_t)(set->nitems + ROW_CHUNK - 1) / ROW_CHUNK;
  int *chunks = calloc(nchunks + 1, sizeof *chunks);
  set->row_block = calloc((size_t)rows + 1, sizeof *set->row_block);
  set->row_slot = calloc((size_t)rows + 1, sizeof *set->row_slot);
  set->slot_row = malloc(n * DIRECTION_COUNT * sizeof *set->slot_row);
  set->out_dirs = calloc(n, sizeof *set->out_dirs);
  set->out_pos = malloc(n * DIRECTION_COUNT * sizeof *set->out_pos);

  set->src_host = calloc(2 * (size_t)rows + 2, sizeof *set->src_host);
  set->src_dev = calloc(2 * (size_t)rows + 2, sizeof *set->src_dev);
  TSR_CHECK(send && recv && chunks && set->row_block && set->row_slot && set->slot_row &&
                set->out_dirs && set->out_pos && set->src_host && set->src_dev,
            TSR_ERR_NOMEM, "out of memory for the tables of %zu GPU fields", n);
  long long row = 0, items = 0;
  for (size_t k = 0; k < n * DIRECTION_COUNT; ++k) {
    set->slot_row[k] = -1;
    set->out_pos[k] = -1;
  }
  for (size_t b = 0; b < n; ++b)
    TSR_TRY(gpu_field_boxes(fields[b], comp_first, ncomp, (int)b, set->rows, send, recv,
                            set->row_block, set->row_slot, set->slot_row, &row, &items, err));
  for (long long r = 0; r < rows; ++r) set->src_dev[2 * r] = set->src_host[2 * r] = -1;
  send[rows * R_ROW + R_ITEM] = recv[rows * R_ROW + R_ITEM] = items;
  for (long long r = 0, c = 0; r < rows; ++r) /* the row of each chunk's first item */
    for (; c < (long long)nchunks && c * ROW_CHUNK < send[(r + 1) * R_ROW + R_ITEM]; ++c)
      chunks[c] = (int)r;
  TSR_TRY(gpu_field_set_upload(set, n, send, recv, chunks, nchunks, comps, nc, err));
  *send_out = send;
  send = NULL;
cleanup:
  free(send);
  free(recv);
  free(chunks);
  return st;
}

/* One set of the fields fields[0..n). */
static tsr_status gpu_field_set_build(gpu_field_programs_t *progs, const gpu_field_shape_t *shapes,
                                      size_t n, gpu_field_t *const *fields, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  opencl_context_t *cl = progs->cl;
  const gpu_field_shape_t *s0 = &shapes[0];
  const size_t es = s0->esize;
  gpu_field_set_t *set = calloc(1, sizeof *set);
  int comps[DIRECTION_COUNT * 64 + 1], comp_first[DIRECTION_COUNT], ncomp[DIRECTION_COUNT];
  int nc = 0;
  cl_long *send = NULL;
  TSR_CHECK(set, TSR_ERR_NOMEM, "out of memory for a set of GPU fields");
  set->cl = cl;
  set->progs = progs;
  set->esize = es;
  set->copies = s0->copies;
  set->ghost = s0->ghost;
  set->nblocks = (int)n;
  set->rows = strcmp(opencl_context_desc(cl)->type, "cpu") == 0;
  set->in_place = s0->stream != NULL;
  TSR_TRY(gpu_field_set_stream(set, s0, err));
  set->fields = calloc(n, sizeof *set->fields);
  set->blocks_host = calloc(n * K_ROW, sizeof *set->blocks_host);
  TSR_CHECK(set->fields && set->blocks_host, TSR_ERR_NOMEM, "out of memory for a set of GPU fields");
  TSR_TRY(gpu_field_set_comps(s0, comps, comp_first, ncomp, &nc, err));
  size_t elements = 0, values = 0;
  TSR_TRY(gpu_field_set_place(set, shapes, n, fields, comp_first, ncomp, &elements, &values,
                              err));
  TSR_TRY(gpu_field_set_grid(set, s0, n, elements, err));
  TSR_TRY(gpu_field_set_tables(set, n, fields, comps, nc, comp_first, ncomp, &send, err));
  if (values > 0) { /* room in the process's message arrays */
    TSR_TRY(gpu_field_xfer_reserve(progs, values * es, err));
    set->msg_bytes = values * es;
  }
  /* the fields: views of their parts */
  for (size_t b = 0; b < n; ++b) {
    gpu_field_t *f = fields[b];
    const size_t bytes = f->ncells * (size_t)f->shape.components * es;
    for (int k = 0; k < set->copies; ++k)
      TSR_TRY(gpu_buffer_view(&set->grid[k], f->base * es, bytes, &f->grid[k], err));
    f->set = set;
    f->index = (int)b;
    set->fields[b] = f;
    set->refs++;
  }
  TSR_TRY(gpu_queue_finish(cl, err));
  set->send_host = send;
  send = NULL;
  set = NULL; /* the fields hold it */
cleanup:
  free(send);
  if (set && set->refs == 0) gpu_field_set_free(set);
  return st;
}

tsr_status gpu_field_create_set(gpu_field_programs_t *progs, const gpu_field_shape_t *shapes,
                                size_t n, gpu_field_t *const *fields, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (size_t b = 0; b < n; ++b) {
    gpu_field_t *f = fields[b];
    const gpu_field_shape_t *s = &shapes[b];
    memset(f, 0, sizeof *f);
    f->cl = progs->cl;
    f->progs = progs;
    f->shape = *s;
    f->shape.crossing = NULL;
    f->shape.ncrossing = NULL;
    f->stage = calloc(1, sizeof *f->stage);
    TSR_CHECK(f->stage, TSR_ERR_NOMEM, "out of memory for a GPU field");
    TSR_CHECK(s->copies == 1 || s->copies == 2, TSR_ERR_INTERNAL,
              "a GPU field of %d copies; 1 or 2 are allowed", s->copies);
    TSR_CHECK(s->components >= 1 && s->components <= 64, TSR_ERR_INTERNAL,
              "a GPU field of %d components; 1..64 are allowed", s->components);
    for (int a = 0; a < 3; ++a)
      TSR_CHECK(s->width[a] >= 0 && s->width[a] <= (a == 2 ? s->gz : s->ghost) &&
                    s->gz >= 0 && s->gz <= s->ghost,
                TSR_ERR_INTERNAL,
                "a GPU field exchanges %d ghost layers along axis %d and stores %d (%d along z)",
                s->width[a], a, s->ghost, s->gz);
  }
  if (n == 0) goto cleanup;
  gpu_field_program_t *prog;
  TSR_TRY(gpu_field_program(progs, shapes[0].esize, &prog, err));
  /* sets as large as the device's largest allocation allows */
  const uint64_t cap = opencl_context_desc(progs->cl)->max_alloc_bytes;
  size_t first = 0;
  uint64_t bytes = 0;
  for (size_t b = 0; b < n; ++b) {
    size_t cells = 0;
    uint64_t one = tsr_box_cells_gz(shapes[b].n, shapes[b].ghost, shapes[b].gz, &cells)
                       ? (uint64_t)cells * (uint64_t)shapes[b].components * shapes[b].esize +
                             opencl_context_desc(progs->cl)->base_align
                       : UINT64_MAX;
    if (b > first && bytes + one > cap) {
      TSR_TRY(gpu_field_set_build(progs, shapes + first, b - first, fields + first, err));
      first = b;
      bytes = 0;
    }
    bytes += one;
  }
  TSR_TRY(gpu_field_set_build(progs, shapes + first, n - first, fields + first, err));
cleanup:
  if (st != TSR_OK)
    for (size_t b = 0; b < n; ++b) gpu_field_release(fields[b]);
  return st;
}

tsr_status gpu_field_create(gpu_field_t *f, gpu_field_programs_t *progs,
                            const gpu_field_shape_t *shape, tsr_error_t *err) {
  return gpu_field_create_set(progs, shape, 1, &f, err);
}

void gpu_field_release(gpu_field_t *f) {
  if (f->set) {
    tsr_error_t ignored;
    /* nothing may be in flight on buffers about to go */
    if (gpu_queue_finish(f->cl, &ignored) != TSR_OK) { /* released all the same */ }
  }
  for (int k = 0; k < 2; ++k) gpu_buffer_free(&f->grid[k]);
  if (f->set) {
    f->set->fields[f->index] = NULL;
    if (--f->set->refs == 0) gpu_field_set_free(f->set);
  }
  free(f->stage);
  memset(f, 0, sizeof *f);
}

size_t gpu_field_copy_bytes(const gpu_field_t *f) { return f->grid[0].bytes; }

void *gpu_field_array(const gpu_field_t *f, int k) {
  return f->set->grid[f->set->copies == 2 ? k : 0].mem;
}

int gpu_field_same_set(const gpu_field_t *a, const gpu_field_t *b) {
  return a->set && a->set == b->set;
}

grid_dims_t gpu_field_dims(const gpu_field_t *f) {
  const gpu_field_shape_t *s = &f->shape;
  const ptrdiff_t g = s->ghost, sx = s->n[0] + 2 * g, sy = s->n[1] + 2 * g;
  grid_dims_t d = {.nx = s->n[0], .ny = s->n[1], .nz = s->n[2], .ncomp = s->components,
                   .ghost = s->ghost, .gz = s->gz, .layout = GRID_SOA, .sx = 1, .sy = sx,
                   .sz = sx * sy, .sc = (ptrdiff_t)f->ncells,
                   .elements = f->ncells * (size_t)s->components};
  d.origin = g + sx * (g + sy * (ptrdiff_t)s->gz);
  return d;
}

/* The copy holding the present values (a field streamed in place has one). */
static int gpu_field_present(const gpu_field_t *f) { return f->shape.copies == 2 ? f->cur : 0; }

/* Copies the cells both fields hold between the device layout (dev) and a CPU field. A
 * swapped field streamed in place: each value from or to where it lies (gpu_field_shape_t
 * .stream); values that lie outside the device's cells (ghost cells, directions leaving
 * the block) are left. */
static void gpu_field_convert(const gpu_field_t *f, uint8_t *dev, uint8_t *host,
                              const grid_dims_t *hd, int to_device) {
  const grid_dims_t dd = gpu_field_dims(f);
  const size_t es = f->shape.esize;
  const int g = hd->ghost < dd.ghost ? hd->ghost : dd.ghost;
  const int gz = hd->gz < dd.gz ? hd->gz : dd.gz, G[3] = {dd.ghost, dd.ghost, dd.gz};
  const int swapped = gpu_field_in_place(f) && f->cur;
  const int n[3] = {dd.nx, dd.ny, dd.nz};
  for (int c = 0; c < dd.ncomp; ++c)
    for (int z = -gz; z < dd.nz + gz; ++z)
      for (int y = -g; y < dd.ny + g; ++y)
        for (int x = -g; x < dd.nx + g; ++x) {
          int at[4] = {c, x, y, z};
          if (swapped) {
            const int *m = f->set->stream_host[c];
            int inside = 1;
            for (int a = 0; a < 4; ++a) at[a] = a ? at[a] + m[a] : m[0];
            for (int a = 0; a < 3; ++a) inside &= at[a + 1] >= -G[a] && at[a + 1] < n[a] + G[a];
            if (!inside) continue;
          }
          uint8_t *pd = dev + grid_index(&dd, at[1], at[2], at[3], at[0]) * es;
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
  if (dims->ghost < f->shape.ghost || dims->gz < f->shape.gz)
    TSR_TRY(gpu_buffer_read(f->cl, &f->grid[gpu_field_present(f)], 0, bytes, dev, NULL, err));
  gpu_field_convert(f, dev, (uint8_t *)(uintptr_t)values, dims, 1);
  for (int k = 0; k < f->shape.copies; ++k)
    TSR_TRY(gpu_buffer_write(f->cl, &f->grid[k], 0, bytes, dev, NULL, err));
  f->set->packed = 0;
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
  TSR_TRY(gpu_buffer_read(f->cl, &f->grid[gpu_field_present(f)], 0, bytes, dev, NULL, err));
  gpu_field_convert(f, dev, values, dims, 0);
cleanup:
  free(dev);
  return st;
}

int gpu_field_in_place(const gpu_field_t *f) { return f->set && f->set->in_place; }

void gpu_field_swap(gpu_field_t *f) {
  if (f->shape.copies == 2 || gpu_field_in_place(f)) f->cur ^= 1;
  f->set->packed = 0;
}

size_t gpu_field_slot_bytes(const gpu_field_t *f, int d) {
  return (f->slot_offset[d + 1] - f->slot_offset[d]) * f->shape.esize;
}

/* The flip of a launch on the set (its first field's present copy) after bringing the
 * block table's flip bits up to date: a block whose present copy differs from the
 * first's has its bit set (uploaded only when that changes, which blocks advancing
 * together never do). */
static tsr_status gpu_field_set_flip(gpu_field_set_t *s, cl_int *flip, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int ref = -1, changed = 0;
  for (int b = 0; b < s->nblocks; ++b) {
    const gpu_field_t *f = s->fields[b];
    if (!f) continue;
    if (ref < 0) ref = f->cur;
    const cl_long bit = (f->cur ^ ref) & 1;
    if (s->blocks_host[b * K_ROW + K_FLIP] != bit) {
      s->blocks_host[b * K_ROW + K_FLIP] = bit;
      changed = 1;
    }
  }
  if (changed)
    TSR_TRY(gpu_buffer_write(s->cl, &s->blocks, 0,
                             (size_t)s->nblocks * K_ROW * sizeof *s->blocks_host, s->blocks_host,
                             NULL, err));
  *flip = ref < 0 ? 0 : ref;
cleanup:
  return st;
}

/* Arguments of field.cl's kernels from the tables on: tab, [src], blocks, comps, chunks,
 * nitems, ghost. */
static tsr_status gpu_field_table_args(gpu_field_set_t *s, cl_kernel k, cl_uint a,
                                       const gpu_buffer_t *tab, const gpu_buffer_t *src,
                                       tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const cl_long nitems = s->nitems, ghost = s->ghost;
  OPENCL_CHECK(clSetKernelArg(k, a++, sizeof(cl_mem), &tab->mem));
  if (src) OPENCL_CHECK(clSetKernelArg(k, a++, sizeof(cl_mem), &src->mem));
  OPENCL_CHECK(clSetKernelArg(k, a++, sizeof(cl_mem), &s->blocks.mem));
  OPENCL_CHECK(clSetKernelArg(k, a++, sizeof(cl_mem), &s->comps.mem));
  OPENCL_CHECK(clSetKernelArg(k, a++, sizeof(cl_mem), &s->chunks.mem));
  OPENCL_CHECK(clSetKernelArg(k, a++, sizeof nitems, &nitems));
  OPENCL_CHECK(clSetKernelArg(k, a++, sizeof ghost, &ghost));
cleanup:
  return st;
}

/* Arguments a, a + 1 of both kernels: the in-place table and whether the set is. */
static tsr_status gpu_field_stream_args(gpu_field_set_t *s, cl_kernel k, cl_uint a,
                                        tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const cl_int in_place = s->in_place;
  OPENCL_CHECK(clSetKernelArg(k, a, sizeof(cl_mem), &s->stream.mem));
  OPENCL_CHECK(clSetKernelArg(k, a + 1, sizeof in_place, &in_place));
cleanup:
  return st;
}

/* Arguments 0..2: the two copies and the flip. */
static tsr_status gpu_field_grid_args(gpu_field_set_t *s, cl_kernel k, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_int flip = 0;
  TSR_TRY(gpu_field_set_flip(s, &flip, err));
  OPENCL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &s->grid[0].mem));
  OPENCL_CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &s->grid[s->copies == 2].mem));
  OPENCL_CHECK(clSetKernelArg(k, 2, sizeof flip, &flip));
cleanup:
  return st;
}

/* The table of field_pack for the slots extracted (out_dirs), their values one after
 * the other from value 0 in row order (out_pos), and its chunk table. */
static tsr_status gpu_field_plan_out(gpu_field_set_t *s, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_long *tab = calloc(((size_t)s->nrows + 1) * R_ROW, sizeof *tab);
  int *chunks = NULL;
  TSR_CHECK(tab, TSR_ERR_NOMEM, "out of memory planning the GPU messages to the host");
  long long rows = 0, items = 0, values = 0;
  for (size_t k = 0; k < (size_t)s->nblocks * DIRECTION_COUNT; ++k) s->out_pos[k] = -1;
  for (long long r = 0; r < s->nrows; ++r) {
    const int b = s->row_block[r], d = s->row_slot[r];
    if (!((s->out_dirs[b] >> d) & 1u)) continue;
    const cl_long *from = s->send_host + r * R_ROW;
    const gpu_field_t *f = s->fields[b];
    const long long rel = from[R_VALUE] - (long long)(f->msg_first + f->slot_offset[d]);
    if (s->out_pos[(size_t)b * DIRECTION_COUNT + (size_t)d] < 0) /* the slot's first box */
      s->out_pos[(size_t)b * DIRECTION_COUNT + (size_t)d] = values;
    cl_long *t = tab + rows * R_ROW;
    memcpy(t, from, R_ROW * sizeof *t);
    t[R_ITEM] = items;
    t[R_VALUE] = s->out_pos[(size_t)b * DIRECTION_COUNT + (size_t)d] + rel;
    items += (s->rows ? 1 : from[R_EXT]) * from[R_EXT + 1] * from[R_EXT + 2];
    values = t[R_VALUE] + from[R_EXT] * from[R_EXT + 1] * from[R_EXT + 2] * from[R_NCOMP];
    ++rows;
  }
  tab[rows * R_ROW + R_ITEM] = items;
  const size_t nchunks = (size_t)(items + ROW_CHUNK - 1) / ROW_CHUNK;
  chunks = calloc(nchunks + 1, sizeof *chunks);
  TSR_CHECK(chunks, TSR_ERR_NOMEM, "out of memory planning the GPU messages to the host");
  for (long long r = 0, c = 0; r < rows; ++r)
    for (; c < (long long)nchunks && c * ROW_CHUNK < tab[(r + 1) * R_ROW + R_ITEM]; ++c)
      chunks[c] = (int)r;
  gpu_buffer_free(&s->tab_host);
  gpu_buffer_free(&s->chunks_host);
  TSR_TRY(gpu_field_table(s->cl, tab, ((size_t)rows + 1) * R_ROW * sizeof *tab, "field tables",
                          &s->tab_host, err));
  TSR_TRY(gpu_field_table(s->cl, chunks, nchunks * sizeof *chunks, "field tables",
                          &s->chunks_host, err));
  s->host_items = items;
  s->host_values = values;
cleanup:
  free(tab);
  free(chunks);
  return st;
}

/* Where any listed field of set s is extracted from: packs the slots extracted of every
 * block of the set (one launch) and reads them to the host in one transfer, left in
 * flight. */
static tsr_status gpu_field_set_out(gpu_field_set_t *s, gpu_field_t *const *fields, size_t n,
                                    const uint32_t *extract_dirs, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_field_program_t *p;
  int any = 0, grown = 0;
  for (size_t k = 0; k < n && extract_dirs; ++k) {
    const gpu_field_t *f = fields[k];
    if (f->set != s || !extract_dirs[k]) continue;
    any = 1;
    if (extract_dirs[k] & ~s->out_dirs[f->index]) grown = 1;
    s->out_dirs[f->index] |= extract_dirs[k];
  }
  if (grown) TSR_TRY(gpu_field_plan_out(s, err));
  s->packed = 1;
  /* neighbours on this device read the cells themselves (field_unpack) */
  if (!any || s->host_items == 0) goto cleanup;
  gpu_field_xfer_t *x = &s->progs->xfer;
  TSR_TRY(gpu_field_xfer_place_out(x, (size_t)s->host_values * s->esize, &s->out_at, err));
  TSR_TRY(gpu_field_program(s->progs, s->esize, &p, err));
  TSR_TRY(gpu_field_grid_args(s, p->pack, err));
  OPENCL_CHECK(clSetKernelArg(p->pack, 3, sizeof(cl_mem), &x->out.mem));
  const cl_long nitems = s->host_items, ghost = s->ghost;
  OPENCL_CHECK(clSetKernelArg(p->pack, 4, sizeof(cl_mem), &s->tab_host.mem));
  OPENCL_CHECK(clSetKernelArg(p->pack, 5, sizeof(cl_mem), &s->blocks.mem));
  OPENCL_CHECK(clSetKernelArg(p->pack, 6, sizeof(cl_mem), &s->comps.mem));
  OPENCL_CHECK(clSetKernelArg(p->pack, 7, sizeof(cl_mem), &s->chunks_host.mem));
  OPENCL_CHECK(clSetKernelArg(p->pack, 8, sizeof nitems, &nitems));
  OPENCL_CHECK(clSetKernelArg(p->pack, 9, sizeof ghost, &ghost));
  const cl_int rows = s->rows;
  OPENCL_CHECK(clSetKernelArg(p->pack, 10, sizeof rows, &rows));
  TSR_TRY(gpu_field_stream_args(s, p->pack, 11, err));
  const cl_long obase = (cl_long)(s->out_at / s->esize);
  OPENCL_CHECK(clSetKernelArg(p->pack, 13, sizeof obase, &obase));
  TSR_TRY(opencl_launch_items(s->cl, p->pack, (size_t)s->host_items, "field_pack", err));
  /* the read: one for every set of the process, at the first wait (stage_wait) */
cleanup:
  return st;
}

tsr_status gpu_field_stage_out(gpu_field_t *const *fields, size_t n, const uint32_t *extract_dirs,
                               tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (size_t k = 0; k < n; ++k) {
    size_t j = 0; /* each set once */
    while (j < k && fields[j]->set != fields[k]->set) ++j;
    if (j == k) TSR_TRY(gpu_field_set_out(fields[k]->set, fields, n, extract_dirs, err));
  }
cleanup:
  return st;
}

tsr_status gpu_field_stage_wait(gpu_field_t *f, tsr_error_t *err) {
  return gpu_field_xfer_out_ready(f->set->progs, err);
}

tsr_status gpu_field_extract(gpu_field_t *f, int d, uint8_t *out, size_t len, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(f->set->packed && d >= 0 && d < DIRECTION_COUNT &&
                len == gpu_field_slot_bytes(f, d),
            TSR_ERR_INTERNAL, "GPU field extraction in direction %d: %zu bytes asked, %zu in "
            "the slot%s", d, len, d >= 0 && d < DIRECTION_COUNT ? gpu_field_slot_bytes(f, d) : 0,
            f->set->packed ? "" : " (not staged out)");
  const long long pos = f->set->out_pos[(size_t)f->index * DIRECTION_COUNT + (size_t)d];
  TSR_CHECK(len == 0 || pos >= 0, TSR_ERR_INTERNAL, "GPU field extraction in direction %d, "
            "which the exchange did not announce to stage_out", d);
  TSR_TRY(gpu_field_xfer_out_ready(f->set->progs, err));
  if (len)
    memcpy(out, (const uint8_t *)f->set->progs->xfer.pin_out.host + f->set->out_at +
                    (size_t)pos * f->shape.esize, len);
cleanup:
  return st;
}

tsr_status gpu_field_insert(gpu_field_t *f, int d, const uint8_t *in, size_t len,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_field_set_t *s = f->set;
  TSR_CHECK(d >= 0 && d < DIRECTION_COUNT && len == gpu_field_slot_bytes(f, d), TSR_ERR_CORRUPT,
            "GPU field insertion from direction %d: %zu bytes, expected %zu", d, len,
            d >= 0 && d < DIRECTION_COUNT ? gpu_field_slot_bytes(f, d) : 0);
  if (len == 0) return st;
  /* after those inserted before in this exchange, of any set: the insertions come in the
     same order every exchange, so a slot keeps its place and the unpack its table */
  gpu_field_xfer_t *x = &s->progs->xfer;
  size_t at = 0;
  TSR_TRY(gpu_field_xfer_place_in(x, len, &at, err));
  memcpy((uint8_t *)x->pin_in.host + at, in, len);
  f->stage->src[d] = 0;
  f->stage->src_offset[d] = at / f->shape.esize;
  f->stage->mask |= 1u << d;
  s->host_in = 1;
cleanup:
  return st;
}

tsr_status gpu_field_copy_from(gpu_field_t *to, const gpu_field_t *from, int d, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(from->set && from->set == to->set && d >= 0 && d < DIRECTION_COUNT &&
                gpu_field_slot_bytes(from, d) == gpu_field_slot_bytes(to, d),
            TSR_ERR_INTERNAL, "GPU field copy in direction %d: %s", d,
            from->set != to->set ? "the blocks are in different sets"
                                 : "the blocks differ in slice");
  if (gpu_field_slot_bytes(to, d) == 0) return st;
  to->stage->src[d] = 2; /* the unpack reads the sender's cells */
  to->stage->src_offset[d] = (size_t)from->index;
  to->stage->mask |= 1u << d;
cleanup:
  return st;
}

/* Writes what came through the host for set s (one transfer), then unpacks every marked
 * slot of its blocks (one launch); the source table goes to the device only where it
 * differs from the last exchange's. */
static tsr_status gpu_field_set_in(gpu_field_set_t *s, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_field_program_t *p;
  int any = 0;
  gpu_field_xfer_t *xf = &s->progs->xfer;
  if (s->host_in) /* one write of every set's messages through the host, at the first */
    TSR_TRY(gpu_field_xfer_in_send(s->progs, err));
  for (long long r = 0; r < s->nrows; ++r) {
    gpu_field_t *f = s->fields[s->row_block[r]];
    const int d = s->row_slot[r];
    cl_long *x = s->src_host + 2 * r;
    if (f && ((f->stage->mask >> d) & 1u)) {
      x[0] = f->stage->src[d];
      x[1] = (cl_long)f->stage->src_offset[d];
      if (x[0] == 2) /* the sender's box of the same number in the same slot */
        x[1] = s->slot_row[x[1] * DIRECTION_COUNT + d] +
               (r - s->slot_row[s->row_block[r] * DIRECTION_COUNT + d]);
      any = 1;
    } else {
      x[0] = -1;
      x[1] = 0;
    }
  }
  if (!any) goto cleanup;
  const size_t src_bytes = 2 * (size_t)s->nrows * sizeof *s->src_host;
  if (memcmp(s->src_host, s->src_dev, src_bytes) != 0) {
    TSR_TRY(gpu_buffer_write(s->cl, &s->src, 0, src_bytes, s->src_host, NULL, err));
    memcpy(s->src_dev, s->src_host, src_bytes);
  }
  TSR_TRY(gpu_field_program(s->progs, s->esize, &p, err));
  cl_kernel k = p->unpack;
  TSR_TRY(gpu_field_grid_args(s, k, err));
  /* an empty message array is a NULL buffer (allowed for __global arguments) */
  OPENCL_CHECK(clSetKernelArg(k, 3, sizeof(cl_mem), xf->in.mem ? &xf->in.mem : NULL));
  OPENCL_CHECK(clSetKernelArg(k, 4, sizeof(cl_mem), xf->out.mem ? &xf->out.mem : NULL));
  TSR_TRY(gpu_field_table_args(s, k, 5, &s->tab_recv, &s->src, err));
  OPENCL_CHECK(clSetKernelArg(k, 12, sizeof(cl_mem), &s->tab_send.mem));
  const cl_int rows = s->rows;
  OPENCL_CHECK(clSetKernelArg(k, 13, sizeof rows, &rows));
  TSR_TRY(gpu_field_stream_args(s, k, 14, err));
  TSR_TRY(opencl_launch_items(s->cl, k, (size_t)s->nitems, "field_unpack", err));
  gpu_event_release(&xf->in_free);
  TSR_TRY(gpu_buffer_marker(s->cl, &xf->in_free, err));
cleanup:
  for (int b = 0; b < s->nblocks; ++b)
    if (s->fields[b]) s->fields[b]->stage->mask = 0;
  s->host_in = 0;
  return st;
}

tsr_status gpu_field_stage_in(gpu_field_t *const *fields, size_t n, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (size_t k = 0; k < n; ++k) {
    size_t j = 0; /* each set once */
    while (j < k && fields[j]->set != fields[k]->set) ++j;
    if (j == k) TSR_TRY(gpu_field_set_in(fields[k]->set, err));
  }
cleanup:
  return st;
}

/* ---- kernels over many blocks ---- */

static int gpu_field_group_of(const gpu_field_group_t *g, gpu_field_t *const *f, const void *key,
                              int nf) {
  if (key != g->key) return 0;
  for (int k = 0; k < nf; ++k)
    if (f[k] && memcmp(f[k]->shape.n, g->n, sizeof g->n) != 0) return 0;
  for (int k = 0; k < nf; ++k)
    if (g->first[k] ? !f[k] || !gpu_field_same_set(f[k], g->first[k]) : f[k] != NULL) return 0;
  return 1;
}

void gpu_field_groups_clear(gpu_field_groups_t *gs) {
  for (size_t k = 0; gs->group && k < gs->count; ++k) {
    gpu_field_group_t *g = &gs->group[k];
    for (int f = 0; g->bases && f < gs->nfields; ++f) gpu_buffer_free(&g->bases[f]);
    free(g->bases);
    gpu_buffer_free(&g->boxes);
    free(g->first);
    free(g->members);
  }
  free(gs->group);
  memset(gs, 0, sizeof *gs);
}

tsr_status gpu_field_groups_boxes(gpu_field_groups_t *gs, opencl_context_t *cl,
                                  const int *boxes, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_int *tab = NULL;
  for (size_t k = 0; k < gs->count; ++k) {
    gpu_field_group_t *g = &gs->group[k];
    if (g->boxes.mem) continue;
    const size_t bytes = 6 * g->nblocks * sizeof *tab;
    tab = malloc(bytes);
    TSR_CHECK(tab, TSR_ERR_NOMEM, "out of memory for the inner boxes of GPU blocks");
    for (size_t j = 0; j < g->nblocks; ++j)
      for (size_t a = 0; a < 6; ++a) tab[6 * j + a] = (cl_int)boxes[6 * g->members[j] + a];
    TSR_TRY(gpu_buffer_create(cl, bytes, "inner boxes", &g->boxes, err));
    TSR_TRY(gpu_buffer_write(cl, &g->boxes, 0, bytes, tab, NULL, err));
    free(tab);
    tab = NULL;
  }
cleanup:
  free(tab);
  return st;
}

tsr_status gpu_field_groups_make(gpu_field_t *const *fields, const void *const *keys,
                                 size_t nblocks, int nfields, gpu_field_groups_t *out,
                                 tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_long *tab = NULL;
  memset(out, 0, sizeof *out);
  out->nfields = nfields;
  out->group = calloc(nblocks ? nblocks : 1, sizeof *out->group);
  tab = calloc(nblocks ? nblocks : 1, sizeof *tab);
  TSR_CHECK(out->group && tab && nfields >= 1, TSR_ERR_NOMEM, "out of memory grouping GPU blocks");
  for (size_t b = 0; b < nblocks; ++b) {
    gpu_field_t *const *f = fields + b * (size_t)nfields;
    const void *key = keys ? keys[b] : NULL;
    int any = 0;
    for (int k = 0; k < nfields; ++k) any |= f[k] != NULL;
    TSR_CHECK(any, TSR_ERR_INTERNAL, "a GPU block of a group without any field");
    size_t g = 0;
    while (g < out->count && !gpu_field_group_of(&out->group[g], f, key, nfields)) ++g;
    gpu_field_group_t *gr = &out->group[g];
    if (g == out->count) {
      out->count++;
      gr->key = key;
      gr->first = calloc((size_t)nfields, sizeof *gr->first);
      gr->bases = calloc((size_t)nfields, sizeof *gr->bases);
      gr->members = calloc(nblocks, sizeof *gr->members);
      TSR_CHECK(gr->first && gr->bases && gr->members, TSR_ERR_NOMEM,
                "out of memory grouping GPU blocks");
      for (int k = 0; k < nfields; ++k) gr->first[k] = f[k];
      for (int k = 0; k < nfields; ++k)
        if (f[k]) memcpy(gr->n, f[k]->shape.n, sizeof gr->n);
    }
    gr->members[gr->nblocks++] = b;
  }
  for (size_t g = 0; g < out->count; ++g) {
    gpu_field_group_t *gr = &out->group[g];
    for (int k = 0; k < nfields; ++k) {
      if (!gr->first[k]) continue;
      for (size_t j = 0; j < gr->nblocks; ++j)
        tab[j] = (cl_long)fields[gr->members[j] * (size_t)nfields + (size_t)k]->base;
      TSR_TRY(gpu_field_table(gr->first[k]->cl, tab, gr->nblocks * sizeof *tab, "block tables",
                              &gr->bases[k], err));
    }
  }
cleanup:
  free(tab);
  if (st != TSR_OK) gpu_field_groups_clear(out);
  return st;
}
