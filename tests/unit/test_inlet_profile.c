/* inlet_profile: velocity tables of inlets read from CSV files.
 *
 * Each case writes a small file into the test's folder (argv[1]) and loads it for a face
 * of a domain of 8 x 6 x 4 cells: the values at the table's points are the file's own,
 * exactly; between them the interpolation is exact for a (bi)linear velocity; beyond the
 * ends the end value; with units the coordinates and velocities are converted; each bad
 * file is refused with its one message (file, line, what). */
#include <math.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "inlet_profile.h"

static const char *folder;
static patch_options_t domain;

/* The text, and a NUL byte after it where nul is set. */
static void write_file(const char *path, const char *text, bool nul) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  const size_t n = strlen(text) + (nul ? 1 : 0);
  assert_true(fwrite(text, 1, n, f) == n);
  assert_int_equal(fclose(f), 0);
}

/* Loads text as a file named name for face; the table, or NULL with the message in why. */
static const inlet_profile_t *load_nul(const char *name, const char *text, bool nul, int face,
                                       const units_t *u, char *why, size_t cap) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", folder, name);
  write_file(path, text, nul);
  const inlet_profile_t *t = NULL;
  tsr_error_t err = {0};
  tsr_status st = inlet_profile_load(path, face, &domain, u, &t, &err);
  if (why && cap > 0) { /* as much of the message as fits */
    const char *m = st == TSR_OK ? "" : err.text;
    size_t n = 0;
    while (n + 1 < cap && m[n]) ++n;
    memcpy(why, m, n);
    why[n] = '\0';
  }
  return st == TSR_OK ? t : NULL;
}

static const inlet_profile_t *load(const char *name, const char *text, int face,
                                   const units_t *u, char *why, size_t cap) {
  return load_nul(name, text, false, face, u, why, cap);
}

static void velocity(const inlet_profile_t *t, double x, double y, double z, double u[3]) {
  const double p[3] = {x, y, z};
  inlet_profile_velocity(t, p, u);
}

/* One coordinate: the points exactly, linear between, the ends beyond; axes the file does
 * not name change nothing; comments, blank lines, spaces and CRLF are fine. */
static void test_one_coordinate(void **state) {
  (void)state;
  const inlet_profile_t *t =
      load("line.csv", "# a profile\r\n y , ux , uz \r\n\r\n0,0.01,0\r\n3,0.04,-0.03\r\n"
                       "6,0.07,0.03\r\n",
           0, NULL, NULL, 0);
  assert_non_null(t);
  double u[3];
  velocity(t, 0.5, 3.0, 2.0, u); /* a point of the table: its values */
  assert_true(u[0] == 0.04 && u[1] == 0.0 && u[2] == -0.03);
  velocity(t, 0.0, 1.5, 0.5, u); /* half-way: the mean */
  assert_true(fabs(u[0] - 0.025) < 1e-17 && fabs(u[2] + 0.015) < 1e-17);
  velocity(t, 0.0, 4.5, 3.5, u);
  assert_true(fabs(u[0] - 0.055) < 1e-17 && fabs(u[2] - 0.0) < 1e-17);
  velocity(t, 0.0, 6.0, 0.0, u); /* the end: its value, exactly */
  assert_true(u[0] == 0.07 && u[2] == 0.03);
  velocity(t, 0.0, 9.0, 0.0, u); /* beyond: the end value */
  assert_true(u[0] == 0.07);
  velocity(t, 0.0, -1.0, 0.0, u);
  assert_true(u[0] == 0.01 && u[2] == 0.0);
  double peak[3];
  inlet_profile_peak(t, peak);
  assert_true(peak[0] == 0.07 && peak[2] == 0.03);
  /* the same file for the same face is the same table */
  assert_ptr_equal(load("line.csv", "y,ux\n0,0.01\n3,0.04\n6,0.07\n", 0, NULL, NULL, 0), t);
}

/* Two coordinates on a grid given in any order: bilinear, exact for u = a + b y + c z +
 * d y z at every point of the face. */
static void test_grid(void **state) {
  (void)state;
  char text[4096] = "uy,z,y\n";
  const double ys[3] = {6, 0, 2.5}, zs[3] = {0, 4, 1};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const double y = ys[i], z = zs[j];
      char row[128];
      snprintf(row, sizeof row, "%.17g,%.17g,%.17g\n", 0.01 + 0.002 * y - 0.003 * z + 0.0005 * y * z,
               z, y);
      strcat(text, row);
    }
  const inlet_profile_t *t = load("grid.csv", text, 1, NULL, NULL, 0);
  assert_non_null(t);
  for (double y = 0; y <= 6; y += 0.25)
    for (double z = 0; z <= 4; z += 0.5) {
      double u[3];
      velocity(t, 8.0, y, z, u);
      const double want = 0.01 + 0.002 * y - 0.003 * z + 0.0005 * y * z;
      assert_true(fabs(u[1] - want) < 1e-15);
      assert_true(u[0] == 0.0 && u[2] == 0.0);
    }
}

/* With units: metres and m/s in the file, cells and lattice velocities out. */
static void test_units(void **state) {
  (void)state;
  units_input_t in = {.length = 0.1, .velocity = 0.3, .viscosity = 1e-3, .density = 1,
                      .cells = 20, .by = UNITS_BY_LATTICE_VELOCITY, .time = 0.05};
  units_t u;
  char why[256];
  assert_true(units_make(&in, &u, why, sizeof why));
  const inlet_profile_t *t = load("si.csv", "z,ux\n0,0.3\n0.02,0.15\n", 0, &u, why, sizeof why);
  assert_non_null(t);
  double v[3];
  velocity(t, 0, 0, 0.0, v);
  assert_true(v[0] == 0.05); /* 0.3 m/s */
  velocity(t, 0, 0, 4.0, v); /* 0.02 m: the point's 0.15 m/s */
  assert_true(v[0] == 0.025);
  velocity(t, 0, 0, 2.0, v);
  assert_true(fabs(v[0] - 0.0375) < 1e-17);
}

/* Every fault, one message each. */
static void test_refused(void **state) {
  (void)state;
  static const struct {
    const char *text, *message;
    int face;
  } cases[] = {
      {"", "empty: an inlet profile starts with a line naming its columns", 0},
      {"# only\n\n", "empty: an inlet profile starts", 0},
      {"y,vx\n0,1\n", "line 1: column 2 is \"vx\"; the columns are named x, y, z", 0},
      {"y,ux,y\n", "line 1: column \"y\" given twice", 0},
      {"x,ux\n0,0\n8,0\n", "line 1: column \"x\" is the normal of face x-", 0},
      {"y,z\n0,0\n", "the columns must name a coordinate along face x- and at least one velocity", 0},
      {"ux\n0\n", "the columns must name a coordinate along face x-", 0},
      {"y,ux,uy,uz,z,x\n", "line 1: more than 5 columns", 0},
      {"y,ux\n0,0.01\n6,0.02,3\n", "line 3: 3 values; the header names 2 columns", 0},
      {"y,ux\n0,0.01\n6\n", "line 3: 1 values; the header names 2 columns", 0},
      {"y,ux\n0,0.01\n6,abc\n", "line 3: \"abc\" (column \"ux\") is not a finite number", 0},
      {"y,ux\n0,0.01\n6,1e999\n", "line 3: \"1e999\" (column \"ux\") is not a finite number", 0},
      {"y,ux\n0,0.01\n6,nan\n", "\"nan\" (column \"ux\") is not a finite number", 0},
      {"y,ux\n0,0.01\n6,0.5\n", "line 3: ux = 0.5 (0.5 in lattice units): allowed are [-0.4, 0.4]", 0},
      {"y,ux\n", "no point below the header", 0},
      {"y,ux\n0,0.01\n0,0.02\n6,0\n", "3 points but 2 different values of y: a coordinate is given twice", 0},
      {"y,z,ux\n0,0,0\n6,0,0\n0,4,0\n", "3 points over 2 values of y and 2 of z: the points must form a full grid", 0},
      {"y,z,ux\n0,0,0\n6,0,0\n0,4,0\n0,4,0\n", "the point (0, 4) is given twice", 0},
      {"y,ux\n1,0.01\n6,0.02\n", "the profile covers y from 1 to 6 (cells); the face x- needs every cell centre, 0.5 to 5.5", 0},
      {"z,ux\n0.5,0\n3,0\n", "the profile covers z from 0.5 to 3 (cells); the face y+ needs every cell centre, 0.5 to 3.5", 3},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char why[512], name[32];
    snprintf(name, sizeof name, "bad_%zu.csv", i);
    const inlet_profile_t *t = load(name, cases[i].text, cases[i].face, NULL, why, sizeof why);
    if (t || !strstr(why, cases[i].message) || !strstr(why, name))
      fail_msg("case %zu: got \"%s\", expected \"%s\"", i, t ? "(loaded)" : why, cases[i].message);
  }
  char why[512];
  assert_null(load_nul("nul.csv", "y,ux\n0,0\n6,0\n", true, 0, NULL, why, sizeof why));
  assert_non_null(strstr(why, "nul.csv: holds a NUL byte: not a CSV text file"));
  const inlet_profile_t *t = NULL;
  tsr_error_t err = {0};
  assert_int_not_equal(inlet_profile_load("/nonexistent/p.csv", 0, &domain, NULL, &t, &err), TSR_OK);
  assert_non_null(strstr(err.text, "/nonexistent/p.csv: cannot open"));
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_inlet_profile FOLDER\n");
    return 2;
  }
  folder = argv[1];
  domain = patch_options_default();
  domain.cells[0] = 8, domain.cells[1] = 6, domain.cells[2] = 4;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_coordinate),
      cmocka_unit_test(test_grid),
      cmocka_unit_test(test_units),
      cmocka_unit_test(test_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
