#define _POSIX_C_SOURCE 200809L
#include "report.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "output.h"

/* A JSON string of text; text that is not UTF-8 (a file name may be any bytes) is stored
 * with every byte above 0x7f written as the four characters \xNN. */
static json_t *report_text(const char *text) {
  json_t *v = json_string(text);
  if (v) return v;
  size_t n = strlen(text);
  char *esc = malloc(4 * n + 1), *p = esc;
  if (!esc) return NULL;
  for (const unsigned char *c = (const unsigned char *)text; *c; ++c) {
    if (*c < 0x80) *p++ = (char)*c;
    else p += snprintf(p, 5, "\\x%02x", *c);
  }
  *p = '\0';
  v = json_string(esc);
  free(esc);
  return v;
}

/* The items as a new JSON object (tables nest: depth limits the recursion). */
static tsr_status report_object(const char *path, const report_item_t *items, size_t n, int depth,
                                json_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  json_t *obj = json_object(), *row = NULL;
  TSR_CHECK(obj && depth < 4, TSR_ERR_NOMEM, "out of memory (or tables nested too deep) writing %s",
            path);
  for (size_t i = 0; i < n; ++i) {
    json_t *v = NULL;
    switch (items[i].type) {
    case REPORT_REAL: v = json_real(items[i].real); break;
    case REPORT_INT: v = json_integer(items[i].integer); break;
    case REPORT_TEXT: v = report_text(items[i].text ? items[i].text : ""); break;
    case REPORT_OBJECT:
      st = report_object(path, items[i].rows, items[i].ncols, depth + 1, &v, err);
      if (st != TSR_OK) goto cleanup;
      break;
    case REPORT_TABLE:
      v = json_array();
      for (size_t r = 0; v && r < items[i].nrows; ++r) {
        st = report_object(path, items[i].rows + r * items[i].ncols, items[i].ncols, depth + 1,
                           &row, err);
        if (st != TSR_OK || json_array_append_new(v, row) != 0) {
          json_decref(v);
          v = NULL;
        }
        row = NULL;
        if (st != TSR_OK) goto cleanup;
      }
      break;
    }
    TSR_CHECK(v && json_object_set_new(obj, items[i].key, v) == 0, TSR_ERR_INVALID,
              "%s: cannot store '%s' (not finite, or not UTF-8)", path, items[i].key);
  }
  *out = obj;
  obj = NULL;
cleanup:
  json_decref(obj);
  return st;
}

tsr_status report_write_json(const char *path, const report_item_t *items, size_t n,
                             tsr_error_t *err) {
  tsr_status st = TSR_OK;
  json_t *obj = NULL;
  output_file_t o = {.f = NULL};
  TSR_TRY(report_object(path, items, n, 0, &obj, err));
  TSR_TRY(output_file_open(&o, path, err));
  TSR_CHECK(json_dumpf(obj, o.f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0, TSR_ERR_IO,
            "cannot write %s: %s", path, strerror(errno));
  TSR_TRY(output_file_commit(&o, err));
cleanup:
  output_file_discard(&o);
  json_decref(obj);
  return st;
}

/* One CSV value. */
static void report_csv_value(FILE *f, const report_item_t *it) {
  if (it->type == REPORT_REAL) fprintf(f, "%.17g", it->real);
  else if (it->type == REPORT_INT) fprintf(f, "%lld", (long long)it->integer);
  else if (it->type == REPORT_TEXT && it->text && strpbrk(it->text, ",\"\n")) {
    fputc('"', f);
    for (const char *c = it->text; *c; ++c) {
      if (*c == '"') fputc('"', f);
      fputc(*c, f);
    }
    fputc('"', f);
  } else if (it->type == REPORT_TEXT && it->text) {
    fputs(it->text, f);
  }
}

tsr_status report_write_csv(const char *path, const report_item_t *rows, size_t nrows,
                            size_t ncols, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  output_file_t o = {.f = NULL};
  TSR_TRY(output_file_open(&o, path, err));
  for (size_t c = 0; nrows > 0 && c < ncols; ++c)
    fprintf(o.f, "%s%s", c ? "," : "", rows[c].key);
  fputc('\n', o.f);
  for (size_t r = 0; r < nrows; ++r) {
    for (size_t c = 0; c < ncols; ++c) {
      if (c) fputc(',', o.f);
      report_csv_value(o.f, &rows[r * ncols + c]);
    }
    fputc('\n', o.f);
  }
  TSR_TRY(output_file_commit(&o, err));
cleanup:
  output_file_discard(&o);
  return st;
}
