#include "cpu_threads.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <omp.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif
#include <unistd.h>

int cpu_threads_max(void) { return omp_get_max_threads(); }

void cpu_threads_set(int n) {
  if (n < 1) return;
  omp_set_num_threads(n);
#if defined(__SSE__)
  (void)cpu_threads_flush_denormals((_mm_getcsr() & 0x8040u) == 0x8040u);
#endif
}

int cpu_threads_available(void) { return omp_get_num_procs(); }

int cpu_threads_online(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

void cpu_threads_wait_policy(char *text, size_t cap) {
  const char *policy = getenv("OMP_WAIT_POLICY"), *spins = getenv("GOMP_SPINCOUNT");
  if (policy && strcasecmp(policy, "passive") == 0)
    snprintf(text, cap, "passive (OMP_WAIT_POLICY: sleep at once)");
  else if (policy && strcasecmp(policy, "active") == 0)
    snprintf(text, cap, "active (OMP_WAIT_POLICY: spin)");
  else if (spins)
    snprintf(text, cap, "spin %.32s, then sleep (GOMP_SPINCOUNT)", spins);
  else
    snprintf(text, cap, "libgomp's default (spin 300000, then sleep)");
}

int cpu_threads_most(void) {
  const int online = cpu_threads_online(), limit = omp_get_thread_limit();
  const int most = online > INT_MAX / CPU_THREADS_PER_PROCESSOR_MAX
                       ? INT_MAX
                       : online * CPU_THREADS_PER_PROCESSOR_MAX;
  return limit > 0 && limit < most ? limit : most;
}

int cpu_threads_flush_denormals(int on) {
#if defined(__SSE__)
  const unsigned int bits = 0x8040; /* FTZ (bit 15) | DAZ (bit 6) */
  unsigned int csr = _mm_getcsr();
  _mm_setcsr(on ? (csr | bits) : (csr & ~bits));
#pragma omp parallel
  {
    unsigned int c = _mm_getcsr();
    _mm_setcsr(on ? (c | bits) : (c & ~bits));
  }
  return 1;
#else
  (void)on;
  return 0;
#endif
}
