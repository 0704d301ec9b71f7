#include "steady.h"

#include <math.h>
#include <stdlib.h>

struct steady {
  int64_t window, first;
  double tolerance;
  int64_t *steps; /* a ring of the window's samples */
  double *values;
  size_t cap, head, n;
};

tsr_status steady_create(int64_t window, int64_t every, double tolerance, steady_t **out,
                         tsr_error_t *err) {
  tsr_status st = TSR_OK;
  steady_t *s = NULL;
  *out = NULL;
  TSR_CHECK(window >= 1 && every >= 1 && every <= window && tolerance >= 0, TSR_ERR_INVALID,
            "steady state: window %lld, every %lld, tolerance %g: allowed are 1 <= every <= "
            "window and tolerance >= 0", (long long)window, (long long)every, tolerance);
  s = calloc(1, sizeof *s);
  TSR_CHECK(s, TSR_ERR_NOMEM, "out of memory for the steady-state samples");
  s->window = window;
  s->tolerance = tolerance;
  s->first = -1;
  s->cap = (size_t)(window / every) + 2; /* both ends of the window, and the new one */
  s->steps = malloc(s->cap * sizeof *s->steps);
  s->values = malloc(s->cap * sizeof *s->values);
  TSR_CHECK(s->steps && s->values, TSR_ERR_NOMEM,
            "out of memory for %zu steady-state samples", s->cap);
  *out = s;
  s = NULL;
cleanup:
  steady_free(&s);
  return st;
}

void steady_free(steady_t **s) {
  if (!s || !*s) return;
  free((*s)->steps);
  free((*s)->values);
  free(*s);
  *s = NULL;
}

bool steady_add(steady_t *s, int64_t step, double value, double *change) {
  *change = NAN;
  if (s->first < 0) s->first = step;
  /* samples older than the window leave; the ring always has room for the new one */
  while (s->n > 0 && (s->steps[s->head] < step - s->window || s->n == s->cap)) {
    s->head = (s->head + 1) % s->cap;
    --s->n;
  }
  size_t at = (s->head + s->n) % s->cap;
  s->steps[at] = step;
  s->values[at] = value;
  ++s->n;
  if (step - s->first < s->window) return false;
  double lo = INFINITY, hi = -INFINITY, big = 0;
  for (size_t k = 0; k < s->n; ++k) {
    double v = s->values[(s->head + k) % s->cap];
    if (!isfinite(v)) return false;
    lo = fmin(lo, v);
    hi = fmax(hi, v);
    big = fmax(big, fabs(v));
  }
  *change = big > 0 ? (hi - lo) / big : 0.0;
  return *change <= s->tolerance;
}
