/* sim_surface: the surfaces modules publish (module_def_t.surfaces: a named body's
 * surface data), gathered on rank 0 and written (sim_output.h, sim_write_surfaces). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "tsr_size.h"
#include "sim_output.h"
#include "verdict.h"
#include "vtk.h"

/* A surface gathered on rank 0, its points in the order of their cells. */
typedef struct sim_surface {
  const module_surface_t *s;
  module_points_t p;   /* every rank's points (rank 0) */
  int64_t *order;      /* points by cell */
  double length;       /* output units of a cell's edge */
  double factor[MODULE_MAX_SURFACE_VALUES];
  int first[MODULE_MAX_SURFACE_VALUES]; /* a value's first column among width */
} sim_surface_t;

/* The ranks' points into g->p on rank 0 (others: their own). */
static tsr_status sim_surface_gather(MPI_Comm comm, module_points_t *mine, module_points_t *all,
                                     tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank, size, n = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int *counts = calloc((size_t)size * 4, sizeof *counts), *displs = counts + size;
  int *c3 = counts + 2 * size, *d3 = counts + 3 * size;
  if (!counts) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  if (st == TSR_OK && !tsr_size_to_int((size_t)mine->n * (size_t)(mine->width > 3 ? mine->width : 3), &n))
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                       "%lld surface points are more than one message carries",
                       (long long)mine->n);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  n = (int)mine->n;
  TSR_MPI(MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, comm));
  int64_t total = 0;
  for (int r = 0; rank == 0 && r < size; ++r) {
    displs[r] = (int)total;
    total += counts[r];
  }
  if (rank == 0 && total * (mine->width > 3 ? mine->width : 3) > INT_MAX)
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                       "%lld surface points are more than one message carries", (long long)total);
  *all = (module_points_t){.width = mine->width, .n = rank == 0 ? total : 0};
  if (st == TSR_OK && rank == 0) {
    all->cell = malloc((size_t)(total + 1) * sizeof *all->cell);
    all->xyz = malloc((size_t)(3 * total + 1) * sizeof *all->xyz);
    all->values = malloc((size_t)(mine->width * total + 1) * sizeof *all->values);
    if (!all->cell || !all->xyz || !all->values)
      st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  }
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_MPI(MPI_Gatherv(mine->cell, n, MPI_INT64_T, all->cell, counts, displs, MPI_INT64_T, 0, comm));
  for (int r = 0; rank == 0 && r < size; ++r) c3[r] = 3 * counts[r], d3[r] = 3 * displs[r];
  TSR_MPI(MPI_Gatherv(mine->xyz, 3 * n, MPI_DOUBLE, all->xyz, c3, d3, MPI_DOUBLE, 0, comm));
  for (int r = 0; rank == 0 && r < size; ++r)
    c3[r] = mine->width * counts[r], d3[r] = mine->width * displs[r];
  TSR_MPI(MPI_Gatherv(mine->values, mine->width * n, MPI_DOUBLE, all->values, c3, d3, MPI_DOUBLE,
                      0, comm));
cleanup:
  free(counts);
  return st;
}

static const int64_t *sim_sort_cells;
static int sim_cmp_cell(const void *a, const void *b) {
  const int64_t x = sim_sort_cells[*(const int64_t *)a], y = sim_sort_cells[*(const int64_t *)b];
  return x < y ? -1 : x > y;
}

static const double *sim_sort_angle;
static int sim_cmp_angle(const void *a, const void *b) {
  const int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
  if (sim_sort_angle[i] != sim_sort_angle[j]) return sim_sort_angle[i] < sim_sort_angle[j] ? -1 : 1;
  return sim_cmp_cell(a, b);
}

/* A value's columns: its name, or <name>_x, _y, _z. */
static void sim_surface_column(const module_surface_t *s, int v, int a, char *out, size_t cap) {
  if (s->components[v] == 1) snprintf(out, cap, "%s", s->values[v]);
  else snprintf(out, cap, "%s_%c", s->values[v], "xyz"[a]);
}

/* surface_<name>_<step>[_mesh].vtp: the points (or the triangles, each with the values
 * of the point nearest its centroid: map[t]) in output units. */
static tsr_status sim_surface_vtp(const sim_surface_t *g, const char *path, const int64_t *map,
                                  tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const module_surface_t *s = g->s;
  const bool mesh = map != NULL;
  const int64_t n = mesh ? (int64_t)s->ntriangles : g->p.n, np = mesh ? 3 * n : n;
  double *xyz = malloc((size_t)(3 * np + 1) * sizeof *xyz);
  double *vals = malloc((size_t)(g->p.width * n + 1) * sizeof *vals);
  int64_t *tri = mesh ? malloc((size_t)(3 * n + 1) * sizeof *tri) : NULL;
  vtk_array_t arrays[MODULE_MAX_SURFACE_VALUES];
  TSR_CHECK(xyz && vals && (!mesh || tri), TSR_ERR_NOMEM, "out of memory writing %s", path);
  for (int64_t k = 0; k < np; ++k)
    for (int a = 0; a < 3; ++a)
      xyz[3 * k + a] = g->length * (mesh ? s->triangles[3 * k + a] : g->p.xyz[3 * g->order[k] + a]);
  for (int64_t k = 0; mesh && k < 3 * n; ++k) tri[k] = k;
  for (int v = 0; v < s->nvalues; ++v) {
    double *d = vals + (size_t)n * (size_t)g->first[v];
    const int c = s->components[v];
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = mesh ? map[k] : g->order[k];
      for (int a = 0; a < c; ++a)
        d[c * k + a] = g->factor[v] * g->p.values[(size_t)g->p.width * (size_t)i +
                                                  (size_t)(g->first[v] + a)];
    }
    arrays[v] = (vtk_array_t){.name = s->values[v], .type = VTK_FLOAT64, .components = c, .data = d};
  }
  st = vtk_write_polydata(path, xyz, np, tri, mesh ? n : 0, arrays, s->nvalues, err);
cleanup:
  free(xyz);
  free(vals);
  free(tri);
  return st;
}

/* The point nearest each triangle's centroid: the cells around it, ring by ring, and one
 * ring more once one is found (a point of the next ring may lie nearer). */
static tsr_status sim_surface_map(const sim_surface_t *g, const int64_t cells[3], int64_t *map,
                                  tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const module_surface_t *s = g->s;
  int64_t *sorted = malloc((size_t)(g->p.n + 1) * sizeof *sorted);
  TSR_CHECK(sorted, TSR_ERR_NOMEM, "out of memory mapping a surface onto its triangles");
  for (int64_t k = 0; k < g->p.n; ++k) sorted[k] = g->p.cell[g->order[k]];
  for (size_t t = 0; t < s->ntriangles; ++t) {
    double c[3] = {0, 0, 0}, best = INFINITY;
    int64_t at[3];
    for (int a = 0; a < 3; ++a) {
      for (int v = 0; v < 3; ++v) c[a] += s->triangles[9 * t + 3 * (size_t)v + (size_t)a] / 3.0;
      at[a] = (int64_t)floor(c[a]);
    }
    map[t] = 0;
    for (int r = 0, stop = 64; r <= stop; ++r)
      for (int64_t dz = -r; dz <= r; ++dz)
        for (int64_t dy = -r; dy <= r; ++dy)
          for (int64_t dx = -r; dx <= r; ++dx) {
            if (llabs(dx) != r && llabs(dy) != r && llabs(dz) != r) continue; /* the ring */
            const int64_t p[3] = {at[0] + dx, at[1] + dy, at[2] + dz};
            if (p[0] < 0 || p[1] < 0 || p[2] < 0 || p[0] >= cells[0] || p[1] >= cells[1] ||
                p[2] >= cells[2])
              continue;
            const int64_t key = (p[2] * cells[1] + p[1]) * cells[0] + p[0];
            int64_t lo = 0, hi = g->p.n;
            while (lo < hi) {
              const int64_t mid = (lo + hi) / 2;
              if (sorted[mid] < key) lo = mid + 1;
              else hi = mid;
            }
            if (lo >= g->p.n || sorted[lo] != key) continue;
            const double *x = g->p.xyz + 3 * g->order[lo];
            const double d = (x[0] - c[0]) * (x[0] - c[0]) + (x[1] - c[1]) * (x[1] - c[1]) +
                             (x[2] - c[2]) * (x[2] - c[2]);
            if (d < best) best = d, map[t] = g->order[lo];
            if (stop == 64) stop = r + 1;
          }
  }
cleanup:
  free(sorted);
  return st;
}

/* surface_<name>_<step>.png: the values the surface marks for plotting against the
 * angle, the points in the order by[n] (angle[] by point). */
static tsr_status sim_surface_plot(const sim_surface_t *g, output_folder_t *out, int64_t step,
                                   const int64_t *by, const double *angle, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const module_surface_t *s = g->s;
  const int64_t n = g->p.n;
  char path[OUTPUT_PATH_MAX];
  const double *series[MODULE_MAX_SURFACE_VALUES];
  const char *names[MODULE_MAX_SURFACE_VALUES];
  double *ys = malloc((size_t)(MODULE_MAX_SURFACE_VALUES * n + 1) * sizeof *ys);
  double *xs = malloc((size_t)(n + 1) * sizeof *xs);
  int ns = 0;
  TSR_CHECK(ys && xs, TSR_ERR_NOMEM, "out of memory for a surface's plot");
  for (int64_t j = 0; j < n; ++j) xs[j] = angle[by[j]];
  for (int v = 0; v < s->nvalues; ++v) {
    if (!s->plot[v] || s->components[v] != 1) continue;
    double *y = ys + (size_t)ns * (size_t)n;
    for (int64_t j = 0; j < n; ++j)
      y[j] = g->factor[v] * g->p.values[(size_t)g->p.width * (size_t)by[j] + (size_t)g->first[v]];
    series[ns] = y;
    names[ns++] = s->values[v];
  }
  if (ns == 0 || n < 2) goto cleanup;
  TSR_TRY(output_folder_file(out, path, sizeof path, err, "surface_%s_%06lld.png", s->name,
                             (long long)step));
  TSR_TRY(image_write_plot(path, &(image_plot_t){.npoints = (int)n, .x = xs, .x_name = "angle",
                                                 .nseries = ns, .y = series, .names = names},
                           err));
cleanup:
  free(ys);
  free(xs);
  return st;
}

/* 2-D: surface_<name>_<step>.csv, the points along the contour (by their angle around
 * the points' centroid, from -180 degrees: the upstream side of a flow along +x), with
 * the angle, the arc length from the first point and the values; and
 * surface_<name>_<step>.png, the plotted values against the angle. */
static tsr_status sim_surface_contour(const sim_surface_t *g, output_folder_t *out,
                                      int64_t step, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const module_surface_t *s = g->s;
  const int64_t n = g->p.n;
  output_file_t f = {.f = NULL};
  char path[OUTPUT_PATH_MAX], column[96];
  double c[2] = {0, 0};
  double *angle = malloc((size_t)(n + 1) * sizeof *angle);
  int64_t *by = malloc((size_t)(n + 1) * sizeof *by);
  TSR_CHECK(angle && by, TSR_ERR_NOMEM, "out of memory for a surface's contour");
  for (int64_t k = 0; k < n; ++k)
    for (int a = 0; a < 2; ++a) c[a] += g->p.xyz[3 * k + a] / (double)n;
  for (int64_t k = 0; k < n; ++k) {
    angle[k] = atan2(g->p.xyz[3 * k + 1] - c[1], g->p.xyz[3 * k] - c[0]) * 180.0 /
               3.14159265358979323846;
    by[k] = k;
  }
  sim_sort_cells = g->p.cell; /* by angle; points of one angle by cell */
  sim_sort_angle = angle;
  qsort(by, (size_t)n, sizeof *by, sim_cmp_angle);
  TSR_TRY(output_folder_file(out, path, sizeof path, err, "surface_%s_%06lld.csv", s->name,
                             (long long)step));
  TSR_TRY(output_file_open(&f, path, err));
  fprintf(f.f, "x,y,angle,arc");
  for (int v = 0; v < s->nvalues; ++v)
    for (int a = 0; a < s->components[v]; ++a) {
      sim_surface_column(s, v, a, column, sizeof column);
      fprintf(f.f, ",%s", column);
    }
  fprintf(f.f, "\n");
  double arc = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double *x = g->p.xyz + 3 * by[j];
    if (j > 0) {
      const double *p = g->p.xyz + 3 * by[j - 1];
      arc += g->length * hypot(x[0] - p[0], x[1] - p[1]);
    }
    fprintf(f.f, "%.17g,%.17g,%.17g,%.17g", g->length * x[0], g->length * x[1], angle[by[j]], arc);
    for (int v = 0; v < s->nvalues; ++v)
      for (int a = 0; a < s->components[v]; ++a)
        fprintf(f.f, ",%.17g", g->factor[v] * g->p.values[(size_t)g->p.width * (size_t)by[j] +
                                                          (size_t)(g->first[v] + a)]);
    fprintf(f.f, "\n");
  }
  TSR_TRY(output_file_commit(&f, err));
  TSR_TRY(sim_surface_plot(g, out, step, by, angle, err));
cleanup:
  output_file_discard(&f);
  free(angle);
  free(by);
  return st;
}

/* Rank 0: the files of a gathered surface. */
static tsr_status sim_surface_files(sim_t *sim, output_folder_t *out, int64_t step,
                                    sim_surface_t *g, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const module_surface_t *s = g->s;
  const patch_options_t *d = patch_options(sim_patch(sim));
  char path[OUTPUT_PATH_MAX];
  int64_t *map = NULL;
  g->order = malloc((size_t)(g->p.n + 1) * sizeof *g->order);
  TSR_CHECK(g->order, TSR_ERR_NOMEM, "out of memory for a surface");
  for (int64_t k = 0; k < g->p.n; ++k) g->order[k] = k;
  sim_sort_cells = g->p.cell;
  qsort(g->order, (size_t)g->p.n, sizeof *g->order, sim_cmp_cell);
  TSR_TRY(output_folder_file(out, path, sizeof path, err, "surface_%s_%06lld.vtp", s->name,
                             (long long)step));
  TSR_TRY(sim_surface_vtp(g, path, NULL, err));
  if (s->ntriangles > 0 && g->p.n > 0) {
    map = malloc(s->ntriangles * sizeof *map);
    TSR_CHECK(map, TSR_ERR_NOMEM, "out of memory mapping a surface onto its triangles");
    TSR_TRY(sim_surface_map(g, d->cells, map, err));
    TSR_TRY(output_folder_file(out, path, sizeof path, err, "surface_%s_%06lld_mesh.vtp",
                               s->name, (long long)step));
    TSR_TRY(sim_surface_vtp(g, path, map, err));
  }
  if (d->cells[2] == 1 && g->p.n > 0) TSR_TRY(sim_surface_contour(g, out, step, err));
cleanup:
  free(map);
  return st;
}

/* Surface k of module m: its points from every rank, then rank 0's files. */
static tsr_status sim_surface_one(sim_t *sim, output_folder_t *out, int64_t step,
                                  const module_t *m, int k, const module_surface_t *s,
                                  tsr_error_t *err) {
  tsr_status st = TSR_OK;
  MPI_Comm comm = sim_comm(sim);
  int rank;
  MPI_Comm_rank(comm, &rank);
  sim_surface_t g = {.s = s, .length = units_output_factor(sim_units(sim), UNITS_LENGTH)};
  module_points_t mine = {.width = 0};
  for (int v = 0; v < s->nvalues; ++v) {
    g.first[v] = mine.width;
    mine.width += s->components[v];
    g.factor[v] = units_output_factor(sim_units(sim), s->dims[v]);
  }
  st = m->def->surface_points(m->state, sim, k, &mine, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_TRY(sim_surface_gather(comm, &mine, &g.p, err));
  if (rank == 0) st = sim_surface_files(sim, out, step, &g, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
cleanup:
  module_points_free(&mine);
  module_points_free(&g.p);
  free(g.order);
  return st;
}

tsr_status sim_write_surfaces(sim_t *sim, output_folder_t *out, int64_t step, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int n = 0;
  const module_t *mods = sim_modules(sim, &n);
  for (int m = 0; m < n; ++m) {
    if (!mods[m].def->surfaces || !mods[m].def->surface_points) continue;
    module_surface_t list[MODULE_MAX_SURFACES];
    const int ns = mods[m].def->surfaces(mods[m].state, list, MODULE_MAX_SURFACES);
    for (int k = 0; k < ns; ++k) TSR_TRY(sim_surface_one(sim, out, step, &mods[m], k, &list[k], err));
  }
cleanup:
  return st;
}
