#include "units.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

units_t units_none(void) {
  units_t u;
  memset(&u, 0, sizeof u);
  u.dx = u.dt = u.mass = 1.0L;
  u.lattice_velocity = u.lattice_viscosity = u.reynolds = 0.0;
  return u;
}

/* The decimal number a double was written as, in long double: the shortest decimal
 * that reads back as x (what a configuration says: 0.1475, not 0.14749999999999999),
 * read with long double's precision. Conversions from it are exact where the decimal
 * arithmetic is (0.1475 / (0.1 / 20) is 29.5), which the doubles alone are not. */
static long double units_decimal(double x) {
  char text[40];
  for (int digits = 1; digits <= 17; ++digits) {
    snprintf(text, sizeof text, "%.*g", digits, x);
    if (strtod(text, NULL) == x) return strtold(text, NULL);
  }
  return x;
}

static bool units_finite(long double x) { return x > 0 && x <= (long double)DBL_MAX && x >= DBL_MIN; }

bool units_make(const units_input_t *in, units_t *out, char *why, size_t cap) {
  units_t u = units_none();
  u.on = true;
  u.physical_output = in->physical_output;
  u.in = *in;
  const long double L = units_decimal(in->length), U = units_decimal(in->velocity),
                    nu = units_decimal(in->viscosity), time = units_decimal(in->time);
  u.dx = in->cells > 0 ? L / units_decimal(in->cells) : units_decimal(in->cell_size);
  switch (in->by) {
  case UNITS_BY_LATTICE_VELOCITY: u.dt = time * u.dx / U; break;
  case UNITS_BY_TIME_STEP: u.dt = time; break;
  case UNITS_BY_LATTICE_VISCOSITY: u.dt = time * u.dx * u.dx / nu; break;
  }
  u.mass = units_decimal(in->density) * u.dx * u.dx * u.dx;
  const long double lu = U * u.dt / u.dx, lnu = nu * u.dt / (u.dx * u.dx), re = U * L / nu;
  if (!units_finite(u.dx) || !units_finite(u.dt) || !units_finite(u.mass) || !units_finite(lu) ||
      !units_finite(lnu) || !units_finite(re)) {
    snprintf(why, cap, "the scales are out of range of a double (dx = %Lg m, dt = %Lg s, "
             "rho dx^3 = %Lg kg, lattice velocity %Lg, lattice viscosity %Lg)", u.dx, u.dt,
             u.mass, lu, lnu);
    return false;
  }
  /* the given value itself where it was given: no round trip through the scales */
  u.lattice_velocity = in->by == UNITS_BY_LATTICE_VELOCITY ? in->time : (double)lu;
  u.lattice_viscosity = in->by == UNITS_BY_LATTICE_VISCOSITY ? in->time : (double)lnu;
  u.reynolds = (double)re;
  *out = u;
  return true;
}

static long double units_power(long double x, int n) {
  long double r = 1.0L;
  for (int i = 0; i < (n < 0 ? -n : n); ++i) r *= x;
  return n < 0 ? 1.0L / r : r;
}

long double units_factor(const units_t *u, units_dim_t d) {
  if (!u || !u->on) return 1.0L;
  return units_power(u->dx, d.length) * units_power(u->dt, d.time) * units_power(u->mass, d.mass);
}

double units_to_lattice(const units_t *u, units_dim_t d, double physical) {
  if (!u || !u->on) return physical;
  return (double)(units_decimal(physical) / units_factor(u, d));
}

double units_to_physical(const units_t *u, units_dim_t d, double lattice) {
  return (double)((long double)lattice * units_factor(u, d));
}

double units_output_factor(const units_t *u, units_dim_t d) {
  return u && u->on && u->physical_output ? (double)units_factor(u, d) : 1.0;
}

/* " m^2" etc.: a base unit with its exponent's magnitude, after a space unless first. */
static void units_put(char *out, size_t cap, size_t *used, const char *base, int n) {
  if (n == 0 || *used >= cap) return;
  int k = n == 1 ? snprintf(out + *used, cap - *used, "%s%s", *used ? " " : "", base)
                 : snprintf(out + *used, cap - *used, "%s%s^%d", *used ? " " : "", base, n);
  if (k > 0) *used += (size_t)k;
}

void units_name(units_dim_t d, char *out, size_t cap) {
  /* the named units an engineer reads: newton, pascal, joule */
  const struct {
    units_dim_t d;
    const char *name;
  } named[] = {{UNITS_FORCE, "N"}, {UNITS_PRESSURE, "Pa"}, {UNITS_ENERGY, "J"},
               {UNITS_FORCE_DENSITY, "N/m^3"}};
  for (size_t i = 0; cap > 0 && i < sizeof named / sizeof named[0]; ++i)
    if (d.length == named[i].d.length && d.time == named[i].d.time && d.mass == named[i].d.mass) {
      snprintf(out, cap, "%s", named[i].name);
      return;
    }
  /* else kilogram, metre, second with positive exponents, then "/" and the negative ones,
     in parentheses when there are several */
  const char *base[3] = {"kg", "m", "s"};
  const int e[3] = {d.mass, d.length, d.time};
  size_t used = 0;
  if (cap == 0) return;
  out[0] = '\0';
  for (int i = 0; i < 3; ++i)
    if (e[i] > 0) units_put(out, cap, &used, base[i], e[i]);
  int negative = 0;
  for (int i = 0; i < 3; ++i) negative += e[i] < 0;
  if (negative == 0) return;
  char den[32] = "";
  size_t dused = 0;
  for (int i = 0; i < 3; ++i)
    if (e[i] < 0) units_put(den, sizeof den, &dused, base[i], -e[i]);
  if (used == 0) snprintf(out, cap, "1/%s%s%s", negative > 1 ? "(" : "", den, negative > 1 ? ")" : "");
  else if (used < cap)
    snprintf(out + used, cap - used, "/%s%s%s", negative > 1 ? "(" : "", den, negative > 1 ? ")" : "");
}

void units_describe(const units_t *u, char *out, size_t cap) {
  if (!u->on) {
    snprintf(out, cap, "lattice units");
    return;
  }
  snprintf(out, cap, "dx = %.6Lg m, dt = %.6Lg s, Re = U L / nu = %.6g (U = %g m/s, L = %g m, "
           "nu = %g m^2/s, rho = %g kg/m^3); lattice velocity %.6g, lattice viscosity %.6g; "
           "outputs in %s units", u->dx, u->dt, u->reynolds, u->in.velocity, u->in.length,
           u->in.viscosity, u->in.density, u->lattice_velocity, u->lattice_viscosity,
           u->physical_output ? "physical" : "lattice");
}
