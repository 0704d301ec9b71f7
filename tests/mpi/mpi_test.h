/* Shared set-up of the MPI tests: cmocka on every rank, output from rank 0 only (every
 * check compares a verdict that all ranks share, so rank 0 sees every failure). */
#ifndef MPI_TEST_H
#define MPI_TEST_H

#include <mpi.h>
#include <stdio.h>

static inline void mpi_test_quiet_other_ranks(void) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0 && !freopen("/dev/null", "w", stdout)) fprintf(stderr, "cannot silence rank %d\n", rank);
}

#endif
