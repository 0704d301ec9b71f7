/* cpu_threads: the OpenMP team the CPU kernels run on. */
#ifndef CPU_THREADS_H
#define CPU_THREADS_H

#include <stddef.h>

/* Threads an OpenMP parallel region of the CPU kernels uses (omp_get_max_threads). */
int cpu_threads_max(void);

/* Sets the team size for later parallel regions; n >= 1. The threads of the new team get
 * the calling thread's flush-to-zero mode (see below), so the mode stays the same on
 * every thread. */
void cpu_threads_set(int n);

/* Turns flush-to-zero and denormals-are-zero on (or off) in every thread of the OpenMP
 * team and the calling thread, where the CPU has them (x86 SSE); returns 1 if it could.
 * Subnormal floats (which appear in single precision once disturbances have decayed,
 * especially with the f - w_i rho0 storage) can otherwise slow the kernels severalfold.
 * The same mode on every thread keeps every cell's arithmetic identical. */
int cpu_threads_flush_denormals(int on);

/* How the team's idle threads wait, as libgomp read it from the environment when it was
 * loaded, in words (into text, cap bytes): OMP_WAIT_POLICY "passive" (sleep at once) or
 * "active" (spin), else GOMP_SPINCOUNT's spin count before sleeping, else libgomp's
 * default (300000 spins, then sleep). tessera's command line sets GOMP_SPINCOUNT=10000
 * unless told otherwise (app_default_wait_policy). */
void cpu_threads_wait_policy(char *text, size_t cap);

/* Processors this process may run on (its affinity mask) and processors online. */
int cpu_threads_available(void);
int cpu_threads_online(void);

/* The largest team tessera accepts from the environment (OMP_NUM_THREADS): 64 threads
 * per processor online, and no more than omp_get_thread_limit(). Oversubscribing a
 * machine a few times over is a legitimate experiment; a team far beyond that is a
 * typing error, and libgomp crashes (SIGSEGV) when thread creation fails for one. */
enum { CPU_THREADS_PER_PROCESSOR_MAX = 64 };
int cpu_threads_most(void);

#endif
