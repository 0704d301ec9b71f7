#include "fma_peak.h"

#include <omp.h>

#include "cpu_level.h"
#include "cpu_levels.h" /* generated: CPU_LEVEL_LIST */

typedef double (*fma_f64_fn)(long, double, double);
typedef float (*fma_f32_fn)(long, float, float);
#define FMA_DECLARE(level, name)                           \
  double fma_chains_f64_##level(long, double, double);     \
  float fma_chains_f32_##level(long, float, float);
CPU_LEVEL_LIST(FMA_DECLARE)
#undef FMA_DECLARE
#define FMA_ENTRY(level, name) fma_chains_f64_##level,
static const fma_f64_fn fma_f64[] = {CPU_LEVEL_LIST(FMA_ENTRY)};
#undef FMA_ENTRY
#define FMA_ENTRY(level, name) fma_chains_f32_##level,
static const fma_f32_fn fma_f32[] = {CPU_LEVEL_LIST(FMA_ENTRY)};
#undef FMA_ENTRY

double fma_peak_gflops(int dp, double seconds) {
  int level = cpu_level_current();
  if (level < 0) level = 0;
  const int lanes = dp ? 8 : 16, chains = 12;
  volatile double sink = 0;
  long iters = 1 << 16;
  for (;;) { /* the same rounds on every thread; grown until they take long enough */
    double t0 = omp_get_wtime(), sum = 0;
    int threads = 1;
#pragma omp parallel reduction(+ : sum)
    {
#pragma omp single
      threads = omp_get_num_threads();
      if (dp) sum += fma_f64[level](iters, 0.9999999, 1e-8);
      else sum += (double)fma_f32[level](iters, 0.9999f, 1e-5f);
    }
    const double dt = omp_get_wtime() - t0;
    sink += sum;
    if (dt >= seconds || iters > (1L << 40))
      return 2.0 * (double)iters * chains * lanes * threads / dt * 1e-9;
    iters *= dt > 0.01 ? (long)(seconds / dt * 1.2) + 1 : 8;
  }
}
