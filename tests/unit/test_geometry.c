/* geometry: cell flags from walls and shapes, and block classification. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "geometry.h"
#include "patch.h"
#include "unit_test.h"

static patch_options_t domain(int64_t n, bool px, bool py, bool pz) {
  patch_options_t d = patch_options_default();
  for (int a = 0; a < 3; ++a) d.cells[a] = n;
  d.periodic[0] = px;
  d.periodic[1] = py;
  d.periodic[2] = pz;
  return d;
}

/* Interior cells are fluid; cells beyond a non-periodic face are walls of that face;
 * beyond a periodic face they wrap. */
static void test_walls_and_wrap(void **state) {
  geometry_t g = geometry_default();
  patch_options_t d = domain(8, true, false, false);
  assert_int_equal(geometry_flag(&g, &d, 3, 3, 3), GEOMETRY_FLUID);
  assert_int_equal(geometry_flag(&g, &d, -1, 3, 3), GEOMETRY_FLUID); /* periodic x */
  assert_int_equal(geometry_flag(&g, &d, 8, 3, 3), GEOMETRY_FLUID);
  assert_int_equal(geometry_flag(&g, &d, 3, -1, 3), GEOMETRY_NOSLIP);
  assert_int_equal(geometry_flag(&g, &d, 3, 3, 8), GEOMETRY_NOSLIP);
}

/* At edges a moving wall wins over a resting one (the lid's terms then cancel); two
 * moving walls: the first in x-, x+, y-, y+, z-, z+ order. */
static void test_edges_take_the_moving_wall(void **state) {
  geometry_t g = geometry_default();
  g.walls[GEOMETRY_YP] = (geometry_wall_t){.kind = GEOMETRY_WALL_MOVING, .velocity = {0.1, 0, 0}};
  patch_options_t d = domain(8, false, false, false);
  assert_int_equal(geometry_flag(&g, &d, 3, 8, 3), GEOMETRY_MOVING + GEOMETRY_YP);
  assert_int_equal(geometry_flag(&g, &d, -1, 8, 3), GEOMETRY_MOVING + GEOMETRY_YP);
  assert_int_equal(geometry_flag(&g, &d, -1, 8, 8), GEOMETRY_MOVING + GEOMETRY_YP);
  assert_int_equal(geometry_flag(&g, &d, -1, 7, 3), GEOMETRY_NOSLIP);
  g.walls[GEOMETRY_XM] = (geometry_wall_t){.kind = GEOMETRY_WALL_MOVING, .velocity = {0, 0, 0.2}};
  assert_int_equal(geometry_flag(&g, &d, -1, 8, 3), GEOMETRY_MOVING + GEOMETRY_XM);
  double u[3];
  geometry_flag_velocity(&g, GEOMETRY_MOVING + GEOMETRY_YP, u);
  assert_true(u[0] == 0.1 && u[1] == 0 && u[2] == 0);
  geometry_flag_velocity(&g, GEOMETRY_NOSLIP, u);
  assert_true(u[0] == 0 && u[1] == 0 && u[2] == 0);
}

/* A velocity inlet is a wall with a velocity (flags as moving walls; it wins at edges);
 * its parabolic profile: 4 s (n - s) / n^2 along each non-periodic axis of its plane,
 * s clamped to the domain; uniform and moving walls the same everywhere. */
static void test_inlet_profile(void **state) {
  geometry_t g = geometry_default();
  g.walls[GEOMETRY_XM] = (geometry_wall_t){.kind = GEOMETRY_WALL_VELOCITY, .velocity = {0.04, 0, 0},
                                           .profile = GEOMETRY_PROFILE_PARABOLIC};
  patch_options_t d = domain(8, false, false, true); /* z periodic: a profile across y only */
  assert_int_equal(geometry_flag(&g, &d, -1, 3, 3), GEOMETRY_MOVING + GEOMETRY_XM);
  assert_int_equal(geometry_flag(&g, &d, -1, -1, 3), GEOMETRY_MOVING + GEOMETRY_XM);
  double u[3], p[3] = {0, 4, 2.5};
  geometry_wall_velocity_at(&g, &d, GEOMETRY_MOVING + GEOMETRY_XM, p, u);
  assert_true(u[0] == 0.04 && u[1] == 0 && u[2] == 0); /* the centre: the peak */
  p[1] = 2;
  geometry_wall_velocity_at(&g, &d, GEOMETRY_MOVING + GEOMETRY_XM, p, u);
  assert_true(fabs(u[0] - 0.04 * 4 * 2 * 6 / 64.0) < 1e-17);
  p[1] = -0.5; /* beyond the y- wall: clamped, zero */
  geometry_wall_velocity_at(&g, &d, GEOMETRY_MOVING + GEOMETRY_XM, p, u);
  assert_true(u[0] == 0);
  d.periodic[2] = false; /* 3-D: the product of the two parabolas */
  p[1] = 2;
  p[2] = 2;
  geometry_wall_velocity_at(&g, &d, GEOMETRY_MOVING + GEOMETRY_XM, p, u);
  assert_true(fabs(u[0] - 0.04 * (48 / 64.0) * (48 / 64.0)) < 1e-17);
  g.walls[GEOMETRY_XM].profile = GEOMETRY_PROFILE_UNIFORM;
  geometry_wall_velocity_at(&g, &d, GEOMETRY_MOVING + GEOMETRY_XM, p, u);
  assert_true(u[0] == 0.04);
  geometry_wall_velocity_at(&g, &d, GEOMETRY_NOSLIP, p, u);
  assert_true(u[0] == 0 && u[1] == 0 && u[2] == 0);
  tsr_error_t err;
  g.walls[GEOMETRY_XM].profile = (geometry_profile_t)7;
  ASSERT_ERR(geometry_validate(&g, &err), TSR_ERR_INVALID, "boundaries.x-: unknown profile 7");
}

/* Open faces (pressure outlet, outflow): flagged per face beyond them; at edges every
 * wall wins over them; a pressure outlet's density must be positive. */
static void test_open_faces(void **state) {
  geometry_t g = geometry_default();
  g.walls[GEOMETRY_XP] = (geometry_wall_t){.kind = GEOMETRY_WALL_PRESSURE, .density = 1.0};
  g.walls[GEOMETRY_XM] = (geometry_wall_t){.kind = GEOMETRY_WALL_OUTFLOW};
  patch_options_t d = domain(8, false, false, true);
  assert_int_equal(geometry_flag(&g, &d, 8, 3, 3), GEOMETRY_OPEN + GEOMETRY_XP);
  assert_int_equal(geometry_open_face(geometry_flag(&g, &d, 8, 3, 3)), GEOMETRY_XP);
  assert_int_equal(geometry_flag(&g, &d, -1, 3, 3), GEOMETRY_OPEN + GEOMETRY_XM);
  assert_int_equal(geometry_flag(&g, &d, 8, -1, 3), GEOMETRY_NOSLIP); /* the y- wall wins */
  assert_int_equal(geometry_open_face(GEOMETRY_NOSLIP), -1);
  assert_int_equal(geometry_open_face(GEOMETRY_MOVING + GEOMETRY_XP), -1);
  g.walls[GEOMETRY_YP] = (geometry_wall_t){.kind = GEOMETRY_WALL_MOVING, .velocity = {0.1, 0, 0}};
  assert_int_equal(geometry_flag(&g, &d, 8, 8, 3), GEOMETRY_MOVING + GEOMETRY_YP);
  g.walls[GEOMETRY_YM] = (geometry_wall_t){.kind = GEOMETRY_WALL_PRESSURE, .density = 1.0};
  assert_int_equal(geometry_flag(&g, &d, 8, -1, 3), GEOMETRY_OPEN + GEOMETRY_XP); /* both open: the first */
  double u[3] = {1, 1, 1};
  geometry_flag_velocity(&g, GEOMETRY_OPEN + GEOMETRY_XP, u);
  assert_true(u[0] == 0 && u[1] == 0 && u[2] == 0);
  assert_true(geometry_wall_open(GEOMETRY_WALL_PRESSURE) && geometry_wall_open(GEOMETRY_WALL_OUTFLOW));
  assert_false(geometry_wall_open(GEOMETRY_WALL_VELOCITY) || geometry_wall_moves(GEOMETRY_WALL_PRESSURE));
  tsr_error_t err;
  assert_int_equal(geometry_validate(&g, &err), TSR_OK);
  g.walls[GEOMETRY_XP].density = 0;
  ASSERT_ERR(geometry_validate(&g, &err), TSR_ERR_INVALID,
             "boundaries.x+.density = 0; allowed are finite values > 0");
}

/* The fraction of a link in the fluid, where it enters a shape: exact for spheres,
 * cylinders (the axis ignored) and boxes, along axes and diagonals; the first shape hit;
 * bodies from names. */
static void test_link_fraction(void **state) {
  geometry_t g = geometry_default();
  patch_options_t d = domain(16, false, false, false);
  g.shapes[0] = (geometry_shape_t){.kind = GEOMETRY_SPHERE, .center = {4.5, 4.5, 4.5}, .radius = 2.2};
  g.shapes[1] = (geometry_shape_t){.kind = GEOMETRY_CYLINDER, .center = {12.5, 4.5, 0}, .radius = 2.2,
                                   .axis = 2, .name = "post"};
  g.shapes[2] = (geometry_shape_t){.kind = GEOMETRY_BOX, .min = {2, 10, 2}, .max = {3.3, 14, 14},
                                   .name = "plate"};
  g.shapes[3] = (geometry_shape_t){.kind = GEOMETRY_SPHERE, .center = {13, 13, 13}, .radius = 1, .name = "post"};
  g.nshapes = 4;
  int shape = -1;
  const int mx[3] = {-1, 0, 0}, diag[3] = {-1, -1, 0}, xz[3] = {-1, 0, -1};
  /* from the centre 7.5 to 6.5 along x: the surface at 4.5 + 2.2 */
  assert_true(fabs(geometry_link_fraction(&g, &d, 7, 4, 4, mx, &shape) - 0.8) < 1e-14);
  assert_int_equal(shape, 0);
  /* diagonal from (6.5, 6.5): |(2 - t, 2 - t)| = 2.2 */
  assert_true(fabs(geometry_link_fraction(&g, &d, 6, 6, 4, diag, &shape) - (2.0 - 2.2 / sqrt(2.0))) < 1e-14);
  /* the cylinder ignores z: as the sphere's x link */
  assert_true(fabs(geometry_link_fraction(&g, &d, 15, 4, 9, xz, &shape) - 0.8) < 1e-14);
  assert_int_equal(shape, 1);
  /* the box's face at x = 3.3 from the centre 3.5 */
  assert_true(fabs(geometry_link_fraction(&g, &d, 3, 12, 5, mx, &shape) - 0.2) < 1e-14);
  assert_int_equal(shape, 2);
  assert_int_equal(geometry_shape_at(&g, &d, 2, 12, 5), 2);
  assert_int_equal(geometry_shape_at(&g, &d, 3, 12, 5), -1);
  assert_int_equal(geometry_shape_at(&g, &d, -1, 12, 5), -1); /* a wall of the domain */
  int body[GEOMETRY_MAX_SHAPES];
  const char *names[GEOMETRY_MAX_SHAPES];
  assert_int_equal(geometry_bodies(&g, body, names), 2);
  assert_int_equal(body[0], -1);
  assert_int_equal(body[1], 0);
  assert_int_equal(body[2], 1);
  assert_int_equal(body[3], 0); /* the same name: the same body */
  assert_string_equal(names[0], "post");
  assert_string_equal(names[1], "plate");
}

/* Shapes at cell centres; seen through periodic boundaries in the ghost layer. */
static void test_shapes(void **state) {
  geometry_t g = geometry_default();
  patch_options_t d = domain(10, true, true, true);
  g.nshapes = 3;
  g.shapes[0] = (geometry_shape_t){.kind = GEOMETRY_SPHERE, .center = {0.5, 5, 5}, .radius = 1.1};
  g.shapes[1] = (geometry_shape_t){.kind = GEOMETRY_BOX, .min = {4, 4, 4}, .max = {5, 5, 5}};
  g.shapes[2] = (geometry_shape_t){.kind = GEOMETRY_CYLINDER, .center = {8.5, 8.5, 0}, .radius = 0.6, .axis = 2};
  assert_int_equal(geometry_flag(&g, &d, 0, 5, 5), GEOMETRY_NOSLIP);   /* centre (0.5,5.5,5.5) */
  assert_int_equal(geometry_flag(&g, &d, 10, 5, 5), GEOMETRY_NOSLIP);  /* wraps to x = 0 */
  assert_int_equal(geometry_flag(&g, &d, 2, 5, 5), GEOMETRY_FLUID);
  assert_int_equal(geometry_flag(&g, &d, 4, 4, 4), GEOMETRY_NOSLIP);   /* centre 4.5 in [4, 5] */
  assert_int_equal(geometry_flag(&g, &d, 5, 4, 4), GEOMETRY_FLUID);    /* centre 5.5 */
  for (int z = -1; z <= 10; ++z) assert_int_equal(geometry_flag(&g, &d, 8, 8, z), GEOMETRY_NOSLIP);
  assert_int_equal(geometry_flag(&g, &d, 7, 8, 0), GEOMETRY_FLUID);
}

static void test_classify(void **state) {
  geometry_t g = geometry_default();
  patch_options_t d = domain(8, false, true, true);
  d.blocks[0] = 4;
  g.nshapes = 1;
  g.shapes[0] = (geometry_shape_t){.kind = GEOMETRY_BOX, .min = {4, -1, -1}, .max = {6, 9, 9}};
  patch_t *p = NULL;
  tsr_error_t err;
  patch_layout_t layout = {.nranks = 1, .my_rank = 0};
  assert_int_equal(patch_create(&d, &layout, &p, &err), TSR_OK);
  /* blocks of 2 cells along x: [0,2) touches the x- wall, [2,4) touches the box in its
     ghost layer, [4,6) is inside the box, [6,8) touches box and x+ wall */
  assert_int_equal(geometry_classify(&g, &d, patch_block(p, 0)), GEOMETRY_CLASS_BOUNDARY);
  assert_int_equal(geometry_classify(&g, &d, patch_block(p, 1)), GEOMETRY_CLASS_BOUNDARY);
  assert_int_equal(geometry_classify(&g, &d, patch_block(p, 2)), GEOMETRY_CLASS_SOLID);
  assert_int_equal(geometry_classify(&g, &d, patch_block(p, 3)), GEOMETRY_CLASS_BOUNDARY);
  g.nshapes = 0;
  d.periodic[0] = true;
  assert_int_equal(geometry_classify(&g, &d, patch_block(p, 1)), GEOMETRY_CLASS_FLUID);
  /* without shapes the class comes from the block's place: only blocks at a wall face */
  d.periodic[0] = false;
  assert_int_equal(geometry_classify(&g, &d, patch_block(p, 0)), GEOMETRY_CLASS_BOUNDARY);
  assert_int_equal(geometry_classify(&g, &d, patch_block(p, 1)), GEOMETRY_CLASS_FLUID);
  assert_int_equal(geometry_classify(&g, &d, patch_block(p, 3)), GEOMETRY_CLASS_BOUNDARY);
  /* a shape seen only across the periodic boundary still makes the far block a boundary */
  d.periodic[0] = true;
  g.nshapes = 1;
  g.shapes[0] = (geometry_shape_t){.kind = GEOMETRY_SPHERE, .center = {0.5, 4.5, 4.5}, .radius = 0.4};
  assert_int_equal(geometry_classify(&g, &d, patch_block(p, 3)), GEOMETRY_CLASS_BOUNDARY);
  assert_int_equal(geometry_classify(&g, &d, patch_block(p, 2)), GEOMETRY_CLASS_FLUID);
  patch_free(&p);
}

/* geometry_covers_a_cell against a scan of every cell centre, for shapes of every kind
 * placed and sized at random around a 7 x 5 x 6 domain (many just miss or just touch a
 * centre: radii from 0.05, centres from 2 cells outside). */
static void test_covers_a_cell(void **state) {
  (void)state;
  patch_options_t d = domain(1, false, false, false);
  d.cells[0] = 7;
  d.cells[1] = 5;
  d.cells[2] = 6;
  uint64_t x = 88172645463325252ull;
  int covered = 0, missed = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    double r[8];
    for (int k = 0; k < 8; ++k) { /* xorshift: [0, 1) */
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      r[k] = (double)(x >> 11) / 9007199254740992.0;
    }
    geometry_shape_t s = {.kind = (geometry_shape_kind_t)(trial % 3), .axis = trial / 3 % 3};
    for (int a = 0; a < 3; ++a) {
      s.center[a] = -2 + r[a] * ((double)d.cells[a] + 4);
      s.min[a] = s.center[a];
      s.max[a] = s.center[a] + r[3 + a] * 1.5;
    }
    s.radius = 0.05 + r[6] * 1.5;
    bool any = false;
    for (int64_t k = 0; k < d.cells[0] * d.cells[1] * d.cells[2] && !any; ++k) {
      const double p[3] = {(double)(k % d.cells[0]) + 0.5, (double)(k / d.cells[0] % d.cells[1]) + 0.5,
                           (double)(k / d.cells[0] / d.cells[1]) + 0.5};
      any = geometry_inside(&s, p);
    }
    assert_int_equal(geometry_covers_a_cell(&s, &d), any);
    covered += any;
    missed += !any;
  }
  /* both answers were tried many times */
  assert_true(covered > 300 && missed > 300);
}

static void test_validate(void **state) {
  tsr_error_t err;
  geometry_t g = geometry_default();
  assert_int_equal(geometry_validate(&g, &err), TSR_OK);
  g.walls[GEOMETRY_YP] = (geometry_wall_t){.kind = GEOMETRY_WALL_MOVING, .velocity = {0.1, 0.01, 0}};
  assert_int_equal(geometry_validate(&g, &err), TSR_ERR_INVALID);
  assert_non_null(strstr(err.text, "boundaries.y+.velocity[1] = 0.01"));
  g = geometry_default();
  g.nshapes = 1;
  g.shapes[0] = (geometry_shape_t){.kind = GEOMETRY_CYLINDER, .radius = 1, .axis = 3};
  assert_int_equal(geometry_validate(&g, &err), TSR_ERR_INVALID);
  assert_non_null(strstr(err.text, "obstacles[0]: cylinder axis 3"));
  g.shapes[0] = (geometry_shape_t){.kind = GEOMETRY_BOX, .min = {1, 2, 3}, .max = {1, 1, 3}};
  assert_int_equal(geometry_validate(&g, &err), TSR_ERR_INVALID);
  assert_non_null(strstr(err.text, "box min[1] = 2 exceeds max[1] = 1"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_walls_and_wrap),   cmocka_unit_test(test_edges_take_the_moving_wall),
      cmocka_unit_test(test_inlet_profile),    cmocka_unit_test(test_open_faces),
      cmocka_unit_test(test_link_fraction),
      cmocka_unit_test(test_shapes),           cmocka_unit_test(test_classify),
      cmocka_unit_test(test_validate),         cmocka_unit_test(test_covers_a_cell),
  };
  return cmocka_run_group_tests_name("geometry", tests, NULL, NULL);
}
