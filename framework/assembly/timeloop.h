/* timeloop: the sweeps of a time step, run in order on every local block.
 *
 * A sweep is a communication phase (one ghost exchange round of the fields it reads,
 * optional), a
 * boundary phase (a REGISTRY_KIND_BOUNDARY item, optional) and a work phase (a
 * REGISTRY_KIND_KERNEL item). Items are looked up once per local block when the sweep
 * is added, by the simulation's fs and each block's hs and bs; the blocks of an item
 * with a batch function run in one call per step (data.h), e.g. every GPU block of the
 * process with a fixed number of kernel launches. Every step ends with
 * one verdict across ranks. */
#ifndef TIMELOOP_H
#define TIMELOOP_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "comm.h"
#include "patch.h"
#include "registry.h"
#include "tsr_error.h"

typedef struct timeloop timeloop_t;

typedef struct timeloop_sweep {
  const char *name;     /* for reports */
  const comm_field_t *exchange; /* fields exchanged first, in one round (comm.h);
                                   borrowed during timeloop_add_sweep */
  int nexchange;        /* 0: no exchange */
  const char *boundary; /* boundary item; NULL: none */
  const char *kernel;   /* kernel item */
} timeloop_sweep_t;

/* Seconds (MPI_Wtime) this process spent in each phase of timeloop_step, summed over
 * every step and sweep. */
typedef struct timeloop_timing {
  double exchange;  /* seconds in ghost exchanges, all of it (comm_start to comm_finish) */
  double boundary;  /* seconds in boundary items */
  double kernel;    /* seconds in kernel items */
  /* exchange split into the phases of comm_timing (comm.h), summed over the sweeps that
     exchange; exchange minus their sum is bookkeeping between the phases */
  double device;    /* stage_out, stage_wait, stage_in: host<->device transfers, pack/unpack */
  double extract;   /* extraction into send buffers (and into scratch for local pairs of
                       different hardware) */
  double copy;      /* direct block-to-block copies inside this process */
  double wait;      /* MPI: posting, MPI_Waitall, the exchange's verdict */
  double insert;    /* checking and inserting received messages (and from scratch) */
  double bytes;     /* ghost bytes this process's blocks sent (to their neighbours of this
                       process, themselves and others), summed over the exchanges */
  int64_t steps;
} timeloop_timing_t;

/* patch and reg are borrowed and must outlive the timeloop. */
TSR_NODISCARD tsr_status timeloop_create(patch_t *patch, const registry_t *reg, uint64_t fs,
                                         MPI_Comm comm, timeloop_t **out, tsr_error_t *err);
void timeloop_free(timeloop_t **tl);

/* Whether the sweeps added from now on overlap their exchange with their items (on by
 * default): comm_start_stage, the batches' INNER part (devices' blocks, where
 * data_items_split splits them), comm_start_send, the other blocks' INNER part
 * (registry_region_t: the blocks with no late ghost slice whole, the others' inner box
 * where the item has .part), comm_finish, the SHELL part. The results are the same bit
 * for bit either way. */
void timeloop_set_overlap(timeloop_t *tl, bool on);
/* Whether some sweep of the loop overlaps its exchange. */
bool timeloop_overlaps(const timeloop_t *tl);
/* Of the sweeps that overlap their exchange and have batches (a device's blocks), how
 * many run their batches in two parts (data_items_split); *candidates gets how many
 * there are. */
int timeloop_batches_split(const timeloop_t *tl, int *candidates);

/* The inner box [lo, hi) of a block of n cells for late ghost slices `late` (bits of
 * direction.h) and a sweep that reads reach[a] cells past its interior along axis a:
 * shrunk from the interior, for each late slice that a box cell could read, along one
 * of the slice's axes (z, else y, else x: rows stay whole where they can). */
void timeloop_inner_box(const int n[3], const int reach[3], uint32_t late, int lo[3],
                        int hi[3]);

/* Collective: looks up the sweep's items for every local block and plans its exchange. */
TSR_NODISCARD tsr_status timeloop_add_sweep(timeloop_t *tl, const timeloop_sweep_t *sweep,
                                            tsr_error_t *err);

/* Collective: one time step (every sweep in order). */
TSR_NODISCARD tsr_status timeloop_step(timeloop_t *tl, tsr_error_t *err);

/* Collective: runs a kernel item once on every local block (e.g. moments for output). */
TSR_NODISCARD tsr_status timeloop_run_kernel(timeloop_t *tl, const char *name, tsr_error_t *err);

timeloop_timing_t timeloop_timing(const timeloop_t *tl);

/* Seconds this process spent in one sweep (in the order added), summed over every step:
 * its exchange round, its boundary and its kernel items. GPU kernels run asynchronously:
 * their time shows in the sweep that waits for them (the finish items). */
typedef struct timeloop_sweep_timing {
  const char *name; /* the sweep's name; borrowed from the timeloop */
  double exchange, boundary, kernel;
} timeloop_sweep_timing_t;
int timeloop_sweep_count(const timeloop_t *tl);
timeloop_sweep_timing_t timeloop_sweep_timing(const timeloop_t *tl, int s);

#endif
