/* series: a CSV time series a run grows row by row (series.csv, a probe's
 * probe_<name>.csv), kept whole in memory on the rank that writes it and rewritten whole
 * through a temporary name (output_file_*), so that a reader or a killed run never sees
 * a half-written row.
 *
 * A rewrite is held back while the last one is less than 2 s old, or less than 20 times
 * its own duration old (so that rewriting a long series costs at most about 5% of the
 * run's time), except for the final one. */
#ifndef SERIES_H
#define SERIES_H

#include <stdbool.h>
#include <stddef.h>

#include "output.h"
#include "tsr_error.h"

typedef struct output_series {
  char *text; /* the file so far */
  size_t len, cap;
  double written, cost; /* MPI_Wtime of the last rewrite and its seconds */
} output_series_t;

/* Appends printf-formatted text; false when out of memory (the text is then unchanged). */
bool output_series_printf(output_series_t *s, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* Rewrites the folder's file `name` (recorded in its manifest) with the text, if due (see
 * above) or final; nothing while the text is empty. Rank 0's call. */
TSR_NODISCARD tsr_status output_series_flush(output_series_t *s, output_folder_t *out,
                                             const char *name, bool final, tsr_error_t *err);

void output_series_free(output_series_t *s);

#endif
