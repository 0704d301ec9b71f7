#include "image.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

const uint8_t image_background[3] = {255, 255, 255};
const uint8_t image_wall[3] = {128, 128, 128};
const uint8_t image_not_finite[3] = {255, 0, 255};
static const uint8_t ink[3] = {0, 0, 0};

/* ------------------------------------------------------------------ colour map */

/* viridis (matplotlib's, by van der Walt and Smith), every 16th of its 256 entries and
 * the last, in 8 bits; entry k sits at 16k/255, the last at 1. */
static const uint8_t viridis[17][3] = {
    {68, 1, 84},    {72, 24, 106},  {71, 45, 123},  {66, 64, 134},  {59, 82, 139},
    {51, 99, 141},  {44, 114, 142}, {38, 130, 142}, {33, 145, 140}, {31, 160, 136},
    {40, 174, 128}, {63, 188, 115}, {94, 201, 98},  {132, 212, 75}, {173, 220, 48},
    {216, 226, 25}, {253, 231, 37}};

void image_colormap(double t, uint8_t rgb[3]) {
  if (!(t > 0)) t = 0; /* NaN too */
  if (t > 1) t = 1;
  double pos = t * 255.0;
  int k = (int)(pos / 16.0);
  if (k > 15) k = 15;
  double lo = 16.0 * k, hi = k == 15 ? 255.0 : lo + 16.0, f = (pos - lo) / (hi - lo);
  for (int c = 0; c < 3; ++c) {
    double a = viridis[k][c], b = viridis[k + 1][c];
    rgb[c] = (uint8_t)lround(a + f * (b - a));
  }
}

/* ------------------------------------------------------------------ font */

enum { FONT_W = 5, FONT_H = 7, FONT_PX = 2, CHAR_W = (FONT_W + 1) * FONT_PX, TEXT_H = FONT_H * FONT_PX };

/* 5x7 glyphs, one byte per row from the top, bit 4 the leftmost column. */
typedef struct glyph {
  char c;
  uint8_t rows[FONT_H];
} glyph_t;

static const glyph_t font[] = {
    {' ', {0, 0, 0, 0, 0, 0, 0}},
    {'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}},
    {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}},
    {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
    {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}},
    {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
    {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}},
    {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}},
    {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
    {'.', {0, 0, 0, 0, 0, 0x0C, 0x0C}},
    {'-', {0, 0, 0, 0x1F, 0, 0, 0}},
    {'+', {0, 0x04, 0x04, 0x1F, 0x04, 0x04, 0}},
    {'=', {0, 0, 0x1F, 0, 0x1F, 0, 0}},
    {'|', {0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}},
    {'(', {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}},
    {')', {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}},
    {':', {0, 0x0C, 0x0C, 0, 0x0C, 0x0C, 0}},
    {'/', {0, 0x01, 0x02, 0x04, 0x08, 0x10, 0}},
    {',', {0, 0, 0, 0, 0x0C, 0x04, 0x08}},
    {'[', {0x0E, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0E}},
    {']', {0x0E, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0E}},
    {'^', {0x04, 0x0A, 0x11, 0, 0, 0, 0}},
    {'_', {0, 0, 0, 0, 0, 0, 0x1F}},
    {'b', {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1E}},
    {'f', {0x06, 0x09, 0x08, 0x1C, 0x08, 0x08, 0x08}},
    {'g', {0, 0x0F, 0x11, 0x11, 0x0F, 0x01, 0x0E}},
    {'j', {0x02, 0, 0x06, 0x02, 0x02, 0x12, 0x0C}},
    {'k', {0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12}},
    {'q', {0, 0, 0x0D, 0x13, 0x0F, 0x01, 0x01}},
    {'w', {0, 0, 0x11, 0x11, 0x15, 0x15, 0x0A}},
    {'C', {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}},
    {'D', {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C}},
    {'J', {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C}},
    {'K', {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}},
    {'N', {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}},
    {'P', {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10}},
    {'Q', {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D}},
    {'T', {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}},
    {'a', {0, 0, 0x0E, 0x01, 0x0F, 0x11, 0x0F}},
    {'c', {0, 0, 0x0E, 0x10, 0x10, 0x11, 0x0E}},
    {'d', {0x01, 0x01, 0x0D, 0x13, 0x11, 0x11, 0x0F}},
    {'e', {0, 0, 0x0E, 0x11, 0x1F, 0x10, 0x0E}},
    {'h', {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11}},
    {'i', {0x04, 0, 0x0C, 0x04, 0x04, 0x04, 0x0E}},
    {'l', {0x0C, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'m', {0, 0, 0x1A, 0x15, 0x15, 0x11, 0x11}},
    {'n', {0, 0, 0x16, 0x19, 0x11, 0x11, 0x11}},
    {'o', {0, 0, 0x0E, 0x11, 0x11, 0x11, 0x0E}},
    {'p', {0, 0, 0x1E, 0x11, 0x1E, 0x10, 0x10}},
    {'r', {0, 0, 0x16, 0x19, 0x10, 0x10, 0x10}},
    {'s', {0, 0, 0x0E, 0x10, 0x0E, 0x01, 0x1E}},
    {'t', {0x08, 0x08, 0x1C, 0x08, 0x08, 0x09, 0x06}},
    {'u', {0, 0, 0x11, 0x11, 0x11, 0x13, 0x0D}},
    {'v', {0, 0, 0x11, 0x11, 0x11, 0x0A, 0x04}},
    {'x', {0, 0, 0x11, 0x0A, 0x04, 0x0A, 0x11}},
    {'y', {0, 0, 0x11, 0x11, 0x0F, 0x01, 0x0E}},
    {'z', {0, 0, 0x1F, 0x02, 0x04, 0x08, 0x1F}},
};

static const glyph_t *font_glyph(char c) {
  for (size_t i = 0; i < sizeof font / sizeof font[0]; ++i)
    if (font[i].c == c) return &font[i];
  return NULL;
}

bool image_text_supported(const char *text) {
  for (const char *p = text; p && *p; ++p)
    if (!font_glyph(*p)) return false;
  return true;
}

static int text_width(const char *text) {
  size_t n = text ? strlen(text) : 0;
  return n ? (int)n * CHAR_W - FONT_PX : 0;
}

/* ------------------------------------------------------------------ options and layout */

image_options_t image_options_default(void) {
  return (image_options_t){.scale = 0, .label = NULL, .caption = NULL};
}

static tsr_status check_text(const char *what, const char *text, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (const char *p = text; p && *p; ++p)
    TSR_CHECK(font_glyph(*p), TSR_ERR_INVALID,
              "image %s \"%.100s\": the character '%c' is not in the built-in font (it has the "
              "digits, space, . , - + = | ( ) [ ] : / ^ _, the lower-case letters and C D J K N "
              "P Q T)",
              what, text, *p);
cleanup:
  return st;
}

tsr_status image_options_validate(const image_options_t *o, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(o->scale >= 0 && o->scale <= IMAGE_MAX_SCALE, TSR_ERR_INVALID,
            "image scale = %d: allowed are 0 (automatic) and 1..%d", o->scale, IMAGE_MAX_SCALE);
  TSR_TRY(check_text("label", o->label, err));
  TSR_TRY(check_text("caption", o->caption, err));
cleanup:
  return st;
}

void image_field_range(const image_field_t *f, double *min, double *max) {
  bool any = false;
  *min = *max = 0;
  for (int64_t k = 0; k < (int64_t)f->width * f->height; ++k) {
    double v = f->values[k];
    if ((f->wall && f->wall[k]) || !isfinite(v)) continue;
    if (!any || v < *min) *min = v;
    if (!any || v > *max) *max = v;
    any = true;
  }
}

/* The colour map's ends: the fixed range, else the field's. */
static void map_range(const image_field_t *f, const image_options_t *o, double *min, double *max) {
  if (o->fixed) *min = o->lo, *max = o->hi;
  else image_field_range(f, min, max);
}

/* Round coordinates for the ticks of an axis from a to b (either order): the first tick
 * *first, the step *step (1, 2 or 5 times a power of ten), about target of them; the
 * count. */
static int axis_ticks(double a, double b, int target, double *first, double *step) {
  const double lo = a < b ? a : b, hi = a < b ? b : a, span = hi - lo;
  if (!(span > 0) || !isfinite(span)) return 0;
  const double raw = span / target, p = pow(10.0, floor(log10(raw)));
  const double m = raw / p;
  *step = (m < 1.5 ? 1.0 : m < 3.5 ? 2.0 : m < 7.5 ? 5.0 : 10.0) * p;
  *first = ceil(lo / *step - 1e-9) * *step;
  return (int)floor((hi - *first) / *step + 1e-9) + 1;
}

/* A tick's label: the value with the step's decimals where that is short, else three
 * significant digits ("2e-05", "1.5e+06"); exactly "0" at zero. */
static void axis_label(double v, double step, char out[32]) {
  if (fabs(v) < 1e-9 * step) {
    snprintf(out, 32, "0");
    return;
  }
  const int digits = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
  if (fabs(v) >= 1e5 || digits > 4) snprintf(out, 32, "%.3g", v);
  else snprintf(out, 32, "%.*f", digits, v);
}

/* The widest tick label of an axis. */
static int axis_label_width(double a, double b, int target) {
  double first, step;
  int n = axis_ticks(a, b, target, &first, &step), w = 0;
  for (int k = 0; k < n; ++k) {
    char t[32];
    axis_label(first + k * step, step, t);
    w = w > text_width(t) ? w : text_width(t);
  }
  return w;
}

/* Tick labels of the range: with as many digits as it takes to tell them apart. */
static void tick_labels(double min, double max, char lo[32], char hi[32]) {
  for (int digits = 3; digits <= 12; ++digits) {
    snprintf(lo, 32, "%.*g", digits, min);
    snprintf(hi, 32, "%.*g", digits, max);
    if (min == max || strcmp(lo, hi) != 0) break;
  }
}

enum { MARGIN = 12, GAP = 8, BAR_W = 20, BAR_MIN_H = 128, TICK_GAP = 6, TICK_LEN = 5 };

static int imax(int a, int b) { return a > b ? a : b; }

/* The layout, and the tick labels it was made for. */
static tsr_status layout_make(const image_field_t *f, const image_options_t *o, image_layout_t *l,
                              char lo[32], char hi[32], tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(image_options_validate(o, err));
  TSR_CHECK(f->width >= 1 && f->height >= 1 && f->values, TSR_ERR_INVALID,
            "image field of %d x %d cells%s: allowed are at least 1 x 1 cells with values",
            f->width, f->height, f->values ? "" : " without values");
  int s = o->scale;
  if (s == 0) {
    int longer = imax(f->width, f->height);
    s = (IMAGE_AUTO_PIXELS + longer - 1) / longer;
    if (s > IMAGE_AUTO_MAX_SCALE) s = IMAGE_AUTO_MAX_SCALE;
  }
  TSR_CHECK(f->width <= IMAGE_MAX_PIXELS / s && f->height <= IMAGE_MAX_PIXELS / s, TSR_ERR_INVALID,
            "image field of %d x %d cells at %d pixels per cell: at most %d pixels per side are "
            "allowed", f->width, f->height, s, IMAGE_MAX_PIXELS);
  TSR_CHECK(!o->fixed || (isfinite(o->lo) && isfinite(o->hi) && o->lo < o->hi), TSR_ERR_INVALID,
            "image range [%g, %g]: allowed are finite ends with the first below the second",
            o->lo, o->hi);
  const image_axes_t *ax = &o->axes;
  TSR_TRY(check_text("axis name", ax->on ? ax->h_name : NULL, err));
  TSR_TRY(check_text("axis name", ax->on ? ax->v_name : NULL, err));
  double min, max;
  map_range(f, o, &min, &max);
  tick_labels(min, max, lo, hi);

  memset(l, 0, sizeof *l);
  l->scale = s;
  int top = MARGIN + TEXT_H + GAP + TEXT_H / 2; /* the label, clear of the top tick label */
  int left = MARGIN + 1;
  if (ax->on) { /* the vertical axis's labels and ticks left of the field */
    l->h_ticks = axis_ticks(ax->h0, ax->h1, imax(2, f->width * s / 80), &(double){0}, &(double){0});
    l->v_ticks = axis_ticks(ax->v0, ax->v1, imax(2, f->height * s / 60), &(double){0}, &(double){0});
    left += axis_label_width(ax->v0, ax->v1, imax(2, f->height * s / 60)) + TICK_GAP + TICK_LEN;
    left = imax(left, MARGIN + 1 + text_width(ax->v_name) / 2);
    top += TEXT_H + GAP; /* the vertical axis's name above it */
  }
  l->field = (image_rect_t){left, top, f->width * s, f->height * s};
  l->legend = (image_rect_t){l->field.x + l->field.w + 1 + 3 * GAP, top, BAR_W,
                             imax(l->field.h, BAR_MIN_H)};
  l->ticks = (image_rect_t){l->legend.x + BAR_W + 1 + TICK_GAP, top - TEXT_H / 2,
                            imax(text_width(lo), text_width(hi)), l->legend.h + TEXT_H};
  int right = imax(l->ticks.x + l->ticks.w, l->legend.x + text_width(o->label));
  right = imax(right, l->field.x + text_width(o->caption));
  int below = l->field.y + l->field.h + 1; /* the horizontal axis's labels and name */
  if (ax->on) {
    below += TICK_LEN + TICK_GAP + TEXT_H + GAP + TEXT_H;
    right = imax(right, l->field.x + l->field.w + text_width(ax->h_name));
  }
  int bottom = imax(l->ticks.y + l->ticks.h, below);
  if (o->caption && o->caption[0]) bottom = imax(bottom, below + GAP + TEXT_H);
  l->width = right + MARGIN;
  l->height = bottom + MARGIN;
  TSR_CHECK(l->width <= IMAGE_MAX_PIXELS && l->height <= IMAGE_MAX_PIXELS, TSR_ERR_INVALID,
            "image of %d x %d pixels: at most %d pixels per side are allowed", l->width,
            l->height, IMAGE_MAX_PIXELS);
cleanup:
  return st;
}

tsr_status image_layout(const image_field_t *field, const image_options_t *o,
                        image_layout_t *layout, tsr_error_t *err) {
  char lo[32], hi[32];
  return layout_make(field, o, layout, lo, hi, err);
}

/* ------------------------------------------------------------------ drawing */

typedef struct canvas {
  uint8_t *rgb;
  int width, height;
} canvas_t;

static void fill(canvas_t *c, int x, int y, int w, int h, const uint8_t col[3]) {
  for (int j = imax(y, 0); j < y + h && j < c->height; ++j)
    for (int i = imax(x, 0); i < x + w && i < c->width; ++i)
      memcpy(c->rgb + 3 * ((size_t)j * (size_t)c->width + (size_t)i), col, 3);
}

/* A one-pixel frame just outside the rectangle. */
static void frame(canvas_t *c, image_rect_t r) {
  fill(c, r.x - 1, r.y - 1, r.w + 2, 1, ink);
  fill(c, r.x - 1, r.y + r.h, r.w + 2, 1, ink);
  fill(c, r.x - 1, r.y, 1, r.h, ink);
  fill(c, r.x + r.w, r.y, 1, r.h, ink);
}

static void text(canvas_t *c, int x, int y, const char *s) {
  for (; s && *s; ++s, x += CHAR_W) {
    const glyph_t *g = font_glyph(*s);
    if (!g) continue; /* not reached: options are validated */
    for (int r = 0; r < FONT_H; ++r)
      for (int b = 0; b < FONT_W; ++b)
        if (g->rows[r] & (0x10 >> b)) fill(c, x + b * FONT_PX, y + r * FONT_PX, FONT_PX, FONT_PX, ink);
  }
}

/* Ticks and labels along the bottom (horizontal axis) and the left edge (vertical axis)
 * of the field, at round coordinates; the names right of the bottom axis's labels and
 * above the left one. */
static void draw_axes(canvas_t *c, const image_field_t *f, const image_options_t *o,
                      const image_layout_t *l) {
  const image_axes_t *ax = &o->axes;
  const image_rect_t *r = &l->field;
  double first, step;
  int n = axis_ticks(ax->h0, ax->h1, imax(2, f->width * l->scale / 80), &first, &step);
  const int y0 = r->y + r->h + 1;
  for (int k = 0; k < n; ++k) {
    const double v = first + k * step;
    const int x = r->x + (int)lround((v - ax->h0) / (ax->h1 - ax->h0) * (r->w - 1));
    char t[32];
    axis_label(v, step, t);
    fill(c, x, y0, 1, TICK_LEN, ink);
    text(c, x - text_width(t) / 2, y0 + TICK_LEN + TICK_GAP, t);
  }
  text(c, r->x + r->w - text_width(ax->h_name), y0 + TICK_LEN + TICK_GAP + TEXT_H + GAP,
       ax->h_name);
  n = axis_ticks(ax->v0, ax->v1, imax(2, f->height * l->scale / 60), &first, &step);
  for (int k = 0; k < n; ++k) {
    const double v = first + k * step;
    const int y = r->y + r->h - 1 - (int)lround((v - ax->v0) / (ax->v1 - ax->v0) * (r->h - 1));
    char t[32];
    axis_label(v, step, t);
    fill(c, r->x - 1 - TICK_LEN, y, TICK_LEN, 1, ink);
    text(c, r->x - 1 - TICK_LEN - TICK_GAP - text_width(t), y - TEXT_H / 2, t);
  }
  text(c, imax(MARGIN, r->x - text_width(ax->v_name) / 2), r->y - GAP - TEXT_H - TEXT_H / 2,
       ax->v_name);
}

static void draw(canvas_t *c, const image_field_t *f, const image_options_t *o,
                 const image_layout_t *l, const char *lo, const char *hi) {
  fill(c, 0, 0, c->width, c->height, image_background);
  double min, max;
  map_range(f, o, &min, &max);
  /* the field, row 0 at the bottom */
  for (int j = 0; j < f->height; ++j)
    for (int i = 0; i < f->width; ++i) {
      size_t k = (size_t)j * (size_t)f->width + (size_t)i;
      double v = f->values[k];
      uint8_t col[3];
      if (f->wall && f->wall[k]) memcpy(col, image_wall, 3);
      else if (!isfinite(v)) memcpy(col, image_not_finite, 3);
      else image_colormap(max > min ? (v - min) / (max - min) : 0.0, col);
      fill(c, l->field.x + i * l->scale, l->field.y + (f->height - 1 - j) * l->scale, l->scale,
           l->scale, col);
    }
  frame(c, l->field);
  /* the legend: the colour map from the maximum (top) to the minimum (bottom) */
  const image_rect_t *b = &l->legend;
  for (int r = 0; r < b->h; ++r) {
    uint8_t col[3];
    image_colormap(b->h > 1 ? 1.0 - (double)r / (double)(b->h - 1) : 1.0, col);
    fill(c, b->x, b->y + r, b->w, 1, col);
  }
  frame(c, *b);
  text(c, l->ticks.x, b->y - TEXT_H / 2, hi);
  text(c, l->ticks.x, b->y + b->h - 1 - TEXT_H / 2, lo);
  text(c, b->x, MARGIN, o->label);
  int below = l->field.y + l->field.h + 1;
  if (o->axes.on) {
    draw_axes(c, f, o, l);
    below += TICK_LEN + TICK_GAP + TEXT_H + GAP + TEXT_H;
  }
  text(c, l->field.x, below + GAP, o->caption);
}

/* The canvas as a PNG at path, through a temporary file. */
static tsr_status canvas_write(const canvas_t *c, const char *path, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  output_file_t file = {.f = NULL};
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  img.width = (png_uint_32)c->width;
  img.height = (png_uint_32)c->height;
  img.format = PNG_FORMAT_RGB;
  TSR_TRY(output_file_open(&file, path, err));
  errno = 0;
  int ok = png_image_write_to_stdio(&img, file.f, 0, c->rgb, 0, NULL);
  TSR_CHECK(ok && !PNG_IMAGE_FAILED(img), TSR_ERR_IO, "cannot write %s: %s", path,
            img.message[0] ? img.message : strerror(errno));
  TSR_TRY(output_file_commit(&file, err));
cleanup:
  output_file_discard(&file); /* no half picture left behind */
  png_image_free(&img);
  return st;
}

/* A one-pixel line from (x0, y0) to (x1, y1) (Bresenham). */
static void line(canvas_t *c, int x0, int y0, int x1, int y1, const uint8_t col[3]) {
  const int dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
  for (int e = dx + dy;;) {
    fill(c, x0, y0, 1, 1, col);
    if (x0 == x1 && y0 == y1) break;
    const int e2 = 2 * e;
    if (e2 >= dy) e += dy, x0 += sx;
    if (e2 <= dx) e += dx, y0 += sy;
  }
}

enum { PLOT_W = 640, PLOT_PANEL_H = 120 };

/* A panel's vertical range [lo, hi] and the offset its ticks are told from: a series
 * that changes only in its last digits (a conserved mass) is drawn as its change from
 * the offset, which its name then states ("mass - 262144"). */
typedef struct plot_scale {
  double lo, hi, offset;
} plot_scale_t;

static plot_scale_t plot_scale_of(const image_plot_t *p, int s) {
  plot_scale_t r = {INFINITY, -INFINITY, 0};
  for (int k = 0; k < p->npoints; ++k)
    if (isfinite(p->y[s][k]) && isfinite(p->x[k])) r.lo = fmin(r.lo, p->y[s][k]), r.hi = fmax(r.hi, p->y[s][k]);
  if (!(r.lo < r.hi)) { /* constant (or nothing): a band around it */
    const double m = isfinite(r.lo) ? r.lo : 0, d = m != 0 ? fabs(m) * 1e-3 : 1;
    r.lo = m - d, r.hi = m + d;
  }
  const double mid = 0.5 * (r.lo + r.hi);
  if (r.hi - r.lo < 1e-3 * fabs(mid)) {
    char t[32];
    snprintf(t, sizeof t, "%.6g", mid);
    r.offset = strtod(t, NULL);
  }
  return r;
}

/* The widest tick label of a panel. */
static int plot_label_width(const plot_scale_t *r) {
  return axis_label_width(r->lo - r->offset, r->hi - r->offset, 4);
}

/* Panel s of the plot, on its scale sc: its frame, vertical axis, name and line, in r. */
static void plot_panel(canvas_t *c, const image_plot_t *p, int s, plot_scale_t sc,
                       image_rect_t r, double x0, double x1) {
  static const uint8_t blue[3] = {31, 119, 180};
  const double lo = sc.lo, hi = sc.hi;
  frame(c, r);
  char name[96];
  if (sc.offset != 0) snprintf(name, sizeof name, "%s - %.6g", p->names[s], sc.offset);
  else snprintf(name, sizeof name, "%s", p->names[s]);
  text(c, r.x, r.y - TEXT_H - 4, name);
  double first, step;
  const int n = axis_ticks(lo - sc.offset, hi - sc.offset, 4, &first, &step);
  for (int k = 0; k < n; ++k) {
    const double v = first + k * step;
    const int y = r.y + r.h - 1 - (int)lround((v + sc.offset - lo) / (hi - lo) * (r.h - 1));
    char t[32];
    axis_label(v, step, t);
    fill(c, r.x - 1 - TICK_LEN, y, TICK_LEN, 1, ink);
    text(c, r.x - 1 - TICK_LEN - TICK_GAP - text_width(t), y - TEXT_H / 2, t);
  }
  int px = 0, py = 0;
  bool have = false;
  for (int k = 0; k < p->npoints; ++k) {
    const double xv = p->x[k], yv = p->y[s][k];
    if (!isfinite(xv) || !isfinite(yv)) {
      have = false;
      continue;
    }
    const int x = r.x + (int)lround(x1 > x0 ? (xv - x0) / (x1 - x0) * (r.w - 1) : 0);
    const int y = r.y + r.h - 1 - (int)lround((yv - lo) / (hi - lo) * (r.h - 1));
    if (have) line(c, px, py, x, y, blue);
    else fill(c, x, y, 1, 1, blue);
    px = x, py = y, have = true;
  }
}

tsr_status image_write_plot(const char *path, const image_plot_t *p, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  canvas_t c = {0};
  TSR_CHECK(p->nseries >= 1 && p->nseries <= IMAGE_PLOT_MAX_SERIES && p->npoints >= 0,
            TSR_ERR_INVALID, "plot %s: %d series of %d points; allowed are 1..%d series", path,
            p->nseries, p->npoints, IMAGE_PLOT_MAX_SERIES);
  TSR_TRY(check_text("axis name", p->x_name, err));
  for (int s = 0; s < p->nseries; ++s) TSR_TRY(check_text("series name", p->names[s], err));
  double x0 = INFINITY, x1 = -INFINITY;
  for (int k = 0; k < p->npoints; ++k)
    if (isfinite(p->x[k])) x0 = fmin(x0, p->x[k]), x1 = fmax(x1, p->x[k]);
  if (!(x0 <= x1)) x0 = 0, x1 = 1;
  if (x0 == x1) x1 = x0 + 1;
  plot_scale_t scales[IMAGE_PLOT_MAX_SERIES];
  int labels = 0; /* the left margin: the widest tick label of any panel */
  for (int s = 0; s < p->nseries; ++s) {
    scales[s] = plot_scale_of(p, s);
    labels = imax(labels, plot_label_width(&scales[s]));
  }
  const int panel = PLOT_PANEL_H + TEXT_H + GAP + 4, left = MARGIN + labels + TICK_GAP + TICK_LEN + 2;
  c.width = left + PLOT_W + 2 * MARGIN;
  c.height = MARGIN + p->nseries * panel + TICK_LEN + TICK_GAP + 2 * TEXT_H + 2 * GAP + MARGIN;
  c.rgb = malloc((size_t)c.width * (size_t)c.height * 3);
  TSR_CHECK(c.rgb, TSR_ERR_NOMEM, "out of memory for a plot (%s)", path);
  fill(&c, 0, 0, c.width, c.height, image_background);
  image_rect_t r = {left, 0, PLOT_W, PLOT_PANEL_H};
  for (int s = 0; s < p->nseries; ++s) {
    r.y = MARGIN + s * panel + TEXT_H + GAP;
    plot_panel(&c, p, s, scales[s], r, x0, x1);
  }
  double first, step; /* the shared horizontal axis under the last panel */
  const int n = axis_ticks(x0, x1, 6, &first, &step), y0 = r.y + r.h + 1;
  for (int k = 0; k < n; ++k) {
    const double v = first + k * step;
    const int x = r.x + (int)lround((v - x0) / (x1 - x0) * (r.w - 1));
    char t[32];
    axis_label(v, step, t);
    fill(&c, x, y0, 1, TICK_LEN, ink);
    text(&c, x - text_width(t) / 2, y0 + TICK_LEN + TICK_GAP, t);
  }
  text(&c, r.x + r.w - text_width(p->x_name), y0 + TICK_LEN + TICK_GAP + TEXT_H + GAP, p->x_name);
  TSR_TRY(canvas_write(&c, path, err));
cleanup:
  free(c.rgb);
  return st;
}

tsr_status image_write_png(const char *path, const image_field_t *field, const image_options_t *o,
                           tsr_error_t *err) {
  tsr_status st = TSR_OK;
  image_layout_t l = {.width = 0};
  char lo[32], hi[32];
  canvas_t c = {0};
  TSR_TRY(layout_make(field, o, &l, lo, hi, err));
  c.width = l.width;
  c.height = l.height;
  c.rgb = malloc((size_t)c.width * (size_t)c.height * 3);
  TSR_CHECK(c.rgb, TSR_ERR_NOMEM, "out of memory for an image of %d x %d pixels (%s)", c.width,
            c.height, path);
  draw(&c, field, o, &l, lo, hi);
  TSR_TRY(canvas_write(&c, path, err));
cleanup:
  free(c.rgb);
  return st;
}
