#include "inlet_profile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loaded.h"
#include "tsr_file.h"

enum { PROFILE_MAX_BYTES = 64 << 20, PROFILE_MAX_COLUMNS = 5 };

struct inlet_profile {
  int naxes;          /* coordinates the file names: 1 or 2 */
  int axis[2];        /* their domain axes */
  size_t n[2];        /* grid values along each (n[1] = 1 with one coordinate) */
  double *coord[2];   /* increasing */
  double *u;          /* 3 per point, point (i, j) at 3 (j n[0] + i) */
  double peak[3];
};

static void profile_free(void *vt) {
  struct inlet_profile *t = vt;
  if (!t) return;
  free(t->coord[0]);
  free(t->coord[1]);
  free(t->u);
  free(t);
}

/* The next line (its end cut, "\r\n" too) from *p; NULL at the end. */
static char *profile_line(char **p) {
  if (!**p) return NULL;
  char *line = *p, *end = strchr(line, '\n');
  if (end) {
    *end = '\0';
    *p = end + 1;
  } else {
    *p = line + strlen(line);
  }
  const size_t len = strlen(line);
  if (len > 0 && line[len - 1] == '\r') line[len - 1] = '\0';
  return line;
}

static bool profile_blank(const char *line) {
  while (*line == ' ' || *line == '\t') ++line;
  return *line == '\0' || *line == '#';
}

/* The fields of a line split at commas, spaces around them dropped, into f[max]; the
 * count, or max + 1 where there are more. */
static int profile_split(char *line, char **f, int max) {
  int n = 0;
  for (char *p = line;;) {
    while (*p == ' ' || *p == '\t') ++p;
    char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);
    char *last = end;
    while (last > p && (last[-1] == ' ' || last[-1] == '\t')) --last;
    *last = '\0';
    if (n == max) return max + 1;
    f[n++] = p;
    if (!comma) return n;
    p = comma + 1;
  }
}

static int profile_compare(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The index of x among the n increasing values v (found: it is one of them). */
static size_t profile_index(const double *v, size_t n, double x) {
  size_t lo = 0, hi = n;
  while (hi - lo > 1) {
    const size_t mid = (lo + hi) / 2;
    if (v[mid] <= x) lo = mid;
    else hi = mid;
  }
  return lo;
}

static const char *const profile_names[6] = {"x", "y", "z", "ux", "uy", "uz"};
static const char *const profile_faces[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};

/* The header line (line number *number of the file, after blank lines): its columns
 * (0..2 a coordinate, 3..5 a velocity component) into column[*ncol], the coordinates
 * into t->axis and t->naxes. */
static tsr_status profile_header(char **p, const char *path, int face, long *number,
                                 int *column, int *ncol, struct inlet_profile *t,
                                 tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char *line, *field[PROFILE_MAX_COLUMNS + 1];
  do {
    line = profile_line(p);
    ++*number;
  } while (line && profile_blank(line));
  TSR_CHECK(line, TSR_ERR_INVALID, "%s: empty: an inlet profile starts with a line naming its "
            "columns (e.g. y,ux)", path);
  *ncol = profile_split(line, field, PROFILE_MAX_COLUMNS);
  TSR_CHECK(*ncol <= PROFILE_MAX_COLUMNS, TSR_ERR_INVALID,
            "%s: line %ld: more than %d columns; allowed are one or two coordinates and up to "
            "three velocity components", path, *number, PROFILE_MAX_COLUMNS);
  int naxes = 0, nvel = 0, used = 0;
  for (int c = 0; c < *ncol; ++c) {
    column[c] = -1;
    for (int k = 0; k < 6; ++k)
      if (strcmp(field[c], profile_names[k]) == 0) column[c] = k;
    TSR_CHECK(column[c] >= 0, TSR_ERR_INVALID,
              "%s: line %ld: column %d is \"%s\"; the columns are named x, y, z (coordinates) "
              "and ux, uy, uz (the velocity)", path, *number, c + 1, field[c]);
    TSR_CHECK(!(used & (1 << column[c])), TSR_ERR_INVALID, "%s: line %ld: column \"%s\" given "
              "twice", path, *number, field[c]);
    used |= 1 << column[c];
    if (column[c] < 3) {
      TSR_CHECK(column[c] != face / 2, TSR_ERR_INVALID,
                "%s: line %ld: column \"%s\" is the normal of face %s; the coordinates of a "
                "profile lie along the face", path, *number, field[c], profile_faces[face]);
      t->axis[naxes++] = column[c];
    } else {
      ++nvel;
    }
  }
  TSR_CHECK(naxes >= 1 && nvel >= 1, TSR_ERR_INVALID,
            "%s: line %ld: the columns must name a coordinate along face %s and at least one "
            "velocity component (e.g. %s,ux)", path, *number, profile_faces[face],
            profile_names[face / 2 == 0 ? 1 : 0]);
  if (naxes == 2 && t->axis[0] > t->axis[1]) { /* the lower axis first */
    const int a = t->axis[0];
    t->axis[0] = t->axis[1];
    t->axis[1] = a;
  }
  t->naxes = naxes;
cleanup:
  return st;
}

/* The points below the header, in lattice units: 5 values each (coordinate 0,
 * coordinate 1, ux, uy, uz) into *rows (malloc'd; the caller frees it), *npts. */
static tsr_status profile_points(char **p, const char *path, long number, const int *column,
                                 int ncol, const units_t *u, const struct inlet_profile *t,
                                 double **rows, size_t *npts, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char *line, *field[PROFILE_MAX_COLUMNS + 1];
  size_t cap = 0;
  *npts = 0;
  while ((line = profile_line(p)) != NULL) {
    ++number;
    if (profile_blank(line)) continue;
    const int n = profile_split(line, field, PROFILE_MAX_COLUMNS);
    TSR_CHECK(n == ncol, TSR_ERR_INVALID, "%s: line %ld: %s%d values; the header names %d "
              "columns", path, number, n > PROFILE_MAX_COLUMNS ? "more than " : "",
              n > PROFILE_MAX_COLUMNS ? PROFILE_MAX_COLUMNS : n, ncol);
    if (*npts == cap) {
      cap = cap ? 2 * cap : 256;
      TSR_CHECK(cap < ((size_t)1 << 26), TSR_ERR_INVALID, "%s: more than %zu points", path,
                (size_t)1 << 25);
      double *grown = realloc(*rows, cap * 5 * sizeof **rows);
      TSR_CHECK(grown, TSR_ERR_NOMEM, "%s: out of memory", path);
      *rows = grown;
    }
    double *r = *rows + 5 * *npts;
    r[1] = 0.0;
    r[2] = r[3] = r[4] = 0.0;
    for (int c = 0; c < ncol; ++c) {
      char *end;
      errno = 0;
      const double v = strtod(field[c], &end);
      TSR_CHECK(end != field[c] && *end == '\0' && errno == 0 && isfinite(v), TSR_ERR_INVALID,
                "%s: line %ld: \"%s\" (column \"%s\") is not a finite number", path, number,
                field[c], profile_names[column[c]]);
      if (column[c] < 3) {
        r[column[c] == t->axis[0] ? 0 : 1] = units_to_lattice(u, UNITS_LENGTH, v);
      } else {
        const double lattice = units_to_lattice(u, UNITS_VELOCITY, v);
        TSR_CHECK(fabs(lattice) <= 0.4, TSR_ERR_INVALID,
                  "%s: line %ld: %s = %g (%g in lattice units): allowed are [-0.4, 0.4] in "
                  "lattice units", path, number, profile_names[column[c]], v, lattice);
        r[2 + column[c] - 3] = lattice;
      }
    }
    ++*npts;
  }
  TSR_CHECK(*npts >= 1, TSR_ERR_INVALID, "%s: no point below the header", path);
cleanup:
  return st;
}

/* The table of t from the points: the distinct values of each coordinate (a full grid,
 * each pair once), the velocities on it, the peak. */
static tsr_status profile_grid(const char *path, const double *rows, size_t npts,
                               struct inlet_profile *t, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  double *values = NULL;
  bool *seen = NULL;
  for (int a = 0; a < 2; ++a) {
    const size_t n = a < t->naxes ? npts : 1;
    t->coord[a] = malloc(n * sizeof *t->coord[a]);
    TSR_CHECK(t->coord[a], TSR_ERR_NOMEM, "%s: out of memory", path);
    for (size_t k = 0; k < n; ++k) t->coord[a][k] = rows[5 * k + a];
    qsort(t->coord[a], n, sizeof *t->coord[a], profile_compare);
    size_t m = 0;
    for (size_t k = 0; k < n; ++k)
      if (m == 0 || t->coord[a][k] != t->coord[a][m - 1]) t->coord[a][m++] = t->coord[a][k];
    t->n[a] = m;
  }
  TSR_CHECK(t->naxes == 2 || t->n[0] == npts, TSR_ERR_INVALID,
            "%s: %zu points but %zu different values of %s: a coordinate is given twice", path,
            npts, t->n[0], profile_names[t->axis[0]]);
  TSR_CHECK(t->naxes == 1 || t->n[0] * t->n[1] == npts, TSR_ERR_INVALID,
            "%s: %zu points over %zu values of %s and %zu of %s: the points must form a full "
            "grid, each pair once", path, npts, t->n[0], profile_names[t->axis[0]], t->n[1],
            profile_names[t->axis[1]]);
  values = malloc(3 * npts * sizeof *values);
  seen = calloc(npts, sizeof *seen);
  TSR_CHECK(values && seen, TSR_ERR_NOMEM, "%s: out of memory", path);
  double best = -1;
  for (size_t k = 0; k < npts; ++k) {
    const double *r = rows + 5 * k;
    const size_t i = profile_index(t->coord[0], t->n[0], r[0]),
                 j = profile_index(t->coord[1], t->n[1], r[1]), at = j * t->n[0] + i;
    TSR_CHECK(!seen[at], TSR_ERR_INVALID, "%s: the point (%g, %g) is given twice", path, r[0],
              r[1]);
    seen[at] = true;
    memcpy(values + 3 * at, r + 2, 3 * sizeof *values);
    const double s = r[2] * r[2] + r[3] * r[3] + r[4] * r[4];
    if (s > best) best = s, memcpy(t->peak, r + 2, sizeof t->peak);
  }
  t->u = values;
  values = NULL;
cleanup:
  free(values);
  free(seen);
  return st;
}

/* Parses text (a copy of the file) into t, which must cover every cell centre of the
 * face along its coordinates. */
static tsr_status profile_parse(char *text, const char *path, int face,
                                const patch_options_t *domain, const units_t *u,
                                struct inlet_profile *t, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char *p = text;
  int column[PROFILE_MAX_COLUMNS], ncol = 0;
  double *rows = NULL;
  size_t npts = 0;
  long number = 0;
  TSR_TRY(profile_header(&p, path, face, &number, column, &ncol, t, err));
  TSR_TRY(profile_points(&p, path, number, column, ncol, u, t, &rows, &npts, err));
  TSR_TRY(profile_grid(path, rows, npts, t, err));
  for (int a = 0; a < t->naxes; ++a) {
    const int axis = t->axis[a];
    const double need_lo = 0.5, need_hi = (double)domain->cells[axis] - 0.5;
    const double lo = t->coord[a][0], hi = t->coord[a][t->n[a] - 1];
    TSR_CHECK(lo <= need_lo && hi >= need_hi, TSR_ERR_INVALID,
              "%s: the profile covers %s from %g to %g (cells); the face %s needs every cell "
              "centre, %g to %g (%g to %g%s)", path, profile_names[axis], lo, hi,
              profile_faces[face], need_lo, need_hi,
              units_to_physical(u, UNITS_LENGTH, need_lo),
              units_to_physical(u, UNITS_LENGTH, need_hi), u && u->on ? " m" : " cells");
  }
cleanup:
  free(rows);
  return st;
}

tsr_status inlet_profile_load(const char *path, int face, const patch_options_t *domain,
                              const units_t *u, const inlet_profile_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const units_t none = units_none();
  if (!u) u = &none;
  char *text = NULL;
  struct { /* the file, the face's extent and the units its values are in */
    char path[2048];
    int64_t face, cells[3], on;
    long double dx, dt, mass;
  } key;
  memset(&key, 0, sizeof key);
  snprintf(key.path, sizeof key.path, "%s", path);
  key.face = face;
  for (int a = 0; a < 3; ++a) key.cells[a] = domain->cells[a];
  key.on = u->on;
  key.dx = u->dx, key.dt = u->dt, key.mass = u->mass;
  struct inlet_profile *t = loaded_find(&key, sizeof key);
  if (t) {
    *out = t;
    return st;
  }
  t = calloc(1, sizeof *t);
  TSR_CHECK(t, TSR_ERR_NOMEM, "%s: out of memory", path);
  size_t len;
  TSR_TRY(tsr_file_read(path, PROFILE_MAX_BYTES, "an inlet profile", &text, &len, err));
  TSR_CHECK(memchr(text, '\0', len) == NULL, TSR_ERR_INVALID,
            "%s: holds a NUL byte: not a CSV text file", path);
  TSR_TRY(profile_parse(text, path, face, domain, u, t, err));
  TSR_TRY(loaded_keep(&key, sizeof key, t, profile_free, err));
  *out = t;
  t = NULL;
cleanup:
  free(text);
  profile_free(t);
  return st;
}

/* Where x lies among the n increasing values v: between points i and i1, the weight w of
 * i1; at a point, or beyond the ends (the end value), i1 = i and w = 0, so that the value
 * there is the point's own, exactly. */
static void profile_locate(const double *v, size_t n, double x, size_t *i, size_t *i1,
                           double *w) {
  *w = 0.0;
  if (x <= v[0]) {
    *i = *i1 = 0;
    return;
  }
  if (x >= v[n - 1]) {
    *i = *i1 = n - 1;
    return;
  }
  *i = profile_index(v, n, x);
  *i1 = *i + 1;
  *w = (x - v[*i]) / (v[*i1] - v[*i]);
}

void inlet_profile_velocity(const inlet_profile_t *t, const double p[3], double u[3]) {
  size_t i = 0, i1 = 0, j = 0, j1 = 0;
  double wi = 0, wj = 0;
  profile_locate(t->coord[0], t->n[0], p[t->axis[0]], &i, &i1, &wi);
  if (t->naxes == 2) profile_locate(t->coord[1], t->n[1], p[t->axis[1]], &j, &j1, &wj);
  const size_t n0 = t->n[0];
  for (int a = 0; a < 3; ++a) {
    const double v00 = t->u[3 * (j * n0 + i) + a], v10 = t->u[3 * (j * n0 + i1) + a],
                 v01 = t->u[3 * (j1 * n0 + i) + a], v11 = t->u[3 * (j1 * n0 + i1) + a];
    const double low = v00 + wi * (v10 - v00), high = v01 + wi * (v11 - v01);
    u[a] = low + wj * (high - low);
  }
}

void inlet_profile_peak(const inlet_profile_t *t, double u[3]) {
  memcpy(u, t->peak, sizeof t->peak);
}
