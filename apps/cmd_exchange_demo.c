/* tessera exchange-demo CONFIG: ghost exchange of a test field whose cells encode their
 * global position, then a check of every cell of every block on every rank. The config's
 * optional "exchange" section sets the field's ghost widths and layout (ghost_check.h). */
#include <stdio.h>

#include "app.h"
#include "comm.h"
#include "config.h"
#include "data.h"
#include "ghost_check.h"
#include "patch.h"
#include "registry.h"
#include "simulation.h"
#include "verdict.h"


/* The configuration: the domain and steps, and the test field's options; unknown keys
 * refused. Collective: one verdict. */
static tsr_status demo_read(MPI_Comm comm, const char *config, config_t **doc,
                            simulation_options_t *cfg, ghost_check_options_t *field_opts,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(config_load(comm, config, doc, err));
  st = simulation_options_read(*doc, cfg, err);
  if (st == TSR_OK) st = ghost_check_options_read(*doc, field_opts, err);
  if (st == TSR_OK) st = config_check_unknown(*doc, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
cleanup:
  return st;
}

/* The blocks, the registry with the test field's kernels, the field filled with the
 * positions of its cells (*field), and its exchange. Collective: one verdict each. */
static tsr_status demo_setup(MPI_Comm comm, const simulation_options_t *cfg,
                             const ghost_check_options_t *field_opts, patch_t **patch,
                             registry_t **reg, int *field, comm_t **ex, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  patch_layout_t layout = {.nranks = size, .my_rank = rank};
  st = patch_create(&cfg->domain, &layout, patch, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  st = registry_create(reg, err);
  if (st == TSR_OK) st = ghost_check_register(*reg, NULL, field_opts, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_TRY(data_allocate(comm, *reg, *patch, GHOST_CHECK_FIELD, 0, field, err));
  st = data_run_kernel(*reg, *patch, GHOST_CHECK_FILL, 0, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  comm_options_t co = comm_options_one(GHOST_CHECK_FIELD, *field, field_opts->width, 1);
  TSR_TRY(comm_create(&co, *patch, *reg, comm, ex, err));
cleanup:
  return st;
}

/* The check of every cell, its counts and the exchange's summed over the ranks into
 * sum[9] on rank 0 (cells, ghost cells, face, edge and corner ghosts filled, empty;
 * messages, bytes, local copies). Collective: one verdict. */
static tsr_status demo_check(MPI_Comm comm, const patch_t *patch, int field,
                             const ghost_check_options_t *field_opts, const comm_t *ex,
                             int64_t sum[9], tsr_error_t *err) {
  tsr_status st = TSR_OK;
  ghost_check_report_t rep;
  st = ghost_check_verify(patch, field, field_opts, &rep, err);
  TSR_TRY(verdict_reduce(comm, st, 1, err));
  int64_t mine[9] = {rep.cells, rep.ghost_cells, rep.filled[1], rep.filled[2], rep.filled[3],
                     rep.empty, comm_stats(ex).messages_sent, comm_stats(ex).bytes_sent,
                     comm_stats(ex).local_copies};
  TSR_MPI(MPI_Reduce(mine, sum, 9, MPI_INT64_T, MPI_SUM, 0, comm));
cleanup:
  return st;
}

/* The demo's report (rank 0): the domain, the field, the blocks of each rank, the
 * exchange's traffic and time (tmax seconds), and what the check found. */
static void demo_print(const char *config, const simulation_options_t *cfg,
                       const ghost_check_options_t *field_opts, const patch_t *patch, int size,
                       const int64_t sum[9], double tmax) {
  const patch_options_t *o = &cfg->domain;
  printf("tessera exchange-demo %s\n", config);
  printf("  domain %lldx%lldx%lld cells, block grid %dx%dx%d = %d blocks, periodic %c%c%c, "
         "%d rank(s)\n",
         (long long)o->cells[0], (long long)o->cells[1], (long long)o->cells[2], o->blocks[0],
         o->blocks[1], o->blocks[2], (int)patch_block_count(patch), o->periodic[0] ? 'x' : '-',
         o->periodic[1] ? 'y' : '-', o->periodic[2] ? 'z' : '-', size);
  printf("  field: %d values per cell, %s layout, ghost layers of %d, %d, %d cells along x, y, "
         "z\n", field_opts->comps, grid_layout_name(field_opts->layout), field_opts->width[0],
         field_opts->width[1], field_opts->width[2]);
  for (int r = 0; r < size; ++r)
    printf("  rank %d owns %d block(s)\n", r, (int)patch_rank_block_count(patch, r));
  printf("  per exchange: %lld block messages over MPI (%lld bytes, headers included), "
         "%lld local block-to-block copies\n",
         (long long)sum[6], (long long)sum[7], (long long)sum[8]);
  printf("  %lld exchange(s) in %.3f s\n", (long long)cfg->steps, tmax);
  printf("  checked %lld cells (%lld ghost cells): %lld face, %lld edge and %lld corner ghost "
         "cells hold exactly their neighbour's values, %lld beyond a non-periodic domain end "
         "or the ghost width stayed empty, interior cells unchanged\n",
         (long long)sum[0], (long long)sum[1], (long long)sum[2], (long long)sum[3],
         (long long)sum[4], (long long)sum[5]);
  printf("  result: OK\n");
  fflush(stdout);
}

int app_exchange_demo(MPI_Comm comm, int argc, char **argv) {
  tsr_status st = TSR_OK;
  tsr_error_t e, *err = &e;
  tsr_error_clear(err);
  registry_t *reg = NULL;
  patch_t *patch = NULL;
  comm_t *ex = NULL;
  config_t *doc = NULL;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  static const char usage[] = "usage: tessera exchange-demo CONFIG\n";
  const app_opt_t opts[] = {APP_OPT_END};
  const app_cmd_t cmd = {"exchange-demo", usage, opts, "CONFIG", true};
  const char *config = NULL;
  const int parsed = app_parse(comm, &cmd, argc, argv, &config);
  if (parsed >= 0) return parsed;

  /* config -> patch -> registry -> data -> exchange -> check */
  simulation_options_t cfg;
  ghost_check_options_t field_opts = ghost_check_options_default();
  int field;
  TSR_TRY(demo_read(comm, config, &doc, &cfg, &field_opts, err));
  TSR_TRY(demo_setup(comm, &cfg, &field_opts, &patch, &reg, &field, &ex, err));

  double t0 = MPI_Wtime();
  for (int64_t s = 0; s < cfg.steps; ++s) TSR_TRY(comm_exchange(ex, err));
  double seconds = MPI_Wtime() - t0;

  int64_t sum[9];
  TSR_TRY(demo_check(comm, patch, field, &field_opts, ex, sum, err));
  double tmax = 0;
  TSR_MPI(MPI_Reduce(&seconds, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, comm));
  if (rank == 0) demo_print(config, &cfg, &field_opts, patch, size, sum, tmax);
cleanup:
  config_free(&doc);
  comm_free(&ex);
  patch_free(&patch);
  registry_free(&reg);
  return app_report(comm, st, err);
}
