/* Node configurations (node.h, simulation.h: hardware.configurations and hardware.nodes)
 * on 4 ranks that play two nodes through the node-name override TESSERA_NODE_NAME.
 *
 * Cases:
 *  - node_name: the override wins; unset, MPI_Get_processor_name; empty or not a host
 *    name (a blank, brackets), an error naming the variable.
 *  - two nodes: a configuration read from JSON text as the command line reads it; ranks
 *    0 and 1 call themselves "gpu07" (gpu_node: one hs gpu process on device 0, one hs
 *    cpu process with 3 threads), ranks 2 and 3 "cpu01" (cpu_node: two hs cpu processes
 *    with 2 threads). node_resolve gives every rank every rank's hs, device, threads,
 *    throughput, node name, place on the node and configuration; lbm_sim_create plans
 *    the same, sets the OpenMP threads of the CPU processes (rank 0's stay), gives the
 *    blocks of rank 0 hs gpu and the others hs cpu, and the lid-driven cavity then runs
 *    10 steps: mass kept, fields finite and equal to the CPU-only run.
 *  - rules (node_assign): the first matching pattern wins ("gpu-login" takes "gpu*" before
 *    its exact entry), exact names, [...] classes and ?, ranks of one node interleaved
 *    with another's, no configurations (every process hardware.hs), and its errors.
 *  - errors on every rank, through node_resolve and lbm_sim_create: a node name that
 *    matches no pattern, more processes on a node than its configuration lists; the
 *    same status and the same message on every rank; a device index the platform does
 *    not have fails on every rank, naming the node, configuration and process.
 *  - node lists (node_list_expand): ranges, zero padding, ":n", ranks per node from the
 *    configuration, and the messages of bad lists.
 * Checks that involve collectives gather every rank's findings first (agree), so a
 * failure on one rank fails the test on all ranks instead of hanging them. Needs 4
 * ranks and an OpenCL device (PoCL in CI); exit 77 (skipped) otherwise. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../unit/unit_test.h"
#include "config.h"
#include "cpu_threads.h"
#include "lbm.h"
#include "lbm_sim.h"
#include "mpi_test.h"
#include "node.h"
#include "selector.h"
#include "simulation.h"

enum { NRANKS = 4, STEPS = 10 };

/* Two node configurations and two patterns, plus the cavity they run. Communication is
 * free in the weights, so the blocks follow the throughputs (2:1:1:1). */
static const char two_nodes_json[] =
    "{\n"
    "  \"domain\": {\"cells\": [16, 16, 16], \"blocks\": [2, 2, 2]},\n"
    "  \"steps\": 10,\n"
    "  \"lbm\": {\"collision\": \"trt\", \"precision\": \"dp\", \"viscosity\": 0.05},\n"
    "  \"boundaries\": {\"y+\": {\"kind\": \"moving\", \"velocity\": [0.08, 0, 0]}},\n"
    "  \"hardware\": {\n"
    "    \"configurations\": [\n"
    "      {\"name\": \"gpu_node\",\n"
    "       \"processes\": [{\"hs\": \"gpu\", \"device\": 0, \"mlups\": 2},\n"
    "                     {\"hs\": \"cpu\", \"threads\": 3, \"mlups\": 1}]},\n"
    "      {\"name\": \"cpu_node\",\n"
    "       \"processes\": [{\"hs\": \"cpu\", \"threads\": 2, \"count\": 2, \"mlups\": 1}]}\n"
    "    ],\n"
    "    \"nodes\": [{\"match\": \"gpu*\", \"configuration\": \"gpu_node\"},\n"
    "              {\"match\": \"cpu[0-9]*\", \"configuration\": \"cpu_node\"}],\n"
    "    \"balance\": {\"network_gbs\": 1e6, \"device_gbs\": 1e6, \"latency_us\": 0}\n"
    "  }\n"
    "}\n";

/* The same configurations behind more patterns, for the rule order. */
static const char rules_json[] =
    "{\n"
    "  \"domain\": {\"cells\": [4, 4, 4]},\n"
    "  \"hardware\": {\n"
    "    \"configurations\": [\n"
    "      {\"name\": \"gpu_node\",\n"
    "       \"processes\": [{\"hs\": \"gpu\", \"device\": 0, \"mlups\": 2},\n"
    "                     {\"hs\": \"cpu\", \"threads\": 3, \"mlups\": 1}]},\n"
    "      {\"name\": \"cpu_node\",\n"
    "       \"processes\": [{\"hs\": \"cpu\", \"threads\": 2, \"count\": 2, \"mlups\": 1}]}\n"
    "    ],\n"
    "    \"nodes\": [{\"match\": \"gpu*\", \"configuration\": \"gpu_node\"},\n"
    "              {\"match\": \"gpu-login\", \"configuration\": \"cpu_node\"},\n"
    "              {\"match\": \"login\", \"configuration\": \"cpu_node\"},\n"
    "              {\"match\": \"cpu[0-9]*\", \"configuration\": \"cpu_node\"},\n"
    "              {\"match\": \"n[ab]?\", \"configuration\": \"gpu_node\"}]\n"
    "  }\n"
    "}\n";

/* What each test may leave behind when an assertion ends it early; teardown cleans up. */
static struct {
  int had_name;                 /* TESSERA_NODE_NAME was set before the test */
  char saved_name[NODE_NAME_MAX];
  int threads;                  /* cpu_threads_max before the test */
  config_t *doc;
  lbm_sim_t *sim;
  double *rho, *u, *rho_cpu, *u_cpu; /* rank 0: gathered fields */
} fx;

static int setup(void **state) {
  (void)state;
  const char *name = getenv(NODE_NAME_ENV);
  fx.had_name = name != NULL;
  snprintf(fx.saved_name, sizeof fx.saved_name, "%s", name ? name : "");
  fx.threads = cpu_threads_max();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  lbm_sim_free(&fx.sim);
  config_free(&fx.doc);
  free(fx.rho);
  free(fx.u);
  free(fx.rho_cpu);
  free(fx.u_cpu);
  fx.rho = fx.u = fx.rho_cpu = fx.u_cpu = NULL;
  if (fx.had_name) setenv(NODE_NAME_ENV, fx.saved_name, 1);
  else unsetenv(NODE_NAME_ENV);
  cpu_threads_set(fx.threads); /* lbm_sim_create's setting outlives the simulation */
  return 0;
}

static int my_rank(void) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

/* The first thing this rank found wrong. */
typedef struct found {
  int ok;
  char text[1024];
} found_t;

static void expect(found_t *f, int cond, const char *fmt, ...) TSR_PRINTF(3, 4);
static void expect(found_t *f, int cond, const char *fmt, ...) {
  if (cond || !f->ok) return;
  f->ok = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->text, sizeof f->text, fmt, ap);
  va_end(ap);
}

/* Collective: when any rank found something wrong, the test fails on every rank with the
 * lowest such rank's text. */
static void agree(const found_t *f, const char *what) {
  int size = 1, rank = my_rank();
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int mine = f->ok ? size : rank, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == size) return;
  char text[sizeof f->text];
  memcpy(text, f->text, sizeof text);
  MPI_Bcast(text, (int)sizeof text, MPI_CHAR, first, MPI_COMM_WORLD);
  fail_msg("%s: rank %d: %s", what, first, text);
}

/* Reads the options as `tessera run` does; the same on every rank. */
static void read_options(const char *json, simulation_options_t *so, lbm_options_t *lo) {
  found_t f = {.ok = 1};
  tsr_error_t err;
  tsr_error_clear(&err);
  tsr_status st = config_parse(json, strlen(json), "node_test.json", &fx.doc, &err);
  if (st == TSR_OK) st = simulation_options_read(fx.doc, so, &err);
  if (st == TSR_OK) st = lbm_options_read(fx.doc, &so->domain, lo, &err);
  if (st == TSR_OK) st = config_check_unknown(fx.doc, &err);
  config_free(&fx.doc);
  expect(&f, st == TSR_OK, "reading the configuration: %s", err.text);
  agree(&f, "options");
}

static void set_node_name(const char *name) {
  if (setenv(NODE_NAME_ENV, name, 1) != 0) fail_msg("setenv %s=%s failed", NODE_NAME_ENV, name);
}

/* The hardware a process should get. */
typedef struct want {
  simulation_hs_t hs;
  int device, threads;
  double mlups;
  const char *node;
  int index, configuration;
} want_t;

static void expect_process(found_t *f, const node_process_t *p, const want_t *w, int r,
                           const char *how) {
  expect(f, p->proc.hs == w->hs, "%s: rank %d: hs %s, expected %s", how, r,
         simulation_hs_name(p->proc.hs), simulation_hs_name(w->hs));
  expect(f, p->proc.device == w->device, "%s: rank %d: device %d, expected %d", how, r,
         p->proc.device, w->device);
  expect(f, p->proc.threads == w->threads, "%s: rank %d: threads %d, expected %d", how, r,
         p->proc.threads, w->threads);
  expect(f, p->proc.mlups == w->mlups, "%s: rank %d: mlups %g, expected %g", how, r,
         p->proc.mlups, w->mlups);
  expect(f, p->proc.count == 1, "%s: rank %d: count %d, expected 1", how, r, p->proc.count);
  expect(f, strcmp(p->node, w->node) == 0, "%s: rank %d: node \"%s\", expected \"%s\"", how, r,
         p->node, w->node);
  expect(f, p->index == w->index, "%s: rank %d: index on node %d, expected %d", how, r,
         p->index, w->index);
  expect(f, p->configuration == w->configuration, "%s: rank %d: configuration %d, expected %d",
         how, r, p->configuration, w->configuration);
}

/* For the pure functions: the same checks, failing at once. */
static void assert_processes(const node_process_t *p, const want_t *w, int n, const char *how) {
  found_t f = {.ok = 1};
  for (int r = 0; r < n; ++r) expect_process(&f, &p[r], &w[r], r, how);
  if (!f.ok) fail_msg("%s", f.text);
}

static const want_t two_nodes_want[NRANKS] = {
    {SIMULATION_HS_GPU, 0, 0, 2.0, "gpu07", 0, 0},
    {SIMULATION_HS_CPU, -1, 3, 1.0, "gpu07", 1, 0},
    {SIMULATION_HS_CPU, -1, 2, 1.0, "cpu01", 0, 1},
    {SIMULATION_HS_CPU, -1, 2, 1.0, "cpu01", 1, 1},
};

/* ------------------------------------------------------------------------------------ */

static void test_node_name(void **state) {
  (void)state;
  tsr_error_t err;
  char name[NODE_NAME_MAX], real[MPI_MAX_PROCESSOR_NAME + 1];
  int len = 0;
  MPI_Get_processor_name(real, &len);
  real[len] = '\0';
  set_node_name(my_rank() < 2 ? "gpu07" : "cpu01");
  ASSERT_OK(node_name(name, sizeof name, &err));
  assert_string_equal(name, my_rank() < 2 ? "gpu07" : "cpu01");
  /* what is not a host name is an error naming the variable, also an empty value (a
     script's unset variable, which would silently give the processor name) */
  set_node_name("");
  ASSERT_ERR(node_name(name, sizeof name, &err), TSR_ERR_INVALID, NODE_NAME_ENV " = '': allowed");
  set_node_name("gpu 07");
  ASSERT_ERR(node_name(name, sizeof name, &err), TSR_ERR_INVALID,
             NODE_NAME_ENV " = 'gpu 07': allowed are 1 to 255 letters, digits");
  set_node_name("gpu[07]");
  ASSERT_ERR(node_name(name, sizeof name, &err), TSR_ERR_INVALID, NODE_NAME_ENV " = 'gpu[07]'");
  set_node_name("n-1.rack_2");
  ASSERT_OK(node_name(name, sizeof name, &err));
  assert_string_equal(name, "n-1.rack_2");
  unsetenv(NODE_NAME_ENV);
  ASSERT_OK(node_name(name, sizeof name, &err));
  assert_string_equal(name, real);
  assert_true(name[0] != '\0');
  if (my_rank() == 0)
    printf("node_name: %s=gpu07 gives \"gpu07\"; unset gives the processor name \"%s\"; "
           "empty or not a host name is an error\n", NODE_NAME_ENV, real);
}

/* Runs lbm_sim_moments and lbm_sim_mass. */
static tsr_status sim_mass(lbm_sim_t *sim, double *mass, tsr_error_t *err) {
  tsr_status st = lbm_sim_moments(sim, err);
  if (st == TSR_OK) st = lbm_sim_mass(sim, mass, err);
  return st;
}

static void test_two_nodes(void **state) {
  (void)state;
  const int rank = my_rank();
  simulation_options_t so;
  lbm_options_t lo;
  read_options(two_nodes_json, &so, &lo);
  found_t f = {.ok = 1};
  tsr_error_t err;
  tsr_error_clear(&err);
  set_node_name(rank < 2 ? "gpu07" : "cpu01");

  /* node_resolve: every rank knows every rank's hardware */
  node_process_t procs[NRANKS];
  tsr_status st = node_resolve(MPI_COMM_WORLD, &so.hardware, procs, &err);
  expect(&f, st == TSR_OK, "node_resolve: %s", err.text);
  for (int r = 0; st == TSR_OK && r < NRANKS; ++r)
    expect_process(&f, &procs[r], &two_nodes_want[r], r, "node_resolve");
  agree(&f, "node_resolve");
  if (rank == 0) {
    printf("two nodes, resolved:");
    for (int r = 0; r < NRANKS; ++r)
      printf(" rank %d %s/%s[%d] hs %s %s %d;", r, procs[r].node,
             so.hardware.configurations[procs[r].configuration].name, procs[r].index,
             simulation_hs_name(procs[r].proc.hs),
             procs[r].proc.hs == SIMULATION_HS_GPU ? "device" : "threads",
             procs[r].proc.hs == SIMULATION_HS_GPU ? procs[r].proc.device : procs[r].proc.threads);
    printf("\n");
  }

  /* lbm_sim_create: the same plan, the threads set, rank 0's blocks hs gpu */
  const int threads_before = cpu_threads_max();
  st = lbm_sim_create(MPI_COMM_WORLD, &so, &lo, &fx.sim, &err);
  expect(&f, st == TSR_OK, "lbm_sim_create: %s", err.text);
  agree(&f, "lbm_sim_create");
  const plan_t *plan = lbm_sim_plan(fx.sim);
  const patch_t *patch = lbm_sim_patch(fx.sim);
  expect(&f, plan->nranks == NRANKS, "plan for %d ranks, expected %d", plan->nranks, NRANKS);
  for (int r = 0; f.ok && r < NRANKS; ++r) {
    expect_process(&f, &plan->procs[r], &two_nodes_want[r], r, "lbm_sim_plan");
    expect(&f, plan->mlups[r] == two_nodes_want[r].mlups,
           "plan: rank %d weighs %g MLUPS, expected %g", r, plan->mlups[r],
           two_nodes_want[r].mlups);
    expect(&f, patch_rank_block_count(patch, r) >= 1, "rank %d has no block", r);
  }
  const int threads = cpu_threads_max();
  const int want_threads = rank == 0 ? threads_before : two_nodes_want[rank].threads;
  expect(&f, threads == want_threads, "cpu_threads_max() = %d after lbm_sim_create, expected %d",
         threads, want_threads);
  int ngpu_blocks = 0;
  for (int32_t id = 0; id < patch_block_count(patch); ++id) {
    const block_info_t *b = patch_block(patch, id);
    uint32_t want_hs = b->rank == 0 ? SELECTOR_HS_GPU : SELECTOR_HS_CPU;
    expect(&f, b->hs == want_hs, "block %d of rank %d has hs id %u, expected %u (%s)", (int)id,
           b->rank, (unsigned)b->hs, (unsigned)want_hs, b->rank == 0 ? "gpu" : "cpu");
    ngpu_blocks += b->hs == SELECTOR_HS_GPU;
  }
  expect(&f, ngpu_blocks >= 1, "no block has hs gpu");
  agree(&f, "the simulation's hardware");
  int all_threads[NRANKS] = {0};
  MPI_Gather(&threads, 1, MPI_INT, all_threads, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("two nodes, lbm_sim_create:");
    for (int r = 0; r < NRANKS; ++r)
      printf(" rank %d %d block(s) hs %s, %d OpenMP thread(s);", r,
             (int)patch_rank_block_count(patch, r), simulation_hs_name(plan->procs[r].proc.hs),
             all_threads[r]);
    printf("\n");
  }

  /* it runs: mass kept, fields finite, the lid moves the fluid */
  const size_t n = 16 * 16 * 16;
  double mass0 = 0, mass = 0;
  if (rank == 0) {
    fx.rho = malloc(n * sizeof *fx.rho);
    fx.u = malloc(3 * n * sizeof *fx.u);
    fx.rho_cpu = malloc(n * sizeof *fx.rho_cpu);
    fx.u_cpu = malloc(3 * n * sizeof *fx.u_cpu);
    expect(&f, fx.rho && fx.u && fx.rho_cpu && fx.u_cpu, "out of memory");
  }
  agree(&f, "allocation");
  st = sim_mass(fx.sim, &mass0, &err);
  if (st == TSR_OK) st = lbm_sim_step(fx.sim, STEPS, &err);
  if (st == TSR_OK) st = sim_mass(fx.sim, &mass, &err);
  if (st == TSR_OK) st = lbm_sim_gather(fx.sim, fx.rho, fx.u, &err);
  expect(&f, st == TSR_OK, "running %d steps: %s", STEPS, err.text);
  agree(&f, "running");
  expect(&f, isfinite(mass0) && isfinite(mass) && mass0 > 0 &&
                 fabs(mass - mass0) <= 1e-12 * mass0,
         "mass %.17g after %d steps, %.17g before", mass, STEPS, mass0);
  double umax = 0;
  if (rank == 0)
    for (size_t k = 0; k < 4 * n; ++k) {
      double v = k < n ? fx.rho[k] : fx.u[k - n];
      expect(&f, isfinite(v), "value %zu of the gathered fields is %g", k, v);
      if (k >= n && fabs(v) > umax) umax = fabs(v);
    }
  expect(&f, rank != 0 || umax > 1e-3, "|u| max = %g: the lid moved nothing", umax);
  agree(&f, "the run");
  lbm_sim_free(&fx.sim);

  /* the same case on the CPU only (no configurations: every process hardware.hs) */
  so.hardware.nconfigurations = 0;
  so.hardware.nnodes = 0;
  st = lbm_sim_create(MPI_COMM_WORLD, &so, &lo, &fx.sim, &err);
  if (st == TSR_OK) st = lbm_sim_step(fx.sim, STEPS, &err);
  if (st == TSR_OK) st = lbm_sim_moments(fx.sim, &err);
  if (st == TSR_OK) st = lbm_sim_gather(fx.sim, fx.rho_cpu, fx.u_cpu, &err);
  expect(&f, st == TSR_OK, "the CPU-only run: %s", err.text);
  agree(&f, "the CPU-only run");
  double worst = 0;
  size_t unequal = 0;
  if (rank == 0) {
    for (size_t k = 0; k < 4 * n; ++k) {
      double a = k < n ? fx.rho_cpu[k] : fx.u_cpu[k - n], b = k < n ? fx.rho[k] : fx.u[k - n];
      double rel = fabs(a - b) / (k < n ? fabs(a) : 0.08);
      if (!(rel <= worst)) worst = rel; /* NaN sticks */
      unequal += memcmp(&a, &b, sizeof a) != 0;
    }
    expect(&f, worst <= 1e-12, "1 GPU + 3 CPU processes vs CPU only: largest relative difference "
           "%g (%zu of %zu values differ)", worst, unequal, 4 * n);
    printf("two nodes, %d steps: mass %.15g (initially %.15g), |u| max %.3g, vs the CPU-only run "
           "%zu of %zu values differ, largest relative difference %.3g\n",
           STEPS, mass, mass0, umax, unequal, 4 * n, worst);
  }
  agree(&f, "GPU + CPU vs CPU only");
}

/* ------------------------------------------------------------------------------------ */

static void test_assign_rules(void **state) {
  (void)state;
  simulation_options_t so;
  lbm_options_t lo;
  read_options(rules_json, &so, &lo);
  const simulation_hardware_t *hw = &so.hardware;
  tsr_error_t err;
  node_process_t p[8];

  /* "gpu-login" takes "gpu*" (first) before its exact entry; "login" exact; "na7" by
     n[ab]?; "cpu3x" by cpu[0-9]*; two nodes' ranks interleaved keep their order */
  const char *const mixed[] = {"gpu-login", "login", "gpu-login", "na7", "cpu3x", "login"};
  const want_t mixed_want[] = {
      {SIMULATION_HS_GPU, 0, 0, 2.0, "gpu-login", 0, 0},
      {SIMULATION_HS_CPU, -1, 2, 1.0, "login", 0, 1},
      {SIMULATION_HS_CPU, -1, 3, 1.0, "gpu-login", 1, 0},
      {SIMULATION_HS_GPU, 0, 0, 2.0, "na7", 0, 0},
      {SIMULATION_HS_CPU, -1, 2, 1.0, "cpu3x", 0, 1},
      {SIMULATION_HS_CPU, -1, 2, 1.0, "login", 1, 1},
  };
  ASSERT_OK(node_assign(hw, mixed, 6, p, &err));
  assert_processes(p, mixed_want, 6, "rules");

  const char *const interleaved[] = {"cpu01", "gpu07", "cpu01", "gpu07"};
  const want_t interleaved_want[] = {
      {SIMULATION_HS_CPU, -1, 2, 1.0, "cpu01", 0, 1},
      {SIMULATION_HS_GPU, 0, 0, 2.0, "gpu07", 0, 0},
      {SIMULATION_HS_CPU, -1, 2, 1.0, "cpu01", 1, 1},
      {SIMULATION_HS_CPU, -1, 3, 1.0, "gpu07", 1, 0},
  };
  ASSERT_OK(node_assign(hw, interleaved, 4, p, &err));
  assert_processes(p, interleaved_want, 4, "interleaved");

  /* names no pattern matches: the class needs a digit, ? one character, case counts */
  const char *const unmatched[][3] = {{"gpu1", "gpu1", "nc7"}, {"gpu1", "gpu1", "cpux"},
                                      {"gpu1", "gpu1", "na"}, {"gpu1", "gpu1", "LOGIN"}};
  for (int k = 0; k < 4; ++k) {
    char frag[128];
    snprintf(frag, sizeof frag, "node \"%s\" (rank 2) matches no entry of hardware.nodes",
             unmatched[k][2]);
    ASSERT_ERR(node_assign(hw, unmatched[k], 3, p, &err), TSR_ERR_INVALID, frag);
    ASSERT_HAS("\"gpu*\", \"gpu-login\", \"login\", \"cpu[0-9]*\", \"n[ab]?\"");
    ASSERT_HAS(NODE_NAME_ENV);
  }

  /* one node more than full: it is named, with its rule and what its configuration lists */
  const char *const overfull[] = {"cpu1", "gpu1", "cpu1", "cpu1"};
  ASSERT_ERR(node_assign(hw, overfull, 4, p, &err), TSR_ERR_INVALID,
             "node \"cpu1\" runs 3 processes, and its configuration \"cpu_node\" "
             "(hardware.nodes[3] matches it) lists 2");
  const char *const full[] = {"cpu1", "gpu1", "cpu1", "gpu1"};
  ASSERT_OK(node_assign(hw, full, 4, p, &err));
  ASSERT_ERR(node_assign(hw, full, 0, p, &err), TSR_ERR_INVALID, "cannot place 0 processes");

  /* without configurations every process is hardware.hs, whatever its name */
  simulation_hardware_t plain = simulation_options_default().hardware;
  plain.hs = SIMULATION_HS_GPU;
  const char *const any[] = {"x", "y", "x"};
  const want_t any_want[] = {
      {SIMULATION_HS_GPU, -1, 0, 0.0, "x", 0, -1},
      {SIMULATION_HS_GPU, -1, 0, 0.0, "y", 0, -1},
      {SIMULATION_HS_GPU, -1, 0, 0.0, "x", 1, -1},
  };
  ASSERT_OK(node_assign(&plain, any, 3, p, &err));
  assert_processes(p, any_want, 3, "no configurations, hs gpu");
  plain.hs = SIMULATION_HS_CPU;
  ASSERT_OK(node_assign(&plain, any, 3, p, &err));
  for (int r = 0; r < 3; ++r) assert_int_equal(p[r].proc.hs, SIMULATION_HS_CPU);

  if (my_rank() == 0)
    printf("rules: gpu-login -> gpu_node (\"gpu*\" first), login -> cpu_node (exact), na7 -> "
           "gpu_node (\"n[ab]?\"), cpu3x -> cpu_node (\"cpu[0-9]*\"); nc7, cpux, na, LOGIN "
           "match nothing; no configurations: hardware.hs for all\n");
}

/* ------------------------------------------------------------------------------------ */

/* Collective: st and err are the same on every rank and err holds every fragment. */
static void expect_error_everywhere(found_t *f, tsr_status st, const tsr_error_t *err,
                                    const char *const *frags, const char *how) {
  expect(f, st == TSR_ERR_INVALID, "%s returned %d (%s), expected %d", how, (int)st, err->text,
         (int)TSR_ERR_INVALID);
  expect(f, err->code == TSR_ERR_INVALID, "%s: error code %d, expected %d", how, (int)err->code,
         (int)TSR_ERR_INVALID);
  for (int k = 0; frags[k]; ++k)
    expect(f, strstr(err->text, frags[k]) != NULL, "%s: \"%s\" lacks \"%s\"", how, err->text,
           frags[k]);
  char first[TSR_ERROR_TEXT_MAX];
  memcpy(first, err->text, sizeof first);
  MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
  expect(f, strcmp(first, err->text) == 0, "%s: message \"%s\", and rank 0's is \"%s\"", how,
         err->text, first);
}

/* Node names per rank, then node_resolve and lbm_sim_create must both fail on every rank
 * with the fragments. */
static void check_error(const char *const names[NRANKS], const char *const *frags,
                        const char *label) {
  const int rank = my_rank();
  simulation_options_t so;
  lbm_options_t lo;
  read_options(two_nodes_json, &so, &lo);
  set_node_name(names[rank]);
  found_t f = {.ok = 1};
  tsr_error_t err;
  node_process_t procs[NRANKS];
  tsr_error_clear(&err);
  tsr_status st = node_resolve(MPI_COMM_WORLD, &so.hardware, procs, &err);
  expect_error_everywhere(&f, st, &err, frags, "node_resolve");
  char resolved[TSR_ERROR_TEXT_MAX];
  memcpy(resolved, err.text, sizeof resolved);
  tsr_error_clear(&err);
  st = lbm_sim_create(MPI_COMM_WORLD, &so, &lo, &fx.sim, &err);
  expect_error_everywhere(&f, st, &err, frags, "lbm_sim_create");
  expect(&f, fx.sim == NULL, "lbm_sim_create failed and gave a simulation");
  agree(&f, label);
  if (rank == 0) printf("%s: every rank: %s\n", label, resolved);
}

static void test_unmatched_node(void **state) {
  (void)state;
  const char *const names[NRANKS] = {"gpu07", "gpu07", "login1", "login1"};
  const char *const frags[] = {"node \"login1\" (rank 2) matches no entry of hardware.nodes",
                               "\"gpu*\", \"cpu[0-9]*\"", NULL};
  check_error(names, frags, "unmatched node");
}

static void test_overfull_node(void **state) {
  (void)state;
  const char *const names[NRANKS] = {"cpu01", "cpu01", "cpu01", "cpu01"};
  const char *const frags[] = {
      "node \"cpu01\" runs 4 processes, and its configuration \"cpu_node\"", "lists 2", NULL};
  check_error(names, frags, "overfull node");
}

static void test_overfull_gpu_node(void **state) {
  (void)state;
  const char *const names[NRANKS] = {"gpu07", "cpu01", "gpu07", "gpu07"};
  const char *const frags[] = {
      "node \"gpu07\" runs 3 processes, and its configuration \"gpu_node\"", "lists 2", NULL};
  check_error(names, frags, "overfull gpu node");
}

/* The entry's device index is the one opened: one past the last device of the platform
 * hardware.opencl picks fails on every rank, named by node, configuration and place. */
static void test_missing_device(void **state) {
  (void)state;
  const int rank = my_rank();
  simulation_options_t so;
  lbm_options_t lo;
  read_options(two_nodes_json, &so, &lo);
  found_t f = {.ok = 1};
  tsr_error_t err;
  tsr_error_clear(&err);
  opencl_device_desc_t *list = NULL;
  size_t n = 0;
  tsr_status st = opencl_list_devices(&list, &n, &err);
  int ndev = 0; /* devices of the first platform that has one (opencl_select_default) */
  for (size_t k = 0; st == TSR_OK && k < n; ++k) ndev += list[k].platform == list[0].platform;
  free(list);
  expect(&f, st == TSR_OK && ndev >= 1, "listing OpenCL devices: %s", err.text);
  agree(&f, "OpenCL devices");
  so.hardware.configurations[0].entries[0].device = ndev;
  set_node_name(rank < 2 ? "gpu07" : "cpu01");
  node_process_t procs[NRANKS];
  st = node_resolve(MPI_COMM_WORLD, &so.hardware, procs, &err);
  expect(&f, st == TSR_OK, "node_resolve: %s", err.text);
  expect(&f, st != TSR_OK || procs[0].proc.device == ndev, "rank 0 resolved device %d, expected %d",
         procs[0].proc.device, ndev);
  char frag[96];
  snprintf(frag, sizeof frag, "OpenCL device %d does not exist on platform", ndev);
  const char *const frags[] = {
      "node \"gpu07\", configuration \"gpu_node\", process 0 (hs gpu)", frag, NULL};
  tsr_error_clear(&err);
  st = lbm_sim_create(MPI_COMM_WORLD, &so, &lo, &fx.sim, &err);
  expect_error_everywhere(&f, st, &err, frags, "lbm_sim_create");
  expect(&f, fx.sim == NULL, "lbm_sim_create failed and gave a simulation");
  agree(&f, "missing device");
  if (rank == 0)
    printf("device index %d (the platform has %d): every rank: %s\n", ndev, ndev, err.text);
}

/* ------------------------------------------------------------------------------------ */

/* list expands to exactly want[0..n-1]. */
static void assert_expands(const simulation_hardware_t *hw, const char *list, int max_ranks,
                           const char *const *want, int n) {
  tsr_error_t err;
  char **names = NULL;
  int got = -1;
  tsr_error_clear(&err);
  tsr_status st = node_list_expand(hw, list, max_ranks, &names, &got, &err);
  if (st != TSR_OK) fail_msg("node_list_expand(\"%s\") failed: %s", list, err.text);
  char text[1024] = "";
  for (int k = 0; k < got; ++k)
    snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", k ? "," : "", names[k]);
  int same = got == n;
  for (int k = 0; same && k < n; ++k) same = strcmp(names[k], want[k]) == 0;
  node_names_free(names, got);
  if (!same)
    fail_msg("node_list_expand(\"%s\") gave %d names: %s; expected %d", list, got, text, n);
}

/* list fails with a message containing frag, and gives nothing. */
static void assert_list_error(const simulation_hardware_t *hw, const char *list, const char *frag) {
  tsr_error_t err;
  char *dummy[1] = {NULL};
  char **names = dummy; /* anything but NULL: it must be reset */
  int n = -1;
  ASSERT_ERR(node_list_expand(hw, list, 64, &names, &n, &err), TSR_ERR_INVALID, frag);
  assert_null(names);
  assert_int_equal(n, 0);
}

static void test_list_expand(void **state) {
  (void)state;
  simulation_options_t so;
  lbm_options_t lo;
  read_options(two_nodes_json, &so, &lo);
  const simulation_hardware_t *hw = &so.hardware;

  /* gpu* nodes run 2 ranks (gpu_node lists 2), cpu01..03 2 as given, login 1 as given */
  const char *const mixed[] = {"gpu1",  "gpu1",  "gpu2",  "gpu2",  "cpu01", "cpu01",
                               "cpu02", "cpu02", "cpu03", "cpu03", "login"};
  assert_expands(hw, "gpu[1-2],cpu[01-03]:2,login:1", 64, mixed, 11);
  const char *const padded[] = {"cpu08", "cpu08", "cpu09", "cpu09",
                                "cpu10", "cpu10", "cpu11", "cpu11"};
  assert_expands(hw, "cpu[08-11]", 64, padded, 8);
  const char *const unpadded[] = {"gpu9", "gpu10"};
  assert_expands(hw, "gpu[9-10]:1", 64, unpadded, 2);
  const char *const suffixed[] = {"rack1-gpu", "rack1-gpu", "rack1-gpu", "rack2-gpu",
                                  "rack2-gpu", "rack2-gpu"};
  assert_expands(hw, "rack[1-2]-gpu:3", 64, suffixed, 6);
  assert_expands(hw, "cpu[01-03]", 6, mixed + 4, 6);
  {
    tsr_error_t err;
    char **names = NULL;
    int n = -1;
    ASSERT_ERR(node_list_expand(hw, "cpu[01-03]", 5, &names, &n, &err), TSR_ERR_INVALID,
               "node list: more than 5 ranks");
    assert_null(names);
  }

  /* "login" matches no pattern, so its ranks must be given */
  assert_list_error(hw, "gpu[1-2],cpu[01-03]:2,login",
                    "node list: node \"login\" matches no entry of hardware.nodes; give its "
                    "ranks as \"login:N\"");
  assert_list_error(hw, "cpu[3-1]:1",
                    "\"cpu[3-1]\": the range must be [first-last] with first <= last");
  assert_list_error(hw, "gpu1,", "node list: \"gpu1,\" ends with a comma");
  assert_list_error(hw, "x:0", "node list: \"x:0\": the ranks after ':' must be 1..4096");
  assert_list_error(hw, "x:", "the ranks after ':' must be 1..4096");
  assert_list_error(hw, "x:2y", "the ranks after ':' must be 1..4096");
  assert_list_error(hw, "x: 2", "the ranks after ':' must be 1..4096");
  assert_list_error(hw, "x:99999999999999999999", "the ranks after ':' must be 1..4096");
  assert_list_error(hw, "a[1-2]b[3-4]:1", "\"a[1-2]b[3-4]\": at most one range per name");
  assert_list_error(hw, "cpu[1-]", "a range is written [first-last], e.g. cpu[01-16]");
  assert_list_error(hw, "cpu[a-b]", "a range is written [first-last]");
  assert_list_error(hw, "cpu[1-2", "a range is written [first-last]");
  assert_list_error(hw, "", "node list: empty");
  assert_list_error(hw, ",gpu1", "node list: item 0 characters long");
  assert_list_error(hw, "gpu1,,gpu2", "node list: item 0 characters long");
  assert_list_error(hw, ":2", "node list: an item has no node name");
  assert_list_error(hw, "gpu[1-40]", "node list: more than 64 ranks");
  assert_list_error(hw, "gpu[1-99999999]",
                    "\"gpu[1-99999999]\": 99999999 nodes in one range; a range holds at most 65536");

  /* without configurations every node runs 1 rank unless told */
  simulation_hardware_t plain = simulation_options_default().hardware;
  const char *const ones[] = {"login", "a1", "a2", "a3", "b", "b"};
  assert_expands(&plain, "login,a[1-3],b:2", 64, ones, 6);

  if (my_rank() == 0)
    printf("node lists: gpu[1-2],cpu[01-03]:2,login:1 -> gpu1 x2, gpu2 x2, cpu01..03 x2, login; "
           "bare \"login\", [3-1], a trailing comma, x:0 and two ranges are refused\n");
}

int main(int argc, char **argv) {
  mpi_test_init(&argc, &argv);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != NRANKS) {
    if (my_rank() == 0)
      printf("skipped: test_node plays two nodes on %d ranks, not %d\n", NRANKS, size);
    MPI_Finalize();
    return MPI_TEST_SKIPPED;
  }
  if (!mpi_test_have_opencl()) {
    MPI_Finalize();
    return MPI_TEST_SKIPPED;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_node_name, setup, teardown),
      cmocka_unit_test_setup_teardown(test_two_nodes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_assign_rules, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unmatched_node, setup, teardown),
      cmocka_unit_test_setup_teardown(test_overfull_node, setup, teardown),
      cmocka_unit_test_setup_teardown(test_overfull_gpu_node, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_device, setup, teardown),
      cmocka_unit_test_setup_teardown(test_list_expand, setup, teardown),
  };
  return mpi_test_finish(cmocka_run_group_tests_name("node", tests, NULL, NULL));
}
