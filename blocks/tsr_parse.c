#include "tsr_parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An optional sign, then a digit (integers) or a digit or a point (reals). */
static bool tsr_parse_starts_number(const char *text, bool real) {
  if (!text) return false;
  if (*text == '+' || *text == '-') ++text;
  return (*text >= '0' && *text <= '9') || (real && *text == '.');
}

bool tsr_parse_int(const char *text, int64_t min, int64_t max, int64_t *out) {
  if (!tsr_parse_starts_number(text, false)) return false;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (errno == ERANGE || end == text || *end != '\0' || v < min || v > max) return false;
  *out = (int64_t)v;
  return true;
}

bool tsr_parse_real(const char *text, double min, double max, double *out) {
  /* strtod also reads hexadecimal ("0x1p3"): decimal only */
  if (!tsr_parse_starts_number(text, true) || strpbrk(text, "xX")) return false;
  char *end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (errno == ERANGE || end == text || *end != '\0' || !isfinite(v) || !(v >= min && v <= max))
    return false;
  *out = v;
  return true;
}
