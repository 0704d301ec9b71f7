#include "cpu_threads.h"

#include <omp.h>

int cpu_threads_max(void) { return omp_get_max_threads(); }

void cpu_threads_set(int n) {
  if (n >= 1) omp_set_num_threads(n);
}
