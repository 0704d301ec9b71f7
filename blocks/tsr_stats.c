#include "tsr_stats.h"

#include <stdlib.h>

static int tsr_cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double tsr_sort_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, tsr_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
