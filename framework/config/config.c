#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
};

/* ---- documents ---- */

tsr_status config_read_file(const char *path, char **text, size_t *len, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  FILE *f = NULL;
  char *buf = NULL;
  *text = NULL;
  *len = 0;
  f = fopen(path, "rb");
  TSR_CHECK(f, TSR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 4096, n = 0;
  buf = malloc(cap);
  TSR_CHECK(buf, TSR_ERR_NOMEM, "%s: out of memory reading the file", path);
  for (;;) {
    if (n + 1 >= cap) {
      TSR_CHECK(cap < ((size_t)64 << 20), TSR_ERR_INVALID,
                "%s: larger than 64 MiB; not a configuration file", path);
      char *grown = realloc(buf, 2 * cap);
      TSR_CHECK(grown, TSR_ERR_NOMEM, "%s: out of memory reading the file", path);
      buf = grown;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - 1 - n, f);
    n += got;
    if (got == 0) break;
  }
  TSR_CHECK(!ferror(f), TSR_ERR_IO, "%s: read error: %s", path, strerror(errno));
  buf[n] = '\0';
  *text = buf;
  *len = n;
  buf = NULL;
cleanup:
  if (f) fclose(f);
  free(buf);
  return st;
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
  for (int i = 0; choices[i]; ++i)
    if (strcmp(choices[i], json_string_value(v)) == 0) {
      *value = i;
      goto cleanup;
    }
  CONFIG_FAIL(node, "%s = \"%.64s\": allowed are %s", kp, json_string_value(v), list);
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
