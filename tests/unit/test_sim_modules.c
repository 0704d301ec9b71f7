/* sim: what the assembly derives from the modules' declarations, without a run.
 *
 * Checks sim_exchange_due (which fields travel before which sweep) on step orders of one
 * and two modules: a field written and read across faces by one sweep (the LBM) travels
 * before it every step; a field written by one sweep and read by a later one travels
 * once, before the first reader after the writer, not before the second reader; a field
 * nobody writes travels before every reader; a reader placed before its writer in the
 * step gets the value of the previous step, exchanged once.
 * Checks sim_exchange_round (hardware.exchange merged): a field travels in the round of
 * the first sweep after its last writer in the step (the coupled flow and temperature:
 * both fields in the flow's round), never in a round before its writer; and
 * sim_exchange_rounds (the rounds a step's declarations need, for the plan's latency):
 * 1 merged and 2 per sweep for the coupled pair, 1 for a single module.
 * Checks sim_register on modules that only declare: the run's fs is the union of the
 * modules' switches; a field or a quantity declared twice, and a sweep that reads or
 * writes an undeclared field, are errors naming the modules, the sweep and the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "module.h"
#include "registry.h"
#include "rounds.h"
#include "sim.h"
#include "tsr_error.h"
#include "unit_test.h"

static void test_exchange_one_sweep(void **state) {
  (void)state;
  const module_sweep_t lbm = {.name = "lbm", .reads_ghosts = {"pdf"}, .nreads_ghosts = 1,
                              .writes = {"pdf"}, .nwrites = 1};
  const module_sweep_t *steps[] = {&lbm};
  assert_true(rounds_due(steps, 1, 0, "pdf"));
}

/* flow writes u (no ghosts read); scalar reads u's ghosts and writes T; force reads T's
   ghosts (a second reader of u too, in its cells only) */
static void test_exchange_two_modules(void **state) {
  (void)state;
  const module_sweep_t flow = {.name = "flow", .reads_ghosts = {"pdf"}, .nreads_ghosts = 1,
                               .writes = {"pdf", "u"}, .nwrites = 2};
  const module_sweep_t scalar = {.name = "scalar", .reads_ghosts = {"u", "g"},
                                 .nreads_ghosts = 2, .writes = {"g"}, .nwrites = 1};
  const module_sweep_t post = {.name = "post", .reads_ghosts = {"u"}, .nreads_ghosts = 1,
                               .reads = {"g"}, .nreads = 1};
  const module_sweep_t *steps[] = {&flow, &scalar, &post};
  assert_true(rounds_due(steps, 3, 0, "pdf"));
  assert_true(rounds_due(steps, 3, 1, "u"));  /* flow wrote it */
  assert_false(rounds_due(steps, 3, 2, "u")); /* scalar's exchange still holds */
  assert_true(rounds_due(steps, 3, 1, "g"));  /* written by scalar itself last step */
  /* the reader before the writer: post reads u before flow writes it in the next order */
  const module_sweep_t *other[] = {&post, &flow, &scalar};
  assert_false(rounds_due(other, 3, 0, "u")); /* scalar's exchange, last step */
  assert_true(rounds_due(other, 3, 2, "u"));
  const module_sweep_t *reversed[] = {&scalar, &post, &flow};
  assert_true(rounds_due(reversed, 3, 0, "u")); /* flow wrote it at the end of the step */
  assert_false(rounds_due(reversed, 3, 1, "u"));
}

/* the coupled run: the flow writes its populations and u; the temperature reads u in its
   own cells, writes its populations and the force */
static void test_exchange_rounds_merged(void **state) {
  (void)state;
  const module_sweep_t flow = {.name = "flow", .reads_ghosts = {"f"}, .nreads_ghosts = 1,
                               .reads = {"force"}, .nreads = 1, .writes = {"f", "u"},
                               .nwrites = 2};
  const module_sweep_t temp = {.name = "temp", .reads_ghosts = {"g"}, .nreads_ghosts = 1,
                               .reads = {"u"}, .nreads = 1, .writes = {"g", "force"},
                               .nwrites = 2};
  const module_sweep_t *steps[] = {&flow, &temp};
  assert_int_equal(rounds_round(steps, 0, "f"), 0);
  assert_int_equal(rounds_round(steps, 1, "g"), 0); /* with f, at the step's start */
  /* a reader of u's ghosts after the flow: u travels in its own round, not before flow */
  const module_sweep_t post = {.name = "post", .reads_ghosts = {"u", "g"}, .nreads_ghosts = 2};
  const module_sweep_t *three[] = {&flow, &temp, &post};
  assert_int_equal(rounds_round(three, 2, "u"), 1);
  assert_int_equal(rounds_round(three, 2, "g"), 2); /* temp wrote it */
  const module_sweep_t *swapped[] = {&temp, &flow};
  assert_int_equal(rounds_round(swapped, 1, "f"), 0);
  assert_int_equal(rounds_round(swapped, 0, "g"), 0);
}

static void test_exchange_rounds_counted(void **state) {
  (void)state;
  module_decl_t d[2] = {{.nfields = 3, .nsweeps = 1}, {.nfields = 1, .nsweeps = 1}};
  d[0].fields[0] = (module_field_t){.name = "f", .components = 9, .value_bytes = 8,
                                    .width = {1, 1, 1}};
  d[0].fields[1] = (module_field_t){.name = "u", .components = 3, .value_bytes = 8};
  d[0].fields[2] = (module_field_t){.name = "force", .components = 3, .value_bytes = 8};
  d[0].sweeps[0] = (module_sweep_t){.name = "flow", .reads_ghosts = {"f"}, .nreads_ghosts = 1,
                                    .reads = {"force"}, .nreads = 1, .writes = {"f", "u"},
                                    .nwrites = 2};
  d[1].fields[0] = (module_field_t){.name = "g", .components = 7, .value_bytes = 8,
                                    .width = {1, 1, 1}};
  d[1].sweeps[0] = (module_sweep_t){.name = "temp", .reads_ghosts = {"g"}, .nreads_ghosts = 1,
                                    .reads = {"u"}, .nreads = 1, .writes = {"g", "force"},
                                    .nwrites = 2};
  tsr_error_t err;
  int rounds = -1;
  assert_int_equal(rounds_count(d, 2, true, &rounds, &err), TSR_OK);
  assert_int_equal(rounds, 1);
  assert_int_equal(rounds_count(d, 2, false, &rounds, &err), TSR_OK);
  assert_int_equal(rounds, 2);
  assert_int_equal(rounds_count(d, 1, false, &rounds, &err), TSR_OK);
  assert_int_equal(rounds, 1);
}

static void test_exchange_never_written(void **state) {
  (void)state;
  const module_sweep_t a = {.name = "a", .reads_ghosts = {"mask"}, .nreads_ghosts = 1};
  const module_sweep_t b = {.name = "b", .reads_ghosts = {"mask"}, .nreads_ghosts = 1};
  const module_sweep_t *steps[] = {&a, &b};
  assert_true(rounds_due(steps, 2, 0, "mask"));
  assert_true(rounds_due(steps, 2, 1, "mask"));
}

/* ---- modules that only declare ---- */

typedef struct toy {
  const char *fs;
  module_decl_t decl;
} toy_t;

static tsr_status toy_read(config_t *cfg, const simulation_options_t *so, void **st,
                           tsr_error_t *err) {
  (void)cfg, (void)so, (void)st, (void)err;
  return TSR_OK;
}
static void toy_free(void *st) { (void)st; }
static const char *toy_fs(const void *st) { return ((const toy_t *)st)->fs; }
static tsr_status toy_register(void *st, registry_t *reg, const module_env_t *env,
                               module_decl_t *decl, tsr_error_t *err) {
  (void)reg, (void)env, (void)err;
  *decl = ((toy_t *)st)->decl;
  return TSR_OK;
}
static const module_def_t toy_a = {.name = "a", .read = toy_read, .free = toy_free,
                                   .fs = toy_fs, .register_items = toy_register};
static const module_def_t toy_b = {.name = "b", .read = toy_read, .free = toy_free,
                                   .fs = toy_fs, .register_items = toy_register};

/* Registers a and b; on failure err holds the message. */
static tsr_status register_two(toy_t *a, toy_t *b, uint64_t *fs, tsr_error_t *err) {
  registry_t *reg = NULL;
  module_t mods[2] = {{&toy_a, a}, {&toy_b, b}};
  module_decl_t decls[2];
  module_env_t env = {.so = NULL};
  tsr_status st = registry_create(&reg, err);
  if (st == TSR_OK) st = module_register_all(mods, 2, reg, &env, decls, fs, NULL, 0, err);
  registry_free(&reg);
  return st;
}

static void test_register_checks(void **state) {
  (void)state;
  tsr_error_t err;
  uint64_t fs = 0;
  toy_t a = {.fs = "trt,dp",
             .decl = {.nfields = 1, .fields = {{.name = "a.f", .components = 1, .value_bytes = 8}},
                      .nsweeps = 1,
                      .sweeps = {{.name = "a.s", .reads_ghosts = {"a.f"}, .nreads_ghosts = 1,
                                  .reads = {"b.g"}, .nreads = 1, .writes = {"a.f"}, .nwrites = 1,
                                  .kernel = "a.k"}},
                      .nquantities = 1, .quantities = {{.name = "speed", .components = 1}}}};
  toy_t b = {.fs = "d3q7",
             .decl = {.nfields = 1, .fields = {{.name = "b.g", .components = 7, .value_bytes = 8}},
                      .nquantities = 1, .quantities = {{.name = "temperature", .components = 1}}}};
  ASSERT_OK(register_two(&a, &b, &fs, &err));
  assert_int_equal(__builtin_popcountll(fs), 3); /* trt, dp, d3q7 */

  toy_t b2 = b; /* a field of the same name */
  b2.decl.fields[0].name = "a.f";
  assert_int_equal(register_two(&a, &b2, &fs, &err), TSR_ERR_INVALID);
  assert_non_null(strstr(err.text, "field \"a.f\" is declared by module \"a\" and by module \"b\""));

  b2 = b; /* a quantity of the same name */
  b2.decl.quantities[0].name = "speed";
  assert_int_equal(register_two(&a, &b2, &fs, &err), TSR_ERR_INVALID);
  assert_non_null(strstr(err.text, "quantity \"speed\" is declared by module \"a\" and by module \"b\""));

  toy_t a2 = a; /* reads a field nobody declares */
  a2.decl.sweeps[0].reads[0] = "c.h";
  assert_int_equal(register_two(&a2, &b, &fs, &err), TSR_ERR_INVALID);
  assert_non_null(strstr(err.text, "module \"a\", sweep \"a.s\" reads field \"c.h\", which no module"));

  a2 = a; /* writes one */
  a2.decl.sweeps[0].writes[0] = "c.h";
  assert_int_equal(register_two(&a2, &b, &fs, &err), TSR_ERR_INVALID);
  assert_non_null(strstr(err.text, "sweep \"a.s\" writes field \"c.h\""));

  a2 = a; /* reads the ghost layers of one */
  a2.decl.sweeps[0].reads_ghosts[0] = "c.h";
  assert_int_equal(register_two(&a2, &b, &fs, &err), TSR_ERR_INVALID);
  assert_non_null(strstr(err.text, "sweep \"a.s\" reads the ghost layers of field \"c.h\""));
}

/* The calibration's box: the process's share of the run's blocks, within the run's block
 * grid and 2^21 cells, near a cube. */
static void test_calibration_blocks(void **state) {
  (void)state;
  int k[3];
  const int64_t b32[3] = {32, 32, 32}, b64[3] = {64, 64, 64}, b128[3] = {128, 128, 128};
  const int g4[3] = {4, 4, 4}, g2[3] = {2, 2, 2}, g1[3] = {1, 1, 1};
  sim_calibration_blocks(b32, g4, 64, k); /* 64 blocks of 32^3 on one process: all */
  assert_true(k[0] == 4 && k[1] == 4 && k[2] == 4);
  sim_calibration_blocks(b32, g4, 32, k); /* on two: 27 of the 32, a cube */
  assert_true(k[0] == 3 && k[1] == 3 && k[2] == 3);
  sim_calibration_blocks(b64, g4, 64, k); /* 2^21 cells allow 8 blocks of 64^3 */
  assert_true(k[0] == 2 && k[1] == 2 && k[2] == 2);
  sim_calibration_blocks(b128, g2, 8, k); /* one block already fills the cells */
  assert_true(k[0] == 1 && k[1] == 1 && k[2] == 1);
  sim_calibration_blocks(b32, g1, 64, k); /* the run has one block */
  assert_true(k[0] == 1 && k[1] == 1 && k[2] == 1);
  const int64_t flat[3] = {64, 16, 1}; /* 2-D: never along z; y first, the shorter extent */
  const int g2d[3] = {4, 8, 1};
  sim_calibration_blocks(flat, g2d, 4, k);
  assert_true(k[0] == 1 && k[1] == 4 && k[2] == 1);
  sim_calibration_blocks(flat, g2d, 32, k);
  assert_true(k[0] == 4 && k[1] == 8 && k[2] == 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exchange_one_sweep),
      cmocka_unit_test(test_exchange_two_modules),
      cmocka_unit_test(test_exchange_rounds_merged),
      cmocka_unit_test(test_exchange_rounds_counted),
      cmocka_unit_test(test_exchange_never_written),
      cmocka_unit_test(test_register_checks),
      cmocka_unit_test(test_calibration_blocks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
