/* Heterogeneous runs: one GPU process (the first OpenCL device: PoCL in CI) beside one or
 * two CPU processes in one simulation equals the CPU-only run bitwise.
 *
 * The processes get their hardware from a node configuration (every node name matches
 * "*": rank 0 is hs gpu, the others hs cpu) and their blocks from the weighted
 * assignment; the GPU process is given three times the CPU throughput, so it holds
 * more blocks than each CPU process (checked: the block counts are uneven). CPU and GPU
 * blocks that are neighbours exchange their ghost layers through MPI in the common
 * message layout. Cases: the lid-driven cavity (TRT, moving wall; 3x3x3 blocks of
 * uneven sizes) and a periodic, force-driven Taylor-Green flow (SRT; 4x2x2 blocks), in
 * DP and SP, 200 steps (40 under the sanitizers). Bitwise: see test_lbm_gpu.c (same collision text on both
 * sides, no FMA contraction, same order); the largest relative difference is printed
 * and held to the GPU issue's tolerances too (1e-12 DP, 1e-5 SP). A third test puts CPU
 * and GPU blocks side by side in every process (a checkerboard of hs over the blocks,
 * through hardware.block_hs, the CPU blocks in AoS and SoA alternately), so that
 * neighbours of different hardware and layout also exchange inside one process
 * (extraction into scratch, insertion, copies between layouts); and once more with the
 * GPU blocks streaming in place (lbm.gpu_streaming in_place: their messages in the common
 * layout read from and written to the swapped array every other step). Some of the mixed
 * runs overlap their exchange with the work (hardware.overlap on: every block's inner
 * cells first, the GPU blocks' in one launch, then the shell; the CPU-only reference
 * does not). The CPU-only run of each case and precision is made once, and every mix is
 * held to it. Needs 2 or 3 ranks;
 * skipped (exit 77) where no OpenCL device exists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>

#include <cmocka.h>

#include "lbm_case.h"
#include "mpi_test.h"

enum { STEPS = LBM_CASE_BITWISE_STEPS }; /* lbm_case.h */

/* Rank 0 on the GPU at 3x the CPU processes' throughput, the others on the CPU. */
static void hetero_hardware(simulation_hardware_t *hw, int nranks) {
  hw->nconfigurations = 1;
  simulation_node_config_t *nc = &hw->configurations[0];
  snprintf(nc->name, sizeof nc->name, "mixed");
  nc->entries[0] = (simulation_process_t){.hs = SIMULATION_HS_GPU, .device = -1, .mlups = 3, .count = 1};
  nc->entries[1] = (simulation_process_t){.hs = SIMULATION_HS_CPU, .device = -1, .threads = 1,
                                          .mlups = 1, .count = nranks - 1};
  nc->nentries = 2;
  hw->nnodes = 1;
  snprintf(hw->nodes[0].match, sizeof hw->nodes[0].match, "*");
  hw->nodes[0].configuration = 0;
  /* blocks this small cost less to compute than to send: make communication free in the
     weights, so that the split follows the throughputs */
  hw->balance.network_gbs = hw->balance.device_gbs = 1e6;
  hw->balance.latency_us = 0;
}

typedef enum { CASE_CAVITY, CASE_PERIODIC } case_kind_t;
static const char *const case_names[] = {"cavity", "periodic taylor-green + force"};

static void case_setup(case_kind_t kind, lbm_precision_t prec, simulation_options_t *so,
                       lbm_options_t *lo) {
  *lo = lbm_options_default();
  lo->precision = prec;
  lo->viscosity = 0.02;
  if (kind == CASE_CAVITY) {
    *so = lbm_case_domain(16, 16, 16, 3, 3, 3, false, false, false);
    lo->collision = LBM_TRT;
    lo->geometry.walls[GEOMETRY_YP].kind = GEOMETRY_WALL_MOVING;
    lo->geometry.walls[GEOMETRY_YP].velocity[0] = 0.08;
  } else {
    *so = lbm_case_domain(16, 16, 8, 4, 2, 2, true, true, true);
    lo->collision = LBM_SRT;
    lo->init = LBM_INIT_TAYLOR_GREEN;
    lo->init_velocity[0] = 0.05;
    lo->force[2] = 2e-5;
  }
}

/* The heterogeneous assignment: hs per rank as configured, every process has blocks and
 * the GPU process more than each CPU process. */
static void check_assignment(const simulation_options_t *so, const lbm_options_t *lo) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  tsr_error_t err;
  lbm_sim_t *sim = NULL;
  if (lbm_sim_create(MPI_COMM_WORLD, so, lo, &sim, &err) != TSR_OK)
    fail_msg("heterogeneous setup: %s", err.text);
  const plan_t *plan = lbm_sim_plan(sim);
  const patch_t *patch = lbm_sim_patch(sim);
  int ok = plan->nranks == size;
  for (int r = 0; ok && r < size; ++r) {
    ok = plan->procs[r].proc.hs == (r == 0 ? SIMULATION_HS_GPU : SIMULATION_HS_CPU);
    ok = ok && patch_rank_block_count(patch, r) >= 1;
    if (r > 0) ok = ok && patch_rank_block_count(patch, 0) > patch_rank_block_count(patch, r);
  }
  /* the hs of every block is its owner's */
  for (int32_t id = 0; ok && id < patch_block_count(patch); ++id) {
    const block_info_t *b = patch_block(patch, id);
    const block_info_t *first = patch_block(patch, 0);
    ok = (b->rank == first->rank) == (b->hs == first->hs);
  }
  if (rank == 0) {
    printf("assignment on %d processes:", size);
    for (int r = 0; r < size; ++r)
      printf(" rank %d (%s) %d blocks;", r, simulation_hs_name(plan->procs[r].proc.hs),
             (int)patch_rank_block_count(patch, r));
    printf("\n");
  }
  lbm_sim_free(&sim);
  assert_true(ok);
}

typedef enum { MIX_PROCESSES, MIX_BLOCKS } mix_kind_t;

/* Blocks of both kinds in every process: a checkerboard of hs over the block grid. */
static simulation_hs_t *checkerboard(const simulation_options_t *so) {
  const int *nb = so->domain.blocks;
  simulation_hs_t *hs = malloc((size_t)nb[0] * nb[1] * nb[2] * sizeof *hs);
  assert_non_null(hs);
  for (int z = 0, id = 0; z < nb[2]; ++z)
    for (int y = 0; y < nb[1]; ++y)
      for (int x = 0; x < nb[0]; ++x, ++id)
        hs[id] = (x + y + z) % 2 ? SIMULATION_HS_GPU : SIMULATION_HS_CPU;
  return hs;
}

/* The CPU-only run of each case and precision, made once: every mix is held to it. */
static lbm_case_result_t references[2][2];
static bool have_reference[2][2];

static const lbm_case_result_t *reference(case_kind_t kind, lbm_precision_t prec) {
  if (!have_reference[kind][prec]) {
    simulation_options_t so;
    lbm_options_t lo;
    case_setup(kind, prec, &so, &lo);
    references[kind][prec] = lbm_case_run(MPI_COMM_WORLD, &so, &lo, STEPS);
    if (references[kind][prec].st != TSR_OK)
      fail_msg("CPU only: %s", references[kind][prec].err.text);
    have_reference[kind][prec] = true;
  }
  return &references[kind][prec];
}

static void check(case_kind_t kind, lbm_precision_t prec, mix_kind_t mix, bool in_place,
                  bool overlap) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  simulation_options_t so;
  lbm_options_t lo;
  case_setup(kind, prec, &so, &lo);
  const lbm_case_result_t *cpu = reference(kind, prec);
  simulation_hs_t *board = NULL;
  grid_layout_t *layouts = NULL;
  if (mix == MIX_PROCESSES) {
    hetero_hardware(&so.hardware, size);
    check_assignment(&so, &lo);
  } else {
    board = checkerboard(&so);
    so.hardware.block_hs = board;
    /* and the CPU blocks in both layouts: AoS in odd z layers, SoA in even ones */
    const int *nb = so.domain.blocks;
    layouts = malloc((size_t)nb[0] * nb[1] * nb[2] * sizeof *layouts);
    assert_non_null(layouts);
    for (int id = 0; id < nb[0] * nb[1] * nb[2]; ++id)
      layouts[id] = (id / (nb[0] * nb[1])) % 2 ? GRID_AOS : GRID_SOA;
    lo.block_layout = layouts;
  }
  lo.in_place = in_place;
  so.hardware.overlap = overlap ? SIMULATION_OVERLAP_ON : SIMULATION_OVERLAP_OFF;
  lbm_case_result_t mix_run = lbm_case_run(MPI_COMM_WORLD, &so, &lo, STEPS);
  free(board);
  free(layouts);
  if (mix_run.st != TSR_OK) fail_msg("heterogeneous: %s", mix_run.err.text);
  const lbm_case_result_t *mixr = &mix_run;
  int ok = 1;
  if (rank == 0) {
    size_t n = (size_t)(so.domain.cells[0] * so.domain.cells[1] * so.domain.cells[2]);
    lbm_case_diff_t d = lbm_case_compare(cpu, mixr, n);
    double tol = prec == LBM_DP ? 1e-12 : 1e-5;
    char what[64];
    if (mix == MIX_PROCESSES)
      snprintf(what, sizeof what, "1 GPU + %d CPU processes%s", size - 1,
               overlap ? ", overlapped" : "");
    else
      snprintf(what, sizeof what, "CPU and GPU blocks in each of %d processes%s", size,
               overlap ? ", overlapped" : "");
    printf("%s, %s: %s vs CPU only after %d steps: %zu of %zu values differ, largest relative "
           "difference %.3g (tolerance %.0e), |u| max %.3g\n",
           case_names[kind], lbm_fs(&lo), what, STEPS, d.unequal, d.values, d.worst, tol, d.umax);
    ok = d.unequal == 0 && d.worst <= tol && d.umax > 1e-3 && mixr->mass == cpu->mass;
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  assert_true(ok);
  lbm_case_free(&mix_run);
}

static void test_cavity(void **state) {
  for (int p = 0; p < 2; ++p) check(CASE_CAVITY, (lbm_precision_t)p, MIX_PROCESSES, false, p == 1);
}

static void test_periodic(void **state) {
  for (int p = 0; p < 2; ++p) check(CASE_PERIODIC, (lbm_precision_t)p, MIX_PROCESSES, false, false);
}

/* CPU and GPU blocks side by side in one process, the CPU blocks in both layouts:
 * neighbours of different hardware or layout exchange through extraction and insertion
 * or direct copies inside the process, and through MPI. */
static void test_blocks_mixed_in_process(void **state) {
  for (int k = 0; k < 2; ++k)
    for (int p = 0; p < 2; ++p)
      check((case_kind_t)k, (lbm_precision_t)p, MIX_BLOCKS, false, p == 1);
}

/* The same with the GPU blocks streaming in place: both mixes, both cases and
 * precisions (one pairing each), overlapped. */
static void test_in_place(void **state) {
  check(CASE_CAVITY, LBM_DP, MIX_PROCESSES, true, true);
  check(CASE_PERIODIC, LBM_SP, MIX_BLOCKS, true, true);
}

int main(int argc, char **argv) {
  mpi_test_init(&argc, &argv);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2 || !mpi_test_have_opencl()) {
    MPI_Finalize();
    return MPI_TEST_SKIPPED;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cavity),
      cmocka_unit_test(test_periodic),
      cmocka_unit_test(test_blocks_mixed_in_process),
      cmocka_unit_test(test_in_place),
  };
  const int failed = cmocka_run_group_tests_name("lbm_hetero", tests, NULL, NULL);
  for (int k = 0; k < 2; ++k)
    for (int p = 0; p < 2; ++p)
      if (have_reference[k][p]) lbm_case_free(&references[k][p]);
  return mpi_test_finish(failed);
}
