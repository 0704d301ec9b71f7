/* Decomposition independence (the validation method of the FluidX3D multi-GPU work):
 * a case run as 1 block on 1 rank and as 8, 2x4x1 and 4x2x1 blocks on all ranks of the
 * job (1, 2 or 4) must give bitwise identical density and velocity after N steps, in
 * single and double precision, SRT and TRT. Cases: a lid-driven cavity, a periodic
 * Taylor-Green flow, and a force-driven channel around an obstacle that fills whole
 * blocks (solid blocks that allocate nothing and exchange nothing). Exact comparison:
 * the kernels do the same arithmetic per cell whatever the block, and ghost layers are
 * copies. The 1-block reference uses the reference CPU layout (AoS), the split runs the
 * default (SoA), so the layouts are checked against each other on whole runs too; with
 * "--cpu-layout mixed" the split runs give their blocks AoS and SoA alternately
 * (neighbours of different layouts exchange through the same copies and messages).
 * With "--hs gpu" every split run uses the OpenCL kernels instead (hardware.hs = gpu on
 * the first device; skipped, exit 77, where there is none), against the same 1-block CPU
 * reference, and with "--hs gpu --in-place" the GPU blocks stream in place
 * (lbm.gpu_streaming in_place, one copy of the populations) for an odd number of steps,
 * so that the fields are read back from the swapped array: in place equals the two-grid
 * CPU reference bitwise on every lattice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>

#include <cmocka.h>

#include "lbm_case.h"
#include "mpi_test.h"

typedef enum { CASE_CAVITY, CASE_TAYLOR_GREEN, CASE_CHANNEL_OBSTACLE } case_kind_t;

static const char *const case_names[] = {"cavity", "taylor-green", "channel+obstacle"};

static simulation_hs_t test_hs = SIMULATION_HS_CPU;
static bool test_in_place; /* GPU blocks stream in place */
static int test_mixed; /* split runs: AoS and SoA blocks alternating */
static grid_layout_t block_layouts[64];

static const lattice_t *test_lattice; /* NULL: the default */
static double test_smagorinsky;       /* the LES model's constant; 0: none */

static void case_setup(case_kind_t kind, const int blocks[3], simulation_options_t *so,
                       lbm_options_t *lo) {
  *lo = lbm_options_default();
  if (test_lattice) lo->lattice = test_lattice;
  lo->viscosity = 0.03;
  switch (kind) {
  case CASE_CAVITY:
    *so = lbm_case_domain(12, 12, lo->lattice->d == 3 ? 12 : 1, blocks[0], blocks[1], blocks[2],
                          false, false, lo->lattice->d == 2);
    lo->geometry.walls[GEOMETRY_YP].kind = GEOMETRY_WALL_MOVING;
    lo->geometry.walls[GEOMETRY_YP].velocity[0] = 0.08;
    break;
  case CASE_TAYLOR_GREEN:
    *so = lbm_case_domain(16, 16, 8, blocks[0], blocks[1], blocks[2], true, true, true);
    lo->init = LBM_INIT_TAYLOR_GREEN;
    lo->init_velocity[0] = 0.05;
    lo->init_noneq = true; /* its strain rate from neighbours across block faces */
    break;
  case CASE_CHANNEL_OBSTACLE:
    *so = lbm_case_domain(16, 8, 8, blocks[0], blocks[1], blocks[2], true, false, false);
    lo->force[0] = 1e-4;
    /* with 4 blocks along x this box is exactly the block at grid (1, 0, 0) */
    lo->geometry.nshapes = 2;
    lo->geometry.shapes[0] = (geometry_shape_t){.kind = GEOMETRY_BOX, .min = {4, 0, 0}, .max = {8, 4, 4}};
    lo->geometry.shapes[1] = (geometry_shape_t){.kind = GEOMETRY_SPHERE, .center = {12, 5, 4}, .radius = 2};
    break;
  }
  so->hardware.hs = test_hs;
  lo->in_place = test_in_place;
  lo->smagorinsky = test_smagorinsky;
}

static const int default_grids[][3] = {{2, 2, 2}, {2, 4, 1}, {4, 2, 1}};

static void check_case_grids(case_kind_t kind, lbm_collision_t coll, lbm_precision_t prec,
                             const int (*grids)[3], size_t ngrids) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int64_t steps = test_in_place ? 61 : 60; /* in place: end swapped */
  const int one[3] = {1, 1, 1};
  simulation_options_t so;
  lbm_options_t lo;
  case_setup(kind, one, &so, &lo);
  lo.collision = coll;
  lo.precision = prec;
  lo.shifted = lo.shifted || prec == LBM_FP16S || prec == LBM_FP16C; /* 16 bits need it */
  lbm_case_result_t ref = {0};
  lo.cpu_layout = GRID_AOS;
  so.hardware.hs = SIMULATION_HS_CPU; /* the GPU runs too: against the CPU's two grids */
  if (rank == 0) {
    ref = lbm_case_run(MPI_COMM_SELF, &so, &lo, steps);
    if (ref.st != TSR_OK) fail_msg("reference: %s", ref.err.text);
  }
  size_t n = (size_t)(so.domain.cells[0] * so.domain.cells[1] * so.domain.cells[2]);
  for (size_t g = 0; g < ngrids; ++g) {
    case_setup(kind, grids[g], &so, &lo);
    lo.collision = coll;
    lo.precision = prec;
    lo.shifted = lo.shifted || prec == LBM_FP16S || prec == LBM_FP16C;
    if (test_mixed) {
      for (int id = 0; id < 64; ++id) /* a checkerboard over the block grid's x-y-z */
        block_layouts[id] = (grid_layout_t)((id + id / grids[g][0] + id / (grids[g][0] * grids[g][1])) % 2);
      lo.block_layout = block_layouts;
    }
    lbm_case_result_t r = lbm_case_run(MPI_COMM_WORLD, &so, &lo, steps);
    if (r.st != TSR_OK) fail_msg("%s", r.err.text);
    int same = 1;
    if (rank == 0) {
      same = memcmp(r.rho, ref.rho, n * sizeof(double)) == 0 &&
             memcmp(r.u, ref.u, 3 * n * sizeof(double)) == 0;
      size_t k = 0;
      while (!same && k < n && r.rho[k] == ref.rho[k] && r.u[3 * k] == ref.u[3 * k] &&
             r.u[3 * k + 1] == ref.u[3 * k + 1] && r.u[3 * k + 2] == ref.u[3 * k + 2])
        ++k;
      if (!same)
        printf("%s %s: blocks %dx%dx%d differ from 1 block first at cell %zu: rho %.17g vs %.17g\n",
               case_names[kind], lbm_fs(&lo), grids[g][0], grids[g][1], grids[g][2], k,
               k < n ? r.rho[k] : 0.0, k < n ? ref.rho[k] : 0.0);
      /* and the flow is not trivially at rest */
      double umax = 0;
      for (size_t i = 0; i < 3 * n; ++i) umax = umax > fabs(r.u[i]) ? umax : fabs(r.u[i]);
      if (umax < 1e-4) same = 0;
    }
    MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD);
    assert_true(same);
    lbm_case_free(&r);
  }
  if (rank == 0) {
    printf("%s %s %s, hs %s: %zu splits (%s) bitwise equal to 1 block (aos) after %lld steps\n",
           case_names[kind], lo.lattice->name, lbm_fs(&lo), simulation_hs_name(test_hs), ngrids,
           test_mixed ? "aos and soa mixed" : "soa", (long long)steps);
    lbm_case_free(&ref);
  }
}

static void check_case(case_kind_t kind, lbm_collision_t coll, lbm_precision_t prec) {
  check_case_grids(kind, coll, prec, default_grids, sizeof default_grids / sizeof default_grids[0]);
}

/* Every flow lattice: the cavity split along each axis alone and along all (2-D: along
 * x, y and both); SRT and TRT in both precisions on the CPU. On the GPU, where every block
 * size and variant is an OpenCL program to build (PoCL: 1-2 s each), TRT DP or SRT SP
 * (alternating over the lattices) split along all axes at once: the copies between the
 * blocks of a device and the kernels' ghost layers are the same code for every axis (the
 * other cases split 2x4x1 and 4x2x1 too, on the default lattice), and test_gpu_lbm holds
 * every lattice, variant and precision of the kernels bitwise to the CPU's. */
static void test_lattices(void **state) {
  const lattice_t *lats[] = {&lattice_d2q9, &lattice_d3q15, &lattice_d3q19, &lattice_d3q27};
  const int grids3[][3] = {{2, 1, 1}, {1, 2, 1}, {1, 1, 2}, {2, 2, 2}};
  const int grids2[][3] = {{2, 1, 1}, {1, 2, 1}, {2, 2, 1}};
  for (size_t l = 0; l < sizeof lats / sizeof lats[0]; ++l) {
    test_lattice = lats[l];
    for (int c = 0; c < 2; ++c)
      for (int p = 0; p < 2; ++p) {
        if (test_hs == SIMULATION_HS_GPU && (c == p || c != (int)(l % 2 == 0))) continue;
        const bool gpu = test_hs == SIMULATION_HS_GPU;
        if (lats[l]->d == 3)
          check_case_grids(CASE_CAVITY, (lbm_collision_t)c, (lbm_precision_t)p,
                           gpu ? grids3 + 3 : grids3, gpu ? 1 : 4);
        else
          check_case_grids(CASE_CAVITY, (lbm_collision_t)c, (lbm_precision_t)p,
                           gpu ? grids2 + 2 : grids2, gpu ? 1 : 3);
      }
  }
  test_lattice = NULL;
}

/* SRT and TRT in both precisions; on the GPU SRT SP and TRT DP (see test_lattices). */
static void test_cavity(void **state) {
  for (int c = 0; c < 2; ++c)
    for (int p = 0; p < 2; ++p)
      if (test_hs != SIMULATION_HS_GPU || c != p)
        check_case(CASE_CAVITY, (lbm_collision_t)c, (lbm_precision_t)p);
}

static void test_taylor_green(void **state) {
  for (int p = 0; p < 2; ++p) check_case(CASE_TAYLOR_GREEN, LBM_TRT, (lbm_precision_t)p);
}

static void test_channel_obstacle(void **state) {
  for (int p = 0; p < 2; ++p) check_case(CASE_CHANNEL_OBSTACLE, LBM_SRT, (lbm_precision_t)p);
}

/* MRT (default rates) on the channel with obstacles, DP, the Smagorinsky model with MRT
 * on the Taylor-Green flow, SP, the cumulant and D3Q13 on the cavity: on the CPU, and on the
 * GPU where the programs of MRT, which PoCL builds in about 9 s each, are few: the
 * Smagorinsky TRT there. */
static void test_collision_models(void **state) {
  const bool gpu = test_hs == SIMULATION_HS_GPU;
  if (!gpu) check_case(CASE_CHANNEL_OBSTACLE, LBM_MRT, LBM_DP);
  test_smagorinsky = 0.15;
  check_case(CASE_TAYLOR_GREEN, gpu ? LBM_TRT : LBM_MRT, LBM_SP);
  test_smagorinsky = 0;
  /* the cumulant on the cavity (a moving wall): D3Q27 SP on the CPU, D2Q9 DP on the GPU */
  const int grids2[][3] = {{2, 1, 1}, {1, 2, 1}, {2, 2, 1}};
  test_lattice = gpu ? &lattice_d2q9 : &lattice_d3q27;
  if (gpu) check_case_grids(CASE_CAVITY, LBM_CUMULANT, LBM_DP, grids2, 3);
  else check_case(CASE_CAVITY, LBM_CUMULANT, LBM_SP);
  /* D3Q13 (MRT only): DP on the CPU, SP on the GPU split along all axes */
  test_lattice = &lattice_d3q13;
  if (gpu) check_case_grids(CASE_CAVITY, LBM_MRT, LBM_SP, default_grids, 1);
  else check_case(CASE_CAVITY, LBM_MRT, LBM_DP);
  test_lattice = NULL;
}

/* 16-bit storage (lbm.precision fp16s and fp16c, float arithmetic): the cavity with SRT
 * (moving-wall links), the Taylor-Green flow with TRT (its non-equilibrium start across
 * block faces) and the channel with obstacles (solid blocks, body links, a force) in both
 * formats; on the CPU also the moment-space collisions (MRT with the Smagorinsky model, the
 * cumulant), on the GPU, where each is a program to build, not. */
static void test_store16(void **state) {
  const bool gpu = test_hs == SIMULATION_HS_GPU;
  for (int p = LBM_FP16S; p <= LBM_FP16C; ++p) {
    check_case(CASE_CAVITY, LBM_SRT, (lbm_precision_t)p);
    check_case(CASE_TAYLOR_GREEN, LBM_TRT, (lbm_precision_t)p);
    check_case(CASE_CHANNEL_OBSTACLE, p == LBM_FP16S ? LBM_SRT : LBM_TRT, (lbm_precision_t)p);
  }
  if (gpu) return;
  test_smagorinsky = 0.15;
  check_case(CASE_TAYLOR_GREEN, LBM_MRT, LBM_FP16S);
  test_smagorinsky = 0;
  test_lattice = &lattice_d3q27;
  check_case(CASE_CAVITY, LBM_CUMULANT, LBM_FP16C);
  test_lattice = NULL;
}

int main(int argc, char **argv) {
  mpi_test_init(&argc, &argv);
  bool bad = false;
  const char *skip[4];
  int nskip = 0;
  for (int a = 1; a < argc && !bad; ++a) {
    if (strcmp(argv[a], "--hs") == 0 && a + 1 < argc && strcmp(argv[a + 1], "gpu") == 0) {
      test_hs = SIMULATION_HS_GPU;
      ++a;
    } else if (strcmp(argv[a], "--in-place") == 0 && test_hs == SIMULATION_HS_GPU) {
      test_in_place = true;
    } else if (strcmp(argv[a], "--cpu-layout") == 0 && a + 1 < argc &&
               strcmp(argv[a + 1], "mixed") == 0) {
      test_mixed = 1;
      ++a;
    } else if (strcmp(argv[a], "--only") == 0 && a + 1 < argc) {
      cmocka_set_test_filter(argv[++a]); /* a test group of its own (the suite's minute) */
    } else if (strcmp(argv[a], "--skip") == 0 && a + 1 < argc && nskip < 4) {
      skip[nskip++] = argv[++a]; /* cmocka's skip filter takes one name */
    } else {
      bad = true;
    }
  }
  if (bad || (test_mixed && test_hs == SIMULATION_HS_GPU)) {
    fprintf(stderr, "usage: %s [--hs gpu [--in-place] | --cpu-layout mixed] [--only TEST | "
                    "--skip TEST ...]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  if (test_hs == SIMULATION_HS_GPU && !mpi_test_have_opencl()) {
    MPI_Finalize();
    return MPI_TEST_SKIPPED;
  }
  const struct CMUnitTest all[] = {
      cmocka_unit_test(test_cavity),
      cmocka_unit_test(test_taylor_green),
      cmocka_unit_test(test_channel_obstacle),
      cmocka_unit_test(test_lattices),
      cmocka_unit_test(test_collision_models),
      cmocka_unit_test(test_store16),
  };
  struct CMUnitTest tests[sizeof all / sizeof all[0]];
  size_t n = 0;
  for (size_t t = 0; t < sizeof all / sizeof all[0]; ++t) {
    bool skipped = false;
    for (int k = 0; k < nskip; ++k) skipped = skipped || strcmp(all[t].name, skip[k]) == 0;
    if (!skipped) tests[n++] = all[t];
  }
  return mpi_test_finish(_cmocka_run_group_tests("lbm_decomposition", tests, n, NULL, NULL));
}
