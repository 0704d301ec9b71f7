/* sim_output: the output writers of a simulation (sim.h): VTK, series.csv, probes, PNG
 * slices, and their run state. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_output.h"

#include "image.h"
#include "series.h"
#include "tsr_size.h"
#include "verdict.h"
#include "vtk.h"
#include "vtk_image.h"

enum { SIM_SERIES_NAME_MAX = 80 };


struct sim_output {
  sim_t *sim;         /* borrowed */
  int64_t *vtk_steps; /* output steps written so far */
  vtk_image_buffers_t image; /* the one-file VTK writer's buffers */
  double *sample;            /* its block's values as doubles (float32 and byte arrays) */
  size_t sample_cap;
  int64_t nvtk;
  uint8_t *steps_bytes; /* vtk_steps as a checkpoint keeps them (sim_output_state) */
  output_series_t series; /* rank 0: series.csv */
  output_series_t probe_series[SIMULATION_MAX_PROBES]; /* rank 0: probe_<name>.csv */
  char probe_series_name[SIMULATION_MAX_PROBES][SIMULATION_NAME_MAX + 16];
  output_series_t group_series[MODULE_MAX_VALUES]; /* rank 0: series_<group>.csv */
  char group_file[MODULE_MAX_VALUES][SIM_SERIES_NAME_MAX];
  int ngroups;
  struct { /* rank 0: the colour range a slice's first picture fixed (range "first") */
    char name[SIMULATION_NAME_MAX];
    double lo, hi;
  } ranges[SIMULATION_MAX_SLICES];
  int nranges;
  char ranges_text[SIMULATION_MAX_SLICES * (SIMULATION_NAME_MAX + 56) + 1]; /* for checkpoints */
};

tsr_status sim_output_create(sim_t *sim, sim_output_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *out = calloc(1, sizeof **out);
  TSR_CHECK(*out, TSR_ERR_NOMEM, "out of memory for the output writers");
  (*out)->sim = sim;
cleanup:
  return st;
}

void sim_output_free(sim_output_t **w) {
  if (!w || !*w) return;
  sim_output_t *o = *w;
  free(o->vtk_steps);
  vtk_image_buffers_free(&o->image);
  free(o->sample);
  free(o->steps_bytes);
  output_series_free(&o->series);
  for (int i = 0; i < SIMULATION_MAX_PROBES; ++i) output_series_free(&o->probe_series[i]);
  for (int i = 0; i < o->ngroups; ++i) output_series_free(&o->group_series[i]);
  free(o);
  *w = NULL;
}


const char *const sim_output_patterns[SIM_OUTPUT_PATTERNS] = {
    "fields.pvd", "fields_*.vti", "fields_*.pvti", "fields_*/block_*.vti", "probe_*.csv", "slice_*.png",
    "series.csv", "series_*.csv", "checkpoint_*.tsrc", "series.png", "series_*.png",
    "surface_*.vtp", "surface_*.csv", "surface_*.png"};

/* The quantities an output shows: those sel names, in its order, or every quantity of
 * the run in module order (sel->n = 0); names were checked by sim_create. */
static int sim_select(const sim_t *sim, const simulation_quantities_t *sel,
                      const module_quantity_t **out) {
  int n = 0;
  if (sel && sel->n > 0) {
    for (int i = 0; i < sel->n; ++i) {
      const module_quantity_t *q = sim_quantity(sim, sel->names[i]);
      if (q) out[n++] = q;
    }
    return n;
  }
  int nm = 0;
  const module_decl_t *decls = sim_decls(sim, &nm);
  for (int m = 0; m < nm; ++m)
    for (int k = 0; k < decls[m].nquantities; ++k)
      if (!decls[m].quantities[k].on_request) out[n++] = &decls[m].quantities[k];
  return n;
}

/* The quantities' VTK arrays (names, the files' types, components; no data). */
static void sim_vtk_arrays(const module_quantity_t *const *qs, int nq, int precision,
                           vtk_array_t *arrays) {
  for (int k = 0; k < nq; ++k)
    arrays[k] = (vtk_array_t){
        qs[k]->name,
        qs[k]->small_integer ? VTK_UINT8
                             : precision == SIMULATION_VTK_FLOAT32 ? VTK_FLOAT32 : VTK_FLOAT64,
        qs[k]->components, NULL};
}

/* Quantity q on local block id in type t (x fastest, components interleaved) into out;
 * scratch: room for the block's values as doubles where t is not VTK_FLOAT64 (NULL: one
 * is allocated). */
static tsr_status sim_vtk_values(sim_t *sim, const module_quantity_t *q, int32_t id, vtk_type_t t,
                                 void *out, double *scratch, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const size_t n = (size_t)q->components * (size_t)patch_block_cells(patch_block(sim_patch(sim), id));
  double *v = t == VTK_FLOAT64 ? out : scratch ? scratch : malloc(n * sizeof *v);
  TSR_CHECK(v, TSR_ERR_NOMEM, "out of memory writing VTK");
  TSR_TRY(sim_sample(sim, q, id, v, err));
  if (t == VTK_FLOAT32)
    for (size_t i = 0; i < n; ++i) ((float *)out)[i] = (float)v[i];
  if (t == VTK_UINT8) /* small integers 0..255 */
    for (size_t i = 0; i < n; ++i) ((uint8_t *)out)[i] = (uint8_t)v[i];
cleanup:
  if (v != out && v != scratch) free(v);
  return st;
}

/* One local block's file of the selected quantities. */
static tsr_status sim_vtk_block(sim_t *sim, int32_t id, const char *folder, int64_t step,
                                const module_quantity_t *const *qs, int nq, int precision,
                                tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const block_info_t *b = patch_block(sim_patch(sim), id);
  const size_t n = (size_t)patch_block_cells(b);
  vtk_array_t arrays[MODULE_MAX * MODULE_MAX_QUANTITIES];
  void *data[MODULE_MAX * MODULE_MAX_QUANTITIES] = {NULL};
  sim_vtk_arrays(qs, nq, precision, arrays);
  for (int k = 0; k < nq; ++k) {
    data[k] = malloc((size_t)qs[k]->components * n * vtk_type_size(arrays[k].type));
    arrays[k].data = data[k];
    TSR_CHECK(data[k], TSR_ERR_NOMEM, "out of memory writing VTK");
    TSR_TRY(sim_vtk_values(sim, qs[k], id, arrays[k].type, data[k], NULL, err));
  }
  vtk_block_t vb = {.spacing = units_output_factor(sim_units(sim), UNITS_LENGTH),
                    .lo = {b->lo[0], b->lo[1], b->lo[2]},
                    .size = {b->size[0], b->size[1], b->size[2]}, .arrays = arrays, .narrays = nq};
  char path[4096];
  vtk_block_path(path, sizeof path, folder, "fields", step, id);
  st = vtk_write_block(path, &vb, err);
cleanup:
  for (int i = 0; i < nq; ++i) free(data[i]);
  return st;
}

/* Every rank its blocks' files, rank 0 the step's .pvti. */
static tsr_status sim_vtk_blocks(sim_t *sim, output_folder_t *out, int64_t step,
                                 const module_quantity_t *const *qs, int nq, int precision,
                                 tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *folder = output_folder_path(out);
  int rank;
  MPI_Comm_rank(sim_comm(sim), &rank);
  int32_t nb = patch_block_count(sim_patch(sim));
  vtk_piece_t *pieces = NULL;
  if (rank == 0) st = vtk_make_step_folder(folder, "fields", step, err);
  TSR_TRY(verdict_reduce(sim_comm(sim), st, 0, err));
  for (int32_t i = 0; st == TSR_OK && i < patch_local_count(sim_patch(sim)); ++i)
    st = sim_vtk_block(sim, patch_local_id(sim_patch(sim), i), folder, step, qs, nq, precision,
                       err);
  TSR_TRY(verdict_reduce(sim_comm(sim), st, 0, err));
  pieces = malloc((size_t)nb * sizeof *pieces);
  if (!pieces) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  for (int32_t id = 0; st == TSR_OK && id < nb; ++id) {
    const block_info_t *b = patch_block(sim_patch(sim), id);
    pieces[id] = (vtk_piece_t){.id = id, .lo = {b->lo[0], b->lo[1], b->lo[2]},
                               .size = {b->size[0], b->size[1], b->size[2]}};
  }
  vtk_array_t arrays[MODULE_MAX * MODULE_MAX_QUANTITIES];
  sim_vtk_arrays(qs, nq, precision, arrays);
  if (st == TSR_OK && rank == 0)
    st = vtk_write_pvti(folder, "fields", step, patch_options(sim_patch(sim))->cells, arrays, nq,
                        pieces, nb, units_output_factor(sim_units(sim), UNITS_LENGTH), err);
  char path[OUTPUT_PATH_MAX];
  for (int32_t id = 0; st == TSR_OK && id < nb; ++id)
    st = output_folder_file(out, path, sizeof path, err, "fields_%06lld/block_%d.vti",
                            (long long)step, (int)id);
  if (st == TSR_OK)
    st = output_folder_file(out, path, sizeof path, err, "fields_%06lld.pvti", (long long)step);
  st = verdict_reduce(sim_comm(sim), st, 0, err);
cleanup:
  free(pieces);
  return st;
}

/* What the image's fill reads: the run, the quantities and their file types. */
typedef struct sim_vtk_fill {
  sim_t *sim;
  const module_quantity_t *const *qs;
  const vtk_array_t *arrays;
  double *scratch; /* a block's values as doubles, before they become floats or bytes */
} sim_vtk_fill_t;

static tsr_status sim_vtk_fill(void *ctx, int array, int local, void *out, tsr_error_t *err) {
  const sim_vtk_fill_t *f = ctx;
  return sim_vtk_values(f->sim, f->qs[array], patch_local_id(sim_patch(f->sim), local),
                        f->arrays[array].type, out, f->scratch, err);
}

/* One file of the whole domain, written by all ranks together (vtk_image.h). */
static tsr_status sim_vtk_one(sim_output_t *w, output_folder_t *out, int64_t step,
                              const module_quantity_t *const *qs, int nq, int precision,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  sim_t *sim = w->sim;
  const patch_t *patch = sim_patch(sim);
  const int32_t nl = patch_local_count(patch);
  vtk_piece_t *local = malloc(((size_t)nl + 1) * sizeof *local);
  st = local ? TSR_OK : tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  TSR_TRY(verdict_reduce(sim_comm(sim), st, 0, err));
  for (int32_t i = 0; i < nl; ++i) {
    const block_info_t *b = patch_block(patch, patch_local_id(patch, i));
    local[i] = (vtk_piece_t){.id = b->id, .lo = {b->lo[0], b->lo[1], b->lo[2]},
                             .size = {b->size[0], b->size[1], b->size[2]}};
  }
  vtk_array_t arrays[MODULE_MAX * MODULE_MAX_QUANTITIES];
  sim_vtk_arrays(qs, nq, precision, arrays);
  char path[OUTPUT_PATH_MAX];
  st = output_folder_file(out, path, sizeof path, err, "fields_%06lld.vti", (long long)step);
  TSR_TRY(verdict_reduce(sim_comm(sim), st, 0, err));
  /* the doubles of the largest block's largest quantity, kept from one output to the
     next (fresh pages cost more than the conversion) */
  size_t need = 0;
  for (int32_t i = 0; i < nl; ++i)
    for (int k = 0; k < nq; ++k) {
      const size_t n = (size_t)qs[k]->components *
                       (size_t)patch_block_cells(patch_block(patch, patch_local_id(patch, i)));
      if (n > need) need = n;
    }
  if (!w->sample || need > w->sample_cap) {
    free(w->sample);
    w->sample = malloc((need + 1) * sizeof *w->sample);
    w->sample_cap = w->sample ? need : 0;
  }
  st = w->sample ? TSR_OK : tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  TSR_TRY(verdict_reduce(sim_comm(sim), st, 0, err));
  sim_vtk_fill_t ctx = {sim, qs, arrays, w->sample};
  st = vtk_write_image(sim_comm(sim), &w->image, path, patch_options(patch)->cells,
                       units_output_factor(sim_units(sim), UNITS_LENGTH), arrays, nq, local, nl,
                       sim_vtk_fill, &ctx, err);
cleanup:
  free(local);
  return st;
}

tsr_status sim_write_vtk(sim_output_t *w, output_folder_t *out, int64_t step,
                         const simulation_options_t *so, tsr_error_t *err) {
  sim_t *sim = w->sim;
  tsr_status st = TSR_OK;
  int rank;
  MPI_Comm_rank(sim_comm(sim), &rank);
  const module_quantity_t *qs[MODULE_MAX * MODULE_MAX_QUANTITIES];
  int nq = sim_select(sim, &so->quantities, qs);
  TSR_TRY(so->vtk_files == SIMULATION_VTK_BLOCKS
              ? sim_vtk_blocks(sim, out, step, qs, nq, so->vtk_precision, err)
              : sim_vtk_one(w, out, step, qs, nq, so->vtk_precision, err));
  int64_t *grown = realloc(w->vtk_steps, (size_t)(w->nvtk + 1) * sizeof *grown);
  if (!grown) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  if (grown) {
    w->vtk_steps = grown;
    w->vtk_steps[w->nvtk++] = step;
  }
  char path[OUTPUT_PATH_MAX];
  if (st == TSR_OK && rank == 0)
    st = vtk_write_pvd(output_folder_path(out), "fields", w->vtk_steps, w->nvtk,
                       units_output_factor(sim_units(sim), UNITS_TIME), err);
  if (st == TSR_OK) st = output_folder_file(out, path, sizeof path, err, "fields.pvd");
  st = verdict_reduce(sim_comm(sim), st, 0, err);
cleanup:
  return st;
}

static output_series_t *sim_series_named(sim_output_t *w, const char *file);

/* The series of group `group` (series_<group>.csv), found or made; NULL when every slot
 * is taken. */
static output_series_t *sim_group_series(sim_output_t *w, const char *group, size_t len) {
  char file[SIM_SERIES_NAME_MAX];
  snprintf(file, sizeof file, "series_%.*s.csv", (int)len, group);
  return sim_series_named(w, file);
}

static output_series_t *sim_series_named(sim_output_t *w, const char *file) {
  for (int g = 0; g < w->ngroups; ++g)
    if (strcmp(w->group_file[g], file) == 0) return &w->group_series[g];
  if (w->ngroups == MODULE_MAX_VALUES) return NULL;
  snprintf(w->group_file[w->ngroups], sizeof w->group_file[0], "%s", file);
  return &w->group_series[w->ngroups++];
}

/* A row "step,time,v..." (after a header of names, the first time). */
static bool sim_series_row(output_series_t *s, int64_t step, double time, const char **names,
                           const double *values, int n, size_t skip) {
  bool ok = true;
  if (s->len == 0) {
    ok = output_series_printf(s, "step,time");
    for (int i = 0; i < n && ok; ++i) ok = output_series_printf(s, ",%s", names[i] + skip);
    ok = ok && output_series_printf(s, "\n");
  }
  ok = ok && output_series_printf(s, "%lld,%.17g", (long long)step, time);
  for (int i = 0; i < n && ok; ++i) ok = output_series_printf(s, ",%.17g", values[i]);
  return ok && output_series_printf(s, "\n");
}

tsr_status sim_write_series(sim_output_t *w, output_folder_t *out, int64_t step, const char **names,
                            const double *values, int n, bool final, tsr_error_t *err) {
  sim_t *sim = w->sim;
  tsr_status st = TSR_OK;
  int rank;
  MPI_Comm_rank(sim_comm(sim), &rank);
  if (rank != 0) goto cleanup;
  output_series_t *s = &w->series;
  const double time = sim_output_time(sim, step);
  bool ok = !names || sim_series_row(s, step, time, names, values, n, 0);
  /* the totals of a group (<group>.<name>, consecutive) also into series_<group>.csv */
  for (int i = 0; names && ok && i < n;) {
    const char *dot = strchr(names[i], '.');
    if (!dot) {
      ++i;
      continue;
    }
    const size_t len = (size_t)(dot - names[i]);
    int j = i + 1;
    while (j < n && strncmp(names[j], names[i], len + 1) == 0) ++j;
    output_series_t *g = sim_group_series(w, names[i], len);
    TSR_CHECK(g, TSR_ERR_INTERNAL, "more than %d series files", MODULE_MAX_VALUES);
    ok = sim_series_row(g, step, time, names + i, values + i, j - i, len + 1);
    i = j;
  }
  TSR_CHECK(ok, TSR_ERR_NOMEM, "out of memory for series.csv");
  TSR_TRY(output_series_flush(s, out, "series.csv", final, err));
  for (int g = 0; g < w->ngroups; ++g)
    TSR_TRY(output_series_flush(&w->group_series[g], out, w->group_file[g], final, err));
  /* the probes' series too, at the end */
  for (int i = 0; final && i < SIMULATION_MAX_PROBES; ++i)
    if (w->probe_series[i].len > 0)
      TSR_TRY(output_series_flush(&w->probe_series[i], out, w->probe_series_name[i], true,
                                  err));
cleanup:
  return st;
}

/* A panel's name: the total's, with its SI unit where the run writes SI units (group: the
 * prefix of the totals of a group's file, "" for series.csv). */
static void sim_plot_name(const sim_t *sim, const char *group, const char *name, char *out,
                          size_t cap) {
  const units_t *u = sim_units(sim);
  char full[SIM_SERIES_NAME_MAX + 64], unit[32] = "";
  snprintf(full, sizeof full, "%s%s%s", group, group[0] ? "." : "", name);
  if (u->on && u->physical_output) units_name(sim_total_dim(sim, full), unit, sizeof unit);
  snprintf(out, cap, unit[0] ? "%s [%s]" : "%s", name, unit);
}

/* Rank 0: the plot of a series' text (CSV: "step,time,<names>" then rows) as `file`:
 * its columns after step and time whose names have no '.' (ungrouped totals) or, with
 * a group, every one (the group's totals), against the time. */
static tsr_status sim_plot_series(const sim_t *sim, output_folder_t *out,
                                  const output_series_t *s, const char *file,
                                  const char *group, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char *text = NULL, *names[IMAGE_PLOT_MAX_SERIES + 2];
  double *cols = NULL;
  int ncol = 0, nrow = 0;
  if (!s->text || s->len == 0) goto cleanup;
  TSR_CHECK(text = malloc(s->len + 1), TSR_ERR_NOMEM, "out of memory plotting %s", file);
  memcpy(text, s->text, s->len);
  text[s->len] = '\0';
  for (const char *c = text; *c; ++c) nrow += *c == '\n';
  char *line = text, *rest = strchr(text, '\n');
  if (!rest) goto cleanup;
  *rest++ = '\0';
  for (char *tok = line; tok && ncol < IMAGE_PLOT_MAX_SERIES + 2;) { /* the header's names */
    names[ncol++] = tok;
    tok = strchr(tok, ',');
    if (tok) *tok++ = '\0';
  }
  TSR_CHECK(cols = malloc((size_t)ncol * (size_t)nrow * sizeof *cols + 1), TSR_ERR_NOMEM,
            "out of memory plotting %s", file);
  int n = 0;
  for (char *l = rest, *next; *l && n < nrow; l = next, ++n) {
    next = l + strcspn(l, "\n");
    if (*next) *next++ = '\0';
    char *p = l;
    for (int k = 0; k < ncol; ++k) {
      cols[(size_t)k * (size_t)nrow + (size_t)n] = strtod(p, &p);
      if (*p == ',') ++p;
    }
  }
  const double *ys[IMAGE_PLOT_MAX_SERIES];
  const char *shown[IMAGE_PLOT_MAX_SERIES];
  char labels[IMAGE_PLOT_MAX_SERIES][96];
  int ns = 0;
  for (int k = 2; k < ncol; ++k)
    if (group[0] || !strchr(names[k], '.')) {
      sim_plot_name(sim, group, names[k], labels[ns], sizeof labels[ns]);
      ys[ns] = cols + (size_t)k * (size_t)nrow, shown[ns] = labels[ns], ++ns;
    }
  if (ns == 0 || n == 0) goto cleanup;
  const units_t *u = sim_units(sim);
  image_plot_t plot = {.npoints = n, .x = cols + nrow, .nseries = ns, .y = ys, .names = shown,
                       .x_name = u->on && u->physical_output ? "t [s]" : "t [time steps]"};
  char path[OUTPUT_PATH_MAX];
  TSR_TRY(output_folder_file(out, path, sizeof path, err, "%s", file));
  TSR_TRY(image_write_plot(path, &plot, err));
cleanup:
  free(cols);
  free(text);
  return st;
}

tsr_status sim_write_series_plots(sim_output_t *w, output_folder_t *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank;
  MPI_Comm_rank(sim_comm(w->sim), &rank);
  if (rank == 0) st = sim_plot_series(w->sim, out, &w->series, "series.png", "", err);
  for (int g = 0; rank == 0 && st == TSR_OK && g < w->ngroups; ++g) {
    char file[SIM_SERIES_NAME_MAX], group[SIM_SERIES_NAME_MAX];
    const int stem = (int)strlen(w->group_file[g]) - 4; /* series_<group>.csv */
    snprintf(file, sizeof file, "%.*s.png", stem, w->group_file[g]);
    snprintf(group, sizeof group, "%.*s", stem - 7, w->group_file[g] + 7);
    st = sim_plot_series(w->sim, out, &w->group_series[g], file, group, err);
  }
  return verdict_reduce(sim_comm(w->sim), st, 0, err);
}

/* The cells a probe reads and their weights: a line's cells (weight 1 each, rounded to
 * the nearest cell), or the 8 cell centres around a point with trilinear weights. Along an
 * axis of one cell, and within half a cell of a non-periodic face (no centre beyond it to
 * interpolate with), the nearest centre's value is taken; across a periodic face the
 * centres wrap. */
static void sim_probe_cells(const simulation_probe_t *probe, const patch_options_t *d,
                            int64_t npts, int64_t (*cell)[3], double *weight) {
  if (!probe->point) {
    int64_t len = npts - 1;
    for (int64_t k = 0; k < npts; ++k) {
      weight[k] = 1.0;
      for (int a = 0; a < 3; ++a) {
        double t = len ? (double)k / (double)len : 0.0;
        double x = (double)probe->from[a] + t * (double)(probe->to[a] - probe->from[a]);
        cell[k][a] = (int64_t)(x + 0.5 - (x < 0));
      }
    }
    return;
  }
  int64_t lo[3], hi[3];
  double t[3];
  for (int a = 0; a < 3; ++a) {
    const int64_t n = d->cells[a];
    const double u = probe->at[a] - 0.5;
    lo[a] = (int64_t)floor(u);
    t[a] = u - (double)lo[a];
    hi[a] = lo[a] + 1;
    if (n == 1) lo[a] = hi[a] = 0;
    else if (d->periodic[a]) {
      lo[a] = (lo[a] % n + n) % n;
      hi[a] = (hi[a] % n + n) % n;
    } else if (lo[a] < 0) lo[a] = hi[a] = 0;
    else if (hi[a] > n - 1) lo[a] = hi[a] = n - 1;
  }
  for (int k = 0; k < 8; ++k) {
    weight[k] = 1.0;
    for (int a = 0; a < 3; ++a) {
      const bool up = (k >> a) & 1;
      cell[k][a] = up ? hi[a] : lo[a];
      weight[k] *= up ? t[a] : 1.0 - t[a];
    }
  }
}

/* A sample of a probe: its columns (the quantities qs, width values a point), its npts
 * points (cell, weight; count = width * npts values) and their values (vals: this rank's,
 * zero where another rank owns the cell; all: their sum, on rank 0). */
typedef struct sim_probe_sample {
  const module_quantity_t *qs[MODULE_MAX * MODULE_MAX_QUANTITIES];
  int nq, width, count;
  int64_t npts;
  int64_t (*cell)[3];
  double *weight, *vals, *all;
} sim_probe_sample_t;

/* Points a probe reads: the 8 centres around a point, or a line's max |to - from| + 1 cells. */
static int64_t sim_probe_points(const simulation_probe_t *probe) {
  int64_t len = 0;
  for (int a = 0; a < 3 && !probe->point; ++a) {
    int64_t d = probe->to[a] - probe->from[a];
    if (d < 0) d = -d;
    if (d > len) len = d;
  }
  return probe->point ? 8 : len + 1;
}

/* This rank's values of the points in its blocks into ps->vals (each block sampled once). */
static tsr_status sim_probe_sample_blocks(sim_t *sim, sim_probe_sample_t *ps, double *block,
                                          tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (int32_t i = 0; st == TSR_OK && i < patch_local_count(sim_patch(sim)); ++i) {
    int32_t id = patch_local_id(sim_patch(sim), i);
    const block_info_t *b = patch_block(sim_patch(sim), id);
    int col = 0;
    for (int j = 0; j < ps->nq && st == TSR_OK; col += ps->qs[j++]->components) {
      bool sampled = false;
      for (int64_t k = 0; k < ps->npts && st == TSR_OK; ++k) {
        int inside = 1;
        int64_t l[3];
        for (int a = 0; a < 3; ++a) {
          l[a] = ps->cell[k][a] - b->lo[a];
          inside = inside && l[a] >= 0 && l[a] < b->size[a];
        }
        if (!inside) continue;
        if (!sampled) st = sim_sample(sim, ps->qs[j], id, block, err);
        sampled = true;
        int64_t c = (l[2] * b->size[1] + l[1]) * b->size[0] + l[0];
        for (int a = 0; a < ps->qs[j]->components; ++a)
          ps->vals[(size_t)ps->width * (size_t)k + (size_t)col + (size_t)a] =
              block[(size_t)ps->qs[j]->components * (size_t)c + (size_t)a];
      }
    }
  }
  return st;
}

/* Rank 0: a row of probe_<name>.csv (its header first), then the file rewritten. */
static tsr_status sim_probe_series_row(sim_output_t *w, output_folder_t *out,
                                       const simulation_probe_t *probe, int index, int64_t step,
                                       const sim_probe_sample_t *ps, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  output_series_t *s = &w->probe_series[index];
  char *name = w->probe_series_name[index];
  bool ok = true;
  if (s->len == 0) {
    snprintf(name, sizeof w->probe_series_name[index], "probe_%s.csv", probe->name);
    ok = output_series_printf(s, "step");
    for (int64_t k = 0; k < (probe->point ? 1 : ps->npts) && ok; ++k)
      for (int j = 0; j < ps->nq && ok; ++j)
        for (int a = 0; a < ps->qs[j]->components && ok; ++a)
          ok = probe->point ? output_series_printf(s, ",%s", ps->qs[j]->columns[a])
                            : output_series_printf(s, ",%s_%lld_%lld_%lld", ps->qs[j]->columns[a],
                                                   (long long)ps->cell[k][0],
                                                   (long long)ps->cell[k][1],
                                                   (long long)ps->cell[k][2]);
    ok = ok && output_series_printf(s, "\n");
  }
  ok = ok && output_series_printf(s, "%lld", (long long)step);
  if (probe->point)
    for (int c = 0; c < ps->width && ok; ++c) {
      double v = 0;
      for (int64_t k = 0; k < ps->npts; ++k)
        v += ps->weight[k] * ps->all[(size_t)ps->width * (size_t)k + (size_t)c];
      ok = output_series_printf(s, ",%.17g", v);
    }
  else
    for (size_t c = 0; c < (size_t)ps->count && ok; ++c)
      ok = output_series_printf(s, ",%.17g", ps->all[c]);
  ok = ok && output_series_printf(s, "\n");
  if (!ok) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory for %s", name);
  if (st == TSR_OK) st = output_series_flush(s, out, name, false, err);
  return st;
}

/* Rank 0: probe_<name>_<step>.csv, columns x,y,z and the quantities', a row per cell. */
static tsr_status sim_probe_table(output_folder_t *out, const simulation_probe_t *probe,
                                  int64_t step, const sim_probe_sample_t *ps, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  output_file_t f = {.f = NULL};
  char path[OUTPUT_PATH_MAX];
  st = output_folder_file(out, path, sizeof path, err, "probe_%s_%06lld.csv", probe->name,
                          (long long)step);
  if (st == TSR_OK) st = output_file_open(&f, path, err);
  if (st == TSR_OK) {
    fprintf(f.f, "x,y,z");
    for (int j = 0; j < ps->nq; ++j)
      for (int a = 0; a < ps->qs[j]->components; ++a) fprintf(f.f, ",%s", ps->qs[j]->columns[a]);
    fprintf(f.f, "\n");
    for (int64_t k = 0; k < ps->npts; ++k) {
      fprintf(f.f, "%lld,%lld,%lld", (long long)ps->cell[k][0], (long long)ps->cell[k][1],
              (long long)ps->cell[k][2]);
      for (int c = 0; c < ps->width; ++c)
        fprintf(f.f, ",%.17g", ps->all[(size_t)ps->width * (size_t)k + (size_t)c]);
      fprintf(f.f, "\n");
    }
    st = output_file_commit(&f, err);
  }
  output_file_discard(&f);
  return st;
}

tsr_status sim_write_probe(sim_output_t *w, output_folder_t *out, const simulation_probe_t *probe,
                           int index, int64_t step, tsr_error_t *err) {
  sim_t *sim = w->sim;
  tsr_status st = TSR_OK;
  int rank;
  MPI_Comm_rank(sim_comm(sim), &rank);
  /* the columns: the probe's quantities' */
  sim_probe_sample_t ps = {.nq = 0};
  ps.nq = sim_select(sim, &probe->quantities, ps.qs);
  for (int j = 0; j < ps.nq; ++j) ps.width += ps.qs[j]->components;
  ps.npts = sim_probe_points(probe);
  double *block = NULL;
  size_t most = 0;
  /* every value of every point in one reduction (every rank sees the probe) */
  TSR_CHECK(index >= 0 && index < SIMULATION_MAX_PROBES, TSR_ERR_INTERNAL,
            "probe '%s': index %d", probe->name, index);
  TSR_CHECK(tsr_size_to_int((size_t)ps.width * (size_t)ps.npts, &ps.count), TSR_ERR_INVALID,
            "probe '%s': %lld points, and %d values each are more than one MPI reduction "
            "carries (%d values)", probe->name, (long long)ps.npts, ps.width, INT_MAX);
  TSR_TRY(sim_largest_block(sim, MODULE_MAX_COMPONENTS, "probes", &most, err));
  ps.vals = calloc((size_t)ps.count + 1, sizeof *ps.vals);
  ps.all = calloc((size_t)ps.count + 1, sizeof *ps.all);
  ps.cell = malloc((size_t)ps.npts * sizeof *ps.cell);
  ps.weight = malloc((size_t)ps.npts * sizeof *ps.weight);
  block = malloc(MODULE_MAX_COMPONENTS * most * sizeof *block);
  if (!ps.vals || !ps.all || !ps.cell || !ps.weight || !block)
    st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  if (st == TSR_OK) sim_probe_cells(probe, patch_options(sim_patch(sim)), ps.npts, ps.cell, ps.weight);
  /* each point's values come from the rank owning its cell; the others add zeros */
  if (st == TSR_OK) st = sim_probe_sample_blocks(sim, &ps, block, err);
  TSR_TRY(verdict_reduce(sim_comm(sim), st, 0, err));
  TSR_MPI(MPI_Reduce(ps.vals, ps.all, ps.count, MPI_DOUBLE, MPI_SUM, 0, sim_comm(sim)));
  if (rank == 0 && probe->series) st = sim_probe_series_row(w, out, probe, index, step, &ps, err);
  else if (rank == 0) st = sim_probe_table(out, probe, step, &ps, err);
  st = verdict_reduce(sim_comm(sim), st, 0, err);
cleanup:
  free(ps.vals);
  free(ps.all);
  free(ps.cell);
  free(ps.weight);
  free(block);
  return st;
}

/* A slice's plane: cells at pos across axis a; h horizontal, v vertical in the picture. */
typedef struct sim_plane {
  int a, h, v;
  int64_t pos;
} sim_plane_t;

/* Cells of block b on the plane p: 0 when the plane misses it. */
static int64_t slice_cells(const block_info_t *b, const sim_plane_t *p) {
  if (p->pos < b->lo[p->a] || p->pos >= b->lo[p->a] + b->size[p->a]) return 0;
  return (int64_t)b->size[p->h] * b->size[p->v];
}

/* The quantity a picture shows (the one named, else the first vector quantity that is not
 * the wall mask, else the first that is not) and the wall mask. */
static void sim_picture_quantities(const sim_t *sim, const char *name,
                                   const module_quantity_t **value,
                                   const module_quantity_t **wall) {
  *value = name && name[0] ? sim_quantity(sim, name) : NULL;
  *wall = NULL;
  bool named = *value != NULL;
  int nm = 0;
  const module_decl_t *decls = sim_decls(sim, &nm);
  for (int m = 0; m < nm; ++m)
    for (int k = 0; k < decls[m].nquantities; ++k) {
      const module_quantity_t *q = &decls[m].quantities[k];
      if (q->wall && !*wall) *wall = q;
      if (!named && !q->wall && !q->on_request && !*value && q->components == 3) *value = q;
    }
  for (int m = 0; m < nm && !*value; ++m)
    for (int k = 0; k < decls[m].nquantities && !*value; ++k)
      if (!decls[m].quantities[k].wall && !decls[m].quantities[k].on_request)
        *value = &decls[m].quantities[k];
}

/* Plane cells of rank's blocks (*mine) and of all blocks (*total). */
static void sim_slice_sizes(const sim_t *sim, int rank, const sim_plane_t *p, int64_t *mine,
                            int64_t *total) {
  *mine = *total = 0;
  for (int32_t id = 0; id < patch_block_count(sim_patch(sim)); ++id) {
    const block_info_t *b = patch_block(sim_patch(sim), id);
    int64_t n = slice_cells(b, p);
    *total += n;
    if (b->rank == rank) *mine += n;
  }
}

/* This rank's plane cells into send in BlockID order: q's value (magnitude), wq's flag. */
static tsr_status sim_slice_pack(sim_t *sim, int rank, const sim_plane_t *p,
                                 const module_quantity_t *q, const module_quantity_t *wq,
                                 double *qv, double *wv, double *send, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const int a = p->a, h = p->h, v = p->v;
  int64_t k = 0;
  for (int32_t id = 0; st == TSR_OK && id < patch_block_count(sim_patch(sim)); ++id) {
    const block_info_t *b = patch_block(sim_patch(sim), id);
    if (b->rank != rank || slice_cells(b, p) == 0) continue;
    st = sim_sample(sim, q, id, qv, err);
    if (st == TSR_OK && wq) st = sim_sample(sim, wq, id, wv, err);
    int64_t c[3];
    c[a] = p->pos - b->lo[a];
    for (c[v] = 0; st == TSR_OK && c[v] < b->size[v]; ++c[v])
      for (c[h] = 0; c[h] < b->size[h]; ++c[h]) {
        int64_t cell = (c[2] * b->size[1] + c[1]) * b->size[0] + c[0];
        double s2 = 0;
        for (int i = 0; i < q->components; ++i) s2 += qv[q->components * cell + i] * qv[q->components * cell + i];
        send[k++] = q->components == 1 ? qv[cell] : sqrt(s2);
        send[k++] = wq && wv[cell] != 0.0 ? 1.0 : 0.0;
      }
  }
  return st;
}

/* Rank 0: the values each rank sends (counts, from the block metadata) and their displs. */
static void sim_slice_gather_counts(const sim_t *sim, int nranks, const sim_plane_t *p, int *counts,
                             int *displs) {
  for (int32_t id = 0; id < patch_block_count(sim_patch(sim)); ++id) {
    const block_info_t *b = patch_block(sim_patch(sim), id);
    counts[b->rank] += (int)(2 * slice_cells(b, p));
  }
  for (int r = 1; r < nranks; ++r) displs[r] = displs[r - 1] + counts[r - 1];
}

/* Rank 0: the gathered values into the picture's value and wall arrays, width cells a row. */
static void sim_slice_unpack(const sim_t *sim, int nranks, const sim_plane_t *p, int64_t width,
                             const double *recv, const int *displs, double *value,
                             uint8_t *wall) {
  for (int r = 0; r < nranks; ++r) {
    int64_t off = displs[r];
    for (int32_t id = 0; id < patch_block_count(sim_patch(sim)); ++id) {
      const block_info_t *b = patch_block(sim_patch(sim), id);
      if (b->rank != r || slice_cells(b, p) == 0) continue;
      for (int64_t j = 0; j < b->size[p->v]; ++j)
        for (int64_t i = 0; i < b->size[p->h]; ++i) {
          int64_t g = (b->lo[p->v] + j) * width + b->lo[p->h] + i;
          value[g] = recv[off++];
          wall[g] = recv[off++] != 0.0;
        }
    }
  }
}

/* The colour range a slice's picture uses (image_options_t): its fixed range; the range
 * the slice's first picture whose values differ fixed ("first": found, or fixed now and
 * said once); none ("each", or every value equal so far). */
static void sim_slice_range(sim_output_t *w, const simulation_slice_t *slice, int64_t step,
                            const image_field_t *field, image_options_t *io) {
  if (slice->range < 0) {
    io->fixed = true, io->lo = slice->range_values[0], io->hi = slice->range_values[1];
    return;
  }
  if (slice->range != SIMULATION_RANGE_FIRST) return;
  for (int i = 0; i < w->nranges; ++i)
    if (strcmp(w->ranges[i].name, slice->name) == 0) {
      io->fixed = true, io->lo = w->ranges[i].lo, io->hi = w->ranges[i].hi;
      return;
    }
  double lo, hi;
  image_field_range(field, &lo, &hi);
  if (!(lo < hi) || w->nranges == SIMULATION_MAX_SLICES) return;
  snprintf(w->ranges[w->nranges].name, sizeof w->ranges[0].name, "%s", slice->name);
  w->ranges[w->nranges].lo = lo, w->ranges[w->nranges++].hi = hi;
  io->fixed = true, io->lo = lo, io->hi = hi;
  printf("slice '%s': colours span [%.6g, %.6g], the range of its picture of step %lld, kept "
         "for the later ones (output.slices[].range sets another)\n", slice->name, lo, hi,
         (long long)step);
}

/* Rank 0: field as slice_<name>_<step>.png: the quantity and its unit over the colour
 * bar, axes in cells (in m with SI output), the plane, step and time under it. */
static tsr_status sim_slice_picture(sim_output_t *w, output_folder_t *out,
                                    const simulation_slice_t *slice, const module_quantity_t *q,
                                    const sim_plane_t *p, int64_t step,
                                    const image_field_t *field, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const units_t *u = sim_units(w->sim);
  const bool si = u->on && u->physical_output;
  const patch_options_t *d = patch_options(sim_patch(w->sim));
  char path[OUTPUT_PATH_MAX], caption[128], label[96], unit[32] = "lattice units";
  static const char axis_name[3] = {'x', 'y', 'z'};
  int n = snprintf(caption, sizeof caption, "%c=%lld step %lld", axis_name[p->a],
                   (long long)p->pos, (long long)step);
  if (si && n > 0)
    snprintf(caption + n, sizeof caption - (size_t)n, " t = %.6g s",
             (double)step * units_output_factor(u, UNITS_TIME));
  if (si) units_name(q->dim, unit, sizeof unit);
  const bool none = q->dim.length == 0 && q->dim.time == 0 && q->dim.mass == 0;
  snprintf(label, sizeof label, q->components == 1 ? "%s%s%s%s" : "|%s|%s%s%s",
           q->components == 3 && strcmp(q->name, "velocity") == 0 ? "u" : q->name,
           none ? "" : " [", none ? "" : unit, none ? "" : "]");
  const double dx = units_output_factor(u, UNITS_LENGTH);
  char hn[16], vn[16];
  snprintf(hn, sizeof hn, "%c%s", axis_name[p->h], si ? " [m]" : "");
  snprintf(vn, sizeof vn, "%c%s", axis_name[p->v], si ? " [m]" : "");
  image_options_t io = image_options_default();
  io.label = label;
  io.caption = caption;
  io.axes = (image_axes_t){.on = true, .h0 = 0, .h1 = (double)d->cells[p->h] * dx, .v0 = 0,
                           .v1 = (double)d->cells[p->v] * dx, .h_name = hn, .v_name = vn};
  sim_slice_range(w, slice, step, field, &io);
  st = output_folder_file(out, path, sizeof path, err, "slice_%s_%06lld.png", slice->name,
                          (long long)step);
  if (st == TSR_OK) st = image_write_png(path, field, &io, err);
  return st;
}

tsr_status sim_write_png(sim_output_t *w, output_folder_t *out, const simulation_slice_t *slice,
                         int64_t step, tsr_error_t *err) {
  sim_t *sim = w->sim;
  tsr_status st = TSR_OK;
  int rank, nranks;
  MPI_Comm_rank(sim_comm(sim), &rank);
  MPI_Comm_size(sim_comm(sim), &nranks);
  const patch_options_t *d = patch_options(sim_patch(sim));
  double *send = NULL, *recv = NULL, *value = NULL, *qv = NULL, *wv = NULL;
  uint8_t *wall = NULL;
  int *counts = NULL, *displs = NULL;
  size_t most = 0;
  const module_quantity_t *q, *wq;
  sim_picture_quantities(sim, slice->quantity, &q, &wq);
  /* the plane: across axis a, h horizontal and v vertical in the picture */
  const int a = slice->axis;
  const sim_plane_t p = {.a = a, .h = a == 0 ? 1 : 0, .v = a == 2 ? 1 : 2, .pos = slice->position};
  TSR_CHECK(q, TSR_ERR_INVALID, "slice '%s': the modules of this run have no quantity to show",
            slice->name);
  TSR_CHECK(a >= 0 && a < 3 && p.pos >= 0 && p.pos < d->cells[a], TSR_ERR_INVALID,
            "slice '%s': axis %d, position %lld is not a plane of the domain", slice->name, a,
            (long long)p.pos);
  int64_t width = d->cells[p.h], height = d->cells[p.v];
  TSR_TRY(sim_largest_block(sim, q->components, "slices", &most, err));

  /* every rank: the value and the wall flag of its blocks' plane cells, in BlockID order */
  int64_t mine = 0, total = 0;
  sim_slice_sizes(sim, rank, &p, &mine, &total);
  send = malloc((size_t)(2 * mine + 1) * sizeof *send);
  qv = malloc((size_t)q->components * most * sizeof *qv + 1);
  wv = malloc(most * sizeof *wv + 1);
  if (!send || !qv || !wv) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  if (st == TSR_OK && 2 * total > INT_MAX)
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                       "slice '%s': %lld cells are more than one gather can carry", slice->name,
                       (long long)total);
  if (st == TSR_OK && rank == 0) {
    counts = calloc((size_t)nranks, sizeof *counts);
    displs = calloc((size_t)nranks, sizeof *displs);
    recv = malloc((size_t)(2 * total + 1) * sizeof *recv);
    value = malloc((size_t)(width * height) * sizeof *value);
    wall = malloc((size_t)(width * height));
    if (!counts || !displs || !recv || !value || !wall)
      st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  }
  if (st == TSR_OK) st = sim_slice_pack(sim, rank, &p, q, wq, qv, wv, send, err);
  TSR_TRY(verdict_reduce(sim_comm(sim), st, 0, err));

  /* rank 0 knows from the block metadata how much each rank sends */
  if (rank == 0) sim_slice_gather_counts(sim, nranks, &p, counts, displs);
  TSR_MPI(MPI_Gatherv(send, (int)(2 * mine), MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, 0,
                      sim_comm(sim)));
  if (rank == 0) {
    sim_slice_unpack(sim, nranks, &p, width, recv, displs, value, wall);
    image_field_t field = {.width = (int)width, .height = (int)height, .values = value, .wall = wall};
    st = sim_slice_picture(w, out, slice, q, &p, step, &field, err);
  }
  st = verdict_reduce(sim_comm(sim), st, 0, err);
cleanup:
  free(send);
  free(recv);
  free(value);
  free(wall);
  free(counts);
  free(displs);
  free(qv);
  free(wv);
  return st;
}

/* ---- the writers' run state, as checkpoints keep it ---- */

int sim_output_state(sim_output_t *w, sim_output_extra_t *x, int cap) {
  int n = 0;
  uint8_t *steps = realloc(w->steps_bytes, 8 * (size_t)w->nvtk + 1);
  if (!steps || cap < 2) return -1;
  w->steps_bytes = steps;
  for (int64_t i = 0; i < w->nvtk; ++i)
    for (int k = 0; k < 8; ++k) steps[8 * i + k] = (uint8_t)((uint64_t)w->vtk_steps[i] >> (8 * k));
  x[n++] = (sim_output_extra_t){"vtk_steps", steps, 8 * (uint64_t)w->nvtk};
  x[n++] = (sim_output_extra_t){"series.csv", (const uint8_t *)w->series.text, w->series.len};
  for (int g = 0; g < w->ngroups && n < cap; ++g)
    x[n++] = (sim_output_extra_t){w->group_file[g], (const uint8_t *)w->group_series[g].text,
                                  w->group_series[g].len};
  size_t used = 0; /* the slices' fixed colour ranges, a line each: name lo hi */
  w->ranges_text[0] = '\0';
  for (int i = 0; i < w->nranges; ++i) {
    int k = snprintf(w->ranges_text + used, sizeof w->ranges_text - used, "%s %.17g %.17g\n",
                     w->ranges[i].name, w->ranges[i].lo, w->ranges[i].hi);
    if (k > 0 && (size_t)k < sizeof w->ranges_text - used) used += (size_t)k;
  }
  if (used > 0 && n < cap)
    x[n++] = (sim_output_extra_t){"slice_ranges", (const uint8_t *)w->ranges_text, used};
  for (int i = 0; i < SIMULATION_MAX_PROBES && n < cap; ++i)
    if (w->probe_series[i].len > 0)
      x[n++] = (sim_output_extra_t){w->probe_series_name[i],
                                    (const uint8_t *)w->probe_series[i].text,
                                    w->probe_series[i].len};
  return n;
}

tsr_status sim_output_restore(sim_output_t *w, const simulation_options_t *so, const char *path,
                              const char *name, uint8_t *p, uint64_t bytes, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  output_series_t *s = NULL;
  if (strcmp(name, "vtk_steps") == 0) {
    TSR_CHECK(bytes % 8 == 0, TSR_ERR_CORRUPT, "%s: vtk_steps of %llu bytes", path,
              (unsigned long long)bytes);
    free(w->vtk_steps);
    w->nvtk = (int64_t)(bytes / 8);
    w->vtk_steps = malloc((size_t)bytes + 8);
    TSR_CHECK(w->vtk_steps, TSR_ERR_NOMEM, "out of memory");
    for (int64_t k = 0; k < w->nvtk; ++k) {
      uint64_t v = 0;
      for (int b = 0; b < 8; ++b) v |= (uint64_t)p[8 * k + b] << (8 * b);
      w->vtk_steps[k] = (int64_t)v;
    }
    goto cleanup;
  }
  if (strcmp(name, "slice_ranges") == 0) { /* lines "name lo hi" */
    p[bytes] = 0;
    w->nranges = 0;
    for (char *line = (char *)p, *next; *line && w->nranges < SIMULATION_MAX_SLICES; line = next) {
      next = line + strcspn(line, "\n");
      if (*next) *next++ = '\0';
      char *lo = strchr(line, ' '), *hi = lo ? strchr(lo + 1, ' ') : NULL;
      TSR_CHECK(lo && hi && (size_t)(lo - line) < sizeof w->ranges[0].name, TSR_ERR_CORRUPT,
                "%s: a slice range line \"%.80s\"", path, line);
      snprintf(w->ranges[w->nranges].name, sizeof w->ranges[0].name, "%.*s", (int)(lo - line), line);
      w->ranges[w->nranges].lo = strtod(lo + 1, NULL);
      w->ranges[w->nranges++].hi = strtod(hi + 1, NULL);
    }
    goto cleanup;
  }
  const bool totals = strcmp(name, "series.csv") == 0 || strncmp(name, "series_", 7) == 0;
  if (strcmp(name, "series.csv") == 0) s = &w->series;
  else if (totals) s = sim_series_named(w, name);
  TSR_CHECK(!totals || s, TSR_ERR_CORRUPT, "%s: more series files than a run writes", path);
  for (int k = 0; !s && k < so->nprobes; ++k) {
    char file[SIMULATION_NAME_MAX + 16];
    snprintf(file, sizeof file, "probe_%s.csv", so->probes[k].name);
    if (strcmp(file, name) == 0 && so->probes[k].series) {
      s = &w->probe_series[k];
      snprintf(w->probe_series_name[k], sizeof w->probe_series_name[k], "%s", file);
    }
  }
  if (!s) goto cleanup; /* a probe this run no longer has, or no series at all */
  uint64_t keep = bytes;
  p[bytes] = 0;
  if (totals && bytes > 0 && so->series_every > 0) {
    /* the first part's last row, written because its run ended there, is not one the
       whole run has: it goes (rows lie on multiples of series_every) */
    size_t end = (size_t)bytes - 1, start = end;
    while (start > 0 && p[start - 1] != '\n') --start;
    long long row = strtoll((const char *)p + start, NULL, 10);
    if (start > 0 && row % so->series_every != 0) keep = start;
  }
  output_series_free(s);
  TSR_CHECK(keep == 0 || output_series_printf(s, "%.*s", (int)keep, (const char *)p),
            TSR_ERR_NOMEM, "out of memory for '%s'", name);
cleanup:
  return st;
}
