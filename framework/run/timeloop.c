#include "timeloop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "data.h"
#include "verdict.h"

typedef struct timeloop_entry {
  char name[64];                     /* for reports */
  double seconds[3];                 /* exchange, boundary, kernel, summed over steps */
  comm_t *exchange;                  /* NULL: none */
  data_items_t *boundary;            /* NULL: none */
  data_items_t *kernel;
} timeloop_entry_t;

struct timeloop {
  patch_t *patch;
  const registry_t *reg;
  uint64_t fs;
  MPI_Comm comm;
  timeloop_entry_t *sweeps;
  int nsweeps;
  timeloop_timing_t timing;
};

tsr_status timeloop_create(patch_t *patch, const registry_t *reg, uint64_t fs, MPI_Comm comm,
                           timeloop_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *out = NULL;
  timeloop_t *tl = calloc(1, sizeof *tl);
  TSR_CHECK(tl, TSR_ERR_NOMEM, "out of memory creating the time loop");
  tl->patch = patch;
  tl->reg = reg;
  tl->fs = fs;
  tl->comm = comm;
  *out = tl;
cleanup:
  return st;
}

void timeloop_free(timeloop_t **tl) {
  if (!tl || !*tl) return;
  timeloop_t *t = *tl;
  for (int i = 0; i < t->nsweeps; ++i) {
    comm_free(&t->sweeps[i].exchange);
    data_items_free(&t->sweeps[i].boundary);
    data_items_free(&t->sweeps[i].kernel);
  }
  free(t->sweeps);
  free(t);
  *tl = NULL;
}

tsr_status timeloop_add_sweep(timeloop_t *tl, const timeloop_sweep_t *sweep, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  timeloop_entry_t e = {0};
  snprintf(e.name, sizeof e.name, "%s", sweep->name ? sweep->name : "");
  timeloop_entry_t *grown = realloc(tl->sweeps, (size_t)(tl->nsweeps + 1) * sizeof *grown);
  if (!grown) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory adding a sweep");
  else tl->sweeps = grown;
  if (st == TSR_OK && sweep->boundary)
    st = data_items_create(tl->reg, tl->patch, REGISTRY_KIND_BOUNDARY, sweep->boundary, tl->fs,
                           &e.boundary, err);
  if (st == TSR_OK)
    st = data_items_create(tl->reg, tl->patch, REGISTRY_KIND_KERNEL, sweep->kernel, tl->fs,
                           &e.kernel, err);
  if (st != TSR_OK) tsr_error_prefix(err, "sweep '%s'", sweep->name);
  st = verdict_reduce(tl->comm, st, 0, err);
  if (st == TSR_OK && sweep->nexchange > 0) {
    comm_options_t co = {.nfields = sweep->nexchange, .fs = tl->fs, .tag = 100 + tl->nsweeps};
    for (int f = 0; f < sweep->nexchange && f < COMM_MAX_FIELDS; ++f) co.fields[f] = sweep->exchange[f];
    st = comm_create(&co, tl->patch, tl->reg, tl->comm, &e.exchange, err); /* collective */
  }
  if (st != TSR_OK) {
    data_items_free(&e.boundary);
    data_items_free(&e.kernel);
    return st;
  }
  tl->sweeps[tl->nsweeps++] = e;
  return st;
}

tsr_status timeloop_step(timeloop_t *tl, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  /* after a local failure the exchanges still run, so that no rank waits for this one;
     the verdict at the end reports the failure everywhere */
  for (int s = 0; s < tl->nsweeps; ++s) {
    timeloop_entry_t *e = &tl->sweeps[s];
    double t0 = MPI_Wtime();
    if (e->exchange) {
      tsr_error_t xerr;
      tsr_status xst = comm_exchange(e->exchange, st == TSR_OK ? err : &xerr);
      if (xst != TSR_OK) return st == TSR_OK ? xst : st; /* a shared verdict: all return */
    }
    double t1 = MPI_Wtime();
    if (st == TSR_OK && e->boundary) st = data_items_run(e->boundary, err);
    double t2 = MPI_Wtime();
    if (st == TSR_OK) st = data_items_run(e->kernel, err);
    double t3 = MPI_Wtime();
    tl->timing.exchange += t1 - t0;
    tl->timing.boundary += t2 - t1;
    tl->timing.kernel += t3 - t2;
    e->seconds[0] += t1 - t0;
    e->seconds[1] += t2 - t1;
    e->seconds[2] += t3 - t2;
  }
  tl->timing.steps++;
  return verdict_reduce(tl->comm, st, 0, err);
}

tsr_status timeloop_run_kernel(timeloop_t *tl, const char *name, tsr_error_t *err) {
  tsr_status st = data_run_kernel(tl->reg, tl->patch, name, tl->fs, err);
  return verdict_reduce(tl->comm, st, 0, err);
}

/* exchange, boundary, kernel and steps are counted per step; the exchange's phases are
   read from each sweep's comm (which counts only the exchanges timeloop_step ran) */
timeloop_timing_t timeloop_timing(const timeloop_t *tl) {
  timeloop_timing_t t = tl->timing;
  for (int s = 0; s < tl->nsweeps; ++s) {
    if (!tl->sweeps[s].exchange) continue;
    comm_timing_t ct = comm_timing(tl->sweeps[s].exchange);
    t.device += ct.device;
    t.extract += ct.extract;
    t.copy += ct.copy;
    t.wait += ct.wait;
    t.insert += ct.insert;
  }
  return t;
}

int timeloop_sweep_count(const timeloop_t *tl) { return tl->nsweeps; }

timeloop_sweep_timing_t timeloop_sweep_timing(const timeloop_t *tl, int s) {
  const timeloop_entry_t *e = &tl->sweeps[s];
  return (timeloop_sweep_timing_t){.name = e->name, .exchange = e->seconds[0],
                                   .boundary = e->seconds[1], .kernel = e->seconds[2]};
}
