/* store16_levels: store16.h's vector conversions as each CPU level of the build compiles
 * them (cpu_level.h), for checking them against the scalar ones. */
#ifndef STORE16_LEVELS_H
#define STORE16_LEVELS_H

#include <stddef.h>
#include <stdint.h>

/* The first n (a multiple of 16) floats x encoded in format S into s and in format C into
 * c, and those decoded again into sx and cx, with the vector code of CPU level `level`
 * (0 <= level < cpu_level_count(); the caller makes sure the CPU supports it). */
typedef void (*store16_vconvert_fn)(const float *x, size_t n, uint16_t *s, uint16_t *c,
                                    float *sx, float *cx);
store16_vconvert_fn store16_vconvert_level(int level);

#endif
