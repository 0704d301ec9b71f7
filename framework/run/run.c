#include "run.h"

#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_level.h"
#include "cpu_threads.h"
#include "plan.h"
#include "report.h"
#include "sim_checkpoint.h"
#include "steady.h"
#include "stop.h"
#include "verdict.h"

/* Output a list item (probe, slice) is due for at this step: every `every` steps, not at 0. */
static bool run_due(int64_t every, int64_t step) { return step > 0 && step % every == 0; }

/* At this step of steps: the stability check (every check_every steps, at the last step
 * and wherever output is due: on the moments the output uses, else block by block, GPU
 * blocks on the device), then the VTK, probe and slice output due into out (VTK also at
 * step 0; none where out is NULL). Nothing is written at a step whose check fails:
 * TSR_ERR_DIVERGED, with *div saying where. */
static tsr_status run_output(MPI_Comm comm, sim_t *sim, const simulation_options_t *so,
                             sim_output_t *w, output_folder_t *out, int64_t step, int64_t steps, bool check,
                             sim_divergence_t *div, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  bool vtk = out && so->vtk_every > 0 && step % so->vtk_every == 0, due = vtk;
  for (int i = 0; out && i < so->nprobes; ++i) due = due || run_due(so->probes[i].every, step);
  for (int i = 0; out && i < so->nslices; ++i) due = due || run_due(so->slices[i].every, step);
  const bool surfaces = out && run_due(so->surface_every > 0 ? so->surface_every : INT64_MAX, step);
  due = due || surfaces;
  if (!due && !check && step % so->check_every != 0 && step != steps) goto cleanup;
  if (due) TSR_TRY(sim_prepare_outputs(sim, err)); /* the output's values serve the check */
  TSR_TRY(sim_check(sim, step, due, div, err));
  if (!due) goto cleanup;
  if (vtk) {
    const double t0 = MPI_Wtime();
    TSR_TRY(sim_write_vtk(w, out, step, so, err));
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0 && so->progress_every > 0)
      printf("VTK of step %lld written in %.2f s\n", (long long)step, MPI_Wtime() - t0);
  }
  for (int i = 0; i < so->nprobes; ++i)
    if (run_due(so->probes[i].every, step))
      TSR_TRY(sim_write_probe(w, out, &so->probes[i], i, step, err));
  for (int i = 0; i < so->nslices; ++i)
    if (run_due(so->slices[i].every, step))
      TSR_TRY(sim_write_png(w, out, &so->slices[i], step, err));
  if (surfaces) TSR_TRY(sim_write_surfaces(sim, out, step, err));
  /* rank 0: the manifest names what was written (an error there is every rank's) */
  TSR_TRY(verdict_reduce(comm, output_folder_manifest(out, "running", err), 0, err));
cleanup:
  return st;
}

/* Measured seconds per step of one process, by phase. */
enum { RUN_KERNEL, RUN_BOUNDARY, RUN_EXTRACT, RUN_DEVICE, RUN_WAIT, RUN_INSERT, RUN_COPY, RUN_PHASES };
static const char *const run_phase_keys[RUN_PHASES] = {
    "kernel_s", "boundary_s", "extraction_s", "host_device_s", "mpi_wait_s", "insertion_s",
    "local_copy_s"};
enum { RUN_PRINT_MAX = 64 }; /* processes listed on the terminal (summary.json has all) */

/* Gathers every process's measured time per step and phase on rank 0 (rows[nranks *
 * RUN_PHASES] there; NULL elsewhere). */
static tsr_status run_gather_phases(MPI_Comm comm, const sim_t *sim, int64_t steps,
                                    double *rows, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  timeloop_timing_t t = sim_timing(sim);
  double per = steps > 0 ? 1.0 / (double)steps : 0.0;
  double mine[RUN_PHASES] = {t.kernel * per, t.boundary * per, t.extract * per, t.device * per,
                             t.wait * per, t.insert * per, t.copy * per};
  TSR_MPI(MPI_Gather(mine, RUN_PHASES, MPI_DOUBLE, rows, RUN_PHASES, MPI_DOUBLE, 0, comm));
cleanup:
  return st;
}

/* Rank 0: the report rows of the processes, prediction beside measurement
 * (cells[nranks * RUN_COLUMNS]). */
enum { RUN_COLUMNS = 10 + RUN_PHASES };
static void run_fill_processes(const sim_t *sim, const double *rows, report_item_t *cells) {
  const plan_t *plan = sim_plan(sim);
  const patch_t *patch = sim_patch(sim);
  for (int r = 0; r < plan->nranks; ++r) {
    const balance_cost_t *c = &plan->cost[r];
    const node_process_t *q = &plan->procs[r];
    report_item_t *row = &cells[r * RUN_COLUMNS];
    int k = 0;
    row[k++] = REPORT_INT_ITEM("rank", r);
    row[k++] = REPORT_TEXT_ITEM("node", q->node);
    row[k++] = REPORT_TEXT_ITEM("hs", simulation_hs_name(q->proc.hs));
    row[k++] = REPORT_INT_ITEM("blocks", patch_rank_block_count(patch, r));
    row[k++] = REPORT_INT_ITEM("cells", (int64_t)c->cells);
    row[k++] = REPORT_REAL_ITEM("mlups_weight", plan->mlups[r]);
    row[k++] = REPORT_REAL_ITEM("predicted_compute_s", c->compute);
    row[k++] = REPORT_REAL_ITEM("predicted_exchange_s", c->exchange);
    row[k++] = REPORT_REAL_ITEM("predicted_comm_s", c->comm);
    row[k++] = REPORT_REAL_ITEM("predicted_s", balance_cost_seconds(c));
    for (int f = 0; f < RUN_PHASES; ++f)
      row[k++] = REPORT_REAL_ITEM(run_phase_keys[f], rows[r * RUN_PHASES + f]);
  }
}

/* Rank 0: the same on the terminal (the first RUN_PRINT_MAX processes). */
static void run_print_processes(const sim_t *sim, const simulation_options_t *so,
                                const double *rows) {
  const plan_t *plan = sim_plan(sim);
  const patch_t *patch = sim_patch(sim);
  printf("per process, ms per step: predicted compute + exchange + communication | measured "
         "kernel, boundary, extraction, host<->device, MPI wait, insertion, local copies\n");
  double measured = 0;
  for (int r = 0; r < plan->nranks; ++r) {
    const double *m = &rows[r * RUN_PHASES];
    double sum = 0;
    for (int f = 0; f < RUN_PHASES; ++f) sum += m[f];
    if (sum > measured) measured = sum;
    if (r >= RUN_PRINT_MAX) continue;
    const balance_cost_t *c = &plan->cost[r];
    const node_process_t *q = &plan->procs[r];
    printf("  rank %d %s %s: %d blocks, %lld cells | %.3f + %.3f + %.3f | %.3f, %.3f, %.3f, "
           "%.3f, %.3f, %.3f, %.3f\n",
           r, q->node, simulation_hs_name(q->proc.hs), (int)patch_rank_block_count(patch, r),
           (long long)c->cells, 1e3 * c->compute, 1e3 * c->exchange, 1e3 * c->comm,
           1e3 * m[RUN_KERNEL], 1e3 * m[RUN_BOUNDARY], 1e3 * m[RUN_EXTRACT], 1e3 * m[RUN_DEVICE],
           1e3 * m[RUN_WAIT], 1e3 * m[RUN_INSERT], 1e3 * m[RUN_COPY]);
  }
  if (plan->nranks > RUN_PRINT_MAX)
    printf("  ... %d more processes in summary.json\n", plan->nranks - RUN_PRINT_MAX);
  const char *hint = plan_throughput_hint(&so->hardware.balance);
  if (measured > 0)
    printf("step: predicted %.3f ms, measured %.3f ms (the slowest process's phases): "
           "predicted / measured %.2f%s%s%s\n", 1e3 * plan->max_seconds, 1e3 * measured,
           plan->max_seconds / measured, hint[0] ? " (the model's default throughput: " : "",
           hint, hint[0] ? ")" : "");
  printf("predicted imbalance %.1f%% (largest %.3f ms per step; the block granularity allows "
         "%.3f ms of compute at best)\n",
         100.0 * plan_imbalance(plan), 1e3 * plan->max_seconds, 1e3 * plan->best_compute);
}

static void run_progress(int64_t step, int64_t steps, double mlups, double elapsed,
                         const char **names, const double *values, int n) {
  double left = step > 0 ? elapsed / (double)step * (double)(steps - step) : 0.0;
  printf("step %lld/%lld  %.2f MLUPS  elapsed %.1f s  left %.1f s", (long long)step,
         (long long)steps, mlups, elapsed, left);
  for (int i = 0; i < n; ++i) printf("  %s %.8g", names[i], values[i]);
  printf("\n");
  fflush(stdout);
}

/* At this step: the progress line (rank 0) and the row of series.csv due, both with the
 * modules' totals (the fluid mass, a Nusselt number). */
static tsr_status run_progress_due(sim_t *sim, const simulation_options_t *so,
                                   sim_output_t *w, output_folder_t *out, int64_t s, bool final_step, double mlups,
                                   double elapsed, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  bool progress = so->progress_every > 0 && (s % so->progress_every == 0 || final_step);
  bool series = so->series_every > 0 && (s % so->series_every == 0 || final_step);
  if (!out) goto cleanup;
  const char *names[MODULE_MAX_VALUES];
  double values[MODULE_MAX_VALUES];
  int n = 0;
  if (!progress && !series) goto cleanup;
  TSR_TRY(sim_prepare(sim, err));
  TSR_TRY(sim_totals(sim, names, values, MODULE_MAX_VALUES, &n, err));
  sim_totals_output(sim, values, n);
  int rank;
  MPI_Comm_rank(sim_comm(sim), &rank);
  if (progress && rank == 0) run_progress(s, so->steps, mlups, elapsed, names, values, n);
  if (series) st = sim_write_series(w, out, s, names, values, n, final_step, err);
  TSR_TRY(verdict_reduce(sim_comm(sim), st, 0, err));
cleanup:
  return st;
}

/* Rank 0: what the framework sees in the options that a user would want to hear before
 * the run, not after: blocks so small that their ghost layers outnumber their cells, and
 * outputs that the run's steps never reach. */
static void run_warn(const simulation_options_t *so, const char *config) {
  const patch_options_t *d = &so->domain;
  int64_t own = 1, with_ghosts = 1, b[3];
  for (int a = 0; a < 3; ++a) {
    b[a] = d->cells[a] / d->blocks[a]; /* the smallest block's cells along a */
    own *= b[a];
    with_ghosts *= d->cells[a] > 1 ? b[a] + 2 : b[a];
  }
  if (with_ghosts - own > own)
    fprintf(stderr, "tessera: warning: %s: blocks of %lldx%lldx%lld cells: a ghost layer of "
            "one cell (%lld cells) outnumbers a block's own cells (%lld), so exchanges and "
            "per-block work will dominate the run; blocks of 32^3 cells or more run at full "
            "speed (domain.blocks)\n", config, (long long)b[0], (long long)b[1],
            (long long)b[2], (long long)(with_ghosts - own), (long long)own);
  if (so->vtk_every > so->steps && so->steps > 0)
    fprintf(stderr, "tessera: warning: %s: output.vtk_every = %lld > steps = %lld: VTK files "
            "of step 0 only\n", config, (long long)so->vtk_every, (long long)so->steps);
  for (int i = 0; i < so->nprobes; ++i)
    if (so->probes[i].every > so->steps)
      fprintf(stderr, "tessera: warning: %s: output.probes[%d].every = %lld > steps = %lld: "
              "the probe '%s' writes nothing\n", config, i, (long long)so->probes[i].every,
              (long long)so->steps, so->probes[i].name);
  for (int i = 0; i < so->nslices; ++i)
    if (so->slices[i].every > so->steps)
      fprintf(stderr, "tessera: warning: %s: output.slices[%d].every = %lld > steps = %lld: "
              "the slice '%s' writes nothing\n", config, i, (long long)so->slices[i].every,
              (long long)so->steps, so->slices[i].name);
  fflush(stderr);
}

void run_print_warnings(const char *config, char *lines) {
  fflush(stdout);
  for (char *line = strtok(lines, "\n"); line; line = strtok(NULL, "\n"))
    fprintf(stderr, "tessera: warning: %s: %s\n", config, line);
  fflush(stderr);
}

void run_print_cost(const plan_t *plan, const simulation_options_t *so,
                    const plan_memory_t *mem, const double *node_avail, const char *config) {
  char text[2048];
  plan_cost_text(plan, so, mem, node_avail, text, sizeof text);
  fputs(text, stdout);
  if (plan_warnings(plan, so, mem, node_avail, text, sizeof text) > 0)
    run_print_warnings(config, text);
}

/* Collective: every process's predicted memory (host, device) and the bytes its node has
 * available, three per rank, on rank 0 (malloc'ed; NULL elsewhere or without memory). */
static double *run_gather_memory(const sim_t *sim, const simulation_options_t *so) {
  MPI_Comm comm = sim_comm(sim);
  int rank = 0, size = 1, nmod = 0, ndecl = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double mine[3] = {0, 0, (double)node_memory_available()};
  plan_memory_t mem = {0, 0};
  const module_t *mods = sim_modules(sim, &nmod);
  const module_decl_t *decls = sim_decls(sim, &ndecl);
  tsr_error_t ignored;
  if (plan_memory_rank(sim_patch(sim), mods, decls, ndecl, sim_registry(sim), sim_fs(sim), so,
                       &mem, &ignored) == TSR_OK) {
    mine[0] = mem.host;
    mine[1] = mem.device;
  }
  double *all = rank == 0 ? malloc((size_t)size * 3 * sizeof *all) : NULL;
  int room = rank != 0 || all; /* rank 0's buffer, or no figures at all */
  MPI_Bcast(&room, 1, MPI_INT, 0, comm);
  if (room) MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, comm);
  return all;
}

/* Rank 0: the predicted wall time and memory (all[3 * rank]: a process's host and device
 * bytes and its node's available bytes; NULL: none), and the plan's warnings. */
static void run_describe_cost(const sim_t *sim, const simulation_options_t *so,
                              const char *config, const double *all) {
  const plan_t *plan = sim_plan(sim);
  const int n = plan->nranks;
  plan_memory_t *mem = all ? malloc((size_t)n * sizeof *mem) : NULL;
  double *avail = all ? malloc((size_t)n * sizeof *avail) : NULL;
  if (!mem || !avail) {
    free(mem);
    free(avail);
    mem = NULL;
    avail = NULL;
  }
  for (int r = 0; mem && r < n; ++r) {
    mem[r] = (plan_memory_t){all[3 * r], all[3 * r + 1]};
    avail[r] = all[3 * r + 2];
  }
  run_print_cost(plan, so, mem, avail, config);
  free(mem);
  free(avail);
}

void run_describe(const sim_t *sim, const simulation_options_t *so, const char *config) {
  int rank = 0, size = 1;
  MPI_Comm comm = sim_comm(sim);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const patch_t *patch = sim_patch(sim);
  int nmod = 0;
  const module_t *mods = sim_modules(sim, &nmod);
  /* the CPU level of the kernels: the same build may meet different CPUs on different
     nodes */
  const int level = cpu_level_current();
  int lo = level, hi = level;
  MPI_Allreduce(&level, &lo, 1, MPI_INT, MPI_MIN, comm);
  MPI_Allreduce(&level, &hi, 1, MPI_INT, MPI_MAX, comm);
  const int mine = timeloop_overlaps(sim_timeloop(sim)) ? 1 : 0;
  int overlapping = 0;
  MPI_Allreduce(&mine, &overlapping, 1, MPI_INT, MPI_SUM, comm);
  int split[2] = {0, 0}, splits[2] = {0, 0}; /* sweeps with device batches in two parts, of */
  split[0] = timeloop_batches_split(sim_timeloop(sim), &split[1]);
  MPI_Allreduce(split, splits, 2, MPI_INT, MPI_SUM, comm);
  double *all_mem = run_gather_memory(sim, so);
  if (rank == 0) {
    const patch_options_t *d = &so->domain;
    const plan_t *plan = sim_plan(sim);
    int ngpu = 0;
    for (int r = 0; r < size; ++r) ngpu += plan->procs[r].proc.hs == SIMULATION_HS_GPU;
    char hs[64];
    if (ngpu == 0 || ngpu == size) snprintf(hs, sizeof hs, "hs %s", ngpu ? "gpu" : "cpu");
    else snprintf(hs, sizeof hs, "%d hs gpu + %d hs cpu", ngpu, size - ngpu);
    char physics[512] = "";
    size_t used = 0;
    for (int m = 0; m < nmod && used < sizeof physics; ++m) {
      char line[256];
      if (mods[m].def->describe)
        mods[m].def->describe(mods[m].state, ngpu < size, ngpu > 0, line, sizeof line);
      else snprintf(line, sizeof line, "%s", mods[m].def->name);
      int k = snprintf(physics + used, sizeof physics - used, "%s%s", used ? "; " : "", line);
      if (k < 0) break;
      used += (size_t)k;
    }
    printf("tessera run %s: %lldx%lldx%lld cells in %d blocks on %d rank(s), %s, %s\n", config,
           (long long)d->cells[0], (long long)d->cells[1], (long long)d->cells[2],
           (int)patch_block_count(patch), size, hs, physics);
    if (so->units.on) {
      char scales[512];
      units_describe(&so->units, scales, sizeof scales);
      printf("units: %s; %lld steps = %.6Lg s\n", scales, (long long)so->steps,
             (long double)so->steps * so->units.dt);
    }
    char built[256];
    cpu_level_describe(built, sizeof built);
    if (lo == hi) printf("CPU kernels: %s on every rank", cpu_level_name(lo));
    else printf("CPU kernels: %s to %s (each rank the highest its CPU has)", cpu_level_name(lo),
                cpu_level_name(hi));
    char wait[96];
    cpu_threads_wait_policy(wait, sizeof wait);
    printf(" (levels of this build: %s); OpenMP threads wait: %s\n", built, wait);
    printf("exchange: rounds %s, overlapped with the work in %d of %d process(es) "
           "(hardware.overlap %s)", simulation_exchange_names[so->hardware.exchange],
           overlapping, size, simulation_overlap_names[so->hardware.overlap]);
    if (splits[1] > 0) /* the processes' sweeps with device blocks, summed */
      printf("; device blocks in two parts in %d of %d sweep(s)", splits[0], splits[1]);
    printf("\n");
    run_describe_cost(sim, so, config, all_mem);
    fflush(stdout);
    for (int m = 0; m < nmod; ++m) {
      char warnings[1024];
      if (!mods[m].def->warnings ||
          mods[m].def->warnings(mods[m].state, so, warnings, sizeof warnings) == 0)
        continue;
      run_print_warnings(config, warnings);
    }
    run_warn(so, config);
  }
  free(all_mem);
}

/* stop.when_steady: the index of its total among the modules' totals names[0..n) (a name
 * no module has is an error listing those there are). */
static tsr_status run_steady_index(const simulation_options_t *so, const char *const *names,
                                   int n, int *index, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char known[512] = "";
  size_t used = 0;
  *index = -1;
  for (int i = 0; i < n; ++i) {
    if (strcmp(names[i], so->steady.total) == 0) *index = i;
    int k = snprintf(known + used, sizeof known - used, "%s\"%s\"", i ? ", " : "", names[i]);
    if (k > 0 && (size_t)k < sizeof known - used) used += (size_t)k;
  }
  TSR_CHECK(*index >= 0, TSR_ERR_INVALID,
            "%s: stop.when_steady.total = \"%s\": no such total; the modules of this run have "
            "%s (the columns of series.csv)", so->source, so->steady.total, known);
cleanup:
  return st;
}

/* The steady-state sample of the current step (*index: its total, found on first use). */
static tsr_status run_steady_sample(sim_t *sim, const simulation_options_t *so, steady_t *steady,
                                    int64_t step, int *index, run_result_t *r, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *names[MODULE_MAX_VALUES];
  double values[MODULE_MAX_VALUES];
  int n = 0, rank = 0;
  MPI_Comm comm = sim_comm(sim);
  MPI_Comm_rank(comm, &rank);
  TSR_TRY(sim_prepare(sim, err));
  TSR_TRY(sim_totals(sim, names, values, MODULE_MAX_VALUES, &n, err));
  if (*index < 0) TSR_TRY(run_steady_index(so, names, n, index, err));
  /* the totals are reduced over the ranks; rank 0's verdict is every rank's */
  double change = 0;
  int done = steady_add(steady, step, values[*index], &change);
  double verdict[2] = {(double)done, change};
  TSR_MPI(MPI_Bcast(verdict, 2, MPI_DOUBLE, 0, comm));
  if (verdict[0] != 0) {
    r->steady_step = step;
    r->steady_change = verdict[1];
    sim_totals_output(sim, values, n); /* as the run writes it */
    if (rank == 0) {
      printf("steady at step %lld: %s = %.12g changed by %.3g (relative) over the last %lld "
             "steps (tolerance %g)\n", (long long)step, names[*index], values[*index], verdict[1],
             (long long)so->steady.window, so->steady.tolerance);
      fflush(stdout);
    }
  }
cleanup:
  return st;
}

/* The checkpoints this run wrote that are kept (the newest checkpoint_keep), oldest first. */
typedef struct run_kept {
  char (*names)[40];
  int64_t n, cap;
} run_kept_t;

/* Writes the checkpoint of this step and removes the oldest beyond the kept count. */
static tsr_status run_checkpoint(sim_t *sim, sim_output_t *w, output_folder_t *out, int64_t step,
                                 const char *physics,
                                 run_kept_t *kept, run_result_t *r, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  MPI_Comm comm = sim_comm(sim);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const double t0 = MPI_Wtime();
  char name[40];
  TSR_TRY(sim_write_checkpoint(sim, w, out, step, physics, name, sizeof name, err));
  /* rank 0 keeps the list and removes (the other ranks' lists stay empty) */
  if (rank == 0 && kept->n == kept->cap) {
    st = output_folder_remove(out, kept->names[0], err);
    memmove(kept->names, kept->names + 1, (size_t)(kept->n - 1) * sizeof *kept->names);
    --kept->n;
  }
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  if (rank == 0) snprintf(kept->names[kept->n++], sizeof kept->names[0], "%s", name);
  snprintf(r->checkpoint, sizeof r->checkpoint, "%s", name);
  TSR_TRY(verdict_reduce(comm, output_folder_manifest(out, "running", err), 0, err));
  if (rank == 0) {
    printf("checkpoint %s written in %.2f s\n", name, MPI_Wtime() - t0);
    fflush(stdout);
  }
cleanup:
  return st;
}

/* Rank 0, a restart: the checkpoints the folder holds up to the restart's step, oldest
 * first, are the kept list's start (the newest cap of them), so that checkpoint_keep
 * counts across the parts of a run. */
static int run_cmp_step(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void run_kept_seed(output_folder_t *out, int64_t start, run_kept_t *kept) {
  DIR *d = opendir(output_folder_path(out));
  if (!d) return;
  int64_t *steps = NULL;
  size_t n = 0, cap = 0;
  for (struct dirent *e; (e = readdir(d));) {
    long long step = -1;
    char tail[8] = "";
    if (sscanf(e->d_name, "checkpoint_%lld.tsr%1s", &step, tail) != 2 || strcmp(tail, "c") != 0 ||
        step > start || step < 0)
      continue;
    if (n == cap) {
      int64_t *grown = realloc(steps, (cap = 2 * cap + 8) * sizeof *grown);
      if (!grown) break;
      steps = grown;
    }
    steps[n++] = step;
  }
  closedir(d);
  if (n > 1) qsort(steps, n, sizeof *steps, run_cmp_step); /* ascending */
  for (size_t i = n > (size_t)kept->cap ? n - (size_t)kept->cap : 0; i < n; ++i)
    snprintf(kept->names[kept->n++], sizeof kept->names[0], "checkpoint_%06lld.tsrc",
             (long long)steps[i]);
  free(steps);
}

tsr_status run_check(sim_t *sim, const simulation_options_t *so, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *names[MODULE_MAX_VALUES];
  double values[MODULE_MAX_VALUES];
  int n = 0, index = -1;
  if (!so->steady.total[0]) goto cleanup;
  TSR_TRY(sim_prepare(sim, err));
  TSR_TRY(sim_totals(sim, names, values, MODULE_MAX_VALUES, &n, err));
  TSR_TRY(run_steady_index(so, names, n, &index, err));
cleanup:
  return st;
}

/* What run_steps carries from one step to the next. */
typedef struct run_loop {
  MPI_Comm comm;
  int rank;
  bool checkpoints;  /* checkpoints are written (run_kept_create) */
  stop_poll_t poll;
  steady_t *steady;  /* NULL: no stop.when_steady */
  int steady_total;  /* its total's index, found on first use */
  run_kept_t kept;
  double t0, tlast;  /* MPI_Wtime: the loop's start, the last progress line */
  double tout;       /* seconds of output, not counted as simulation time */
  double tckpt;      /* MPI_Wtime of the last checkpoint (or the start) */
  int64_t last;      /* the step of the last progress line */
} run_loop_t;

/* The list of the checkpoints kept, agreed on every rank; a restart's starts with those
 * in the folder (rank 0). */
static tsr_status run_kept_create(const simulation_options_t *so, const run_options_t *o,
                                  run_loop_t *lp, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  run_kept_t *kept = &lp->kept;
  kept->names = calloc((size_t)so->checkpoint_keep, sizeof *kept->names);
  st = kept->names ? TSR_OK : tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  TSR_TRY(verdict_reduce(lp->comm, st, 0, err));
  kept->cap = so->checkpoint_keep;
  if (lp->rank == 0 && o->start > 0) run_kept_seed(o->out, o->start, kept);
cleanup:
  return st;
}

/* The progress line or the row of series.csv due at step s, their time counted as
 * output's. */
static tsr_status run_step_progress(sim_t *sim, const simulation_options_t *so,
                                    const run_options_t *o, run_loop_t *lp, int64_t s,
                                    bool final_step, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  output_folder_t *out = o->out;
  if (out && so->progress_every > 0 && (s % so->progress_every == 0 || final_step)) {
    double now = MPI_Wtime();
    double p0 = now;
    st = run_progress_due(sim, so, o->writers, out, s, final_step,
                          (double)sim_cells(sim) * (double)(s - lp->last) / (now - lp->tlast) / 1e6,
                          now - lp->t0, err);
    lp->tlast = MPI_Wtime();
    lp->tout += lp->tlast - p0;
    lp->last = s;
  } else if (out && so->series_every > 0 && (s % so->series_every == 0 || final_step)) {
    double p0 = MPI_Wtime();
    st = run_progress_due(sim, so, o->writers, out, s, final_step, 0, 0, err);
    lp->tout += MPI_Wtime() - p0;
  }
  return st;
}

/* After step s: the stop poll, then the check and output, the steady-state sample, the
 * progress line and the checkpoint due. */
static tsr_status run_step_after(sim_t *sim, const simulation_options_t *so,
                                 const run_options_t *o, run_loop_t *lp, int64_t s,
                                 run_result_t *r, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  MPI_Comm comm = lp->comm;
  /* a checkpoint: every checkpoint_every steps, when rank 0's clock says the interval
     is over (agreed one step later), and at a stopping signal */
  int due = 0;
  if (o->signals) {
    const int want = lp->rank == 0 && so->checkpoint_interval > 0 &&
                     MPI_Wtime() - lp->tckpt >= so->checkpoint_interval;
    st = stop_poll(comm, &lp->poll, want, &r->stopped, &due, err);
  }
  const bool ckpt = lp->checkpoints && (due || r->stopped ||
                                        (so->checkpoint_every > 0 && s % so->checkpoint_every == 0));
  double o0 = MPI_Wtime();
  if (st == TSR_OK) st = run_output(comm, sim, so, o->writers, o->out, s, o->steps, ckpt, &r->div, err);
  lp->tout += MPI_Wtime() - o0;
  if (st == TSR_OK && lp->steady && s % so->steady.every == 0)
    st = run_steady_sample(sim, so, lp->steady, s, &lp->steady_total, r, err);
  const bool final_step = s == o->steps || r->steady_step;
  if (st == TSR_OK) st = run_step_progress(sim, so, o, lp, s, final_step, err);
  /* last in the step, after its check passed (a checkpoint never holds a diverged
     state) and its series rows (which the checkpoint keeps) */
  if (st == TSR_OK && ckpt) {
    double c0 = MPI_Wtime();
    st = run_checkpoint(sim, o->writers, o->out, s, o->physics, &lp->kept, r, err);
    lp->tckpt = MPI_Wtime();
    lp->tout += lp->tckpt - c0;
  }
  return st;
}

/* The end of the loop: the stop poll's last round, the surfaces at the last step (where
 * it is off output.surface_every: a steady state, a stop), series.csv as far as it got
 * (its last write may have been held back) and the run's seconds, output excluded. */
static tsr_status run_steps_finish(sim_t *sim, const simulation_options_t *so,
                                   const run_options_t *o, run_loop_t *lp,
                                   run_result_t *r, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  MPI_Comm comm = lp->comm;
  output_folder_t *out = o->out;
  if (o->signals) TSR_TRY(stop_finish(&lp->poll, err));
  if (out && so->surface_every > 0 && r->ending == TSR_OK && r->done > r->start &&
      r->done % so->surface_every != 0) {
    const double s0 = MPI_Wtime();
    TSR_TRY(sim_prepare_outputs(sim, err));
    TSR_TRY(sim_write_surfaces(sim, out, r->done, err));
    TSR_TRY(verdict_reduce(comm, output_folder_manifest(out, "running", err), 0, err));
    lp->tout += MPI_Wtime() - s0;
  }
  if (out)
    TSR_TRY(verdict_reduce(comm, sim_write_series(o->writers, out, r->done, NULL, NULL, 0, true, err), 0,
                           err));
  if (out && so->series_plots && so->series_every > 0)
    TSR_TRY(sim_write_series_plots(o->writers, out, err));
  double wall = MPI_Wtime() - lp->t0 - lp->tout; /* simulation time, output excluded */
  TSR_MPI(MPI_Allreduce(&wall, &r->seconds, 1, MPI_DOUBLE, MPI_MAX, comm));
cleanup:
  return st;
}

tsr_status run_steps(sim_t *sim, const simulation_options_t *so, const run_options_t *o,
                     run_result_t *r, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  output_folder_t *out = o->out;
  const int64_t steps = o->steps;
  run_loop_t lp = {.comm = sim_comm(sim), .poll = {.pending = false}, .steady = NULL,
                   .steady_total = -1, .kept = {.n = 0}};
  lp.checkpoints = out && (so->checkpoint_every > 0 || so->checkpoint_interval > 0);
  MPI_Comm comm = lp.comm;
  MPI_Comm_rank(comm, &lp.rank);
  *r = (run_result_t){.div = {.block = -1}, .start = o->start, .done = o->start};
  if (lp.checkpoints) TSR_TRY(run_kept_create(so, o, &lp, err));
  if (out && so->steady.total[0]) {
    TSR_TRY(steady_create(so->steady.window, so->steady.every, so->steady.tolerance, &lp.steady,
                          err));
    TSR_TRY(run_steady_sample(sim, so, lp.steady, o->start, &lp.steady_total, r, err));
  }
  /* step 0's observation and output; a restart's step was the first part's */
  if (o->start == 0) TSR_TRY(sim_observe(sim, 0, err));
  if (out && o->start == 0) st = run_output(comm, sim, so, o->writers, out, 0, steps, false, &r->div, err);
  MPI_Barrier(comm);
  if (o->signals) stop_install();
  lp.t0 = lp.tlast = lp.tckpt = MPI_Wtime();
  lp.tout = 0;
  lp.last = o->start;
  for (int64_t s = o->start + 1;
       s <= steps && st == TSR_OK && !r->stopped && !r->steady_step; ++s) {
    TSR_TRY(sim_step(sim, 1, err));
    r->done = s;
    const double o0 = MPI_Wtime(); /* the modules' observations count as output */
    st = sim_observe(sim, s, err);
    lp.tout += MPI_Wtime() - o0;
    if (st == TSR_OK) st = run_step_after(sim, so, o, &lp, s, r, err);
  }
  if (st != TSR_OK && st != TSR_ERR_DIVERGED) goto cleanup;
  /* a run that diverged still leaves its summary, then ends with the check's message */
  r->ending = st;
  r->diverged = *err;
  st = TSR_OK;
  TSR_TRY(run_steps_finish(sim, so, o, &lp, r, err));
cleanup:
  steady_free(&lp.steady);
  free(lp.kept.names);
  return st;
}

/* What run_summary reports: the run's result and what the ranks measured. */
typedef struct run_report {
  const run_result_t *res;
  const char *config;
  int size;     /* ranks */
  int64_t cells;
  double mlups;
  double phase_max[3]; /* exchange, boundary, kernel: the slowest rank's seconds (rank 0) */
  /* the modules' totals (the fluid mass, ...) of a completed run */
  const char *total_names[MODULE_MAX_VALUES];
  double totals[MODULE_MAX_VALUES];
  int ntotals;
  double *rows;               /* rank 0: run_gather_phases */
  report_item_t *cells_table; /* rank 0: run_fill_processes */
} run_report_t;

/* Rank 0: the seconds per phase (exchange, boundary, kernel) of the slowest rank. */
static tsr_status run_phase_max(MPI_Comm comm, const sim_t *sim, double *phase_max,
                                tsr_error_t *err) {
  tsr_status st = TSR_OK;
  timeloop_timing_t tt = sim_timing(sim);
  double phase[3] = {tt.exchange, tt.boundary, tt.kernel};
  TSR_MPI(MPI_Reduce(phase, phase_max, 3, MPI_DOUBLE, MPI_MAX, 0, comm));
cleanup:
  return st;
}

/* The run's status as summary.json names it. */
static const char *run_status_text(const run_result_t *res) {
  return res->ending != TSR_OK ? "diverged"
         : res->stopped        ? "interrupted"
         : res->steady_step    ? "steady"
                               : "completed";
}

/* The hardware of the processes: its name, or "mixed". */
static const char *run_hs_text(const sim_t *sim, int size) {
  const plan_t *plan = sim_plan(sim);
  bool mixed = false;
  for (int r = 1; r < size; ++r) mixed = mixed || plan->procs[r].proc.hs != plan->procs[0].proc.hs;
  return mixed ? "mixed" : simulation_hs_name(plan->procs[0].proc.hs);
}

/* Where the run diverged into where[] (its values as text into values[], as they may be
 * NaN or infinite); returns the count. */
static size_t run_summary_where(const sim_divergence_t *div, char (*values)[32],
                                report_item_t *where) {
  size_t nwhere = 0;
  where[nwhere++] = REPORT_INT_ITEM("step", div->step);
  where[nwhere++] = REPORT_INT_ITEM("block", div->block);
  where[nwhere++] = REPORT_INT_ITEM("x", div->cell[0]);
  where[nwhere++] = REPORT_INT_ITEM("y", div->cell[1]);
  where[nwhere++] = REPORT_INT_ITEM("z", div->cell[2]);
  for (int i = 0; i < div->nvalues && i < MODULE_MAX_VALUES; ++i) {
    snprintf(values[i], sizeof values[i], "%.17g", div->values[i]);
    where[nwhere++] = REPORT_TEXT_ITEM(div->names[i], values[i]);
  }
  return nwhere;
}

/* Appends summary.json's last items to all[0..n): where a run diverged, the signal that
 * stopped it, or the steady state and totals of a completed run; returns the count. */
static size_t run_summary_ending(const run_report_t *rep, report_item_t *where, size_t nwhere,
                                 report_item_t *all, size_t n) {
  const run_result_t *res = rep->res;
  if (res->ending != TSR_OK)
    all[n++] = REPORT_TABLE_ITEM("diverged", where, 1, nwhere);
  else if (res->stopped)
    all[n++] = REPORT_TEXT_ITEM("signal", stop_signal_name(res->stopped));
  else {
    if (res->steady_step) {
      all[n++] = REPORT_INT_ITEM("steady_step", res->steady_step);
      all[n++] = REPORT_REAL_ITEM("steady_change", res->steady_change);
    }
    for (int i = 0; i < rep->ntotals; ++i)
      all[n++] = REPORT_REAL_ITEM(rep->total_names[i], rep->totals[i]);
  }
  return n;
}

/* Rank 0: writes summary.json to path and the manifest with the run's status. */
static tsr_status run_summary_json(const sim_t *sim, output_folder_t *out,
                                   const run_report_t *rep, const char *path, tsr_error_t *err) {
  const run_result_t *res = rep->res;
  const plan_t *plan = sim_plan(sim);
  const int64_t done = res->done;
  char values[MODULE_MAX_VALUES][32];
  report_item_t where[5 + MODULE_MAX_VALUES];
  const size_t nwhere = run_summary_where(&res->div, values, where);
  const char *status = run_status_text(res);
  report_item_t items[] = {
      REPORT_TEXT_ITEM("config", rep->config),
      REPORT_TEXT_ITEM("status", status),
      REPORT_TEXT_ITEM("fs", sim_fs_text(sim)),
      REPORT_TEXT_ITEM("hs", run_hs_text(sim, rep->size)),
      REPORT_INT_ITEM("ranks", rep->size),
      REPORT_INT_ITEM("blocks", patch_block_count(sim_patch(sim))),
      REPORT_INT_ITEM("cells", rep->cells),
      REPORT_INT_ITEM("steps", done),
      REPORT_REAL_ITEM("wall_seconds", res->seconds),
      REPORT_REAL_ITEM("mlups", rep->mlups),
      REPORT_REAL_ITEM("exchange_seconds_max", rep->phase_max[0]),
      REPORT_REAL_ITEM("boundary_seconds_max", rep->phase_max[1]),
      REPORT_REAL_ITEM("kernel_seconds_max", rep->phase_max[2]),
      REPORT_REAL_ITEM("predicted_imbalance", plan_imbalance(plan)),
      REPORT_REAL_ITEM("predicted_step_s", plan->max_seconds),
      REPORT_TABLE_ITEM("processes", rep->cells_table, (size_t)rep->size, RUN_COLUMNS),
      /* the last ones: the totals of a completed run (the fluid mass, ...), where a run
         diverged, or the signal that stopped it */
  };
  enum { NITEMS = sizeof items / sizeof items[0] };
  report_item_t all[NITEMS + 5 + MODULE_MAX_VALUES];
  size_t nitems = NITEMS;
  memcpy(all, items, sizeof items);
  if (res->start > 0) all[nitems++] = REPORT_INT_ITEM("restarted_from", res->start);
  /* a run in physical units: its scales, and the time it reached */
  const units_t *u = sim_units(sim);
  report_item_t scales[] = {
      REPORT_REAL_ITEM("dx", (double)u->dx), REPORT_REAL_ITEM("dt", (double)u->dt),
      REPORT_REAL_ITEM("density", u->in.density), REPORT_REAL_ITEM("reynolds", u->reynolds),
      REPORT_REAL_ITEM("lattice_velocity", u->lattice_velocity),
      REPORT_REAL_ITEM("lattice_viscosity", u->lattice_viscosity),
      REPORT_REAL_ITEM("time", (double)((long double)done * u->dt)),
      REPORT_TEXT_ITEM("output", u->physical_output ? "physical" : "lattice")};
  if (u->on)
    all[nitems++] = REPORT_OBJECT_ITEM("units", scales, sizeof scales / sizeof scales[0]);
  /* the newest checkpoint: where a diverged or stopped run can go on from */
  if (res->checkpoint[0]) all[nitems++] = REPORT_TEXT_ITEM("checkpoint", res->checkpoint);
  nitems = run_summary_ending(rep, where, nwhere, all, nitems);
  tsr_status st = report_write_json(path, all, nitems, err);
  /* the manifest: a run that reached its steady state completed */
  if (st == TSR_OK)
    st = output_folder_manifest(out, res->steady_step ? "completed" : status, err);
  return st;
}

/* Rank 0: the summary on the terminal, after summary.json went to path. */
static void run_summary_print(const sim_t *sim, const simulation_options_t *so,
                              output_folder_t *out, const run_report_t *rep, const char *path) {
  const run_result_t *res = rep->res;
  const int64_t done = res->done;
  const double wall_max = res->seconds;
  if (res->stopped)
    printf("summary: stopped by %s after step %lld of %lld (%.2f MLUPS in %.2f s); written to "
           "%s\n",
           stop_signal_name(res->stopped), (long long)done, (long long)so->steps, rep->mlups,
           wall_max, path);
  else if (res->ending == TSR_OK) {
    printf("summary: %.2f MLUPS, %lld cells, %d blocks, %d rank(s), %lld steps in %.2f s; ",
           rep->mlups, (long long)rep->cells, (int)patch_block_count(sim_patch(sim)), rep->size,
           (long long)done, wall_max);
    for (int i = 0; i < rep->ntotals; ++i) printf("%s %.12g; ", rep->total_names[i], rep->totals[i]);
    printf("written to %s\n", path);
  }
  else
    printf("summary: diverged at step %lld after %.2f s; written to %s\n",
           (long long)res->div.step, wall_max, path);
  if (res->checkpoint[0] && (res->stopped || res->ending != TSR_OK))
    printf("the newest checkpoint, %s/%s, goes on from there: tessera run %s --restart "
           "%s/%s\n", output_folder_path(out), res->checkpoint, rep->config,
           output_folder_path(out), res->checkpoint);
  if (res->ending == TSR_OK && !res->stopped) {
    printf("time per phase (slowest rank): exchange %.2f s, boundary %.2f s, kernel %.2f s\n",
           rep->phase_max[0], rep->phase_max[1], rep->phase_max[2]);
    run_print_processes(sim, so, rep->rows);
  }
}

/* Rank 0: summary.json, the manifest and the summary on the terminal. */
static tsr_status run_summary_write(const sim_t *sim, const simulation_options_t *so,
                                    output_folder_t *out, const run_report_t *rep,
                                    tsr_error_t *err) {
  char path[OUTPUT_PATH_MAX];
  run_fill_processes(sim, rep->rows, rep->cells_table);
  tsr_status st = output_folder_file(out, path, sizeof path, err, "summary.json");
  if (st == TSR_OK) st = run_summary_json(sim, out, rep, path, err);
  if (st == TSR_OK) run_summary_print(sim, so, out, rep, path);
  fflush(stdout);
  return st;
}

tsr_status run_summary(sim_t *sim, const simulation_options_t *so, const char *config,
                       output_folder_t *out, const run_result_t *res, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  MPI_Comm comm = sim_comm(sim);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  run_report_t rep = {.res = res, .config = config, .size = size, .cells = sim_cells(sim)};
  if (res->ending == TSR_OK && !res->stopped) {
    TSR_TRY(sim_prepare(sim, err));
    TSR_TRY(sim_totals(sim, rep.total_names, rep.totals, MODULE_MAX_VALUES, &rep.ntotals, err));
    sim_totals_output(sim, rep.totals, rep.ntotals);
  }
  rep.mlups = res->seconds > 0
                  ? (double)rep.cells * (double)(res->done - res->start) / res->seconds / 1e6
                  : 0.0;
  TSR_TRY(run_phase_max(comm, sim, rep.phase_max, err));
  if (rank == 0) {
    rep.rows = malloc((size_t)size * RUN_PHASES * sizeof *rep.rows);
    rep.cells_table = malloc((size_t)size * RUN_COLUMNS * sizeof *rep.cells_table);
    if (!rep.rows || !rep.cells_table)
      st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory for the report");
  }
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_TRY(run_gather_phases(comm, sim, res->done, rep.rows, err));
  if (rank == 0) st = run_summary_write(sim, so, out, &rep, err);
  st = verdict_reduce(comm, st, 0, err);
cleanup:
  free(rep.rows);
  free(rep.cells_table);
  return st;
}
