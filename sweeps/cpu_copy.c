#include "cpu_copy.h"

#include <stdlib.h>

tsr_status cpu_copy_run(const registry_copy_task_t *tasks, size_t n, const cpu_copy_layout_t *l,
                        tsr_error_t *err) {
  tsr_status st = TSR_OK;
  grid_copy_job_t *jobs = malloc((n ? n : 1) * sizeof *jobs);
  TSR_CHECK(jobs, TSR_ERR_NOMEM, "out of memory for %zu block-to-block copies", n);
  for (size_t i = 0; i < n; ++i) {
    const registry_copy_task_t *t = &tasks[i];
    grid_copy_job_t *j = &jobs[i];
    void *src, *dst;
    int slo[3], shi[3], dlo[3], dhi[3];
    l->field(t->src, t->src_data, &src, &j->src_dims);
    l->field(t->dst, t->dst_data, &dst, &j->dst_dims);
    direction_send_slice(t->src->size, t->dir, slo, shi);
    direction_recv_slice(t->dst->size, t->dir, dlo, dhi);
    for (int a = 0; a < 3; ++a) {
      TSR_CHECK(shi[a] - slo[a] == dhi[a] - dlo[a], TSR_ERR_INTERNAL,
                "copy BlockID %d -> %d in direction %s: slices of different extent",
                (int)t->src->id, (int)t->dst->id, direction_name(t->dir));
      j->src_lo[a] = slo[a];
      j->dst_lo[a] = dlo[a];
      j->extent[a] = shi[a] - slo[a];
    }
    j->src = src;
    j->dst = dst;
    j->comps = l->comps + (size_t)t->dir * (size_t)l->stride;
    j->ncomps = l->ncomps[t->dir];
  }
  grid_copy_boxes(jobs, n, l->esize);
cleanup:
  free(jobs);
  return st;
}
