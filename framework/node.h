/* node: which node this process runs on.
 *
 * node_name gives MPI_Get_processor_name, unless the environment variable
 * TESSERA_NODE_NAME is set, which then wins (so that one machine can play several
 * nodes in tests). */
#ifndef NODE_H
#define NODE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "tsr_error.h"

#define NODE_NAME_ENV "TESSERA_NODE_NAME"
enum { NODE_NAME_MAX = 256 };

TSR_NODISCARD tsr_status node_name(char *out, size_t cap, tsr_error_t *err);

/* Memory this node can still hand out (MemAvailable of /proc/meminfo, else free
 * physical pages), in bytes; 0 when unknown. */
uint64_t node_memory_available(void);

/* Collective: sums `bytes` over the ranks of each node and fails on every rank when a
 * node's sum exceeds what node_memory_available reports there; `what` names the data
 * in the message ("the PDFs of the LBM blocks"). */
TSR_NODISCARD tsr_status node_check_memory(MPI_Comm comm, uint64_t bytes, const char *what,
                                           tsr_error_t *err);

#endif
