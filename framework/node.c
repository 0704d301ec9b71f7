#include "node.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

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
