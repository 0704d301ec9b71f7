/* The 16-bit storage formats (store16.h): every one of the 65536 codes of each format
 * decodes to the value the format defines (computed here independently, in double with
 * ldexp); every code's value encodes to that code; between two neighbouring codes the
 * midpoint goes to the even one and the floats just beside it to the nearer one (round to
 * nearest, ties to even), also across the subnormal/normal boundary and past the largest
 * value (S: infinity, C: saturation); NaN and infinity as documented. The vector code of
 * every CPU level of the build (F16C and AVX-512 conversions for S where the level has
 * them) gives the scalar code's bits for all these inputs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpu_level.h"
#include "store16.h"
#include "store16_levels.h"

typedef struct format {
  const char *name;
  int m, b, ieee; /* mantissa bits, bias, infinity and NaN at the top exponent */
  uint16_t (*enc)(float);
  float (*dec)(uint16_t);
} format_t;

static const format_t formats[2] = {
    {"S", STORE16_S_M, STORE16_S_B, 1, store16_s_encode, store16_s_decode},
    {"C", STORE16_C_M, STORE16_C_B, 0, store16_c_encode, store16_c_decode}};

/* The value of code h (magnitude bits only, h < 0x8000) by the format's definition;
 * infinity or NaN as +inf (the caller tells them apart). */
static double reference(const format_t *f, unsigned h) {
  const unsigned e = h >> f->m, man = h & ((1u << f->m) - 1u);
  if (f->ieee && e == (1u << (15 - f->m)) - 1u) return INFINITY;
  if (e == 0) return ldexp((double)man, 1 - f->b - f->m);
  return ldexp(1.0 + ldexp((double)man, -f->m), (int)e - f->b);
}

static unsigned top_finite(const format_t *f) { return f->ieee ? (31u << f->m) - 1u : 0x7fffu; }

static uint32_t bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static void test_decode_every_code(void **state) {
  (void)state;
  for (int k = 0; k < 2; ++k) {
    const format_t *f = &formats[k];
    for (unsigned h = 0; h < 0x10000u; ++h) {
      const float v = f->dec((uint16_t)h);
      const double r = reference(f, h & 0x7fffu);
      if (isinf(r) && (h & ((1u << f->m) - 1u))) {
        assert_true(isnan(v)); /* S: NaN codes */
        continue;
      }
      assert_true((double)fabsf(v) == r);
      assert_int_equal(!!signbit(v), !!(h & 0x8000u));
    }
  }
}

/* The floats the rounding test encodes: every finite code's value, the midpoints to its
 * upper neighbour and the floats next to those; with the code they must give. */
typedef struct probe {
  float x;
  uint16_t want;
} probe_t;

static size_t probes(const format_t *f, probe_t *p) {
  size_t n = 0;
  const unsigned top = top_finite(f);
  for (unsigned h = 0; h <= top; ++h)
    for (unsigned s = 0; s < 2; ++s) {
      const uint16_t sign = (uint16_t)(s << 15);
      const double lo = reference(f, h);
      /* above the largest value: the next code S would have (infinity), C saturates */
      const double hi = h < top ? reference(f, h + 1) : ldexp(1.0, (f->ieee ? 31 : 16) - f->b);
      const uint16_t up = h < top || f->ieee ? (uint16_t)(h + 1) : (uint16_t)top;
      const double mid = 0.5 * (lo + hi); /* exact in a float: one bit more than the code */
      const float sg = s ? -1.0f : 1.0f;
      p[n++] = (probe_t){sg * (float)lo, (uint16_t)(sign | h)};
      p[n++] = (probe_t){sg * (float)mid, (uint16_t)(sign | ((h & 1u) ? up : h))};
      p[n++] = (probe_t){sg * nextafterf((float)mid, 0.0f), (uint16_t)(sign | h)};
      p[n++] = (probe_t){sg * nextafterf((float)mid, INFINITY), (uint16_t)(sign | up)};
    }
  return n;
}

static void test_round_to_nearest_even(void **state) {
  (void)state;
  probe_t *p = malloc(8 * 0x8000 * sizeof *p);
  assert_non_null(p);
  for (int k = 0; k < 2; ++k) {
    const format_t *f = &formats[k];
    const size_t n = probes(f, p);
    for (size_t i = 0; i < n; ++i) {
      if (f->enc(p[i].x) != p[i].want)
        fail_msg("format %s: %a encodes to %04x, want %04x", f->name, (double)p[i].x,
                 f->enc(p[i].x), p[i].want);
    }
  }
  free(p);
}

static void test_special_values(void **state) {
  (void)state;
  const float inf = INFINITY, nan = NAN;
  assert_int_equal(store16_s_encode(inf), 0x7c00);
  assert_int_equal(store16_s_encode(-inf), 0xfc00);
  assert_true(isinf(store16_s_decode(0x7c00)));
  assert_int_equal(store16_s_encode(nan) & 0x7c00, 0x7c00);
  assert_true((store16_s_encode(nan) & 0x3ff) != 0);
  assert_int_equal(store16_c_encode(inf), 0x7fff);
  assert_int_equal(store16_c_encode(-inf), 0xffff);
  assert_int_equal(store16_c_encode(nan) & 0x7fff, 0x7fff);
  assert_int_equal(store16_c_encode(1e30f), 0x7fff);
  assert_int_equal(store16_c_encode(-3.0f), 0xffff);
  /* the ranges the header states */
  assert_true(store16_s_decode(0x7bff) == 65504.0f * 0x1p-15f);
  assert_true(store16_s_decode(0x0001) == 0x1p-39f);
  assert_true(store16_c_decode(0x7fff) == 2.0f - 0x1p-11f);
  assert_true(store16_c_decode(0x0001) == 0x1p-25f);
  assert_true(store16_c_decode(0x0800) == 0x1p-14f);
  assert_int_equal(store16_c_encode(1.0f), 15 << 11);
}

/* Every level's vector code against the scalar code, on the probes of both formats and
 * on a spread of floats of every exponent. */
static void test_levels_match_scalar(void **state) {
  (void)state;
  const size_t cap = 2 * 8 * 0x8000 + 256 * 64;
  probe_t *p = malloc(8 * 0x8000 * sizeof *p);
  float *x = malloc(cap * sizeof *x), *sx = malloc(cap * sizeof *sx);
  float *cx = malloc(cap * sizeof *cx);
  uint16_t *s = malloc(cap * sizeof *s), *c = malloc(cap * sizeof *c);
  assert_true(p && x && sx && cx && s && c);
  size_t n = 0;
  for (int k = 0; k < 2; ++k) {
    const size_t m = probes(&formats[k], p);
    for (size_t i = 0; i < m; ++i) x[n++] = p[i].x;
  }
  for (uint32_t e = 0; e < 256; ++e)
    for (uint32_t j = 0; j < 64; ++j) {
      const uint32_t u = (j & 32u) << 26 | e << 23 | (j * 0x2a5a5u & 0x7fffffu);
      float v;
      memcpy(&v, &u, sizeof v);
      x[n++] = isnan(v) ? 0.0f : v;
    }
  n = n / 16 * 16;
  int checked = 0;
  for (int level = 0; level < cpu_level_count(); ++level) {
    if (!cpu_level_supported(level)) continue;
    store16_vconvert_level(level)(x, n, s, c, sx, cx);
    for (size_t i = 0; i < n; ++i) {
      if (s[i] != store16_s_encode(x[i]) || c[i] != store16_c_encode(x[i]))
        fail_msg("level %s: %a encodes to S %04x C %04x, the scalar code to %04x %04x",
                 cpu_level_name(level), (double)x[i], s[i], c[i], store16_s_encode(x[i]),
                 store16_c_encode(x[i]));
      if (bits(sx[i]) != bits(store16_s_decode(s[i])) ||
          bits(cx[i]) != bits(store16_c_decode(c[i])))
        fail_msg("level %s: %04x %04x decode differently", cpu_level_name(level), s[i], c[i]);
    }
    ++checked;
  }
  assert_true(checked > 0);
  free(p);
  free(x);
  free(sx);
  free(cx);
  free(s);
  free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_decode_every_code),
      cmocka_unit_test(test_round_to_nearest_even),
      cmocka_unit_test(test_special_values),
      cmocka_unit_test(test_levels_match_scalar),
  };
  return cmocka_run_group_tests_name("store16", tests, NULL, NULL);
}
