#include "stl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tsr_file.h"

void stl_free(stl_mesh_t *m) {
  if (!m) return;
  free(m->tri);
  memset(m, 0, sizeof *m);
}

static void stl_bounds(stl_mesh_t *m) {
  for (int a = 0; a < 3; ++a) {
    m->lo[a] = m->n ? INFINITY : 0.0;
    m->hi[a] = m->n ? -INFINITY : 0.0;
  }
  for (size_t k = 0; k < m->n; ++k)
    for (int v = 0; v < 3; ++v)
      for (int a = 0; a < 3; ++a) {
        m->lo[a] = fmin(m->lo[a], m->tri[k][v][a]);
        m->hi[a] = fmax(m->hi[a], m->tri[k][v][a]);
      }
}

/* ---- binary ---- */

static uint32_t stl_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float stl_lef(const uint8_t *p) {
  const uint32_t u = stl_le32(p);
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static tsr_status stl_parse_binary(const uint8_t *data, size_t n, const char *source,
                                   stl_mesh_t *m, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(n <= STL_MAX_TRIANGLES, TSR_ERR_INVALID,
            "%s: %zu triangles; at most %d are allowed", source, n, (int)STL_MAX_TRIANGLES);
  m->tri = malloc((n ? n : 1) * sizeof *m->tri);
  TSR_CHECK(m->tri, TSR_ERR_NOMEM, "%s: out of memory for %zu triangles", source, n);
  for (size_t k = 0; k < n; ++k) {
    const uint8_t *t = data + 84 + 50 * k + 12; /* past the normal */
    for (int v = 0; v < 3; ++v)
      for (int a = 0; a < 3; ++a) {
        const float x = stl_lef(t + 12 * v + 4 * a);
        TSR_CHECK(isfinite(x), TSR_ERR_INVALID,
                  "%s: triangle %zu, vertex %d: coordinate %d is not a finite number", source,
                  k, v, a);
        m->tri[k][v][a] = (double)x;
      }
  }
  m->n = n;
cleanup:
  return st;
}

/* ---- ASCII ---- */

typedef struct stl_lexer {
  const char *p, *end;
  const char *source;
  long line;
  char tok[64];
  size_t len; /* the token's full length (tok holds at most 63 bytes of it) */
} stl_lexer_t;

static int stl_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* The next token into tok; false at the end. */
static int stl_next(stl_lexer_t *x) {
  while (x->p < x->end && stl_space(*x->p)) {
    if (*x->p == '\n') ++x->line;
    ++x->p;
  }
  if (x->p == x->end) return 0;
  const char *s = x->p;
  while (x->p < x->end && !stl_space(*x->p)) ++x->p;
  x->len = (size_t)(x->p - s);
  const size_t keep = x->len < sizeof x->tok ? x->len : sizeof x->tok - 1;
  memcpy(x->tok, s, keep);
  x->tok[keep] = '\0';
  for (size_t i = 0; i < keep; ++i)
    if ((unsigned char)x->tok[i] < 0x20 || (unsigned char)x->tok[i] > 0x7e) x->tok[i] = '?';
  return 1;
}

static int stl_is(const stl_lexer_t *x, const char *word) {
  const size_t n = strlen(word);
  if (x->len != n) return 0;
  for (size_t i = 0; i < n; ++i) {
    char c = x->tok[i];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != word[i]) return 0;
  }
  return 1;
}

/* The next token, which must be word. */
static tsr_status stl_expect(stl_lexer_t *x, const char *word, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const int got = stl_next(x);
  TSR_CHECK(got && stl_is(x, word), TSR_ERR_INVALID, "%s: line %ld: expected \"%s\", found %s%s%s",
            x->source, x->line, word, got ? "\"" : "the end of the file", got ? x->tok : "",
            got ? "\"" : "");
cleanup:
  return st;
}

static tsr_status stl_number(stl_lexer_t *x, double *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const int got = stl_next(x);
  TSR_CHECK(got, TSR_ERR_INVALID, "%s: line %ld: expected a number, found the end of the file",
            x->source, x->line);
  char *end = NULL;
  errno = 0;
  const double v = x->len < sizeof x->tok ? strtod(x->tok, &end) : 0.0;
  TSR_CHECK(x->len < sizeof x->tok && end && *end == '\0' && end != x->tok && errno == 0 &&
                isfinite(v),
            TSR_ERR_INVALID, "%s: line %ld: \"%s\" is not a finite number", x->source, x->line,
            x->tok);
  *out = v;
cleanup:
  return st;
}

static tsr_status stl_parse_ascii(const uint8_t *data, size_t len, const char *source,
                                  stl_mesh_t *m, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  stl_lexer_t x = {.p = (const char *)data, .end = (const char *)data + len, .source = source,
                   .line = 1};
  size_t cap = 0;
  TSR_TRY(stl_expect(&x, "solid", err));
  /* the name: the rest of the line */
  while (x.p < x.end && *x.p != '\n') ++x.p;
  for (;;) {
    const int got = stl_next(&x);
    TSR_CHECK(got, TSR_ERR_INVALID, "%s: line %ld: the file ends without \"endsolid\"", source,
              x.line);
    if (stl_is(&x, "endsolid")) break;
    TSR_CHECK(stl_is(&x, "facet"), TSR_ERR_INVALID,
              "%s: line %ld: expected \"facet\" or \"endsolid\", found \"%s\"", source, x.line,
              x.tok);
    if (m->n == cap) {
      TSR_CHECK(cap < STL_MAX_TRIANGLES, TSR_ERR_INVALID,
                "%s: more than %d triangles", source, (int)STL_MAX_TRIANGLES);
      cap = cap ? 2 * cap : 256;
      if (cap > STL_MAX_TRIANGLES) cap = STL_MAX_TRIANGLES;
      double(*t)[3][3] = realloc(m->tri, cap * sizeof *t);
      TSR_CHECK(t, TSR_ERR_NOMEM, "%s: out of memory for %zu triangles", source, cap);
      m->tri = t;
    }
    double normal;
    TSR_TRY(stl_expect(&x, "normal", err));
    for (int a = 0; a < 3; ++a) TSR_TRY(stl_number(&x, &normal, err));
    TSR_TRY(stl_expect(&x, "outer", err));
    TSR_TRY(stl_expect(&x, "loop", err));
    for (int v = 0; v < 3; ++v) {
      TSR_TRY(stl_expect(&x, "vertex", err));
      for (int a = 0; a < 3; ++a) TSR_TRY(stl_number(&x, &m->tri[m->n][v][a], err));
    }
    TSR_TRY(stl_expect(&x, "endloop", err));
    TSR_TRY(stl_expect(&x, "endfacet", err));
    ++m->n;
  }
  /* endsolid [name], then nothing but white space */
  while (x.p < x.end && *x.p != '\n') ++x.p;
  TSR_CHECK(!stl_next(&x), TSR_ERR_INVALID,
            "%s: line %ld: \"%s\" after \"endsolid\"; one solid per file", source, x.line, x.tok);
cleanup:
  return st;
}

tsr_status stl_parse(const uint8_t *data, size_t len, const char *source, stl_mesh_t *out,
                     tsr_error_t *err) {
  tsr_status st = TSR_OK;
  stl_mesh_t m = {0};
  memset(out, 0, sizeof *out);
  const uint32_t count = len >= 84 ? stl_le32(data + 80) : 0;
  if (len >= 84 && (len - 84) % 50 == 0 && (len - 84) / 50 == count) {
    TSR_TRY(stl_parse_binary(data, count, source, &m, err));
  } else {
    size_t i = 0;
    while (i < len && stl_space((char)data[i])) ++i;
    const int solid = len - i >= 5 && strncasecmp((const char *)data + i, "solid", 5) == 0;
    TSR_CHECK(solid, TSR_ERR_INVALID,
              "%s: not an STL file: not binary (%zu bytes, where a binary STL has 84 + 50 x "
              "its triangle count%s) and not ASCII (it does not start with \"solid\")",
              source, len, len >= 84 ? "" : "; it is shorter than the 84-byte header");
    TSR_TRY(stl_parse_ascii(data, len, source, &m, err));
  }
  TSR_CHECK(m.n > 0, TSR_ERR_INVALID, "%s: the mesh has no triangles", source);
  stl_bounds(&m);
  *out = m;
  m.tri = NULL;
cleanup:
  stl_free(&m);
  return st;
}

tsr_status stl_read(const char *path, stl_mesh_t *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char *data = NULL;
  size_t size = 0;
  memset(out, 0, sizeof *out);
  /* an ASCII facet takes some 250 bytes as people write them; the largest mesh read */
  TSR_TRY(tsr_file_read(path, (size_t)STL_MAX_TRIANGLES * 512, "an STL mesh tessera reads", &data,
                        &size, err));
  TSR_TRY(stl_parse((const uint8_t *)data, size, path, out, err));
cleanup:
  free(data);
  return st;
}

/* ---- closedness ---- */

typedef struct stl_vref {
  const double *p; /* the vertex's coordinates */
  size_t at;       /* triangle * 3 + vertex */
} stl_vref_t;

static int stl_vcmp(const void *va, const void *vb) {
  const double *a = ((const stl_vref_t *)va)->p, *b = ((const stl_vref_t *)vb)->p;
  for (int i = 0; i < 3; ++i)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

typedef struct stl_edge {
  size_t a, b; /* vertex ids, directed */
  size_t tri;
} stl_edge_t;

static int stl_ecmp(const void *va, const void *vb) {
  const stl_edge_t *a = va, *b = vb;
  if (a->a != b->a) return a->a < b->a ? -1 : 1;
  if (a->b != b->b) return a->b < b->b ? -1 : 1;
  return a->tri < b->tri ? -1 : a->tri > b->tri;
}

/* The coordinates of an edge's end points, for messages. */
static void stl_edge_ends(const stl_mesh_t *m, const size_t *id, const stl_edge_t *e,
                          const double **pa, const double **pb) {
  *pa = *pb = m->tri[e->tri][0];
  for (int s = 0; s < 3; ++s) {
    if (id[3 * e->tri + (size_t)s] == e->a) *pa = m->tri[e->tri][s];
    if (id[3 * e->tri + (size_t)s] == e->b) *pb = m->tri[e->tri][s];
  }
}

tsr_status stl_check_closed(const stl_mesh_t *m, const char *source, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const size_t nv = 3 * m->n;
  stl_vref_t *v = malloc((nv ? nv : 1) * sizeof *v);
  size_t *id = malloc((nv ? nv : 1) * sizeof *id);
  stl_edge_t *e = malloc((nv ? nv : 1) * sizeof *e);
  TSR_CHECK(v && id && e, TSR_ERR_NOMEM, "%s: out of memory checking %zu triangles", source, m->n);
  for (size_t k = 0; k < nv; ++k) v[k] = (stl_vref_t){m->tri[k / 3][k % 3], k};
  qsort(v, nv, sizeof *v, stl_vcmp);
  size_t ids = 0;
  for (size_t k = 0; k < nv; ++k) {
    if (k > 0 && stl_vcmp(&v[k - 1], &v[k]) != 0) ++ids;
    id[v[k].at] = ids;
  }
  for (size_t t = 0; t < m->n; ++t) {
    const double *p0 = m->tri[t][0], *p1 = m->tri[t][1], *p2 = m->tri[t][2];
    double u[3], w[3], c[3];
    for (int a = 0; a < 3; ++a) u[a] = p1[a] - p0[a], w[a] = p2[a] - p0[a];
    c[0] = u[1] * w[2] - u[2] * w[1];
    c[1] = u[2] * w[0] - u[0] * w[2];
    c[2] = u[0] * w[1] - u[1] * w[0];
    TSR_CHECK(c[0] != 0 || c[1] != 0 || c[2] != 0, TSR_ERR_INVALID,
              "%s: triangle %zu has no area (vertices (%g, %g, %g), (%g, %g, %g), (%g, %g, %g))",
              source, t, p0[0], p0[1], p0[2], p1[0], p1[1], p1[2], p2[0], p2[1], p2[2]);
    for (int s = 0; s < 3; ++s)
      e[3 * t + (size_t)s] = (stl_edge_t){id[3 * t + (size_t)s], id[3 * t + (size_t)(s + 1) % 3], t};
  }
  qsort(e, nv, sizeof *e, stl_ecmp);
  /* first an edge used twice the same way (a flipped triangle, more than two triangles at an
     edge), then an edge without its reverse (a hole): a flipped triangle leaves both */
  for (size_t k = 1; k < nv; ++k) {
    const double *pa, *pb;
    stl_edge_ends(m, id, &e[k], &pa, &pb);
    TSR_CHECK(e[k - 1].a != e[k].a || e[k - 1].b != e[k].b, TSR_ERR_INVALID,
              "%s: the edge from (%g, %g, %g) to (%g, %g, %g) runs the same way in triangles "
              "%zu and %zu: the mesh is not consistently oriented, or more than two triangles "
              "meet there (it must bound a solid)",
              source, pa[0], pa[1], pa[2], pb[0], pb[1], pb[2], e[k - 1].tri, e[k].tri);
  }
  for (size_t k = 0; k < nv; ++k) {
    const stl_edge_t key = {e[k].b, e[k].a, 0};
    size_t lo = 0, hi = nv; /* the first edge >= (b, a, 0) */
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (stl_ecmp(&e[mid], &key) < 0) lo = mid + 1;
      else hi = mid;
    }
    const double *pa, *pb;
    stl_edge_ends(m, id, &e[k], &pa, &pb);
    TSR_CHECK(lo < nv && e[lo].a == key.a && e[lo].b == key.b, TSR_ERR_INVALID,
              "%s: the edge from (%g, %g, %g) to (%g, %g, %g) of triangle %zu has no triangle "
              "on its other side: the mesh is not closed (it must bound a solid)",
              source, pa[0], pa[1], pa[2], pb[0], pb[1], pb[2], e[k].tri);
  }
cleanup:
  free(v);
  free(id);
  free(e);
  return st;
}

void stl_place(stl_mesh_t *m, double scale, const double rotate[3], const double offset[3]) {
  double r[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (int axis = 0; axis < 3; ++axis) { /* r = R_axis r */
    const double t = rotate[axis] * (3.14159265358979323846 / 180.0), c = cos(t), s = sin(t);
    double q[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, n[3][3];
    const int i = (axis + 1) % 3, j = (axis + 2) % 3;
    q[i][i] = c;
    q[i][j] = -s;
    q[j][i] = s;
    q[j][j] = c;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) n[a][b] = q[a][0] * r[0][b] + q[a][1] * r[1][b] + q[a][2] * r[2][b];
    memcpy(r, n, sizeof r);
  }
  for (size_t k = 0; k < m->n; ++k)
    for (int v = 0; v < 3; ++v) {
      double p[3];
      for (int a = 0; a < 3; ++a) p[a] = scale * m->tri[k][v][a];
      for (int a = 0; a < 3; ++a)
        m->tri[k][v][a] = offset[a] + r[a][0] * p[0] + r[a][1] * p[1] + r[a][2] * p[2];
    }
  stl_bounds(m);
}
