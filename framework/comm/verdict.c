#include "verdict.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

tsr_status verdict_mpi_error(int code, const char *call, const char *file, int line,
                             tsr_error_t *err) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) {
    strcpy(text, "unknown MPI error");
  }
  return tsr_error_set(err, TSR_ERR_MPI, file, line, "%s failed: %s (MPI error %d)", call, text,
                       code);
}

tsr_status verdict_reduce(MPI_Comm comm, tsr_status st, int phase, tsr_error_t *err) {
  int rank = 0, size = 1;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return st;
  if (phase < 0) phase = 0;
  if (phase > 15) phase = 15;
  int key = st == TSR_OK ? INT_MAX : phase * size + rank, best = INT_MAX;
  int rc = MPI_Allreduce(&key, &best, 1, MPI_INT, MPI_MIN, comm);
  if (rc != MPI_SUCCESS) return verdict_mpi_error(rc, "MPI_Allreduce (verdict)", __FILE__, __LINE__, err);
  if (best == INT_MAX) return TSR_OK;

  int root = best % size;
  /* the root's record travels as: code, line, text; the file name stays a local string */
  struct {
    int32_t code, line;
    char text[TSR_ERROR_TEXT_MAX];
  } wire;
  memset(&wire, 0, sizeof wire);
  if (rank == root) {
    wire.code = (int32_t)st;
    if (err) {
      wire.line = err->line;
      memcpy(wire.text, err->text, sizeof wire.text);
    }
  }
  rc = MPI_Bcast(&wire, (int)sizeof wire, MPI_BYTE, root, comm);
  if (rc != MPI_SUCCESS) return verdict_mpi_error(rc, "MPI_Bcast (verdict)", __FILE__, __LINE__, err);
  if (rank != root) {
    wire.text[sizeof wire.text - 1] = '\0';
    tsr_error_set(err, (tsr_status)wire.code, "(another rank)", wire.line, "%s", wire.text);
  }
  return (tsr_status)wire.code;
}
