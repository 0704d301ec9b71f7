/* config: JSON run configurations, read through Jansson into validated options.
 *
 * Format (every key outside this list is an error, as is a key given twice):
 *   {
 *     "domain": {
 *       "cells":    [nx, ny, nz],            required, integers >= 1
 *       "blocks":   [bx, by, bz],            default [1, 1, 1]; 1 <= b <= cells
 *       "periodic": [px, py, pz]             default [false, false, false]
 *     },
 *     "steps": n                             default 1; integer >= 0
 *   }
 * Messages name the file, then line:column for syntax errors or the key path
 * ("domain.cells[1]"), the value, and what is allowed. Only this module sees Jansson. */
#ifndef CONFIG_H
#define CONFIG_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "patch.h"
#include "tsr_error.h"

enum { CONFIG_SOURCE_MAX = 256 };

typedef struct config {
  char source[CONFIG_SOURCE_MAX]; /* file name used in messages */
  patch_options_t domain;
  int64_t steps;
} config_t;

config_t config_default(void);

/* Checks ranges of a filled config (what config_parse also runs). */
TSR_NODISCARD tsr_status config_validate(const config_t *cfg, tsr_error_t *err);

/* Parses len bytes of JSON text (no NUL needed); source names it in messages. */
TSR_NODISCARD tsr_status config_parse(const char *text, size_t len, const char *source,
                                      config_t *out, tsr_error_t *err);

/* Reads a whole file into a new NUL-terminated buffer the caller frees. */
TSR_NODISCARD tsr_status config_read_file(const char *path, char **text, size_t *len,
                                          tsr_error_t *err);

/* Collective: rank 0 reads the file and sends its text to every rank, every rank
 * parses it, and all ranks return the same verdict. */
TSR_NODISCARD tsr_status config_load(MPI_Comm comm, const char *path, config_t *out,
                                     tsr_error_t *err);

#endif
