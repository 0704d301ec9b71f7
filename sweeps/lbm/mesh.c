#include "mesh.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loaded.h"
#include "stl.h"

struct geometry_mesh {
  stl_mesh_t stl;
  double y0, z0;        /* the bins' origin: the bounds' lower corner in y and z */
  long ny, nz;          /* bins of one cell */
  size_t *start;        /* bin b's triangles: index[start[b] .. start[b + 1]) */
  size_t *index;
};

static void mesh_free(void *vm) {
  struct geometry_mesh *m = vm;
  if (!m) return;
  stl_free(&m->stl);
  free(m->start);
  free(m->index);
  free(m);
}

static const double MESH_SHIFT_Y = 3.14159265358979e-7, MESH_SHIFT_Z = 2.71828182845905e-7;

/* The bins a range [lo, hi] of y (z) covers, clamped. */
static void mesh_bin_range(double lo, double hi, double origin, long n, long *b0, long *b1) {
  double a = floor(lo - origin), b = floor(hi - origin);
  *b0 = a < 0 ? 0 : a >= (double)n ? n - 1 : (long)a;
  *b1 = b < 0 ? 0 : b >= (double)n ? n - 1 : (long)b;
}

static tsr_status mesh_bin(struct geometry_mesh *m, const char *path, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const stl_mesh_t *s = &m->stl;
  m->y0 = floor(s->lo[1]);
  m->z0 = floor(s->lo[2]);
  const double ey = floor(s->hi[1]) - m->y0 + 1, ez = floor(s->hi[2]) - m->z0 + 1;
  TSR_CHECK(ey * ez <= 1e8, TSR_ERR_INVALID,
            "%s: the placed mesh spans %g x %g cells in y and z; at most 1e8 are allowed", path,
            ey, ez);
  m->ny = (long)ey;
  m->nz = (long)ez;
  const size_t nb = (size_t)m->ny * (size_t)m->nz;
  m->start = calloc(nb + 1, sizeof *m->start);
  TSR_CHECK(m->start, TSR_ERR_NOMEM, "%s: out of memory for the mesh's bins", path);
  for (int pass = 0; pass < 2; ++pass) { /* count, then fill */
    for (size_t k = 0; k < s->n; ++k) {
      double lo[2], hi[2];
      for (int a = 0; a < 2; ++a) {
        lo[a] = fmin(fmin(s->tri[k][0][a + 1], s->tri[k][1][a + 1]), s->tri[k][2][a + 1]);
        hi[a] = fmax(fmax(s->tri[k][0][a + 1], s->tri[k][1][a + 1]), s->tri[k][2][a + 1]);
      }
      long y0, y1, z0, z1;
      mesh_bin_range(lo[0], hi[0], m->y0, m->ny, &y0, &y1);
      mesh_bin_range(lo[1], hi[1], m->z0, m->nz, &z0, &z1);
      for (long z = z0; z <= z1; ++z)
        for (long y = y0; y <= y1; ++y) {
          const size_t b = (size_t)z * (size_t)m->ny + (size_t)y;
          if (pass == 0) ++m->start[b + 1];
          else m->index[m->start[b]++] = k;
        }
    }
    if (pass == 0) {
      for (size_t b = 0; b < nb; ++b) m->start[b + 1] += m->start[b];
      m->index = malloc((m->start[nb] ? m->start[nb] : 1) * sizeof *m->index);
      TSR_CHECK(m->index, TSR_ERR_NOMEM, "%s: out of memory for the mesh's bins", path);
    } else { /* start[b] was moved to the end of bin b: back by one bin */
      memmove(m->start + 1, m->start, nb * sizeof *m->start);
      m->start[0] = 0;
    }
  }
cleanup:
  return st;
}

tsr_status geometry_mesh_load(const char *path, double scale, const double rotate[3],
                              const double offset[3], const geometry_mesh_t **out,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  struct {
    char path[2048];
    double scale, rotate[3], offset[3];
  } key;
  memset(&key, 0, sizeof key);
  snprintf(key.path, sizeof key.path, "%s", path);
  key.scale = scale;
  memcpy(key.rotate, rotate, sizeof key.rotate);
  memcpy(key.offset, offset, sizeof key.offset);
  struct geometry_mesh *m = loaded_find(&key, sizeof key);
  if (m) {
    *out = m;
    return st;
  }
  m = calloc(1, sizeof *m);
  TSR_CHECK(m, TSR_ERR_NOMEM, "%s: out of memory", path);
  TSR_TRY(stl_read(path, &m->stl, err));
  TSR_TRY(stl_check_closed(&m->stl, path, err));
  stl_place(&m->stl, scale, rotate, offset);
  TSR_TRY(mesh_bin(m, path, err));
  TSR_TRY(loaded_keep(&key, sizeof key, m, mesh_free, err));
  *out = m;
  m = NULL;
cleanup:
  if (m) mesh_free(m);
  return st;
}

bool geometry_mesh_inside(const geometry_mesh_t *m, const double p[3]) {
  const stl_mesh_t *s = &m->stl;
  if (p[0] > s->hi[0] || p[1] < s->lo[1] || p[1] > s->hi[1] || p[2] < s->lo[2] || p[2] > s->hi[2])
    return false;
  const double y = p[1] + MESH_SHIFT_Y, z = p[2] + MESH_SHIFT_Z;
  long by, bz, unused;
  mesh_bin_range(y, y, m->y0, m->ny, &by, &unused);
  mesh_bin_range(z, z, m->z0, m->nz, &bz, &unused);
  const size_t b = (size_t)bz * (size_t)m->ny + (size_t)by;
  int crossings = 0;
  for (size_t j = m->start[b]; j < m->start[b + 1]; ++j) {
    double(*const t)[3] = s->tri[m->index[j]];
    /* (y, z) in the triangle's projection: the signs of the three edge functions agree */
    double w[3];
    for (int e = 0; e < 3; ++e) {
      const double *a = t[e], *c = t[(e + 1) % 3];
      w[e] = (c[1] - a[1]) * (z - a[2]) - (c[2] - a[2]) * (y - a[1]);
    }
    const bool pos = w[0] > 0 && w[1] > 0 && w[2] > 0, neg = w[0] < 0 && w[1] < 0 && w[2] < 0;
    if (!pos && !neg) continue;
    /* x of the triangle's plane at (y, z), by barycentric weights */
    const double sum = w[0] + w[1] + w[2];
    const double x = (w[1] * t[0][0] + w[2] * t[1][0] + w[0] * t[2][0]) / sum;
    if (x > p[0]) ++crossings;
  }
  return crossings % 2 == 1;
}

double geometry_mesh_entry(const geometry_mesh_t *m, const double p[3], const double d[3]) {
  const stl_mesh_t *s = &m->stl;
  long y0, y1, z0, z1;
  mesh_bin_range(fmin(p[1], p[1] + d[1]), fmax(p[1], p[1] + d[1]), m->y0, m->ny, &y0, &y1);
  mesh_bin_range(fmin(p[2], p[2] + d[2]), fmax(p[2], p[2] + d[2]), m->z0, m->nz, &z0, &z1);
  double best = 2.0;
  for (long bz = z0; bz <= z1; ++bz)
    for (long by = y0; by <= y1; ++by) {
      const size_t b = (size_t)bz * (size_t)m->ny + (size_t)by;
      for (size_t j = m->start[b]; j < m->start[b + 1]; ++j) {
        double(*const t)[3] = s->tri[m->index[j]];
        double e1[3], e2[3], h[3], q[3], r[3];
        for (int a = 0; a < 3; ++a) e1[a] = t[1][a] - t[0][a], e2[a] = t[2][a] - t[0][a];
        h[0] = d[1] * e2[2] - d[2] * e2[1];
        h[1] = d[2] * e2[0] - d[0] * e2[2];
        h[2] = d[0] * e2[1] - d[1] * e2[0];
        const double det = e1[0] * h[0] + e1[1] * h[1] + e1[2] * h[2];
        if (det == 0.0) continue;
        const double inv = 1.0 / det;
        for (int a = 0; a < 3; ++a) r[a] = p[a] - t[0][a];
        const double u = inv * (r[0] * h[0] + r[1] * h[1] + r[2] * h[2]);
        if (u < 0.0 || u > 1.0) continue;
        q[0] = r[1] * e1[2] - r[2] * e1[1];
        q[1] = r[2] * e1[0] - r[0] * e1[2];
        q[2] = r[0] * e1[1] - r[1] * e1[0];
        const double v = inv * (d[0] * q[0] + d[1] * q[1] + d[2] * q[2]);
        if (v < 0.0 || u + v > 1.0) continue;
        const double tt = inv * (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]);
        if (tt >= 0.0 && tt <= 1.0 && tt < best) best = tt;
      }
    }
  return best;
}

static double mesh_dot(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* The point of triangle t nearest p, into q (Ericson, Real-Time Collision Detection,
 * 5.1.5: by the Voronoi regions of the vertices, edges and face). */
static void mesh_closest(double (*t)[3], const double p[3], double q[3]) {
  double ab[3], ac[3], ap[3], bp[3], cp[3];
  for (int a = 0; a < 3; ++a)
    ab[a] = t[1][a] - t[0][a], ac[a] = t[2][a] - t[0][a], ap[a] = p[a] - t[0][a],
    bp[a] = p[a] - t[1][a], cp[a] = p[a] - t[2][a];
  const double d1 = mesh_dot(ab, ap), d2 = mesh_dot(ac, ap), d3 = mesh_dot(ab, bp),
               d4 = mesh_dot(ac, bp), d5 = mesh_dot(ab, cp), d6 = mesh_dot(ac, cp);
  const double va = d3 * d6 - d5 * d4, vb = d5 * d2 - d1 * d6, vc = d1 * d4 - d3 * d2;
  double v = 0, w = 0;
  if (d1 <= 0 && d2 <= 0) v = w = 0;                                   /* vertex a */
  else if (d3 >= 0 && d4 <= d3) v = 1, w = 0;                          /* vertex b */
  else if (d6 >= 0 && d5 <= d6) v = 0, w = 1;                          /* vertex c */
  else if (vc <= 0 && d1 >= 0 && d3 <= 0) v = d1 / (d1 - d3), w = 0;   /* edge ab */
  else if (vb <= 0 && d2 >= 0 && d6 <= 0) v = 0, w = d2 / (d2 - d6);   /* edge ac */
  else if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {                  /* edge bc */
    w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    v = 1 - w;
  } else { /* the face */
    const double den = 1.0 / (va + vb + vc);
    v = vb * den, w = vc * den;
  }
  for (int a = 0; a < 3; ++a) q[a] = t[0][a] + v * ab[a] + w * ac[a];
}

bool geometry_mesh_normal(const geometry_mesh_t *m, const double p[3], double n[3]) {
  const stl_mesh_t *s = &m->stl;
  long y0, y1, z0, z1;
  mesh_bin_range(p[1] - 4, p[1] + 4, m->y0, m->ny, &y0, &y1);
  mesh_bin_range(p[2] - 4, p[2] + 4, m->z0, m->nz, &z0, &z1);
  double best = 16.0; /* within 4 cells */
  bool found = false;
  for (long bz = z0; bz <= z1; ++bz)
    for (long by = y0; by <= y1; ++by) {
      const size_t b = (size_t)bz * (size_t)m->ny + (size_t)by;
      for (size_t j = m->start[b]; j < m->start[b + 1]; ++j) {
        double(*const t)[3] = s->tri[m->index[j]];
        double q[3], d[3], e1[3], e2[3], c[3];
        mesh_closest(t, p, q);
        for (int a = 0; a < 3; ++a) d[a] = p[a] - q[a];
        const double d2 = mesh_dot(d, d);
        if (d2 >= best) continue;
        for (int a = 0; a < 3; ++a) e1[a] = t[1][a] - t[0][a], e2[a] = t[2][a] - t[0][a];
        c[0] = e1[1] * e2[2] - e1[2] * e2[1];
        c[1] = e1[2] * e2[0] - e1[0] * e2[2];
        c[2] = e1[0] * e2[1] - e1[1] * e2[0];
        const double len = sqrt(mesh_dot(c, c)), sign = mesh_dot(c, d) < 0 ? -1.0 : 1.0;
        if (len == 0) continue;
        for (int a = 0; a < 3; ++a) n[a] = sign * c[a] / len;
        best = d2;
        found = true;
      }
    }
  return found;
}

void geometry_mesh_bounds(const geometry_mesh_t *m, double lo[3], double hi[3]) {
  memcpy(lo, m->stl.lo, 3 * sizeof *lo);
  memcpy(hi, m->stl.hi, 3 * sizeof *hi);
}

size_t geometry_mesh_triangles(const geometry_mesh_t *m) { return m->stl.n; }
const double *geometry_mesh_vertices(const geometry_mesh_t *m) { return &m->stl.tri[0][0][0]; }
