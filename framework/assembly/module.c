/* module: the modules of a simulation and their declarations (module.h): reading them
 * from the configuration, registering them, and what the assembly and the modules ask of
 * the declarations. */
#include "module.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  /* the whole list first: what no setting of a module can mend comes before its settings */
  for (size_t i = 0; i < count; ++i) {
    const module_def_t *def = module_find(defs, names[i]);
    TSR_CHECK(def, TSR_ERR_INVALID, "%s: modules[%zu] = \"%s\": no such module; there are %s",
              config_source(cfg), i, names[i], list);
    for (size_t j = 0; j < i; ++j)
      TSR_CHECK(strcmp(names[j], names[i]) != 0, TSR_ERR_INVALID,
                "%s: modules[%zu] = \"%s\": given twice", config_source(cfg), i, names[i]);
    TSR_CHECK(!so->units.on || def->physical_units, TSR_ERR_INVALID,
              "%s: modules[%zu] = \"%s\" reads its settings in lattice units only: it cannot "
              "run with a units section (remove units, and give every value in lattice units)",
              config_source(cfg), i, names[i]);
  }
  for (size_t i = 0; i < count; ++i) {
    out[*n] = (module_t){.def = module_find(defs, names[i])};
    TSR_TRY(out[*n].def->read(cfg, so, &out[*n].state, err));
    ++*n;
  }
cleanup:
  if (st != TSR_OK) {
    module_free_all(out, *n);
    *n = 0;
  }
  return st;
}

/* The field called name among the declarations, as (module, index); false if none. */
bool module_field_index(const module_decl_t *decls, int n, const char *name, int *m, int *f) {
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
    TSR_CHECK(module_field_index(decls, n, names[i], &m, &f), TSR_ERR_INVALID,
              "module \"%s\", sweep \"%s\" %s field \"%s\", which no module of this run "
              "declares (add the module that declares it to \"modules\")",
              mod->def->name, sw->name, what, names[i]);
cleanup:
  return st;
}

/* The first quantity called name among the declarations, as (module, index); false if
 * none. */
bool module_quantity_index(const module_decl_t *decls, int n, const char *name, int *m,
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
void module_quantity_list(const module_decl_t *decls, int n, char *out, size_t cap) {
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

bool module_name_in(const char *const *names, int count, const char *name) {
  for (int i = 0; i < count; ++i)
    if (strcmp(names[i], name) == 0) return true;
  return false;
}

static bool module_named_in(const simulation_quantities_t *q, const char *name) {
  for (int i = 0; i < q->n; ++i)
    if (strcmp(q->names[i], name) == 0) return true;
  return false;
}

bool module_env_named(const module_env_t *env, const char *quantity) {
  const simulation_options_t *so = env->so;
  if (module_name_in(env->sampled, env->nsampled, quantity)) return true;
  if (!so) return false;
  if (module_named_in(&so->quantities, quantity)) return true;
  for (int p = 0; p < so->nprobes; ++p)
    if (module_named_in(&so->probes[p].quantities, quantity)) return true;
  for (int s = 0; s < so->nslices; ++s)
    if (strcmp(so->slices[s].quantity, quantity) == 0) return true;
  return false;
}

tsr_status module_points_add(module_points_t *p, int64_t cell, const double xyz[3],
                             const double *values, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  if (p->n == p->cap) {
    const int64_t cap = p->cap ? 2 * p->cap : 256;
    int64_t *c = realloc(p->cell, (size_t)cap * sizeof *c);
    if (c) p->cell = c;
    double *x = c ? realloc(p->xyz, 3 * (size_t)cap * sizeof *x) : NULL;
    if (x) p->xyz = x;
    double *v = x ? realloc(p->values, (size_t)(p->width ? p->width : 1) * (size_t)cap * sizeof *v)
                  : NULL;
    if (v) p->values = v;
    TSR_CHECK(v, TSR_ERR_NOMEM, "out of memory for %lld surface points", (long long)cap);
    p->cap = cap;
  }
  p->cell[p->n] = cell;
  memcpy(p->xyz + 3 * p->n, xyz, 3 * sizeof *xyz);
  memcpy(p->values + (size_t)p->width * (size_t)p->n, values, (size_t)p->width * sizeof *values);
  ++p->n;
cleanup:
  return st;
}

void module_points_free(module_points_t *p) {
  free(p->cell);
  free(p->xyz);
  free(p->values);
  *p = (module_points_t){.width = p->width};
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
  return module_field_index(decls, n, name, &m, &f) ? &decls[m].fields[f] : NULL;
}

tsr_status module_check_precision(const module_decl_t *decls, int n, const char *module,
                                  const char *field, int value_bytes, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const module_field_t *f = module_find_field(decls, n, field);
  TSR_CHECK(f && f->value_bytes == value_bytes, TSR_ERR_INVALID,
            "%s.precision = \"%s\" but the field %s is in %s: the coupled modules exchange "
            "fields per cell and need the same precision",
            module, value_bytes == 8 ? "dp" : "sp", field,
            !f ? "no module" : f->value_bytes == 8 ? "dp" : "sp");
cleanup:
  return st;
}

bool module_reads_ghosts(const module_decl_t *decls, int n, const char *field) {
  for (int m = 0; m < n; ++m)
    for (int s = 0; s < decls[m].nsweeps; ++s)
      if (module_name_in(decls[m].sweeps[s].reads_ghosts, decls[m].sweeps[s].nreads_ghosts,
                         field))
        return true;
  return false;
}

bool module_reads(const module_decl_t *decls, int n, const char *field) {
  for (int m = 0; m < n; ++m)
    for (int s = 0; s < decls[m].nsweeps; ++s) {
      const module_sweep_t *sw = &decls[m].sweeps[s];
      if (module_name_in(sw->reads, sw->nreads, field) ||
          module_name_in(sw->reads_ghosts, sw->nreads_ghosts, field))
        return true;
    }
  return false;
}

bool module_writes_before(const module_decl_t *decls, int self, const char *field) {
  for (int m = 0; m < self; ++m)
    for (int s = 0; s < decls[m].nsweeps; ++s)
      if (module_name_in(decls[m].sweeps[s].writes, decls[m].sweeps[s].nwrites, field)) return true;
  return false;
}

/* Removes name from names[*count], keeping the order. */
static void module_drop_name(const char **names, int *count, const char *name) {
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
    module_drop_name(sw->writes, &sw->nwrites, field);
    module_drop_name(sw->reads, &sw->nreads, field);
    module_drop_name(sw->reads_ghosts, &sw->nreads_ghosts, field);
  }
}

tsr_status module_register_all(module_t *modules, int n, registry_t *reg, const module_env_t *env,
                        module_decl_t *decls, uint64_t *fs, char *fs_text, size_t cap,
                        tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char text[MODULE_FS_MAX] = "";
  size_t used = 0;
  const char *sampled[MODULE_MAX * MODULE_MAX_QUANTITIES];
  module_env_t e = *env;
  e.sampled = sampled;
  e.nsampled = 0;
  for (int m = 0; m < n; ++m)
    for (const char *const *q = modules[m].def->samples ? modules[m].def->samples(modules[m].state)
                                                         : NULL;
         q && *q; ++q) {
      TSR_CHECK(e.nsampled < MODULE_MAX * MODULE_MAX_QUANTITIES, TSR_ERR_INVALID,
                "the modules sample more than %d quantities", MODULE_MAX * MODULE_MAX_QUANTITIES);
      sampled[e.nsampled++] = *q;
    }
  e.decls = decls;
  for (int m = 0; m < n; ++m) {
    const module_def_t *def = modules[m].def;
    decls[m] = (module_decl_t){.nfields = 0};
    e.ndecls = m;
    if (def->register_items)
      TSR_TRY(def->register_items(modules[m].state, reg, &e, &decls[m], err));
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
      (void)module_field_index(decls, n, decls[m].fields[f].name, &m2, &f2);
      TSR_CHECK(m2 == m && f2 == f, TSR_ERR_INVALID,
                "field \"%s\" is declared by module \"%s\" and by module \"%s\"",
                decls[m].fields[f].name, modules[m2].def->name, modules[m].def->name);
    }
    for (int q = 0; q < decls[m].nquantities; ++q) {
      int m2 = m, q2 = q;
      (void)module_quantity_index(decls, n, decls[m].quantities[q].name, &m2, &q2);
      TSR_CHECK(m2 == m && q2 == q, TSR_ERR_INVALID,
                "quantity \"%s\" is declared by module \"%s\" and by module \"%s\"",
                decls[m].quantities[q].name, modules[m2].def->name, modules[m].def->name);
    }
  }
  for (int m = 0; m < n; ++m) {
    for (int s = 0; s < decls[m].nsweeps + decls[m].nstart_sweeps; ++s) {
      const module_sweep_t *sw = s < decls[m].nsweeps ? &decls[m].sweeps[s]
                                                      : &decls[m].start_sweeps[s - decls[m].nsweeps];
      TSR_TRY(sim_check_access(&modules[m], decls, n, sw, sw->reads_ghosts, sw->nreads_ghosts,
                               "reads the ghost layers of", err));
      TSR_TRY(sim_check_access(&modules[m], decls, n, sw, sw->reads, sw->nreads, "reads", err));
      TSR_TRY(sim_check_access(&modules[m], decls, n, sw, sw->writes, sw->nwrites, "writes", err));
    }
  }
cleanup:
  return st;
}

char *module_config_physics(const config_t *doc, const module_t *modules, int n) {
  /* units.output: the units outputs are written in, not the run's physics */
  const char *skip[64] = {"output", "hardware", "steps", "stop", "check_every", "units.output"};
  size_t nskip = 6;
  for (int m = 0; m < n; ++m)
    for (const char *const *k = modules[m].def->restart_keys; k && *k && nskip < 64; ++k)
      skip[nskip++] = *k;
  return config_canonical(doc, skip, nskip);
}

/* Appends f to decl's fields. */
static tsr_status module_append_field(module_decl_t *decl, module_field_t f, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(decl->nfields < MODULE_MAX_FIELDS, TSR_ERR_INVALID,
            "field \"%s\": a module declares at most %d fields", f.name, MODULE_MAX_FIELDS);
  decl->fields[decl->nfields++] = f;
cleanup:
  return st;
}

tsr_status module_declare_data(module_decl_t *decl, const char *name, tsr_error_t *err) {
  return module_append_field(decl, (module_field_t){.name = name}, err);
}

tsr_status module_declare_field(module_decl_t *decl, registry_t *reg, const module_env_t *env,
                                const field_spec_t *spec, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(field_declare(reg, env->fields, spec, err));
  if (decl)
    TSR_TRY(module_append_field(decl, (module_field_t){
        .name = spec->name, .components = spec->components, .value_bytes = (int)spec->esize,
        .width = {spec->width[0], spec->width[1], spec->width[2]}}, err));
cleanup:
  return st;
}
