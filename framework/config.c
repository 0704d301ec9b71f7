#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict.h"

config_t config_default(void) {
  config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  snprintf(cfg.source, sizeof cfg.source, "(config)");
  cfg.domain = patch_options_default();
  cfg.steps = 1;
  return cfg;
}

tsr_status config_validate(const config_t *cfg, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(cfg->steps >= 0, TSR_ERR_INVALID, "steps = %lld: allowed are integers >= 0",
            (long long)cfg->steps);
  st = patch_options_validate(&cfg->domain, err);
  if (st != TSR_OK && err) {
    /* patch messages start with the option ("blocks[0] ..."): make it a key path */
    char text[TSR_ERROR_TEXT_MAX - 8];
    /* cutting a very long message short is intended; using the result tells gcc so
     * (-Wformat-truncation would otherwise fail -Werror builds) */
    if (snprintf(text, sizeof text, "%s", err->text) >= 0)
      snprintf(err->text, sizeof err->text, "domain.%s", text);
  }
cleanup:
  return st;
}

/* ---- strict JSON helpers: every message names the key path ---- */

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

/* Rejects keys of obj that are not in allowed (NULL-terminated). */
static tsr_status config_check_keys(const json_t *obj, const char *path,
                                    const char *const *allowed, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *key;
  json_t *value;
  json_object_foreach((json_t *)obj, key, value) {
    bool ok = false;
    for (const char *const *a = allowed; *a; ++a) ok = ok || strcmp(*a, key) == 0;
    if (ok) continue;
    char list[512] = "";
    size_t used = 0;
    for (const char *const *a = allowed; *a; ++a) {
      int n = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", *a);
      if (n < 0 || (size_t)n >= sizeof list - used) break;
      used += (size_t)n;
    }
    TSR_FAIL(TSR_ERR_INVALID, "unknown key '%s%s%s'; allowed %s%s are: %s", path,
             path[0] ? "." : "", key, path[0] ? "in " : "at the top level", path, list);
  }
cleanup:
  return st;
}

static tsr_status config_int(const json_t *v, const char *path, int64_t min, int64_t max,
                             int64_t *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(json_is_integer(v), TSR_ERR_INVALID, "%s: expected an integer in %lld..%lld, got %s",
            path, (long long)min, (long long)max, config_type_name(v));
  json_int_t x = json_integer_value(v);
  TSR_CHECK(x >= min && x <= max, TSR_ERR_INVALID, "%s = %lld: allowed are %lld..%lld", path,
            (long long)x, (long long)min, (long long)max);
  *out = (int64_t)x;
cleanup:
  return st;
}

/* An array of exactly 3 entries; each is checked by the caller. */
static tsr_status config_triple(const json_t *v, const char *path, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(json_is_array(v), TSR_ERR_INVALID, "%s: expected an array of 3 values [x, y, z], "
            "got %s", path, config_type_name(v));
  TSR_CHECK(json_array_size(v) == 3, TSR_ERR_INVALID,
            "%s: expected 3 values [x, y, z], got %zu", path, json_array_size(v));
cleanup:
  return st;
}

static tsr_status config_int3(const json_t *v, const char *path, int64_t min, int64_t max,
                              int64_t out[3], tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(config_triple(v, path, err));
  for (size_t i = 0; i < 3; ++i) {
    char sub[128];
    snprintf(sub, sizeof sub, "%s[%zu]", path, i);
    TSR_TRY(config_int(json_array_get(v, i), sub, min, max, &out[i], err));
  }
cleanup:
  return st;
}

static tsr_status config_bool3(const json_t *v, const char *path, bool out[3], tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(config_triple(v, path, err));
  for (size_t i = 0; i < 3; ++i) {
    const json_t *e = json_array_get(v, i);
    TSR_CHECK(json_is_boolean(e), TSR_ERR_INVALID, "%s[%zu]: expected true or false, got %s",
              path, i, config_type_name(e));
    out[i] = json_is_true(e);
  }
cleanup:
  return st;
}

static tsr_status config_domain(const json_t *d, config_t *cfg, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  static const char *const keys[] = {"cells", "blocks", "periodic", NULL};
  int64_t v[3];
  TSR_CHECK(json_is_object(d), TSR_ERR_INVALID, "domain: expected an object, got %s",
            config_type_name(d));
  TSR_TRY(config_check_keys(d, "domain", keys, err));
  const json_t *cells = json_object_get(d, "cells");
  TSR_CHECK(cells, TSR_ERR_INVALID, "domain.cells is missing: give the cell counts [nx, ny, nz]");
  TSR_TRY(config_int3(cells, "domain.cells", 1, INT_MAX, v, err));
  for (int a = 0; a < 3; ++a) cfg->domain.cells[a] = v[a];
  const json_t *blocks = json_object_get(d, "blocks");
  if (blocks) {
    TSR_TRY(config_int3(blocks, "domain.blocks", 1, INT_MAX, v, err));
    for (int a = 0; a < 3; ++a) cfg->domain.blocks[a] = (int)v[a];
  }
  const json_t *periodic = json_object_get(d, "periodic");
  if (periodic) TSR_TRY(config_bool3(periodic, "domain.periodic", cfg->domain.periodic, err));
cleanup:
  return st;
}

tsr_status config_parse(const char *text, size_t len, const char *source, config_t *out,
                        tsr_error_t *err) {
  tsr_status st = TSR_OK;
  json_t *root = NULL;
  json_error_t jerr;
  config_t cfg = config_default();
  snprintf(cfg.source, sizeof cfg.source, "%s", source);

  root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
  TSR_CHECK(root, TSR_ERR_INVALID, "%s:%d:%d: %s", source, jerr.line, jerr.column, jerr.text);
  TSR_CHECK(json_is_object(root), TSR_ERR_INVALID,
            "%s: the top level must be an object {...}, got %s", source, config_type_name(root));
  static const char *const keys[] = {"domain", "steps", NULL};
  const json_t *domain = json_object_get(root, "domain"), *steps = json_object_get(root, "steps");
  st = config_check_keys(root, "", keys, err);
  if (st == TSR_OK && !domain)
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                       "domain is missing: give at least {\"domain\": {\"cells\": [nx, ny, nz]}}");
  if (st == TSR_OK) st = config_domain(domain, &cfg, err);
  if (st == TSR_OK && steps) st = config_int(steps, "steps", 0, INT64_MAX, &cfg.steps, err);
  if (st == TSR_OK) st = config_validate(&cfg, err);
  if (st != TSR_OK) {
    tsr_error_prefix(err, "%s", source);
    goto cleanup;
  }
  *out = cfg;
cleanup:
  json_decref(root);
  return st;
}

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

tsr_status config_load(MPI_Comm comm, const char *path, config_t *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char *text = NULL;
  size_t len = 0;
  int rank = 0;
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
cleanup:
  free(text);
  return st;
}
