/* balance: static block -> rank assignment.
 *
 * balance_weighted keeps the contiguous runs of the Morton order of patch_morton_even
 * (patch.h), but chooses their lengths with a
 * cost model (balance_model_t) so that the slowest process is as fast as the runs allow:
 * processes of different speed (a GPU process next to CPU processes) get different
 * amounts of work, and the ghost exchange with other processes is charged to both ends.
 * balance_predict evaluates the same model for any assignment; balance_best_compute is a
 * lower bound of the compute part that no assignment of whole blocks can beat.
 *
 * Solid blocks (block_cells 0) cost nothing: no update, no block overhead, and their
 * links cost nothing in either direction (a solid block neither sends nor receives). */
#ifndef BALANCE_H
#define BALANCE_H

#include <stdint.h>

#include "patch.h"
#include "tsr_error.h"

/* Cost model for predicting each process's time per step. Arrays are borrowed.
 * Checked by every function that takes one: nranks >= 1, cell_seconds finite and > 0,
 * every other value finite and >= 0 (messages name the field and the index). */
typedef struct balance_model {
  int nranks;
  const double *cell_seconds;  /* [nranks] seconds per cell update on rank r (1 / its
                                  throughput), > 0 */
  const double *block_seconds; /* [nranks] fixed seconds per non-solid block per step (launch
                                  overheads); NULL: 0 */
  const double *byte_seconds;  /* [nranks] seconds per ghost byte rank r sends to or receives
                                  from another rank (network, plus host<->device on GPU
                                  processes); NULL: communication costs nothing (messages
                                  included; bytes and messages are still counted) */
  double message_seconds;      /* latency per block message sent to or received from another
                                  rank */
  const int *node_of_rank;     /* [nranks] the node of each rank (any ids), or NULL. With it
                                  and node_byte_seconds, a link between two ranks of one
                                  node costs node_byte_seconds and node_message_seconds
                                  instead of byte_seconds and message_seconds in
                                  balance_predict (balance_weighted charges the latter
                                  for every link that leaves a rank's run) */
  const double *node_byte_seconds; /* [nranks], or NULL: the network's figures everywhere */
  double node_message_seconds;
  const double *block_cells;   /* [nblocks] cells block id updates per step (0: a solid block,
                                  costs nothing and sends nothing); NULL: every block its cell
                                  count size[0]*size[1]*size[2] */
  const double *link_bytes;    /* [nblocks * 26]: bytes block id sends to its neighbour in
                                  direction d (index id*26 + d; 0 where there is none or
                                  nothing crosses); NULL: no communication */
  const double *exchange_seconds; /* [nranks] seconds per ghost byte a block of rank r
                                     copies or packs per step, whoever its neighbour is
                                     (itself, a block of the same rank or of another);
                                     NULL: 0 */
  const double *block_exchange_bytes; /* [nblocks] those bytes of block id per step; NULL: 0
                                         (the assignment counts them as well: a process
                                         whose copies are slow, a GPU packing through
                                         its kernels, gets fewer blocks) */
} balance_model_t;

typedef struct balance_cost {
  int32_t blocks;   /* blocks assigned (solid ones included) */
  double cells;     /* cells updated per step */
  double compute;   /* seconds per step: cells * cell_seconds + non-solid blocks *
                       block_seconds */
  double exchange;  /* seconds per step: block_exchange_bytes * exchange_seconds (the
                       copies and the packing of ghost values) */
  double comm;      /* seconds per step: bytes sent+received across ranks * byte_seconds +
                       messages sent+received * message_seconds (the node_ figures for
                       the links within a node) */
  int32_t messages; /* block messages sent to other ranks per step (one per link with
                       bytes > 0) */
  double bytes;     /* bytes sent plus received across ranks per step */
} balance_cost_t;

/* A rank's predicted seconds per step: compute + exchange + comm. */
static inline double balance_cost_seconds(const balance_cost_t *c) {
  return c->compute + c->exchange + c->comm;
}

/* Predicted cost of every rank (costs[model->nranks], filled) under an assignment
 * (rank_of_block[patch_block_count], each in 0..model->nranks-1). A link from block b to
 * its neighbour n (patch_neighbor(patch, b, d)) costs only when n is owned by another rank
 * and neither block is solid; the rank of b pays link_bytes[b*26+d] as sent, and the rank
 * of n pays the same bytes as received (so each rank pays what it sends and what it
 * receives), and each side one message when the bytes are > 0. A block that is its own
 * neighbour (periodic, one block along an axis) costs nothing. */
TSR_NODISCARD tsr_status balance_predict(const patch_t *patch, const balance_model_t *model,
                                         const int *rank_of_block, balance_cost_t *costs,
                                         tsr_error_t *err);

/* patch_assign_fn with ctx = const balance_model_t * (nranks must equal model->nranks):
 * blocks in Morton order (patch_morton_order), each rank takes one contiguous run of
 * that order, rank 0 first; the run lengths are chosen so that the largest predicted time
 * per step (compute + exchange + comm, as balance_predict counts it) is as small as
 * contiguous runs allow: bisection on the step time T with a greedy pass (each rank in
 * turn takes the longest run whose predicted time stays <= T; the communication cost of a run is updated
 * incrementally as blocks join it, counting links to blocks outside the run as crossing;
 * since a joining block can lower that cost, the pass looks a little past the first block
 * that overshoots T). Ranks may end up with no blocks (a very slow process). The best
 * assignment found is kept (the feasible one with the smallest largest time; all blocks
 * on the single fastest rank is the fallback); then the slack below that time is spread:
 * a backward pass gives each rank the latest end that still lets the later ranks finish,
 * and each rank takes the run nearest its share of the remaining work by throughput
 * (1 / cell_seconds) within that room, so equal ranks get run lengths that differ by at
 * most one block instead of the last rank getting the remainder. The largest time is
 * unchanged by this. The result is deterministic: every process computes the same
 * assignment from the same model. */
TSR_NODISCARD tsr_status balance_weighted(const patch_t *patch, int nranks, const void *ctx,
                                          int *rank_of_block, tsr_error_t *err);

/* A lower bound of the largest compute time per step (communication not counted) that any
 * assignment of whole blocks to the ranks can reach -- "the best the block granularity
 * allows": the larger of (a) total work over total throughput and (b) the smallest T for
 * which the ranks can hold all non-solid blocks when each non-solid block costs the
 * smallest non-solid block's work (rank r holds floor(T / (w_min*cell_seconds[r] +
 * block_seconds[r])) blocks). Exact when all non-solid blocks are the same size. 0 when
 * there is no work; NAN when the model fails the checks of balance_predict. */
double balance_best_compute(const patch_t *patch, const balance_model_t *model);

#endif
