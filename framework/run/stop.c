#define _GNU_SOURCE /* prctl */
#include "stop.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "verdict.h"

static volatile sig_atomic_t stop_caught;
static const int stop_signals[] = {SIGINT, SIGTERM, SIGUSR1};
enum { STOP_SIGNALS = sizeof stop_signals / sizeof stop_signals[0] };

static void stop_handler(int signal) {
  if (!stop_caught) stop_caught = signal;
}

static void stop_set(void (*handler)(int), int flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = flags;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < STOP_SIGNALS; ++i) sigaction(stop_signals[i], &sa, NULL);
}

/* Whether an MPI launcher started this process: Open MPI's mpirun, MPICH's mpiexec
 * (hydra), srun. (Not PMIX_RANK: Open MPI sets it in a process started alone, too.) */
static bool stop_launched(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK",
                                     "SLURM_PROCID"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; ++i)
    if (getenv(vars[i])) return true;
  return false;
}

void stop_install(void) {
  stop_caught = 0;
  stop_set(stop_handler, SA_RESTART | SA_RESETHAND);
  /* started by a shell (a job script) without a launcher: the shell's end, e.g. killed
     by SIGTERM while it waits for us, stops the run as SIGTERM would (a launcher's
     threads are not a parent to watch: they pass the signals on themselves) */
  if (stop_launched()) return;
  const pid_t parent = getppid();
  if (prctl(PR_SET_PDEATHSIG, SIGTERM) == 0 && getppid() != parent) raise(SIGTERM);
}

void stop_uninstall(void) { stop_set(SIG_DFL, 0); }

tsr_status stop_poll(MPI_Comm comm, stop_poll_t *p, int want, int *signal, int *requested,
                     tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *signal = *requested = 0;
  if (p->pending) {
    TSR_MPI(MPI_Wait(&p->request, MPI_STATUS_IGNORE));
    p->pending = false;
    *signal = p->agreed[0];
    *requested = p->agreed[1];
  }
  if (*signal) goto cleanup;
  p->mine[0] = stop_caught;
  p->mine[1] = want != 0;
  TSR_MPI(MPI_Iallreduce(p->mine, p->agreed, 2, MPI_INT, MPI_MAX, comm, &p->request));
  p->pending = true;
cleanup:
  return st;
}

tsr_status stop_finish(stop_poll_t *p, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  if (p->pending) TSR_MPI(MPI_Wait(&p->request, MPI_STATUS_IGNORE));
  p->pending = false;
cleanup:
  return st;
}

const char *stop_signal_name(int signal) {
  switch (signal) {
  case SIGINT: return "SIGINT";
  case SIGTERM: return "SIGTERM";
  case SIGUSR1: return "SIGUSR1";
  default: return "a signal";
  }
}
