/* image: PNG pictures of a 2-D scalar field, read back with libpng.
 *
 * Checks, on pictures read back with libpng's simplified API: the size is the layout's;
 * every pixel of a cell has the cell's colour, the field's minimum and maximum get the
 * colour map's end colours (viridis: #440154 and #fde725), wall cells are grey and do not
 * count for the range, non-finite values are magenta; the legend bar runs from the end
 * colour at its top to the start colour at its bottom, and its tick labels and the label
 * put ink beside and above it; a uniform field is drawn in the start colour; no temporary
 * file is left behind. Also the automatic scale, the colour map's ends and clamping, and the
 * errors: characters the font lacks, scales out of range, empty fields, a folder that
 * does not exist (TSR_ERR_IO naming the path, no file left). */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <png.h>

#include "image.h"
#include "tsr_error.h"
#include "unit_test.h"

static const uint8_t viridis_start[3] = {68, 1, 84}, viridis_end[3] = {253, 231, 37};

/* A picture read back: RGB, 3 bytes per pixel. */
typedef struct picture {
  uint8_t *rgb;
  int width, height;
} picture_t;

static char folder[] = "/tmp/tessera_test_image_XXXXXX";

static int make_folder(void **state) {
  (void)state;
  return mkdtemp(folder) ? 0 : -1;
}

static void remove_file(const char *name) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", folder, name);
  remove(path);
}

static int remove_folder(void **state) {
  (void)state;
  remove_file("ramp.png");
  remove_file("uniform.png");
  remove_file("axes.png");
  return rmdir(folder);
}

/* Files in the folder whose names start with '.': temporary files left behind. */
static int hidden_files(void) {
  int n = 0;
  DIR *d = opendir(folder);
  for (struct dirent *e; d && (e = readdir(d));)
    n += e->d_name[0] == '.' && strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  if (d) closedir(d);
  return n;
}

static void path_of(char *out, size_t cap, const char *name) {
  int n = snprintf(out, cap, "%s/%s", folder, name);
  assert_true(n > 0 && (size_t)n < cap);
}

static picture_t read_png(const char *path) {
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, path)) fail_msg("%s: %s", path, img.message);
  img.format = PNG_FORMAT_RGB;
  picture_t p = {malloc(PNG_IMAGE_SIZE(img)), (int)img.width, (int)img.height};
  assert_non_null(p.rgb);
  if (!png_image_finish_read(&img, NULL, p.rgb, 0, NULL)) fail_msg("%s: %s", path, img.message);
  return p;
}

static const uint8_t *pixel(const picture_t *p, int x, int y) {
  assert_true(x >= 0 && x < p->width && y >= 0 && y < p->height);
  return p->rgb + 3 * ((size_t)y * (size_t)p->width + (size_t)x);
}

static bool same(const uint8_t *a, const uint8_t *b) { return memcmp(a, b, 3) == 0; }

#define ASSERT_COLOUR(got, want)                                                         \
  do {                                                                                   \
    const uint8_t *g_ = (got), *w_ = (want);                                             \
    if (!same(g_, w_))                                                                   \
      fail_msg("%s is (%d, %d, %d), expected (%d, %d, %d)", #got, g_[0], g_[1], g_[2],   \
               w_[0], w_[1], w_[2]);                                                     \
  } while (0)

/* Every pixel of cell (i, j) has the colour want. */
static void assert_cell(const picture_t *p, const image_layout_t *l, int ny, int i, int j,
                        const uint8_t want[3]) {
  int x0 = l->field.x + i * l->scale, y0 = l->field.y + (ny - 1 - j) * l->scale;
  for (int y = y0; y < y0 + l->scale; ++y)
    for (int x = x0; x < x0 + l->scale; ++x)
      if (!same(pixel(p, x, y), want))
        fail_msg("cell (%d, %d), pixel (%d, %d): (%d, %d, %d), expected (%d, %d, %d)", i, j, x,
                 y, pixel(p, x, y)[0], pixel(p, x, y)[1], pixel(p, x, y)[2], want[0], want[1],
                 want[2]);
}

/* Pixels in the rectangle that are not background. */
static int ink_in(const picture_t *p, image_rect_t r) {
  int n = 0;
  for (int y = r.y; y < r.y + r.h; ++y)
    for (int x = r.x; x < r.x + r.w; ++x) n += !same(pixel(p, x, y), image_background);
  return n;
}

static void test_colormap_ends_and_clamping(void **state) {
  (void)state;
  uint8_t c[3];
  image_colormap(0.0, c);
  ASSERT_COLOUR(c, viridis_start);
  image_colormap(1.0, c);
  ASSERT_COLOUR(c, viridis_end);
  image_colormap(-3.0, c);
  ASSERT_COLOUR(c, viridis_start);
  image_colormap(7.0, c);
  ASSERT_COLOUR(c, viridis_end);
  image_colormap(NAN, c);
  ASSERT_COLOUR(c, viridis_start);
  /* viridis grows brighter: green rises all the way */
  uint8_t prev[3];
  image_colormap(0.0, prev);
  for (int k = 1; k <= 100; ++k) {
    image_colormap(k / 100.0, c);
    assert_true(c[1] >= prev[1]);
    memcpy(prev, c, 3);
  }
}

static void test_ramp_with_wall(void **state) {
  (void)state;
  tsr_error_t err;
  enum { NX = 6, NY = 4 };
  double v[NX * NY];
  uint8_t wall[NX * NY] = {0};
  for (int j = 0; j < NY; ++j)
    for (int i = 0; i < NX; ++i) v[j * NX + i] = 0.01 * (i + 10 * j) - 0.05;
  /* a wall cell with a value above the maximum and one below the minimum: not counted */
  wall[1 * NX + 2] = 1;
  v[1 * NX + 2] = 1000.0;
  wall[2 * NX + 4] = 1;
  v[2 * NX + 4] = -1000.0;
  v[3 * NX + 0] = NAN; /* drawn magenta, not counted */
  image_field_t f = {.width = NX, .height = NY, .values = v, .wall = wall};
  image_options_t o = image_options_default();
  o.scale = 5;
  o.label = "|u|";
  o.caption = "z=3 step 10";
  image_layout_t l;
  ASSERT_OK(image_layout(&f, &o, &l, &err));
  assert_int_equal(l.scale, 5);
  assert_int_equal(l.field.w, NX * 5);
  assert_int_equal(l.field.h, NY * 5);
  char path[256];
  path_of(path, sizeof path, "ramp.png");
  ASSERT_OK(image_write_png(path, &f, &o, &err));
  assert_int_equal(hidden_files(), 0);

  picture_t p = read_png(path);
  assert_int_equal(p.width, l.width);
  assert_int_equal(p.height, l.height);
  /* minimum at (0, 0), maximum at (5, 3); walls grey; NaN magenta */
  assert_cell(&p, &l, NY, 0, 0, viridis_start);
  assert_cell(&p, &l, NY, 5, 3, viridis_end);
  assert_cell(&p, &l, NY, 2, 1, image_wall);
  assert_cell(&p, &l, NY, 4, 2, image_wall);
  assert_cell(&p, &l, NY, 0, 3, image_not_finite);
  /* a cell in between has the colour map's colour of its value */
  uint8_t mid[3];
  image_colormap((v[1 * NX + 3] - v[0]) / (v[3 * NX + 5] - v[0]), mid);
  assert_cell(&p, &l, NY, 3, 1, mid);
  /* the legend: end colour at the top, start colour at the bottom, ink around it */
  assert_true(ink_in(&p, l.legend) == l.legend.w * l.legend.h);
  ASSERT_COLOUR(pixel(&p, l.legend.x + l.legend.w / 2, l.legend.y), viridis_end);
  ASSERT_COLOUR(pixel(&p, l.legend.x + l.legend.w / 2, l.legend.y + l.legend.h - 1), viridis_start);
  assert_true(l.ticks.x > l.legend.x + l.legend.w);
  assert_true(l.ticks.w > 0);
  assert_true(ink_in(&p, l.ticks) > 20); /* the tick labels */
  image_rect_t above = {l.legend.x, 0, l.width - l.legend.x, l.legend.y - 1};
  assert_true(ink_in(&p, above) > 10); /* the label */
  image_rect_t below = {0, l.field.y + l.field.h + 1, l.field.x + l.field.w, l.height - l.field.y - l.field.h - 1};
  assert_true(ink_in(&p, below) > 10); /* the caption */
  /* the corners are background */
  ASSERT_COLOUR(pixel(&p, 0, 0), image_background);
  ASSERT_COLOUR(pixel(&p, p.width - 1, p.height - 1), image_background);
  free(p.rgb);
}

/* A fixed range: values beyond it take the end colours, the legend shows its ends; axes:
 * ticks and labels left of and below the field, the names beside them. */
static void test_fixed_range_and_axes(void **state) {
  (void)state;
  tsr_error_t err;
  enum { NX = 40, NY = 20 };
  double v[NX * NY];
  for (int k = 0; k < NX * NY; ++k) v[k] = 0.5;
  v[0] = -3.0;            /* below the range: its start colour */
  v[NX * NY - 1] = 9.0;   /* above it: its end colour */
  v[NX - 1] = 0.25;       /* a quarter of the way */
  image_field_t f = {.width = NX, .height = NY, .values = v};
  image_options_t o = image_options_default();
  o.scale = 4;
  o.fixed = true, o.lo = 0.0, o.hi = 1.0;
  o.label = "|u| [m/s]";
  o.axes = (image_axes_t){.on = true, .h0 = 0, .h1 = 0.4, .v0 = -0.1, .v1 = 0.1,
                          .h_name = "x [m]", .v_name = "y [m]"};
  image_layout_t l;
  ASSERT_OK(image_layout(&f, &o, &l, &err));
  /* ticks at round coordinates: 0, 0.1, ... 0.4 and -0.1, -0.05, ... 0.1 (or coarser) */
  assert_true(l.h_ticks >= 3 && l.h_ticks <= 9);
  assert_true(l.v_ticks >= 2 && l.v_ticks <= 9);
  char path[256];
  path_of(path, sizeof path, "axes.png");
  ASSERT_OK(image_write_png(path, &f, &o, &err));
  picture_t p = read_png(path);
  assert_cell(&p, &l, NY, 0, 0, viridis_start);
  assert_cell(&p, &l, NY, NX - 1, NY - 1, viridis_end);
  uint8_t c[3];
  image_colormap(0.25, c);
  assert_cell(&p, &l, NY, NX - 1, 0, c);
  image_colormap(0.5, c);
  assert_cell(&p, &l, NY, 5, 5, c);
  image_rect_t left = {0, l.field.y, l.field.x - 1, l.field.h};
  assert_true(ink_in(&p, left) > 30); /* the vertical axis's ticks and labels */
  image_rect_t below = {l.field.x, l.field.y + l.field.h + 1, l.field.w, 2 * 14 + 20};
  assert_true(ink_in(&p, below) > 30); /* the horizontal axis's */
  free(p.rgb);
}

static void test_uniform_field(void **state) {
  (void)state;
  tsr_error_t err;
  double v[3 * 2] = {0};
  image_field_t f = {.width = 3, .height = 2, .values = v, .wall = NULL};
  image_options_t o = image_options_default();
  image_layout_t l;
  ASSERT_OK(image_layout(&f, &o, &l, &err));
  assert_int_equal(l.scale, IMAGE_AUTO_MAX_SCALE); /* 384 / 3 = 128, capped */
  char path[256];
  path_of(path, sizeof path, "uniform.png");
  ASSERT_OK(image_write_png(path, &f, &o, &err));
  picture_t p = read_png(path);
  assert_int_equal(p.width, l.width);
  assert_int_equal(p.height, l.height);
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 3; ++i) assert_cell(&p, &l, 2, i, j, viridis_start);
  assert_true(ink_in(&p, l.ticks) > 0);
  free(p.rgb);
}

static void test_automatic_scale(void **state) {
  (void)state;
  tsr_error_t err;
  static double v[1000 * 3];
  image_options_t o = image_options_default();
  image_layout_t l;
  image_field_t f = {.width = 12, .height = 10, .values = v};
  ASSERT_OK(image_layout(&f, &o, &l, &err));
  assert_int_equal(l.scale, 32); /* 384 / 12 */
  f.width = 100;
  f.height = 7;
  ASSERT_OK(image_layout(&f, &o, &l, &err));
  assert_int_equal(l.scale, 4); /* ceil(384 / 100) */
  f.width = 1000;
  f.height = 3;
  ASSERT_OK(image_layout(&f, &o, &l, &err));
  assert_int_equal(l.scale, 1);
  assert_int_equal(l.field.w, 1000);
  /* the legend bar keeps a readable height however flat the field */
  assert_true(l.legend.h >= 100);
  assert_true(l.height > l.legend.h);
}

static void test_errors(void **state) {
  (void)state;
  tsr_error_t err;
  double v[4] = {0, 1, 2, 3};
  image_field_t f = {.width = 2, .height = 2, .values = v};
  image_options_t o = image_options_default();
  image_layout_t l;
  char path[256];

  assert_true(image_text_supported("|u| z=16 step 100 1.5e-05 +(x/y): t = 2.5 s"));
  assert_true(image_text_supported("abcdefghijklmnopqrstuvwxyz [kg/m^3] Pa N J K T Q C D"));
  assert_false(image_text_supported("Z"));
  o.label = "speed Z";
  ASSERT_ERR(image_layout(&f, &o, &l, &err), TSR_ERR_INVALID,
             "image label \"speed Z\": the character 'Z' is not in the built-in font");
  o = image_options_default();
  o.caption = "#";
  ASSERT_ERR(image_options_validate(&o, &err), TSR_ERR_INVALID, "image caption \"#\"");
  o = image_options_default();
  o.fixed = true, o.lo = 1, o.hi = 1;
  ASSERT_ERR(image_layout(&f, &o, &l, &err), TSR_ERR_INVALID,
             "image range [1, 1]: allowed are finite ends with the first below the second");
  o = image_options_default();
  o.scale = IMAGE_MAX_SCALE + 1;
  ASSERT_ERR(image_layout(&f, &o, &l, &err), TSR_ERR_INVALID,
             "image scale = 65: allowed are 0 (automatic) and 1..64");
  o.scale = -1;
  ASSERT_ERR(image_options_validate(&o, &err), TSR_ERR_INVALID, "image scale = -1");
  o = image_options_default();
  f.width = 0;
  ASSERT_ERR(image_layout(&f, &o, &l, &err), TSR_ERR_INVALID, "image field of 0 x 2 cells");
  f.width = 2;
  f.values = NULL;
  ASSERT_ERR(image_layout(&f, &o, &l, &err), TSR_ERR_INVALID, "without values");
  f.values = v;
  f.width = IMAGE_MAX_PIXELS + 1;
  f.height = 1;
  ASSERT_ERR(image_layout(&f, &o, &l, &err), TSR_ERR_INVALID, "at most 16384 pixels per side");
  f.width = 2;
  f.height = 2;
  /* a folder that does not exist: an I/O error naming the file, nothing written */
  path_of(path, sizeof path, "no_such_folder/x.png");
  ASSERT_ERR(image_write_png(path, &f, &o, &err), TSR_ERR_IO,
             "no_such_folder/x.png: No such file or directory");
  assert_int_not_equal(access(path, F_OK), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_colormap_ends_and_clamping),
      cmocka_unit_test(test_ramp_with_wall),
      cmocka_unit_test(test_uniform_field),
      cmocka_unit_test(test_fixed_range_and_axes),
      cmocka_unit_test(test_automatic_scale),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests_name("image", tests, make_folder, remove_folder);
}
