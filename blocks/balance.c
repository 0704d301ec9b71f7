#include "balance.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "direction.h"

/* ---------------------------------------------------------------- weighted */

/* Work (cells per step) of block id under the model. */
static double balance_block_work(const patch_t *patch, const balance_model_t *model,
                                 int32_t id) {
  if (model->block_cells) return model->block_cells[id];
  const block_info_t *b = patch_block(patch, id);
  return (double)b->size[0] * (double)b->size[1] * (double)b->size[2];
}

/* Checks one optional per-rank (or per-block) array: finite and >= 0. */
static tsr_status balance_check_nonneg(const char *field, const double *v, int64_t count,
                                       tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (int64_t i = 0; v && i < count; ++i)
    TSR_CHECK(isfinite(v[i]) && v[i] >= 0, TSR_ERR_INVALID,
              "balance model: %s[%lld] = %g: allowed are finite values >= 0", field,
              (long long)i, v[i]);
cleanup:
  return st;
}

static tsr_status balance_model_check(const patch_t *patch, const balance_model_t *model,
                                      tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int32_t n = patch_block_count(patch);
  TSR_CHECK(model, TSR_ERR_INVALID, "balance model: NULL; a balance_model_t is needed");
  TSR_CHECK(model->nranks >= 1, TSR_ERR_INVALID,
            "balance model: nranks = %d: at least 1 is needed", model->nranks);
  TSR_CHECK(model->cell_seconds, TSR_ERR_INVALID,
            "balance model: cell_seconds is NULL: one value per rank (%d) is needed",
            model->nranks);
  for (int r = 0; r < model->nranks; ++r)
    TSR_CHECK(isfinite(model->cell_seconds[r]) && model->cell_seconds[r] > 0, TSR_ERR_INVALID,
              "balance model: cell_seconds[%d] = %g: allowed are finite values > 0", r,
              model->cell_seconds[r]);
  TSR_TRY(balance_check_nonneg("block_seconds", model->block_seconds, model->nranks, err));
  TSR_TRY(balance_check_nonneg("exchange_seconds", model->exchange_seconds, model->nranks, err));
  TSR_TRY(balance_check_nonneg("byte_seconds", model->byte_seconds, model->nranks, err));
  TSR_CHECK(isfinite(model->message_seconds) && model->message_seconds >= 0, TSR_ERR_INVALID,
            "balance model: message_seconds = %g: allowed are finite values >= 0",
            model->message_seconds);
  TSR_TRY(balance_check_nonneg("node_byte_seconds", model->node_byte_seconds, model->nranks,
                               err));
  TSR_CHECK(isfinite(model->node_message_seconds) && model->node_message_seconds >= 0,
            TSR_ERR_INVALID,
            "balance model: node_message_seconds = %g: allowed are finite values >= 0",
            model->node_message_seconds);
  TSR_TRY(balance_check_nonneg("block_cells", model->block_cells, n, err));
  TSR_TRY(balance_check_nonneg("block_exchange_bytes", model->block_exchange_bytes, n, err));
  TSR_TRY(balance_check_nonneg("link_bytes", model->link_bytes, (int64_t)n * DIRECTION_COUNT,
                               err));
cleanup:
  return st;
}

tsr_status balance_predict(const patch_t *patch, const balance_model_t *model,
                           const int *rank_of_block, balance_cost_t *costs, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int32_t n = patch_block_count(patch);
  TSR_TRY(balance_model_check(patch, model, err));
  int R = model->nranks;
  for (int32_t id = 0; id < n; ++id)
    TSR_CHECK(rank_of_block[id] >= 0 && rank_of_block[id] < R, TSR_ERR_INVALID,
              "balance predict: rank_of_block[%d] = %d: allowed are 0..%d", (int)id,
              rank_of_block[id], R - 1);
  for (int r = 0; r < R; ++r) costs[r] = (balance_cost_t){0};

  for (int32_t id = 0; id < n; ++id) {
    int r = rank_of_block[id];
    double w = balance_block_work(patch, model, id);
    costs[r].blocks++;
    if (w <= 0) continue; /* solid: no update, no overhead, no links */
    costs[r].cells += w;
    costs[r].compute += w * model->cell_seconds[r];
    if (model->block_seconds) costs[r].compute += model->block_seconds[r];
    if (model->exchange_seconds && model->block_exchange_bytes)
      costs[r].exchange += model->block_exchange_bytes[id] * model->exchange_seconds[r];
    if (!model->link_bytes) continue;
    for (int d = 0; d < DIRECTION_COUNT; ++d) {
      double bytes = model->link_bytes[(int64_t)id * DIRECTION_COUNT + d];
      int32_t nb = patch_neighbor(patch, id, d);
      if (bytes <= 0 || nb < 0 || nb == id || rank_of_block[nb] == r) continue;
      if (balance_block_work(patch, model, nb) <= 0) continue; /* a solid block receives nothing */
      int rn = rank_of_block[nb];
      costs[r].bytes += bytes;
      costs[r].messages++;
      costs[rn].bytes += bytes;
      if (!model->byte_seconds) continue;
      /* each end pays the bytes and one message, at its node's or the network's figures */
      const bool node = model->node_of_rank && model->node_byte_seconds &&
                        model->node_of_rank[r] == model->node_of_rank[rn];
      const double *bs = node ? model->node_byte_seconds : model->byte_seconds;
      const double ms = node ? model->node_message_seconds : model->message_seconds;
      costs[r].comm += bytes * bs[r] + ms;
      costs[rn].comm += bytes * bs[rn] + ms;
    }
  }
cleanup:
  return st;
}

/* The Morton-ordered problem the greedy passes work on: block work and ghost links by
 * position in the order. A link entry of position p says: the block at position q and p
 * exchange `bytes` (both directions summed) in `msgs` messages; every link between two
 * non-solid, distinct blocks with bytes > 0 appears once from each end. */
typedef struct balance_problem {
  int32_t n;
  int nranks;
  const balance_model_t *model;
  int32_t *order;     /* [n] BlockID at each position */
  double *work;       /* [n] cells per step */
  double *prefix;     /* [n + 1] work of positions [0, p) */
  double *speed;      /* [nranks + 1] sum of 1 / cell_seconds over ranks r.. (speed[nranks] = 0) */
  int64_t *adj_start; /* [n + 1] CSR offsets into the link arrays; NULL: no comm */
  int32_t *adj_pos;
  double *adj_bytes;
  int8_t *adj_msgs;
  uint64_t *stamp;    /* [n] run marks of the current scan */
  uint64_t next_stamp;
  int32_t *ends;      /* [nranks] end of each rank's run in the last forward pass */
  int32_t *starts;    /* [nranks + 1] start of each rank's run in the last backward pass */
} balance_problem_t;

static void balance_problem_free(balance_problem_t *pb) {
  free(pb->order);
  free(pb->work);
  free(pb->prefix);
  free(pb->speed);
  free(pb->adj_start);
  free(pb->adj_pos);
  free(pb->adj_bytes);
  free(pb->adj_msgs);
  free(pb->stamp);
  free(pb->ends);
  free(pb->starts);
}

static tsr_status balance_problem_init(balance_problem_t *pb, const patch_t *patch,
                                       const balance_model_t *model, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int32_t n = patch_block_count(patch);
  int R = model->nranks;
  int32_t *pos_of = NULL;
  pb->n = n;
  pb->nranks = R;
  pb->model = model;
  pb->order = malloc((size_t)n * sizeof *pb->order);
  pb->work = malloc((size_t)n * sizeof *pb->work);
  pb->prefix = malloc((size_t)(n + 1) * sizeof *pb->prefix);
  pb->speed = malloc((size_t)(R + 1) * sizeof *pb->speed);
  pb->stamp = calloc((size_t)n, sizeof *pb->stamp);
  pb->ends = calloc((size_t)R, sizeof *pb->ends);
  pb->starts = calloc((size_t)R + 1, sizeof *pb->starts);
  pos_of = malloc((size_t)n * sizeof *pos_of);
  TSR_CHECK(pb->order && pb->work && pb->prefix && pb->speed && pb->stamp && pb->ends &&
                pb->starts && pos_of,
            TSR_ERR_NOMEM, "out of memory balancing %d blocks over %d ranks", (int)n, R);
  TSR_TRY(patch_morton_order(patch, pb->order, err));
  pb->prefix[0] = 0;
  for (int32_t p = 0; p < n; ++p) {
    pos_of[pb->order[p]] = p;
    pb->work[p] = balance_block_work(patch, model, pb->order[p]);
    pb->prefix[p + 1] = pb->prefix[p] + pb->work[p];
  }
  pb->speed[R] = 0;
  for (int r = R - 1; r >= 0; --r) pb->speed[r] = pb->speed[r + 1] + 1 / model->cell_seconds[r];
  /* links cost nothing without link bytes or without byte_seconds */
  if (!model->link_bytes || !model->byte_seconds) goto cleanup;

  const double *link = model->link_bytes;
  int64_t count = 0;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {
      pb->adj_start = malloc((size_t)(n + 1) * sizeof *pb->adj_start);
      pb->adj_pos = malloc((size_t)(count ? count : 1) * sizeof *pb->adj_pos);
      pb->adj_bytes = malloc((size_t)(count ? count : 1) * sizeof *pb->adj_bytes);
      pb->adj_msgs = malloc((size_t)(count ? count : 1) * sizeof *pb->adj_msgs);
      TSR_CHECK(pb->adj_start && pb->adj_pos && pb->adj_bytes && pb->adj_msgs, TSR_ERR_NOMEM,
                "out of memory listing %lld ghost links of %d blocks", (long long)count,
                (int)n);
    }
    count = 0;
    for (int32_t p = 0; p < n; ++p) {
      if (pass == 1) pb->adj_start[p] = count;
      int32_t id = pb->order[p];
      if (pb->work[p] <= 0) continue;
      for (int d = 0; d < DIRECTION_COUNT; ++d) {
        int32_t nb = patch_neighbor(patch, id, d);
        if (nb < 0 || nb == id || pb->work[pos_of[nb]] <= 0) continue;
        /* the neighbour in d sends to this block in the inverse direction */
        double out = link[(int64_t)id * DIRECTION_COUNT + d];
        double in = link[(int64_t)nb * DIRECTION_COUNT + direction_inverse(d)];
        if (out <= 0 && in <= 0) continue;
        if (pass == 1) {
          pb->adj_pos[count] = pos_of[nb];
          pb->adj_bytes[count] = out + in;
          pb->adj_msgs[count] = (int8_t)((out > 0) + (in > 0));
        }
        ++count;
      }
    }
    if (pass == 1) pb->adj_start[n] = count;
  }
cleanup:
  free(pos_of);
  return st;
}

/* The exchange bytes of the block at position p (0 for a solid one or without them). */
static double balance_xbytes(const balance_problem_t *pb, int32_t p) {
  const balance_model_t *m = pb->model;
  return m->block_exchange_bytes && m->exchange_seconds && pb->work[p] > 0
             ? m->block_exchange_bytes[pb->order[p]]
             : 0.0;
}

/* Seconds per step of rank r for a run with these totals (xbytes: its blocks' exchange
 * bytes). */
static double balance_run_time(const balance_model_t *m, int r, double cells, int32_t nonsolid,
                               double xbytes, double bytes, int64_t msgs) {
  double t = cells * m->cell_seconds[r];
  if (m->block_seconds) t += (double)nonsolid * m->block_seconds[r];
  if (m->exchange_seconds) t += xbytes * m->exchange_seconds[r];
  if (m->byte_seconds) t += bytes * m->byte_seconds[r] + (double)msgs * m->message_seconds;
  return t;
}

/* How a scan picks among the runs that fit. */
typedef struct balance_pick {
  int32_t least;  /* forward: runs must end at or after this position where one fits */
  double target;  /* forward: wanted prefix work at the end; < 0: the longest run */
} balance_pick_t;

/* Grows the run of rank r from position `from` (dir +1: [from, p), p rising; dir -1:
 * [p, from), p falling) and returns its other end; *time gets the run's time. The run is
 * one that fits in T (time <= T), the empty one included: the longest one, or with a
 * target the one whose end is nearest to pick->target among those ending at or after
 * pick->least (the longest one when none does).
 * Compute and exchange time only grow along a run, so the scan stops once they alone
 * exceed T;
 * the comm time can fall as blocks join (links turn internal), so the scan goes on past an
 * overshoot, but at most max(32, run length so far) blocks past the last fit, which keeps
 * a pass O(blocks * 26). */
static int32_t balance_scan(balance_problem_t *pb, int r, int32_t from, int dir, double T,
                            const balance_pick_t *pick, double *time) {
  const balance_model_t *m = pb->model;
  uint64_t mark = ++pb->next_stamp;
  double cells = 0, bytes = 0, xbytes = 0;
  int32_t nonsolid = 0;
  int64_t msgs = 0;
  int32_t longest = from, chosen = from; /* the empty run fits */
  double longest_time = 0, chosen_time = 0;
  bool chosen_ok = pick && from >= pick->least;
  double chosen_dist = chosen_ok ? fabs(pb->prefix[from] - pick->target) : 0;
  for (int32_t p = dir > 0 ? from : from - 1; p >= 0 && p < pb->n; p += dir) {
    double w = pb->work[p];
    if (w > 0) {
      cells += w;
      nonsolid++;
      xbytes += balance_xbytes(pb, p);
    }
    if (balance_run_time(m, r, cells, nonsolid, xbytes, 0, 0) > T) break;
    pb->stamp[p] = mark;
    if (pb->adj_start)
      for (int64_t k = pb->adj_start[p]; k < pb->adj_start[p + 1]; ++k) {
        bool inside = pb->stamp[pb->adj_pos[k]] == mark;
        bytes += inside ? -pb->adj_bytes[k] : pb->adj_bytes[k];
        msgs += inside ? -pb->adj_msgs[k] : pb->adj_msgs[k];
      }
    double t = balance_run_time(m, r, cells, nonsolid, xbytes, bytes, msgs);
    int32_t end = dir > 0 ? p + 1 : p;
    if (t <= T) {
      longest = end;
      longest_time = t;
      if (pick && end >= pick->least) {
        double dist = fabs(pb->prefix[end] - pick->target);
        if (!chosen_ok || dist < chosen_dist) {
          chosen = end, chosen_time = t, chosen_dist = dist, chosen_ok = true;
        }
      }
    } else {
      int32_t past = dir * (end - longest), taken = dir * (longest - from);
      if (past > (taken > 32 ? taken : 32)) break;
    }
  }
  if (pick && chosen_ok) {
    *time = chosen_time;
    return chosen;
  }
  *time = longest_time;
  return longest;
}

/* Forward pass at step time T: each rank in turn takes the longest run that fits (or, with
 * spread, the run nearest its share of the remaining work by throughput among those that
 * leave the later ranks no more than the last backward pass gave them). Fills pb->ends;
 * returns whether all blocks found a rank; *max_time is the largest time of the runs. */
static bool balance_pass(balance_problem_t *pb, double T, bool spread, double *max_time) {
  int32_t start = 0;
  double worst = 0, t;
  for (int r = 0; r < pb->nranks; ++r) {
    balance_pick_t pick = {.least = pb->starts[r + 1], .target = -1};
    double rest = pb->prefix[pb->n] - pb->prefix[start];
    pick.target = pb->prefix[start] + rest * (1 / pb->model->cell_seconds[r]) / pb->speed[r];
    start = pb->ends[r] = balance_scan(pb, r, start, +1, T, spread ? &pick : NULL, &t);
    if (t > worst) worst = t;
  }
  *max_time = worst;
  return start == pb->n;
}

/* Backward pass at T: from the last rank down, each takes the longest run that fits and
 * ends where the next one starts. Fills pb->starts (starts[nranks] = n); returns whether
 * all blocks found a rank. */
static bool balance_pass_backward(balance_problem_t *pb, double T) {
  double t;
  pb->starts[pb->nranks] = pb->n;
  for (int r = pb->nranks - 1; r >= 0; --r)
    pb->starts[r] = balance_scan(pb, r, pb->starts[r + 1], -1, T, NULL, &t);
  return pb->starts[0] == 0;
}

tsr_status balance_weighted(const patch_t *patch, int nranks, const void *ctx,
                            int *rank_of_block, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const balance_model_t *model = ctx;
  balance_problem_t pb = {0};
  int32_t *best = NULL;
  TSR_CHECK(nranks >= 1, TSR_ERR_INVALID, "cannot assign blocks to %d ranks", nranks);
  TSR_CHECK(model, TSR_ERR_INVALID,
            "balance_weighted needs its cost model (a balance_model_t) as ctx; got NULL");
  TSR_TRY(balance_model_check(patch, model, err));
  TSR_CHECK(model->nranks == nranks, TSR_ERR_INVALID,
            "balance model: nranks = %d, but the patch is split over %d ranks", model->nranks,
            nranks);
  TSR_TRY(balance_problem_init(&pb, patch, model, err));
  best = malloc((size_t)nranks * sizeof *best);
  TSR_CHECK(best, TSR_ERR_NOMEM, "out of memory balancing over %d ranks", nranks);

  /* fallback, always feasible: every block on the rank that computes them fastest (one
   * process owns everything, so nothing crosses) */
  int32_t nonsolid = 0;
  double xbytes = 0;
  for (int32_t p = 0; p < pb.n; ++p) {
    nonsolid += pb.work[p] > 0;
    xbytes += balance_xbytes(&pb, p);
  }
  double cells = pb.prefix[pb.n];
  int fastest = 0;
  double hi = balance_run_time(model, 0, cells, nonsolid, xbytes, 0, 0);
  for (int r = 1; r < nranks; ++r) {
    double t = balance_run_time(model, r, cells, nonsolid, xbytes, 0, 0);
    if (t < hi) hi = t, fastest = r;
  }
  for (int r = 0; r < nranks; ++r) best[r] = r < fastest ? 0 : pb.n;
  double best_time = hi;

  /* bisection on T between a lower bound and the best time found so far; feasibility is
   * not strictly monotone in T once comm counts, so every feasible pass is a candidate */
  double lo = balance_best_compute(patch, model), t;
  if (lo < hi && balance_pass(&pb, lo * (1 + 1e-12), false, &t)) {
    /* the granularity bound is reached */
    memcpy(best, pb.ends, (size_t)nranks * sizeof *best);
    best_time = t;
  } else {
    for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; ++it) {
      double mid = lo + 0.5 * (hi - lo);
      if (balance_pass(&pb, mid, false, &t)) {
        if (t < best_time) {
          memcpy(best, pb.ends, (size_t)nranks * sizeof *best);
          best_time = t;
        }
        hi = t < mid ? t : mid;
      } else {
        lo = mid;
      }
    }
  }

  /* the largest time is set; spread the slack: each rank takes the run nearest its share
   * by throughput that still leaves the later ranks a feasible rest (from a backward pass),
   * instead of the first ranks filling up to T and the last ones getting what is left */
  double T = best_time * (1 + 1e-12);
  if (balance_pass_backward(&pb, T) && balance_pass(&pb, T, true, &t) && t <= T)
    memcpy(best, pb.ends, (size_t)nranks * sizeof *best);

  for (int r = 0, p = 0; r < nranks; ++r)
    for (; p < best[r]; ++p) rank_of_block[pb.order[p]] = r;
cleanup:
  free(best);
  balance_problem_free(&pb);
  return st;
}

/* Min-heap of the next block boundary k*t of each rank. */
typedef struct balance_slot {
  double next; /* (k + 1) * t */
  double t;
  int64_t k;
} balance_slot_t;

static void balance_sift_down(balance_slot_t *h, int n, int i) {
  for (;;) {
    int l = 2 * i + 1, r = l + 1, s = i;
    if (l < n && h[l].next < h[s].next) s = l;
    if (r < n && h[r].next < h[s].next) s = r;
    if (s == i) return;
    balance_slot_t tmp = h[i];
    h[i] = h[s];
    h[s] = tmp;
    i = s;
  }
}

double balance_best_compute(const patch_t *patch, const balance_model_t *model) {
  tsr_error_t err;
  if (balance_model_check(patch, model, &err) != TSR_OK) return NAN;
  int32_t n = patch_block_count(patch);
  int R = model->nranks;
  double total = 0, wmin = 0;
  int64_t m = 0;
  for (int32_t id = 0; id < n; ++id) {
    double w = balance_block_work(patch, model, id);
    if (w <= 0) continue;
    total += w;
    if (m == 0 || w < wmin) wmin = w;
    ++m;
  }
  if (m == 0) return 0;

  /* (a) total work over total throughput */
  double speed = 0;
  for (int r = 0; r < R; ++r) speed += 1 / model->cell_seconds[r];
  double bound_a = total / speed;

  /* (b) the m-th smallest of {k * t_r : k >= 1}: the time at which the ranks together hold
   * m blocks of the smallest work. Below T0 = m / sum(1/t_r) fewer than m fit, and at T0
   * at least m - R do, so start every rank one block below T0 and pop the rest (<= 2R). */
  balance_slot_t *heap = malloc((size_t)R * sizeof *heap);
  if (!heap) return NAN;
  double rate = 0;
  for (int r = 0; r < R; ++r) {
    heap[r].t = wmin * model->cell_seconds[r];
    if (model->block_seconds) heap[r].t += model->block_seconds[r];
    rate += 1 / heap[r].t;
  }
  double t0 = (double)m / rate;
  int64_t held = 0;
  for (int r = 0; r < R; ++r) {
    double k = t0 / heap[r].t - 1;
    heap[r].k = k > 0 ? (int64_t)k : 0;
    held += heap[r].k;
  }
  if (held >= m) /* rounding; start from nothing */
    for (int r = 0; r < R; ++r) heap[r].k = 0, held = 0;
  for (int r = 0; r < R; ++r) heap[r].next = (double)(heap[r].k + 1) * heap[r].t;
  for (int i = R / 2 - 1; i >= 0; --i) balance_sift_down(heap, R, i);
  double bound_b = 0;
  for (; held < m; ++held) {
    bound_b = heap[0].next;
    heap[0].k++;
    heap[0].next = (double)(heap[0].k + 1) * heap[0].t;
    balance_sift_down(heap, R, 0);
  }
  free(heap);
  return bound_a > bound_b ? bound_a : bound_b;
}
