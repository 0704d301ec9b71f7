#include "timeloop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "data.h"
#include "direction.h"
#include "verdict.h"

typedef struct timeloop_entry {
  char name[64];                     /* for reports */
  double seconds[3];                 /* exchange, boundary, kernel, summed over steps */
  comm_t *exchange;                  /* NULL: none */
  data_items_t *boundary;            /* NULL: none */
  data_items_t *kernel;
  registry_region_t *regions;        /* per local block, where the sweep overlaps its
                                        exchange; NULL: it does not */
} timeloop_entry_t;

struct timeloop {
  patch_t *patch;
  const registry_t *reg;
  uint64_t fs;
  MPI_Comm comm;
  timeloop_entry_t *sweeps;
  int nsweeps;
  bool overlap;
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
  tl->overlap = true;
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
    free(t->sweeps[i].regions);
  }
  free(t->sweeps);
  free(t);
  *tl = NULL;
}

void timeloop_inner_box(const int n[3], const int reach[3], uint32_t late, int lo[3],
                        int hi[3]) {
  for (int a = 0; a < 3; ++a) {
    lo[a] = 0;
    hi[a] = n[a];
  }
  /* faces, then edges, then corners (direction.h numbers them so): a slice that a shrink
     for an earlier one keeps away already needs nothing */
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    if (!(late & (1u << d))) continue;
    const int8_t *o = direction_offsets[d];
    bool away = false;
    for (int a = 0; a < 3 && !away; ++a)
      away = o[a] != 0 && (reach[a] == 0 || (o[a] > 0 ? hi[a] <= n[a] - reach[a]
                                                         : lo[a] >= reach[a]));
    if (away) continue;
    /* shrink along z, else y, else x: whole rows stay whole where they can */
    int a = 2;
    while (o[a] == 0) --a;
    if (o[a] > 0) hi[a] = n[a] - reach[a];
    else lo[a] = reach[a];
  }
}

/* The regions of the local blocks for a sweep whose exchange is c. */
static tsr_status timeloop_regions(timeloop_t *tl, const comm_t *c, const int reach[3],
                                   registry_region_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const int32_t n = patch_local_count(tl->patch);
  registry_region_t *r = calloc((size_t)(n ? n : 1), sizeof *r);
  TSR_CHECK(r, TSR_ERR_NOMEM, "out of memory planning an overlapped step");
  for (int32_t i = 0; i < n; ++i) {
    const block_info_t *b = patch_block(tl->patch, patch_local_id(tl->patch, i));
    r[i].late = comm_late(c, i);
    timeloop_inner_box(b->size, reach, r[i].late, r[i].lo, r[i].hi);
  }
  *out = r;
cleanup:
  return st;
}

void timeloop_set_overlap(timeloop_t *tl, bool on) { tl->overlap = on; }

bool timeloop_overlaps(const timeloop_t *tl) {
  for (int s = 0; s < tl->nsweeps; ++s)
    if (tl->sweeps[s].regions) return true;
  return false;
}

int timeloop_batches_split(const timeloop_t *tl, int *candidates) {
  int n = 0;
  *candidates = 0;
  for (int s = 0; s < tl->nsweeps; ++s) {
    const timeloop_entry_t *e = &tl->sweeps[s];
    if (!e->regions || data_items_batch_count(e->kernel) == 0) continue;
    ++*candidates;
    n += data_items_splits(e->kernel);
  }
  return n;
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
  if (st == TSR_OK && e.exchange && tl->overlap) {
    int reach[3] = {0, 0, 0};
    for (int f = 0; f < sweep->nexchange; ++f)
      for (int a = 0; a < 3; ++a)
        if (sweep->exchange[f].width[a] > reach[a]) reach[a] = sweep->exchange[f].width[a];
    st = timeloop_regions(tl, e.exchange, reach, &e.regions, err);
    if (st == TSR_OK) st = data_items_split(e.boundary, e.kernel, e.regions, err);
  }
  /* every rank: a process that overlaps and one that does not both get here */
  if (sweep->nexchange > 0) st = verdict_reduce(tl->comm, st, 0, err);
  if (st != TSR_OK) {
    comm_free(&e.exchange);
    data_items_free(&e.boundary);
    data_items_free(&e.kernel);
    return st;
  }
  tl->sweeps[tl->nsweeps++] = e;
  return st;
}

static void timeloop_progress(void *c) { comm_progress(c); }

/* Adds the time since *t to *into and restarts *t. */
static void timeloop_lap(double *t, double *into) {
  const double u = MPI_Wtime();
  *into += u - *t;
  *t = u;
}

/* A sweep's step took s[0] in its exchange, s[1] in its boundary and s[2] in its kernel
 * items: into the loop's and the sweep's sums. */
static void timeloop_account(timeloop_t *tl, timeloop_entry_t *e, const double s[3]) {
  tl->timing.exchange += s[0];
  tl->timing.boundary += s[1];
  tl->timing.kernel += s[2];
  for (int k = 0; k < 3; ++k) e->seconds[k] += s[k];
}

/* One sweep whose exchange overlaps its items: the exchange starts (the staging out
 * enqueued, the receives posted), the batches' inner part goes to the devices (their
 * queues run it while the staged data travels to the host), the exchange sends, the
 * other blocks' inner part runs, the exchange finishes, everything runs the rest. *st:
 * this rank's status so far (a failure stops the items, not the exchange). Returns the
 * exchange's shared verdict. */
static tsr_status timeloop_overlapped(timeloop_t *tl, timeloop_entry_t *e, tsr_status *st,
                                      tsr_error_t *err) {
  tsr_error_t xerr;
  double s[3] = {0, 0, 0}; /* exchange, boundary items, kernel items */
  double t = MPI_Wtime();
  tsr_status xst = comm_start_stage(e->exchange, *st == TSR_OK ? err : &xerr);
  if (xst != TSR_OK) return *st == TSR_OK ? xst : *st;
  /* INNER: the batches, the rest of the exchange's start, the other blocks; SHELL */
  const struct {
    registry_part_t part;
    data_what_t what;
    int exchange; /* after the items: 1 comm_start_send, 2 nothing; before: 3 comm_finish */
  } steps[3] = {{REGISTRY_PART_INNER, DATA_BATCHES, 1},
                {REGISTRY_PART_INNER, DATA_BLOCKS, 2},
                {REGISTRY_PART_SHELL, DATA_ALL, 3}};
  for (int k = 0; k < 3; ++k) {
    timeloop_lap(&t, &s[0]);
    if (steps[k].exchange == 3) {
      xst = comm_finish(e->exchange, *st == TSR_OK ? err : &xerr);
      if (xst != TSR_OK) return *st == TSR_OK ? xst : *st;
      timeloop_lap(&t, &s[0]);
    }
    void (*progress)(void *) = steps[k].what == DATA_BLOCKS ? timeloop_progress : NULL;
    for (int j = 0; j < 2; ++j) {
      data_items_t *d = j == 0 ? e->boundary : e->kernel;
      if (*st == TSR_OK && d)
        *st = data_items_run_part(d, steps[k].part, steps[k].what, e->regions, progress,
                                  e->exchange, err);
      timeloop_lap(&t, &s[1 + j]);
    }
    if (steps[k].exchange == 1) {
      xst = comm_start_send(e->exchange, *st == TSR_OK ? err : &xerr);
      if (xst != TSR_OK) return *st == TSR_OK ? xst : *st;
    }
  }
  timeloop_lap(&t, &s[0]);
  timeloop_account(tl, e, s);
  return TSR_OK;
}

tsr_status timeloop_step(timeloop_t *tl, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  /* after a local failure the exchanges still run, so that no rank waits for this one;
     the verdict at the end reports the failure everywhere */
  for (int s = 0; s < tl->nsweeps; ++s) {
    timeloop_entry_t *e = &tl->sweeps[s];
    if (e->regions) {
      tsr_status xst = timeloop_overlapped(tl, e, &st, err);
      if (xst != TSR_OK) return xst; /* a shared verdict: all return */
      continue;
    }
    double t = MPI_Wtime(), sec[3] = {0, 0, 0};
    if (e->exchange) {
      tsr_error_t xerr;
      tsr_status xst = comm_exchange(e->exchange, st == TSR_OK ? err : &xerr);
      if (xst != TSR_OK) return st == TSR_OK ? xst : st; /* a shared verdict: all return */
    }
    timeloop_lap(&t, &sec[0]);
    if (st == TSR_OK && e->boundary) st = data_items_run(e->boundary, err);
    timeloop_lap(&t, &sec[1]);
    if (st == TSR_OK) st = data_items_run(e->kernel, err);
    timeloop_lap(&t, &sec[2]);
    timeloop_account(tl, e, sec);
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
    comm_stats_t cs = comm_stats(tl->sweeps[s].exchange);
    t.bytes += (double)(cs.local_bytes + cs.bytes_sent) * (double)ct.exchanges;
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
