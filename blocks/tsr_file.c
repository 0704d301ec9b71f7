#include "tsr_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tsr_status tsr_file_read(const char *path, size_t max, const char *what, char **text,
                         size_t *len, tsr_error_t *err) {
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
      TSR_CHECK(cap <= max, TSR_ERR_INVALID, "%s: larger than %zu bytes; not %s", path, max,
                what);
      char *grown = realloc(buf, 2 * cap);
      TSR_CHECK(grown, TSR_ERR_NOMEM, "%s: out of memory reading the file", path);
      buf = grown;
      cap *= 2;
    }
    const size_t got = fread(buf + n, 1, cap - 1 - n, f);
    n += got;
    if (got == 0) break;
  }
  TSR_CHECK(!ferror(f), TSR_ERR_IO, "%s: read error: %s", path, strerror(errno));
  TSR_CHECK(n <= max, TSR_ERR_INVALID, "%s: larger than %zu bytes; not %s", path, max, what);
  buf[n] = '\0';
  *text = buf;
  *len = n;
  buf = NULL;
cleanup:
  if (f) fclose(f);
  free(buf);
  return st;
}
