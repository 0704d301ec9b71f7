/* cpu_level: the instruction-set levels the CPU kernels are built for, and the one in use.
 *
 * On x86-64 the LBM kernels (lbm_kernels.h) are compiled once per level, x86-64-v2 (SSE4.2),
 * x86-64-v3 (AVX2, FMA) and x86-64-v4 (AVX-512), and one binary runs on any x86-64 CPU
 * of level v2 or higher, with the highest level the CPU has. A build with
 * TESSERA_NATIVE=ON has one level, "native" (-march=native: this machine's instruction
 * set; the binary runs only on CPUs that have it all), and other architectures one,
 * "generic" (the compiler's default for the target, e.g. NEON on aarch64). Every level
 * computes bitwise the same values (no floating-point contraction, the same operations
 * in the same order per cell).
 *
 * The environment variable TESSERA_CPU_LEVEL names a level to use instead of the
 * highest (for tests and comparisons): one of the levels built, that the CPU has. */
#ifndef CPU_LEVEL_H
#define CPU_LEVEL_H

#include <stddef.h>

/* Levels built into this binary, lowest first; their names ("x86-64-v3", ...). */
int cpu_level_count(void);
const char *cpu_level_name(int level);

/* 1 where this CPU (and its operating system) supports the level. */
int cpu_level_supported(int level);

/* The highest level the CPU supports; -1 where it supports none (an x86-64 CPU without
 * SSE4.2 and POPCNT). */
int cpu_level_best(void);

/* The level of the name; -1 for a name that is no level of this binary. */
int cpu_level_find(const char *name);

/* Checks TESSERA_CPU_LEVEL (unset: the best level) and makes its level the one in use.
 * Returns 0, or -1 with a message (the value, the levels built and which of them this
 * CPU has) in msg (cap bytes). */
int cpu_level_from_environment(char *msg, size_t cap);

/* The level in use: the one cpu_level_from_environment set; before it is called,
 * it is applied first (-1 where it fails). */
int cpu_level_current(void);

/* "x86-64-v2 x86-64-v3 x86-64-v4": the levels built, "name" or "name (not on this
 * CPU)" each, into out (cap bytes). */
void cpu_level_describe(char *out, size_t cap);

#endif
