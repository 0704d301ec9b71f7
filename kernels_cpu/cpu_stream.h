/* cpu_stream: the memory bandwidth this process's OpenMP threads reach, measured with a
 * STREAM-like copy (b[i] = a[i] over doubles), for the bandwidth bound of the kernels. */
#ifndef CPU_STREAM_H
#define CPU_STREAM_H

#include <stddef.h>

typedef struct cpu_stream_result {
  double copy_gbs;       /* best of the repetitions, GB/s (1e9 bytes), write-allocate counted */
  double copy_gbs_plain; /* the same copy counted as STREAM does: read + write only */
  size_t bytes;          /* size of each array */
} cpu_stream_result_t;

/* Two arrays of `bytes` each (use several times the last-level cache), first touched by
 * the threads that copy them, kept for repeated measurements. */
typedef struct cpu_stream cpu_stream_t;

/* NULL when the arrays cannot be allocated. */
cpu_stream_t *cpu_stream_create(size_t bytes);
void cpu_stream_free(cpu_stream_t **s);

/* Copies between the arrays `reps` times, with the static OpenMP schedule of the
 * kernels; zeros for a NULL s. */
cpu_stream_result_t cpu_stream_run(cpu_stream_t *s, int reps);

#endif
