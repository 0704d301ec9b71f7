#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsr_file.h"
#include "verdict.h"

enum { CONFIG_PATH_MAX = 256 };

struct config_node {
  config_t *cfg;
  json_t *obj;                  /* borrowed from the document */
  char path[CONFIG_PATH_MAX];
  char **asked;                 /* keys read, present or not */
  size_t nasked;
};

struct config {
  json_t *root;
  char source[CONFIG_PATH_MAX];
  config_node_t **nodes;
  size_t nnodes;
  units_t units; /* of the measures (config_measure) */
};

/* ---- documents ---- */

tsr_status config_read_file(const char *path, char **text, size_t *len, tsr_error_t *err) {
  return tsr_file_read(path, (size_t)64 << 20, "a configuration file", text, len, err);
}

static void config_node_free(config_node_t *n) {
  if (!n) return;
  for (size_t i = 0; i < n->nasked; ++i) free(n->asked[i]);
  free(n->asked);
  free(n);
}

void config_free(config_t **cfg) {
  if (!cfg || !*cfg) return;
  config_t *c = *cfg;
  for (size_t i = 0; i < c->nnodes; ++i) config_node_free(c->nodes[i]);
  free(c->nodes);
  json_decref(c->root);
  free(c);
  *cfg = NULL;
}

const char *config_source(const config_t *cfg) { return cfg->source; }

void config_path_beside(const config_t *cfg, const char *file, char *path, size_t cap) {
  const char *source = config_source(cfg), *slash = strrchr(source, '/');
  if (file[0] == '/' || !slash)
    snprintf(path, cap, "%s", file);
  else
    snprintf(path, cap, "%.*s/%s", (int)(slash - source), source, file);
}
void config_set_units(config_t *cfg, const units_t *u) { cfg->units = *u; }
const units_t *config_units(const config_t *cfg) { return &cfg->units; }
config_node_t *config_root(config_t *cfg) { return cfg->nodes[0]; }
const char *config_path(const config_node_t *node) { return node->path; }

static const char *config_type_name(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: return "a string";
  case JSON_INTEGER: return "an integer";
  case JSON_REAL: return "a real number";
  case JSON_TRUE:
  case JSON_FALSE: return "a boolean";
  case JSON_NULL: return "null";
  }
  return "?";
}

/* The node of an object, made on first use. */
static tsr_status config_node_of(config_t *c, json_t *obj, const char *path, config_node_t **out,
                                 tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (size_t i = 0; i < c->nnodes; ++i)
    if (c->nodes[i]->obj == obj) {
      *out = c->nodes[i];
      goto cleanup;
    }
  config_node_t **grown = realloc(c->nodes, (c->nnodes + 1) * sizeof *grown);
  TSR_CHECK(grown, TSR_ERR_NOMEM, "out of memory reading the configuration");
  c->nodes = grown;
  config_node_t *n = calloc(1, sizeof *n);
  TSR_CHECK(n, TSR_ERR_NOMEM, "out of memory reading the configuration");
  n->cfg = c;
  n->obj = obj;
  snprintf(n->path, sizeof n->path, "%s", path);
  c->nodes[c->nnodes++] = n;
  *out = n;
cleanup:
  return st;
}

tsr_status config_parse(const char *text, size_t len, const char *source, config_t **out,
                        tsr_error_t *err) {
  tsr_status st = TSR_OK;
  json_error_t jerr;
  config_node_t *root;
  *out = NULL;
  config_t *c = calloc(1, sizeof *c);
  TSR_CHECK(c, TSR_ERR_NOMEM, "%s: out of memory reading the configuration", source);
  snprintf(c->source, sizeof c->source, "%s", source);
  c->units = units_none();
  c->root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
  TSR_CHECK(c->root, TSR_ERR_INVALID, "%s:%d:%d: %s", source, jerr.line, jerr.column, jerr.text);
  TSR_CHECK(json_is_object(c->root), TSR_ERR_INVALID,
            "%s: the top level must be an object {...}, got %s", source,
            config_type_name(c->root));
  TSR_TRY(config_node_of(c, c->root, "", &root, err));
  *out = c;
  c = NULL;
cleanup:
  config_free(&c);
  return st;
}

tsr_status config_load(MPI_Comm comm, const char *path, config_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char *text = NULL;
  size_t len = 0;
  int rank = 0;
  *out = NULL;
  TSR_MPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) st = config_read_file(path, &text, &len, err);
  st = verdict_reduce(comm, st, 0, err);
  if (st != TSR_OK) goto cleanup;
  uint64_t n = len;
  TSR_MPI(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, comm));
  if (rank != 0) {
    text = malloc((size_t)n + 1);
    st = text ? TSR_OK : tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__,
                                       "%s: out of memory receiving the config", path);
  }
  st = verdict_reduce(comm, st, 0, err);
  if (st != TSR_OK) goto cleanup;
  TSR_MPI(MPI_Bcast(text, (int)n, MPI_CHAR, 0, comm));
  text[n] = '\0';
  st = config_parse(text, (size_t)n, path, out, err);
  st = verdict_reduce(comm, st, 0, err);
  if (st != TSR_OK) config_free(out);
cleanup:
  free(text);
  return st;
}

/* ---- readers ---- */

/* out = a + sep + b (sep left out when a is empty), cut at CONFIG_PATH_MAX - 1 bytes: a
 * cut key path still makes a readable message. */
static void config_join(char out[CONFIG_PATH_MAX], const char *a, const char *sep, const char *b) {
  size_t n = 0;
  const char *parts[3] = {a, a[0] ? sep : "", b};
  for (int k = 0; k < 3; ++k)
    for (const char *p = parts[k]; *p && n < CONFIG_PATH_MAX - 1; ++p) out[n++] = *p;
  out[n] = '\0';
}

/* Records key as asked in node and returns its value (NULL when absent). A missing
 * required key is an error. kp gets the key path. */
static tsr_status config_ask(config_node_t *node, const char *key, bool required, json_t **value,
                             char kp[CONFIG_PATH_MAX], tsr_error_t *err) {
  tsr_status st = TSR_OK;
  config_join(kp, node->path, ".", key);
  bool known = false;
  for (size_t i = 0; i < node->nasked && !known; ++i) known = strcmp(node->asked[i], key) == 0;
  if (!known) {
    char **grown = realloc(node->asked, (node->nasked + 1) * sizeof *grown);
    TSR_CHECK(grown, TSR_ERR_NOMEM, "out of memory reading the configuration");
    node->asked = grown;
    size_t n = strlen(key) + 1;
    node->asked[node->nasked] = malloc(n);
    TSR_CHECK(node->asked[node->nasked], TSR_ERR_NOMEM, "out of memory reading the configuration");
    memcpy(node->asked[node->nasked++], key, n);
  }
  *value = json_object_get(node->obj, key);
  TSR_CHECK(*value || !required, TSR_ERR_INVALID, "%s: %s is missing", node->cfg->source, kp);
cleanup:
  return st;
}

#define CONFIG_FAIL(node, ...)                                                           \
  do {                                                                                   \
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__, __VA_ARGS__);           \
    tsr_error_prefix(err, "%s", (node)->cfg->source);                                    \
    goto cleanup;                                                                        \
  } while (0)

/* ---- values: one reader per JSON type; the scalar and triple readers below share them ---- */

/* Reads v (key path kp) into *out, written only when v is good; limits is the reader's
 * {min, max} or NULL. */
typedef tsr_status config_element_fn(const config_node_t *node, const json_t *v, const char *kp,
                                     const void *limits, void *out, tsr_error_t *err);

/* limits: const int64_t[2]; out: int64_t. */
static tsr_status config_int_element(const config_node_t *node, const json_t *v, const char *kp,
                                     const void *limits, void *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const int64_t min = ((const int64_t *)limits)[0], max = ((const int64_t *)limits)[1];
  if (!json_is_integer(v))
    CONFIG_FAIL(node, "%s: expected an integer in %lld..%lld, got %s", kp, (long long)min,
                (long long)max, config_type_name(v));
  json_int_t x = json_integer_value(v);
  if (x < min || x > max)
    CONFIG_FAIL(node, "%s = %lld: allowed are %lld..%lld", kp, (long long)x, (long long)min,
                (long long)max);
  *(int64_t *)out = (int64_t)x;
cleanup:
  return st;
}

/* limits: const double[2]; out: double. */
static tsr_status config_real_element(const config_node_t *node, const json_t *v, const char *kp,
                                      const void *limits, void *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const double min = ((const double *)limits)[0], max = ((const double *)limits)[1];
  if (!json_is_number(v))
    CONFIG_FAIL(node, "%s: expected a number in [%g, %g], got %s", kp, min, max,
                config_type_name(v));
  double x = json_number_value(v);
  if (!(x >= min && x <= max))
    CONFIG_FAIL(node, "%s = %g: allowed are numbers in [%g, %g]", kp, x, min, max);
  *(double *)out = x;
cleanup:
  return st;
}

/* limits: const config_measure_limits_t; out: double, in lattice units. */
typedef struct config_measure_limits {
  double min, max; /* of the lattice value */
  units_dim_t dim;
} config_measure_limits_t;

static tsr_status config_measure_element(const config_node_t *node, const json_t *v,
                                         const char *kp, const void *limits, void *out,
                                         tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const config_measure_limits_t *l = limits;
  const units_t *u = &node->cfg->units;
  if (!u->on) return config_real_element(node, v, kp, (const double[2]){l->min, l->max}, out, err);
  char unit[48];
  units_name(l->dim, unit, sizeof unit);
  const double lo = units_to_physical(u, l->dim, l->min), hi = units_to_physical(u, l->dim, l->max);
  if (!json_is_number(v))
    CONFIG_FAIL(node, "%s: expected a number in [%g, %g] %s, got %s", kp, lo, hi, unit,
                config_type_name(v));
  const double x = json_number_value(v), lattice = units_to_lattice(u, l->dim, x);
  if (!(lattice >= l->min && lattice <= l->max))
    CONFIG_FAIL(node, "%s = %g %s (%g in lattice units): allowed are [%g, %g] %s ([%g, %g] in "
                "lattice units)", kp, x, unit, lattice, lo, hi, unit, l->min, l->max);
  *(double *)out = lattice;
cleanup:
  return st;
}

/* limits: NULL; out: bool. */
static tsr_status config_bool_element(const config_node_t *node, const json_t *v, const char *kp,
                                      const void *limits, void *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  if (!json_is_boolean(v)) CONFIG_FAIL(node, "%s: expected true or false, got %s", kp, config_type_name(v));
  *(bool *)out = json_is_true(v);
cleanup:
  return st;
}

static tsr_status config_triple(const config_node_t *node, const json_t *v, const char *kp,
                                tsr_error_t *err) {
  tsr_status st = TSR_OK;
  if (!json_is_array(v))
    CONFIG_FAIL(node, "%s: expected an array of 3 values [x, y, z], got %s", kp, config_type_name(v));
  if (json_array_size(v) != 3)
    CONFIG_FAIL(node, "%s: expected 3 values [x, y, z], got %zu", kp, json_array_size(v));
cleanup:
  return st;
}

tsr_status config_object(config_node_t *node, const char *key, bool required, config_node_t **out,
                         tsr_error_t *err) {
  tsr_status st = TSR_OK;
  json_t *v;
  char kp[CONFIG_PATH_MAX];
  *out = NULL;
  TSR_TRY(config_ask(node, key, required, &v, kp, err));
  if (!v) goto cleanup;
  if (!json_is_object(v)) CONFIG_FAIL(node, "%s: expected an object {...}, got %s", kp, config_type_name(v));
  TSR_TRY(config_node_of(node->cfg, v, kp, out, err));
cleanup:
  return st;
}

/* A scalar: *value is left alone when the key is absent and not required. */
static tsr_status config_read1(config_node_t *node, const char *key, bool required,
                               config_element_fn *read, const void *limits, void *value,
                               tsr_error_t *err) {
  tsr_status st = TSR_OK;
  json_t *v;
  char kp[CONFIG_PATH_MAX];
  TSR_TRY(config_ask(node, key, required, &v, kp, err));
  if (v) TSR_TRY(read(node, v, kp, limits, value, err));
cleanup:
  return st;
}

/* A triple [x, y, z] of elements of elem_size bytes: value[3] is written only when all
 * three are good; "key[i]" names a bad one. */
static tsr_status config_read3(config_node_t *node, const char *key, bool required,
                               config_element_fn *read, const void *limits, size_t elem_size,
                               void *value, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  json_t *v;
  char kp[CONFIG_PATH_MAX], sub[CONFIG_PATH_MAX + 8];
  union {
    int64_t i[3];
    double r[3];
    bool b[3];
  } tmp;
  TSR_TRY(config_ask(node, key, required, &v, kp, err));
  if (!v) goto cleanup;
  TSR_TRY(config_triple(node, v, kp, err));
  for (size_t i = 0; i < 3; ++i) {
    snprintf(sub, sizeof sub, "%s[%zu]", kp, i);
    TSR_TRY(read(node, json_array_get(v, i), sub, limits, (unsigned char *)&tmp + i * elem_size, err));
  }
  memcpy(value, &tmp, 3 * elem_size);
cleanup:
  return st;
}

tsr_status config_int(config_node_t *node, const char *key, bool required, int64_t min,
                      int64_t max, int64_t *value, tsr_error_t *err) {
  const int64_t limits[2] = {min, max};
  return config_read1(node, key, required, config_int_element, limits, value, err);
}

tsr_status config_real(config_node_t *node, const char *key, bool required, double min,
                       double max, double *value, tsr_error_t *err) {
  const double limits[2] = {min, max};
  return config_read1(node, key, required, config_real_element, limits, value, err);
}

tsr_status config_measure(config_node_t *node, const char *key, bool required, units_dim_t dim,
                          double min, double max, double *value, tsr_error_t *err) {
  const config_measure_limits_t limits = {min, max, dim};
  return config_read1(node, key, required, config_measure_element, &limits, value, err);
}

tsr_status config_measure3(config_node_t *node, const char *key, bool required, units_dim_t dim,
                           double min, double max, double value[3], tsr_error_t *err) {
  const config_measure_limits_t limits = {min, max, dim};
  return config_read3(node, key, required, config_measure_element, &limits, sizeof *value, value,
                      err);
}

tsr_status config_bool(config_node_t *node, const char *key, bool required, bool *value,
                       tsr_error_t *err) {
  return config_read1(node, key, required, config_bool_element, NULL, value, err);
}

tsr_status config_int3(config_node_t *node, const char *key, bool required, int64_t min,
                       int64_t max, int64_t value[3], tsr_error_t *err) {
  const int64_t limits[2] = {min, max};
  return config_read3(node, key, required, config_int_element, limits, sizeof *value, value, err);
}

tsr_status config_real3(config_node_t *node, const char *key, bool required, double min,
                        double max, double value[3], tsr_error_t *err) {
  const double limits[2] = {min, max};
  return config_read3(node, key, required, config_real_element, limits, sizeof *value, value, err);
}

tsr_status config_bool3(config_node_t *node, const char *key, bool required, bool value[3],
                        tsr_error_t *err) {
  return config_read3(node, key, required, config_bool_element, NULL, sizeof *value, value, err);
}

int config_name_index(const char *const *names, const char *s) {
  for (int i = 0; s && names[i]; ++i)
    if (strcmp(names[i], s) == 0) return i;
  return -1;
}

tsr_status config_choice(config_node_t *node, const char *key, bool required,
                         const char *const *choices, int *value, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  json_t *v;
  char kp[CONFIG_PATH_MAX], list[512] = "";
  size_t used = 0;
  for (const char *const *c = choices; *c && used < sizeof list; ++c) {
    int n = snprintf(list + used, sizeof list - used, "%s\"%s\"", used ? ", " : "", *c);
    if (n < 0) break;
    used += (size_t)n;
  }
  TSR_TRY(config_ask(node, key, required, &v, kp, err));
  if (!v) goto cleanup;
  if (!json_is_string(v)) CONFIG_FAIL(node, "%s: expected one of %s, got %s", kp, list, config_type_name(v));
  const int i = config_name_index(choices, json_string_value(v));
  if (i >= 0) {
    *value = i;
    goto cleanup;
  }
  CONFIG_FAIL(node, "%s = \"%.64s\": allowed are %s", kp, json_string_value(v), list);
cleanup:
  return st;
}

tsr_status config_choice_or_range(config_node_t *node, const char *key,
                                  const char *const *choices, int *choice, double range[2],
                                  tsr_error_t *err) {
  tsr_status st = TSR_OK;
  json_t *v;
  char kp[CONFIG_PATH_MAX];
  TSR_TRY(config_ask(node, key, false, &v, kp, err));
  if (!v) goto cleanup;
  if (json_is_string(v)) {
    TSR_TRY(config_choice(node, key, false, choices, choice, err));
    goto cleanup;
  }
  const json_t *a = json_array_get(v, 0), *b = json_array_get(v, 1);
  if (!json_is_array(v) || json_array_size(v) != 2 || !json_is_number(a) || !json_is_number(b) ||
      !(json_number_value(a) < json_number_value(b)) || !isfinite(json_number_value(a)) ||
      !isfinite(json_number_value(b)))
    CONFIG_FAIL(node, "%s: expected [min, max] with min < max, or one of \"%s\", \"%s\"", kp,
                choices[0], choices[1]);
  *choice = -1;
  range[0] = json_number_value(a);
  range[1] = json_number_value(b);
cleanup:
  return st;
}

tsr_status config_string(config_node_t *node, const char *key, bool required, char *value,
                         size_t cap, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  json_t *v;
  char kp[CONFIG_PATH_MAX];
  TSR_TRY(config_ask(node, key, required, &v, kp, err));
  if (!v) goto cleanup;
  if (!json_is_string(v)) CONFIG_FAIL(node, "%s: expected a string, got %s", kp, config_type_name(v));
  size_t n = json_string_length(v);
  if (n + 1 > cap) CONFIG_FAIL(node, "%s: %zu characters; at most %zu are allowed", kp, n, cap - 1);
  if (strlen(json_string_value(v)) != n) CONFIG_FAIL(node, "%s: contains a NUL character", kp);
  memcpy(value, json_string_value(v), n + 1);
cleanup:
  return st;
}

tsr_status config_strings(config_node_t *node, const char *key, bool required, size_t max,
                          size_t cap, char *values, size_t *count, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  json_t *v;
  char kp[CONFIG_PATH_MAX];
  TSR_TRY(config_ask(node, key, required, &v, kp, err));
  if (!v) goto cleanup;
  if (!json_is_array(v)) CONFIG_FAIL(node, "%s: expected an array of strings [\"...\", ...], got %s", kp, config_type_name(v));
  if (json_array_size(v) > max)
    CONFIG_FAIL(node, "%s: %zu items; at most %zu are allowed", kp, json_array_size(v), max);
  for (size_t i = 0; i < json_array_size(v); ++i) {
    json_t *item = json_array_get(v, i);
    if (!json_is_string(item))
      CONFIG_FAIL(node, "%s[%zu]: expected a string, got %s", kp, i, config_type_name(item));
    size_t n = json_string_length(item);
    if (n + 1 > cap)
      CONFIG_FAIL(node, "%s[%zu]: %zu characters; at most %zu are allowed", kp, i, n, cap - 1);
    if (strlen(json_string_value(item)) != n) CONFIG_FAIL(node, "%s[%zu]: contains a NUL character", kp, i);
  }
  *count = json_array_size(v);
  for (size_t i = 0; i < *count; ++i)
    memcpy(values + i * cap, json_string_value(json_array_get(v, i)),
           json_string_length(json_array_get(v, i)) + 1);
cleanup:
  return st;
}

tsr_status config_list(config_node_t *node, const char *key, size_t *count, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  json_t *v;
  char kp[CONFIG_PATH_MAX];
  *count = 0;
  TSR_TRY(config_ask(node, key, false, &v, kp, err));
  if (!v) goto cleanup;
  if (!json_is_array(v)) CONFIG_FAIL(node, "%s: expected an array [{...}, ...], got %s", kp, config_type_name(v));
  *count = json_array_size(v);
cleanup:
  return st;
}

tsr_status config_list_item(config_node_t *node, const char *key, size_t i, config_node_t **out,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  json_t *v;
  char kp[CONFIG_PATH_MAX], sub[CONFIG_PATH_MAX + 24];
  *out = NULL;
  TSR_TRY(config_ask(node, key, true, &v, kp, err));
  if (!json_is_array(v) || i >= json_array_size(v))
    CONFIG_FAIL(node, "%s[%zu]: no such item", kp, i);
  json_t *item = json_array_get(v, i);
  snprintf(sub, sizeof sub, "%s[%zu]", kp, i);
  if (!json_is_object(item)) CONFIG_FAIL(node, "%s: expected an object {...}, got %s", sub, config_type_name(item));
  TSR_TRY(config_node_of(node->cfg, item, sub, out, err));
cleanup:
  return st;
}

tsr_status config_check_unknown(const config_t *cfg, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (size_t k = 0; k < cfg->nnodes; ++k) {
    const config_node_t *n = cfg->nodes[k];
    const char *key;
    json_t *value;
    json_object_foreach(n->obj, key, value) {
      bool ok = false;
      for (size_t i = 0; i < n->nasked && !ok; ++i) ok = strcmp(n->asked[i], key) == 0;
      if (ok) continue;
      char list[1024] = "";
      size_t used = 0;
      for (size_t i = 0; i < n->nasked && used < sizeof list; ++i) {
        int m = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", n->asked[i]);
        if (m < 0) break;
        used += (size_t)m;
      }
      TSR_FAIL(TSR_ERR_INVALID, "%s: unknown key '%s%s%.200s'; allowed %s%s are: %s", cfg->source,
               n->path, n->path[0] ? "." : "", key, n->path[0] ? "in " : "at the top level",
               n->path, n->nasked ? list : "(none)");
    }
  }
cleanup:
  return st;
}

/* ---- overrides ---- */

/* One step of a key path: a key ("lbm") or an array index ("[2]"). */
typedef struct config_step {
  bool is_index;
  size_t index;
  char key[CONFIG_PATH_MAX];
} config_step_t;

/* Reads the step at *p (after a '.' or at the start: a key; at '[': an index) and moves
 * *p past it; false for a malformed step. */
static bool config_next_step(const char **p, bool first, config_step_t *s) {
  const char *q = *p;
  memset(s, 0, sizeof *s);
  if (*q == '[') {
    char *end = NULL;
    if (q[1] < '0' || q[1] > '9') return false;
    errno = 0;
    unsigned long long v = strtoull(q + 1, &end, 10);
    if (errno || *end != ']' || v > (unsigned long long)SIZE_MAX) return false;
    s->is_index = true;
    s->index = (size_t)v;
    *p = end + 1;
    return true;
  }
  if (!first) {
    if (*q != '.') return false;
    ++q;
  }
  size_t n = strcspn(q, ".[]");
  if (n == 0 || n >= sizeof s->key || q[n] == ']') return false;
  memcpy(s->key, q, n);
  *p = q + n;
  return true;
}

/* Puts value (borrowed) at key path path; what names the override in messages ("--set
 * a.b=1", "--output"). */
static tsr_status config_put(config_t *cfg, const char *what, const char *path, json_t *value,
                             tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char done[CONFIG_PATH_MAX] = "";
  TSR_CHECK(cfg->nnodes == 1 && cfg->nodes[0]->nasked == 0, TSR_ERR_INVALID,
            "%.200s: the configuration has been read already", what);
  config_step_t s;
  const char *p = path;
  for (bool first = true; *p || first; first = false) /* the whole path's form first */
    TSR_CHECK(config_next_step(&p, first, &s), TSR_ERR_INVALID,
              "%.200s: '%s' is not a key path (keys joined by '.', array items as [i], e.g. "
              "obstacles[0].radius)",
              what, path);
  json_t *at = cfg->root; /* an object or an array, where the next step goes */
  p = path;
  for (bool first = true;; first = false) {
    if (!config_next_step(&p, first, &s)) break; /* checked above */
    bool last = *p == '\0';
    char here[CONFIG_PATH_MAX];
    if (s.is_index) {
      TSR_CHECK(json_is_array(at), TSR_ERR_INVALID, "%s: %s is %s, not an array (%.200s)",
                cfg->source, done[0] ? done : "the top level", config_type_name(at), what);
      TSR_CHECK(s.index < json_array_size(at), TSR_ERR_INVALID,
                "%.200s: %s has %zu item(s); [%zu] does not exist", what, done,
                json_array_size(at), s.index);
      char index[32];
      snprintf(index, sizeof index, "[%zu]", s.index);
      config_join(here, done, "", index);
      if (last) {
        TSR_CHECK(json_array_set(at, s.index, value) == 0, TSR_ERR_NOMEM,
                  "%.200s: out of memory", what);
        break;
      }
      at = json_array_get(at, s.index);
    }
    else {
      TSR_CHECK(json_is_object(at), TSR_ERR_INVALID, "%s: %s is %s, not an object (%.200s)",
                cfg->source, done, config_type_name(at), what);
      config_join(here, done, ".", s.key);
      if (last) {
        TSR_CHECK(json_object_set(at, s.key, value) == 0, TSR_ERR_NOMEM,
                  "%.200s: out of memory", what);
        break;
      }
      json_t *next = json_object_get(at, s.key);
      TSR_CHECK(next || *p != '[', TSR_ERR_INVALID,
                "%.200s: %s is missing; an array item must exist to be set", what, here);
      if (!next) { /* a section the file leaves out */
        next = json_object();
        TSR_CHECK(next && json_object_set_new(at, s.key, next) == 0, TSR_ERR_NOMEM,
                  "%.200s: out of memory", what);
      }
      at = next;
    }
    snprintf(done, sizeof done, "%s", here);
    TSR_CHECK(json_is_object(at) || json_is_array(at), TSR_ERR_INVALID,
              "%s: %s is %s, not an object (%.200s)", cfg->source, done, config_type_name(at),
              what);
  }
cleanup:
  return st;
}

tsr_status config_set(config_t *cfg, const char *assignment, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  json_t *value = NULL;
  char path[CONFIG_PATH_MAX], what[CONFIG_PATH_MAX + 16];
  snprintf(what, sizeof what, "--set %.200s", assignment);
  const char *eq = strchr(assignment, '=');
  TSR_CHECK(eq && eq != assignment, TSR_ERR_INVALID,
            "%s: expected PATH=VALUE, e.g. --set steps=1000", what);
  TSR_CHECK((size_t)(eq - assignment) < sizeof path, TSR_ERR_INVALID,
            "%s: the key path is longer than %zu characters", what, sizeof path - 1);
  memcpy(path, assignment, (size_t)(eq - assignment));
  path[eq - assignment] = '\0';
  json_error_t jerr;
  value = json_loads(eq + 1, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
  TSR_CHECK(value, TSR_ERR_INVALID,
            "%s: the value is not JSON (%s); a string needs its quotes: --set '%s=\"...\"'",
            what, jerr.text, path);
  TSR_TRY(config_put(cfg, what, path, value, err));
cleanup:
  json_decref(value);
  return st;
}

tsr_status config_set_string(config_t *cfg, const char *option, const char *path,
                             const char *value, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  json_t *v = json_string(value);
  TSR_CHECK(v, TSR_ERR_INVALID, "%s: '%.200s' is not UTF-8 text", option, value);
  TSR_TRY(config_put(cfg, option, path, v, err));
cleanup:
  json_decref(v);
  return st;
}

/* A growing text (config_text). */
typedef struct config_buf {
  char *text;
  size_t len, cap;
  bool failed;
} config_buf_t;

static void config_put_text(config_buf_t *b, const char *t, size_t n) {
  if (b->failed) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 1024;
    while (b->len + n + 1 > cap) cap *= 2;
    char *grown = realloc(b->text, cap);
    if (!grown) {
      b->failed = true;
      return;
    }
    b->text = grown;
    b->cap = cap;
  }
  memcpy(b->text + b->len, t, n);
  b->len += n;
  b->text[b->len] = '\0';
}

static void config_puts(config_buf_t *b, const char *t) { config_put_text(b, t, strlen(t)); }

static void config_indent(config_buf_t *b, int depth) {
  config_puts(b, "\n");
  for (int i = 0; i < depth; ++i) config_puts(b, "  ");
}

/* A real as the shortest of %.15g, %.16g and %.17g that reads back as the same double,
 * kept a real (".0" added to an integral value): a run from the written text is the same
 * run. */
static void config_real_text(double v, char t[40]) {
  for (int digits = 15; digits <= 17; ++digits) {
    snprintf(t, 40, "%.*g", digits, v);
    if (strtod(t, NULL) == v) break;
  }
  if (!strpbrk(t, ".eE")) strcat(t, ".0");
}

static void config_put_real(config_buf_t *b, double v) {
  char t[40];
  config_real_text(v, t);
  config_puts(b, t);
}

/* v as JSON text: objects one key per line, arrays of scalars on one line. */
static void config_put_value(config_buf_t *b, const json_t *v, int depth) {
  if (json_is_object(v)) {
    const char *key;
    json_t *item;
    bool first = true;
    config_puts(b, "{");
    json_object_foreach((json_t *)v, key, item) {
      config_puts(b, first ? "" : ",");
      first = false;
      config_indent(b, depth + 1);
      json_t *k = json_string(key);
      char *kt = k ? json_dumps(k, JSON_ENCODE_ANY) : NULL;
      if (!kt) b->failed = true;
      else config_puts(b, kt);
      free(kt);
      json_decref(k);
      config_puts(b, ": ");
      config_put_value(b, item, depth + 1);
    }
    if (!first) config_indent(b, depth);
    config_puts(b, "}");
  }
  else if (json_is_array(v)) {
    bool flat = true;
    for (size_t i = 0; i < json_array_size(v); ++i) {
      const json_t *item = json_array_get(v, i);
      flat = flat && !json_is_object(item) && !json_is_array(item);
    }
    config_puts(b, "[");
    for (size_t i = 0; i < json_array_size(v); ++i) {
      config_puts(b, i ? (flat ? ", " : ",") : "");
      if (!flat) config_indent(b, depth + 1);
      config_put_value(b, json_array_get(v, i), depth + 1);
    }
    if (!flat && json_array_size(v)) config_indent(b, depth);
    config_puts(b, "]");
  }
  else if (json_is_real(v))
    config_put_real(b, json_real_value(v));
  else {
    char *t = json_dumps(v, JSON_ENCODE_ANY);
    if (!t) b->failed = true;
    else config_puts(b, t);
    free(t);
  }
}

char *config_text(const config_t *cfg) {
  config_buf_t b = {.text = NULL};
  config_put_value(&b, cfg->root, 0);
  config_puts(&b, "\n");
  if (b.failed) {
    free(b.text);
    return NULL;
  }
  return b.text;
}

char *config_canonical(const config_t *cfg, const char *const *skip, size_t nskip) {
  json_t *copy = json_deep_copy(cfg->root);
  for (size_t i = 0; copy && i < nskip; ++i) {
    char path[CONFIG_PATH_MAX];
    snprintf(path, sizeof path, "%s", skip[i]);
    json_t *at = copy;
    char *key = path;
    for (char *dot; at && (dot = strchr(key, '.')); key = dot + 1) {
      *dot = '\0';
      at = json_object_get(at, key);
    }
    if (json_is_object(at)) json_object_del(at, key);
  }
  char *text = copy ? json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17)) : NULL;
  json_decref(copy);
  return text;
}

uint64_t config_text_hash(const char *text) {
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64 */
  for (const char *c = text; c && *c; ++c) h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
  return h;
}

uint64_t config_hash(const config_t *cfg, const char *const *skip, size_t nskip) {
  char *text = config_canonical(cfg, skip, nskip);
  uint64_t h = config_text_hash(text);
  free(text);
  return h;
}

/* The first difference between a and b under key path kp (config_difference). */
static bool config_diff_at(const json_t *a, const json_t *b, const char *kp, char *out, size_t cap) {
  if (json_equal((json_t *)a, (json_t *)b)) return false;
  if (json_is_object(a) && json_is_object(b)) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)a, key, v) {
      char sub[CONFIG_PATH_MAX];
      config_join(sub, kp, ".", key);
      json_t *w = json_object_get(b, key);
      if (!w) {
        snprintf(out, cap, "%s is given there, missing here", sub);
        return true;
      }
      if (config_diff_at(v, w, sub, out, cap)) return true;
    }
    json_object_foreach((json_t *)b, key, v) {
      if (json_object_get(a, key)) continue;
      char sub[CONFIG_PATH_MAX];
      config_join(sub, kp, ".", key);
      snprintf(out, cap, "%s is missing there, given here", sub);
      return true;
    }
    return false;
  }
  char *ta = json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
  char *tb = json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
  char ra[40], rb[40]; /* reals with the digits they need */
  if (json_is_real(a)) config_real_text(json_real_value(a), ra);
  if (json_is_real(b)) config_real_text(json_real_value(b), rb);
  snprintf(out, cap, "%s is %.80s there, %.80s here", kp[0] ? kp : "the document",
           json_is_real(a) ? ra : ta ? ta : "?", json_is_real(b) ? rb : tb ? tb : "?");
  free(ta);
  free(tb);
  return true;
}

bool config_difference(const char *there, const char *here, char *out, size_t cap) {
  json_error_t e;
  json_t *a = json_loads(there, 0, &e), *b = json_loads(here, 0, &e);
  out[0] = '\0';
  bool differ = a && b && config_diff_at(a, b, "", out, cap);
  json_decref(a);
  json_decref(b);
  return differ;
}
