#include "lbm_gpu.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "field.h"
#include "gpu_buffer.h"
#include "gpu_lbm.h"
#include "gpu_pdf.h"
#include "lbm_collide.h"
#include "lbm_impl.h"

/* The program for blocks of this size, built on first use. */
static tsr_status lbm_gpu_program(const lbm_ctx_t *c, const int size[3], gpu_lbm_t **out,
                                  tsr_error_t *err) {
  gpu_lbm_spec_t spec;
  memset(&spec, 0, sizeof spec);
  for (int a = 0; a < 3; ++a) spec.n[a] = size[a];
  spec.dp = c->opts.precision == LBM_DP;
  spec.lattice = c->lattice;
  spec.trt = c->opts.collision == LBM_TRT;
  spec.force = c->params.use_force;
  spec.coupled = c->force_id >= 0 || c->velocity_id >= 0;
  double consts[LBM_CONSTS_COUNT(LATTICE_MAX_Q)]; /* room for either precision */
  c->kernels[GRID_AOS]->constants(&c->params, spec.trt, consts);
  return gpu_pdf_program(c->gpu, &spec, c->width, c->comps, c->ncomps, consts, out, err);
}

/* ---- GPU blocks ---- */

typedef struct lbm_gpu_block {
  lbm_block_t host; /* first member: lbm_block_moments reads flags, rho and u from it;
                       src, dst and links stay NULL (they live on the device) */
  gpu_pdf_t pdf;    /* empty for a solid block */
  gpu_lbm_links_t links;
  gpu_buffer_t moments;
  gpu_buffer_t flags, first; /* for the stability check on the device */
} lbm_gpu_block_t;

static void lbm_gpu_block_release(void *data, void *vctx) {
  (void)vctx;
  lbm_gpu_block_t *gb = data;
  if (!gb) return;
  gpu_pdf_release(&gb->pdf); /* first: waits for the block's queue */
  gpu_lbm_links_free(&gb->links);
  gpu_buffer_free(&gb->moments);
  gpu_buffer_free(&gb->flags);
  gpu_buffer_free(&gb->first);
  lbm_block_clear(&gb->host);
  free(gb);
}

static tsr_status lbm_gpu_alloc(const block_info_t *b, void *vctx, void **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  lbm_gpu_block_t *gb = NULL;
  lbm_block_t *h = NULL;
  gpu_lbm_t *prog = NULL;
  *out = NULL;
  TSR_CHECK(c->gpu, TSR_ERR_INVALID,
            "BlockID %d is to run on hs gpu, but this process has no OpenCL device", (int)b->id);
  gb = calloc(1, sizeof *gb);
  TSR_CHECK(gb, TSR_ERR_NOMEM, "out of memory for the LBM data of BlockID %d", (int)b->id);
  /* the host builds the block exactly as for the CPU: initial PDFs, flags, links */
  TSR_TRY(lbm_alloc_layout(b, c, GRID_AOS, &h, err));
  gb->host = *h;
  free(h);
  h = NULL;
  if (!gb->host.src) goto done; /* solid: nothing on the device */
  opencl_context_t *cl = gpu_pdf_cache_context(c->gpu);
  TSR_TRY(lbm_gpu_program(c, b->size, &prog, err));
  TSR_TRY(gpu_pdf_create(&gb->pdf, cl, prog, gb->host.src, err));
  free(gb->host.src);
  free(gb->host.dst);
  gb->host.src = gb->host.dst = NULL;

  TSR_TRY(gpu_lbm_links_create(prog, gb->host.links, gb->host.nlinks, 0, &gb->links, err));
  free(gb->host.links);
  gb->host.links = NULL;

  TSR_TRY(gpu_buffer_create(cl, gpu_lbm_moments_bytes(prog), "moments", &gb->moments, err));
  size_t cells = lbm_cells(&gb->host.dims);
  TSR_TRY(gpu_buffer_create(cl, cells, "cell flags", &gb->flags, err));
  TSR_TRY(gpu_buffer_write(cl, &gb->flags, 0, cells, gb->host.flags, NULL, err));
  TSR_TRY(gpu_buffer_create(cl, sizeof(int32_t), "stability check", &gb->first, err));
done:
  gb->host.src = gb->host.dst = NULL;
  *out = gb;
  gb = NULL;
cleanup:
  if (st != TSR_OK) tsr_error_prefix(err, "BlockID %d on OpenCL device", (int)b->id);
  lbm_block_release(h, NULL);
  lbm_gpu_block_release(gb, NULL);
  return st;
}

static lbm_gpu_block_t *lbm_gpu_get(block_data_t *data, const lbm_ctx_t *c) {
  return block_data_get(data, c->pdf_id);
}

/* ---- work ---- */

static tsr_status lbm_gpu_boundary(const block_info_t *b, block_data_t *data, void *vctx,
                                   tsr_error_t *err) {
  lbm_gpu_block_t *gb = lbm_gpu_get(data, vctx);
  return gpu_lbm_boundary(gb->pdf.prog, &gb->pdf.field, &gb->links, err);
}

static tsr_status lbm_gpu_stream_collide(const block_info_t *b, block_data_t *data, void *vctx,
                                         tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const lbm_ctx_t *c = vctx;
  lbm_gpu_block_t *gb = lbm_gpu_get(data, c);
  if (c->force_id < 0 && c->velocity_id < 0) return gpu_pdf_step(&gb->pdf, NULL, err);
  /* coupled: a force per cell in, the velocity out (as lbm_stream_collide) */
  field_block_t *f = field_block_of(data, c->force_id), *u = field_block_of(data, c->velocity_id);
  TSR_CHECK((c->force_id < 0 || (f && f->device.mem)) && (c->velocity_id < 0 || (u && u->device.mem)),
            TSR_ERR_INTERNAL, "GPU BlockID %d lacks a coupling field of the LBM on the device",
            (int)b->id);
  gpu_lbm_aux_t aux = {.in = f ? &f->device : NULL, .out = u ? &u->device : NULL,
                       .dims = f ? f->host.dims : u->host.dims, .start = !gb->host.started};
  TSR_TRY(gpu_pdf_step(&gb->pdf, &aux, err));
  gb->host.started = 1;
cleanup:
  return st;
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
  TSR_TRY(gpu_lbm_moments(gb->pdf.prog, &gb->pdf.field, &gb->moments, &mo, gb->host.rho, gb->host.u, err));
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
  TSR_TRY(gpu_lbm_check(gb->pdf.prog, &gb->pdf.field, &gb->flags, GEOMETRY_FLUID, &gb->first, &mo,
                        cs * cs, &gb->host.unstable, err));
  if (gb->host.unstable >= 0) TSR_TRY(lbm_gpu_moments(b, data, vctx, err));
cleanup:
  return st;
}

static tsr_status lbm_gpu_wait(const block_info_t *b, block_data_t *data, void *vctx,
                               tsr_error_t *err) {
  lbm_gpu_block_t *gb = lbm_gpu_get(data, vctx);
  return gpu_queue_finish(gb->pdf.cl, err);
}

tsr_status lbm_gpu_register(registry_t *reg, void *ctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *live = "fluid|fluid_boundary";
  const registry_item_t items[] = {
      {.kind = REGISTRY_KIND_ALLOCATOR, .name = LBM_PDF, .fs = "*", .hs = "gpu", .bs = "*",
       .alloc = lbm_gpu_alloc, .free = lbm_gpu_block_release},
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
  TSR_TRY(lbm_add_items(reg, items, sizeof items / sizeof items[0], ctx, err));
  const gpu_pdf_items_t exchange = {.name = LBM_PDF, .bs = live,
                                    .offset = offsetof(lbm_gpu_block_t, pdf),
                                    .size = lbm_size, .size_ctx = ctx};
  TSR_TRY(gpu_pdf_register(reg, &exchange, err));
cleanup:
  return st;
}
