#include "tsr_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

tsr_status tsr_error_set(tsr_error_t *err, tsr_status code, const char *file, int line,
                         const char *fmt, ...) {
  if (err) {
    err->code = code;
    err->file = file;
    err->line = line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->text, sizeof err->text, fmt, ap);
    va_end(ap);
  }
  return code;
}

void tsr_error_prefix(tsr_error_t *err, const char *fmt, ...) {
  if (!err) return;
  char head[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(head, sizeof head - 2, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t hl = strlen(head);
  memcpy(head + hl, ": ", 3);
  hl += 2;
  /* shift the old text right by hl bytes (cutting its end if needed), then put head in */
  err->text[sizeof err->text - 1] = '\0';
  size_t old = strlen(err->text);
  size_t keep = old + hl < sizeof err->text ? old : sizeof err->text - 1 - hl;
  memmove(err->text + hl, err->text, keep);
  err->text[hl + keep] = '\0';
  memcpy(err->text, head, hl);
}

void tsr_error_clear(tsr_error_t *err) {
  if (!err) return;
  err->code = TSR_OK;
  err->file = "";
  err->line = 0;
  err->text[0] = '\0';
}

const char *tsr_status_name(tsr_status code) {
  switch (code) {
  case TSR_OK: return "ok";
  case TSR_ERR_INVALID: return "invalid input";
  case TSR_ERR_IO: return "I/O error";
  case TSR_ERR_NOMEM: return "out of memory";
  case TSR_ERR_LOOKUP: return "registry lookup failed";
  case TSR_ERR_CORRUPT: return "corrupt data";
  case TSR_ERR_MPI: return "MPI error";
  case TSR_ERR_OPENCL: return "OpenCL error";
  case TSR_ERR_INTERNAL: return "internal error";
  case TSR_ERR_DIVERGED: return "diverged";
  }
  return "unknown status";
}
