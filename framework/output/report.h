/* report: machine-readable run reports (summary.json).
 *
 * A report is a list of named values written as one JSON object, in list order; a table
 * value is an array of objects (one per row, e.g. per process), an object value one
 * object of named values. */
#ifndef REPORT_H
#define REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "tsr_error.h"

typedef enum report_type {
  REPORT_REAL, REPORT_INT, REPORT_TEXT,
  REPORT_TABLE, /* an array of objects */
  REPORT_OBJECT /* one object: rows holds its ncols items */
} report_type_t;

typedef struct report_item report_item_t;
struct report_item {
  const char *key;
  report_type_t type;
  double real;
  int64_t integer;
  const char *text;
  const report_item_t *rows; /* REPORT_TABLE: nrows * ncols items, row after row */
  size_t nrows, ncols;       /* written as an array of nrows objects */
};

#define REPORT_REAL_ITEM(k, v) ((report_item_t){.key = (k), .type = REPORT_REAL, .real = (v)})
#define REPORT_INT_ITEM(k, v) ((report_item_t){.key = (k), .type = REPORT_INT, .integer = (v)})
#define REPORT_TEXT_ITEM(k, v) ((report_item_t){.key = (k), .type = REPORT_TEXT, .text = (v)})
#define REPORT_TABLE_ITEM(k, r, nr, nc) \
  ((report_item_t){.key = (k), .type = REPORT_TABLE, .rows = (r), .nrows = (nr), .ncols = (nc)})
#define REPORT_OBJECT_ITEM(k, r, nc) \
  ((report_item_t){.key = (k), .type = REPORT_OBJECT, .rows = (r), .nrows = 1, .ncols = (nc)})


/* Writes the items as a JSON object to path (replacing it), through a temporary file
 * renamed into place, so a reader never sees half a report. */
TSR_NODISCARD tsr_status report_write_json(const char *path, const report_item_t *items, size_t n,
                                           tsr_error_t *err);

/* Writes a table (rows: nrows * ncols items, no tables among them) as CSV to path: a
 * header of the first row's keys, then one line per row (texts quoted where they hold a
 * comma or a quote); through a temporary file renamed into place. */
TSR_NODISCARD tsr_status report_write_csv(const char *path, const report_item_t *rows,
                                          size_t nrows, size_t ncols, tsr_error_t *err);

#endif
