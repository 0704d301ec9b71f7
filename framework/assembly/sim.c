#include "sim.h"
#include "rounds.h"

#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "field.h"
#include "tsr_stats.h"
#include "node.h"
#include "gpu_buffer.h"
#include "opencl.h"
#include "tsr_size.h"
#include "verdict.h"

struct sim {
  MPI_Comm comm;
  module_t modules[MODULE_MAX];
  module_decl_t decls[MODULE_MAX];
  int nmodules;
  plan_t *plan;         /* the assignment and its prediction (the patch is taken out) */
  opencl_context_t *cl; /* hs gpu: this process's device */
  gpu_field_programs_t *fields; /* its field programs (field.h) */
  patch_t *patch;
  registry_t *reg;
  timeloop_t *loop;
  timeloop_t *output_loop; /* the modules' output sweeps; NULL: none */
  uint64_t fs;
  char fs_text[MODULE_FS_MAX];
  int field_id[MODULE_MAX][MODULE_MAX_FIELDS];
  int64_t cells;
  bool prepared;          /* sim_prepare ran since the last step or kernel */
  bool output_prepared;   /* and the output sweeps */
  units_t units;          /* of the configuration (its outputs' units) */
  units_dim_t total_dim[MODULE_MAX_VALUES]; /* of the totals of the last sim_totals */
};

void sim_free(sim_t **sim) {
  if (!sim || !*sim) return;
  sim_t *s = *sim;
  timeloop_free(&s->loop);
  timeloop_free(&s->output_loop);
  patch_free(&s->patch); /* GPU blocks release their buffers before the context goes */
  registry_free(&s->reg);
  plan_free(&s->plan);
  module_free_all(s->modules, s->nmodules);
  gpu_field_programs_free(&s->fields);
  opencl_context_free(&s->cl);
  free(s);
  *sim = NULL;
}

/* Checks that the quantities the output names exist. */
static tsr_status sim_check_outputs(const simulation_options_t *so, const module_decl_t *decls,
                                    int n, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char list[512], where[96];
  int m, q;
  module_quantity_list(decls, n, list, sizeof list);
  for (int p = -1; p < so->nprobes; ++p) {
    const simulation_quantities_t *sel = p < 0 ? &so->quantities : &so->probes[p].quantities;
    if (p < 0) snprintf(where, sizeof where, "output.quantities");
    else snprintf(where, sizeof where, "output.probes[%d].quantities", p);
    for (int i = 0; i < sel->n; ++i) {
      TSR_CHECK(module_quantity_index(decls, n, sel->names[i], &m, &q), TSR_ERR_INVALID,
                "%s: %s[%d] = \"%s\": no such quantity; the modules of this run have %s",
                so->source, where, i, sel->names[i], list);
      for (int j = 0; j < i; ++j)
        TSR_CHECK(strcmp(sel->names[j], sel->names[i]) != 0, TSR_ERR_INVALID,
                  "%s: %s[%d] = \"%s\": given twice", so->source, where, i, sel->names[i]);
    }
  }
  for (int i = 0; i < so->nslices; ++i)
    TSR_CHECK(!so->slices[i].quantity[0] ||
                  module_quantity_index(decls, n, so->slices[i].quantity, &m, &q),
              TSR_ERR_INVALID,
              "%s: output.slices[%d].quantity = \"%s\": no such quantity; the modules of this "
              "run have %s", so->source, i, so->slices[i].quantity, list);
cleanup:
  return st;
}

/* output.surface_every asks for surfaces: some module must publish one. */
static tsr_status sim_check_surfaces(const simulation_options_t *so, const module_t *modules,
                                     int n, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int count = 0;
  for (int m = 0; m < n; ++m) {
    module_surface_t list[MODULE_MAX_SURFACES];
    if (modules[m].def->surfaces)
      count += modules[m].def->surfaces(modules[m].state, list, MODULE_MAX_SURFACES);
  }
  TSR_CHECK(so->surface_every == 0 || count > 0, TSR_ERR_INVALID,
            "%s: output.surface_every = %lld: no module of this run publishes a surface",
            so->source,
            (long long)so->surface_every);
cleanup:
  return st;
}

/* The end of a step on GPU blocks: one wait for the device's in-order queue, so that the
 * step's time is the device's work and the host sees its results. */
#define SIM_DEVICE_WAIT "device.wait"
static tsr_status sim_device_wait(const registry_work_t *w, void *ctx, tsr_error_t *err) {
  (void)w;
  return ctx ? gpu_queue_finish(ctx, err) : TSR_OK;
}

/* The framework's items: the wait for the devices (sim_device_wait). */
static tsr_status sim_register(sim_t *s, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const registry_item_t wait[] = {
      {.kind = REGISTRY_KIND_KERNEL, .name = SIM_DEVICE_WAIT, .fs = "*", .hs = "gpu",
       .bs = "*", .work = sim_device_wait, .batch = 1, .ctx = s->cl},
      {.kind = REGISTRY_KIND_KERNEL, .name = SIM_DEVICE_WAIT, .fs = "*", .hs = "cpu",
       .bs = "*", .work = registry_nothing}};
  for (int k = 0; k < 2; ++k) TSR_TRY(registry_add(s->reg, &wait[k], err));
cleanup:
  return st;
}

/* The time loop's sweeps: every module's in order, each with its exchange round
 * (rounds_plan), then, where some block runs on a GPU, the wait for the devices. */
static tsr_status sim_add_sweeps(sim_t *s, timeloop_t *loop, const module_decl_t *decls,
                                 bool merged, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  rounds_t *r = malloc(sizeof *r);
  TSR_CHECK(r, TSR_ERR_NOMEM, "out of memory planning the exchange rounds");
  TSR_TRY(rounds_plan(decls, s->nmodules, merged, r, err));
  for (int k = 0; k < r->n; ++k) {
    comm_field_t fields[COMM_MAX_FIELDS];
    for (int t = 0; t < r->nf[k]; ++t) {
      const int m = r->field[k][t][0], f = r->field[k][t][1];
      fields[t] = (comm_field_t){.name = decls[m].fields[f].name, .data_id = s->field_id[m][f]};
      memcpy(fields[t].width, decls[m].fields[f].width, sizeof fields[t].width);
    }
    timeloop_sweep_t sw = {.name = r->all[k]->name, .exchange = r->nf[k] ? fields : NULL,
                           .nexchange = r->nf[k], .boundary = r->all[k]->boundary,
                           .kernel = r->all[k]->kernel};
    TSR_TRY(timeloop_add_sweep(loop, &sw, err));
  }
  const uint32_t gpu = registry_gpu_hs(s->reg);
  bool any = false; /* every process sees every block's hs: all add the same sweeps */
  for (int32_t id = 0; id < patch_block_count(s->patch); ++id)
    any = any || patch_block(s->patch, id)->hs == gpu;
  if (any)
    TSR_TRY(timeloop_add_sweep(loop, &(timeloop_sweep_t){.name = SIM_DEVICE_WAIT,
                                                         .kernel = SIM_DEVICE_WAIT}, err));
cleanup:
  free(r);
  return st;
}

/* The start, once before the first step: one exchange of every field a sweep of the step
 * reads across faces (the step's rounds are planned round and round, so a field whose
 * round comes after its first reader in the step, such as populations exchanged for a
 * sweep after the collision, is current at the first step too); then every module's
 * start sweeps, in module order, as a time loop of their own (each exchange round before
 * the sweep that reads across faces); then every module's start item. */
tsr_status sim_exchange_all(sim_t *s, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  comm_t *ghosts = NULL;
  s->prepared = s->output_prepared = false;
  comm_options_t co = {.fs = s->fs, .tag = 99};
  for (int m = 0; m < s->nmodules; ++m)
    for (int f = 0; f < s->decls[m].nfields; ++f) {
      const module_field_t *fd = &s->decls[m].fields[f];
      if (!module_reads_ghosts(s->decls, s->nmodules, fd->name)) continue;
      TSR_CHECK(co.nfields < COMM_MAX_FIELDS, TSR_ERR_INVALID,
                "more than %d fields are read across block faces", COMM_MAX_FIELDS);
      co.fields[co.nfields] = (comm_field_t){.name = fd->name, .data_id = s->field_id[m][f]};
      memcpy(co.fields[co.nfields].width, fd->width, sizeof fd->width);
      ++co.nfields;
    }
  if (co.nfields > 0) {
    TSR_TRY(comm_create(&co, s->patch, s->reg, s->comm, &ghosts, err));
    TSR_TRY(comm_exchange(ghosts, err));
  }
cleanup:
  comm_free(&ghosts);
  return st;
}

/* A time loop of the modules' start sweeps (output false) or output sweeps (true) in
 * place of their step's, with their exchange rounds; *out NULL where no module has any. */
static tsr_status sim_side_loop(sim_t *s, MPI_Comm comm, bool output, bool overlap,
                                timeloop_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  module_decl_t *decls = NULL;
  *out = NULL;
  int n = 0;
  for (int m = 0; m < s->nmodules; ++m)
    n += output ? s->decls[m].noutput_sweeps : s->decls[m].nstart_sweeps;
  if (n == 0) goto cleanup;
  decls = malloc((size_t)s->nmodules * sizeof *decls);
  TSR_CHECK(decls, TSR_ERR_NOMEM, "out of memory for the %s sweeps", output ? "output" : "start");
  for (int m = 0; m < s->nmodules; ++m) {
    decls[m] = s->decls[m];
    memcpy(decls[m].sweeps, output ? s->decls[m].output_sweeps : s->decls[m].start_sweeps,
           sizeof decls[m].sweeps);
    decls[m].nsweeps = output ? s->decls[m].noutput_sweeps : s->decls[m].nstart_sweeps;
  }
  st = timeloop_create(s->patch, s->reg, s->fs, comm, out, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  timeloop_set_overlap(*out, overlap);
  TSR_TRY(sim_add_sweeps(s, *out, decls, false, err));
cleanup:
  free(decls);
  return st;
}

/* The start sweeps (once, before step 1), overlapping their exchanges as the run's
 * sweeps do (overlap). */
static tsr_status sim_start(sim_t *s, MPI_Comm comm, bool overlap, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  timeloop_t *start = NULL;
  TSR_TRY(sim_exchange_all(s, err));
  TSR_TRY(sim_side_loop(s, comm, false, overlap, &start, err));
  if (start) TSR_TRY(timeloop_step(start, err));
  for (int m = 0; m < s->nmodules; ++m)
    if (s->decls[m].start) TSR_TRY(timeloop_run_kernel(s->loop, s->decls[m].start, err));
cleanup:
  timeloop_free(&start);
  return st;
}

/* Calibration: this process's MLUPS on blocks of the run's largest block size, as many as
 * its share of the run's blocks (at most SIM_CALIBRATE_CELLS cells together; one block
 * larger than that is scaled down alike along each axis that has more than one cell),
 * periodic, without walls, on its own hardware: the median step after two warm-up steps,
 * over at least 0.2 s (at least 3 steps, at most SIM_CALIBRATE_STEPS). Several blocks make
 * the calibration see what the run's blocks cost beyond their cells: their data in the
 * caches as in the run, the copies between blocks, the per-block launches. Every process
 * calibrates at the same time, so processes sharing a node share its memory bandwidth as
 * they will in the run. */
enum { SIM_CALIBRATE_CELLS = 1 << 21, SIM_CALIBRATE_STEPS = 256 };

void sim_calibration_blocks(const int64_t size[3], const int run_blocks[3], int64_t want,
                            int k[3]) {
  const double block = (double)size[0] * (double)size[1] * (double)size[2];
  for (int a = 0; a < 3; ++a) k[a] = 1;
  for (;;) {
    int best = -1;
    for (int a = 0; a < 3; ++a) {
      if (k[a] >= run_blocks[a]) continue;
      const int64_t n = (int64_t)k[0] * k[1] * k[2] / k[a] * (k[a] + 1);
      if (n > want || (double)n * block > SIM_CALIBRATE_CELLS) continue;
      if (best < 0 || (int64_t)k[a] * size[a] < (int64_t)k[best] * size[best]) best = a;
    }
    if (best < 0) return;
    ++k[best];
  }
}

static tsr_status sim_calibrate(const simulation_options_t *so, const sim_setup_t *setup,
                                const module_t *modules, int n, const simulation_process_t *me,
                                int nprocs, double *mlups, double *exchange_gbs,
                                tsr_error_t *err) {
  tsr_status st = TSR_OK;
  sim_t *cal = NULL;
  module_t cm[MODULE_MAX] = {{NULL, NULL}};
  int ncm = 0;
  simulation_options_t c = simulation_options_default();
  int64_t size[3];
  double cells = 1;
  int axes = 0;
  for (int a = 0; a < 3; ++a) {
    size[a] = (so->domain.cells[a] + so->domain.blocks[a] - 1) / so->domain.blocks[a];
    cells *= (double)size[a];
    axes += size[a] > 1;
  }
  if (cells > SIM_CALIBRATE_CELLS) {
    const double shrink = pow(SIM_CALIBRATE_CELLS / cells, 1.0 / (axes ? axes : 1));
    for (int a = 0; a < 3; ++a)
      if (size[a] > 1) {
        size[a] = (int64_t)((double)size[a] * shrink);
        if (size[a] < 4) size[a] = 4;
      }
  }
  const int64_t nb = (int64_t)so->domain.blocks[0] * so->domain.blocks[1] * so->domain.blocks[2];
  int k[3];
  sim_calibration_blocks(size, so->domain.blocks, (nb + nprocs - 1) / nprocs, k);
  for (int a = 0; a < 3; ++a) {
    c.domain.cells[a] = size[a] * k[a];
    c.domain.blocks[a] = k[a];
    c.domain.periodic[a] = true;
  }
  c.hardware.hs = me->hs;
  c.hardware.opencl = simulation_process_device(&so->hardware, me);
  for (; ncm < n; ++ncm) {
    cm[ncm].def = modules[ncm].def;
    TSR_CHECK(modules[ncm].def->calibration, TSR_ERR_INVALID,
              "module \"%s\" cannot calibrate; set hardware.balance.throughput instead",
              modules[ncm].def->name);
    TSR_TRY(modules[ncm].def->calibration(modules[ncm].state, &cm[ncm].state, err));
  }
  st = sim_create(MPI_COMM_SELF, &c, setup, cm, ncm, &cal, err);
  ncm = 0; /* taken over */
  TSR_TRY(st);
  TSR_TRY(sim_step(cal, 2, err));
  /* per step: the kernels' throughput from the time in the items, the exchange rate from
     the time in the exchanges (the copies between the blocks and onto themselves: every
     direction); the rest of a step (its verdict) is too little to split. The medians over
     the steps: a VM's or a node's hiccup in one step does not become the run's weights */
  timeloop_timing_t a = sim_timing(cal);
  double t0 = MPI_Wtime(), work[SIM_CALIBRATE_STEPS], ex[SIM_CALIBRATE_STEPS];
  int steps = 0;
  double bytes = 0;
  while (steps < 3 || (MPI_Wtime() - t0 < 0.2 && steps < SIM_CALIBRATE_STEPS)) {
    TSR_TRY(sim_step(cal, 1, err));
    const timeloop_timing_t b = sim_timing(cal);
    work[steps] = (b.kernel - a.kernel) + (b.boundary - a.boundary);
    ex[steps] = b.exchange - a.exchange;
    bytes = b.bytes - a.bytes;
    ++steps;
    a = b;
  }
  const double w = tsr_sort_median(work, steps), x = tsr_sort_median(ex, steps);
  *mlups = (double)cal->cells / (w > 0 ? w : 1e-9) / 1e6;
  *exchange_gbs = bytes > 0 && x > 0 ? bytes / x / 1e9 : so->hardware.balance.exchange_gbs;
cleanup:
  if (st != TSR_OK) tsr_error_prefix(err, "calibrating (hardware.balance.calibrate)");
  module_free_all(cm, ncm);
  sim_free(&cal);
  return st;
}

/* This process's OpenCL device: hardware.opencl, with its configuration's device. */
static tsr_status sim_open_device(sim_t *s, const simulation_options_t *so,
                                  const node_process_t *me, tsr_error_t *err) {
  opencl_select_t sel = simulation_process_device(&so->hardware, &me->proc);
  return opencl_context_create(&sel, &s->cl, err);
}

static void sim_prefix_device(const simulation_options_t *so, const node_process_t *me,
                              tsr_error_t *err) {
  if (me->configuration >= 0)
    tsr_error_prefix(err, "node \"%s\", configuration \"%s\", process %d (hs gpu)", me->node,
                     so->hardware.configurations[me->configuration].name, me->index);
  else
    tsr_error_prefix(err, "hardware.hs = gpu");
}

/* The bytes of this process's blocks, against its device's and its node's memory. */
static tsr_status sim_check_memory(sim_t *s, bool gpu, int rank, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t host = 0, device = 0, largest = 0;
  st = plan_local_bytes(s->patch, s->modules, s->decls, s->nmodules, s->reg, s->fs, &host,
                        &device, &largest, err);
  if (st == TSR_OK && gpu) { /* the device's limit first: it is the one a GPU run meets */
    char what[96];
    snprintf(what, sizeof what, "the %d block(s) of rank %d (fields, messages, moments)",
             (int)patch_local_count(s->patch), rank);
    st = opencl_check_memory(s->cl, device, largest, what, err);
  }
  TSR_TRY(verdict_reduce(s->comm, st, 0, err));
  TSR_TRY(node_check_memory(s->comm, host, "the fields of the blocks", err));
cleanup:
  return st;
}

/* Whether this process overlaps its exchanges (simulation_overlap_t): auto is on where a
 * neighbour block lies on a process of another node. */
static bool sim_overlap(const sim_t *s, simulation_overlap_t o) {
  if (o != SIMULATION_OVERLAP_AUTO) return o == SIMULATION_OVERLAP_ON;
  const patch_t *p = s->patch;
  const char *mine = s->plan->procs[patch_my_rank(p)].node;
  for (int32_t i = 0; i < patch_local_count(p); ++i) {
    const int32_t id = patch_local_id(p, i);
    for (int d = 0; d < DIRECTION_COUNT; ++d) {
      const int32_t n = patch_neighbor(p, id, d);
      if (n >= 0 && strcmp(s->plan->procs[patch_block(p, n)->rank].node, mine) != 0)
        return true;
    }
  }
  return false;
}

/* After the plan (collective): the local blocks' memory checked, every field allocated,
 * the time loop made, the start run and the step's sweeps added. */
static tsr_status sim_build(sim_t *s, const simulation_options_t *so, bool gpu, int rank,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  MPI_Comm comm = s->comm;
  s->patch = plan_take_patch(s->plan);
  TSR_TRY(sim_check_memory(s, gpu, rank, err));
  for (int m = 0; m < s->nmodules; ++m)
    for (int f = 0; f < s->decls[m].nfields; ++f)
      TSR_TRY(data_allocate(comm, s->reg, s->patch, s->decls[m].fields[f].name, s->fs,
                            &s->field_id[m][f], err));
  st = timeloop_create(s->patch, s->reg, s->fs, comm, &s->loop, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  const bool overlap = sim_overlap(s, so->hardware.overlap);
  timeloop_set_overlap(s->loop, overlap);
  TSR_TRY(sim_start(s, comm, overlap, err));
  TSR_TRY(sim_add_sweeps(s, s->loop, s->decls, so->hardware.exchange == SIMULATION_EXCHANGE_MERGED,
                         err));
  /* the output sweeps, run by sim_prepare_outputs (no overlap: they are rare) */
  TSR_TRY(sim_side_loop(s, comm, true, false, &s->output_loop, err));
  for (int32_t id = 0; id < patch_block_count(s->patch); ++id)
    s->cells += (int64_t)s->plan->block_cells[id];
cleanup:
  return st;
}

/* A refusal of the configuration names its file, as the reading of the file does
 * (module bindings, node matching, classification and the device choice come after it). */
static void sim_prefix_source(const simulation_options_t *so, tsr_status st, tsr_error_t *err) {
  const size_t n = strlen(so->source);
  if (st == TSR_ERR_INVALID && err && n > 0 &&
      !(strncmp(err->text, so->source, n) == 0 && err->text[n] == ':'))
    tsr_error_prefix(err, "%s", so->source);
}

tsr_status sim_create(MPI_Comm comm, const simulation_options_t *so, const sim_setup_t *setup,
                      module_t *modules, int n, sim_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank, size;
  double *mlups = NULL, *xgbs = NULL;
  node_process_t *procs = NULL;
  *out = NULL;
  sim_t *s = calloc(1, sizeof *s);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  procs = calloc((size_t)size, sizeof *procs);
  mlups = calloc((size_t)size, sizeof *mlups);
  xgbs = calloc((size_t)size, sizeof *xgbs);
  if (n < 1 || n > MODULE_MAX) {
    module_free_all(modules, n > MODULE_MAX ? MODULE_MAX : n);
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                       "a simulation has 1 to %d modules, not %d", MODULE_MAX, n);
  } else if (!s) {
    module_free_all(modules, n);
  } else { /* the states are the simulation's from here on */
    memcpy(s->modules, modules, (size_t)n * sizeof *modules);
    s->nmodules = n;
  }
  if (st == TSR_OK && (!s || !procs || !mlups || !xgbs))
    st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  s->comm = comm;
  s->units = so->units;
  /* which hardware this process runs on: its node's configuration */
  TSR_TRY(node_resolve(comm, &so->hardware, procs, err));
  const node_process_t *me = &procs[rank];
  bool gpu = me->proc.hs == SIMULATION_HS_GPU; /* this process has GPU blocks */
  int64_t nb = (int64_t)so->domain.blocks[0] * so->domain.blocks[1] * so->domain.blocks[2];
  for (int64_t id = 0; so->hardware.block_hs && id < nb; ++id)
    gpu = gpu || so->hardware.block_hs[id] == SIMULATION_HS_GPU;
  if (me->proc.threads > 0 && setup && setup->set_threads) setup->set_threads(me->proc.threads);
  if (gpu) st = sim_open_device(s, so, me, err);
  if (st == TSR_OK && s->cl) st = gpu_field_programs_create(s->cl, &s->fields, err);
  if (st == TSR_OK) st = registry_create(&s->reg, err);
  if (st == TSR_OK) st = sim_register(s, err);
  module_env_t env = {.so = so, .cl = s->cl, .fields = s->fields};
  if (st == TSR_OK) {
    st = module_register_all(s->modules, s->nmodules, s->reg, &env, s->decls, &s->fs, s->fs_text,
                      sizeof s->fs_text, err);
    if (st == TSR_ERR_OPENCL && gpu) /* the device's programs */
      sim_prefix_device(so, me, err);
  } else if (gpu) {
    sim_prefix_device(so, me, err);
  }
  if (st == TSR_OK) st = sim_check_outputs(so, s->decls, s->nmodules, err);
  if (st == TSR_OK) st = sim_check_surfaces(so, s->modules, s->nmodules, err);
  if (st == TSR_OK && so->hardware.balance.calibrate)
    st = sim_calibrate(so, setup, s->modules, s->nmodules, &me->proc, size, &mlups[rank],
                       &xgbs[rank], err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  if (so->hardware.balance.calibrate) {
    TSR_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, mlups, 1, MPI_DOUBLE, comm));
    TSR_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, xgbs, 1, MPI_DOUBLE, comm));
  }
  /* which blocks it runs: every process plans the same assignment */
  st = plan_create(so, s->modules, s->decls, s->nmodules, s->reg, s->fs, procs,
                   so->hardware.balance.calibrate ? mlups : NULL,
                   so->hardware.balance.calibrate ? xgbs : NULL, size, rank, &s->plan, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_TRY(sim_build(s, so, gpu, rank, err));
  *out = s;
  s = NULL;
cleanup:
  sim_prefix_source(so, st, err);
  free(procs);
  free(mlups);
  free(xgbs);
  sim_free(&s);
  return st;
}

tsr_status sim_step(sim_t *sim, int64_t steps, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  sim->prepared = sim->output_prepared = false;
  for (int64_t k = 0; k < steps; ++k) TSR_TRY(timeloop_step(sim->loop, err));
cleanup:
  return st;
}

tsr_status sim_prepare(sim_t *sim, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *done[MODULE_MAX * MODULE_MAX_QUANTITIES];
  int ndone = 0;
  if (sim->prepared) goto cleanup;
  for (int m = 0; m < sim->nmodules; ++m)
    for (int q = 0; q < sim->decls[m].nquantities; ++q) {
      const char *item = sim->decls[m].quantities[q].prepare;
      if (!item || module_name_in(done, ndone, item)) continue;
      done[ndone++] = item;
      TSR_TRY(timeloop_run_kernel(sim->loop, item, err));
    }
  sim->prepared = true;
cleanup:
  return st;
}

tsr_status sim_prepare_outputs(sim_t *sim, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  if (sim->output_prepared) goto cleanup;
  TSR_TRY(sim_prepare(sim, err));
  if (sim->output_loop) TSR_TRY(timeloop_step(sim->output_loop, err));
  sim->output_prepared = true;
cleanup:
  return st;
}

tsr_status sim_check(sim_t *sim, int64_t step, bool prepared, sim_divergence_t *out,
                     tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *out = (sim_divergence_t){.step = step, .block = -1};
  for (int m = 0; m < sim->nmodules; ++m)
    if (sim->modules[m].def->check)
      TSR_TRY(sim->modules[m].def->check(sim->modules[m].state, sim, step, prepared, out, err));
cleanup:
  return st;
}

tsr_status sim_observe(sim_t *sim, int64_t step, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (int m = 0; m < sim->nmodules; ++m)
    if (sim->modules[m].def->observe)
      TSR_TRY(sim->modules[m].def->observe(sim->modules[m].state, sim, step, err));
cleanup:
  return st;
}

tsr_status sim_block_sums(sim_t *sim, const double *part, int n, double *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const int32_t nb = patch_block_count(sim->patch);
  int count = 0;
  double *all = NULL;
  TSR_CHECK(tsr_size_to_int((size_t)n * (size_t)nb, &count), TSR_ERR_INVALID,
            "%d sums over %d blocks are more than one reduction carries", n, (int)nb);
  all = malloc((size_t)count * sizeof *all + 1);
  TSR_CHECK(all, TSR_ERR_NOMEM, "out of memory for sums over %d blocks", (int)nb);
  TSR_MPI(MPI_Allreduce(part, all, count, MPI_DOUBLE, MPI_SUM, sim->comm));
  for (int k = 0; k < n; ++k) {
    out[k] = 0;
    for (int32_t id = 0; id < nb; ++id) out[k] += all[(size_t)nb * (size_t)k + (size_t)id];
  }
cleanup:
  free(all);
  return st;
}

tsr_status sim_totals(sim_t *sim, const char **names, double *values, int cap, int *n,
                      tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *n = 0;
  for (int m = 0; m < sim->nmodules; ++m) {
    const module_def_t *def = sim->modules[m].def;
    int k = 0;
    if (def->totals)
      TSR_TRY(def->totals(sim->modules[m].state, sim, names + *n, values + *n, cap - *n, &k, err));
    for (int i = *n; i < *n + k && i < MODULE_MAX_VALUES; ++i)
      sim->total_dim[i] = def->total_dim ? def->total_dim(sim->modules[m].state, names[i])
                                         : UNITS_NONE;
    *n += k;
  }
cleanup:
  return st;
}

void sim_totals_output(const sim_t *sim, double *values, int n) {
  for (int i = 0; i < n && i < MODULE_MAX_VALUES; ++i)
    values[i] *= units_output_factor(&sim->units, sim->total_dim[i]);
}

units_dim_t sim_total_dim(const sim_t *sim, const char *name) {
  for (int m = 0; m < sim->nmodules; ++m) {
    const module_def_t *def = sim->modules[m].def;
    const units_dim_t d = def->total_dim ? def->total_dim(sim->modules[m].state, name) : UNITS_NONE;
    if (d.length || d.time || d.mass) return d;
  }
  return UNITS_NONE;
}

double sim_output_time(const sim_t *sim, int64_t step) {
  return (double)step * units_output_factor(&sim->units, UNITS_TIME);
}

const units_t *sim_units(const sim_t *sim) { return &sim->units; }

const module_quantity_t *sim_quantity(const sim_t *sim, const char *name) {
  int m, q;
  return module_quantity_index(sim->decls, sim->nmodules, name, &m, &q) ? &sim->decls[m].quantities[q]
                                                                     : NULL;
}

tsr_status sim_sample(sim_t *sim, const module_quantity_t *q, int32_t block, double *out,
                      tsr_error_t *err) {
  const block_info_t *b = patch_block(sim->patch, block);
  tsr_status st = q->sample(b, patch_block_data(sim->patch, block), out, q->ctx, err);
  const double f = units_output_factor(&sim->units, q->dim);
  const size_t n = (size_t)q->components * (size_t)b->size[0] * (size_t)b->size[1] * (size_t)b->size[2];
  for (size_t i = 0; st == TSR_OK && f != 1.0 && i < n; ++i) out[i] *= f;
  return st;
}

MPI_Comm sim_comm(const sim_t *sim) { return sim->comm; }
patch_t *sim_patch(const sim_t *sim) { return sim->patch; }
registry_t *sim_registry(const sim_t *sim) { return sim->reg; }
uint64_t sim_fs(const sim_t *sim) { return sim->fs; }
tsr_status sim_run_kernel(sim_t *sim, const char *item, tsr_error_t *err) {
  sim->prepared = sim->output_prepared = false;
  return timeloop_run_kernel(sim->loop, item, err);
}
int sim_field_id(const sim_t *sim, const char *field) {
  int m, f;
  return module_field_index(sim->decls, sim->nmodules, field, &m, &f) ? sim->field_id[m][f] : -1;
}
timeloop_timing_t sim_timing(const sim_t *sim) { return timeloop_timing(sim->loop); }
const timeloop_t *sim_timeloop(const sim_t *sim) { return sim->loop; }
int64_t sim_cells(const sim_t *sim) { return sim->cells; }
const plan_t *sim_plan(const sim_t *sim) { return sim->plan; }
opencl_context_t *sim_opencl(const sim_t *sim) { return sim->cl; }
const module_t *sim_modules(const sim_t *sim, int *n) {
  *n = sim->nmodules;
  return sim->modules;
}
const module_decl_t *sim_decls(const sim_t *sim, int *n) {
  *n = sim->nmodules;
  return sim->decls;
}
const char *sim_fs_text(const sim_t *sim) { return sim->fs_text; }

/* ---- a quantity gathered on rank 0 ---- */


tsr_status sim_largest_block(const sim_t *sim, int comps, const char *what, size_t *cells,
                             tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t most = 0, bytes = 0;
  int32_t largest = 0;
  int count = 0;
  for (int32_t id = 0; id < patch_block_count(sim->patch); ++id)
    if ((size_t)patch_block_cells(patch_block(sim->patch, id)) > most)
      most = (size_t)patch_block_cells(patch_block(sim->patch, id)), largest = id;
  TSR_CHECK(tsr_size_to_int((size_t)comps * most, &count) &&
                tsr_mul_size((size_t)comps * most, sizeof(double), &bytes),
            TSR_ERR_INVALID,
            "%s: BlockID %d has %zu cells, and %d values each are more than one MPI message "
            "carries (%d values)", what, (int)largest, most, comps, INT_MAX);
  *cells = most;
cleanup:
  return st;
}

tsr_status sim_gather(sim_t *sim, const char *quantity, double *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const patch_options_t *d = patch_options(sim->patch);
  const module_quantity_t *q = sim_quantity(sim, quantity);
  int rank;
  double *buf = NULL;
  size_t most = 0;
  MPI_Comm_rank(sim->comm, &rank);
  TSR_CHECK(q, TSR_ERR_INVALID, "gathering: no quantity \"%s\" in this run", quantity);
  const int c = q->components;
  TSR_TRY(sim_largest_block(sim, c, "gathering the fields", &most, err));
  /* one buffer of the largest block, allocated before any message moves */
  buf = malloc((size_t)c * most * sizeof *buf + 1);
  if (!buf) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory gathering fields");
  TSR_TRY(verdict_reduce(sim->comm, st, 0, err));
  /* block by block in BlockID order: the owner sends, rank 0 places */
  for (int32_t id = 0; id < patch_block_count(sim->patch); ++id) {
    const block_info_t *b = patch_block(sim->patch, id);
    int64_t n = patch_block_cells(b);
    if (rank == b->rank) {
      st = sim_sample(sim, q, id, buf, err);
      if (rank != 0 && st == TSR_OK)
        TSR_MPI(MPI_Send(buf, (int)(c * n), MPI_DOUBLE, 0, 77, sim->comm));
    }
    if (st != TSR_OK) break; /* a sampler's error: the verdict below */
    if (rank == 0) {
      if (b->rank != 0)
        TSR_MPI(MPI_Recv(buf, (int)(c * n), MPI_DOUBLE, b->rank, 77, sim->comm, MPI_STATUS_IGNORE));
      int64_t k = 0;
      for (int z = 0; z < b->size[2]; ++z)
        for (int y = 0; y < b->size[1]; ++y)
          for (int x = 0; x < b->size[0]; ++x, ++k) {
            int64_t g = ((b->lo[2] + z) * d->cells[1] + (b->lo[1] + y)) * d->cells[0] + b->lo[0] + x;
            for (int a = 0; a < c; ++a) out[c * g + a] = buf[c * k + a];
          }
    }
  }
  st = verdict_reduce(sim->comm, st, 0, err);
cleanup:
  free(buf);
  return st;
}
