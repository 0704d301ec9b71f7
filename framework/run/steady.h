/* steady: the steady-state stop (stop.when_steady), the decision alone.
 *
 * Samples (step, value) arrive in step order; the state is steady once the samples of the
 * last `window` steps (those at steps >= step - window) span the whole window (the run
 * has gone `window` steps past its first sample) and their largest minus their smallest
 * value is at most tolerance x their largest magnitude. A total that still drifts or
 * oscillates by more never is. */
#ifndef STEADY_H
#define STEADY_H

#include <stdbool.h>
#include <stdint.h>

#include "tsr_error.h"

typedef struct steady steady_t;

/* window >= 1 steps, every in 1..window (samples are every `every` steps), tolerance
 * relative. */
TSR_NODISCARD tsr_status steady_create(int64_t window, int64_t every, double tolerance,
                                       steady_t **out, tsr_error_t *err);
void steady_free(steady_t **s);

/* Adds the sample of `step`; true when the state is now steady. *change: the spread of
 * the window's samples relative to their largest magnitude (the figure compared with
 * the tolerance; meaningful once the window is spanned, else NaN). A non-finite value
 * is never steady. */
bool steady_add(steady_t *s, int64_t step, double value, double *change);

#endif
