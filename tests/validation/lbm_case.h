/* Building blocks of the LBM validation tests: run a case and gather its fields. */
#ifndef LBM_CASE_H
#define LBM_CASE_H

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "lbm_sim.h"

/* The steps of the bitwise CPU/GPU comparisons of whole runs (test_lbm_gpu,
 * test_lbm_hetero): a difference shows in any step, and grows; under the sanitizers,
 * which check the code paths (every one is taken in the first steps), 40. */
#ifdef TESSERA_TEST_SANITIZED
enum { LBM_CASE_BITWISE_STEPS = 40 };
#else
enum { LBM_CASE_BITWISE_STEPS = 200 };
#endif

typedef struct lbm_case_result {
  tsr_status st;
  tsr_error_t err;
  double mass0, mass;   /* before the first and after the last step */
  double *rho, *u;      /* whole domain on rank 0 (NULL elsewhere); free with free() */
} lbm_case_result_t;

/* Where >= 0: the CPU layout (grid_layout_t) every lbm_case_run uses instead of the
 * options' own (a test run once per layout). */
static int lbm_case_layout = -1;

/* Parses "--cpu-layout aos|soa" (argc 3) into lbm_case_layout; 0 when the arguments are
 * that or nothing, else -1. */
static inline int lbm_case_args(int argc, char **argv) {
  if (argc == 1) return 0;
  if (argc != 3 || strcmp(argv[1], "--cpu-layout") != 0) return -1;
  if (strcmp(argv[2], "aos") == 0) lbm_case_layout = GRID_AOS;
  else if (strcmp(argv[2], "soa") == 0) lbm_case_layout = GRID_SOA;
  else return -1;
  return 0;
}

/* Runs `steps` steps of the case on comm; fields gathered on rank 0 of comm. */
static inline lbm_case_result_t lbm_case_run(MPI_Comm comm, const simulation_options_t *so,
                                             const lbm_options_t *lo_in, int64_t steps) {
  lbm_options_t opts = *lo_in, *lo = &opts;
  if (lbm_case_layout >= 0) opts.cpu_layout = (grid_layout_t)lbm_case_layout;
  lbm_case_result_t r;
  memset(&r, 0, sizeof r);
  lbm_sim_t *sim = NULL;
  int rank;
  MPI_Comm_rank(comm, &rank);
  tsr_status st = lbm_sim_create(comm, so, lo, &sim, &r.err);
  if (st == TSR_OK) st = lbm_sim_moments(sim, &r.err);
  if (st == TSR_OK) st = lbm_sim_mass(sim, &r.mass0, &r.err);
  if (st == TSR_OK) st = lbm_sim_step(sim, steps, &r.err);
  if (st == TSR_OK) st = lbm_sim_moments(sim, &r.err);
  if (st == TSR_OK) st = lbm_sim_mass(sim, &r.mass, &r.err);
  if (st == TSR_OK && rank == 0) {
    size_t n = (size_t)(so->domain.cells[0] * so->domain.cells[1] * so->domain.cells[2]);
    r.rho = malloc(n * sizeof *r.rho);
    r.u = malloc(3 * n * sizeof *r.u);
  }
  if (st == TSR_OK) st = lbm_sim_gather(sim, r.rho, r.u, &r.err);
  r.st = st;
  lbm_sim_free(&sim);
  return r;
}

static inline void lbm_case_free(lbm_case_result_t *r) {
  free(r->rho);
  free(r->u);
  r->rho = r->u = NULL;
}

static inline simulation_options_t lbm_case_domain(int nx, int ny, int nz, int bx, int by, int bz,
                                                   bool px, bool py, bool pz) {
  simulation_options_t so = simulation_options_default();
  so.domain.cells[0] = nx;
  so.domain.cells[1] = ny;
  so.domain.cells[2] = nz;
  so.domain.blocks[0] = bx;
  so.domain.blocks[1] = by;
  so.domain.blocks[2] = bz;
  so.domain.periodic[0] = px;
  so.domain.periodic[1] = py;
  so.domain.periodic[2] = pz;
  return so;
}

/* Two runs' fields on rank 0: values that differ in any bit, the largest relative
 * difference (density relative to itself, velocity to the flow's scale 0.1; NaN sticks)
 * and the largest |u| component of run a. n: cells of the domain. */
typedef struct lbm_case_diff {
  size_t unequal, values;
  double worst, umax;
} lbm_case_diff_t;

static inline lbm_case_diff_t lbm_case_compare(const lbm_case_result_t *a,
                                               const lbm_case_result_t *b, size_t n) {
  lbm_case_diff_t d = {0, 4 * n, 0, 0};
  for (size_t k = 0; k < 4 * n; ++k) {
    double x = k < n ? a->rho[k] : a->u[k - n], y = k < n ? b->rho[k] : b->u[k - n];
    double scale = k < n ? fabs(x) : 0.1;
    double rel = fabs(x - y) / scale;
    if (!(rel <= d.worst)) d.worst = rel;
    if (memcmp(&x, &y, sizeof x) != 0) ++d.unequal;
    if (k >= n && fabs(x) > d.umax) d.umax = fabs(x);
  }
  return d;
}

#endif
