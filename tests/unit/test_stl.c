/* STL meshes: ASCII and binary give the same triangles; a closed, consistently oriented
 * mesh passes the check, a hole, a flipped triangle and a triangle without area are
 * refused naming the place; malformed files give one message each; placement. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "stl.h"

/* A tetrahedron, counter-clockwise seen from outside. */
static const double tet[4][3][3] = {
    {{0, 0, 0}, {0, 1, 0}, {1, 0, 0}},
    {{0, 0, 0}, {1, 0, 0}, {0, 0, 1}},
    {{0, 0, 0}, {0, 0, 1}, {0, 1, 0}},
    {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};

/* The ASCII text of the first n triangles of t (flip: the first one reversed). */
static char *ascii(const double (*t)[3][3], int n, int flip) {
  size_t cap = 4096, len = 0;
  char *s = malloc(cap);
  len += (size_t)snprintf(s + len, cap - len, "solid tet made by hand\n");
  for (int k = 0; k < n; ++k) {
    len += (size_t)snprintf(s + len, cap - len, "  facet normal 0 0 0\n    outer loop\n");
    for (int v = 0; v < 3; ++v) {
      const int w = flip && k == 0 ? 2 - v : v;
      len += (size_t)snprintf(s + len, cap - len, "      vertex %.17g %.17g %.17g\n", t[k][w][0],
                              t[k][w][1], t[k][w][2]);
    }
    len += (size_t)snprintf(s + len, cap - len, "    endloop\n  endfacet\n");
  }
  snprintf(s + len, cap - len, "endsolid tet\n");
  return s;
}

static void put_f32(uint8_t *p, float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(u >> (8 * i));
}

static void test_ascii_binary_closed(void **state) {
  (void)state;
  tsr_error_t err;
  stl_mesh_t a, b;
  char *text = ascii(tet, 4, 0);
  assert_int_equal(stl_parse((const uint8_t *)text, strlen(text), "tet.stl", &a, &err), TSR_OK);
  assert_int_equal(a.n, 4);
  for (int i = 0; i < 3; ++i) assert_true(a.lo[i] == 0.0 && a.hi[i] == 1.0);
  assert_int_equal(stl_check_closed(&a, "tet.stl", &err), TSR_OK);
  /* the same in binary; its header starts with "solid", as some writers do */
  uint8_t bin[84 + 4 * 50] = {0};
  memcpy(bin, "solid written by a binary writer", 32);
  bin[80] = 4;
  for (int k = 0; k < 4; ++k)
    for (int v = 0; v < 3; ++v)
      for (int c = 0; c < 3; ++c) put_f32(bin + 84 + 50 * k + 12 + 12 * v + 4 * c, (float)tet[k][v][c]);
  assert_int_equal(stl_parse(bin, sizeof bin, "tet_bin.stl", &b, &err), TSR_OK);
  assert_int_equal(b.n, 4);
  assert_memory_equal(a.tri, b.tri, 4 * sizeof *a.tri);
  stl_free(&b);
  /* NaN in a binary file */
  put_f32(bin + 84 + 50 + 12 + 4, NAN);
  assert_int_equal(stl_parse(bin, sizeof bin, "nan.stl", &b, &err), TSR_ERR_INVALID);
  assert_non_null(strstr(err.text, "nan.stl: triangle 1, vertex 0: coordinate 1 is not a finite number"));
  assert_null(b.tri);
  /* placement: scale 2, 90 degrees about z, then an offset */
  const double rot[3] = {0, 0, 90}, off[3] = {10, 20, 30};
  stl_place(&a, 2.0, rot, off);
  /* (1, 0, 0) -> (2, 0, 0) -> (0, 2, 0) -> (10, 22, 30) */
  assert_true(fabs(a.tri[0][2][0] - 10) < 1e-12 && fabs(a.tri[0][2][1] - 22) < 1e-12 &&
              a.tri[0][2][2] == 30);
  assert_true(fabs(a.lo[0] - 8) < 1e-12 && fabs(a.hi[1] - 22) < 1e-12 && a.hi[2] == 32);
  assert_int_equal(stl_check_closed(&a, "tet.stl", &err), TSR_OK); /* still closed */
  stl_free(&a);
  free(text);
}

static void test_not_a_solid(void **state) {
  (void)state;
  tsr_error_t err;
  stl_mesh_t m;
  char *text = ascii(tet, 3, 0); /* a hole */
  assert_int_equal(stl_parse((const uint8_t *)text, strlen(text), "open.stl", &m, &err), TSR_OK);
  assert_int_equal(stl_check_closed(&m, "open.stl", &err), TSR_ERR_INVALID);
  assert_non_null(strstr(err.text, "has no triangle on its other side: the mesh is not closed"));
  stl_free(&m);
  free(text);
  text = ascii(tet, 4, 1); /* the first triangle turned over */
  assert_int_equal(stl_parse((const uint8_t *)text, strlen(text), "flip.stl", &m, &err), TSR_OK);
  assert_int_equal(stl_check_closed(&m, "flip.stl", &err), TSR_ERR_INVALID);
  assert_non_null(strstr(err.text, "runs the same way in triangles"));
  stl_free(&m);
  free(text);
  double flat[4][3][3];
  memcpy(flat, tet, sizeof flat);
  flat[3][2][0] = 0.5, flat[3][2][1] = 0.5, flat[3][2][2] = 0; /* on the line of the others */
  text = ascii((const double(*)[3][3])flat, 4, 0);
  assert_int_equal(stl_parse((const uint8_t *)text, strlen(text), "flat.stl", &m, &err), TSR_OK);
  assert_int_equal(stl_check_closed(&m, "flat.stl", &err), TSR_ERR_INVALID);
  assert_non_null(strstr(err.text, "flat.stl: triangle 3 has no area"));
  stl_free(&m);
  free(text);
}

static void test_malformed(void **state) {
  (void)state;
  static const struct {
    const char *text, *message;
  } cases[] = {
      {"", "empty.stl: not an STL file: not binary (0 bytes"},
      {"PK\x03\x04 a zip", "not ASCII (it does not start with \"solid\")"},
      {"solid x\n facet normal 0 0 banana\n", "line 2: \"banana\" is not a finite number"},
      {"solid x\n facet normal 0 0 1\n outer loop\n vertex 0 0 0\n vertex 1 0 0\n",
       "line 6: expected \"vertex\", found the end of the file"},
      {"solid x\n facet normal 0 0 1 outer loop vertex 0 0 0 vertex 1 0 0 vertex 0 1 inf "
       "endloop endfacet endsolid", "\"inf\" is not a finite number"},
      {"solid x\n", "line 2: the file ends without \"endsolid\""},
      {"solid x\nendsolid x\n", "the mesh has no triangles"},
      {"solid x\n face normal", "line 2: expected \"facet\" or \"endsolid\", found \"face\""},
      {"solid a\nendsolid a\nsolid b\n", "line 3: \"solid\" after \"endsolid\"; one solid per file"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    tsr_error_t err;
    stl_mesh_t m;
    const char *src = i == 0 ? "empty.stl" : "bad.stl";
    assert_int_equal(stl_parse((const uint8_t *)cases[i].text, strlen(cases[i].text), src, &m, &err),
                     TSR_ERR_INVALID);
    if (!strstr(err.text, cases[i].message)) fail_msg("case %zu: %s", i, err.text);
    assert_null(m.tri);
  }
  tsr_error_t err;
  stl_mesh_t m;
  assert_int_equal(stl_read("/nonexistent/part.stl", &m, &err), TSR_ERR_IO);
  assert_non_null(strstr(err.text, "/nonexistent/part.stl: cannot open"));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_ascii_binary_closed),
                                     cmocka_unit_test(test_not_a_solid),
                                     cmocka_unit_test(test_malformed)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
