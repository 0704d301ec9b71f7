/* tessera info: the MPI layout, OpenMP threads and OpenCL devices of a run. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "cpu_level.h"
#include "cpu_threads.h"
#include "node.h"
#include "opencl.h"
#include "verdict.h"

enum { INFO_TEXT_MAX = 4096 };

typedef struct info_rank {
  char node[NODE_NAME_MAX];
  int threads;
  char level[32];                /* the CPU level of the kernels in use */
  char devices[INFO_TEXT_MAX]; /* the OpenCL listing as this rank sees it */
} info_rank_t;

static void info_devices(char *out, size_t cap, tsr_error_t *err) {
  opencl_device_desc_t *devs = NULL;
  size_t n = 0, used = 0;
  tsr_status st = opencl_list_devices(&devs, &n, err);
  if (st != TSR_OK) {
    snprintf(out, cap, "  OpenCL: %.1000s\n", err->text);
    return;
  }
  if (n == 0) {
    snprintf(out, cap, "  OpenCL: no platform or device found (install an ICD, e.g. Debian's "
             "pocl-opencl-icd, or a GPU vendor's driver)\n");
    return;
  }
  used += (size_t)snprintf(out, cap, "  OpenCL: %zu device(s)\n", n);
  for (size_t i = 0; i < n && used < cap; ++i) {
    const opencl_device_desc_t *d = &devs[i];
    int k = snprintf(out + used, cap - used,
                     "    platform %d \"%s\", device %d: \"%s\" (%s, %s), %.2f GiB global "
                     "memory, %u compute units, double precision %s\n",
                     d->platform, d->platform_name, d->device, d->name, d->type, d->version,
                     (double)d->global_mem_bytes / (1024.0 * 1024.0 * 1024.0), d->compute_units,
                     d->double_precision ? "yes" : "no");
    if (k < 0) break;
    used += (size_t)k;
  }
  free(devs);
}

int app_info(MPI_Comm comm, int argc, char **argv) {
  tsr_status st = TSR_OK;
  tsr_error_t e, *err = &e;
  tsr_error_clear(err);
  info_rank_t *all = NULL, mine;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  static const char usage[] = "usage: tessera info\n";
  const app_opt_t opts[] = {APP_OPT_END};
  const app_cmd_t cmd = {"info", usage, opts, NULL, false};
  const int parsed = app_parse(comm, &cmd, argc, argv, NULL);
  if (parsed >= 0) return parsed;
  memset(&mine, 0, sizeof mine);
  TSR_MPI(MPI_Comm_rank(comm, &rank));
  TSR_MPI(MPI_Comm_size(comm, &size));
  TSR_TRY(node_name(mine.node, sizeof mine.node, err));
  mine.threads = cpu_threads_max();
  snprintf(mine.level, sizeof mine.level, "%s", cpu_level_name(cpu_level_current()));
  tsr_error_t cl_err;
  tsr_error_clear(&cl_err);
  info_devices(mine.devices, sizeof mine.devices, &cl_err);
  if (rank == 0) {
    all = malloc((size_t)size * sizeof *all);
    st = all ? TSR_OK : tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__,
                                      "out of memory gathering the info of %d ranks", size);
  }
  st = verdict_reduce(comm, st, 0, err);
  if (st != TSR_OK) goto cleanup;
  TSR_MPI(MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, comm));
  if (rank == 0) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    char *nl = strchr(version, '\n');
    if (nl) *nl = '\0';
    printf("tessera %s\n", TESSERA_VERSION);
    printf("MPI: %d rank(s); %s\n", size, version);
    char built[256];
    cpu_level_describe(built, sizeof built);
    printf("CPU kernels: levels of this build %s (rank 0's CPU); TESSERA_CPU_LEVEL picks a "
           "lower one\n", built);
    char wait[96];
    cpu_threads_wait_policy(wait, sizeof wait);
    printf("OpenMP threads wait: %s\n", wait);
    for (int r = 0; r < size; ++r)
      printf("  rank %d: node %s, %d OpenMP thread(s), CPU kernels %s\n", r, all[r].node,
             all[r].threads, all[r].level);
    /* devices once per node: ranks on one node see the same devices */
    for (int r = 0; r < size; ++r) {
      bool seen = false;
      for (int q = 0; q < r && !seen; ++q) seen = strcmp(all[q].node, all[r].node) == 0;
      if (seen) continue;
      printf("node %s:\n%s", all[r].node, all[r].devices);
    }
    fflush(stdout);
  }
cleanup:
  free(all);
  return app_report(comm, verdict_reduce(comm, st, 0, err), err);
}
