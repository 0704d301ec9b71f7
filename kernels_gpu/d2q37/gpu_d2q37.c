#include "gpu_d2q37.h"

#include <string.h>

/* the program source: lattice_defs.h, d2q37_cell.h then d2q37.cl, embedded at build time */
extern const char d2q37_source[];

enum { D37_KERNEL_STREAM_COLLIDE, D37_KERNEL_WALLS, D37_KERNEL_PROPAGATE, D37_KERNEL_COLLIDE };

tsr_status gpu_d2q37_create(opencl_context_t *cl, int dp, int split, const d2q37_consts_t *k,
                            gpu_d2q37_t *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  static const char *const names[] = {"d37_stream_collide_kernel", "d37_walls_kernel",
                                      "d37_propagate_kernel", "d37_collide_kernel"};
  const char *options = dp ? "-DD37_DOUBLE=1"
                           : "-DD37_DOUBLE=0 -cl-fp32-correctly-rounded-divide-sqrt";
  memset(out, 0, sizeof *out);
  out->split = split;
  TSR_TRY(gpu_program_create(cl, d2q37_source, options, "d2q37.cl", names, 4, &out->prog, err));
  const size_t bytes = dp ? sizeof k->d : sizeof k->f;
  TSR_TRY(gpu_buffer_create(cl, bytes, "the d2q37 constants", &out->consts, err));
  TSR_TRY(gpu_buffer_write(cl, &out->consts, 0, bytes, k, NULL, err));
cleanup:
  if (st != TSR_OK) gpu_d2q37_free(out);
  return st;
}

void gpu_d2q37_free(gpu_d2q37_t *g) {
  gpu_program_free(&g->prog);
  gpu_buffer_free(&g->consts);
}

tsr_status gpu_d2q37_stream_collide(const gpu_d2q37_t *c, const gpu_field_groups_t *gs, int part,
                                    tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (size_t k = 0; k < gs->count; ++k) {
    const gpu_field_group_t *g = &gs->group[k];
    gpu_field_t *pdf = g->first[0];
    const int w = *(const int *)g->key;
    const gpu_buffer_t src = {gpu_field_array(pdf, pdf->cur), 0},
                       dst = {gpu_field_array(pdf, pdf->cur ^ 1), 0};
    const gpu_buffer_t *bx = part ? &g->boxes : NULL;
    const grid_dims_t d = gpu_field_dims(pdf);
    for (int side = 0; side < 2; ++side) {
      if (!(w >> side & 1)) continue;
      const int nw[3] = {g->n[0], 1, 1};
      const gpu_arg_t wargs[] = {
          gpu_arg_buffer(&src), gpu_arg_buffer(&g->bases[0]), gpu_arg_long(d.origin),
          gpu_arg_long(d.sy), gpu_arg_long(d.sc), gpu_arg_int(g->n[1]), gpu_arg_int(side),
          gpu_arg_buffer(&c->consts), gpu_arg_buffer(bx), gpu_arg_int(part)};
      TSR_TRY(gpu_program_launch_blocks(c->prog, D37_KERNEL_WALLS, nw, g->nblocks, wargs,
                                        (int)(sizeof wargs / sizeof wargs[0]), err));
    }
    if (!c->split) {
      const gpu_arg_t args[] = {
          gpu_arg_buffer(&src), gpu_arg_buffer(&dst), gpu_arg_buffer(&g->bases[0]),
          gpu_arg_long(d.origin), gpu_arg_long(d.sy), gpu_arg_long(d.sc),
          gpu_arg_buffer(&c->consts), gpu_arg_buffer(bx), gpu_arg_int(part)};
      TSR_TRY(gpu_program_launch_blocks(c->prog, D37_KERNEL_STREAM_COLLIDE, g->n, g->nblocks,
                                        args, (int)(sizeof args / sizeof args[0]), err));
      continue;
    }
    /* split: the propagation, then the collision in place in dst */
    const gpu_arg_t pargs[] = {
        gpu_arg_buffer(&src), gpu_arg_buffer(&dst), gpu_arg_buffer(&g->bases[0]),
        gpu_arg_long(d.origin), gpu_arg_long(d.sy), gpu_arg_long(d.sc), gpu_arg_buffer(bx),
        gpu_arg_int(part)};
    TSR_TRY(gpu_program_launch_blocks(c->prog, D37_KERNEL_PROPAGATE, g->n, g->nblocks, pargs,
                                      (int)(sizeof pargs / sizeof pargs[0]), err));
    const gpu_arg_t cargs[] = {gpu_arg_buffer(&dst), gpu_arg_buffer(&g->bases[0]),
                               gpu_arg_long(d.origin), gpu_arg_long(d.sy), gpu_arg_long(d.sc),
                               gpu_arg_buffer(&c->consts), gpu_arg_buffer(bx),
                               gpu_arg_int(part)};
    TSR_TRY(gpu_program_launch_blocks(c->prog, D37_KERNEL_COLLIDE, g->n, g->nblocks, cargs,
                                      (int)(sizeof cargs / sizeof cargs[0]), err));
  }
cleanup:
  return st;
}
