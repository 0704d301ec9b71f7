#include "lbm_sim.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "cpu_threads.h"
#include "gpu_lbm.h"
#include "grid.h"
#include "lbm_gpu.h"
#include "lbm_plan.h"
#include "opencl.h"
#include "node.h"
#include "image.h"
#include "tsr_size.h"
#include "verdict.h"
#include "vtk.h"

struct lbm_sim {
  MPI_Comm comm;
  lbm_plan_t *plan;      /* the assignment and its prediction (the patch is taken out) */
  opencl_context_t *cl;  /* hs gpu: this process's device */
  lbm_gpu_env_t *gpu;
  patch_t *patch;
  registry_t *reg;
  timeloop_t *loop;
  int pdf_id;
  lbm_options_t opts;
  int64_t cells;
  int64_t *vtk_steps; /* output steps written so far */
  int64_t nvtk;
};

void lbm_sim_free(lbm_sim_t **sim) {
  if (!sim || !*sim) return;
  lbm_sim_t *s = *sim;
  timeloop_free(&s->loop);
  patch_free(&s->patch); /* GPU blocks release their buffers before the context goes */
  registry_free(&s->reg);
  lbm_plan_free(&s->plan);
  lbm_gpu_env_free(&s->gpu);
  opencl_context_free(&s->cl);
  free(s->vtk_steps);
  free(s);
  *sim = NULL;
}

/* Bytes the local blocks will allocate: in host memory (*host) two PDF grids with ghost
 * layer, flags and moments per block; with hs gpu the grids go to the device (*device,
 * plus message, moment and flag buffers) and the host holds one block's grids at a time while
 * it initialises them. *largest: the largest single device buffer (one grid). Every
 * product is checked: a block whose bytes do not fit in a size_t is an error naming it. */
static tsr_status lbm_sim_local_bytes(const lbm_sim_t *s, size_t *host, size_t *device,
                                      size_t *largest, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const size_t es = s->opts.precision == LBM_SP ? 4 : 8, moments_per_cell = 1 + 4 * 8;
  const lattice_t *l = s->opts.lattice;
  size_t staging = 0;
  uint32_t solid = UINT32_MAX, gpu_hs = UINT32_MAX;
  tsr_error_t ignored;
  *host = *device = *largest = 0;
  if (selector_find(registry_selectors(s->reg), SELECTOR_BS, "solid", &solid, &ignored) != TSR_OK)
    solid = UINT32_MAX;
  if (selector_find(registry_selectors(s->reg), SELECTOR_HS, "gpu", &gpu_hs, &ignored) != TSR_OK)
    gpu_hs = UINT32_MAX;
  for (int32_t i = 0; i < patch_local_count(s->patch); ++i) {
    const block_info_t *b = patch_block(s->patch, patch_local_id(s->patch, i));
    if (patch_has_bs(b, solid)) continue;
    size_t cells, with_ghosts, moments, grid, messages;
    bool ok = tsr_box_cells(b->size, 0, &cells) && tsr_box_cells(b->size, 1, &with_ghosts) &&
              tsr_mul_size(cells, moments_per_cell, &moments) && tsr_add_size(*host, moments, host);
    if (ok && b->hs != gpu_hs) { /* with the layout's padding */
      grid_dims_t d = grid_dims_make(b->size, l->q, l->reach, s->opts.cpu_layout, es);
      ok = d.elements > 0 && tsr_mul_size(d.elements, 2 * es, &grid) &&
           tsr_add_size(*host, grid, host);
    } else if (ok) { /* two grids, the moments (rho, u) and the cell flags of the check, and
                        the face messages both ways */
      size_t grids, device_moments;
      ok = tsr_mul_size(with_ghosts, (size_t)l->q * es, &grid) && tsr_mul_size(grid, 2, &grids) &&
           tsr_mul_size(cells, 4 * 8 + 1, &device_moments) &&
           tsr_mul_size(with_ghosts - cells, 2 * GPU_LBM_MAX_COMPS * es, &messages) &&
           tsr_add_size(*device, grids, device) && tsr_add_size(*device, device_moments, device) &&
           tsr_add_size(*device, messages, device);
      if (ok && grids > staging) staging = grids;
      if (ok && grid > *largest) *largest = grid;
    }
    TSR_CHECK(ok, TSR_ERR_INVALID,
              "BlockID %d (%d x %d x %d cells, %s): its bytes do not fit in a size_t", (int)b->id,
              b->size[0], b->size[1], b->size[2], lbm_fs(&s->opts));
  }
  TSR_CHECK(tsr_add_size(*host, staging, host), TSR_ERR_INVALID,
            "the LBM blocks of this process: their bytes do not fit in a size_t");
cleanup:
  return st;
}

/* Calibration: this process's MLUPS on one block of the run's largest block size (at most
 * LBM_CALIBRATE_CELLS cells, scaled down alike along each axis), periodic, without walls,
 * on its own hardware, measured after two warm-up steps over at least 0.2 s (and 3
 * steps). Every process calibrates at the same time, so processes sharing a node share
 * its memory bandwidth as they will in the run. */
enum { LBM_CALIBRATE_CELLS = 1 << 21 };

static tsr_status lbm_sim_calibrate(const simulation_options_t *so, const lbm_options_t *lo,
                                    const simulation_process_t *me, double *mlups,
                                    tsr_error_t *err) {
  tsr_status st = TSR_OK;
  lbm_sim_t *cal = NULL;
  simulation_options_t c = simulation_options_default();
  lbm_options_t l = *lo;
  double n = 1;
  for (int a = 0; a < 3; ++a) {
    int64_t size = (so->domain.cells[a] + so->domain.blocks[a] - 1) / so->domain.blocks[a];
    c.domain.cells[a] = size;
    c.domain.periodic[a] = true;
    n *= (double)size;
  }
  double shrink = n > LBM_CALIBRATE_CELLS ? cbrt(LBM_CALIBRATE_CELLS / n) : 1.0;
  for (int a = 0; a < 3; ++a) {
    c.domain.cells[a] = (int64_t)((double)c.domain.cells[a] * shrink);
    if (c.domain.cells[a] < 4) c.domain.cells[a] = 4;
  }
  c.hardware.hs = me->hs;
  c.hardware.opencl = simulation_process_device(&so->hardware, me);
  memcpy(c.hardware.kernel_sources, so->hardware.kernel_sources, sizeof c.hardware.kernel_sources);
  l.geometry = geometry_default(); /* all periodic: no walls */
  l.init = LBM_INIT_UNIFORM;
  for (int a = 0; a < 3; ++a) l.init_velocity[a] = 0.0;
  TSR_TRY(lbm_sim_create(MPI_COMM_SELF, &c, &l, &cal, err));
  TSR_TRY(lbm_sim_step(cal, 2, err));
  double t0 = MPI_Wtime(), t = 0;
  int64_t steps = 0;
  while (steps < 3 || t < 0.2) {
    TSR_TRY(lbm_sim_step(cal, 1, err));
    ++steps;
    t = MPI_Wtime() - t0;
  }
  *mlups = (double)cal->cells * (double)steps / t / 1e6;
cleanup:
  if (st != TSR_OK) tsr_error_prefix(err, "calibrating (hardware.balance.calibrate)");
  lbm_sim_free(&cal);
  return st;
}

/* This process's OpenCL device: hardware.opencl, with its configuration's device. */
static tsr_status lbm_sim_open_device(lbm_sim_t *s, const simulation_options_t *so,
                                      const node_process_t *me, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  opencl_select_t sel = simulation_process_device(&so->hardware, &me->proc);
  st = opencl_context_create(&sel, &s->cl, err);
  if (st == TSR_OK) st = lbm_gpu_env_create(s->cl, so->hardware.kernel_sources, &s->gpu, err);
  if (st != TSR_OK) {
    if (me->configuration >= 0)
      tsr_error_prefix(err, "node \"%s\", configuration \"%s\", process %d (hs gpu)", me->node,
                       so->hardware.configurations[me->configuration].name, me->index);
    else
      tsr_error_prefix(err, "hardware.hs = gpu");
  }
  return st;
}

tsr_status lbm_sim_create(MPI_Comm comm, const simulation_options_t *so, const lbm_options_t *lo,
                          lbm_sim_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank, size;
  uint64_t fs = 0;
  double *mlups = NULL;
  node_process_t *procs = NULL;
  *out = NULL;
  lbm_sim_t *s = calloc(1, sizeof *s);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  procs = calloc((size_t)size, sizeof *procs);
  mlups = calloc((size_t)size, sizeof *mlups);
  if (!s || !procs || !mlups)
    st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  s->comm = comm;
  s->opts = *lo;
  /* which hardware this process runs on: its node's configuration */
  TSR_TRY(node_resolve(comm, &so->hardware, procs, err));
  const node_process_t *me = &procs[rank];
  bool gpu = me->proc.hs == SIMULATION_HS_GPU; /* this process has GPU blocks */
  int64_t nb = (int64_t)so->domain.blocks[0] * so->domain.blocks[1] * so->domain.blocks[2];
  for (int64_t id = 0; so->hardware.block_hs && id < nb; ++id)
    gpu = gpu || so->hardware.block_hs[id] == SIMULATION_HS_GPU;
  if (me->proc.threads > 0) cpu_threads_set(me->proc.threads);
  if (gpu) st = lbm_sim_open_device(s, so, me, err);
  if (st == TSR_OK) st = registry_create(&s->reg, err);
  if (st == TSR_OK) st = lbm_sweep_register(s->reg, &so->domain, lo, s->gpu, err);
  if (st == TSR_OK) st = registry_parse_fs(s->reg, lbm_fs(lo), &fs, err);
  if (st == TSR_OK && so->hardware.balance.calibrate)
    st = lbm_sim_calibrate(so, lo, &me->proc, &mlups[rank], err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  if (so->hardware.balance.calibrate)
    TSR_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, mlups, 1, MPI_DOUBLE, comm));
  /* which blocks it runs: every process plans the same assignment */
  st = lbm_plan_create(so, lo, s->reg, procs, so->hardware.balance.calibrate ? mlups : NULL, size,
                       rank, &s->plan, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  s->patch = lbm_plan_take_patch(s->plan);
  size_t host_bytes = 0, device_bytes = 0, largest = 0;
  st = lbm_sim_local_bytes(s, &host_bytes, &device_bytes, &largest, err);
  if (st == TSR_OK && gpu) { /* the device's limit first: it is the one a GPU run meets */
    char what[96];
    snprintf(what, sizeof what, "the %d LBM block(s) of rank %d (PDFs, messages, moments)",
             (int)patch_local_count(s->patch), rank);
    st = opencl_check_memory(s->cl, device_bytes, largest, what, err);
  }
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_TRY(node_check_memory(comm, host_bytes, "the PDFs of the LBM blocks", err));
  TSR_TRY(data_allocate(comm, s->reg, s->patch, LBM_PDF, fs, &s->pdf_id, err));
  st = timeloop_create(s->patch, s->reg, fs, comm, &s->loop, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  comm_field_t pdf = {.name = LBM_PDF, .data_id = s->pdf_id};
  lbm_ghost_width(s->opts.lattice, pdf.width);
  timeloop_sweep_t lbm_sweep = {.name = "lbm", .exchange = &pdf, .nexchange = 1,
                                .boundary = LBM_BOUNDARY, .kernel = LBM_STREAM_COLLIDE};
  TSR_TRY(timeloop_add_sweep(s->loop, &lbm_sweep, err));
  /* the step ends when every block's work is done (GPU blocks: their queue is empty) */
  TSR_TRY(timeloop_add_sweep(s->loop, &(timeloop_sweep_t){.name = "wait", .kernel = LBM_WAIT},
                             err));
  for (int32_t id = 0; id < patch_block_count(s->patch); ++id)
    s->cells += (int64_t)s->plan->block_cells[id];
  *out = s;
  s = NULL;
cleanup:
  free(procs);
  free(mlups);
  lbm_sim_free(&s);
  return st;
}

tsr_status lbm_sim_step(lbm_sim_t *sim, int64_t steps, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (int64_t k = 0; k < steps; ++k) TSR_TRY(timeloop_step(sim->loop, err));
cleanup:
  return st;
}

tsr_status lbm_sim_moments(lbm_sim_t *sim, tsr_error_t *err) {
  return timeloop_run_kernel(sim->loop, LBM_MOMENTS, err);
}

tsr_status lbm_sim_mass(lbm_sim_t *sim, double *mass, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int32_t nb = patch_block_count(sim->patch);
  double *part = calloc((size_t)nb, sizeof *part), *all = calloc((size_t)nb, sizeof *all);
  if (!part || !all) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  for (int32_t i = 0; st == TSR_OK && i < patch_local_count(sim->patch); ++i) {
    int32_t id = patch_local_id(sim->patch, i);
    lbm_moments_view_t v = lbm_block_moments(patch_block_data(sim->patch, id), sim->pdf_id);
    for (int64_t k = 0; k < v.cells; ++k)
      if (v.flags[k] == GEOMETRY_FLUID) part[id] += v.rho[k];
  }
  TSR_TRY(verdict_reduce(sim->comm, st, 0, err));
  TSR_MPI(MPI_Allreduce(part, all, nb, MPI_DOUBLE, MPI_SUM, sim->comm));
  *mass = 0;
  for (int32_t id = 0; id < nb; ++id) *mass += all[id];
cleanup:
  free(part);
  free(all);
  return st;
}

tsr_status lbm_sim_check(lbm_sim_t *sim, int64_t step, bool moments_fresh,
                         lbm_divergence_t *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  /* each rank's first unstable cell as BlockID * 2^32 + cell index; the smallest wins */
  int64_t mine = INT64_MAX, first = INT64_MAX;
  const double cs2 = lbm_sound_speed(&sim->opts) * lbm_sound_speed(&sim->opts);
  if (!moments_fresh) TSR_TRY(timeloop_run_kernel(sim->loop, LBM_CHECK, err));
  for (int32_t i = 0; i < patch_local_count(sim->patch); ++i) {
    int32_t id = patch_local_id(sim->patch, i);
    lbm_moments_view_t v = lbm_block_moments(patch_block_data(sim->patch, id), sim->pdf_id);
    int64_t first_cell = moments_fresh ? lbm_first_unstable(&v, cs2) : v.unstable;
    if (first_cell >= 0 && ((int64_t)id << 32) + first_cell < mine)
      mine = ((int64_t)id << 32) + first_cell;
  }
  TSR_MPI(MPI_Allreduce(&mine, &first, 1, MPI_INT64_T, MPI_MIN, sim->comm));
  *out = (lbm_divergence_t){.step = step, .block = -1};
  if (first == INT64_MAX) goto cleanup;
  const int32_t id = (int32_t)(first >> 32);
  const int64_t k = first & 0xffffffff;
  const block_info_t *b = patch_block(sim->patch, id);
  double vals[4] = {0};
  if (b->rank == patch_my_rank(sim->patch)) {
    lbm_moments_view_t v = lbm_block_moments(patch_block_data(sim->patch, id), sim->pdf_id);
    vals[0] = v.rho[k];
    for (int a = 0; a < 3; ++a) vals[1 + a] = v.u[3 * k + a];
  }
  TSR_MPI(MPI_Bcast(vals, 4, MPI_DOUBLE, b->rank, sim->comm));
  const int64_t local[3] = {k % b->size[0], k / b->size[0] % b->size[1],
                            k / b->size[0] / b->size[1]};
  out->block = id;
  out->rho = vals[0];
  for (int a = 0; a < 3; ++a) {
    out->cell[a] = b->lo[a] + local[a];
    out->u[a] = vals[1 + a];
  }
  st = tsr_error_set(err, TSR_ERR_DIVERGED, __FILE__, __LINE__,
                     "the simulation diverged at step %lld: BlockID %d, cell (%lld, %lld, %lld): "
                     "rho = %g, u = (%g, %g, %g); stable are finite values with rho > 0 and "
                     "|u| < c_s = %.4f (lattice units): lower the velocities or raise the "
                     "viscosity or the resolution",
                     (long long)step, (int)id, (long long)out->cell[0], (long long)out->cell[1],
                     (long long)out->cell[2], out->rho, out->u[0], out->u[1], out->u[2],
                     lbm_sound_speed(&sim->opts));
cleanup:
  return st;
}

tsr_status lbm_sim_gather(lbm_sim_t *sim, double *rho, double *u, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const patch_options_t *d = patch_options(sim->patch);
  int rank;
  double *buf = NULL;
  MPI_Comm_rank(sim->comm, &rank);
  /* one buffer of the largest block, allocated before any message moves; a block's 4
     values per cell travel in one message (the same verdict on every rank: all see the
     sizes) */
  size_t most = 0, bytes = 0;
  int32_t largest = 0;
  int count = 0;
  for (int32_t id = 0; id < patch_block_count(sim->patch); ++id) {
    size_t n = 0;
    (void)tsr_box_cells(patch_block(sim->patch, id)->size, 0, &n);
    if (n > most) most = n, largest = id;
  }
  TSR_CHECK(tsr_size_to_int(4 * most, &count) && tsr_mul_size(4 * most, sizeof *buf, &bytes),
            TSR_ERR_INVALID,
            "gathering the fields: BlockID %d has %zu cells, and 4 values each are more than one "
            "MPI message carries (%d values)", (int)largest, most, INT_MAX);
  buf = malloc(bytes);
  if (!buf) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory gathering fields");
  TSR_TRY(verdict_reduce(sim->comm, st, 0, err));
  /* block by block in BlockID order: the owner sends, rank 0 places */
  for (int32_t id = 0; id < patch_block_count(sim->patch); ++id) {
    const block_info_t *b = patch_block(sim->patch, id);
    int64_t n = (int64_t)b->size[0] * b->size[1] * b->size[2];
    if (rank == b->rank) {
      lbm_moments_view_t v = lbm_block_moments(patch_block_data(sim->patch, id), sim->pdf_id);
      for (int64_t k = 0; k < n; ++k) {
        buf[4 * k] = v.rho ? v.rho[k] : sim->opts.rho0;
        for (int a = 0; a < 3; ++a) buf[4 * k + 1 + a] = v.u ? v.u[3 * k + a] : 0.0;
      }
      if (rank != 0) TSR_MPI(MPI_Send(buf, (int)(4 * n), MPI_DOUBLE, 0, 77, sim->comm));
    }
    if (rank == 0) {
      if (b->rank != 0)
        TSR_MPI(MPI_Recv(buf, (int)(4 * n), MPI_DOUBLE, b->rank, 77, sim->comm, MPI_STATUS_IGNORE));
      int64_t k = 0;
      for (int z = 0; z < b->size[2]; ++z)
        for (int y = 0; y < b->size[1]; ++y)
          for (int x = 0; x < b->size[0]; ++x, ++k) {
            int64_t g = ((b->lo[2] + z) * d->cells[1] + (b->lo[1] + y)) * d->cells[0] + b->lo[0] + x;
            rho[g] = buf[4 * k];
            for (int a = 0; a < 3; ++a) u[3 * g + a] = buf[4 * k + 1 + a];
          }
    }
  }
cleanup:
  free(buf);
  return st;
}

const char *const lbm_sim_output_patterns[LBM_SIM_OUTPUT_PATTERNS] = {
    "fields.pvd", "fields_*.vtm", "fields_*/block_*.vti", "probe_*.csv", "slice_*.png"};

tsr_status lbm_sim_write_vtk(lbm_sim_t *sim, output_folder_t *out, int64_t step, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *folder = output_folder_path(out);
  int rank;
  MPI_Comm_rank(sim->comm, &rank);
  int32_t nb = patch_block_count(sim->patch);
  int32_t *ids = NULL;
  double *rho = NULL, *u = NULL;
  uint8_t *flags = NULL;
  if (rank == 0) st = vtk_make_step_folder(folder, "fields", step, err);
  TSR_TRY(verdict_reduce(sim->comm, st, 0, err));
  for (int32_t i = 0; st == TSR_OK && i < patch_local_count(sim->patch); ++i) {
    int32_t id = patch_local_id(sim->patch, i);
    const block_info_t *b = patch_block(sim->patch, id);
    lbm_moments_view_t v = lbm_block_moments(patch_block_data(sim->patch, id), sim->pdf_id);
    size_t n = (size_t)b->size[0] * (size_t)b->size[1] * (size_t)b->size[2];
    const double *r = v.rho, *uu = v.u;
    const uint8_t *fl = v.flags;
    if (!v.rho) { /* a solid block: wall everywhere, at rest */
      free(rho); free(u); free(flags);
      rho = malloc(n * sizeof *rho);
      u = calloc(3 * n, sizeof *u);
      flags = malloc(n);
      if (!rho || !u || !flags) {
        st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory writing VTK");
        break;
      }
      for (size_t k = 0; k < n; ++k) rho[k] = sim->opts.rho0;
      memset(flags, GEOMETRY_NOSLIP, n);
      r = rho, uu = u, fl = flags;
    }
    vtk_array_t arrays[3] = {{"density", VTK_FLOAT64, 1, r}, {"velocity", VTK_FLOAT64, 3, uu},
                             {"flags", VTK_UINT8, 1, fl}};
    vtk_block_t vb = {.lo = {b->lo[0], b->lo[1], b->lo[2]},
                      .size = {b->size[0], b->size[1], b->size[2]}, .arrays = arrays, .narrays = 3};
    char path[4096];
    vtk_block_path(path, sizeof path, folder, "fields", step, id);
    st = vtk_write_block(path, &vb, err);
  }
  TSR_TRY(verdict_reduce(sim->comm, st, 0, err));
  int64_t *grown = realloc(sim->vtk_steps, (size_t)(sim->nvtk + 1) * sizeof *grown);
  ids = malloc((size_t)nb * sizeof *ids);
  if (!grown || !ids) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  if (grown) {
    sim->vtk_steps = grown;
    if (st == TSR_OK) sim->vtk_steps[sim->nvtk++] = step;
  }
  for (int32_t id = 0; st == TSR_OK && id < nb; ++id) ids[id] = id;
  if (st == TSR_OK && rank == 0)
    st = vtk_write_index(folder, "fields", step, ids, nb, sim->vtk_steps, sim->nvtk, err);
  char path[OUTPUT_PATH_MAX];
  for (int32_t id = 0; st == TSR_OK && id < nb; ++id)
    st = output_folder_file(out, path, sizeof path, err, "fields_%06lld/block_%d.vti",
                            (long long)step, (int)id);
  if (st == TSR_OK)
    st = output_folder_file(out, path, sizeof path, err, "fields_%06lld.vtm", (long long)step);
  if (st == TSR_OK) st = output_folder_file(out, path, sizeof path, err, "fields.pvd");
  st = verdict_reduce(sim->comm, st, 0, err);
cleanup:
  free(ids);
  free(rho);
  free(u);
  free(flags);
  return st;
}

tsr_status lbm_sim_write_probe(lbm_sim_t *sim, output_folder_t *out,
                               const simulation_probe_t *probe, int64_t step, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank;
  MPI_Comm_rank(sim->comm, &rank);
  int64_t len = 0;
  for (int a = 0; a < 3; ++a) {
    int64_t d = probe->to[a] - probe->from[a];
    if (d < 0) d = -d;
    if (d > len) len = d;
  }
  int64_t npts = len + 1;
  double *vals = NULL, *all = NULL;
  int64_t (*cell)[3] = NULL;
  int count = 0; /* 4 values per point in one reduction (every rank sees the same probe) */
  TSR_CHECK(tsr_size_to_int(4 * (size_t)npts, &count), TSR_ERR_INVALID,
            "probe '%s': %lld points, and 4 values each are more than one MPI reduction carries "
            "(%d values)", probe->name, (long long)npts, INT_MAX);
  vals = calloc((size_t)count, sizeof *vals);
  all = calloc((size_t)count, sizeof *all);
  if (!vals || !all) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  cell = malloc((size_t)npts * sizeof *cell);
  if (!cell) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  /* each point's value comes from the rank owning its cell; the others add zeros */
  for (int64_t k = 0; st == TSR_OK && k < npts; ++k) {
    for (int a = 0; a < 3; ++a) {
      double t = len ? (double)k / (double)len : 0.0;
      double x = (double)probe->from[a] + t * (double)(probe->to[a] - probe->from[a]);
      cell[k][a] = (int64_t)(x + 0.5 - (x < 0));
    }
    for (int32_t i = 0; i < patch_local_count(sim->patch); ++i) {
      int32_t id = patch_local_id(sim->patch, i);
      const block_info_t *b = patch_block(sim->patch, id);
      int inside = 1;
      int64_t l[3];
      for (int a = 0; a < 3; ++a) {
        l[a] = cell[k][a] - b->lo[a];
        inside = inside && l[a] >= 0 && l[a] < b->size[a];
      }
      if (!inside) continue;
      lbm_moments_view_t v = lbm_block_moments(patch_block_data(sim->patch, id), sim->pdf_id);
      int64_t c = (l[2] * b->size[1] + l[1]) * b->size[0] + l[0];
      vals[4 * k] = v.rho ? v.rho[c] : sim->opts.rho0;
      for (int a = 0; a < 3; ++a) vals[4 * k + 1 + a] = v.u ? v.u[3 * c + a] : 0.0;
    }
  }
  TSR_TRY(verdict_reduce(sim->comm, st, 0, err));
  TSR_MPI(MPI_Reduce(vals, all, count, MPI_DOUBLE, MPI_SUM, 0, sim->comm));
  if (rank == 0) {
    char path[OUTPUT_PATH_MAX];
    output_file_t f = {.f = NULL};
    st = output_folder_file(out, path, sizeof path, err, "probe_%s_%06lld.csv", probe->name,
                            (long long)step);
    if (st == TSR_OK) st = output_file_open(&f, path, err);
    if (st == TSR_OK) {
      fprintf(f.f, "x,y,z,rho,ux,uy,uz\n");
      for (int64_t k = 0; k < npts; ++k)
        fprintf(f.f, "%lld,%lld,%lld,%.17g,%.17g,%.17g,%.17g\n", (long long)cell[k][0],
                (long long)cell[k][1], (long long)cell[k][2], all[4 * k], all[4 * k + 1],
                all[4 * k + 2], all[4 * k + 3]);
      st = output_file_commit(&f, err);
    }
  }
  st = verdict_reduce(sim->comm, st, 0, err);
cleanup:
  free(vals);
  free(all);
  free(cell);
  return st;
}

/* Cells of block b on the plane at pos across axis a: 0 when the plane misses it. */
static int64_t slice_cells(const block_info_t *b, int a, int h, int v, int64_t pos) {
  if (pos < b->lo[a] || pos >= b->lo[a] + b->size[a]) return 0;
  return (int64_t)b->size[h] * b->size[v];
}

tsr_status lbm_sim_write_png(lbm_sim_t *sim, output_folder_t *out,
                             const simulation_slice_t *slice, int64_t step, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank, nranks;
  MPI_Comm_rank(sim->comm, &rank);
  MPI_Comm_size(sim->comm, &nranks);
  const patch_options_t *d = patch_options(sim->patch);
  int32_t nb = patch_block_count(sim->patch);
  double *send = NULL, *recv = NULL, *value = NULL;
  uint8_t *wall = NULL;
  int *counts = NULL, *displs = NULL;
  /* the plane: across axis a, h horizontal and v vertical in the picture */
  int a = slice->axis, h = a == 0 ? 1 : 0, v = a == 2 ? 1 : 2;
  int64_t pos = slice->position;
  TSR_CHECK(a >= 0 && a < 3 && pos >= 0 && pos < d->cells[a], TSR_ERR_INVALID,
            "slice '%s': axis %d, position %lld is not a plane of the domain", slice->name, a,
            (long long)pos);
  int64_t width = d->cells[h], height = d->cells[v];

  /* every rank: |u| and the wall flag of its blocks' plane cells, in BlockID order */
  int64_t mine = 0, total = 0;
  for (int32_t id = 0; id < nb; ++id) {
    const block_info_t *b = patch_block(sim->patch, id);
    int64_t n = slice_cells(b, a, h, v, pos);
    total += n;
    if (b->rank == rank) mine += n;
  }
  send = malloc((size_t)(2 * mine + 1) * sizeof *send);
  if (!send) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  if (st == TSR_OK && 2 * total > INT_MAX)
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                       "slice '%s': %lld cells are more than one gather can carry", slice->name,
                       (long long)total);
  if (st == TSR_OK && rank == 0) {
    counts = calloc((size_t)nranks, sizeof *counts);
    displs = calloc((size_t)nranks, sizeof *displs);
    recv = malloc((size_t)(2 * total + 1) * sizeof *recv);
    value = malloc((size_t)(width * height) * sizeof *value);
    wall = malloc((size_t)(width * height));
    if (!counts || !displs || !recv || !value || !wall)
      st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  }
  int64_t k = 0;
  for (int32_t id = 0; st == TSR_OK && id < nb; ++id) {
    const block_info_t *b = patch_block(sim->patch, id);
    if (b->rank != rank || slice_cells(b, a, h, v, pos) == 0) continue;
    lbm_moments_view_t m = lbm_block_moments(patch_block_data(sim->patch, id), sim->pdf_id);
    int64_t c[3];
    c[a] = pos - b->lo[a];
    for (c[v] = 0; c[v] < b->size[v]; ++c[v])
      for (c[h] = 0; c[h] < b->size[h]; ++c[h]) {
        int64_t cell = (c[2] * b->size[1] + c[1]) * b->size[0] + c[0];
        if (!m.rho) { /* a solid block: wall everywhere */
          send[k++] = 0.0;
          send[k++] = 1.0;
          continue;
        }
        const double *u = &m.u[3 * cell];
        send[k++] = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
        send[k++] = m.flags[cell] != GEOMETRY_FLUID ? 1.0 : 0.0;
      }
  }
  TSR_TRY(verdict_reduce(sim->comm, st, 0, err));

  /* rank 0 knows from the block metadata how much each rank sends */
  if (rank == 0) {
    for (int32_t id = 0; id < nb; ++id) {
      const block_info_t *b = patch_block(sim->patch, id);
      counts[b->rank] += (int)(2 * slice_cells(b, a, h, v, pos));
    }
    for (int r = 1; r < nranks; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  }
  TSR_MPI(MPI_Gatherv(send, (int)(2 * mine), MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, 0,
                      sim->comm));
  if (rank == 0) {
    for (int r = 0; r < nranks; ++r) {
      int64_t off = displs[r];
      for (int32_t id = 0; id < nb; ++id) {
        const block_info_t *b = patch_block(sim->patch, id);
        if (b->rank != r || slice_cells(b, a, h, v, pos) == 0) continue;
        for (int64_t j = 0; j < b->size[v]; ++j)
          for (int64_t i = 0; i < b->size[h]; ++i) {
            int64_t g = (b->lo[v] + j) * width + b->lo[h] + i;
            value[g] = recv[off++];
            wall[g] = recv[off++] != 0.0;
          }
      }
    }
    char path[OUTPUT_PATH_MAX], caption[96];
    static const char axis_name[3] = {'x', 'y', 'z'};
    snprintf(caption, sizeof caption, "%c=%lld step %lld", axis_name[a], (long long)pos,
             (long long)step);
    image_options_t io = image_options_default();
    io.label = "|u|";
    io.caption = caption;
    image_field_t field = {.width = (int)width, .height = (int)height, .values = value, .wall = wall};
    st = output_folder_file(out, path, sizeof path, err, "slice_%s_%06lld.png", slice->name,
                            (long long)step);
    if (st == TSR_OK) st = image_write_png(path, &field, &io, err);
  }
  st = verdict_reduce(sim->comm, st, 0, err);
cleanup:
  free(send);
  free(recv);
  free(value);
  free(wall);
  free(counts);
  free(displs);
  return st;
}

patch_t *lbm_sim_patch(const lbm_sim_t *sim) { return sim->patch; }
timeloop_timing_t lbm_sim_timing(const lbm_sim_t *sim) { return timeloop_timing(sim->loop); }
int64_t lbm_sim_cells(const lbm_sim_t *sim) { return sim->cells; }
const lbm_plan_t *lbm_sim_plan(const lbm_sim_t *sim) { return sim->plan; }
