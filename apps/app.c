#include "app.h"

#include <stdio.h>

int app_report(MPI_Comm comm, tsr_status st, const tsr_error_t *err) {
  if (st == TSR_OK) return 0;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    fprintf(stderr, "tessera: error: %s\n", err->text[0] ? err->text : tsr_status_name(st));
    fflush(stderr);
  }
  return 1;
}
