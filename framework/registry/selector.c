#include "selector.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct selector_table {
  char names[3][SELECTOR_MAX][SELECTOR_NAME_MAX + 1];
  uint32_t count[3];
};

const char *selector_kind_name(selector_kind_t kind) {
  static const char *const names[3] = {"fs", "hs", "bs"};
  return (unsigned)kind < 3 ? names[kind] : "?";
}

tsr_status selector_table_create(selector_table_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  uint32_t id;
  *out = NULL;
  selector_table_t *t = calloc(1, sizeof *t);
  TSR_CHECK(t, TSR_ERR_NOMEM, "out of memory allocating a selector table");
  TSR_TRY(selector_intern(t, SELECTOR_HS, "cpu", &id, err));
  TSR_TRY(selector_intern(t, SELECTOR_HS, "gpu", &id, err));
  *out = t;
  t = NULL;
cleanup:
  free(t);
  return st;
}

void selector_table_free(selector_table_t **table) {
  if (!table) return;
  free(*table);
  *table = NULL;
}

static int selector_lookup(const selector_table_t *t, selector_kind_t kind, const char *name,
                           size_t len) {
  for (uint32_t i = 0; i < t->count[kind]; ++i)
    if (strlen(t->names[kind][i]) == len && memcmp(t->names[kind][i], name, len) == 0)
      return (int)i;
  return -1;
}

static tsr_status selector_intern_n(selector_table_t *t, selector_kind_t kind, const char *name,
                                    size_t len, uint32_t *id, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK((unsigned)kind < 3, TSR_ERR_INVALID, "selector kind %d does not exist", (int)kind);
  TSR_CHECK(len >= 1 && len <= SELECTOR_NAME_MAX, TSR_ERR_INVALID,
            "%s selector name '%.*s' has %zu characters; allowed are 1..%d",
            selector_kind_name(kind), (int)(len > 64 ? 64 : len), name, len, SELECTOR_NAME_MAX);
  for (size_t i = 0; i < len; ++i) {
    char c = name[i];
    TSR_CHECK((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_', TSR_ERR_INVALID,
              "%s selector name '%.*s' has the character '%c'; allowed are a-z, 0-9 and _",
              selector_kind_name(kind), (int)len, name, c);
  }
  int found = selector_lookup(t, kind, name, len);
  if (found >= 0) {
    *id = (uint32_t)found;
    goto cleanup;
  }
  TSR_CHECK(t->count[kind] < SELECTOR_MAX, TSR_ERR_INVALID,
            "cannot add %s selector '%.*s': all %d %s selectors are taken",
            selector_kind_name(kind), (int)len, name, SELECTOR_MAX, selector_kind_name(kind));
  memcpy(t->names[kind][t->count[kind]], name, len);
  t->names[kind][t->count[kind]][len] = '\0';
  *id = t->count[kind]++;
cleanup:
  return st;
}

tsr_status selector_intern(selector_table_t *table, selector_kind_t kind, const char *name,
                           uint32_t *id, tsr_error_t *err) {
  return selector_intern_n(table, kind, name, strlen(name), id, err);
}

tsr_status selector_find(const selector_table_t *table, selector_kind_t kind, const char *name,
                         uint32_t *id, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK((unsigned)kind < 3, TSR_ERR_INVALID, "selector kind %d does not exist", (int)kind);
  int found = selector_lookup(table, kind, name, strlen(name));
  if (found < 0) {
    /* every name, whole: not selector_format, which writes "*" for a full hs/bs table */
    char known[SELECTOR_MAX * (SELECTOR_NAME_MAX + 1) + 3] = "{}";
    size_t used = 0;
    for (uint32_t i = 0; i < table->count[kind]; ++i)
      used += (size_t)snprintf(known + used, sizeof known - used, "%s%s",
                               i == 0 ? "" : kind == SELECTOR_FS ? "," : "|",
                               table->names[kind][i]);
    TSR_FAIL(TSR_ERR_INVALID, "unknown %s selector '%s'; known are: %s",
             selector_kind_name(kind), name, known);
  }
  *id = (uint32_t)found;
cleanup:
  return st;
}

const char *selector_name(const selector_table_t *table, selector_kind_t kind, uint32_t id) {
  if ((unsigned)kind >= 3 || id >= table->count[kind]) return "?";
  return table->names[kind][id];
}

tsr_status selector_parse(selector_table_t *table, selector_kind_t kind, const char *expr,
                          uint64_t *on, uint64_t *off, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *on = *off = 0;
  TSR_CHECK(expr != NULL, TSR_ERR_INVALID, "%s selector expression is missing",
            selector_kind_name(kind));
  if (strcmp(expr, "*") == 0) {
    if (kind != SELECTOR_FS) *on = UINT64_MAX;
    goto cleanup;
  }
  const char sep = kind == SELECTOR_FS ? ',' : '|';
  const char *p = expr;
  for (;;) {
    const char *end = strchr(p, sep);
    size_t len = end ? (size_t)(end - p) : strlen(p);
    bool negate = false;
    if (len > 0 && p[0] == '!') {
      TSR_CHECK(kind == SELECTOR_FS, TSR_ERR_INVALID,
                "%s selector expression '%s': '!' is allowed in fs expressions only",
                selector_kind_name(kind), expr);
      negate = true;
      ++p;
      --len;
    }
    uint32_t id;
    st = selector_intern_n(table, kind, p, len, &id, err);
    if (st != TSR_OK) {
      tsr_error_prefix(err, "%s selector expression '%s'", selector_kind_name(kind), expr);
      goto cleanup;
    }
    uint64_t bit = UINT64_C(1) << id;
    TSR_CHECK(!((*on | *off) & bit), TSR_ERR_INVALID,
              "%s selector expression '%s' names '%s' twice", selector_kind_name(kind), expr,
              selector_name(table, kind, id));
    if (negate) *off |= bit;
    else *on |= bit;
    if (!end) break;
    p = end + 1;
  }
cleanup:
  return st;
}

char *selector_format(const selector_table_t *table, selector_kind_t kind, uint64_t bits,
                      char *out, size_t cap) {
  if (cap == 0) return out;
  out[0] = '\0';
  if (kind != SELECTOR_FS && bits == UINT64_MAX) {
    snprintf(out, cap, "*");
    return out;
  }
  if (bits == 0) {
    snprintf(out, cap, "{}");
    return out;
  }
  size_t used = 0;
  const char sep = kind == SELECTOR_FS ? ',' : '|';
  for (uint32_t id = 0; id < SELECTOR_MAX; ++id) {
    if (!(bits & (UINT64_C(1) << id))) continue;
    int n = snprintf(out + used, cap - used, "%s%s", used ? (char[]){sep, 0} : "",
                     selector_name(table, kind, id));
    if (n < 0 || (size_t)n >= cap - used) break;
    used += (size_t)n;
  }
  return out;
}

char *selector_format_set(const selector_table_t *table, selector_kind_t kind, uint64_t bits,
                          char *out, size_t cap) {
  if (cap == 0) return out;
  size_t used = 0;
  int n = snprintf(out, cap, "{");
  used = n > 0 && (size_t)n < cap ? (size_t)n : 0;
  for (uint32_t id = 0; id < SELECTOR_MAX && used < cap; ++id) {
    if (!(bits & (UINT64_C(1) << id))) continue;
    n = snprintf(out + used, cap - used, "%s%s", used > 1 ? "," : "", selector_name(table, kind, id));
    if (n < 0 || (size_t)n >= cap - used) return out;
    used += (size_t)n;
  }
  if (used < cap) snprintf(out + used, cap - used, "}");
  return out;
}
