#include "cpu_threads.h"

#include <omp.h>
#include <unistd.h>

int cpu_threads_max(void) { return omp_get_max_threads(); }

void cpu_threads_set(int n) {
  if (n >= 1) omp_set_num_threads(n);
}

int cpu_threads_available(void) { return omp_get_num_procs(); }

int cpu_threads_online(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}
