/* CPU/GPU equivalence: the same case run with hardware.hs = cpu (AoS kernels, OpenMP)
 * and hardware.hs = gpu (the OpenCL SoA kernels on the first device: PoCL in CI) gives
 * the same density and velocity after 200 steps, for 1 and 8 blocks, on all ranks of
 * the job (1 or 2). Cases: the lid-driven cavity (TRT, moving wall, bounce-back on every
 * face) and a periodic, force-driven Taylor-Green flow (SRT), in SP and DP.
 *
 * The comparison is bitwise: both sides evaluate the collision from one text
 * (kernels_cpu/d3q19_collide.h) in the same order without FMA contraction, boundary
 * links add the same rounded constant, ghost layers are copies and the moments sum in
 * the same order. The largest relative difference is printed as well, and checked
 * against the tolerances a user may expect where bitwise equality does not hold
 * (1e-12 DP, 1e-5 SP); both must pass. Skipped (exit 77) where no OpenCL device
 * exists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lbm_case.h"
#include "mpi_test.h"

enum { STEPS = LBM_CASE_BITWISE_STEPS }; /* lbm_case.h */

typedef enum { CASE_CAVITY, CASE_PERIODIC } case_kind_t;
static const char *const case_names[] = {"cavity", "periodic taylor-green + force"};

static void case_setup(case_kind_t kind, int nb, lbm_precision_t prec, simulation_options_t *so,
                       lbm_options_t *lo) {
  *lo = lbm_options_default();
  lo->precision = prec;
  lo->viscosity = 0.02;
  if (kind == CASE_CAVITY) {
    *so = lbm_case_domain(16, 16, 16, nb, nb, nb, false, false, false);
    lo->collision = LBM_TRT;
    lo->geometry.walls[GEOMETRY_YP].kind = GEOMETRY_WALL_MOVING;
    lo->geometry.walls[GEOMETRY_YP].velocity[0] = 0.08;
  } else {
    *so = lbm_case_domain(16, 16, 8, nb, nb, nb, true, true, true);
    lo->collision = LBM_SRT;
    lo->init = LBM_INIT_TAYLOR_GREEN;
    lo->init_velocity[0] = 0.05;
    lo->init_noneq = true;
    lo->force[2] = 2e-5;
  }
}

static void check(case_kind_t kind, int nb, lbm_precision_t prec) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  simulation_options_t so;
  lbm_options_t lo;
  case_setup(kind, nb, prec, &so, &lo);
  lbm_case_result_t cpu = lbm_case_run(MPI_COMM_WORLD, &so, &lo, STEPS);
  if (cpu.st != TSR_OK) fail_msg("hs cpu: %s", cpu.err.text);
  so.hardware.hs = SIMULATION_HS_GPU;
  lbm_case_result_t gpu = lbm_case_run(MPI_COMM_WORLD, &so, &lo, STEPS);
  if (gpu.st != TSR_OK) fail_msg("hs gpu: %s", gpu.err.text);
  int ok = 1;
  if (rank == 0) {
    size_t n = (size_t)(so.domain.cells[0] * so.domain.cells[1] * so.domain.cells[2]);
    lbm_case_diff_t d = lbm_case_compare(&cpu, &gpu, n);
    double tol = prec == LBM_DP ? 1e-12 : 1e-5;
    printf("%s, %s, %d block(s): hs gpu vs hs cpu after %d steps: %zu of %zu values differ, "
           "largest relative difference %.3g (tolerance %.0e), |u| max %.3g\n",
           case_names[kind], lbm_fs(&lo), nb * nb * nb, STEPS, d.unequal, d.values, d.worst, tol, d.umax);
    ok = d.unequal == 0 && d.worst <= tol && d.umax > 1e-3 && gpu.mass == cpu.mass;
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  assert_true(ok);
  lbm_case_free(&cpu);
  lbm_case_free(&gpu);
}

static void test_cavity(void **state) {
  for (int p = 0; p < 2; ++p)
    for (int nb = 1; nb <= 2; ++nb) check(CASE_CAVITY, nb, (lbm_precision_t)p);
}

static void test_periodic(void **state) {
  for (int p = 0; p < 2; ++p)
    for (int nb = 1; nb <= 2; ++nb) check(CASE_PERIODIC, nb, (lbm_precision_t)p);
}

/* What a step of this process gives its device: launches, reads and writes. */
typedef struct step_counts {
  int64_t launches, reads, writes;
} step_counts_t;

/* The counts of each of STEPS_COUNTED steps after the first (which may set tables up),
 * all equal or fails. */
enum { STEPS_COUNTED = 3 };
static step_counts_t counts_per_step(case_kind_t kind, int nb, lbm_precision_t prec,
                                     bool in_place) {
  simulation_options_t so;
  lbm_options_t lo;
  case_setup(kind, nb, prec, &so, &lo);
  lo.in_place = in_place;
  so.hardware.hs = SIMULATION_HS_GPU;
  lbm_sim_t *sim = NULL;
  tsr_error_t err;
  if (lbm_sim_create(MPI_COMM_WORLD, &so, &lo, &sim, &err) != TSR_OK) fail_msg("%s", err.text);
  if (lbm_sim_step(sim, 1, &err) != TSR_OK) fail_msg("%s", err.text);
  step_counts_t c[STEPS_COUNTED];
  for (int s = 0; s < STEPS_COUNTED; ++s) {
    const opencl_counts_t a = opencl_context_counts(sim_opencl(sim));
    if (lbm_sim_step(sim, 1, &err) != TSR_OK) fail_msg("%s", err.text);
    const opencl_counts_t b = opencl_context_counts(sim_opencl(sim));
    c[s] = (step_counts_t){b.launches - a.launches, b.reads - a.reads, b.writes - a.writes};
    if (s > 0 && memcmp(&c[s], &c[0], sizeof c[0]) != 0)
      fail_msg("%s, %d blocks: steps differ in launches (%lld, %lld) or transfers",
               case_names[kind], nb * nb * nb, (long long)c[0].launches, (long long)c[s].launches);
  }
  lbm_sim_free(&sim);
  return c[0];
}

/* A GPU process advances all its blocks with the same number of kernel launches and
 * transfers per step, whatever their number: 1, 8, 64 and 512 blocks in one domain, on
 * one rank (with two, the planner decides how many blocks each process gets; the
 * count is the process's own either way). The periodic case (a force, no walls)
 * exchanges ghost layers from one block on (its own, across the periodic faces); the
 * cavity has walls (boundary links on the blocks at the faces; inner blocks of 64 and
 * 512 have none) and no exchange with one block (no neighbour: one launch less), so it
 * counts from 8 blocks on. Every neighbour is on the device: no transfer at all. The
 * same with the populations streamed in place (lbm.gpu_streaming in_place): as many
 * launches as two grids. The cavity in single precision, the periodic flow in double
 * (the counts do not depend on the precision; each block size is a program to build). */
static void test_launches(void **state) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 1) skip();
  for (int kind = 0; kind < 2; ++kind) {
    const int p = kind == CASE_CAVITY ? LBM_SP : LBM_DP;
    step_counts_t first = {0};
    const int nb0 = kind == CASE_CAVITY ? 2 : 1;
    for (int run = 0; run < 8; ++run) { /* 4 block counts, two grids then in place */
      const int nb = nb0 << (run % 4), in_place = run / 4;
      if (nb > 8) continue;
      const step_counts_t c =
          counts_per_step((case_kind_t)kind, nb, (lbm_precision_t)p, in_place);
      if (rank == 0)
        printf("%s, %s, %s, %d blocks on %d rank(s): per step %lld launches, %lld reads, "
               "%lld writes\n", case_names[kind], p == LBM_DP ? "dp" : "sp",
               in_place ? "in place" : "two grids", nb * nb * nb, size,
               (long long)c.launches, (long long)c.reads, (long long)c.writes);
      if (run == 0) first = c;
      assert_true(c.launches > 0);
      assert_int_equal(c.launches, first.launches);
      assert_int_equal(c.reads, first.reads);
      assert_int_equal(c.writes, first.writes);
      assert_true(c.reads == 0 && c.writes == 0);
    }
  }
}

int main(int argc, char **argv) {
  mpi_test_init(&argc, &argv);
  if (!mpi_test_have_opencl()) {
    MPI_Finalize();
    return MPI_TEST_SKIPPED;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cavity),
      cmocka_unit_test(test_periodic),
      cmocka_unit_test(test_launches),
  };
  return mpi_test_finish(cmocka_run_group_tests_name("lbm_gpu", tests, NULL, NULL));
}
