#include "plan.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "direction.h"
#include "field.h"
#include "rounds.h"
#include "tsr_size.h"

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

/* The bytes per cell of one VTK output step's arrays (*file) and the most of one array
 * (*largest), of the quantities so->quantities names (every quantity where it names none). */
static void plan_vtk_bytes(const simulation_options_t *so, const module_decl_t *decls, int n,
                           size_t *file, size_t *largest) {
  const size_t real = so->vtk_precision == SIMULATION_VTK_FLOAT32 ? 4 : 8;
  *file = 0;
  *largest = 0;
  for (int m = 0; m < n; ++m)
    for (int k = 0; k < decls[m].nquantities; ++k) {
      const module_quantity_t *q = &decls[m].quantities[k];
      bool shown = so->quantities.n == 0;
      for (int i = 0; i < so->quantities.n && !shown; ++i)
        shown = strcmp(so->quantities.names[i], q->name) == 0;
      if (!shown) continue;
      const size_t v = (size_t)q->components * (q->small_integer ? 1 : real);
      *file += v;
      if (v > *largest) *largest = v;
    }
}

tsr_status plan_local_bytes(const patch_t *patch, const module_t *modules,
                            const module_decl_t *decls, int n, registry_t *reg, uint64_t fs,
                            size_t *host, size_t *device, size_t *largest, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  field_bytes_t kit = {0, 0, 0, 0};
  /* the fields, as the kit allocates them; then what else each module allocates */
  for (int m = 0; m < n; ++m)
    for (int f = 0; f < decls[m].nfields; ++f) {
      bool kitted = false;
      if (decls[m].fields[f].components > 0)
        TSR_TRY(field_local_bytes(reg, decls[m].fields[f].name, fs, patch, &kit, &kitted, err));
    }
  TSR_CHECK(tsr_add_size(kit.host, kit.staging, host), TSR_ERR_INVALID,
            "the fields of this process's blocks: their bytes do not fit in a size_t");
  *device = kit.device;
  *largest = kit.largest;
  for (int m = 0; m < n; ++m)
    if (modules[m].def->local_bytes)
      TSR_TRY(modules[m].def->local_bytes(modules[m].state, reg, patch, host, device, largest,
                                          err));
cleanup:
  return st;
}

tsr_status plan_memory_rank(const patch_t *patch, const module_t *modules,
                            const module_decl_t *decls, int n, registry_t *reg, uint64_t fs,
                            const simulation_options_t *so, plan_memory_t *mem,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t host = 0, device = 0, largest = 0, cells = 0, big = 0;
  TSR_TRY(plan_local_bytes(patch, modules, decls, n, reg, fs, &host, &device, &largest, err));
  for (int32_t i = 0; i < patch_local_count(patch); ++i) {
    const block_info_t *b = patch_block(patch, patch_local_id(patch, i));
    const size_t c = (size_t)b->size[0] * (size_t)b->size[1] * (size_t)b->size[2];
    cells += c;
    if (c > big) big = c;
  }
  /* the VTK writer's buffers: one file (vtk_image.h: the process's values of an array in
     file order, its range of the file, one block's values and their doubles), or one
     block's arrays at a time */
  size_t file = 0, most = 0;
  double out = 0;
  if (so->vtk_every > 0) plan_vtk_bytes(so, decls, n, &file, &most);
  const double domain = (double)so->domain.cells[0] * (double)so->domain.cells[1] *
                        (double)so->domain.cells[2];
  if (so->vtk_every > 0 && so->vtk_files == SIMULATION_VTK_ONE)
    out = (double)cells * (double)most + domain * (double)file / patch_nranks(patch) +
          (double)big * (double)(most + 3 * 8);
  else if (so->vtk_every > 0)
    out = (double)big * (double)(file + 3 * 8);
  *mem = (plan_memory_t){.host = (double)host + out + so->hardware.balance.process_mb * 1e6,
                         .device = (double)device};
cleanup:
  return st;
}

tsr_status plan_memory(patch_t *patch, const module_t *modules, const module_decl_t *decls,
                       int n, registry_t *reg, uint64_t fs, const simulation_options_t *so,
                       plan_memory_t *mem, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const int nranks = patch_nranks(patch), me = patch_my_rank(patch);
  const int32_t nb = patch_block_count(patch);
  int32_t *ids = malloc(((size_t)nb + 1) * sizeof *ids);
  int32_t *first = calloc((size_t)nranks + 1, sizeof *first);
  TSR_CHECK(ids && first, TSR_ERR_NOMEM, "out of memory predicting the memory of %d processes",
            nranks);
  /* the blocks of each rank, in increasing BlockID */
  for (int32_t id = 0; id < nb; ++id) first[patch_block(patch, id)->rank + 1]++;
  for (int r = 0; r < nranks; ++r) first[r + 1] += first[r];
  for (int32_t id = 0; id < nb; ++id) ids[first[patch_block(patch, id)->rank]++] = id;
  for (int r = nranks; r > 0; --r) first[r] = first[r - 1];
  first[0] = 0;
  for (int r = 0; r < nranks; ++r) {
    TSR_TRY(patch_view_as(patch, r, ids + first[r], first[r + 1] - first[r], err));
    TSR_TRY(plan_memory_rank(patch, modules, decls, n, reg, fs, so, &mem[r], err));
  }
  TSR_TRY(patch_view_as(patch, me, ids + first[me], first[me + 1] - first[me], err));
cleanup:
  free(ids);
  free(first);
  return st;
}

/* Appends to out (cap bytes; *used so far, counted on past cap) as printf does. */
static void plan_text(char *out, size_t cap, size_t *used, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
static void plan_text(char *out, size_t cap, size_t *used, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  int k = vsnprintf(out + (*used < cap ? *used : cap), *used < cap ? cap - *used : 0, format, ap);
  va_end(ap);
  if (k > 0) *used += (size_t)k;
}

/* A time in seconds as "h:mm:ss" or "12.3 s". */
static void plan_duration(double s, char *out, size_t cap) {
  if (s < 600) {
    snprintf(out, cap, "%.3g s", s);
    return;
  }
  const long long t = llround(s);
  snprintf(out, cap, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
}

const char *plan_throughput_hint(const simulation_balance_t *bal) {
  return bal->machine[0] || bal->calibrate
             ? ""
             : "`tessera bench --machine FILE` measures this machine's, hardware.machine uses "
               "them";
}

size_t plan_cost_text(const plan_t *plan, const simulation_options_t *so,
                      const plan_memory_t *mem, const double *node_avail, char *out,
                      size_t cap) {
  size_t used = 0;
  char t[64], u[64];
  plan_duration(plan->max_seconds * (double)so->steps, t, sizeof t);
  plan_text(out, cap, &used, "predicted time: %lld steps x %.3f ms = %s", (long long)so->steps,
            1e3 * plan->max_seconds, t);
  if (so->vtk_every > 0) {
    plan_duration(plan->max_seconds * (double)so->vtk_every, u, sizeof u);
    plan_text(out, cap, &used, ", %s between VTK outputs (every %lld steps)", u, (long long)so->vtk_every);
  }
  const char *hint = plan_throughput_hint(&so->hardware.balance);
  plan_text(out, cap, &used, " (the model's figures; the output's own time not counted)%s%s\n",
            hint[0] ? "; no throughput measured for it: " : "", hint);
  if (!mem) return used;
  /* the largest process, and each node's sum against what it has */
  int big = 0, node_big = 0;
  double node_max = 0, dev_max = 0;
  for (int r = 0; r < plan->nranks; ++r) {
    if (mem[r].host > mem[big].host) big = r;
    if (mem[r].device > dev_max) dev_max = mem[r].device;
    if (plan->node_of_rank[r] != r) continue;
    double sum = 0;
    for (int q = r; q < plan->nranks; ++q)
      if (plan->node_of_rank[q] == r) sum += mem[q].host;
    if (sum > node_max) {
      node_max = sum;
      node_big = r;
    }
  }
  plan_text(out, cap, &used, "predicted memory: largest process %.2f GiB (rank %d), largest node %.2f GiB (%s)",
            mem[big].host / 1073741824.0, big, node_max / 1073741824.0,
            plan->procs[node_big].node);
  if (node_avail && node_avail[node_big] > 0)
    plan_text(out, cap, &used, " of %.2f GiB available there", node_avail[node_big] / 1073741824.0);
  if (dev_max > 0) plan_text(out, cap, &used, "; largest device %.2f GiB", dev_max / 1073741824.0);
  plan_text(out, cap, &used, "\n");
  return used;
}

size_t plan_warnings(const plan_t *plan, const simulation_options_t *so, const plan_memory_t *mem,
                     const double *node_avail, char *out, size_t cap) {
  size_t used = 0;
  const int64_t nb = (int64_t)so->domain.blocks[0] * so->domain.blocks[1] * so->domain.blocks[2];
  int idle = 0;
  double work = 0, rate = 0;
  for (int r = 0; r < plan->nranks; ++r) {
    idle += plan->cost[r].blocks == 0;
    work += plan->cost[r].cells;
    rate += 1.0 / plan->cell_seconds[r];
  }
  if (idle > 0)
    plan_text(out, cap, &used, "%d of %d processes get no block (%d blocks, domain.blocks [%d, %d, %d]): they "
              "wait through the run; more, smaller blocks give every process work\n",
              idle, plan->nranks, (int)nb, so->domain.blocks[0], so->domain.blocks[1],
              so->domain.blocks[2]);
  /* an even split of the cells over the processes' throughputs, against the best split of
     whole blocks */
  const double even = rate > 0 ? work / rate : 0;
  if (even > 0 && plan->best_compute > 1.25 * even)
    plan_text(out, cap, &used, "the block grid is coarse for %d processes: the best assignment of its %d "
              "blocks computes %.2f times as long per step as an even split of the cells "
              "would (%.3f ms against %.3f ms); more, smaller blocks balance better\n",
              plan->nranks, (int)nb, plan->best_compute / even, 1e3 * plan->best_compute,
              1e3 * even);
  for (int r = 0; mem && node_avail && r < plan->nranks; ++r) {
    if (plan->node_of_rank[r] != r || node_avail[r] <= 0) continue;
    double sum = 0;
    for (int q = r; q < plan->nranks; ++q)
      if (plan->node_of_rank[q] == r) sum += mem[q].host;
    if (sum > node_avail[r])
      plan_text(out, cap, &used, "node %s needs %.2f GiB and has %.2f GiB available\n", plan->procs[r].node,
                sum / 1073741824.0, node_avail[r] / 1073741824.0);
  }
  return used;
}
