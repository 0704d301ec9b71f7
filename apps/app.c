#define _POSIX_C_SOURCE 200809L

#include "app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cpu_level.h"
#include "cpu_threads.h"
#include "node.h"
#include "tsr_parse.h"
#include "tsr_stats.h"
#include "verdict.h"

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

bool app_set_arg(MPI_Comm comm, const char *cmd, const char *text, app_sets_t *sets) {
  if (sets->n < APP_MAX_SETS) {
    sets->items[sets->n++] = text;
    return true;
  }
  char range[96];
  snprintf(range, sizeof range, "allowed: at most %d --set options", APP_MAX_SETS);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    fprintf(stderr, "tessera %s: --set %s: %s\n", cmd, text, range);
    fflush(stderr);
  }
  return false;
}

tsr_status app_config_load(MPI_Comm comm, const char *path, const app_sets_t *sets,
                           config_t **doc, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(config_load(comm, path, doc, err));
  /* every rank has the same text and the same arguments: the same verdict */
  for (int i = 0; sets && i < sets->n; ++i) TSR_TRY(config_set(*doc, sets->items[i], err));
cleanup:
  if (st != TSR_OK) config_free(doc);
  return st;
}

tsr_status app_read_modules(config_t *doc, simulation_options_t *so, module_t *modules,
                            int *n, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(simulation_options_read(doc, so, err));
  TSR_TRY(module_read_all(doc, so, app_modules, modules, n, err));
  TSR_TRY(config_check_unknown(doc, err));
cleanup:
  return st;
}

tsr_status app_write_config(MPI_Comm comm, const config_t *doc, output_folder_t *out,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank = 0;
  char *text = NULL;
  output_file_t f = {.f = NULL};
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    char path[OUTPUT_PATH_MAX];
    text = config_text(doc);
    TSR_CHECK(text, TSR_ERR_NOMEM, "out of memory writing config.json");
    TSR_TRY(output_folder_file(out, path, sizeof path, err, "config.json"));
    TSR_TRY(output_file_open(&f, path, err));
    fputs(text, f.f);
    TSR_TRY(output_file_commit(&f, err));
  }
cleanup:
  output_file_discard(&f);
  free(text);
  return verdict_reduce(comm, st, 0, err);
}

void app_default_wait_policy(char **argv) {
  if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) return;
  if (setenv("GOMP_SPINCOUNT", "10000", 1) != 0) return;
  execv("/proc/self/exe", argv);
  unsetenv("GOMP_SPINCOUNT"); /* not started again: libgomp has its default */
}

/* OMP_NUM_THREADS: see app_check_environment. libgomp has read it before main (it warns
 * about text it cannot read and ignores it, and takes a number as large as asked for, then
 * crashes when it cannot start the threads); tessera refuses both before any parallel
 * region starts them. */
static tsr_status app_check_omp_threads(tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *value = getenv("OMP_NUM_THREADS");
  if (!value) goto cleanup;
  const int most = cpu_threads_most();
  bool ok = value[0] != '\0';
  for (const char *p = value; ok && *p;) {
    char item[32];
    size_t len = strcspn(p, ",");
    int64_t n = 0;
    ok = len < sizeof item;
    if (ok) {
      memcpy(item, p, len);
      item[len] = '\0';
      ok = tsr_parse_int(item, 1, most, &n);
    }
    p += len;
    if (*p == ',' && *++p == '\0') ok = false; /* a trailing comma */
  }
  TSR_CHECK(ok, TSR_ERR_INVALID,
            "OMP_NUM_THREADS = '%.64s%s': allowed is a comma-separated list of integers from 1 "
            "to %d (%d threads per processor online, %d processor(s) here, at most the OpenMP "
            "thread limit); unset it for the default",
            value, strlen(value) > 64 ? "..." : "", most, CPU_THREADS_PER_PROCESSOR_MAX,
            cpu_threads_online());
cleanup:
  return st;
}

int app_check_environment(MPI_Comm comm) {
  tsr_status st = TSR_OK;
  tsr_error_t e, *err = &e;
  tsr_error_clear(err);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const char *keep = getenv("TESSERA_KEEP_DENORMALS");
  char node[NODE_NAME_MAX];
  st = app_check_omp_threads(err);
  if (st == TSR_OK && keep && strcmp(keep, "0") != 0 && strcmp(keep, "1") != 0)
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                       "TESSERA_KEEP_DENORMALS = '%.64s%s': allowed are 0 (subnormal floats "
                       "flushed to zero on the CPU threads, the default) and 1 (kept)",
                       keep, strlen(keep) > 64 ? "..." : "");
  const char *wait = getenv("OMP_WAIT_POLICY");
  if (st == TSR_OK && wait && strcasecmp(wait, "active") != 0 && strcasecmp(wait, "passive") != 0)
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                       "OMP_WAIT_POLICY = '%.64s%s': allowed are active and passive; unset, "
                       "tessera's threads spin 10000 times, then sleep",
                       wait, strlen(wait) > 64 ? "..." : "");
  if (st == TSR_OK) st = node_name(node, sizeof node, err);
  char level[512];
  if (st == TSR_OK && cpu_level_from_environment(level, sizeof level) != 0)
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__, "%s", level);
  if (st != TSR_OK) tsr_error_prefix(err, "rank %d", rank);
  return app_report(comm, verdict_reduce(comm, st, 0, err), err);
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
  if (!(keep && strcmp(keep, "1") == 0)) (void)cpu_threads_flush_denormals(1);
}

void app_stats(double *v, int m, double *median, double *lo, double *hi) {
  *median = tsr_sort_median(v, m);
  *lo = v[0];
  *hi = v[m - 1];
}

bool app_help(MPI_Comm comm, int argc, char **argv, const char *usage) {
  int rank = 0;
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      MPI_Comm_rank(comm, &rank);
      if (rank == 0) fputs(usage, stdout);
      return true;
    }
  return false;
}

int app_usage(MPI_Comm comm, const char *cmd, const char *usage, const char *bad,
              const char *missing) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) return 2;
  if (bad && bad[0] == '-')
    fprintf(stderr, "tessera %s: option '%s' is unknown here or lacks its value\n", cmd, bad);
  else if (bad)
    fprintf(stderr, "tessera %s: unexpected argument '%s'\n", cmd, bad);
  else if (missing)
    fprintf(stderr, "tessera %s: %s is missing\n", cmd, missing);
  fputs(usage, stderr);
  return 2;
}

/* One option's value from text into o->out; false (message printed) where not allowed. */
static bool app_opt_value(MPI_Comm comm, const app_cmd_t *cmd, const app_opt_t *o,
                          const char *text) {
  switch (o->kind) {
  case APP_TEXT: *(const char **)o->out = text; return true;
  case APP_INT: return app_int_arg(comm, cmd->name, o->name, text, o->imin, o->imax, o->out);
  case APP_REAL: return app_real_arg(comm, cmd->name, o->name, text, o->rmin, o->rmax, o->out);
  case APP_SET: return app_set_arg(comm, cmd->name, text, o->out);
  case APP_LIST: {
    unsigned m = 0;
    char buf[256], allowed[256] = "a comma-separated list of";
    const bool fits = snprintf(buf, sizeof buf, "%s", text) < (int)sizeof buf;
    char *save = NULL;
    for (char *t = fits ? strtok_r(buf, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
      int k = 0;
      while (o->names[k] && strcmp(o->names[k], t) != 0) ++k;
      if (!o->names[k]) {
        m = 0;
        break;
      }
      m |= 1u << k;
    }
    if (m) {
      *(unsigned *)o->out = m;
      return true;
    }
    for (int k = 0; o->names[k]; ++k) {
      const size_t used = strlen(allowed);
      snprintf(allowed + used, sizeof allowed - used, "%s %s", k ? "," : "", o->names[k]);
    }
    app_arg_refused(comm, cmd->name, o->name, text, allowed);
    return false;
  }
  case APP_CUSTOM:
    if (o->parse(text, o->out)) return true;
    app_arg_refused(comm, cmd->name, o->name, text, o->allowed);
    return false;
  case APP_FLAG: break;
  }
  return false;
}

int app_parse(MPI_Comm comm, const app_cmd_t *cmd, int argc, char **argv, const char **operand) {
  if (app_help(comm, argc, argv, cmd->usage)) return 0;
  const char *found = NULL;
  for (int i = 1; i < argc; ++i) {
    const app_opt_t *o = cmd->opts;
    while (o && o->name && strcmp(o->name, argv[i]) != 0) ++o;
    if (o && o->name && o->kind == APP_FLAG) {
      *(bool *)o->out = !o->clear;
    } else if (o && o->name && i + 1 < argc) {
      if (!app_opt_value(comm, cmd, o, argv[++i])) return 2;
    } else if ((!o || !o->name) && argv[i][0] != '-' && cmd->operand && !found) {
      found = argv[i];
    } else {
      return app_usage(comm, cmd->name, cmd->usage, argv[i], NULL);
    }
  }
  if (cmd->operand_required && !found)
    return app_usage(comm, cmd->name, cmd->usage, NULL, cmd->operand);
  if (operand) *operand = found;
  return -1;
}

const app_command_t *app_command_find(const app_command_t *table, const char *name) {
  for (const app_command_t *c = table; name && c->name; ++c)
    if (strcmp(c->name, name) == 0) return c;
  return NULL;
}
