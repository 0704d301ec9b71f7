#include "sim.h"

#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "image.h"
#include "node.h"
#include "opencl.h"
#include "tsr_size.h"
#include "verdict.h"
#include "vtk.h"

enum { SIM_FS_MAX = 256, SIM_MAX_SWEEPS = MODULE_MAX * MODULE_MAX_SWEEPS + 1 };

struct sim {
  MPI_Comm comm;
  module_t modules[MODULE_MAX];
  module_decl_t decls[MODULE_MAX];
  int nmodules;
  plan_t *plan;         /* the assignment and its prediction (the patch is taken out) */
  opencl_context_t *cl; /* hs gpu: this process's device */
  gpu_field_programs_t *fields; /* its field programs (field.h) */
  patch_t *patch;
  registry_t *reg;
  timeloop_t *loop;
  uint64_t fs;
  char fs_text[SIM_FS_MAX];
  int field_id[MODULE_MAX][MODULE_MAX_FIELDS];
  int64_t cells;
  int64_t *vtk_steps; /* output steps written so far */
  int64_t nvtk;
  char *series;       /* rank 0: series.csv's text so far */
  size_t series_len, series_cap;
  double series_written; /* MPI_Wtime of its last write */
};

const module_def_t *module_find(const module_def_t *const *defs, const char *name) {
  for (; *defs; ++defs)
    if (strcmp((*defs)->name, name) == 0) return *defs;
  return NULL;
}

void module_free_all(module_t *modules, int n) {
  for (int m = 0; m < n; ++m)
    if (modules[m].def && modules[m].state) {
      modules[m].def->free(modules[m].state);
      modules[m].state = NULL;
    }
}

tsr_status module_read_all(config_t *cfg, const simulation_options_t *so,
                           const module_def_t *const *defs, module_t *out, int *n,
                           tsr_error_t *err) {
  tsr_status st = TSR_OK;
  enum { NAME_MAX_ = 32 };
  char names[MODULE_MAX][NAME_MAX_];
  size_t count = 1;
  char list[256] = "";
  size_t used = 0;
  *n = 0;
  for (const module_def_t *const *d = defs; *d && used < sizeof list; ++d) {
    int k = snprintf(list + used, sizeof list - used, "%s\"%s\"", used ? ", " : "", (*d)->name);
    if (k < 0) break;
    used += (size_t)k;
  }
  snprintf(names[0], sizeof names[0], "%s", defs[0]->name);
  TSR_TRY(config_strings(config_root(cfg), "modules", false, MODULE_MAX, NAME_MAX_, &names[0][0],
                         &count, err));
  TSR_CHECK(count >= 1, TSR_ERR_INVALID, "%s: modules: an empty list; name at least one of %s",
            config_source(cfg), list);
  for (size_t i = 0; i < count; ++i) {
    const module_def_t *def = module_find(defs, names[i]);
    TSR_CHECK(def, TSR_ERR_INVALID, "%s: modules[%zu] = \"%s\": no such module; there are %s",
              config_source(cfg), i, names[i], list);
    for (size_t j = 0; j < i; ++j)
      TSR_CHECK(strcmp(names[j], names[i]) != 0, TSR_ERR_INVALID,
                "%s: modules[%zu] = \"%s\": given twice", config_source(cfg), i, names[i]);
    out[*n] = (module_t){.def = def};
    TSR_TRY(def->read(cfg, so, &out[*n].state, err));
    ++*n;
  }
cleanup:
  if (st != TSR_OK) {
    module_free_all(out, *n);
    *n = 0;
  }
  return st;
}

void sim_free(sim_t **sim) {
  if (!sim || !*sim) return;
  sim_t *s = *sim;
  timeloop_free(&s->loop);
  patch_free(&s->patch); /* GPU blocks release their buffers before the context goes */
  registry_free(&s->reg);
  plan_free(&s->plan);
  module_free_all(s->modules, s->nmodules);
  gpu_field_programs_free(&s->fields);
  opencl_context_free(&s->cl);
  free(s->vtk_steps);
  free(s->series);
  free(s);
  *sim = NULL;
}

/* The field called name among the declarations, as (module, index); false if none. */
static bool sim_find_field(const module_decl_t *decls, int n, const char *name, int *m, int *f) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < decls[i].nfields; ++j)
      if (strcmp(decls[i].fields[j].name, name) == 0) {
        *m = i, *f = j;
        return true;
      }
  return false;
}

/* Checks that every field a sweep names is declared by some module. */
static tsr_status sim_check_access(const module_t *mod, const module_decl_t *decls, int n,
                                   const module_sweep_t *sw, const char *const *names, int count,
                                   const char *what, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int m, f;
  for (int i = 0; i < count; ++i)
    TSR_CHECK(sim_find_field(decls, n, names[i], &m, &f), TSR_ERR_INVALID,
              "module \"%s\", sweep \"%s\" %s field \"%s\", which no module of this run "
              "declares (add the module that declares it to \"modules\")",
              mod->def->name, sw->name, what, names[i]);
cleanup:
  return st;
}

/* The first quantity called name among the declarations, as (module, index); false if
 * none. */
static bool sim_find_quantity(const module_decl_t *decls, int n, const char *name, int *m,
                              int *q) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < decls[i].nquantities; ++j)
      if (strcmp(decls[i].quantities[j].name, name) == 0) {
        *m = i, *q = j;
        return true;
      }
  return false;
}

/* The names of every quantity of the declarations, "\"a\", \"b\"", into out[cap]. */
static void sim_quantity_list(const module_decl_t *decls, int n, char *out, size_t cap) {
  size_t used = 0;
  out[0] = '\0';
  for (int m = 0; m < n; ++m)
    for (int q = 0; q < decls[m].nquantities && used < cap; ++q) {
      int k = snprintf(out + used, cap - used, "%s\"%s\"", used ? ", " : "",
                       decls[m].quantities[q].name);
      if (k < 0) return;
      used += (size_t)k;
    }
}

/* Checks that the quantities the output names exist. */
static tsr_status sim_check_outputs(const simulation_options_t *so, const module_decl_t *decls,
                                    int n, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char list[512], where[96];
  int m, q;
  sim_quantity_list(decls, n, list, sizeof list);
  for (int p = -1; p < so->nprobes; ++p) {
    const simulation_quantities_t *sel = p < 0 ? &so->quantities : &so->probes[p].quantities;
    if (p < 0) snprintf(where, sizeof where, "output.quantities");
    else snprintf(where, sizeof where, "output.probes[%d].quantities", p);
    for (int i = 0; i < sel->n; ++i) {
      TSR_CHECK(sim_find_quantity(decls, n, sel->names[i], &m, &q), TSR_ERR_INVALID,
                "%s: %s[%d] = \"%s\": no such quantity; the modules of this run have %s",
                so->source, where, i, sel->names[i], list);
      for (int j = 0; j < i; ++j)
        TSR_CHECK(strcmp(sel->names[j], sel->names[i]) != 0, TSR_ERR_INVALID,
                  "%s: %s[%d] = \"%s\": given twice", so->source, where, i, sel->names[i]);
    }
  }
  for (int i = 0; i < so->nslices; ++i)
    TSR_CHECK(!so->slices[i].quantity[0] ||
                  sim_find_quantity(decls, n, so->slices[i].quantity, &m, &q),
              TSR_ERR_INVALID,
              "%s: output.slices[%d].quantity = \"%s\": no such quantity; the modules of this "
              "run have %s", so->source, i, so->slices[i].quantity, list);
cleanup:
  return st;
}

tsr_status sim_register(module_t *modules, int n, registry_t *reg, const module_env_t *env,
                        module_decl_t *decls, uint64_t *fs, char *fs_text, size_t cap,
                        tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char text[SIM_FS_MAX] = "";
  size_t used = 0;
  for (int m = 0; m < n; ++m) {
    const module_def_t *def = modules[m].def;
    decls[m] = (module_decl_t){.nfields = 0};
    if (def->register_items)
      TSR_TRY(def->register_items(modules[m].state, reg, env, &decls[m], err));
    const char *f = def->fs ? def->fs(modules[m].state) : "";
    if (f[0]) {
      int k = snprintf(text + used, sizeof text - used, "%s%s", used ? "," : "", f);
      TSR_CHECK(k > 0 && (size_t)k < sizeof text - used, TSR_ERR_INVALID,
                "the fs switches of the modules are longer than %zu characters", sizeof text - 1);
      used += (size_t)k;
    }
  }
  TSR_TRY(registry_parse_fs(reg, text, fs, err));
  if (fs_text) snprintf(fs_text, cap, "%s", text);
  for (int m = 0; m < n; ++m)
    if (modules[m].def->bind) TSR_TRY(modules[m].def->bind(modules[m].state, decls, n, m, err));
  /* unique fields and quantities, then sweeps that name declared fields */
  for (int m = 0; m < n; ++m) {
    for (int f = 0; f < decls[m].nfields; ++f) {
      int m2 = m, f2 = f;
      (void)sim_find_field(decls, n, decls[m].fields[f].name, &m2, &f2);
      TSR_CHECK(m2 == m && f2 == f, TSR_ERR_INVALID,
                "field \"%s\" is declared by module \"%s\" and by module \"%s\"",
                decls[m].fields[f].name, modules[m2].def->name, modules[m].def->name);
    }
    for (int q = 0; q < decls[m].nquantities; ++q) {
      int m2 = m, q2 = q;
      (void)sim_find_quantity(decls, n, decls[m].quantities[q].name, &m2, &q2);
      TSR_CHECK(m2 == m && q2 == q, TSR_ERR_INVALID,
                "quantity \"%s\" is declared by module \"%s\" and by module \"%s\"",
                decls[m].quantities[q].name, modules[m2].def->name, modules[m].def->name);
    }
  }
  for (int m = 0; m < n; ++m) {
    for (int s = 0; s < decls[m].nsweeps; ++s) {
      const module_sweep_t *sw = &decls[m].sweeps[s];
      TSR_TRY(sim_check_access(&modules[m], decls, n, sw, sw->reads_ghosts, sw->nreads_ghosts,
                               "reads the ghost layers of", err));
      TSR_TRY(sim_check_access(&modules[m], decls, n, sw, sw->reads, sw->nreads, "reads", err));
      TSR_TRY(sim_check_access(&modules[m], decls, n, sw, sw->writes, sw->nwrites, "writes", err));
    }
  }
cleanup:
  return st;
}

static bool sim_names(const char *const *names, int count, const char *name) {
  for (int i = 0; i < count; ++i)
    if (strcmp(names[i], name) == 0) return true;
  return false;
}

bool module_find_scalar(const module_decl_t *decls, int n, const char *name, double *value) {
  for (int m = 0; m < n; ++m)
    for (int k = 0; k < decls[m].nscalars; ++k)
      if (strcmp(decls[m].scalars[k].name, name) == 0) {
        *value = decls[m].scalars[k].value;
        return true;
      }
  return false;
}

const module_field_t *module_find_field(const module_decl_t *decls, int n, const char *name) {
  int m, f;
  return sim_find_field(decls, n, name, &m, &f) ? &decls[m].fields[f] : NULL;
}

bool module_reads(const module_decl_t *decls, int n, const char *field) {
  for (int m = 0; m < n; ++m)
    for (int s = 0; s < decls[m].nsweeps; ++s) {
      const module_sweep_t *sw = &decls[m].sweeps[s];
      if (sim_names(sw->reads, sw->nreads, field) ||
          sim_names(sw->reads_ghosts, sw->nreads_ghosts, field))
        return true;
    }
  return false;
}

bool module_writes_before(const module_decl_t *decls, int self, const char *field) {
  for (int m = 0; m < self; ++m)
    for (int s = 0; s < decls[m].nsweeps; ++s)
      if (sim_names(decls[m].sweeps[s].writes, decls[m].sweeps[s].nwrites, field)) return true;
  return false;
}

/* Removes name from names[*count], keeping the order. */
static void sim_drop_name(const char **names, int *count, const char *name) {
  int k = 0;
  for (int i = 0; i < *count; ++i)
    if (strcmp(names[i], name) != 0) names[k++] = names[i];
  *count = k;
}

void module_drop_field(module_decl_t *d, const char *field) {
  int k = 0;
  for (int f = 0; f < d->nfields; ++f)
    if (strcmp(d->fields[f].name, field) != 0) d->fields[k++] = d->fields[f];
  d->nfields = k;
  for (int s = 0; s < d->nsweeps; ++s) {
    module_sweep_t *sw = &d->sweeps[s];
    sim_drop_name(sw->writes, &sw->nwrites, field);
    sim_drop_name(sw->reads, &sw->nreads, field);
    sim_drop_name(sw->reads_ghosts, &sw->nreads_ghosts, field);
  }
}

bool sim_exchange_due(const module_sweep_t *const *sweeps, int n, int s, const char *field) {
  bool written = false;
  for (int k = 0; k < n; ++k) written = written || sim_names(sweeps[k]->writes, sweeps[k]->nwrites, field);
  if (!written) return true;
  for (int k = 1; k <= n; ++k) {
    const module_sweep_t *t = sweeps[((s - k) % n + n) % n];
    if (sim_names(t->writes, t->nwrites, field)) return true;
    if (sim_names(t->reads_ghosts, t->nreads_ghosts, field)) return false;
  }
  return true;
}

int sim_exchange_round(const module_sweep_t *const *sweeps, int s, const char *field) {
  int j = s;
  while (j > 0 && !sim_names(sweeps[j - 1]->writes, sweeps[j - 1]->nwrites, field)) --j;
  return j;
}

/* The exchange rounds of a step: all[n] every module's sweeps in order, and the fields
 * (module m, field f of its declaration) that travel in sweep j's round: those it reads
 * across faces, or with merged the fields that travel in its round (sim_exchange_round). */
typedef struct sim_rounds {
  const module_sweep_t *all[SIM_MAX_SWEEPS];
  int n;
  int nf[SIM_MAX_SWEEPS];
  int field[SIM_MAX_SWEEPS][COMM_MAX_FIELDS][2];
} sim_rounds_t;

static tsr_status sim_plan_rounds(const module_decl_t *decls, int nmodules, bool merged,
                                  sim_rounds_t *r, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  memset(r, 0, sizeof *r);
  for (int m = 0; m < nmodules; ++m)
    for (int k = 0; k < decls[m].nsweeps; ++k) r->all[r->n++] = &decls[m].sweeps[k];
  for (int k = 0; k < r->n; ++k)
    for (int i = 0; i < r->all[k]->nreads_ghosts; ++i) {
      const char *name = r->all[k]->reads_ghosts[i];
      if (!sim_exchange_due(r->all, r->n, k, name)) continue;
      const int j = merged ? sim_exchange_round(r->all, k, name) : k;
      int m = 0, f = 0;
      (void)sim_find_field(decls, nmodules, name, &m, &f);
      bool there = false;
      for (int t = 0; t < r->nf[j]; ++t)
        there = there || (r->field[j][t][0] == m && r->field[j][t][1] == f);
      if (there) continue;
      TSR_CHECK(r->nf[j] < COMM_MAX_FIELDS, TSR_ERR_INVALID,
                "the exchange round of sweep \"%s\" carries more than %d fields",
                r->all[j]->name, COMM_MAX_FIELDS);
      r->field[j][r->nf[j]][0] = m;
      r->field[j][r->nf[j]][1] = f;
      ++r->nf[j];
    }
cleanup:
  return st;
}

tsr_status sim_exchange_rounds(const module_decl_t *decls, int nmodules, bool merged, int *rounds,
                               tsr_error_t *err) {
  tsr_status st = TSR_OK;
  sim_rounds_t *r = malloc(sizeof *r);
  *rounds = 0;
  TSR_CHECK(r, TSR_ERR_NOMEM, "out of memory planning the exchange rounds");
  TSR_TRY(sim_plan_rounds(decls, nmodules, merged, r, err));
  for (int j = 0; j < r->n; ++j) *rounds += r->nf[j] > 0;
cleanup:
  free(r);
  return st;
}

/* The time loop's sweeps: every module's in order, each with its exchange round
 * (sim_plan_rounds), then the finish items. */
static tsr_status sim_add_sweeps(sim_t *s, bool merged, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  sim_rounds_t *r = malloc(sizeof *r);
  TSR_CHECK(r, TSR_ERR_NOMEM, "out of memory planning the exchange rounds");
  TSR_TRY(sim_plan_rounds(s->decls, s->nmodules, merged, r, err));
  for (int k = 0; k < r->n; ++k) {
    comm_field_t fields[COMM_MAX_FIELDS];
    for (int t = 0; t < r->nf[k]; ++t) {
      const int m = r->field[k][t][0], f = r->field[k][t][1];
      fields[t] = (comm_field_t){.name = s->decls[m].fields[f].name, .data_id = s->field_id[m][f]};
      memcpy(fields[t].width, s->decls[m].fields[f].width, sizeof fields[t].width);
    }
    timeloop_sweep_t sw = {.name = r->all[k]->name, .exchange = r->nf[k] ? fields : NULL,
                           .nexchange = r->nf[k], .boundary = r->all[k]->boundary,
                           .kernel = r->all[k]->kernel};
    TSR_TRY(timeloop_add_sweep(s->loop, &sw, err));
  }
  /* the step ends when every block's work is done (GPU blocks: their queue is empty) */
  for (int m = 0; m < s->nmodules; ++m)
    if (s->decls[m].finish)
      TSR_TRY(timeloop_add_sweep(s->loop, &(timeloop_sweep_t){.name = s->decls[m].finish,
                                                              .kernel = s->decls[m].finish},
                                 err));
cleanup:
  free(r);
  return st;
}

/* Calibration: this process's MLUPS on one block of the run's largest block size (at most
 * SIM_CALIBRATE_CELLS cells, scaled down alike along each axis), periodic, without walls,
 * on its own hardware, measured after two warm-up steps over at least 0.2 s (and 3
 * steps). Every process calibrates at the same time, so processes sharing a node share
 * its memory bandwidth as they will in the run. */
enum { SIM_CALIBRATE_CELLS = 1 << 21 };

static tsr_status sim_calibrate(const simulation_options_t *so, const sim_setup_t *setup,
                                const module_t *modules, int n, const simulation_process_t *me,
                                double *mlups, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  sim_t *cal = NULL;
  module_t cm[MODULE_MAX] = {{NULL, NULL}};
  int ncm = 0;
  simulation_options_t c = simulation_options_default();
  double cells = 1;
  for (int a = 0; a < 3; ++a) {
    int64_t size = (so->domain.cells[a] + so->domain.blocks[a] - 1) / so->domain.blocks[a];
    c.domain.cells[a] = size;
    c.domain.periodic[a] = true;
    cells *= (double)size;
  }
  double shrink = cells > SIM_CALIBRATE_CELLS ? cbrt(SIM_CALIBRATE_CELLS / cells) : 1.0;
  for (int a = 0; a < 3; ++a) {
    c.domain.cells[a] = (int64_t)((double)c.domain.cells[a] * shrink);
    if (c.domain.cells[a] < 4) c.domain.cells[a] = 4;
  }
  c.hardware.hs = me->hs;
  c.hardware.opencl = simulation_process_device(&so->hardware, me);
  memcpy(c.hardware.kernel_sources, so->hardware.kernel_sources, sizeof c.hardware.kernel_sources);
  for (; ncm < n; ++ncm) {
    cm[ncm].def = modules[ncm].def;
    TSR_CHECK(modules[ncm].def->calibration, TSR_ERR_INVALID,
              "module \"%s\" cannot calibrate; set hardware.balance.throughput instead",
              modules[ncm].def->name);
    TSR_TRY(modules[ncm].def->calibration(modules[ncm].state, &cm[ncm].state, err));
  }
  st = sim_create(MPI_COMM_SELF, &c, setup, cm, ncm, &cal, err);
  ncm = 0; /* taken over */
  TSR_TRY(st);
  TSR_TRY(sim_step(cal, 2, err));
  double t0 = MPI_Wtime(), t = 0;
  int64_t steps = 0;
  while (steps < 3 || t < 0.2) {
    TSR_TRY(sim_step(cal, 1, err));
    ++steps;
    t = MPI_Wtime() - t0;
  }
  *mlups = (double)cal->cells * (double)steps / t / 1e6;
cleanup:
  if (st != TSR_OK) tsr_error_prefix(err, "calibrating (hardware.balance.calibrate)");
  module_free_all(cm, ncm);
  sim_free(&cal);
  return st;
}

/* This process's OpenCL device: hardware.opencl, with its configuration's device. */
static tsr_status sim_open_device(sim_t *s, const simulation_options_t *so,
                                  const node_process_t *me, tsr_error_t *err) {
  opencl_select_t sel = simulation_process_device(&so->hardware, &me->proc);
  return opencl_context_create(&sel, &s->cl, err);
}

static void sim_prefix_device(const simulation_options_t *so, const node_process_t *me,
                              tsr_error_t *err) {
  if (me->configuration >= 0)
    tsr_error_prefix(err, "node \"%s\", configuration \"%s\", process %d (hs gpu)", me->node,
                     so->hardware.configurations[me->configuration].name, me->index);
  else
    tsr_error_prefix(err, "hardware.hs = gpu");
}

/* The bytes of this process's blocks, against its device's and its node's memory. */
static tsr_status sim_check_memory(sim_t *s, bool gpu, int rank, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t host = 0, device = 0, largest = 0;
  for (int m = 0; m < s->nmodules && st == TSR_OK; ++m)
    if (s->modules[m].def->local_bytes)
      st = s->modules[m].def->local_bytes(s->modules[m].state, s->reg, s->patch, &host, &device,
                                          &largest, err);
  if (st == TSR_OK && gpu) { /* the device's limit first: it is the one a GPU run meets */
    char what[96];
    snprintf(what, sizeof what, "the %d block(s) of rank %d (fields, messages, moments)",
             (int)patch_local_count(s->patch), rank);
    st = opencl_check_memory(s->cl, device, largest, what, err);
  }
  TSR_TRY(verdict_reduce(s->comm, st, 0, err));
  TSR_TRY(node_check_memory(s->comm, host, "the fields of the blocks", err));
cleanup:
  return st;
}

tsr_status sim_create(MPI_Comm comm, const simulation_options_t *so, const sim_setup_t *setup,
                      module_t *modules, int n, sim_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank, size;
  double *mlups = NULL;
  node_process_t *procs = NULL;
  *out = NULL;
  sim_t *s = calloc(1, sizeof *s);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  procs = calloc((size_t)size, sizeof *procs);
  mlups = calloc((size_t)size, sizeof *mlups);
  if (n < 1 || n > MODULE_MAX) {
    module_free_all(modules, n > MODULE_MAX ? MODULE_MAX : n);
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                       "a simulation has 1 to %d modules, not %d", MODULE_MAX, n);
  } else if (!s) {
    module_free_all(modules, n);
  } else { /* the states are the simulation's from here on */
    memcpy(s->modules, modules, (size_t)n * sizeof *modules);
    s->nmodules = n;
  }
  if (st == TSR_OK && (!s || !procs || !mlups))
    st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  s->comm = comm;
  /* which hardware this process runs on: its node's configuration */
  TSR_TRY(node_resolve(comm, &so->hardware, procs, err));
  const node_process_t *me = &procs[rank];
  bool gpu = me->proc.hs == SIMULATION_HS_GPU; /* this process has GPU blocks */
  int64_t nb = (int64_t)so->domain.blocks[0] * so->domain.blocks[1] * so->domain.blocks[2];
  for (int64_t id = 0; so->hardware.block_hs && id < nb; ++id)
    gpu = gpu || so->hardware.block_hs[id] == SIMULATION_HS_GPU;
  if (me->proc.threads > 0 && setup && setup->set_threads) setup->set_threads(me->proc.threads);
  if (gpu) st = sim_open_device(s, so, me, err);
  if (st == TSR_OK && s->cl) st = gpu_field_programs_create(s->cl, &s->fields, err);
  if (st == TSR_OK) st = registry_create(&s->reg, err);
  module_env_t env = {.so = so, .cl = s->cl, .fields = s->fields, .kernel_sources = so->hardware.kernel_sources};
  if (st == TSR_OK) {
    st = sim_register(s->modules, s->nmodules, s->reg, &env, s->decls, &s->fs, s->fs_text,
                      sizeof s->fs_text, err);
    if (st == TSR_ERR_OPENCL && gpu) /* the device's programs */
      sim_prefix_device(so, me, err);
  } else if (gpu) {
    sim_prefix_device(so, me, err);
  }
  if (st == TSR_OK) st = sim_check_outputs(so, s->decls, s->nmodules, err);
  if (st == TSR_OK && so->hardware.balance.calibrate)
    st = sim_calibrate(so, setup, s->modules, s->nmodules, &me->proc, &mlups[rank], err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  if (so->hardware.balance.calibrate)
    TSR_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, mlups, 1, MPI_DOUBLE, comm));
  /* which blocks it runs: every process plans the same assignment */
  st = plan_create(so, s->modules, s->decls, s->nmodules, s->reg, s->fs, procs,
                   so->hardware.balance.calibrate ? mlups : NULL, size, rank, &s->plan, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  s->patch = plan_take_patch(s->plan);
  TSR_TRY(sim_check_memory(s, gpu, rank, err));
  for (int m = 0; m < s->nmodules; ++m)
    for (int f = 0; f < s->decls[m].nfields; ++f)
      TSR_TRY(data_allocate(comm, s->reg, s->patch, s->decls[m].fields[f].name, s->fs,
                            &s->field_id[m][f], err));
  st = timeloop_create(s->patch, s->reg, s->fs, comm, &s->loop, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  for (int m = 0; m < s->nmodules; ++m)
    if (s->decls[m].start) TSR_TRY(timeloop_run_kernel(s->loop, s->decls[m].start, err));
  TSR_TRY(sim_add_sweeps(s, so->hardware.exchange == SIMULATION_EXCHANGE_MERGED, err));
  for (int32_t id = 0; id < patch_block_count(s->patch); ++id)
    s->cells += (int64_t)s->plan->block_cells[id];
  *out = s;
  s = NULL;
cleanup:
  free(procs);
  free(mlups);
  sim_free(&s);
  return st;
}

tsr_status sim_step(sim_t *sim, int64_t steps, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (int64_t k = 0; k < steps; ++k) TSR_TRY(timeloop_step(sim->loop, err));
cleanup:
  return st;
}

tsr_status sim_prepare(sim_t *sim, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *done[MODULE_MAX * MODULE_MAX_QUANTITIES];
  int ndone = 0;
  for (int m = 0; m < sim->nmodules; ++m)
    for (int q = 0; q < sim->decls[m].nquantities; ++q) {
      const char *item = sim->decls[m].quantities[q].prepare;
      if (!item || sim_names(done, ndone, item)) continue;
      done[ndone++] = item;
      TSR_TRY(timeloop_run_kernel(sim->loop, item, err));
    }
cleanup:
  return st;
}

tsr_status sim_check(sim_t *sim, int64_t step, bool prepared, sim_divergence_t *out,
                     tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *out = (sim_divergence_t){.step = step, .block = -1};
  for (int m = 0; m < sim->nmodules; ++m)
    if (sim->modules[m].def->check)
      TSR_TRY(sim->modules[m].def->check(sim->modules[m].state, sim, step, prepared, out, err));
cleanup:
  return st;
}

tsr_status sim_totals(sim_t *sim, const char **names, double *values, int cap, int *n,
                      tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *n = 0;
  for (int m = 0; m < sim->nmodules; ++m) {
    int k = 0;
    if (sim->modules[m].def->totals)
      TSR_TRY(sim->modules[m].def->totals(sim->modules[m].state, sim, names + *n, values + *n,
                                          cap - *n, &k, err));
    *n += k;
  }
cleanup:
  return st;
}

const module_quantity_t *sim_quantity(const sim_t *sim, const char *name) {
  int m, q;
  return sim_find_quantity(sim->decls, sim->nmodules, name, &m, &q) ? &sim->decls[m].quantities[q]
                                                                     : NULL;
}

tsr_status sim_sample(sim_t *sim, const module_quantity_t *q, int32_t block, double *out,
                      tsr_error_t *err) {
  return q->sample(patch_block(sim->patch, block), patch_block_data(sim->patch, block), out,
                   q->ctx, err);
}

static int64_t sim_block_cells(const block_info_t *b) {
  return (int64_t)b->size[0] * b->size[1] * b->size[2];
}

/* The largest block's cells, checked against what one buffer of comps values per cell
 * and one MPI message of them can carry. */
static tsr_status sim_largest_block(const sim_t *sim, int comps, const char *what, size_t *cells,
                                    tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t most = 0, bytes = 0;
  int32_t largest = 0;
  int count = 0;
  for (int32_t id = 0; id < patch_block_count(sim->patch); ++id)
    if ((size_t)sim_block_cells(patch_block(sim->patch, id)) > most)
      most = (size_t)sim_block_cells(patch_block(sim->patch, id)), largest = id;
  TSR_CHECK(tsr_size_to_int((size_t)comps * most, &count) &&
                tsr_mul_size((size_t)comps * most, sizeof(double), &bytes),
            TSR_ERR_INVALID,
            "%s: BlockID %d has %zu cells, and %d values each are more than one MPI message "
            "carries (%d values)", what, (int)largest, most, comps, INT_MAX);
  *cells = most;
cleanup:
  return st;
}

tsr_status sim_gather(sim_t *sim, const char *quantity, double *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const patch_options_t *d = patch_options(sim->patch);
  const module_quantity_t *q = sim_quantity(sim, quantity);
  int rank;
  double *buf = NULL;
  size_t most = 0;
  MPI_Comm_rank(sim->comm, &rank);
  TSR_CHECK(q, TSR_ERR_INVALID, "gathering: no quantity \"%s\" in this run", quantity);
  const int c = q->components;
  TSR_TRY(sim_largest_block(sim, c, "gathering the fields", &most, err));
  /* one buffer of the largest block, allocated before any message moves */
  buf = malloc((size_t)c * most * sizeof *buf + 1);
  if (!buf) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory gathering fields");
  TSR_TRY(verdict_reduce(sim->comm, st, 0, err));
  /* block by block in BlockID order: the owner sends, rank 0 places */
  for (int32_t id = 0; id < patch_block_count(sim->patch); ++id) {
    const block_info_t *b = patch_block(sim->patch, id);
    int64_t n = sim_block_cells(b);
    if (rank == b->rank) {
      st = sim_sample(sim, q, id, buf, err);
      if (rank != 0 && st == TSR_OK)
        TSR_MPI(MPI_Send(buf, (int)(c * n), MPI_DOUBLE, 0, 77, sim->comm));
    }
    if (st != TSR_OK) break; /* a sampler's error: the verdict below */
    if (rank == 0) {
      if (b->rank != 0)
        TSR_MPI(MPI_Recv(buf, (int)(c * n), MPI_DOUBLE, b->rank, 77, sim->comm, MPI_STATUS_IGNORE));
      int64_t k = 0;
      for (int z = 0; z < b->size[2]; ++z)
        for (int y = 0; y < b->size[1]; ++y)
          for (int x = 0; x < b->size[0]; ++x, ++k) {
            int64_t g = ((b->lo[2] + z) * d->cells[1] + (b->lo[1] + y)) * d->cells[0] + b->lo[0] + x;
            for (int a = 0; a < c; ++a) out[c * g + a] = buf[c * k + a];
          }
    }
  }
  st = verdict_reduce(sim->comm, st, 0, err);
cleanup:
  free(buf);
  return st;
}

const char *const sim_output_patterns[SIM_OUTPUT_PATTERNS] = {
    "fields.pvd", "fields_*.pvti", "fields_*/block_*.vti", "probe_*.csv", "slice_*.png",
    "series.csv"};

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
  for (int m = 0; m < sim->nmodules; ++m)
    for (int k = 0; k < sim->decls[m].nquantities; ++k) out[n++] = &sim->decls[m].quantities[k];
  return n;
}

/* The selected quantities of one local block as VTK arrays: data[q] holds the values the
 * arrays point to (small integers as bytes). */
static tsr_status sim_vtk_block(sim_t *sim, int32_t id, const char *folder, int64_t step,
                                const module_quantity_t *const *qs, int nq, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const block_info_t *b = patch_block(sim->patch, id);
  const size_t n = (size_t)sim_block_cells(b);
  vtk_array_t arrays[MODULE_MAX * MODULE_MAX_QUANTITIES];
  void *data[MODULE_MAX * MODULE_MAX_QUANTITIES] = {NULL};
  int na = 0;
  for (int k = 0; k < nq; ++k) {
    const module_quantity_t *q = qs[k];
    double *v = malloc((size_t)q->components * n * sizeof *v);
    data[na] = v;
    arrays[na] = (vtk_array_t){q->name, VTK_FLOAT64, q->components, v};
    ++na;
    TSR_CHECK(v, TSR_ERR_NOMEM, "out of memory writing VTK");
    TSR_TRY(sim_sample(sim, q, id, v, err));
    if (q->small_integer) { /* 0..255 as bytes, in place */
      uint8_t *u8 = (uint8_t *)v;
      for (size_t i = 0; i < (size_t)q->components * n; ++i) u8[i] = (uint8_t)v[i];
      arrays[na - 1].type = VTK_UINT8;
    }
  }
  vtk_block_t vb = {.lo = {b->lo[0], b->lo[1], b->lo[2]},
                    .size = {b->size[0], b->size[1], b->size[2]}, .arrays = arrays, .narrays = na};
  char path[4096];
  vtk_block_path(path, sizeof path, folder, "fields", step, id);
  st = vtk_write_block(path, &vb, err);
cleanup:
  for (int i = 0; i < na; ++i) free(data[i]);
  return st;
}

tsr_status sim_write_vtk(sim_t *sim, output_folder_t *out, int64_t step,
                         const simulation_quantities_t *sel, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *folder = output_folder_path(out);
  int rank;
  MPI_Comm_rank(sim->comm, &rank);
  int32_t nb = patch_block_count(sim->patch);
  vtk_piece_t *pieces = NULL;
  const module_quantity_t *qs[MODULE_MAX * MODULE_MAX_QUANTITIES];
  int nq = sim_select(sim, sel, qs);
  if (rank == 0) st = vtk_make_step_folder(folder, "fields", step, err);
  TSR_TRY(verdict_reduce(sim->comm, st, 0, err));
  for (int32_t i = 0; st == TSR_OK && i < patch_local_count(sim->patch); ++i)
    st = sim_vtk_block(sim, patch_local_id(sim->patch, i), folder, step, qs, nq, err);
  TSR_TRY(verdict_reduce(sim->comm, st, 0, err));
  int64_t *grown = realloc(sim->vtk_steps, (size_t)(sim->nvtk + 1) * sizeof *grown);
  pieces = malloc((size_t)nb * sizeof *pieces);
  if (!grown || !pieces) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  if (grown) {
    sim->vtk_steps = grown;
    if (st == TSR_OK) sim->vtk_steps[sim->nvtk++] = step;
  }
  for (int32_t id = 0; st == TSR_OK && id < nb; ++id) {
    const block_info_t *b = patch_block(sim->patch, id);
    pieces[id] = (vtk_piece_t){.id = id, .lo = {b->lo[0], b->lo[1], b->lo[2]},
                               .size = {b->size[0], b->size[1], b->size[2]}};
  }
  vtk_array_t arrays[MODULE_MAX * MODULE_MAX_QUANTITIES];
  for (int k = 0; k < nq; ++k)
    arrays[k] = (vtk_array_t){qs[k]->name, qs[k]->small_integer ? VTK_UINT8 : VTK_FLOAT64,
                              qs[k]->components, NULL};
  if (st == TSR_OK && rank == 0)
    st = vtk_write_index(folder, "fields", step, patch_options(sim->patch)->cells, arrays, nq,
                         pieces, nb, sim->vtk_steps, sim->nvtk, err);
  char path[OUTPUT_PATH_MAX];
  for (int32_t id = 0; st == TSR_OK && id < nb; ++id)
    st = output_folder_file(out, path, sizeof path, err, "fields_%06lld/block_%d.vti",
                            (long long)step, (int)id);
  if (st == TSR_OK)
    st = output_folder_file(out, path, sizeof path, err, "fields_%06lld.pvti", (long long)step);
  if (st == TSR_OK) st = output_folder_file(out, path, sizeof path, err, "fields.pvd");
  st = verdict_reduce(sim->comm, st, 0, err);
cleanup:
  free(pieces);
  return st;
}

/* Appends printf-formatted text to the series (rank 0). */
static bool sim_series_print(sim_t *s, const char *format, ...) __attribute__((format(printf, 2, 3)));
static bool sim_series_print(sim_t *s, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  int k = vsnprintf(NULL, 0, format, ap);
  va_end(ap);
  if (k < 0) return false;
  if (s->series_len + (size_t)k + 1 > s->series_cap) {
    size_t cap = 2 * (s->series_len + (size_t)k + 1) + 4096;
    char *grown = realloc(s->series, cap);
    if (!grown) return false;
    s->series = grown;
    s->series_cap = cap;
  }
  va_start(ap, format);
  vsnprintf(s->series + s->series_len, s->series_cap - s->series_len, format, ap);
  va_end(ap);
  s->series_len += (size_t)k;
  return true;
}

tsr_status sim_write_series(sim_t *sim, output_folder_t *out, int64_t step, const char **names,
                            const double *values, int n, bool final, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank;
  MPI_Comm_rank(sim->comm, &rank);
  if (rank != 0) goto cleanup;
  bool ok = true;
  if (names && sim->series_len == 0) {
    ok = sim_series_print(sim, "step");
    for (int i = 0; i < n && ok; ++i) ok = sim_series_print(sim, ",%s", names[i]);
    ok = ok && sim_series_print(sim, "\n");
  }
  if (names) {
    ok = ok && sim_series_print(sim, "%lld", (long long)step);
    for (int i = 0; i < n && ok; ++i) ok = sim_series_print(sim, ",%.17g", values[i]);
    ok = ok && sim_series_print(sim, "\n");
  }
  TSR_CHECK(ok, TSR_ERR_NOMEM, "out of memory for series.csv");
  /* the whole file, through a temporary name; not more often than every 2 s but for the
     last row */
  double now = MPI_Wtime();
  if (sim->series_len == 0 || (!final && now - sim->series_written < 2.0)) goto cleanup;
  char path[OUTPUT_PATH_MAX];
  output_file_t f = {.f = NULL};
  TSR_TRY(output_folder_file(out, path, sizeof path, err, "series.csv"));
  TSR_TRY(output_file_open(&f, path, err));
  if (fwrite(sim->series, 1, sim->series_len, f.f) != sim->series_len) {
    output_file_discard(&f);
    TSR_CHECK(false, TSR_ERR_IO, "cannot write %s", path);
  }
  TSR_TRY(output_file_commit(&f, err));
  sim->series_written = now;
cleanup:
  return st;
}

tsr_status sim_write_probe(sim_t *sim, output_folder_t *out, const simulation_probe_t *probe,
                           int64_t step, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank;
  MPI_Comm_rank(sim->comm, &rank);
  /* the columns: the probe's quantities' */
  const module_quantity_t *qs[MODULE_MAX * MODULE_MAX_QUANTITIES];
  int nq = sim_select(sim, &probe->quantities, qs), width = 0;
  for (int j = 0; j < nq; ++j) width += qs[j]->components;
  int64_t len = 0;
  for (int a = 0; a < 3; ++a) {
    int64_t d = probe->to[a] - probe->from[a];
    if (d < 0) d = -d;
    if (d > len) len = d;
  }
  int64_t npts = len + 1;
  double *vals = NULL, *all = NULL, *block = NULL;
  int64_t(*cell)[3] = NULL;
  int count = 0; /* every value of every point in one reduction (every rank sees the probe) */
  size_t most = 0;
  TSR_CHECK(tsr_size_to_int((size_t)width * (size_t)npts, &count), TSR_ERR_INVALID,
            "probe '%s': %lld points, and %d values each are more than one MPI reduction "
            "carries (%d values)", probe->name, (long long)npts, width, INT_MAX);
  TSR_TRY(sim_largest_block(sim, MODULE_MAX_COMPONENTS, "probes", &most, err));
  vals = calloc((size_t)count + 1, sizeof *vals);
  all = calloc((size_t)count + 1, sizeof *all);
  cell = malloc((size_t)npts * sizeof *cell);
  block = malloc(MODULE_MAX_COMPONENTS * most * sizeof *block);
  if (!vals || !all || !cell || !block)
    st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  for (int64_t k = 0; st == TSR_OK && k < npts; ++k)
    for (int a = 0; a < 3; ++a) {
      double t = len ? (double)k / (double)len : 0.0;
      double x = (double)probe->from[a] + t * (double)(probe->to[a] - probe->from[a]);
      cell[k][a] = (int64_t)(x + 0.5 - (x < 0));
    }
  /* each point's values come from the rank owning its cell; the others add zeros. Every
     local block that holds a point samples each quantity once. */
  for (int32_t i = 0; st == TSR_OK && i < patch_local_count(sim->patch); ++i) {
    int32_t id = patch_local_id(sim->patch, i);
    const block_info_t *b = patch_block(sim->patch, id);
    int col = 0;
    for (int j = 0; j < nq && st == TSR_OK; col += qs[j++]->components) {
      bool sampled = false;
      for (int64_t k = 0; k < npts && st == TSR_OK; ++k) {
        int inside = 1;
        int64_t l[3];
        for (int a = 0; a < 3; ++a) {
          l[a] = cell[k][a] - b->lo[a];
          inside = inside && l[a] >= 0 && l[a] < b->size[a];
        }
        if (!inside) continue;
        if (!sampled) st = sim_sample(sim, qs[j], id, block, err);
        sampled = true;
        int64_t c = (l[2] * b->size[1] + l[1]) * b->size[0] + l[0];
        for (int a = 0; a < qs[j]->components; ++a)
          vals[(size_t)width * (size_t)k + (size_t)col + (size_t)a] =
              block[(size_t)qs[j]->components * (size_t)c + (size_t)a];
      }
    }
  }
  TSR_TRY(verdict_reduce(sim->comm, st, 0, err));
  TSR_MPI(MPI_Reduce(vals, all, count, MPI_DOUBLE, MPI_SUM, 0, sim->comm));
  if (rank == 0) {
    char path[OUTPUT_PATH_MAX];
    output_file_t f = {.f = NULL};
    st = output_folder_file(out, path, sizeof path, err, "probe_%s_%06lld.csv", probe->name,
                            (long long)step);
    if (st == TSR_OK) st = output_file_open(&f, path, err);
    if (st == TSR_OK) {
      fprintf(f.f, "x,y,z");
      for (int j = 0; j < nq; ++j)
        for (int a = 0; a < qs[j]->components; ++a) fprintf(f.f, ",%s", qs[j]->columns[a]);
      fprintf(f.f, "\n");
      for (int64_t k = 0; k < npts; ++k) {
        fprintf(f.f, "%lld,%lld,%lld", (long long)cell[k][0], (long long)cell[k][1],
                (long long)cell[k][2]);
        for (int c = 0; c < width; ++c) fprintf(f.f, ",%.17g", all[(size_t)width * (size_t)k + (size_t)c]);
        fprintf(f.f, "\n");
      }
      st = output_file_commit(&f, err);
    }
  }
  st = verdict_reduce(sim->comm, st, 0, err);
cleanup:
  free(vals);
  free(all);
  free(cell);
  free(block);
  return st;
}

/* Cells of block b on the plane at pos across axis a: 0 when the plane misses it. */
static int64_t slice_cells(const block_info_t *b, int a, int h, int v, int64_t pos) {
  if (pos < b->lo[a] || pos >= b->lo[a] + b->size[a]) return 0;
  return (int64_t)b->size[h] * b->size[v];
}

/* The quantity a picture shows (the one named, else the first vector quantity that is not
 * the wall mask, else the first that is not) and the wall mask. */
static void sim_picture_quantities(const sim_t *sim, const char *name,
                                   const module_quantity_t **value,
                                   const module_quantity_t **wall) {
  *value = name && name[0] ? sim_quantity(sim, name) : NULL;
  *wall = NULL;
  bool named = *value != NULL;
  for (int m = 0; m < sim->nmodules; ++m)
    for (int k = 0; k < sim->decls[m].nquantities; ++k) {
      const module_quantity_t *q = &sim->decls[m].quantities[k];
      if (q->wall && !*wall) *wall = q;
      if (!named && !q->wall && !*value && q->components == 3) *value = q;
    }
  for (int m = 0; m < sim->nmodules && !*value; ++m)
    for (int k = 0; k < sim->decls[m].nquantities && !*value; ++k)
      if (!sim->decls[m].quantities[k].wall) *value = &sim->decls[m].quantities[k];
}

tsr_status sim_write_png(sim_t *sim, output_folder_t *out, const simulation_slice_t *slice,
                         int64_t step, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank, nranks;
  MPI_Comm_rank(sim->comm, &rank);
  MPI_Comm_size(sim->comm, &nranks);
  const patch_options_t *d = patch_options(sim->patch);
  int32_t nb = patch_block_count(sim->patch);
  double *send = NULL, *recv = NULL, *value = NULL, *qv = NULL, *wv = NULL;
  uint8_t *wall = NULL;
  int *counts = NULL, *displs = NULL;
  size_t most = 0;
  const module_quantity_t *q, *wq;
  sim_picture_quantities(sim, slice->quantity, &q, &wq);
  /* the plane: across axis a, h horizontal and v vertical in the picture */
  int a = slice->axis, h = a == 0 ? 1 : 0, v = a == 2 ? 1 : 2;
  int64_t pos = slice->position;
  TSR_CHECK(q, TSR_ERR_INVALID, "slice '%s': the modules of this run have no quantity to show",
            slice->name);
  TSR_CHECK(a >= 0 && a < 3 && pos >= 0 && pos < d->cells[a], TSR_ERR_INVALID,
            "slice '%s': axis %d, position %lld is not a plane of the domain", slice->name, a,
            (long long)pos);
  int64_t width = d->cells[h], height = d->cells[v];
  TSR_TRY(sim_largest_block(sim, q->components, "slices", &most, err));

  /* every rank: the value and the wall flag of its blocks' plane cells, in BlockID order */
  int64_t mine = 0, total = 0;
  for (int32_t id = 0; id < nb; ++id) {
    const block_info_t *b = patch_block(sim->patch, id);
    int64_t n = slice_cells(b, a, h, v, pos);
    total += n;
    if (b->rank == rank) mine += n;
  }
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
  int64_t k = 0;
  for (int32_t id = 0; st == TSR_OK && id < nb; ++id) {
    const block_info_t *b = patch_block(sim->patch, id);
    if (b->rank != rank || slice_cells(b, a, h, v, pos) == 0) continue;
    st = sim_sample(sim, q, id, qv, err);
    if (st == TSR_OK && wq) st = sim_sample(sim, wq, id, wv, err);
    int64_t c[3];
    c[a] = pos - b->lo[a];
    for (c[v] = 0; st == TSR_OK && c[v] < b->size[v]; ++c[v])
      for (c[h] = 0; c[h] < b->size[h]; ++c[h]) {
        int64_t cell = (c[2] * b->size[1] + c[1]) * b->size[0] + c[0];
        double s2 = 0;
        for (int i = 0; i < q->components; ++i) s2 += qv[q->components * cell + i] * qv[q->components * cell + i];
        send[k++] = q->components == 1 ? qv[cell] : sqrt(s2);
        send[k++] = wq && wv[cell] != 0.0 ? 1.0 : 0.0;
      }
  }
  TSR_TRY(verdict_reduce(sim->comm, st, 0, err));

  /* rank 0 knows from the block metadata how much each rank sends */
  if (rank == 0) {
    for (int32_t id = 0; id < nb; ++id) {
      const block_info_t *b = patch_block(sim->patch, id);
      counts[b->rank] += (int)(2 * slice_cells(b, a, h, v, pos));
    }
    for (int r = 1; r < nranks; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  }
  TSR_MPI(MPI_Gatherv(send, (int)(2 * mine), MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, 0,
                      sim->comm));
  if (rank == 0) {
    for (int r = 0; r < nranks; ++r) {
      int64_t off = displs[r];
      for (int32_t id = 0; id < nb; ++id) {
        const block_info_t *b = patch_block(sim->patch, id);
        if (b->rank != r || slice_cells(b, a, h, v, pos) == 0) continue;
        for (int64_t j = 0; j < b->size[v]; ++j)
          for (int64_t i = 0; i < b->size[h]; ++i) {
            int64_t g = (b->lo[v] + j) * width + b->lo[h] + i;
            value[g] = recv[off++];
            wall[g] = recv[off++] != 0.0;
          }
      }
    }
    char path[OUTPUT_PATH_MAX], caption[96], label[80];
    static const char axis_name[3] = {'x', 'y', 'z'};
    snprintf(caption, sizeof caption, "%c=%lld step %lld", axis_name[a], (long long)pos,
             (long long)step);
    snprintf(label, sizeof label, q->components == 1 ? "%s" : "|%s|",
             q->components == 3 && strcmp(q->name, "velocity") == 0 ? "u" : q->name);
    image_options_t io = image_options_default();
    io.label = label;
    io.caption = caption;
    image_field_t field = {.width = (int)width, .height = (int)height, .values = value, .wall = wall};
    st = output_folder_file(out, path, sizeof path, err, "slice_%s_%06lld.png", slice->name,
                            (long long)step);
    if (st == TSR_OK) st = image_write_png(path, &field, &io, err);
  }
  st = verdict_reduce(sim->comm, st, 0, err);
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

MPI_Comm sim_comm(const sim_t *sim) { return sim->comm; }
patch_t *sim_patch(const sim_t *sim) { return sim->patch; }
registry_t *sim_registry(const sim_t *sim) { return sim->reg; }
uint64_t sim_fs(const sim_t *sim) { return sim->fs; }
tsr_status sim_run_kernel(sim_t *sim, const char *item, tsr_error_t *err) {
  return timeloop_run_kernel(sim->loop, item, err);
}
int sim_field_id(const sim_t *sim, const char *field) {
  int m, f;
  return sim_find_field(sim->decls, sim->nmodules, field, &m, &f) ? sim->field_id[m][f] : -1;
}
timeloop_timing_t sim_timing(const sim_t *sim) { return timeloop_timing(sim->loop); }
const timeloop_t *sim_timeloop(const sim_t *sim) { return sim->loop; }
int64_t sim_cells(const sim_t *sim) { return sim->cells; }
const plan_t *sim_plan(const sim_t *sim) { return sim->plan; }
const module_t *sim_modules(const sim_t *sim, int *n) {
  *n = sim->nmodules;
  return sim->modules;
}
const char *sim_fs_text(const sim_t *sim) { return sim->fs_text; }
