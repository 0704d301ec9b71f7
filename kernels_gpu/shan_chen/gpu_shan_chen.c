#include "gpu_shan_chen.h"

#include <stdio.h>

/* the program source: shan_chen_kernels.h then shan_chen.cl, embedded at build time */
extern const char shan_chen_source[];

enum { SC_KERNEL_PSI, SC_KERNEL_FORCE };

tsr_status gpu_shan_chen_program(opencl_context_t *cl, const lattice_t *l, int dp,
                                 gpu_program_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char options[4096];
  size_t used = 0;
  static const char *const names[] = {"sc_psi_kernel", "sc_force_kernel"};
  used += (size_t)snprintf(options + used, sizeof options - used, "-DSC_DOUBLE=%d -DSC_Q=%d -DSC_W=",
                           dp, l->q);
  for (int i = 0; i < l->q && used < sizeof options; ++i)
    used += (size_t)snprintf(options + used, sizeof options - used, "%s%a", i ? "," : "",
                             dp ? l->w[i] : (double)(float)l->w[i]);
  static const char *const axes[] = {"CX", "CY", "CZ"};
  for (int a = 0; a < 3 && used < sizeof options; ++a) {
    used += (size_t)snprintf(options + used, sizeof options - used, " -DSC_%s=", axes[a]);
    for (int i = 0; i < l->q && used < sizeof options; ++i)
      used += (size_t)snprintf(options + used, sizeof options - used, "%s%d", i ? "," : "",
                               l->c[a][i]);
  }
  TSR_CHECK(used < sizeof options, TSR_ERR_INTERNAL, "shan_chen: build options too long");
  TSR_TRY(gpu_program_create(cl, shan_chen_source, options, "shan_chen.cl", names, 2, out, err));
cleanup:
  return st;
}

tsr_status gpu_shan_chen_psi(gpu_program_t *prog, const gpu_field_groups_t *gs, double rho_psi,
                             int dp, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (size_t k = 0; k < gs->count; ++k) {
    const gpu_field_group_t *g = &gs->group[k];
    gpu_field_t *rho = g->first[0], *psi = g->first[1];
    const gpu_buffer_t ra = {gpu_field_array(rho, rho->cur), 0},
                       pa = {gpu_field_array(psi, psi->cur), 0};
    const grid_dims_t rd = gpu_field_dims(rho), pd = gpu_field_dims(psi);
    const gpu_arg_t args[] = {
        gpu_arg_buffer(&ra), gpu_arg_buffer(&g->bases[0]),
        gpu_arg_buffer(&pa), gpu_arg_buffer(&g->bases[1]),
        gpu_arg_long(rd.origin), gpu_arg_long(rd.sy), gpu_arg_long(rd.sz),
        gpu_arg_long(pd.origin), gpu_arg_long(pd.sy), gpu_arg_long(pd.sz),
        gpu_arg_real(rho_psi, dp), gpu_arg_real(1.0 / rho_psi, dp)};
    TSR_TRY(gpu_program_launch_blocks(prog, SC_KERNEL_PSI, g->n, g->nblocks, args,
                                      (int)(sizeof args / sizeof args[0]), err));
  }
cleanup:
  return st;
}

tsr_status gpu_shan_chen_force(gpu_program_t *prog, const gpu_field_groups_t *gs, double g_,
                               int accumulate, int part, int dp, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (size_t k = 0; k < gs->count; ++k) {
    const gpu_field_group_t *g = &gs->group[k];
    gpu_field_t *force = g->first[0], *psi = g->first[1];
    const gpu_buffer_t fa = {gpu_field_array(force, force->cur), 0},
                       pa = {gpu_field_array(psi, psi->cur), 0};
    const grid_dims_t pd = gpu_field_dims(psi), fd = gpu_field_dims(force);
    const gpu_arg_t args[] = {
        gpu_arg_buffer(&pa), gpu_arg_buffer(&g->bases[1]),
        gpu_arg_buffer(&fa), gpu_arg_buffer(&g->bases[0]),
        gpu_arg_long(pd.origin), gpu_arg_long(pd.sy), gpu_arg_long(pd.sz),
        gpu_arg_long(fd.origin), gpu_arg_long(fd.sy), gpu_arg_long(fd.sz), gpu_arg_long(fd.sc),
        gpu_arg_real(g_, dp), gpu_arg_int(accumulate),
        gpu_arg_buffer(part ? &g->boxes : NULL), gpu_arg_int(part)};
    TSR_TRY(gpu_program_launch_blocks(prog, SC_KERNEL_FORCE, g->n, g->nblocks, args,
                                      (int)(sizeof args / sizeof args[0]), err));
  }
cleanup:
  return st;
}
