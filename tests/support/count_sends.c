/* count_sends: a library preloaded into the ranks of a real `tessera run` (LD_PRELOAD)
 * that counts, through the MPI profiling interface, the point-to-point messages the
 * process sends (MPI_Isend, MPI_Send) and prints the counts at MPI_Finalize, one line per
 * rank: "count_sends rank R: isend N send M". tests/cli/count_messages.cmake reads them. */
#include <mpi.h>
#include <stdio.h>

static long isends, sends;

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request) {
  ++isends;
  return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  ++sends;
  return PMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Finalize(void) {
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("count_sends rank %d: isend %ld send %ld\n", rank, isends, sends);
  fflush(stdout);
  return PMPI_Finalize();
}
