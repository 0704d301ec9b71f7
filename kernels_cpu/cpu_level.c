#include "cpu_level.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_levels.h" /* generated: CPU_LEVEL_LIST of this build */

#define CPU_LEVEL_NAME(id, name) name,
static const char *const cpu_level_names[] = {CPU_LEVEL_LIST(CPU_LEVEL_NAME)};
#undef CPU_LEVEL_NAME
enum { CPU_LEVELS = sizeof cpu_level_names / sizeof cpu_level_names[0] };

static int cpu_level_in_use = -2; /* -2: not chosen yet */

int cpu_level_count(void) { return CPU_LEVELS; }

const char *cpu_level_name(int level) {
  return level >= 0 && level < CPU_LEVELS ? cpu_level_names[level] : "none";
}

int cpu_level_supported(int level) {
  if (level < 0 || level >= CPU_LEVELS) return 0;
#if defined(__x86_64__) && defined(__GNUC__)
  const char *name = cpu_level_names[level];
  /* GCC's CPU model checks the CPUID bits and the OS's register state (XGETBV) */
  __builtin_cpu_init();
#if defined(__clang__)
  /* clang (14) knows the features, not the level names: the levels' defining features
     (the fuzz build uses clang) */
  const int v2 = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt") &&
                 __builtin_cpu_supports("ssse3");
  const int v3 = v2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                 __builtin_cpu_supports("bmi2");
  const int v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  if (strcmp(name, "x86-64-v2") == 0) return v2;
  if (strcmp(name, "x86-64-v3") == 0) return v3;
  if (strcmp(name, "x86-64-v4") == 0) return v4;
#else
  if (strcmp(name, "x86-64-v2") == 0) return __builtin_cpu_supports("x86-64-v2") != 0;
  if (strcmp(name, "x86-64-v3") == 0) return __builtin_cpu_supports("x86-64-v3") != 0;
  if (strcmp(name, "x86-64-v4") == 0) return __builtin_cpu_supports("x86-64-v4") != 0;
#endif
#endif
  /* "native" and "generic": what this binary was compiled for */
  return 1;
}

int cpu_level_best(void) {
  for (int l = CPU_LEVELS - 1; l >= 0; --l)
    if (cpu_level_supported(l)) return l;
  return -1;
}

int cpu_level_find(const char *name) {
  for (int l = 0; l < CPU_LEVELS; ++l)
    if (strcmp(name, cpu_level_names[l]) == 0) return l;
  return -1;
}

void cpu_level_describe(char *out, size_t cap) {
  size_t used = 0;
  if (cap) out[0] = '\0';
  for (int l = 0; l < CPU_LEVELS && used < cap; ++l) {
    int k = snprintf(out + used, cap - used, "%s%s%s", l ? ", " : "", cpu_level_names[l],
                     cpu_level_supported(l) ? "" : " (not on this CPU)");
    if (k < 0) break;
    used += (size_t)k;
  }
}

int cpu_level_from_environment(char *msg, size_t cap) {
  const char *want = getenv("TESSERA_CPU_LEVEL");
  char levels[256];
  cpu_level_describe(levels, sizeof levels);
  int level = cpu_level_best();
  if (want) {
    level = cpu_level_find(want);
    if (level < 0 || !cpu_level_supported(level)) {
      snprintf(msg, cap, "TESSERA_CPU_LEVEL = '%.64s%s': %s; the levels of this build are %s",
               want, strlen(want) > 64 ? "..." : "",
               level < 0 ? "no level of this build" : "this CPU lacks that level", levels);
      cpu_level_in_use = -1;
      return -1;
    }
  } else if (level < 0) {
    snprintf(msg, cap, "this CPU has none of the instruction-set levels the CPU kernels were "
             "built for (%s); build with -DTESSERA_NATIVE=ON for this machine", levels);
    cpu_level_in_use = -1;
    return -1;
  }
  cpu_level_in_use = level;
  return 0;
}

int cpu_level_current(void) {
  if (cpu_level_in_use == -2) {
    char msg[512];
    (void)cpu_level_from_environment(msg, sizeof msg);
  }
  return cpu_level_in_use;
}
