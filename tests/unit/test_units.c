/* units: the scales derived from a "units" section, the factors of each dimension, the
 * conversion of the decimals a configuration writes, and the names of units.
 *
 * The DFG cylinder is the example: L = 0.1 m over 20 cells, U = 0.3 m/s at 0.05 lattice
 * units, nu = 1e-3 m^2/s, rho = 1 kg/m^3 (dx = 0.005 m, dt = 1/1200 s, lattice viscosity
 * 1/30). Comparisons with == are exact on purpose (the conversion promises the double a
 * person would write); those with a tolerance compare two roundings of one real number
 * (1e-15 relative: a few units in the last place). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "units.h"

static units_input_t dfg(void) {
  return (units_input_t){.length = 0.1, .velocity = 0.3, .viscosity = 1e-3, .density = 1.0,
                         .cells = 20, .by = UNITS_BY_LATTICE_VELOCITY, .time = 0.05};
}

static units_t make(units_input_t in) {
  units_t u;
  char why[256];
  assert_true(units_make(&in, &u, why, sizeof why));
  return u;
}

static void assert_close(double a, double b) {
  assert_true(fabs(a - b) <= 1e-15 * fmax(fabs(a), fabs(b)));
}

static void test_scales_of_the_dfg_cylinder(void **state) {
  (void)state;
  const units_t u = make(dfg());
  assert_true(u.on);
  assert_false(u.physical_output);
  assert_true((double)u.dx == 0.005);
  assert_close((double)u.dt, 1.0 / 1200.0);
  assert_true(u.lattice_velocity == 0.05);    /* given */
  assert_true(u.lattice_viscosity == 1.0 / 30.0); /* 1e-3 * 0.05 / (0.3 * 0.005) */
  assert_true(u.reynolds == 30.0);
  assert_close((double)u.mass, 1.25e-7); /* rho dx^3 */
}

/* Each way of giving the resolution in time gives the same scales. */
static void test_three_time_scales_agree(void **state) {
  (void)state;
  const units_t ref = make(dfg());
  units_input_t in = dfg();
  in.by = UNITS_BY_TIME_STEP;
  in.time = (double)ref.dt;
  units_t u = make(in);
  assert_close(u.lattice_velocity, 0.05);
  assert_close(u.lattice_viscosity, 1.0 / 30.0);
  in.by = UNITS_BY_LATTICE_VISCOSITY;
  in.time = 1.0 / 30.0;
  u = make(in);
  assert_close((double)u.dt, (double)ref.dt);
  assert_close(u.lattice_velocity, 0.05);
  in = dfg();
  in.cells = 0;
  in.cell_size = 0.005;
  u = make(in);
  assert_true(u.dx == ref.dx && u.dt == ref.dt);
}

/* The decimals a configuration writes convert to the lattice values one writes by hand. */
static void test_decimals_convert_exactly(void **state) {
  (void)state;
  const units_t u = make(dfg());
  assert_true(units_to_lattice(&u, UNITS_LENGTH, 0.1475) == 29.5); /* the doubles give 29.499999999999996 */
  assert_true(units_to_lattice(&u, UNITS_LENGTH, 0.2) == 40.0);
  assert_true(units_to_lattice(&u, UNITS_LENGTH, 0.0025) == 0.5);
  assert_true(units_to_lattice(&u, UNITS_VELOCITY, 0.3) == 0.05);
  assert_true(units_to_lattice(&u, UNITS_VELOCITY, 0.2) == 1.0 / 30.0);
  assert_true(units_to_lattice(&u, UNITS_DENSITY, 1.0) == 1.0);
  assert_true(units_to_lattice(&u, UNITS_VISCOSITY, 1e-3) == 1.0 / 30.0);
  assert_true(units_to_lattice(&u, UNITS_NONE, 0.1) == 0.1);
  /* and back */
  assert_close(units_to_physical(&u, UNITS_LENGTH, 29.5), 0.1475);
  assert_close(units_to_physical(&u, UNITS_VELOCITY, 0.05), 0.3);
}

/* dx^l dt^t (rho dx^3)^k, each exponent. */
static void test_factors(void **state) {
  (void)state;
  const units_t u = make(dfg());
  const double dx = 0.005, dt = 1.0 / 1200.0, m = 1.0 * dx * dx * dx;
  assert_true(units_factor(&u, UNITS_NONE) == 1.0L);
  assert_close((double)units_factor(&u, UNITS_LENGTH), dx);
  assert_close((double)units_factor(&u, UNITS_AREA), dx * dx);
  assert_close((double)units_factor(&u, UNITS_TIME), dt);
  assert_close((double)units_factor(&u, UNITS_VELOCITY), 6.0);
  assert_close((double)units_factor(&u, UNITS_VISCOSITY), dx * dx / dt);
  assert_close((double)units_factor(&u, UNITS_DENSITY), 1.0);
  assert_close((double)units_factor(&u, UNITS_MASS), m);
  assert_close((double)units_factor(&u, UNITS_FORCE), m * dx / (dt * dt));
  assert_close((double)units_factor(&u, UNITS_FORCE_DENSITY), m / (dx * dx * dt * dt));
  assert_close((double)units_factor(&u, UNITS_ENERGY), m * dx * dx / (dt * dt));
  /* outputs: the factors only where physical output was asked for */
  assert_true(units_output_factor(&u, UNITS_VELOCITY) == 1.0);
  units_input_t in = dfg();
  in.physical_output = true;
  const units_t p = make(in);
  assert_close(units_output_factor(&p, UNITS_VELOCITY), 6.0);
}

/* Without units every factor is 1 and nothing converts. */
static void test_lattice_units(void **state) {
  (void)state;
  const units_t u = units_none();
  assert_false(u.on);
  assert_true(units_factor(&u, UNITS_FORCE) == 1.0L);
  assert_true(units_to_lattice(&u, UNITS_LENGTH, 0.1475) == 0.1475);
  assert_true(units_to_physical(&u, UNITS_VELOCITY, 0.05) == 0.05);
  assert_true(units_output_factor(&u, UNITS_DENSITY) == 1.0);
  assert_true(units_to_lattice(NULL, UNITS_LENGTH, 3.0) == 3.0);
}

static void test_names(void **state) {
  (void)state;
  const struct {
    units_dim_t d;
    const char *name;
  } cases[] = {{UNITS_NONE, ""},          {UNITS_LENGTH, "m"},
               {UNITS_AREA, "m^2"},       {UNITS_TIME, "s"},
               {UNITS_VELOCITY, "m/s"},   {UNITS_VISCOSITY, "m^2/s"},
               {UNITS_DENSITY, "kg/m^3"}, {UNITS_FORCE, "N"},
               {UNITS_FORCE_DENSITY, "N/m^3"}, {UNITS_ENERGY, "J"},
               {UNITS_PRESSURE, "Pa"},    {UNITS_RATE2, "1/s^2"},
               {{0, -1, 0}, "1/s"},       {{-1, -1, 0}, "1/(m s)"},
               {{1, -3, 1}, "kg m/s^3"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char out[48];
    units_name(cases[i].d, out, sizeof out);
    assert_string_equal(out, cases[i].name);
  }
  char tiny[4];
  units_name(UNITS_FORCE_DENSITY, tiny, sizeof tiny); /* cut, terminated */
  assert_true(strlen(tiny) < sizeof tiny);
}

/* Scales beyond a double are refused with a message. */
static void test_out_of_range(void **state) {
  (void)state;
  units_input_t in = dfg();
  in.cells = 0;
  in.cell_size = 1e-300;
  in.by = UNITS_BY_TIME_STEP;
  in.time = 1e300;
  units_t u = units_none();
  char why[256] = "";
  assert_false(units_make(&in, &u, why, sizeof why));
  assert_non_null(strstr(why, "out of range of a double"));
  assert_false(u.on); /* untouched */
}

static void test_describe(void **state) {
  (void)state;
  const units_t u = make(dfg());
  char out[512];
  units_describe(&u, out, sizeof out);
  assert_non_null(strstr(out, "dx = 0.005 m"));
  assert_non_null(strstr(out, "Re = U L / nu = 30 "));
  assert_non_null(strstr(out, "lattice viscosity 0.0333333"));
  assert_non_null(strstr(out, "outputs in lattice units"));
  const units_t none = units_none();
  units_describe(&none, out, sizeof out);
  assert_string_equal(out, "lattice units");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scales_of_the_dfg_cylinder),
      cmocka_unit_test(test_three_time_scales_agree),
      cmocka_unit_test(test_decimals_convert_exactly),
      cmocka_unit_test(test_factors),
      cmocka_unit_test(test_lattice_units),
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_out_of_range),
      cmocka_unit_test(test_describe),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
