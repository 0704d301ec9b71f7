#include "store16_levels.h"

#include "cpu_level.h"
#include "cpu_levels.h" /* generated: CPU_LEVEL_LIST */

#define STORE16_DECLARE(level, name)                                                     \
  void store16_vconvert_##level(const float *x, size_t n, uint16_t *s, uint16_t *c,      \
                                float *sx, float *cx);
CPU_LEVEL_LIST(STORE16_DECLARE)
#define STORE16_ENTRY(level, name) store16_vconvert_##level,
static const store16_vconvert_fn store16_levels[] = {CPU_LEVEL_LIST(STORE16_ENTRY)};

store16_vconvert_fn store16_vconvert_level(int level) {
  return level >= 0 && level < cpu_level_count() ? store16_levels[level] : NULL;
}
