/* tessera plan CONFIG --ranks N [--nodes LIST] [--json FILE]: the block -> rank assignment a
 * run of CONFIG on N processes would use, and its prediction, without starting those
 * processes or allocating simulation data. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "config.h"
#include "image.h"
#include "plan.h"
#include "sim.h"
#include "node.h"
#include "registry.h"
#include "report.h"
#include "run.h"
#include "simulation.h"
#include "verdict.h"

static const char plan_usage[] =
    "usage: tessera plan CONFIG (--ranks N | --nodes LIST) [--set PATH=VALUE]... [--json FILE]\n"
    "       [--csv FILE] [--png FILE]\n"
    "  LIST: the node of every rank in rank order, e.g. \"gpu[1-4],cpu[01-60]:2\" (a name may\n"
    "  hold one range; \":n\" ranks on each, default: the processes its configuration lists)\n";

/* The most processes a plan is made for (--ranks, --nodes). */
enum { PLAN_MAX_RANKS = 1 << 20 };

/* BlockIDs of rank r as ranges "0-5,9,12-14" (text grows as needed; *text freed by caller). */
static tsr_status plan_block_ranges(const patch_t *patch, int r, char **text, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t cap = 64, len = 0;
  char *s = malloc(cap);
  TSR_CHECK(s, TSR_ERR_NOMEM, "out of memory listing blocks");
  s[0] = '\0';
  int32_t n = patch_block_count(patch);
  for (int32_t id = 0; id < n; ++id) {
    if (patch_block(patch, id)->rank != r) continue;
    int32_t last = id;
    while (last + 1 < n && patch_block(patch, last + 1)->rank == r) ++last;
    char item[32];
    int m = last > id ? snprintf(item, sizeof item, "%s%d-%d", len ? "," : "", (int)id, (int)last)
                      : snprintf(item, sizeof item, "%s%d", len ? "," : "", (int)id);
    if (len + (size_t)m + 1 > cap) {
      cap = 2 * (len + (size_t)m + 1);
      char *grown = realloc(s, cap);
      TSR_CHECK(grown, TSR_ERR_NOMEM, "out of memory listing blocks");
      s = grown;
    }
    memcpy(s + len, item, (size_t)m + 1);
    len += (size_t)m;
    id = last;
  }
  *text = s;
  s = NULL;
cleanup:
  free(s);
  return st;
}

/* The device or threads of a process, for the table. */
static void plan_where(const node_process_t *q, char *out, size_t cap) {
  if (q->proc.hs == SIMULATION_HS_GPU)
    q->proc.device >= 0 ? snprintf(out, cap, "device %d", q->proc.device)
                        : snprintf(out, cap, "device default");
  else
    q->proc.threads > 0 ? snprintf(out, cap, "%d threads", q->proc.threads)
                        : snprintf(out, cap, "threads default");
}

enum { PLAN_COLUMNS = 16 };

/* The title, the model's figures and the table's header. */
static void plan_print_head(const char *config, const simulation_options_t *so,
                            const plan_t *plan) {
  printf("tessera plan %s: %d blocks on %d ranks\n", config,
         (int)patch_block_count(plan->patch), plan->nranks);
  const simulation_balance_t *bal = &so->hardware.balance;
  printf("model figures: %s%s%s%s (exchange %.3g GB/s; between nodes %.3g GB/s, %.3g us; "
         "within a node %.3g GB/s, %.3g us; host<->device %.3g GB/s)\n",
         bal->machine[0] ? "hardware.machine " : "hardware.balance", bal->machine,
         bal->machine_name[0] ? ", " : "", bal->machine_name, bal->exchange_gbs,
         bal->network_gbs, bal->latency_us, simulation_intranode_gbs(bal),
         simulation_intranode_latency_us(bal), bal->device_gbs);
  printf("%6s %-16s %-3s %-16s %9s %7s %12s %10s %10s %10s %10s %9s  %s\n", "rank", "node",
         "hs", "where", "MLUPS", "blocks", "cells", "compute", "exchange", "comm", "total",
         "memory", "BlockIDs");
}

/* Rank r's line of the table and its row of the report (row[PLAN_COLUMNS]); where and
 * ranges: its device or threads and its BlockIDs, kept until the report is written. */
static void plan_row(const plan_t *plan, const plan_memory_t *mem, int r, const char *where,
                     const char *ranges, report_item_t *row) {
  const balance_cost_t *c = &plan->cost[r];
  const node_process_t *q = &plan->procs[r];
  const double total = balance_cost_seconds(c);
  printf("%6d %-16s %-3s %-16s %9.1f %7d %12.0f %8.3fms %8.3fms %8.3fms %8.3fms %6.2fGiB  %s\n",
         r, q->node, simulation_hs_name(q->proc.hs), where, plan->mlups[r], (int)c->blocks,
         c->cells, 1e3 * c->compute, 1e3 * c->exchange, 1e3 * c->comm, 1e3 * total,
         mem[r].host / 1073741824.0, ranges);
  int k = 0;
  row[k++] = REPORT_INT_ITEM("rank", r);
  row[k++] = REPORT_TEXT_ITEM("node", q->node);
  row[k++] = REPORT_TEXT_ITEM("hs", simulation_hs_name(q->proc.hs));
  row[k++] = REPORT_INT_ITEM("device", q->proc.device);
  row[k++] = REPORT_INT_ITEM("threads", q->proc.threads);
  row[k++] = REPORT_REAL_ITEM("mlups_weight", plan->mlups[r]);
  row[k++] = REPORT_INT_ITEM("blocks", c->blocks);
  row[k++] = REPORT_INT_ITEM("cells", (int64_t)c->cells);
  row[k++] = REPORT_REAL_ITEM("predicted_compute_s", c->compute);
  row[k++] = REPORT_REAL_ITEM("predicted_exchange_s", c->exchange);
  row[k++] = REPORT_REAL_ITEM("predicted_comm_s", c->comm);
  row[k++] = REPORT_REAL_ITEM("predicted_s", total);
  row[k++] = REPORT_INT_ITEM("messages", c->messages);
  row[k++] = REPORT_REAL_ITEM("predicted_host_bytes", mem[r].host);
  row[k++] = REPORT_REAL_ITEM("predicted_device_bytes", mem[r].device);
  row[k++] = REPORT_TEXT_ITEM("block_ids", ranges);
}

/* The prediction of the whole plan, against the best the block granularity allows, and
 * the time planning took; *mlups and *ratio (step over best) for the report. */
static void plan_print_prediction(const plan_t *plan, double cells, double seconds,
                                  double *mlups, double *ratio) {
  *mlups = plan->max_seconds > 0 ? cells / plan->max_seconds / 1e6 : 0.0;
  *ratio = plan->best_compute > 0 ? plan->max_seconds / plan->best_compute : 0.0;
  printf("predicted: %.3f ms per step (slowest rank), mean %.3f ms, imbalance %.1f%%, %.1f MLUPS\n",
         1e3 * plan->max_seconds, 1e3 * plan->mean_seconds, 100.0 * plan_imbalance(plan), *mlups);
  double compute = 0;
  for (int r = 0; r < plan->nranks; ++r)
    if (plan->cost[r].compute > compute) compute = plan->cost[r].compute;
  printf("best the block granularity allows: %.3f ms of compute per step (communication not "
         "counted); this plan: largest compute %.3f ms, largest step %.3f times that bound\n",
         1e3 * plan->best_compute, 1e3 * compute, *ratio);
  printf("planned in %.3f s\n", seconds);
}

/* What the report writes besides the table: the files --json, --csv and --png ask for
 * (NULL: none), and the prediction's memory (mem) against the nodes' (node_avail, or NULL). */
typedef struct plan_outputs {
  const char *json, *csv, *png;
  const plan_memory_t *mem;
  const double *node_avail;
} plan_outputs_t;

enum { PLAN_PNG_ROWS = 100 };

/* The picture of the plan: a column per process, in rank order, up to its predicted time
 * per step (100 rows: the slowest process), coloured by its node (the nodes numbered in
 * rank order); grey above it, the time it waits for the slowest. */
static tsr_status plan_write_png(const char *path, const plan_t *plan, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const int n = plan->nranks;
  double *v = NULL;
  uint8_t *idle = NULL;
  TSR_CHECK(n <= IMAGE_MAX_PIXELS, TSR_ERR_INVALID,
            "--png: %d processes, more columns than a picture holds (%d)", n, IMAGE_MAX_PIXELS);
  v = malloc((size_t)n * PLAN_PNG_ROWS * sizeof *v);
  idle = malloc((size_t)n * PLAN_PNG_ROWS);
  TSR_CHECK(v && idle, TSR_ERR_NOMEM, "out of memory for the plan's picture");
  int node = -1;
  for (int r = 0; r < n; ++r) {
    if (plan->node_of_rank[r] == r) ++node;
    const double t = balance_cost_seconds(&plan->cost[r]);
    const int up = plan->max_seconds > 0 ? (int)lround(PLAN_PNG_ROWS * t / plan->max_seconds) : 0;
    for (int j = 0; j < PLAN_PNG_ROWS; ++j) {
      v[(size_t)j * n + r] = node;
      idle[(size_t)j * n + r] = j >= up;
    }
  }
  char caption[96];
  snprintf(caption, sizeof caption, "time per step 0 to %.3g ms  idle on top",
           1e3 * plan->max_seconds);
  const image_field_t field = {n, PLAN_PNG_ROWS, v, idle};
  image_options_t o = image_options_default();
  o.label = "node";
  o.caption = caption;
  TSR_TRY(image_write_png(path, &field, &o, err));
cleanup:
  free(v);
  free(idle);
  return st;
}

/* The table, the prediction, and the reports o asks for. */
static tsr_status plan_report(const char *config, const plan_outputs_t *o,
                              const simulation_options_t *so, const plan_t *plan,
                              double seconds, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const patch_t *patch = plan->patch;
  int n = plan->nranks;
  char **ranges = calloc((size_t)n, sizeof *ranges);
  char (*where)[32] = calloc((size_t)n, sizeof *where);
  report_item_t *rows = calloc((size_t)n * PLAN_COLUMNS, sizeof *rows);
  TSR_CHECK(ranges && where && rows, TSR_ERR_NOMEM, "out of memory for the plan of %d ranks", n);
  double cells = 0, mlups = 0, ratio = 0;
  const double wall = plan->max_seconds * (double)so->steps;
  for (int r = 0; r < n; ++r) cells += plan->cost[r].cells;
  plan_print_head(config, so, plan);
  for (int r = 0; r < n; ++r) {
    TSR_TRY(plan_block_ranges(patch, r, &ranges[r], err));
    plan_where(&plan->procs[r], where[r], sizeof where[r]);
    plan_row(plan, o->mem, r, where[r], ranges[r], &rows[(size_t)r * PLAN_COLUMNS]);
  }
  plan_print_prediction(plan, cells, seconds, &mlups, &ratio);
  run_print_cost(plan, so, o->mem, o->node_avail, config);
  if (o->json) {
    report_item_t items[] = {
        REPORT_TEXT_ITEM("config", config),
        REPORT_INT_ITEM("ranks", n),
        REPORT_INT_ITEM("blocks", patch_block_count(patch)),
        REPORT_INT_ITEM("cells", (int64_t)cells),
        REPORT_INT_ITEM("steps", so->steps),
        REPORT_REAL_ITEM("predicted_step_s", plan->max_seconds),
        REPORT_REAL_ITEM("predicted_wall_s", wall),
        REPORT_REAL_ITEM("predicted_mean_s", plan->mean_seconds),
        REPORT_REAL_ITEM("predicted_imbalance", plan_imbalance(plan)),
        REPORT_REAL_ITEM("predicted_mlups", mlups),
        REPORT_REAL_ITEM("best_compute_s", plan->best_compute),
        REPORT_REAL_ITEM("step_over_best", ratio),
        REPORT_REAL_ITEM("plan_seconds", seconds),
        REPORT_TABLE_ITEM("processes", rows, (size_t)n, PLAN_COLUMNS),
    };
    TSR_TRY(report_write_json(o->json, items, sizeof items / sizeof items[0], err));
    printf("written to %s\n", o->json);
  }
  if (o->csv) {
    TSR_TRY(report_write_csv(o->csv, rows, (size_t)n, PLAN_COLUMNS, err));
    printf("written to %s\n", o->csv);
  }
  if (o->png) {
    TSR_TRY(plan_write_png(o->png, plan, err));
    printf("written to %s\n", o->png);
  }
cleanup:
  for (int r = 0; ranges && r < n; ++r) free(ranges[r]);
  free(ranges);
  free(where);
  free(rows);
  return st;
}

/* Rank 0's work: the processes, the registry, the plan, the report. */
static tsr_status plan_make(config_t *doc, const char *config, int64_t ranks, const char *nodes,
                            const char *json, const char *csv, const char *png,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  simulation_options_t so;
  module_t modules[MODULE_MAX];
  module_decl_t decls[MODULE_MAX];
  int nmodules = 0;
  uint64_t fs = 0;
  char **names = NULL;
  int n = 0;
  node_process_t *procs = NULL;
  registry_t *reg = NULL;
  plan_t *plan = NULL;
  plan_memory_t *mem = NULL;
  double *avail = NULL;
  double t0 = MPI_Wtime();
  TSR_TRY(app_read_modules(doc, &so, modules, &nmodules, err));
  if (nodes) {
    TSR_TRY(node_list_expand(&so.hardware, nodes, PLAN_MAX_RANKS, &names, &n, err));
    TSR_CHECK(ranks < 0 || ranks == n, TSR_ERR_INVALID,
              "--ranks %lld, and --nodes \"%s\" places %d ranks; give one, or make them agree",
              (long long)ranks, nodes, n);
  } else {
    char here[NODE_NAME_MAX];
    TSR_CHECK(ranks >= 1 && ranks <= PLAN_MAX_RANKS, TSR_ERR_INVALID,
              "--ranks: give the number of processes, 1..%d (or --nodes)", PLAN_MAX_RANKS);
    TSR_TRY(node_name(here, sizeof here, err));
    n = (int)ranks;
    names = calloc((size_t)n, sizeof *names);
    TSR_CHECK(names, TSR_ERR_NOMEM, "out of memory for %d ranks", n);
    for (int r = 0; r < n; ++r) {
      names[r] = malloc(strlen(here) + 1);
      TSR_CHECK(names[r], TSR_ERR_NOMEM, "out of memory for %d ranks", n);
      memcpy(names[r], here, strlen(here) + 1);
    }
  }
  procs = malloc((size_t)n * sizeof *procs);
  TSR_CHECK(procs, TSR_ERR_NOMEM, "out of memory for %d ranks", n);
  TSR_TRY(node_assign(&so.hardware, (const char *const *)names, n, procs, err));
  TSR_TRY(registry_create(&reg, err));
  /* no device is opened: the items of every hs size the messages alike */
  module_env_t env = {.so = &so, .cl = NULL};
  TSR_TRY(module_register_all(modules, nmodules, reg, &env, decls, &fs, NULL, 0, err));
  TSR_TRY(plan_create(&so, modules, decls, nmodules, reg, fs, procs, NULL, NULL, n, 0, &plan,
                      err));
  const double seconds = MPI_Wtime() - t0;
  mem = malloc((size_t)n * sizeof *mem);
  avail = calloc((size_t)n, sizeof *avail);
  TSR_CHECK(mem && avail, TSR_ERR_NOMEM, "out of memory for %d ranks", n);
  TSR_TRY(plan_memory(plan->patch, modules, decls, nmodules, reg, fs, &so, mem, err));
  /* the memory of the nodes: this machine's where every rank runs here */
  if (!nodes) avail[0] = (double)node_memory_available();
  if (so.hardware.balance.calibrate)
    printf("note: hardware.balance.calibrate is on: a run measures each process's throughput "
           "at start-up; this plan uses the configured throughput\n");
  const plan_outputs_t out = {json, csv, png, mem, avail};
  TSR_TRY(plan_report(config, &out, &so, plan, seconds, err));
cleanup:
  free(mem);
  free(avail);
  plan_free(&plan);
  registry_free(&reg);
  module_free_all(modules, nmodules);
  free(procs);
  node_names_free(names, n);
  return st;
}

int app_plan(MPI_Comm comm, int argc, char **argv) {
  tsr_status st = TSR_OK;
  tsr_error_t e, *err = &e;
  tsr_error_clear(err);
  config_t *doc = NULL;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const char *config = NULL, *nodes = NULL, *json = NULL, *csv = NULL, *png = NULL;
  int64_t ranks = -1;
  app_sets_t sets = {.n = 0};
  const app_opt_t opts[] = {APP_OPT("--ranks", APP_INT, &ranks, .imin = 1, .imax = PLAN_MAX_RANKS),
                            APP_OPT("--nodes", APP_TEXT, &nodes),
                            APP_OPT("--json", APP_TEXT, &json),
                            APP_OPT("--csv", APP_TEXT, &csv),
                            APP_OPT("--png", APP_TEXT, &png),
                            APP_OPT("--set", APP_SET, &sets),
                            APP_OPT_END};
  const app_cmd_t cmd = {"plan", plan_usage, opts, "CONFIG", true};
  const int parsed = app_parse(comm, &cmd, argc, argv, &config);
  if (parsed >= 0) return parsed;
  if (ranks < 0 && !nodes) return app_usage(comm, "plan", plan_usage, NULL, "--ranks or --nodes");
  TSR_TRY(app_config_load(comm, config, &sets, &doc, err));
  if (rank == 0) st = plan_make(doc, config, ranks, nodes, json, csv, png, err);
  st = verdict_reduce(comm, st, 0, err);
cleanup:
  config_free(&doc);
  return app_report(comm, st, err);
}
