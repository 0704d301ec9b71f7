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

/* A process's predicted memory: host bytes (the fields as the kit allocates them on its
 * blocks, the largest staging grid of a GPU block, what the modules allocate besides
 * (module_def_t.local_bytes), the VTK writer's buffers where VTK output is on, and
 * hardware.balance.process_mb of the program and its libraries) and device bytes (a GPU
 * process's device buffers). */
typedef struct plan_memory {
  double host, device;
} plan_memory_t;

/* The bytes the process the patch is seen from allocates for its blocks: *host the kit's
 * fields (field_local_bytes: the copies and the largest staging grid) and what the modules
 * allocate besides (module_def_t.local_bytes), *device the same on its device, *largest
 * the largest single device buffer. A sum past a size_t is an error. Not collective. */
TSR_NODISCARD tsr_status plan_local_bytes(const patch_t *patch, const module_t *modules,
                                          const module_decl_t *decls, int n, registry_t *reg,
                                          uint64_t fs, size_t *host, size_t *device,
                                          size_t *largest, tsr_error_t *err);

/* *mem: the predicted memory of the process the patch is seen from (its local blocks,
 * their hs and bs set); modules[n] with their declarations, the fields found in reg for
 * the run's fs. Not collective. */
TSR_NODISCARD tsr_status plan_memory_rank(const patch_t *patch, const module_t *modules,
                                          const module_decl_t *decls, int n, registry_t *reg,
                                          uint64_t fs, const simulation_options_t *so,
                                          plan_memory_t *mem, tsr_error_t *err);

/* mem[nranks]: every process's, the patch seen from each in turn (patch_view_as), then
 * from its own process again. */
TSR_NODISCARD tsr_status plan_memory(patch_t *patch, const module_t *modules,
                                     const module_decl_t *decls, int n, registry_t *reg,
                                     uint64_t fs, const simulation_options_t *so,
                                     plan_memory_t *mem, tsr_error_t *err);

/* The lines of a run's whole cost into out (cap bytes, NUL-terminated where it fits):
 * the predicted wall time of so->steps steps and between VTK outputs, and with mem (NULL:
 * none) the largest process's and node's memory, against node_avail (bytes available on
 * the node of each rank, indexed by the node's first rank; NULL or 0: unknown). Returns
 * the length the text needs. */
/* Where the model's throughput is the default (no machine file, no calibration): what
 * makes it this machine's, "`tessera bench --machine FILE` measures ..."; else "". */
const char *plan_throughput_hint(const simulation_balance_t *bal);

size_t plan_cost_text(const plan_t *plan, const simulation_options_t *so,
                      const plan_memory_t *mem, const double *node_avail, char *out, size_t cap);

/* Warnings, one per line, into out (as plan_cost_text): processes without a block, a
 * block grid too coarse for the processes (the best assignment computes > 1.25 times an
 * even split of the cells), a node whose processes need more memory than it has. */
size_t plan_warnings(const plan_t *plan, const simulation_options_t *so, const plan_memory_t *mem,
                     const double *node_avail, char *out, size_t cap);

#endif
