#include "series.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

bool output_series_printf(output_series_t *s, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  int k = vsnprintf(NULL, 0, format, ap);
  va_end(ap);
  if (k < 0) return false;
  if (s->len + (size_t)k + 1 > s->cap) {
    size_t cap = 2 * (s->len + (size_t)k + 1) + 4096;
    char *grown = realloc(s->text, cap);
    if (!grown) return false;
    s->text = grown;
    s->cap = cap;
  }
  va_start(ap, format);
  vsnprintf(s->text + s->len, s->cap - s->len, format, ap);
  va_end(ap);
  s->len += (size_t)k;
  return true;
}

tsr_status output_series_flush(output_series_t *s, output_folder_t *out, const char *name,
                               bool final, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  output_file_t f = {.f = NULL};
  const double now = MPI_Wtime(), age = now - s->written;
  if (s->len == 0 || (!final && (age < 2.0 || age < 20.0 * s->cost))) goto cleanup;
  char path[OUTPUT_PATH_MAX];
  TSR_TRY(output_folder_file(out, path, sizeof path, err, "%s", name));
  TSR_TRY(output_file_open(&f, path, err));
  TSR_CHECK(fwrite(s->text, 1, s->len, f.f) == s->len, TSR_ERR_IO, "cannot write %s", path);
  TSR_TRY(output_file_commit(&f, err));
  s->written = now;
  s->cost = MPI_Wtime() - now;
cleanup:
  output_file_discard(&f);
  return st;
}

void output_series_free(output_series_t *s) {
  free(s->text);
  *s = (output_series_t){.text = NULL};
}
