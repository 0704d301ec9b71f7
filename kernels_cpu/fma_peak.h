/* fma_peak: the floating-point peak of this process's OpenMP threads, measured: every
 * thread runs independent chains of fused multiply-adds on 64-byte vectors (12 in flight,
 * enough to fill two FMA pipes of 4 cycles' latency), compiled once per CPU level
 * (cpu_level.h) and run at the current one. What a compute-bound kernel's GFLOPS are
 * compared with (tessera bench --fma; docs/performance.md). */
#ifndef FMA_PEAK_H
#define FMA_PEAK_H

/* GFLOPS (an FMA counts 2) of all threads together in double (dp 1) or single
 * precision, over at least `seconds` of work. */
double fma_peak_gflops(int dp, double seconds);

#endif
