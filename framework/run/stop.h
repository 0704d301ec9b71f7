/* stop: a run asked to stop by a signal (SIGINT, SIGTERM, SIGUSR1) ends after the same
 * step on every rank, instead of dying wherever the signal finds it.
 *
 * stop_install sets handlers that only record the signal; a second signal of the same
 * kind then has its default action (Ctrl-C twice ends the run at once). Every rank
 * calls stop_poll once per step: it reports the signal the ranks agreed on one poll
 * earlier and starts the next agreement (MPI_Iallreduce, overlapped with the following
 * step), so the cost per step is starting and completing one non-blocking reduction of
 * an int. A signal reaching any rank stops every rank, at the same step. Open MPI's
 * mpirun (4.1) passes SIGTERM and SIGINT on to the ranks (as SIGTERM), and kills those
 * that have not ended after a grace period of its own; it does not forward SIGUSR1,
 * which has to be sent to the ranks themselves (as srun or scancel --signal do).
 * A process started without a launcher also stops as at SIGTERM when its parent ends (a
 * job script's shell killed while it waits: the shell does not pass the signal on). */
#ifndef STOP_H
#define STOP_H

#include <mpi.h>
#include <stdbool.h>

#include "tsr_error.h"

typedef struct stop_poll {
  MPI_Request request;
  int mine[2], agreed[2]; /* the signal, a request */
  bool pending;
} stop_poll_t;

/* Records SIGINT, SIGTERM and SIGUSR1 from now on (process-wide). */
void stop_install(void);

/* Puts the default actions back. */
void stop_uninstall(void);

/* Collective, once per step on every rank: *signal becomes the signal the ranks agreed on
 * at the previous poll (0: none, or the first poll). The same reduction carries a request
 * any rank may make (want != 0: e.g. rank 0's clock says a checkpoint is due); *requested
 * is whether some rank made one at the previous poll. */
TSR_NODISCARD tsr_status stop_poll(MPI_Comm comm, stop_poll_t *p, int want, int *signal,
                                   int *requested, tsr_error_t *err);

/* Collective: completes an agreement still in flight (call before leaving the loop
 * unless a stop was reported). */
TSR_NODISCARD tsr_status stop_finish(stop_poll_t *p, tsr_error_t *err);

/* "SIGINT", "SIGTERM" or "SIGUSR1". */
const char *stop_signal_name(int signal);

#endif
