/* node: which node this process runs on.
 *
 * node_name gives MPI_Get_processor_name, unless the environment variable
 * TESSERA_NODE_NAME is set, which then wins (so that one machine can play several
 * nodes in tests). Its value must be a host name: 1 to NODE_NAME_MAX - 1 characters of
 * NODE_NAME_CHARS; anything else (also an empty value) is an error naming it. node_assign and node_resolve give every process its hardware from the
 * node configurations (simulation.h: hardware.configurations and hardware.nodes). */
#ifndef NODE_H
#define NODE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "simulation.h"
#include "tsr_error.h"

#define NODE_NAME_ENV "TESSERA_NODE_NAME"
#define NODE_NAME_CHARS \
  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_"
enum { NODE_NAME_MAX = 256 };

TSR_NODISCARD tsr_status node_name(char *out, size_t cap, tsr_error_t *err);

/* The hardware of one process of a run. */
typedef struct node_process {
  simulation_process_t proc;  /* hs, device, threads, mlups of its entry; count 1 */
  char node[NODE_NAME_MAX];   /* its node name */
  int configuration;          /* index into hardware.configurations; -1: there are none */
  int index;                  /* its place among the ranks with its node name, from 0 */
} node_process_t;

/* The hardware of nranks processes whose node names are names[0..nranks-1] (the ranks of
 * one node take its configuration's processes in rank order). Without configurations
 * every process is hardware.hs with the defaults. The first entry of hardware.nodes
 * whose pattern matches (fnmatch) picks a node's configuration. Errors (TSR_ERR_INVALID):
 * a node name that no entry matches; more processes on a node than its configuration
 * lists. out[nranks]. */
TSR_NODISCARD tsr_status node_assign(const simulation_hardware_t *hw, const char *const *names,
                                     int nranks, node_process_t *out, tsr_error_t *err);

/* Collective: every rank's node_name, then node_assign on every rank; out[size of comm];
 * the same verdict on every rank. */
TSR_NODISCARD tsr_status node_resolve(MPI_Comm comm, const simulation_hardware_t *hw,
                                      node_process_t *out, tsr_error_t *err);

/* Expands a node list such as "gpu[1-2],cpu[01-16]:2,login" into one node name per rank
 * (*names, nranks entries, freed with node_names_free): items are
 * separated by commas; a name may hold one range [a-b] of decimal numbers (zero-padded
 * to the width of a); ":n" gives the ranks on each such node, default: as many as the
 * configuration its name matches lists (1 without configurations). At most
 * max_ranks ranks. */
TSR_NODISCARD tsr_status node_list_expand(const simulation_hardware_t *hw, const char *list,
                                          int max_ranks, char ***names, int *nranks,
                                          tsr_error_t *err);
/* Frees what node_list_expand gave; NULL-safe. */
void node_names_free(char **names, int n);

/* Memory this node can still hand out (MemAvailable of /proc/meminfo, else free
 * physical pages), in bytes; 0 when unknown. */
uint64_t node_memory_available(void);

/* Collective: sums `bytes` over the ranks of each node and fails on every rank when a
 * node's sum exceeds what node_memory_available reports there; `what` names the data
 * in the message (e.g. "the fields of the blocks"). */
TSR_NODISCARD tsr_status node_check_memory(MPI_Comm comm, uint64_t bytes, const char *what,
                                           tsr_error_t *err);

#endif
