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
#include <stdlib.h>

#include "opencl.h"

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

/* Exit status of a test that found nothing to run on (CTest's SKIP_RETURN_CODE). */
enum { MPI_TEST_SKIPPED = 77 };

/* Whether every rank sees an OpenCL device; if not, rank 0 says so. Collective. */
static inline int mpi_test_have_opencl(void) {
  opencl_device_desc_t *list = NULL;
  size_t n = 0;
  tsr_error_t err;
  int mine = opencl_list_devices(&list, &n, &err) == TSR_OK && n > 0, all = 0;
  free(list);
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!all && rank == 0)
    printf("skipped: no OpenCL device on this machine (install an OpenCL driver, e.g. Debian's "
           "pocl-opencl-icd, to run the GPU tests)\n");
  return all;
}

#endif
