#include "gpu_pdf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "direction.h"

struct gpu_pdf_cache {
  opencl_context_t *cl;
  char *source_dir; /* NULL: built in */
  gpu_lbm_t **progs;
  gpu_lbm_spec_t *specs;
  int nprogs;
};

tsr_status gpu_pdf_cache_create(opencl_context_t *cl, const char *source_dir,
                                gpu_pdf_cache_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_pdf_cache_t *c = calloc(1, sizeof *c);
  *out = NULL;
  TSR_CHECK(c, TSR_ERR_NOMEM, "out of memory for the OpenCL programs");
  c->cl = cl;
  if (source_dir && source_dir[0]) {
    c->source_dir = malloc(strlen(source_dir) + 1);
    TSR_CHECK(c->source_dir, TSR_ERR_NOMEM, "out of memory for the OpenCL programs");
    strcpy(c->source_dir, source_dir);
  }
  *out = c;
  c = NULL;
cleanup:
  gpu_pdf_cache_free(&c);
  return st;
}

void gpu_pdf_cache_free(gpu_pdf_cache_t **cache) {
  if (!cache || !*cache) return;
  gpu_pdf_cache_t *c = *cache;
  for (int k = 0; k < c->nprogs; ++k) gpu_lbm_free(&c->progs[k]);
  free(c->progs);
  free(c->specs);
  free(c->source_dir);
  free(c);
  *cache = NULL;
}

opencl_context_t *gpu_pdf_cache_context(const gpu_pdf_cache_t *cache) { return cache->cl; }

static int gpu_pdf_same(const gpu_lbm_spec_t *a, const gpu_lbm_spec_t *b) {
  return a->lattice == b->lattice && memcmp(a->n, b->n, sizeof a->n) == 0 && a->dp == b->dp &&
         a->trt == b->trt && a->force == b->force && a->ade == b->ade &&
         a->coupled == b->coupled;
}

tsr_status gpu_pdf_program(gpu_pdf_cache_t *cache, const gpu_lbm_spec_t *want,
                           const int width[3], const int comps[][LATTICE_MAX_Q],
                           const int *ncomps, const void *consts, gpu_lbm_t **out,
                           tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (int k = 0; k < cache->nprogs; ++k)
    if (gpu_pdf_same(&cache->specs[k], want)) {
      *out = cache->progs[k];
      return st;
    }
  gpu_lbm_spec_t spec = *want;
  const lattice_t *l = spec.lattice;
  memset(spec.send, 0, sizeof spec.send);
  memset(spec.recv, 0, sizeof spec.recv);
  spec.source_dir = cache->source_dir;
  for (int d = 0; d < GPU_LBM_SLOTS; ++d) {
    int lo[3], hi[3];
    gpu_lbm_slice_t *snd = &spec.send[d], *rcv = &spec.recv[d];
    /* one box: the lattices' reach is 1, no block is thinner; none where nothing crosses */
    const int nb = direction_slice_boxes(spec.n, width, d);
    TSR_CHECK(nb <= 1, TSR_ERR_INTERNAL,
              "lattice %s: the ghost slice of direction %s is %d boxes; the OpenCL ghost tables "
              "hold one", l->name, direction_name(d), nb);
    if (nb == 1) {
      direction_send_box(spec.n, width, d, 0, lo, hi);
      for (int a = 0; a < 3; ++a) {
        snd->lo[a] = lo[a];
        snd->extent[a] = hi[a] - lo[a];
      }
      direction_recv_box(spec.n, width, d, 0, lo, hi);
      for (int a = 0; a < 3; ++a) {
        rcv->lo[a] = lo[a];
        rcv->extent[a] = hi[a] - lo[a];
      }
    }
    TSR_CHECK(ncomps[d] <= GPU_LBM_MAX_COMPS, TSR_ERR_INTERNAL,
              "lattice %s: %d PDFs cross direction %s, the OpenCL ghost tables hold %d",
              l->name, ncomps[d], direction_name(d), GPU_LBM_MAX_COMPS);
    snd->ncomps = rcv->ncomps = ncomps[d];
    for (int k = 0; k < ncomps[d]; ++k) snd->comps[k] = rcv->comps[k] = comps[d][k];
  }
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

/* ---- a block's field ---- */

struct gpu_pdf_stage {
  void *out_event;  /* read of the pack buffer into pin_out in flight */
  void *in_event;   /* write of pin_in into the message buffer in flight */
  int packed;       /* the pack buffer holds this exchange's values */
  int host_in;      /* insertions filled pin_in */
  uint32_t mask;    /* slots to unpack */
  gpu_lbm_source_t src[GPU_LBM_SLOTS];
};

tsr_status gpu_pdf_create(gpu_pdf_t *p, opencl_context_t *cl, gpu_lbm_t *prog, const void *aos,
                          tsr_error_t *err) {
  tsr_status st = TSR_OK;
  memset(p, 0, sizeof *p);
  p->stage = calloc(1, sizeof *p->stage);
  TSR_CHECK(p->stage, TSR_ERR_NOMEM, "out of memory for a GPU field");
  p->cl = cl;
  p->prog = prog;
  TSR_TRY(gpu_lbm_field_create(prog, &p->field, err));
  TSR_TRY(gpu_lbm_upload(prog, &p->field, aos, err));
  const size_t msg = gpu_lbm_message_values(prog) * gpu_lbm_esize(prog);
  TSR_TRY(gpu_buffer_create(cl, msg, "ghost messages (pack)", &p->out, err));
  TSR_TRY(gpu_buffer_create(cl, msg, "ghost messages (unpack)", &p->in, err));
  TSR_TRY(gpu_pinned_create(cl, msg, "ghost messages to the host", &p->pin_out, err));
  TSR_TRY(gpu_pinned_create(cl, msg, "ghost messages from the host", &p->pin_in, err));
cleanup:
  if (st != TSR_OK) gpu_pdf_release(p);
  return st;
}

void gpu_pdf_release(gpu_pdf_t *p) {
  tsr_error_t ignored;
  if (p->cl) {
    /* nothing may be in flight on buffers about to go */
    if (gpu_queue_finish(p->cl, &ignored) != TSR_OK) { /* released all the same */ }
  }
  if (p->stage) {
    if (gpu_event_wait(&p->stage->out_event, &ignored) != TSR_OK) { /* as above */ }
    if (gpu_event_wait(&p->stage->in_event, &ignored) != TSR_OK) { /* as above */ }
    free(p->stage);
  }
  gpu_lbm_field_free(&p->field);
  gpu_buffer_free(&p->out);
  gpu_buffer_free(&p->in);
  gpu_pinned_free(&p->pin_out);
  gpu_pinned_free(&p->pin_in);
  memset(p, 0, sizeof *p);
}

tsr_status gpu_pdf_step(gpu_pdf_t *p, const gpu_lbm_aux_t *aux, tsr_error_t *err) {
  p->stage->packed = 0;
  return aux ? gpu_lbm_step_coupled(p->prog, &p->field, aux, err)
             : gpu_lbm_step(p->prog, &p->field, err);
}

/* ---- the exchange items ---- */

typedef struct gpu_pdf_item_ctx {
  char name[64];
  size_t offset;
  size_t (*size)(const block_info_t *b, int dir, void *size_ctx);
  void *size_ctx;
} gpu_pdf_item_ctx_t;

static gpu_pdf_t *gpu_pdf_of(void *data, const gpu_pdf_item_ctx_t *c) {
  return (gpu_pdf_t *)((uint8_t *)data + c->offset);
}

static size_t gpu_pdf_size(const block_info_t *b, int dir, void *vctx) {
  const gpu_pdf_item_ctx_t *c = vctx;
  return c->size(b, dir, c->size_ctx);
}

static tsr_status gpu_pdf_stage_out(const block_info_t *b, void *data, int host_bound, void *vctx,
                                    tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_pdf_t *p = gpu_pdf_of(data, vctx);
  gpu_pdf_stage_t *s = p->stage;
  TSR_TRY(gpu_event_wait(&s->out_event, err));
  TSR_TRY(gpu_lbm_pack(p->prog, &p->field, &p->out, err));
  s->packed = 1;
  if (host_bound) /* one transfer of every face and edge, left in flight */
    TSR_TRY(gpu_buffer_read(p->cl, &p->out, 0, p->out.bytes, p->pin_out.host, &s->out_event,
                            err));
cleanup:
  return st;
}

/* The transfer stage_out left in flight has reached pin_out (comm times it apart from
 * the extraction, which waits as well: cheap once this has run). */
static tsr_status gpu_pdf_stage_wait(const block_info_t *b, void *data, int host_bound,
                                     void *vctx, tsr_error_t *err) {
  (void)b, (void)host_bound;
  return gpu_event_wait(&gpu_pdf_of(data, vctx)->stage->out_event, err);
}

/* Byte offset of a direction's values in the message buffers. */
static size_t gpu_pdf_offset(const gpu_pdf_t *p, int dir) {
  return gpu_lbm_slot_offset(p->prog, dir) * gpu_lbm_esize(p->prog);
}

static tsr_status gpu_pdf_extract(const block_info_t *b, const void *data, int dir, uint8_t *out,
                                  size_t cap, size_t *written, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const gpu_pdf_item_ctx_t *c = vctx;
  const gpu_pdf_t *p = gpu_pdf_of((void *)(uintptr_t)data, c);
  const size_t need = c->size(b, dir, c->size_ctx);
  TSR_CHECK(need <= cap && dir < GPU_LBM_SLOTS && p->stage->packed, TSR_ERR_INTERNAL,
            "%s extraction of GPU BlockID %d in direction %s: %zu bytes needed, %zu given%s",
            c->name, (int)b->id, direction_name(dir), need, cap,
            p->stage->packed ? "" : " (not staged out)");
  TSR_CHECK(need == gpu_lbm_slot_values(p->prog, dir) * gpu_lbm_esize(p->prog),
            TSR_ERR_INTERNAL, "%s extraction of GPU BlockID %d: message layouts disagree",
            c->name, (int)b->id);
  TSR_TRY(gpu_event_wait(&p->stage->out_event, err));
  memcpy(out, (const uint8_t *)p->pin_out.host + gpu_pdf_offset(p, dir), need);
  *written = need;
cleanup:
  return st;
}

static tsr_status gpu_pdf_insert(const block_info_t *b, void *data, int dir, const uint8_t *in,
                                 size_t len, void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const gpu_pdf_item_ctx_t *c = vctx;
  gpu_pdf_t *p = gpu_pdf_of(data, c);
  gpu_pdf_stage_t *s = p->stage;
  const size_t need = c->size(b, dir, c->size_ctx);
  TSR_CHECK(need == len && dir < GPU_LBM_SLOTS && p->prog, TSR_ERR_CORRUPT,
            "%s insertion into GPU BlockID %d from direction %s: %zu bytes, expected %zu",
            c->name, (int)b->id, direction_name(dir), len, need);
  TSR_TRY(gpu_event_wait(&s->in_event, err)); /* the last write has left pin_in */
  memcpy((uint8_t *)p->pin_in.host + gpu_pdf_offset(p, dir), in, len);
  s->src[dir] = (gpu_lbm_source_t){&p->in, gpu_lbm_slot_offset(p->prog, dir)};
  s->mask |= 1u << dir;
  s->host_in = 1;
cleanup:
  return st;
}

static tsr_status gpu_pdf_stage_in(const block_info_t *b, void *data, int host_bound, void *vctx,
                                   tsr_error_t *err) {
  tsr_status st = TSR_OK;
  (void)b, (void)host_bound;
  gpu_pdf_t *p = gpu_pdf_of(data, vctx);
  gpu_pdf_stage_t *s = p->stage;
  if (s->host_in) /* one transfer of every slot that came through the host */
    TSR_TRY(gpu_buffer_write(p->cl, &p->in, 0, p->in.bytes, p->pin_in.host, &s->in_event, err));
  TSR_TRY(gpu_lbm_unpack(p->prog, &p->field, s->src, s->mask, err));
cleanup:
  s->mask = 0;
  s->host_in = 0;
  return st;
}

/* Same device: the receiver's unpack reads the sender's pack buffer; no host trip. */
static tsr_status gpu_pdf_copy(const registry_copy_task_t *tasks, size_t n, void *vctx,
                               tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const gpu_pdf_item_ctx_t *c = vctx;
  for (size_t k = 0; k < n; ++k) {
    const registry_copy_task_t *t = &tasks[k];
    const gpu_pdf_t *from = gpu_pdf_of((void *)(uintptr_t)t->src_data, c);
    gpu_pdf_t *to = gpu_pdf_of(t->dst_data, c);
    TSR_CHECK(from->prog && to->prog && from->stage->packed && t->dir < GPU_LBM_SLOTS &&
                  from->cl == to->cl,
              TSR_ERR_INTERNAL, "%s: GPU copy BlockID %d -> %d in direction %s: blocks not ready",
              c->name, (int)t->src->id, (int)t->dst->id, direction_name(t->dir));
    TSR_CHECK(gpu_lbm_slot_values(from->prog, t->dir) == gpu_lbm_slot_values(to->prog, t->dir),
              TSR_ERR_INTERNAL, "%s: GPU copy BlockID %d -> %d in direction %s: slices differ",
              c->name, (int)t->src->id, (int)t->dst->id, direction_name(t->dir));
    to->stage->src[t->dir] =
        (gpu_lbm_source_t){&from->out, gpu_lbm_slot_offset(from->prog, t->dir)};
    to->stage->mask |= 1u << t->dir;
  }
cleanup:
  return st;
}

tsr_status gpu_pdf_register(registry_t *reg, const gpu_pdf_items_t *items, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  gpu_pdf_item_ctx_t c = {.offset = items->offset, .size = items->size,
                          .size_ctx = items->size_ctx};
  snprintf(c.name, sizeof c.name, "%s", items->name);
  void *ctx;
  TSR_TRY(registry_keep(reg, &c, sizeof c, &ctx, err));
  const registry_item_t list[] = {
      {.kind = REGISTRY_KIND_EXTRACTION, .name = items->name, .fs = "*", .hs = "gpu",
       .bs = items->bs, .extract = gpu_pdf_extract, .size = gpu_pdf_size,
       .stage_out = gpu_pdf_stage_out, .stage_wait = gpu_pdf_stage_wait, .ctx = ctx},
      {.kind = REGISTRY_KIND_INSERTION, .name = items->name, .fs = "*", .hs = "gpu",
       .bs = items->bs, .insert = gpu_pdf_insert, .size = gpu_pdf_size,
       .stage_in = gpu_pdf_stage_in, .ctx = ctx},
      {.kind = REGISTRY_KIND_COPY, .name = items->name, .fs = "*", .hs = "gpu", .bs = items->bs,
       .copy = gpu_pdf_copy, .ctx = ctx},
  };
  for (size_t i = 0; i < sizeof list / sizeof list[0]; ++i) TSR_TRY(registry_add(reg, &list[i], err));
cleanup:
  return st;
}
