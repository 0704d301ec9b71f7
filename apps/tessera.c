/* tessera: the command line. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "app.h"

#ifndef TESSERA_VERSION
#define TESSERA_VERSION "unknown"
#endif

static const char usage[] =
    "usage: tessera [--help | --version] COMMAND [ARGS]\n"
    "\n"
    "tessera is a block-structured, heterogeneous CPU+GPU lattice Boltzmann framework.\n"
    "Run it under mpirun for several processes: mpirun -np 2 tessera COMMAND ...\n"
    "\n"
    "commands:\n"
    "  run CONFIG [--set PATH=VALUE]... [--output FOLDER] [--overwrite] [--steps N]\n"
    "      [--restart CHECKPOINT|FOLDER|latest]\n"
    "                         runs the simulation CONFIG describes (e.g.\n"
    "                         configs/cavity.json), assembled from the physics modules\n"
    "                         its \"modules\" list names (default: lbm, lattice\n"
    "                         Boltzmann flow; thermal adds a temperature with buoyancy,\n"
    "                         shan_chen liquid-vapour separation, scalar a passive\n"
    "                         scalar carried by the flow, statistics the mean and RMS\n"
    "                         of chosen quantities over a window of steps; d2q37, on\n"
    "                         its own, thermal compressible flow on D2Q37); prints\n"
    "                         progress and\n"
    "                         a summary with the\n"
    "                         modules' totals (lbm: the fluid mass and kinetic energy,\n"
    "                         each named body's force, c_D and c_L, also in\n"
    "                         series_<body>.csv; thermal: Nu; d2q37: mass, momentum,\n"
    "                         energy, kinetic energy); with a units section the\n"
    "                         flow's values are in SI units (the outputs too where\n"
    "                         units.output is \"physical\"); it ends early at a steady\n"
    "                         state where the\n"
    "                         config's stop.when_steady asks for it,\n"
    "                         and writes summary.json, config.json (the configuration\n"
    "                         run: --set PATH=VALUE replaces or adds the JSON value at a\n"
    "                         key path, e.g. --set lbm.viscosity=0.01, checked as the\n"
    "                         file's values are), and the VTK files, line probes\n"
    "                         and PNG slices the config's output section asks for, into\n"
    "                         the output folder (the config's output.folder, or FOLDER);\n"
    "                         N replaces the config's steps; the config's hardware section\n"
    "                         says what each process runs its blocks on (the CPU or an\n"
    "                         OpenCL device; per node with node configurations) and how\n"
    "                         blocks are weighted; the summary lists every process's\n"
    "                         predicted and measured time per phase. Every check_every\n"
    "                         steps (default 200) it checks that every cell is stable;\n"
    "                         a run that diverged stops there with a message, a summary\n"
    "                         whose status is \"diverged\" and exit status 1;\n"
    "                         the run owns its output folder: a second run into it is\n"
    "                         refused while the first lives; output an earlier run left\n"
    "                         there makes it refuse to start, or with --overwrite removes\n"
    "                         exactly the files its manifest lists (files named like\n"
    "                         output that no manifest lists are never removed: the run\n"
    "                         refuses and names them); manifest.json lists what the run\n"
    "                         wrote; every file appears whole or not at all. SIGTERM,\n"
    "                         SIGINT or SIGUSR1 end the run after a step on every rank,\n"
    "                         with an \"interrupted\" summary and exit status 128 + signal;\n"
    "                         with output.checkpoint_every or _interval, checkpoints\n"
    "                         (and one at such a signal) that --restart CHECKPOINT goes\n"
    "                         on from, bitwise, on any processes and hardware, up to\n"
    "                         step N (docs/checkpoints.md); a FOLDER, or latest (the\n"
    "                         output folder): its checkpoint of the highest step\n"
    "";

static const char usage_plan[] =
    "  plan CONFIG (--ranks N | --nodes LIST) [--set PATH=VALUE]... [--json FILE]\n"
    "       [--csv FILE] [--png FILE]\n"
    "                         the block -> rank assignment a run of CONFIG on N processes\n"
    "                         would use, without running it: per process its node, hs,\n"
    "                         blocks, cells, predicted time per step, memory and BlockIDs\n"
    "                         (also as CSV, and as a PNG of a column per process up to\n"
    "                         its predicted time, coloured by node), the predicted\n"
    "                         imbalance, the wall time of the configured steps and\n"
    "                         between VTK outputs, the\n"
    "                         largest process's and node's memory (against this machine's\n"
    "                         with --ranks), and warnings: processes without a block, a\n"
    "                         block grid too coarse, a node short of memory (tessera run\n"
    "                         prints the same in its header); LIST names the node of every\n"
    "                         rank, e.g. \"gpu[1-4],cpu[01-60]:2\" (\":n\": ranks per node,\n"
    "                         default: the processes its configuration lists)\n"
    "";

static const char usage_more[] =
    "  info                   MPI ranks and the node of each, OpenMP threads, and every\n"
    "                         OpenCL platform and device (global memory, compute units)\n"
    "  exchange-demo CONFIG   fills a test field whose cells encode their global position,\n"
    "                         runs the configured number of ghost exchanges over the block\n"
    "                         grid of CONFIG and checks that every ghost cell of every block\n"
    "                         holds exactly its neighbour's value (see configs/exchange.json;\n"
    "                         its \"exchange\" section sets the ghost widths and the layout)\n"
    "\n"
    "options:\n"
    "  --help                 this text\n"
    "  --version              the version\n"
    "\n"
    "environment (checked at start-up: a value outside what is allowed is an error, exit\n"
    "status 1):\n"
    "  TESSERA_NODE_NAME      node name of this process, instead of MPI_Get_processor_name\n"
    "                         (it picks the node configuration; one machine can play\n"
    "                         several nodes): 1 to 255 letters, digits, '.', '-', '_'\n"
    "  TESSERA_KEEP_DENORMALS 1: keep subnormal floats on the CPU threads; 0 (default):\n"
    "                         flush them to zero, which avoids slow subnormal arithmetic\n"
    "  TESSERA_CPU_LEVEL      the instruction-set level of the CPU kernels (default: the\n"
    "                         highest of this build that the CPU has; tessera info lists\n"
    "                         them: x86-64-v2, x86-64-v3 (AVX2), x86-64-v4 (AVX-512) on\n"
    "                         x86-64): a lower one, for comparisons\n"
    "  OMP_NUM_THREADS        OpenMP threads of each CPU process, unless its node\n"
    "                         configuration gives \"threads\" (default: the processors\n"
    "                         the process is bound to, or, unbound, the node's processors\n"
    "                         shared out between the ranks on the node): integers from 1\n"
    "                         to 64 x the processors online (at most the OpenMP thread\n"
    "                         limit), comma-separated (one per nesting level; the first\n"
    "                         counts)\n"
    "  OMP_WAIT_POLICY        active or passive: how idle OpenMP threads wait (default: they\n"
    "                         spin 10000 times, then sleep: GOMP_SPINCOUNT=10000, which\n"
    "                         tessera sets, starting itself again, when neither variable\n"
    "                         is set; libgomp's own 300000 spins made runs on busy cores\n"
    "                         several times slower)\n"
    "\n"
    "exit status: 0 on success, 1 on any error (the same on every rank), 2 on bad usage\n"
    "(an unknown option, or an option's number that is not written whole in decimal\n"
    "within its range, e.g. --steps '' or --steps 99999999999999999999), 128 + the signal\n"
    "for a run stopped by a signal.\n";

/* The subcommands; 2 for an unknown one. */
static const app_command_t commands[] = {{"run", app_run},   {"plan", app_plan},
                                         {"bench", app_bench}, {"info", app_info},
                                         {"exchange-demo", app_exchange_demo}, {NULL, NULL}};

static int command(MPI_Comm comm, const char *cmd, int argc, char **argv) {
  const app_command_t *c = app_command_find(commands, cmd);
  if (c) return c->fn(comm, argc, argv);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    fprintf(stderr, "tessera: unknown command '%s'; commands are: run, plan, bench, info, exchange-demo "
            "(tessera --help)\n", cmd);
  return 2;
}

int main(int argc, char **argv) {
  app_default_wait_policy(argv); /* before MPI and before any thread: it may exec */
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0, rc = 0;
  MPI_Comm_rank(comm, &rank);
  const char *cmd = argc > 1 ? argv[1] : NULL;
  if (!cmd || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    if (rank == 0) {
      fputs(usage, cmd ? stdout : stderr);
      fputs(usage_plan, cmd ? stdout : stderr);
      fputs(app_bench_help, cmd ? stdout : stderr);
      fputs(usage_more, cmd ? stdout : stderr);
    }
    rc = cmd ? 0 : 2;
  } else if (strcmp(cmd, "--version") == 0) {
    if (rank == 0) printf("tessera %s\n", TESSERA_VERSION);
  } else {
    /* the environment is checked before the first OpenMP parallel region starts threads */
    rc = app_check_environment(comm);
    if (rc == 0) {
      app_default_threads(comm);
      app_default_float_mode();
      rc = command(comm, cmd, argc - 1, argv + 1);
    }
  }
  MPI_Finalize();
  return rc;
}
