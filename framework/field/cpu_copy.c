#include "cpu_copy.h"

#include <stdlib.h>


size_t cpu_copy_size(const cpu_copy_layout_t *l, const block_info_t *b, int dir) {
  return (size_t)direction_slice_cells(b->size, l->width, dir) * (size_t)l->ncomps[dir] *
         l->esize;
}

static const int *cpu_copy_comps(const cpu_copy_layout_t *l, int dir) {
  return l->comps + (size_t)dir * (size_t)l->stride;
}

tsr_status cpu_copy_extract(const cpu_copy_layout_t *l, const block_info_t *b, const void *field,
                            const grid_dims_t *dims, int dir, uint8_t *out, size_t cap,
                            size_t *written, const char *what, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t need = cpu_copy_size(l, b, dir), done = 0;
  TSR_CHECK(need <= cap, TSR_ERR_INTERNAL,
            "extraction of '%s' from BlockID %d in direction %s needs %zu bytes, has %zu", what,
            (int)b->id, direction_name(dir), need, cap);
  const int nb = direction_slice_boxes(b->size, l->width, dir);
  for (int k = 0; k < nb; ++k) {
    int lo[3], hi[3];
    direction_send_box(b->size, l->width, dir, k, lo, hi);
    done += grid_pack(field, dims, l->esize, lo, hi, cpu_copy_comps(l, dir), l->ncomps[dir],
                      out + done);
  }
  *written = done;
cleanup:
  return st;
}

tsr_status cpu_copy_insert(const cpu_copy_layout_t *l, const block_info_t *b, void *field,
                           const grid_dims_t *dims, int dir, const uint8_t *in, size_t len,
                           const char *what, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t need = cpu_copy_size(l, b, dir), done = 0;
  TSR_CHECK(need == len, TSR_ERR_CORRUPT,
            "insertion of '%s' into BlockID %d from direction %s: %zu bytes, expected %zu", what,
            (int)b->id, direction_name(dir), len, need);
  const int nb = direction_slice_boxes(b->size, l->width, dir);
  for (int k = 0; k < nb; ++k) {
    int lo[3], hi[3];
    direction_recv_box(b->size, l->width, dir, k, lo, hi);
    done += grid_unpack(field, dims, l->esize, lo, hi, cpu_copy_comps(l, dir), l->ncomps[dir],
                        in + done);
  }
cleanup:
  return st;
}

tsr_status cpu_copy_run(const registry_copy_task_t *tasks, size_t n, const cpu_copy_layout_t *l,
                        tsr_error_t *err) {
  tsr_status st = TSR_OK;
  grid_copy_job_t *jobs = NULL;
  size_t njobs = 0, cap = 0;
  for (size_t i = 0; i < n; ++i)
    cap += (size_t)direction_slice_boxes(tasks[i].src->size, l->width, tasks[i].dir);
  jobs = malloc((cap ? cap : 1) * sizeof *jobs);
  TSR_CHECK(jobs, TSR_ERR_NOMEM, "out of memory for %zu block-to-block copies", n);
  for (size_t i = 0; i < n; ++i) {
    const registry_copy_task_t *t = &tasks[i];
    void *src, *dst;
    grid_dims_t sd, dd;
    l->field(t->src, t->src_data, l->ctx, &src, &sd);
    l->field(t->dst, t->dst_data, l->ctx, &dst, &dd);
    const int nb = direction_slice_boxes(t->src->size, l->width, t->dir);
    TSR_CHECK(nb == direction_slice_boxes(t->dst->size, l->width, t->dir), TSR_ERR_INTERNAL,
              "copy BlockID %d -> %d in direction %s: slices of different shape",
              (int)t->src->id, (int)t->dst->id, direction_name(t->dir));
    for (int k = 0; k < nb; ++k) {
      grid_copy_job_t *j = &jobs[njobs++];
      int slo[3], shi[3], dlo[3], dhi[3];
      direction_send_box(t->src->size, l->width, t->dir, k, slo, shi);
      direction_recv_box(t->dst->size, l->width, t->dir, k, dlo, dhi);
      for (int a = 0; a < 3; ++a) {
        TSR_CHECK(shi[a] - slo[a] == dhi[a] - dlo[a], TSR_ERR_INTERNAL,
                  "copy BlockID %d -> %d in direction %s: slices of different extent",
                  (int)t->src->id, (int)t->dst->id, direction_name(t->dir));
        j->src_lo[a] = slo[a];
        j->dst_lo[a] = dlo[a];
        j->extent[a] = shi[a] - slo[a];
      }
      j->src = src;
      j->src_dims = sd;
      j->dst = dst;
      j->dst_dims = dd;
      j->comps = cpu_copy_comps(l, t->dir);
      j->ncomps = l->ncomps[t->dir];
    }
  }
  grid_copy_boxes(jobs, njobs, l->esize);
cleanup:
  free(jobs);
  return st;
}
