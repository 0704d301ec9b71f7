#include "gpu_scalar.h"

/* the program source: scalar_cell.h, part.cl, scalar.cl, embedded at build time */
extern const char scalar_source[];

tsr_status gpu_scalar_program(opencl_context_t *cl, int dp, gpu_program_t **out,
                              tsr_error_t *err) {
  static const char *const names[] = {"scalar_step_kernel"};
  return gpu_program_create(cl, scalar_source, dp ? "-DSCALAR_DOUBLE=1" : "-DSCALAR_DOUBLE=0",
                            "scalar.cl", names, 1, out, err);
}

tsr_status gpu_scalar_step(gpu_program_t *prog, const gpu_field_groups_t *gs, int nd, double d,
                           int part, int dp, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (size_t k = 0; k < gs->count; ++k) {
    const gpu_field_group_t *g = &gs->group[k];
    gpu_field_t *c = g->first[0], *u = g->first[1];
    const gpu_buffer_t src = {gpu_field_array(c, c->cur), 0},
                       dst = {gpu_field_array(c, c->cur ^ 1), 0},
                       ua = {gpu_field_array(u, u->cur), 0};
    const grid_dims_t cd = gpu_field_dims(c), ud = gpu_field_dims(u);
    const gpu_arg_t args[] = {
        gpu_arg_buffer(&src), gpu_arg_buffer(&dst), gpu_arg_buffer(&g->bases[0]),
        gpu_arg_buffer(&ua), gpu_arg_buffer(&g->bases[1]),
        gpu_arg_long(cd.origin), gpu_arg_long(cd.sy), gpu_arg_long(cd.sz),
        gpu_arg_long(ud.origin), gpu_arg_long(ud.sy), gpu_arg_long(ud.sz), gpu_arg_long(ud.sc),
        gpu_arg_int(g->n[0]), gpu_arg_int(g->n[1]), gpu_arg_int(nd),
        gpu_arg_int(*(const int *)g->key), gpu_arg_real(d, dp),
        gpu_arg_buffer(part ? &g->boxes : NULL), gpu_arg_int(part)};
    TSR_TRY(gpu_program_launch_blocks(prog, 0, g->n, g->nblocks, args,
                                      (int)(sizeof args / sizeof args[0]), err));
  }
cleanup:
  return st;
}
