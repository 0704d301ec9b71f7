/* cpu_threads: the OpenMP team the CPU kernels run on. */
#ifndef CPU_THREADS_H
#define CPU_THREADS_H

/* Threads an OpenMP parallel region of the CPU kernels uses (omp_get_max_threads). */
int cpu_threads_max(void);

/* Sets the team size for later parallel regions; n >= 1. */
void cpu_threads_set(int n);

/* Processors this process may run on (its affinity mask) and processors online. */
int cpu_threads_available(void);
int cpu_threads_online(void);

#endif
