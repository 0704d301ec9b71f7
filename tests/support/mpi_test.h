/* Shared set-up of the MPI tests (tests/mpi, tests/validation): cmocka on every rank,
 * output from rank 0 only (every check compares a verdict that all ranks share, so rank 0
 * sees every failure), and one exit status on every rank:
 *
 *   int main(int argc, char **argv) {
 *     mpi_test_init(&argc, &argv);
 *     const struct CMUnitTest tests[] = {...};
 *     return mpi_test_finish(cmocka_run_group_tests_name("name", tests, NULL, NULL));
 *   }
 */
#ifndef MPI_TEST_H
#define MPI_TEST_H

#include <mpi.h>
#include <stdio.h>

static inline void mpi_test_quiet_other_ranks(void) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0 && !freopen("/dev/null", "w", stdout)) fprintf(stderr, "cannot silence rank %d\n", rank);
}

/* MPI_Init, then stdout of every rank but 0 goes to /dev/null. */
static inline void mpi_test_init(int *argc, char ***argv) {
  MPI_Init(argc, argv);
  mpi_test_quiet_other_ranks();
}

/* Takes this rank's failure count (cmocka_run_group_tests_name), finalizes MPI and
 * returns the exit status of main: 1 on every rank when any rank had a failure. */
static inline int mpi_test_finish(int failed) {
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any ? 1 : 0;
}

#endif
