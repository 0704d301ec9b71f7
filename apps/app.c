#include "app.h"

#include <stdio.h>
#include <stdlib.h>

#include "cpu_threads.h"
#include "tsr_parse.h"

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

/* Prints the refusal of an option's value once, on rank 0. */
static void app_arg_refused(MPI_Comm comm, const char *cmd, const char *opt, const char *text,
                            const char *range) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) return;
  fprintf(stderr, "tessera %s: %s: '%s' is not %s\n", cmd, opt, text, range);
  fflush(stderr);
}

bool app_int_arg(MPI_Comm comm, const char *cmd, const char *opt, const char *text, int64_t min,
                 int64_t max, int64_t *out) {
  if (tsr_parse_int(text, min, max, out)) return true;
  char range[96];
  snprintf(range, sizeof range, "an integer from %lld to %lld", (long long)min, (long long)max);
  app_arg_refused(comm, cmd, opt, text, range);
  return false;
}

bool app_real_arg(MPI_Comm comm, const char *cmd, const char *opt, const char *text, double min,
                  double max, double *out) {
  if (tsr_parse_real(text, min, max, out)) return true;
  char range[96];
  snprintf(range, sizeof range, "a number from %g to %g", min, max);
  app_arg_refused(comm, cmd, opt, text, range);
  return false;
}

void app_default_threads(MPI_Comm comm) {
  if (getenv("OMP_NUM_THREADS")) return;
  MPI_Comm node = MPI_COMM_NULL;
  int local = 1;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
  }
  int avail = cpu_threads_available(), online = cpu_threads_online();
  int threads = avail < online ? avail : online / (local > 0 ? local : 1);
  cpu_threads_set(threads > 0 ? threads : 1);
}

void app_default_float_mode(void) {
  const char *keep = getenv("TESSERA_KEEP_DENORMALS");
  if (!(keep && keep[0] && keep[0] != '0')) (void)cpu_threads_flush_denormals(1);
}
