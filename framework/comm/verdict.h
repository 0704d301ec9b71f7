/* verdict: one outcome on every rank.
 *
 * Where ranks can disagree (config, plan, allocation, received messages, I/O), each rank
 * passes its own status to verdict_reduce. All ranks then return the same status and
 * the same error record: that of the failing rank with the lowest phase, then the
 * lowest rank. The phase orders causes before consequences (e.g. a failed extraction,
 * phase 0, before the garbled message a neighbour then received, phase 1). */
#ifndef VERDICT_H
#define VERDICT_H

#include <mpi.h>

#include "tsr_error.h"

/* Collective over comm. st and *err are this rank's outcome; on return they are the
 * shared verdict. phase must be in 0..15. */
TSR_NODISCARD tsr_status verdict_reduce(MPI_Comm comm, tsr_status st, int phase, tsr_error_t *err);

/* Turns an MPI error code into an error record naming the call. */
tsr_status verdict_mpi_error(int code, const char *call, const char *file, int line,
                             tsr_error_t *err);

/* Checks the result of an MPI call inside a function using TSR_TRY conventions. */
#define TSR_MPI(call)                                                                    \
  do {                                                                                   \
    int tsr_mpi_rc_ = (call);                                                            \
    if (tsr_mpi_rc_ != MPI_SUCCESS) {                                                    \
      st = verdict_mpi_error(tsr_mpi_rc_, #call, __FILE__, __LINE__, err);               \
      goto cleanup;                                                                      \
    }                                                                                    \
  } while (0)

#endif
