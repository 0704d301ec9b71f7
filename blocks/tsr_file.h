/* tsr_file: a whole file read into memory, for the readers of the files people give
 * (configurations, STL meshes, inlet profiles). */
#ifndef TSR_FILE_H
#define TSR_FILE_H

#include <stddef.h>

#include "tsr_error.h"

/* Reads the file at path into a new buffer the caller frees, NUL-terminated after its
 * *len bytes. A file of more than max bytes is refused: "<path>: larger than <max>
 * bytes; not <what>" (what: "a configuration file"). Errors name the path: it cannot be
 * opened (TSR_ERR_IO, with the system's reason), a read fails. */
TSR_NODISCARD tsr_status tsr_file_read(const char *path, size_t max, const char *what,
                                       char **text, size_t *len, tsr_error_t *err);

#endif
