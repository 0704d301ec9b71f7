#include "node.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verdict.h"

tsr_status node_name(char *out, size_t cap, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *env = getenv(NODE_NAME_ENV);
  if (env && env[0]) {
    snprintf(out, cap, "%s", env);
    goto cleanup;
  }
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  TSR_MPI(MPI_Get_processor_name(name, &len));
  snprintf(out, cap, "%.*s", len, name);
cleanup:
  return st;
}

uint64_t node_memory_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (f) {
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
    fclose(f);
    if (kib > 0) return (uint64_t)kib * 1024u;
  }
  long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

tsr_status node_check_memory(MPI_Comm comm, uint64_t bytes, const char *what, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  MPI_Comm node = MPI_COMM_NULL;
  uint64_t need = 0;
  int local = 1;
  TSR_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  TSR_MPI(MPI_Comm_size(node, &local));
  TSR_MPI(MPI_Allreduce(&bytes, &need, 1, MPI_UINT64_T, MPI_SUM, node));
  uint64_t avail = node_memory_available();
  if (avail > 0 && need > avail) {
    char name[NODE_NAME_MAX] = "?";
    tsr_error_t ignored;
    if (node_name(name, sizeof name, &ignored) != TSR_OK) snprintf(name, sizeof name, "?");
    st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__,
                       "%s need %.2f GiB on node %s (%d rank(s)), and %.2f GiB are available "
                       "there; use fewer cells, single precision, or more nodes",
                       what, (double)need / 1073741824.0, name, local,
                       (double)avail / 1073741824.0);
  }
cleanup:
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  return verdict_reduce(comm, st, 0, err);
}
