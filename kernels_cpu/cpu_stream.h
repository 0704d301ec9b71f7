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

/* Copies between two arrays of `bytes` each (use several times the last-level cache),
 * `reps` times, with the static OpenMP schedule of the kernels. Returns zeros when the
 * arrays cannot be allocated. */
cpu_stream_result_t cpu_stream_copy(size_t bytes, int reps);

#endif
