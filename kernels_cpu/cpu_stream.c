#include "cpu_stream.h"

#include <omp.h>
#include <stdlib.h>

cpu_stream_result_t cpu_stream_copy(size_t bytes, int reps) {
  cpu_stream_result_t r = {0, 0, bytes};
  size_t n = bytes / sizeof(double);
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  if (!a || !b || n == 0) {
    free(a);
    free(b);
    r.bytes = 0;
    return r;
  }
  /* first touch by the threads that use the pages */
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) {
    a[i] = (double)i;
    b[i] = 0.0;
  }
  double best = 1e300;
  for (int k = 0; k < reps; ++k) {
    double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) b[i] = a[i];
    double t = omp_get_wtime() - t0;
    if (t < best) best = t;
    a[k % n] = b[(k + 1) % n]; /* keep the copies observable */
  }
  r.copy_gbs = 3.0 * (double)(n * sizeof(double)) / best / 1e9;
  r.copy_gbs_plain = 2.0 * (double)(n * sizeof(double)) / best / 1e9;
  free(a);
  free(b);
  return r;
}
