#include "cpu_stream.h"

#include <omp.h>
#include <stdlib.h>

struct cpu_stream {
  double *a, *b;
  size_t n; /* doubles per array */
};

cpu_stream_t *cpu_stream_create(size_t bytes) {
  cpu_stream_t *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->n = bytes / sizeof(double);
  s->a = malloc(s->n * sizeof *s->a);
  s->b = malloc(s->n * sizeof *s->b);
  if (!s->a || !s->b || s->n == 0) {
    cpu_stream_free(&s);
    return NULL;
  }
  double *a = s->a, *b = s->b;
  /* first touch by the threads that use the pages */
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < s->n; ++i) {
    a[i] = (double)i;
    b[i] = 0.0;
  }
  return s;
}

void cpu_stream_free(cpu_stream_t **s) {
  if (!s || !*s) return;
  free((*s)->a);
  free((*s)->b);
  free(*s);
  *s = NULL;
}

cpu_stream_result_t cpu_stream_run(cpu_stream_t *s, int reps) {
  cpu_stream_result_t r = {0, 0, 0};
  if (!s) return r;
  double *a = s->a, *b = s->b;
  const size_t n = s->n;
  double best = 1e300;
  for (int k = 0; k < reps; ++k) {
    double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) b[i] = a[i];
    double t = omp_get_wtime() - t0;
    if (t < best) best = t;
    a[(size_t)k % n] = b[(size_t)(k + 1) % n]; /* keep the copies observable */
  }
  r.bytes = n * sizeof(double);
  r.copy_gbs = 3.0 * (double)r.bytes / best / 1e9;
  r.copy_gbs_plain = 2.0 * (double)r.bytes / best / 1e9;
  return r;
}
