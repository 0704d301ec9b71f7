/* voxels: raw voxel images as solid shapes.
 *
 * Random images written into the test's folder (argv[1]) are checked against a brute
 * force over the same bytes: the blocks' summaries (a solid cell in the block or its
 * ghost layer, across periodic faces too; every cell solid) for uneven, periodic and
 * one-block decompositions and spacings of 1, 1/2 and 2 cells per voxel, with offsets;
 * every cell centre inside or not, from the prepared box and from single reads alike;
 * the entry of segments into a solid voxel block against the slabs of the same box; and
 * the refusals (a file of another size, an image beyond the domain, no file). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "patch_test.h"
#include "voxels.h"

static const char *folder;

/* A test image: the values, x fastest, and its options. */
typedef struct image {
  voxels_options_t o;
  uint8_t *solid; /* per voxel */
} image_t;

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* A random image of n voxels (a fraction `fill` solid) written as uint16 big-endian with
 * a header of 5 bytes, solid below 1000. */
static image_t make_image(const char *name, const int64_t n[3], double spacing,
                          const double offset[3], double fill) {
  image_t im = {.o = {.bytes = 2, .big_endian = true, .header = 5, .spacing = spacing,
                      .threshold = 1000, .solid_below = true}};
  snprintf(im.o.path, sizeof im.o.path, "%s/%s", folder, name);
  memcpy(im.o.size, n, sizeof im.o.size);
  memcpy(im.o.offset, offset, sizeof im.o.offset);
  const size_t count = (size_t)(n[0] * n[1] * n[2]);
  im.solid = malloc(count);
  FILE *f = fopen(im.o.path, "wb");
  assert_non_null(im.solid);
  assert_non_null(f);
  for (int k = 0; k < 5; ++k) fputc(0xAB, f);
  for (size_t i = 0; i < count; ++i) {
    im.solid[i] = (double)(rng() % 1000) < 1000.0 * fill;
    const unsigned v = im.solid[i] ? (unsigned)(rng() % 1000) : 1000 + (unsigned)(rng() % 60000);
    fputc((int)(v >> 8), f);
    fputc((int)(v & 0xff), f);
  }
  assert_int_equal(fclose(f), 0);
  return im;
}

/* The brute force: whether the centre of cell (x, y, z) (in the domain) is in a solid
 * voxel, repeated along periodic axes that the image spans exactly. */
static bool brute(const image_t *im, const patch_options_t *d, const int64_t c[3]) {
  int64_t v[3];
  for (int a = 0; a < 3; ++a) {
    v[a] = (int64_t)floor(((double)c[a] + 0.5 - im->o.offset[a]) / im->o.spacing);
    const bool wrap = d->periodic[a] && im->o.offset[a] == 0 &&
                      (double)im->o.size[a] * im->o.spacing == (double)d->cells[a];
    if (wrap) v[a] = (v[a] % im->o.size[a] + im->o.size[a]) % im->o.size[a];
    if (v[a] < 0 || v[a] >= im->o.size[a]) return false;
  }
  return im->solid[(v[2] * im->o.size[1] + v[1]) * im->o.size[0] + v[0]];
}

static void check_summaries(const image_t *im, const patch_options_t *d) {
  const voxels_t *v = NULL;
  tsr_error_t err = {0};
  if (voxels_load(&im->o, d, &v, &err) != TSR_OK) fail_msg("%s", err.text);
  bool any = false;
  int32_t id = 0;
  for (int bz = 0; bz < d->blocks[2]; ++bz)
    for (int by = 0; by < d->blocks[1]; ++by)
      for (int bx = 0; bx < d->blocks[0]; ++bx, ++id) {
        int64_t lo[3];
        int size[3];
        const int64_t g[3] = {bx, by, bz};
        for (int a = 0; a < 3; ++a) patch_axis_span(d, a, g[a], &lo[a], &size[a]);
        bool touched = false, full = true;
        int64_t c[3];
        for (c[2] = lo[2] - 1; c[2] <= lo[2] + size[2]; ++c[2])
          for (c[1] = lo[1] - 1; c[1] <= lo[1] + size[1]; ++c[1])
            for (c[0] = lo[0] - 1; c[0] <= lo[0] + size[0]; ++c[0]) {
              int64_t w[3];
              bool in_domain = true, interior = true;
              for (int a = 0; a < 3; ++a) {
                interior = interior && c[a] >= lo[a] && c[a] < lo[a] + size[a];
                w[a] = c[a];
                if (w[a] < 0 || w[a] >= d->cells[a]) {
                  if (!d->periodic[a]) in_domain = false;
                  w[a] = (w[a] % d->cells[a] + d->cells[a]) % d->cells[a];
                }
              }
              if (!in_domain) continue;
              const bool s = brute(im, d, w);
              touched = touched || s;
              if (interior && !s) full = false;
              any = any || s;
              /* the cell centre's answer, as the brute force gives it */
              const double p[3] = {(double)w[0] + 0.5, (double)w[1] + 0.5, (double)w[2] + 0.5};
              if (voxels_inside(v, p) != s) fail_msg("cell (%lld,%lld,%lld)", (long long)w[0],
                                                     (long long)w[1], (long long)w[2]);
            }
        if (voxels_block_touched(v, id) != touched || voxels_block_full(v, id) != full)
          fail_msg("%s, blocks %dx%dx%d: block %d touched %d (want %d), full %d (want %d)",
                   im->o.path, d->blocks[0], d->blocks[1], d->blocks[2], (int)id,
                   voxels_block_touched(v, id), touched, voxels_block_full(v, id), full);
        /* from the prepared box the same answers */
        assert_int_equal(voxels_prepare(v, lo, size, &err), TSR_OK);
        int64_t c2[3];
        for (c2[2] = 0; c2[2] < d->cells[2]; ++c2[2])
          for (c2[1] = 0; c2[1] < d->cells[1]; ++c2[1])
            for (c2[0] = 0; c2[0] < d->cells[0]; ++c2[0]) {
              const double p[3] = {(double)c2[0] + 0.5, (double)c2[1] + 0.5, (double)c2[2] + 0.5};
              assert_int_equal(voxels_inside(v, p), brute(im, d, c2));
            }
      }
  assert_int_equal(voxels_any(v), any);
}

/* A voxel per cell over the whole domain, periodic: the image repeats across the faces.
 * Sparse images (most blocks untouched: the ghost layers across faces decide), half-full
 * and nearly full ones (blocks all solid). */
static void test_summaries_one_to_one(void **state) {
  (void)state;
  const int64_t n[3] = {11, 7, 5};
  const double off[3] = {0, 0, 0}, fills[] = {0.004, 0.01, 0.15, 0.97};
  const patch_options_t ds[] = {opts3(11, 7, 5, 3, 2, 2, true, true, true),
                                opts3(11, 7, 5, 1, 1, 1, true, true, true),
                                opts3(11, 7, 5, 4, 3, 1, false, true, false),
                                opts3(11, 7, 5, 11, 1, 5, true, false, true),
                                opts3(11, 7, 5, 11, 7, 5, true, true, true)};
  for (size_t k = 0; k < sizeof fills / sizeof fills[0]; ++k)
    for (int trial = 0; trial < 4; ++trial) {
      char name[32];
      snprintf(name, sizeof name, "a_%zu_%d.raw", k, trial);
      image_t im = make_image(name, n, 1.0, off, fills[k]);
      for (size_t i = 0; i < sizeof ds / sizeof ds[0]; ++i) check_summaries(&im, &ds[i]);
      free(im.solid);
    }
}

/* Finer and coarser voxels than cells, placed off the origin (no repeat). */
static void test_summaries_spacings(void **state) {
  (void)state;
  const int64_t fine[3] = {19, 12, 8}, coarse[3] = {4, 3, 2}, faces[3] = {24, 14, 12};
  const double off_fine[3] = {0.25, 1.0, 0.5}, off_coarse[3] = {1.5, 0.0, 2.0},
               origin[3] = {0, 0, 0};
  image_t a = make_image("fine.raw", fine, 0.5, off_fine, 0.3);
  image_t b = make_image("coarse.raw", coarse, 2.0, off_coarse, 0.5);
  /* half-cell voxels from the origin: every cell centre on a voxel corner (the voxel
     above it holds it), repeating along the periodic axes */
  image_t c = make_image("faces.raw", faces, 0.5, origin, 0.05);
  const patch_options_t ds[] = {opts3(12, 7, 6, 3, 2, 2, true, true, true),
                                opts3(12, 7, 6, 2, 1, 3, false, false, false)};
  for (size_t i = 0; i < sizeof ds / sizeof ds[0]; ++i) {
    check_summaries(&a, &ds[i]);
    check_summaries(&b, &ds[i]);
    check_summaries(&c, &ds[i]);
  }
  free(a.solid);
  free(b.solid);
  free(c.solid);
}

/* A solid block of 2 x 2 x 2 voxels of 2 cells each, its faces on the lines x = 3, 7...:
 * the entry of segments from outside equals the slabs' (Kay and Kajiya) of that box. */
static void test_entry(void **state) {
  (void)state;
  const int64_t n[3] = {4, 4, 4};
  const double off[3] = {1, 1, 1};
  image_t im = make_image("entry.raw", n, 2.0, off, 0.0);
  /* rewrite: voxels 1..2 along each axis solid */
  FILE *f = fopen(im.o.path, "r+b");
  assert_non_null(f);
  for (int z = 0; z < 4; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x) {
        const bool s = x >= 1 && x <= 2 && y >= 1 && y <= 2 && z >= 1 && z <= 2;
        assert_int_equal(fseek(f, 5 + 2 * ((z * 4 + y) * 4 + x), SEEK_SET), 0);
        fputc(s ? 0 : 0x7f, f), fputc(0, f);
      }
  assert_int_equal(fclose(f), 0);
  const patch_options_t d = opts3(10, 10, 10, 1, 1, 1, false, false, false);
  const voxels_t *v = NULL;
  tsr_error_t err = {0};
  assert_int_equal(voxels_load(&im.o, &d, &v, &err), TSR_OK);
  const double lo = 3.0, hi = 7.0;
  int hits = 0;
  for (int k = 0; k < 20000; ++k) {
    double p[3], e[3], t0 = 0, t1 = 1;
    bool outside = false;
    for (int a = 0; a < 3; ++a) {
      p[a] = 1.0 + 8.0 * (double)(rng() % 100000) / 100000.0;
      e[a] = ((double)(rng() % 200001) / 100000.0 - 1.0) * 1.5;
      outside = outside || p[a] < lo || p[a] >= hi;
    }
    if (!outside) continue;
    for (int a = 0; a < 3; ++a) {
      if (e[a] == 0.0) {
        if (p[a] < lo || p[a] >= hi) t0 = 2, t1 = -1;
        continue;
      }
      double ta = (lo - p[a]) / e[a], tb = (hi - p[a]) / e[a];
      if (ta > tb) { const double x = ta; ta = tb; tb = x; }
      t0 = fmax(t0, ta), t1 = fmin(t1, tb);
    }
    const double want = t0 < t1 ? t0 : 2.0, got = voxels_entry(v, p, e);
    if (fabs(got - want) > 1e-12 && !(want == 2.0 && got == 2.0))
      fail_msg("segment %d from (%g, %g, %g) along (%g, %g, %g): %.17g, expected %.17g", k,
               p[0], p[1], p[2], e[0], e[1], e[2], got, want);
    hits += want <= 1.0;
  }
  assert_true(hits > 100); /* the check met the box often enough to mean something */
  free(im.solid);
}

static void test_refused(void **state) {
  (void)state;
  const int64_t n[3] = {4, 4, 4};
  const double off[3] = {0, 0, 0};
  image_t im = make_image("r.raw", n, 1.0, off, 0.5);
  const patch_options_t d = opts3(4, 4, 4, 1, 1, 1, false, false, false);
  const voxels_t *v = NULL;
  tsr_error_t err = {0};
  voxels_options_t o = im.o;
  o.header = 6; /* one byte more than the file has before its voxels */
  assert_int_not_equal(voxels_load(&o, &d, &v, &err), TSR_OK);
  assert_non_null(strstr(err.text, "r.raw: 133 bytes, but 4 x 4 x 4 voxels of uint16 after a "
                                   "header of 6 bytes are 134"));
  o = im.o;
  o.offset[1] = 0.5; /* reaches y = 4.5 */
  assert_int_not_equal(voxels_load(&o, &d, &v, &err), TSR_OK);
  assert_non_null(strstr(err.text, "the image spans y from 0.5 to 4.5 (cells); it must lie inside "
                                   "the domain, 0 to 4"));
  o = im.o;
  snprintf(o.path, sizeof o.path, "%s/none.raw", folder);
  assert_int_not_equal(voxels_load(&o, &d, &v, &err), TSR_OK);
  assert_non_null(strstr(err.text, "none.raw: cannot open"));
  snprintf(o.path, sizeof o.path, "%s", folder);
  assert_int_not_equal(voxels_load(&o, &d, &v, &err), TSR_OK);
  assert_non_null(strstr(err.text, "not a regular file"));
  free(im.solid);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_voxels FOLDER\n");
    return 2;
  }
  folder = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_summaries_one_to_one),
      cmocka_unit_test(test_summaries_spacings),
      cmocka_unit_test(test_entry),
      cmocka_unit_test(test_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
