/* app: what the subcommands of the tessera command line share. */
#ifndef APP_H
#define APP_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "module.h"
#include "output.h"
#include "sim.h"
#include "tsr_error.h"

/* The physics modules there are (NULL-ended; the first is the default of "modules"),
 * and what the assembly needs from the program (modules.c). */
extern const module_def_t *const app_modules[];
extern const sim_setup_t app_sim_setup;

/* Prints "tessera: error: ..." once (on rank 0) for an error every rank agrees on and
 * returns the process exit status 1; returns 0 for TSR_OK. */
int app_report(MPI_Comm comm, tsr_status st, const tsr_error_t *err);

/* The value of option opt of `tessera cmd` (tsr_parse_int: the whole text a decimal
 * integer in [min, max]) into *out. Any other text prints "tessera cmd: opt: 'text' is
 * not an integer from min to max" once (rank 0) and returns false: the caller exits with
 * status 2 (bad usage), as every rank does, since all see the same arguments. */
bool app_int_arg(MPI_Comm comm, const char *cmd, const char *opt, const char *text, int64_t min,
                 int64_t max, int64_t *out);

/* A command's options as a table (app_parse). Kinds and what .out points to:
 *   APP_FLAG  bool, set true (or false with .clear)     --overwrite
 *   APP_TEXT  const char *, the next argument            --json FILE
 *   APP_INT   int64_t in [.imin, .imax] (tsr_parse_int)  --steps N
 *   APP_REAL  double in [.rmin, .rmax] (tsr_parse_real)  --seconds T
 *   APP_SET   app_sets_t, one more assignment            --set PATH=VALUE
 *   APP_LIST  unsigned, bit k for .names[k] in a comma-separated list of them
 *   APP_CUSTOM whatever .parse fills; false: "'text' is not .allowed"
 * A table ends with an entry whose name is NULL. */
typedef enum app_opt_kind {
  APP_FLAG, APP_TEXT, APP_INT, APP_REAL, APP_SET, APP_LIST, APP_CUSTOM
} app_opt_kind_t;
typedef struct app_opt {
  const char *name;
  app_opt_kind_t kind;
  void *out;
  int64_t imin, imax;
  double rmin, rmax;
  bool clear;                                   /* APP_FLAG: sets false */
  const char *const *names;                     /* APP_LIST: NULL-ended */
  bool (*parse)(const char *text, void *out);   /* APP_CUSTOM */
  const char *allowed;                          /* APP_CUSTOM: for the refusal */
} app_opt_t;

/* An entry of an options table: APP_OPT("--steps", APP_INT, &steps, .imin = 0, .imax = 9)
 * (the output, then any further fields by name); APP_OPT_END ends the table. */
#define APP_OPT(name_, kind_, ...) {.name = (name_), .kind = (kind_), .out = __VA_ARGS__}
#define APP_OPT_END {.name = NULL}

/* A command line's shape: its name for messages ("run", "bench --config"), its usage, its
 * options, and at most one operand (e.g. "CONFIG"; NULL: none), required or not. */
typedef struct app_cmd {
  const char *name;
  const char *usage;
  const app_opt_t *opts;
  const char *operand;
  bool operand_required;
} app_cmd_t;

/* Parses argv[1..argc) as cmd says (same on every rank: every rank sees the same
 * arguments): --help or -h prints the usage once and gives 0; an unknown option, one
 * without its value, a value not allowed, an operand too many or a required one missing
 * prints one message and the usage once (rank 0) and gives 2; otherwise -1 (go on) with
 * the options' outputs filled and the operand in *operand (NULL where absent; operand may
 * be NULL for a command without one). */
int app_parse(MPI_Comm comm, const app_cmd_t *cmd, int argc, char **argv, const char **operand);

/* A subcommand: its name as typed ("run", or "--config" after "bench") and its function. */
typedef struct app_command {
  const char *name;
  int (*fn)(MPI_Comm comm, int argc, char **argv);
} app_command_t;

/* The command of table (NULL-name ended) named argv[0], run with argc, argv; NULL when
 * none is. */
const app_command_t *app_command_find(const app_command_t *table, const char *name);

/* Whether the arguments of a subcommand ask for its usage (--help or -h anywhere): then
 * the usage is printed on stdout once (rank 0), and the caller returns 0. */
bool app_help(MPI_Comm comm, int argc, char **argv, const char *usage);

/* A usage error of `tessera cmd`: one line naming it, then the usage, on stderr once
 * (rank 0); returns 2, the exit status of bad usage. bad: the argument at fault (an
 * option unknown or without its value, or an operand too many), or NULL with missing:
 * what is missing (e.g. "CONFIG"). */
int app_usage(MPI_Comm comm, const char *cmd, const char *usage, const char *bad,
              const char *missing);

/* The overrides of a command line (--set PATH=VALUE, repeatable), in their order. */
enum { APP_MAX_SETS = 64 };
typedef struct app_sets {
  const char *items[APP_MAX_SETS]; /* borrowed from argv */
  int n;
} app_sets_t;

/* Keeps one --set assignment; past APP_MAX_SETS a usage error of `tessera cmd` (printed
 * once), and false: the caller exits with status 2. */
bool app_set_arg(MPI_Comm comm, const char *cmd, const char *text, app_sets_t *sets);

/* Collective: config_load, then every override in order (config_set), so that each value
 * is read and validated exactly as if the file said it. */
TSR_NODISCARD tsr_status app_config_load(MPI_Comm comm, const char *path, const app_sets_t *sets,
                                         config_t **doc, tsr_error_t *err);

/* A run's reading of a loaded document: the simulation's options, every module its
 * sections (module_read_all into modules[MODULE_MAX], *n of them), then unknown keys
 * refused (config_check_unknown). Not collective: the caller reduces the verdict. */
TSR_NODISCARD tsr_status app_read_modules(config_t *doc, simulation_options_t *so,
                                          module_t *modules, int *n, tsr_error_t *err);

/* Collective: rank 0 writes the document as run, overrides included (config_text), to
 * config.json in the output folder (recorded in its manifest); one verdict. */
TSR_NODISCARD tsr_status app_write_config(MPI_Comm comm, const config_t *doc,
                                          output_folder_t *out, tsr_error_t *err);

/* Median, smallest and largest of m >= 1 values (sorts them): the statistics of a
 * benchmark's repetitions. */
void app_stats(double *v, int m, double *median, double *lo, double *hi);

/* The same for a real (tsr_parse_real: finite, decimal, in [min, max]). */
bool app_real_arg(MPI_Comm comm, const char *cmd, const char *opt, const char *text, double min,
                  double max, double *out);

/* Call first in main, before MPI_Init. Without OMP_WAIT_POLICY or GOMP_SPINCOUNT in the
 * environment, sets GOMP_SPINCOUNT=10000 and starts the program again in the same process
 * (execv of /proc/self/exe with argv), since libgomp reads the variable when it is loaded,
 * before main. libgomp's default spins a waiting thread 300000 times before it sleeps: on
 * cores that other processes also want (two runs on a node, more threads than cores, a
 * build beside the run) that made runs 4-7x slower here (up to 40x reported); 10000
 * spins keep the idle machine's speed and fall off no cliff when loaded, where passive
 * loses 12% on idle cores (docs/performance.md). If the exec fails, the run goes on with
 * libgomp's default, and says so where it prints the policy. */
void app_default_wait_policy(char **argv);

/* Checks the environment variables tessera reads, on every rank, before the first
 * OpenMP parallel region:
 *   OMP_NUM_THREADS         a comma-separated list of integers (libgomp's syntax, one per
 *                           nesting level; tessera uses the first), each from 1 to
 *                           cpu_threads_most() (64 x the processors online, at most
 *                           omp_get_thread_limit()); no blanks, no empty value;
 *   TESSERA_KEEP_DENORMALS  0 or 1;
 *   TESSERA_NODE_NAME       a host name (node_name);
 *   TESSERA_CPU_LEVEL       a CPU level of this build that the CPU has (cpu_level.h);
 *                           applied here;
 *   OMP_WAIT_POLICY         active or passive, in any case (libgomp ignores other text).
 * Unset variables are fine. Collective: 0 on every rank, or one message (rank 0, naming
 * the variable, the value, the rank and what is allowed) and 1 on every rank. */
int app_check_environment(MPI_Comm comm);

/* Without OMP_NUM_THREADS, shares this node's processors out between the ranks on it:
 * a rank bound to a set of processors uses them all; an unbound rank (allowed on every
 * processor) takes processors / ranks-on-the-node, at least one. */
void app_default_threads(MPI_Comm comm);

/* Flush-to-zero and denormals-are-zero on every CPU thread (see cpu_threads.h), unless
 * the environment variable TESSERA_KEEP_DENORMALS is 1. Call after app_check_environment
 * and app_default_threads (the team must have its final size). */
void app_default_float_mode(void);

int app_info(MPI_Comm comm, int argc, char **argv);
int app_exchange_demo(MPI_Comm comm, int argc, char **argv);
int app_run(MPI_Comm comm, int argc, char **argv);
int app_bench(MPI_Comm comm, int argc, char **argv);
/* tessera bench's forms and options, as tessera --help and tessera bench --help print them. */
extern const char app_bench_help[];
int app_plan(MPI_Comm comm, int argc, char **argv);
int app_bench_hetero(MPI_Comm comm, int argc, char **argv);
int app_bench_config(MPI_Comm comm, int argc, char **argv);
int app_bench_machine(MPI_Comm comm, int argc, char **argv);

#endif
