/* fma_peak_impl.h: the FMA chains of fma_peak.h for one CPU level (FMA_LEVEL) and one
 * precision (FMA_REAL, FMA_FMA, FMA_SFX), included by the generated
 * fma_peak_level_<level>.c. */
#define FMA_CAT_(a, b, c) a##_##b##_##c
#define FMA_CAT(a, b, c) FMA_CAT_(a, b, c)
#ifndef FMA_CHAINS
#define FMA_CHAINS 12
#endif

/* iters rounds of FMA_CHAINS vector FMAs on this thread; returns a sum of the chains
 * (kept, so that the work is not optimised away). */
FMA_REAL FMA_CAT(fma_chains, FMA_SFX, FMA_LEVEL)(long iters, FMA_REAL a, FMA_REAL b);
FMA_REAL FMA_CAT(fma_chains, FMA_SFX, FMA_LEVEL)(long iters, FMA_REAL a, FMA_REAL b) {
  enum { W = (int)(64 / sizeof(FMA_REAL)) };
  _Alignas(64) FMA_REAL acc[FMA_CHAINS][W];
  for (int k = 0; k < FMA_CHAINS; ++k)
    for (int l = 0; l < W; ++l) acc[k][l] = (FMA_REAL)(1.0 + 1e-3 * k + 1e-4 * l);
  for (long it = 0; it < iters; ++it) {
    _Pragma("GCC unroll 12")
    for (int k = 0; k < FMA_CHAINS; ++k) {
      _Pragma("omp simd")
      for (int l = 0; l < W; ++l) acc[k][l] = FMA_FMA(acc[k][l], a, b);
    }
  }
  FMA_REAL s = 0;
  for (int k = 0; k < FMA_CHAINS; ++k)
    for (int l = 0; l < W; ++l) s += acc[k][l];
  return s;
}
#undef FMA_CAT
#undef FMA_CAT_
