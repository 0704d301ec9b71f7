/* plan: the static block -> rank assignment of a run and its prediction.
 *
 * Every process's predicted time per step is its compute time (cells it updates over its
 * throughput, the cells its modules update (module_def_t.block_cells): a block where no
 * module works costs nothing), plus its exchange work (the ghost bytes its blocks copy
 * or pack, to any neighbour, themselves included, over its exchange rate), plus its
 * communication time (ghost bytes it sends to and receives from other processes, over
 * the network bandwidth, within a node over the node's, and on GPU processes also over
 * the host<->device bandwidth; plus a latency per message), with
 * the weights of hardware.balance. The ghost bytes are those of every field the modules
 * declare. Blocks are assigned with balance_weighted: each process takes one run of the
 * Morton order, the runs chosen so that the largest predicted time is as small as the
 * runs allow. sim_create uses it for the run;
 * `tessera plan` uses it for N processes without starting them. Nothing here allocates
 * simulation data. */
#ifndef PLAN_H
#define PLAN_H

#include "balance.h"
#include "module.h"
#include "node.h"
#include "patch.h"
#include "registry.h"
#include "simulation.h"
#include "tsr_error.h"

typedef struct plan {
  int nranks;
  node_process_t *procs;   /* [nranks] the hardware of each process */
  double *mlups;           /* [nranks] the throughput its weight comes from */
  double *cell_seconds;    /* [nranks] */
  double *byte_seconds;    /* [nranks] to or from a process of another node */
  double *node_byte_seconds; /* [nranks] to or from a process of the same node */
  int *node_of_rank;       /* [nranks] the index of its node's first process */
  double *block_cells;     /* [blocks] cells each block updates per step (0: no module works there) */
  double *link_bytes;      /* [blocks * 26] bytes each block sends in each direction */
  double *exchange_bytes;  /* [blocks] bytes each block copies or packs per step (every
                              direction, itself included) */
  double *exchange_seconds; /* [nranks] seconds per such byte */
  balance_model_t model;   /* over the arrays above */
  balance_cost_t *cost;    /* [nranks] predicted cost of each process */
  double best_compute;     /* balance_best_compute: the best the block granularity allows */
  double max_seconds;      /* largest predicted time per step (compute + comm) */
  double mean_seconds;     /* mean over the processes */
  patch_t *patch;          /* assigned and classified, seen from my_rank */
} plan_t;

/* procs[nranks]: the processes (node_resolve or node_assign). mlups: measured
 * throughput per rank (calibration), or NULL: each process's "mlups", else
 * hardware.balance.throughput of its hs; exchange_gbs: the ghost bytes each rank copies or
 * packs per second (calibration), or NULL: hardware.balance.exchange_gbs. modules[n]
 * with their declarations decls[n] and reg, a registry where they registered their items
 * (borrowed; it interns the bs names); fs: the run's switches. The modules classify the
 * blocks. */
TSR_NODISCARD tsr_status plan_create(const simulation_options_t *so, module_t *modules,
                                     const module_decl_t *decls, int n, registry_t *reg,
                                     uint64_t fs, const node_process_t *procs,
                                     const double *mlups, const double *exchange_gbs,
                                     int nranks, int my_rank, plan_t **out, tsr_error_t *err);

/* NULL-safe; frees the patch too unless plan_take_patch took it. */
void plan_free(plan_t **plan);

/* Hands the patch over to the caller (the plan keeps its prediction). */
patch_t *plan_take_patch(plan_t *plan);

/* max / mean - 1 of the predicted times per step: how long the average process waits. */
double plan_imbalance(const plan_t *plan);

#endif
