/* lbm_plan: the static block -> rank assignment of an LBM run and its prediction.
 *
 * Every process's predicted time per step is its compute time (cells it updates over its
 * throughput; solid blocks cost nothing) plus its communication time (ghost bytes it
 * sends to and receives from other processes, over the network bandwidth, and on GPU
 * processes also over the host<->device bandwidth; plus a latency per message), with
 * the weights of hardware.balance. Blocks are assigned with balance_weighted: each
 * process takes one run of the Morton order, the runs chosen so that the largest
 * predicted time is as small as the runs allow. lbm_sim_create uses it for the run;
 * `tessera plan` uses it for N processes without starting them. Nothing here allocates
 * simulation data. */
#ifndef LBM_PLAN_H
#define LBM_PLAN_H

#include "balance.h"
#include "lbm.h"
#include "node.h"
#include "patch.h"
#include "registry.h"
#include "simulation.h"
#include "tsr_error.h"

typedef struct lbm_plan {
  int nranks;
  node_process_t *procs;   /* [nranks] the hardware of each process */
  double *mlups;           /* [nranks] the throughput its weight comes from */
  double *cell_seconds;    /* [nranks] */
  double *byte_seconds;    /* [nranks] */
  double *block_cells;     /* [blocks] cells each block updates per step (0: solid) */
  double *link_bytes;      /* [blocks * 26] bytes each block sends in each direction */
  balance_model_t model;   /* over the arrays above */
  balance_cost_t *cost;    /* [nranks] predicted cost of each process */
  double best_compute;     /* balance_best_compute: the best the block granularity allows */
  double max_seconds;      /* largest predicted time per step (compute + comm) */
  double mean_seconds;     /* mean over the processes */
  patch_t *patch;          /* assigned and classified, seen from my_rank */
} lbm_plan_t;

/* procs[nranks]: the processes (node_resolve or node_assign). mlups: measured
 * throughput per rank (calibration), or NULL: each process's "mlups", else
 * hardware.balance.throughput of its hs. reg: a registry with the LBM sweep registered
 * (borrowed; it interns the bs names). */
TSR_NODISCARD tsr_status lbm_plan_create(const simulation_options_t *so, const lbm_options_t *lo,
                                         registry_t *reg, const node_process_t *procs,
                                         const double *mlups, int nranks, int my_rank,
                                         lbm_plan_t **out, tsr_error_t *err);

/* NULL-safe; frees the patch too unless lbm_plan_take_patch took it. */
void lbm_plan_free(lbm_plan_t **plan);

/* Hands the patch over to the caller (the plan keeps its prediction). */
patch_t *lbm_plan_take_patch(lbm_plan_t *plan);

/* max / mean - 1 of the predicted times per step: how long the average process waits. */
double lbm_plan_imbalance(const lbm_plan_t *plan);

#endif
