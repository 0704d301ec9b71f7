/* image: PNG pictures of a 2-D scalar field, for a quick look without ParaView.
 *
 * The field is drawn with a perceptual colour map (viridis, from the field's minimum to
 * its maximum, or over a fixed range: values beyond it take the end colours), wall cells
 * in grey, each cell as a square of `scale` x `scale` pixels, on a white background. To
 * the right a legend bar shows the colour map with the label above it and the ends of
 * the range as tick labels; optional axes carry ticks at round coordinates along the
 * bottom and left edges of the field, with the axes' names; an optional caption goes
 * under the field. Text is drawn with a small built-in bitmap font (see
 * image_text_supported). The file is written as <path>.tmp and renamed into place, so a
 * reader never sees half a picture.
 *
 * Only this module sees libpng. (The module is not called `png`: a framework header of
 * that name would hide libpng's own <png.h>, and libpng owns the png_ prefix.) */
#ifndef IMAGE_H
#define IMAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "tsr_error.h"

/* A field of width x height cells, x fastest; row 0 is drawn at the bottom. Borrowed. */
typedef struct image_field {
  int width, height;
  const double *values; /* width*height; non-finite values are drawn magenta and do not
                           count for the minimum and maximum */
  const uint8_t *wall;  /* width*height, non-zero: a wall cell, drawn grey, not counted;
                           NULL: no walls */
} image_field_t;

/* Axes of the field: the coordinates of its left, right, bottom and top edges and the
 * names written beside them ("x (m)"). */
typedef struct image_axes {
  bool on;
  double h0, h1, v0, v1;
  const char *h_name, *v_name; /* borrowed */
} image_axes_t;

typedef struct image_options {
  int scale;           /* pixels per cell, 1..IMAGE_MAX_SCALE; 0: the smallest that makes the
                          longer side of the field at least IMAGE_AUTO_PIXELS pixels (at
                          most IMAGE_AUTO_MAX_SCALE) */
  const char *label;   /* above the legend bar, e.g. "|u|"; NULL or "": none. Borrowed */
  const char *caption; /* under the field, e.g. "z=16 step 100"; NULL or "": none. Borrowed */
  bool fixed;          /* the colour map spans [lo, hi] (lo < hi), not the field's range */
  double lo, hi;
  image_axes_t axes;   /* .on false: none */
} image_options_t;

enum {
  IMAGE_MAX_SCALE = 64,
  IMAGE_AUTO_PIXELS = 384,
  IMAGE_AUTO_MAX_SCALE = 32,
  IMAGE_MAX_PIXELS = 16384 /* per side of the picture */
};

/* Where things are in the picture: pixel rectangles, x to the right, y down from the top
 * left corner. */
typedef struct image_rect {
  int x, y, w, h;
} image_rect_t;

typedef struct image_layout {
  int width, height; /* of the whole picture */
  int scale;         /* pixels per cell */
  image_rect_t field;  /* the cells; cell (i, j) covers x = field.x + i*scale,
                          y = field.y + (height - 1 - j)*scale */
  image_rect_t legend; /* the colour bar: maximum at the top row, minimum at the bottom row */
  image_rect_t ticks;  /* the tick labels right of the bar */
  int h_ticks, v_ticks; /* with axes: ticks along the bottom and the left edge */
} image_layout_t;

/* Colours of the background (white), of wall cells (grey) and of non-finite values. */
extern const uint8_t image_background[3];
extern const uint8_t image_wall[3];
extern const uint8_t image_not_finite[3];

image_options_t image_options_default(void);
/* Checks the scale and that label and caption use only characters of the font. */
TSR_NODISCARD tsr_status image_options_validate(const image_options_t *o, tsr_error_t *err);

/* True when the built-in font draws every character of text. It has the digits, space,
 * ". , - + = | ( ) [ ] : / ^ _", the lower-case letters and C D J K N P Q T. */
bool image_text_supported(const char *text);

/* The smallest and largest finite value of the field's non-wall cells (the colour map's
 * range without a fixed one); 0 and 0 where there is none. */
void image_field_range(const image_field_t *f, double *min, double *max);

/* Colour of t in [0, 1] (clamped; NaN gives 0) on the colour map: t = 0 and t = 1 give
 * exactly the map's end colours. */
void image_colormap(double t, uint8_t rgb[3]);

/* The layout image_write_png uses for this field and these options. */
TSR_NODISCARD tsr_status image_layout(const image_field_t *field, const image_options_t *o,
                                      image_layout_t *layout, tsr_error_t *err);

/* Writes the picture of the field as an 8-bit RGB PNG to path (through path.tmp). */
TSR_NODISCARD tsr_status image_write_png(const char *path, const image_field_t *field,
                                         const image_options_t *o, tsr_error_t *err);

/* A plot of time series: one panel per series, stacked, each with its own vertical axis
 * (ticks at round values, the series' name above it), the shared horizontal axis under
 * the last one. Points whose x or y is not finite break the line. Borrowed. */
typedef struct image_plot {
  int npoints;
  const double *x;
  const char *x_name;
  int nseries;               /* 1..IMAGE_PLOT_MAX_SERIES */
  const double *const *y;    /* y[s][npoints] */
  const char *const *names;  /* names[s] */
} image_plot_t;

enum { IMAGE_PLOT_MAX_SERIES = 16 };

/* Writes the plot as an 8-bit RGB PNG to path (through a temporary file). Text uses the
 * built-in font: a name it cannot draw is an error. */
TSR_NODISCARD tsr_status image_write_plot(const char *path, const image_plot_t *plot,
                                          tsr_error_t *err);

#endif
