#include "lbm_gpu.h"

#include <stdlib.h>
#include <string.h>

#include "gpu_buffer.h"
#include "gpu_lbm.h"
#include "lbm_collide.h"
#include "lbm_impl.h"

struct lbm_gpu_env {
  opencl_context_t *cl;
  char *source_dir; /* NULL: built in */
  gpu_lbm_t **progs;
  gpu_lbm_spec_t *specs;
  int nprogs;
};

tsr_status lbm_gpu_env_create(opencl_context_t *cl, const char *source_dir, lbm_gpu_env_t **out,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_gpu_env_t *e = calloc(1, sizeof *e);
  *out = NULL;
  TSR_CHECK(e, TSR_ERR_NOMEM, "out of memory for the OpenCL environment");
  e->cl = cl;
  if (source_dir && source_dir[0]) {
    e->source_dir = malloc(strlen(source_dir) + 1);
    TSR_CHECK(e->source_dir, TSR_ERR_NOMEM, "out of memory for the OpenCL environment");
    strcpy(e->source_dir, source_dir);
  }
  *out = e;
  e = NULL;
cleanup:
  lbm_gpu_env_free(&e);
  return st;
}

void lbm_gpu_env_free(lbm_gpu_env_t **env) {
  if (!env || !*env) return;
  lbm_gpu_env_t *e = *env;
  for (int k = 0; k < e->nprogs; ++k) gpu_lbm_free(&e->progs[k]);
  free(e->progs);
  free(e->specs);
  free(e->source_dir);
  free(e);
  *env = NULL;
}

opencl_context_t *lbm_gpu_env_context(const lbm_gpu_env_t *env) { return env->cl; }

/* The program for blocks of this size, built on first use. */
static tsr_status lbm_gpu_program(const lbm_ctx_t *c, const int size[3], gpu_lbm_t **out,
                                  tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_gpu_env_t *e = c->gpu;
  gpu_lbm_spec_t spec;
  memset(&spec, 0, sizeof spec);
  for (int a = 0; a < 3; ++a) spec.n[a] = size[a];
  spec.dp = c->opts.precision == LBM_DP;
  spec.lattice = c->lattice;
  spec.trt = c->opts.collision == LBM_TRT;
  spec.force = c->params.use_force;
  for (int k = 0; k < e->nprogs; ++k) {
    const gpu_lbm_spec_t *s = &e->specs[k];
    if (memcmp(s->n, spec.n, sizeof spec.n) == 0 && s->dp == spec.dp && s->trt == spec.trt &&
        s->force == spec.force) {
      *out = e->progs[k];
      return st;
    }
  }
  spec.source_dir = e->source_dir;
  for (int d = 0; d < GPU_LBM_SLOTS; ++d) {
    int lo[3], hi[3];
    gpu_lbm_slice_t *snd = &spec.send[d], *rcv = &spec.recv[d];
    /* one box: the lattice's reach is 1, no block is thinner; none where nothing crosses */
    const int nb = direction_slice_boxes(size, c->width, d);
    TSR_CHECK(nb <= 1, TSR_ERR_INTERNAL,
              "lattice %s: the ghost slice of direction %s is %d boxes; the OpenCL ghost tables "
              "hold one", c->lattice->name, direction_name(d), nb);
    if (nb == 1) {
      direction_send_box(size, c->width, d, 0, lo, hi);
      for (int a = 0; a < 3; ++a) {
        snd->lo[a] = lo[a];
        snd->extent[a] = hi[a] - lo[a];
      }
      direction_recv_box(size, c->width, d, 0, lo, hi);
      for (int a = 0; a < 3; ++a) {
        rcv->lo[a] = lo[a];
        rcv->extent[a] = hi[a] - lo[a];
      }
    }
    TSR_CHECK(c->ncomps[d] <= GPU_LBM_MAX_COMPS, TSR_ERR_INTERNAL,
              "lattice %s: %d PDFs cross direction %s, the OpenCL ghost tables hold %d",
              c->lattice->name, c->ncomps[d], direction_name(d), GPU_LBM_MAX_COMPS);
    snd->ncomps = rcv->ncomps = c->ncomps[d];
    for (int k = 0; k < c->ncomps[d]; ++k) snd->comps[k] = rcv->comps[k] = c->comps[d][k];
  }
  double consts[LBM_CONSTS_COUNT(LATTICE_MAX_Q)]; /* room for either precision */
  c->kernels[GRID_AOS]->constants(&c->params, spec.trt, consts);
  gpu_lbm_t **gp = realloc(e->progs, (size_t)(e->nprogs + 1) * sizeof *gp);
  TSR_CHECK(gp, TSR_ERR_NOMEM, "out of memory for GPU programs");
  e->progs = gp;
  gpu_lbm_spec_t *sp = realloc(e->specs, (size_t)(e->nprogs + 1) * sizeof *sp);
  TSR_CHECK(sp, TSR_ERR_NOMEM, "out of memory for GPU programs");
  e->specs = sp;
  TSR_TRY(gpu_lbm_create(e->cl, &spec, consts, &e->progs[e->nprogs], err));
  e->specs[e->nprogs] = spec;
  *out = e->progs[e->nprogs++];
cleanup:
  return st;
}

/* ---- GPU blocks ---- */

/* What changes during an exchange (extraction gets the block as const). */
typedef struct lbm_gpu_stage {
  void *out_event;                     /* read of the pack buffer into pin_out in flight */
  void *in_event;                      /* write of pin_in into the message buffer in flight */
  int packed;                          /* the pack buffer holds this exchange's values */
  int host_in;                         /* insertions filled pin_in */
  uint32_t mask;                       /* slots to unpack */
  gpu_lbm_source_t src[GPU_LBM_SLOTS];
} lbm_gpu_stage_t;

typedef struct lbm_gpu_block {
  lbm_block_t host; /* first member: lbm_block_moments reads flags, rho and u from it;
                       src, dst and links stay NULL (they live on the device) */
  opencl_context_t *cl;
  gpu_lbm_t *prog; /* borrowed from the environment */
  gpu_lbm_field_t field;
  gpu_lbm_links_t links;
  gpu_buffer_t out, in, moments;
  gpu_buffer_t flags, first; /* for the stability check on the device */
  gpu_pinned_t pin_out, pin_in;
  lbm_gpu_stage_t *stage;
} lbm_gpu_block_t;

static void lbm_gpu_block_release(void *data, void *vctx) {
  lbm_gpu_block_t *gb = data;
  if (!gb) return;
  if (gb->cl) {
    tsr_error_t ignored;
    /* nothing may be in flight on buffers about to go */
    if (gpu_queue_finish(gb->cl, &ignored) != TSR_OK) { /* released all the same */ }
  }
  if (gb->stage) {
    tsr_error_t ignored;
    if (gpu_event_wait(&gb->stage->out_event, &ignored) != TSR_OK) { /* as above */ }
    if (gpu_event_wait(&gb->stage->in_event, &ignored) != TSR_OK) { /* as above */ }
    free(gb->stage);
  }
  gpu_lbm_field_free(&gb->field);
  gpu_lbm_links_free(&gb->links);
  gpu_buffer_free(&gb->out);
  gpu_buffer_free(&gb->in);
  gpu_buffer_free(&gb->moments);
  gpu_buffer_free(&gb->flags);
  gpu_buffer_free(&gb->first);
  gpu_pinned_free(&gb->pin_out);
  gpu_pinned_free(&gb->pin_in);
  lbm_block_clear(&gb->host);
  free(gb);
}

static tsr_status lbm_gpu_alloc(const block_info_t *b, void *vctx, void **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  lbm_gpu_block_t *gb = NULL;
  lbm_block_t *h = NULL;
  size_t *to = NULL, *from = NULL;
  double *extra = NULL;
  *out = NULL;
  TSR_CHECK(c->gpu, TSR_ERR_INVALID,
            "BlockID %d is to run on hs gpu, but this process has no OpenCL device", (int)b->id);
  gb = calloc(1, sizeof *gb);
  TSR_CHECK(gb, TSR_ERR_NOMEM, "out of memory for the LBM data of BlockID %d", (int)b->id);
  gb->stage = calloc(1, sizeof *gb->stage);
  TSR_CHECK(gb->stage, TSR_ERR_NOMEM, "out of memory for the LBM data of BlockID %d", (int)b->id);
  /* the host builds the block exactly as for the CPU: initial PDFs, flags, links */
  TSR_TRY(lbm_alloc_layout(b, c, GRID_AOS, &h, err));
  gb->host = *h;
  free(h);
  h = NULL;
  if (!gb->host.src) goto done; /* solid: nothing on the device */
  gb->cl = c->gpu->cl;
  TSR_TRY(lbm_gpu_program(c, b->size, &gb->prog, err));
  TSR_TRY(gpu_lbm_field_create(gb->prog, &gb->field, err));
  TSR_TRY(gpu_lbm_upload(gb->prog, &gb->field, gb->host.src, err));
  free(gb->host.src);
  free(gb->host.dst);
  gb->host.src = gb->host.dst = NULL;

  size_t n = gb->host.nlinks;
  if (n) {
    to = malloc(n * sizeof *to);
    from = malloc(n * sizeof *from);
    extra = malloc(n * sizeof *extra);
    TSR_CHECK(to && from && extra, TSR_ERR_NOMEM, "out of memory for the links of BlockID %d",
              (int)b->id);
    for (size_t k = 0; k < n; ++k) {
      to[k] = gb->host.links[k].to;
      from[k] = gb->host.links[k].from;
      extra[k] = gb->host.links[k].extra;
    }
  }
  TSR_TRY(gpu_lbm_links_create(gb->prog, to, from, extra, n, &gb->links, err));
  free(gb->host.links);
  gb->host.links = NULL;

  size_t msg = gpu_lbm_message_values(gb->prog) * gpu_lbm_esize(gb->prog);
  TSR_TRY(gpu_buffer_create(gb->cl, msg, "ghost messages (pack)", &gb->out, err));
  TSR_TRY(gpu_buffer_create(gb->cl, msg, "ghost messages (unpack)", &gb->in, err));
  TSR_TRY(gpu_pinned_create(gb->cl, msg, "ghost messages to the host", &gb->pin_out, err));
  TSR_TRY(gpu_pinned_create(gb->cl, msg, "ghost messages from the host", &gb->pin_in, err));
  TSR_TRY(gpu_buffer_create(gb->cl, gpu_lbm_moments_bytes(gb->prog), "moments", &gb->moments,
                            err));
  size_t cells = lbm_cells(&gb->host.dims);
  TSR_TRY(gpu_buffer_create(gb->cl, cells, "cell flags", &gb->flags, err));
  TSR_TRY(gpu_buffer_write(gb->cl, &gb->flags, 0, cells, gb->host.flags, NULL, err));
  TSR_TRY(gpu_buffer_create(gb->cl, sizeof(int32_t), "stability check", &gb->first, err));
done:
  gb->host.src = gb->host.dst = NULL;
  *out = gb;
  gb = NULL;
cleanup:
  if (st != TSR_OK) tsr_error_prefix(err, "BlockID %d on OpenCL device", (int)b->id);
  lbm_block_release(h, NULL);
  lbm_gpu_block_release(gb, NULL);
  free(to);
  free(from);
  free(extra);
  return st;
}

static lbm_gpu_block_t *lbm_gpu_get(block_data_t *data, const lbm_ctx_t *c) {
  return block_data_get(data, c->pdf_id);
}

/* ---- ghost exchange ---- */

static tsr_status lbm_gpu_stage_out(const block_info_t *b, void *data, int host_bound, void *vctx,
                                    tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_gpu_block_t *gb = data;
  lbm_gpu_stage_t *s = gb->stage;
  TSR_TRY(gpu_event_wait(&s->out_event, err));
  TSR_TRY(gpu_lbm_pack(gb->prog, &gb->field, &gb->out, err));
  s->packed = 1;
  if (host_bound) /* one transfer of every face and edge, left in flight */
    TSR_TRY(gpu_buffer_read(gb->cl, &gb->out, 0, gb->out.bytes, gb->pin_out.host, &s->out_event,
                            err));
cleanup:
  return st;
}

/* The transfer stage_out left in flight has reached pin_out (comm times it apart from
 * the extraction, which waits as well: cheap once this has run). */
static tsr_status lbm_gpu_stage_wait(const block_info_t *b, void *data, int host_bound,
                                     void *vctx, tsr_error_t *err) {
  lbm_gpu_block_t *gb = data;
  return gpu_event_wait(&gb->stage->out_event, err);
}

/* Byte offset of a direction's values in the message buffers. */
static size_t lbm_gpu_offset(const lbm_gpu_block_t *gb, int dir) {
  return gpu_lbm_slot_offset(gb->prog, dir) * gpu_lbm_esize(gb->prog);
}

static tsr_status lbm_gpu_extract(const block_info_t *b, const void *data, int dir, uint8_t *out,
                                  size_t cap, size_t *written, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_gpu_block_t *gb = data;
  size_t need = lbm_size(b, dir, vctx);
  TSR_CHECK(need <= cap && dir < GPU_LBM_SLOTS && gb->stage->packed, TSR_ERR_INTERNAL,
            "LBM extraction of GPU BlockID %d in direction %s: %zu bytes needed, %zu given%s",
            (int)b->id, direction_name(dir), need, cap,
            gb->stage->packed ? "" : " (not staged out)");
  TSR_CHECK(need == gpu_lbm_slot_values(gb->prog, dir) * gpu_lbm_esize(gb->prog),
            TSR_ERR_INTERNAL, "LBM extraction of GPU BlockID %d: message layouts disagree",
            (int)b->id);
  TSR_TRY(gpu_event_wait(&gb->stage->out_event, err));
  memcpy(out, (const uint8_t *)gb->pin_out.host + lbm_gpu_offset(gb, dir), need);
  *written = need;
cleanup:
  return st;
}

static tsr_status lbm_gpu_insert(const block_info_t *b, void *data, int dir, const uint8_t *in,
                                 size_t len, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_gpu_block_t *gb = data;
  lbm_gpu_stage_t *s = gb->stage;
  size_t need = lbm_size(b, dir, vctx);
  TSR_CHECK(need == len && dir < GPU_LBM_SLOTS && gb->prog, TSR_ERR_CORRUPT,
            "LBM insertion into GPU BlockID %d from direction %s: %zu bytes, expected %zu",
            (int)b->id, direction_name(dir), len, need);
  TSR_TRY(gpu_event_wait(&s->in_event, err)); /* the last write has left pin_in */
  memcpy((uint8_t *)gb->pin_in.host + lbm_gpu_offset(gb, dir), in, len);
  s->src[dir] = (gpu_lbm_source_t){&gb->in, gpu_lbm_slot_offset(gb->prog, dir)};
  s->mask |= 1u << dir;
  s->host_in = 1;
cleanup:
  return st;
}

static tsr_status lbm_gpu_stage_in(const block_info_t *b, void *data, int host_bound, void *vctx,
                                   tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_gpu_block_t *gb = data;
  lbm_gpu_stage_t *s = gb->stage;
  if (s->host_in) /* one transfer of every slot that came through the host */
    TSR_TRY(gpu_buffer_write(gb->cl, &gb->in, 0, gb->in.bytes, gb->pin_in.host, &s->in_event, err));
  TSR_TRY(gpu_lbm_unpack(gb->prog, &gb->field, s->src, s->mask, err));
cleanup:
  s->mask = 0;
  s->host_in = 0;
  return st;
}

/* Same device: the receiver's unpack reads the sender's pack buffer; no host trip. */
static tsr_status lbm_gpu_copy(const registry_copy_task_t *tasks, size_t n, void *vctx,
                               tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (size_t k = 0; k < n; ++k) {
    const registry_copy_task_t *t = &tasks[k];
    const lbm_gpu_block_t *from = t->src_data;
    lbm_gpu_block_t *to = t->dst_data;
    TSR_CHECK(from->prog && to->prog && from->stage->packed && t->dir < GPU_LBM_SLOTS &&
              from->cl == to->cl,
              TSR_ERR_INTERNAL, "GPU copy BlockID %d -> %d in direction %s: blocks not ready",
              (int)t->src->id, (int)t->dst->id, direction_name(t->dir));
    TSR_CHECK(gpu_lbm_slot_values(from->prog, t->dir) == gpu_lbm_slot_values(to->prog, t->dir),
              TSR_ERR_INTERNAL, "GPU copy BlockID %d -> %d in direction %s: slices differ",
              (int)t->src->id, (int)t->dst->id, direction_name(t->dir));
    to->stage->src[t->dir] =
        (gpu_lbm_source_t){&from->out, gpu_lbm_slot_offset(from->prog, t->dir)};
    to->stage->mask |= 1u << t->dir;
  }
cleanup:
  return st;
}

/* ---- work ---- */

static tsr_status lbm_gpu_boundary(const block_info_t *b, block_data_t *data, void *vctx,
                                   tsr_error_t *err) {
  lbm_gpu_block_t *gb = lbm_gpu_get(data, vctx);
  return gpu_lbm_boundary(gb->prog, &gb->field, &gb->links, err);
}

static tsr_status lbm_gpu_stream_collide(const block_info_t *b, block_data_t *data, void *vctx,
                                         tsr_error_t *err) {
  lbm_gpu_block_t *gb = lbm_gpu_get(data, vctx);
  gb->stage->packed = 0;
  return gpu_lbm_step(gb->prog, &gb->field, err);
}

static gpu_lbm_moments_opts_t lbm_gpu_moments_opts(const lbm_ctx_t *c) {
  return (gpu_lbm_moments_opts_t){
      .rho0 = c->opts.rho0,
      .force = {c->params.force[0], c->params.force[1], c->params.force[2]},
      .use_force = c->params.use_force,
      .shifted = c->opts.shifted};
}

static tsr_status lbm_gpu_moments(const block_info_t *b, block_data_t *data, void *vctx,
                                  tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  lbm_gpu_block_t *gb = lbm_gpu_get(data, c);
  gpu_lbm_moments_opts_t mo = lbm_gpu_moments_opts(c);
  TSR_TRY(gpu_lbm_moments(gb->prog, &gb->field, &gb->moments, &mo, gb->host.rho, gb->host.u, err));
  lbm_mask_walls(c, &gb->host);
cleanup:
  return st;
}

/* The stability check on the device; the moments come to the host only for a block that
 * failed it (for the message). */
static tsr_status lbm_gpu_check(const block_info_t *b, block_data_t *data, void *vctx,
                                tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  lbm_gpu_block_t *gb = lbm_gpu_get(data, c);
  gpu_lbm_moments_opts_t mo = lbm_gpu_moments_opts(c);
  const double cs = lbm_sound_speed(&c->opts);
  TSR_TRY(gpu_lbm_check(gb->prog, &gb->field, &gb->flags, GEOMETRY_FLUID, &gb->first, &mo,
                        cs * cs, &gb->host.unstable, err));
  if (gb->host.unstable >= 0) TSR_TRY(lbm_gpu_moments(b, data, vctx, err));
cleanup:
  return st;
}

static tsr_status lbm_gpu_wait(const block_info_t *b, block_data_t *data, void *vctx,
                               tsr_error_t *err) {
  lbm_gpu_block_t *gb = lbm_gpu_get(data, vctx);
  return gpu_queue_finish(gb->cl, err);
}

tsr_status lbm_gpu_register(registry_t *reg, void *ctx, tsr_error_t *err) {
  const char *live = "fluid|fluid_boundary";
  const registry_item_t items[] = {
      {.kind = REGISTRY_KIND_ALLOCATOR, .name = LBM_PDF, .fs = "*", .hs = "gpu", .bs = "*",
       .alloc = lbm_gpu_alloc, .free = lbm_gpu_block_release},
      {.kind = REGISTRY_KIND_EXTRACTION, .name = LBM_PDF, .fs = "*", .hs = "gpu", .bs = live,
       .extract = lbm_gpu_extract, .size = lbm_size, .stage_out = lbm_gpu_stage_out,
       .stage_wait = lbm_gpu_stage_wait},
      {.kind = REGISTRY_KIND_INSERTION, .name = LBM_PDF, .fs = "*", .hs = "gpu", .bs = live,
       .insert = lbm_gpu_insert, .size = lbm_size, .stage_in = lbm_gpu_stage_in},
      {.kind = REGISTRY_KIND_COPY, .name = LBM_PDF, .fs = "*", .hs = "gpu", .bs = live,
       .copy = lbm_gpu_copy},
      {.kind = REGISTRY_KIND_BOUNDARY, .name = LBM_BOUNDARY, .fs = "*", .hs = "gpu",
       .bs = "fluid_boundary", .kernel = lbm_gpu_boundary},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_STREAM_COLLIDE, .fs = "*", .hs = "gpu",
       .bs = live, .kernel = lbm_gpu_stream_collide},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_MOMENTS, .fs = "*", .hs = "gpu", .bs = live,
       .kernel = lbm_gpu_moments},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_CHECK, .fs = "*", .hs = "gpu", .bs = live,
       .kernel = lbm_gpu_check},
      {.kind = REGISTRY_KIND_KERNEL, .name = LBM_WAIT, .fs = "*", .hs = "gpu", .bs = live,
       .kernel = lbm_gpu_wait},
  };
  return lbm_add_items(reg, items, sizeof items / sizeof items[0], ctx, err);
}
