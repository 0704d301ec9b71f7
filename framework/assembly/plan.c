#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "direction.h"
#include "rounds.h"

void plan_free(plan_t **plan) {
  if (!plan || !*plan) return;
  plan_t *p = *plan;
  patch_free(&p->patch);
  free(p->procs);
  free(p->mlups);
  free(p->cell_seconds);
  free(p->byte_seconds);
  free(p->node_byte_seconds);
  free(p->node_of_rank);
  free(p->block_cells);
  free(p->link_bytes);
  free(p->exchange_bytes);
  free(p->exchange_seconds);
  free(p->cost);
  free(p);
  *plan = NULL;
}

patch_t *plan_take_patch(plan_t *plan) {
  patch_t *p = plan->patch;
  plan->patch = NULL;
  return p;
}

double plan_imbalance(const plan_t *plan) {
  return plan->mean_seconds > 0 ? plan->max_seconds / plan->mean_seconds - 1.0 : 0.0;
}

/* Whether some sweep reads the ghost layers of field (it is exchanged; a field read only
 * in a block's own cells needs no extraction, insertion or copy items). */
static bool plan_exchanged(const module_decl_t *decls, int n, const char *field) {
  for (int m = 0; m < n; ++m)
    for (int k = 0; k < decls[m].nsweeps; ++k)
      for (int r = 0; r < decls[m].sweeps[k].nreads_ghosts; ++r)
        if (strcmp(decls[m].sweeps[k].reads_ghosts[r], field) == 0) return true;
  return false;
}

/* Work and link bytes of every block, from a classified patch: the cells its modules
 * update, and in direction d the bytes of every exchanged field's extraction item, unless the
 * neighbour takes nothing of that field there (its insertion size is 0: a block where
 * the field's module does nothing). Sizes do not depend on the hardware (one message
 * layout). */
static tsr_status plan_weights(plan_t *p, const patch_t *patch, const module_t *modules,
                               const module_decl_t *decls, int n, registry_t *reg, uint64_t fs,
                               tsr_error_t *err) {
  tsr_status st = TSR_OK;
  uint32_t cpu;
  TSR_TRY(selector_intern(registry_selectors(reg), SELECTOR_HS, "cpu", &cpu, err));
  for (int32_t id = 0; id < patch_block_count(patch); ++id) {
    const block_info_t *b = patch_block(patch, id);
    double cells = 0;
    for (int m = 0; m < n; ++m) {
      double c = modules[m].def->block_cells
                     ? modules[m].def->block_cells(modules[m].state, reg, b)
                     : (double)b->size[0] * (double)b->size[1] * (double)b->size[2];
      if (c > cells) cells = c;
    }
    p->block_cells[id] = cells;
    for (int d = 0; d < DIRECTION_COUNT; ++d)
      p->link_bytes[(size_t)id * DIRECTION_COUNT + (size_t)d] = 0;
    p->exchange_bytes[id] = 0;
    for (int m = 0; m < n; ++m)
      for (int f = 0; f < decls[m].nfields; ++f) {
        const char *field = decls[m].fields[f].name;
        if (!plan_exchanged(decls, n, field)) continue;
        const registry_item_t *ext;
        registry_request_t req = {.fs = fs, .hs = cpu, .bs = b->bs};
        TSR_TRY(registry_lookup(reg, REGISTRY_KIND_EXTRACTION, field, &req, &ext, err));
        for (int d = 0; d < DIRECTION_COUNT; ++d) {
          int32_t nid = patch_neighbor(patch, id, d);
          if (nid < 0) continue;
          const block_info_t *nb = patch_block(patch, nid);
          const registry_item_t *ins;
          registry_request_t nreq = {.fs = fs, .hs = cpu, .bs = nb->bs};
          TSR_TRY(registry_lookup(reg, REGISTRY_KIND_INSERTION, field, &nreq, &ins, err));
          if (ins->size(nb, direction_inverse(d), ins->ctx) == 0) continue;
          const double bytes = (double)ext->size(b, d, ext->ctx);
          p->exchange_bytes[id] += bytes; /* copied to itself too */
          if (nid != id) p->link_bytes[(size_t)id * DIRECTION_COUNT + (size_t)d] += bytes;
        }
      }
  }
cleanup:
  return st;
}

/* The plan's arrays for nranks processes and nb blocks. */
static tsr_status plan_alloc(plan_t *p, int nranks, int64_t nb, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  p->nranks = nranks;
  p->procs = malloc((size_t)nranks * sizeof *p->procs);
  p->mlups = malloc((size_t)nranks * sizeof *p->mlups);
  p->cell_seconds = malloc((size_t)nranks * sizeof *p->cell_seconds);
  p->byte_seconds = malloc((size_t)nranks * sizeof *p->byte_seconds);
  p->node_byte_seconds = malloc((size_t)nranks * sizeof *p->node_byte_seconds);
  p->node_of_rank = malloc((size_t)nranks * sizeof *p->node_of_rank);
  p->cost = calloc((size_t)nranks, sizeof *p->cost);
  p->block_cells = malloc((size_t)nb * sizeof *p->block_cells);
  p->link_bytes = malloc((size_t)nb * DIRECTION_COUNT * sizeof *p->link_bytes);
  p->exchange_bytes = malloc((size_t)nb * sizeof *p->exchange_bytes);
  p->exchange_seconds = malloc((size_t)nranks * sizeof *p->exchange_seconds);
  TSR_CHECK(p->procs && p->mlups && p->cell_seconds && p->byte_seconds &&
                p->node_byte_seconds && p->node_of_rank && p->cost && p->block_cells &&
                p->link_bytes && p->exchange_bytes && p->exchange_seconds,
            TSR_ERR_NOMEM, "out of memory planning %d processes and %lld blocks", nranks,
            (long long)nb);
cleanup:
  return st;
}

/* The weights of the processes (throughput, exchange and network rates, nodes) and
 * their hs ids into hs_of_rank. */
static tsr_status plan_processes(plan_t *p, const simulation_options_t *so,
                                 const node_process_t *procs, const double *mlups,
                                 const double *exchange_gbs, registry_t *reg,
                                 uint32_t *hs_of_rank, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const simulation_balance_t *bal = &so->hardware.balance;
  for (int r = 0; r < p->nranks; ++r) {
    const simulation_process_t *q = &procs[r].proc;
    /* a CPU process of a given thread count: its share of throughput.cpu's threads */
    const double threads = q->hs == SIMULATION_HS_CPU && q->threads > 0
                               ? (double)q->threads / (double)bal->cpu_threads
                               : 1.0;
    double m = mlups ? mlups[r] : q->mlups > 0 ? q->mlups : bal->throughput[q->hs] * threads;
    TSR_CHECK(m > 0 && isfinite(m), TSR_ERR_INVALID,
              "rank %d (node \"%s\"): throughput %g MLUPS; it must be > 0", r, procs[r].node, m);
    p->mlups[r] = m;
    p->cell_seconds[r] = 1.0 / (m * 1e6);
    const double x = exchange_gbs ? exchange_gbs[r] : bal->exchange_gbs;
    TSR_CHECK(x > 0 && isfinite(x), TSR_ERR_INVALID,
              "rank %d (node \"%s\"): exchange rate %g GB/s; it must be > 0", r, procs[r].node, x);
    p->exchange_seconds[r] = 1.0 / (x * 1e9);
    const double device = q->hs == SIMULATION_HS_GPU ? 1.0 / (bal->device_gbs * 1e9) : 0.0;
    p->byte_seconds[r] = 1.0 / (bal->network_gbs * 1e9) + device;
    p->node_byte_seconds[r] = 1.0 / (simulation_intranode_gbs(bal) * 1e9) + device;
    p->node_of_rank[r] = r;
    for (int k = 0; k < r && p->node_of_rank[r] == r; ++k)
      if (strcmp(procs[k].node, procs[r].node) == 0) p->node_of_rank[r] = k;
    TSR_TRY(selector_intern(registry_selectors(reg), SELECTOR_HS, simulation_hs_name(q->hs),
                            &hs_of_rank[r], err));
  }
cleanup:
  return st;
}

/* The assignment (layout) of the blocks, their classes from probe, and its predicted
 * cost per process. */
static tsr_status plan_assign(plan_t *p, const simulation_options_t *so, patch_layout_t *layout,
                              const patch_t *probe, registry_t *reg, int64_t nb,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  uint32_t *hs_of_block = NULL;
  int *rank_of_block = NULL;
  if (so->hardware.block_hs) {
    hs_of_block = malloc((size_t)nb * sizeof *hs_of_block);
    TSR_CHECK(hs_of_block, TSR_ERR_NOMEM, "out of memory planning %lld blocks", (long long)nb);
    for (int64_t id = 0; id < nb; ++id)
      TSR_TRY(selector_intern(registry_selectors(reg), SELECTOR_HS,
                              simulation_hs_name(so->hardware.block_hs[id]), &hs_of_block[id], err));
    layout->hs_of_block = hs_of_block;
  }
  TSR_TRY(patch_create(&so->domain, layout, &p->patch, err));
  for (int32_t id = 0; id < (int32_t)nb; ++id) /* the classes found on the probe */
    TSR_TRY(patch_set_bs(p->patch, id, patch_block(probe, id)->bs, err));
  rank_of_block = malloc((size_t)nb * sizeof *rank_of_block);
  TSR_CHECK(rank_of_block, TSR_ERR_NOMEM, "out of memory planning %lld blocks", (long long)nb);
  for (int32_t id = 0; id < (int32_t)nb; ++id) rank_of_block[id] = patch_block(p->patch, id)->rank;
  TSR_TRY(balance_predict(p->patch, &p->model, rank_of_block, p->cost, err));
  for (int r = 0; r < p->nranks; ++r) {
    const double t = balance_cost_seconds(&p->cost[r]);
    if (t > p->max_seconds) p->max_seconds = t;
    p->mean_seconds += t / p->nranks;
  }
  p->best_compute = balance_best_compute(p->patch, &p->model);
cleanup:
  free(hs_of_block);
  free(rank_of_block);
  return st;
}

tsr_status plan_create(const simulation_options_t *so, module_t *modules,
                       const module_decl_t *decls, int n, registry_t *reg, uint64_t fs,
                       const node_process_t *procs, const double *mlups,
                       const double *exchange_gbs, int nranks, int my_rank, plan_t **out,
                       tsr_error_t *err) {
  tsr_status st = TSR_OK;
  patch_t *probe = NULL;
  uint32_t *hs_of_rank = NULL;
  *out = NULL;
  plan_t *p = calloc(1, sizeof *p);
  TSR_CHECK(p, TSR_ERR_NOMEM, "out of memory planning the run");
  TSR_CHECK(nranks >= 1 && my_rank >= 0 && my_rank < nranks, TSR_ERR_INVALID,
            "cannot plan rank %d of %d", my_rank, nranks);
  int64_t nb = (int64_t)so->domain.blocks[0] * so->domain.blocks[1] * so->domain.blocks[2];
  TSR_TRY(plan_alloc(p, nranks, nb, err));
  hs_of_rank = malloc((size_t)nranks * sizeof *hs_of_rank);
  TSR_CHECK(hs_of_rank, TSR_ERR_NOMEM, "out of memory planning %d processes", nranks);
  memcpy(p->procs, procs, (size_t)nranks * sizeof *procs);
  TSR_TRY(plan_processes(p, so, procs, mlups, exchange_gbs, reg, hs_of_rank, err));
  /* a link's block message travels once per exchange round that carries a field */
  int rounds = 0;
  TSR_TRY(rounds_count(decls, n, so->hardware.exchange == SIMULATION_EXCHANGE_MERGED,
                       &rounds, err));
  /* the weights of the blocks, from the modules' classes */
  patch_layout_t even = {.nranks = nranks, .my_rank = my_rank};
  TSR_TRY(patch_create(&so->domain, &even, &probe, err));
  for (int m = 0; m < n; ++m)
    if (modules[m].def->classify)
      TSR_TRY(modules[m].def->classify(modules[m].state, probe, reg, err));
  TSR_TRY(plan_weights(p, probe, modules, decls, n, reg, fs, err));
  const simulation_balance_t *bal = &so->hardware.balance;
  p->model = (balance_model_t){.nranks = nranks, .cell_seconds = p->cell_seconds,
                               .byte_seconds = p->byte_seconds,
                               .message_seconds = bal->latency_us * 1e-6 * rounds,
                               .node_of_rank = p->node_of_rank,
                               .node_byte_seconds = p->node_byte_seconds,
                               .node_message_seconds =
                                   simulation_intranode_latency_us(bal) * 1e-6 * rounds,
                               .block_cells = p->block_cells, .link_bytes = p->link_bytes,
                               .exchange_seconds = p->exchange_seconds,
                               .block_exchange_bytes = p->exchange_bytes};
  patch_layout_t layout = {.nranks = nranks, .my_rank = my_rank, .hs_of_rank = hs_of_rank,
                           .assign = balance_weighted, .assign_ctx = &p->model};
  TSR_TRY(plan_assign(p, so, &layout, probe, reg, nb, err));
  *out = p;
  p = NULL;
cleanup:
  patch_free(&probe);
  free(hs_of_rank);
  plan_free(&p);
  return st;
}
