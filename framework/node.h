/* node: which node this process runs on.
 *
 * node_name gives MPI_Get_processor_name, unless the environment variable
 * TESSERA_NODE_NAME is set, which then wins (so that one machine can play several
 * nodes in tests). */
#ifndef NODE_H
#define NODE_H

#include <stddef.h>

#include "tsr_error.h"

#define NODE_NAME_ENV "TESSERA_NODE_NAME"
enum { NODE_NAME_MAX = 256 };

TSR_NODISCARD tsr_status node_name(char *out, size_t cap, tsr_error_t *err);

#endif
