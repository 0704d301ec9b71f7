/* config and simulation options: strict JSON documents and their typed readers.
 *
 * Usage: test_config INVALID_DIR CASE...
 *
 * Every CASE names INVALID_DIR/CASE.json and INVALID_DIR/CASE.err (one line: a fragment
 * of the expected message). Each case goes the way the command line goes: config_read_file,
 * config_parse, simulation_options_read, config_check_unknown, stopping at the first
 * failure; it must fail with TSR_ERR_INVALID and a message that contains the fragment and
 * the file name. Every .json in INVALID_DIR must be listed as a case.
 *
 * Fixed tests:
 *  - simulation options: defaults of a minimal config (INVALID_DIR/../valid/minimal.json)
 *    and of an empty "output", a full config that patch_create takes, the output section,
 *    simulation_options_validate on filled structs, read errors (key paths, the file name,
 *    options untouched), the keys allowed at each level;
 *  - documents: len-bounded parsing of text without a NUL, a failed parse leaves no
 *    document, NaN/Infinity/overflowing reals and NUL characters are not JSON here,
 *    config_read_file errors (missing file: TSR_ERR_IO naming the path) and contents;
 *  - readers: every type mismatch names the key path and the type got; int and real
 *    ranges (bounds inclusive, int64 extremes, value untouched on failure, also for one
 *    bad element of a triple); reals accept integers; config_choice returns the index and
 *    lists the choices; config_string's length limit; config_list/config_list_item with
 *    "obstacles[2].radius" key paths and non-object items; required vs optional (absent
 *    optional keys leave the caller's default); config_object on a non-object;
 *    config_check_unknown at the top level, in a nested object and in a list item,
 *    listing the keys asked for (absent ones included, each once);
 *  - overrides (--set): values at key paths, sections made on the way, array items, every
 *    malformed assignment refused with its message, no override after a read;
 *    config_text reads back as the same document, reals exactly.
 *
 * Every CASE that is a JSON object runs a second time as overrides: an empty document
 * gets one --set per leaf of the file (its key path = its JSON text), and must fail with
 * the same fragment, so that a value from the command line is validated exactly like one
 * from the file. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "config.h"
#include "patch.h"
#include "simulation.h"
#include "tsr_error.h"
#include "unit_test.h"

/* The call fails with TSR_ERR_INVALID and exactly the message "t.json: " msg. */
#define ASSERT_MSG(call, msg)                                                            \
  do {                                                                                   \
    ASSERT_ERR(call, TSR_ERR_INVALID, msg);                                              \
    assert_string_equal(err.text, "t.json: " msg);                                       \
  } while (0)

enum { PATH_MAX_LEN = 1024 };

static const char *invalid_dir; /* argv[1] */
static int ncases;
static char **case_names; /* argv[2..] */

/* The document of the running test; freed by the teardown even when a check fails, so
 * sanitizer builds report leaks of the library, not of failed tests. */
static config_t *doc;

static int free_doc(void **state) {
  (void)state;
  config_free(&doc);
  return 0;
}

#define DOC_TEST(f) cmocka_unit_test_teardown(f, free_doc)

/* Parses json as "t.json" into doc (freeing the previous one); returns its root. */
static config_node_t *use(const char *json) {
  tsr_error_t err;
  config_free(&doc);
  ASSERT_OK(config_parse(json, strlen(json), "t.json", &doc, &err));
  assert_non_null(doc);
  assert_string_equal(config_source(doc), "t.json");
  config_node_t *root = config_root(doc);
  assert_non_null(root);
  assert_string_equal(config_path(root), "");
  return root;
}

static void path_join(char *out, const char *dir, const char *name, const char *ext) {
  int n = snprintf(out, PATH_MAX_LEN, "%s/%s%s", dir, name, ext);
  assert_true(n > 0 && n < PATH_MAX_LEN);
}

/* Reads and parses a config file into doc and reads the simulation options, which must be
 * valid and leave no key unknown. */
static simulation_options_t load_valid(const char *name) {
  tsr_error_t err;
  char path[PATH_MAX_LEN], *text = NULL;
  size_t len = 0;
  simulation_options_t o;
  memset(&o, 0xa5, sizeof o); /* garbage: the read must fill everything */
  path_join(path, invalid_dir, "../valid/", name);
  ASSERT_OK(config_read_file(path, &text, &len, &err));
  config_free(&doc);
  tsr_status st = config_parse(text, len, path, &doc, &err);
  free(text);
  if (st != TSR_OK) fail_msg("%s: %s", path, err.text);
  assert_string_equal(config_source(doc), path);
  ASSERT_OK(simulation_options_read(doc, &o, &err));
  ASSERT_OK(config_check_unknown(doc, &err));
  return o;
}

static void assert_default_output(const simulation_options_t *o) {
  assert_string_equal(o->output_folder, "out");
  assert_int_equal(o->progress_every, 100);
}

/* ---------------------------------------------------------------- simulation options */

static void test_default(void **state) {
  (void)state;
  simulation_options_t o = simulation_options_default();
  for (int a = 0; a < 3; ++a) {
    assert_int_equal(o.domain.cells[a], 1);
    assert_int_equal(o.domain.blocks[a], 1);
    assert_false(o.domain.periodic[a]);
  }
  assert_int_equal(o.steps, 1);
  assert_default_output(&o);
  tsr_error_t err;
  ASSERT_OK(simulation_options_validate(&o, &err));
}

static void test_valid_minimal_gets_defaults(void **state) {
  (void)state;
  simulation_options_t o = load_valid("minimal.json");
  assert_int_equal(o.domain.cells[0], 8);
  assert_int_equal(o.domain.cells[1], 4);
  assert_int_equal(o.domain.cells[2], 2);
  for (int a = 0; a < 3; ++a) {
    assert_int_equal(o.domain.blocks[a], 1);
    assert_false(o.domain.periodic[a]);
  }
  assert_int_equal(o.steps, 1);
  assert_default_output(&o);
}

static void test_valid_full(void **state) {
  (void)state;
  simulation_options_t o = load_valid("full.json");
  const int64_t cells[3] = {10, 7, 5};
  const int blocks[3] = {3, 2, 5};
  const bool periodic[3] = {true, false, true};
  for (int a = 0; a < 3; ++a) {
    assert_int_equal(o.domain.cells[a], cells[a]);
    assert_int_equal(o.domain.blocks[a], blocks[a]);
    assert_int_equal(o.domain.periodic[a], periodic[a]);
  }
  assert_int_equal(o.steps, 0);
  assert_default_output(&o);
  /* what the options give, patch takes */
  tsr_error_t err;
  patch_t *p = NULL;
  patch_layout_t layout = {.nranks = 2, .my_rank = 0};
  ASSERT_OK(patch_create(&o.domain, &layout, &p, &err));
  assert_int_equal(patch_block_count(p), 30);
  patch_free(&p);
}

static void test_simulation_output(void **state) {
  (void)state;
  tsr_error_t err;
  simulation_options_t o;
  /* an empty output section keeps the defaults */
  use("{\"domain\": {\"cells\": [2, 2, 2]}, \"output\": {}}");
  ASSERT_OK(simulation_options_read(doc, &o, &err));
  ASSERT_OK(config_check_unknown(doc, &err));
  assert_default_output(&o);
  /* both keys given; progress_every 0 means none */
  use("{\"domain\": {\"cells\": [2, 2, 2]}, \"steps\": 5,"
      " \"output\": {\"folder\": \"results/run 1\", \"progress_every\": 0}}");
  ASSERT_OK(simulation_options_read(doc, &o, &err));
  ASSERT_OK(config_check_unknown(doc, &err));
  assert_string_equal(o.output_folder, "results/run 1");
  assert_int_equal(o.progress_every, 0);
  assert_int_equal(o.steps, 5);
  /* the longest folder that fits: SIMULATION_PATH_MAX - 1 bytes */
  char json[1024], folder[SIMULATION_PATH_MAX + 1];
  memset(folder, 'f', SIMULATION_PATH_MAX - 1);
  folder[SIMULATION_PATH_MAX - 1] = '\0';
  snprintf(json, sizeof json, "{\"domain\": {\"cells\": [1, 1, 1]}, \"output\": {\"folder\": \"%s\"}}",
           folder);
  use(json);
  ASSERT_OK(simulation_options_read(doc, &o, &err));
  assert_string_equal(o.output_folder, folder);
  /* one more does not */
  folder[SIMULATION_PATH_MAX - 1] = 'f';
  folder[SIMULATION_PATH_MAX] = '\0';
  snprintf(json, sizeof json, "{\"domain\": {\"cells\": [1, 1, 1]}, \"output\": {\"folder\": \"%s\"}}",
           folder);
  use(json);
  ASSERT_MSG(simulation_options_read(doc, &o, &err),
             "output.folder: 256 characters; at most 255 are allowed");
}

static void test_simulation_read_errors(void **state) {
  (void)state;
  tsr_error_t err;
  simulation_options_t o = simulation_options_default();
  o.steps = 77;
  snprintf(o.output_folder, sizeof o.output_folder, "mine");

  use("{\"domain\": {\"cells\": [8, 4, 2], \"blocks\": [2, 5, 1]}, \"steps\": 3}");
  ASSERT_MSG(simulation_options_read(doc, &o, &err), "domain.blocks[1] (y) = 5 exceeds cells[1] = 4"
             ": every block needs at least one cell along each axis");
  use("{\"steps\": 3}");
  ASSERT_MSG(simulation_options_read(doc, &o, &err), "domain is missing");
  use("{\"domain\": {\"cells\": [8, 4, 2]}, \"output\": {\"progress_every\": -1}}");
  ASSERT_MSG(simulation_options_read(doc, &o, &err),
             "output.progress_every = -1: allowed are 0..9223372036854775807");
  use("{\"domain\": {\"cells\": [8, 4, 2]}, \"output\": {\"folder\": \"\"}}");
  ASSERT_MSG(simulation_options_read(doc, &o, &err), "output.folder is empty");
  use("{\"domain\": {\"cells\": [8, 4, 2]}, \"output\": {\"folder\": [\"a\"]}}");
  ASSERT_MSG(simulation_options_read(doc, &o, &err), "output.folder: expected a string, got an array");
  use("{\"domain\": {\"cells\": [8, 4, 2]}, \"output\": \"results\"}");
  ASSERT_MSG(simulation_options_read(doc, &o, &err),
             "output: expected an object {...}, got a string");
  use("{\"domain\": {\"cells\": [8, 4, 2], \"periodic\": [true, true]}}");
  ASSERT_MSG(simulation_options_read(doc, &o, &err),
             "domain.periodic: expected 3 values [x, y, z], got 2");
  /* none of the failed reads touched the options */
  assert_int_equal(o.steps, 77);
  assert_string_equal(o.output_folder, "mine");
  assert_int_equal(o.domain.cells[0], 1);
}

/* After simulation_options_read, each level allows the keys it reads. */
static void test_simulation_allowed_keys(void **state) {
  (void)state;
  tsr_error_t err;
  simulation_options_t o;
  use("{\"domain\": {\"cells\": [8, 4, 2]}, \"lbm\": {}}");
  ASSERT_OK(simulation_options_read(doc, &o, &err));
  ASSERT_MSG(config_check_unknown(doc, &err),
             "unknown key 'lbm'; allowed at the top level are: domain, steps, check_every, units, output, hardware, stop");
  use("{\"domain\": {\"cells\": [8, 4, 2], \"ghosts\": 1}}");
  ASSERT_OK(simulation_options_read(doc, &o, &err));
  ASSERT_MSG(config_check_unknown(doc, &err),
             "unknown key 'domain.ghosts'; allowed in domain are: cells, blocks, periodic");
  use("{\"domain\": {\"cells\": [8, 4, 2]}, \"output\": {\"folder\": \"x\", \"format\": \"vtk\"}}");
  ASSERT_OK(simulation_options_read(doc, &o, &err));
  /* output grows with the outputs (VTK, probes, ...): the list starts with these two */
  ASSERT_ERR(config_check_unknown(doc, &err), TSR_ERR_INVALID,
             "t.json: unknown key 'output.format'; allowed in output are: folder, progress_every");
  assert_int_equal(strncmp(err.text, "t.json: ", 8), 0);
}

static void test_validate_filled_struct(void **state) {
  (void)state;
  tsr_error_t err;
  simulation_options_t o = simulation_options_default();
  o.steps = -1;
  ASSERT_ERR(simulation_options_validate(&o, &err), TSR_ERR_INVALID,
             "steps = -1: allowed are integers >= 0");
  o = simulation_options_default();
  o.progress_every = -3;
  ASSERT_ERR(simulation_options_validate(&o, &err), TSR_ERR_INVALID,
             "output.progress_every = -3: allowed are integers >= 0");
  o = simulation_options_default();
  o.output_folder[0] = '\0';
  ASSERT_ERR(simulation_options_validate(&o, &err), TSR_ERR_INVALID, "output.folder is empty");
  o = simulation_options_default();
  o.domain.cells[0] = 4;
  o.domain.blocks[0] = 5;
  ASSERT_ERR(simulation_options_validate(&o, &err), TSR_ERR_INVALID,
             "domain.blocks[0] (x) = 5 exceeds cells[0] = 4");
  assert_int_equal(strncmp(err.text, "domain.", 7), 0);
  o.domain.blocks[0] = 4;
  ASSERT_OK(simulation_options_validate(&o, &err));
}

/* ---------------------------------------------------------------- documents */

static void test_parse_reads_len_bytes_only(void **state) {
  (void)state;
  tsr_error_t err;
  simulation_options_t o;
  const char json[] = "{\"domain\": {\"cells\": [3, 2, 1]}, \"steps\": 12}";
  const size_t len = strlen(json);
  /* an exact copy without a NUL after it (ASan catches a read past the end) */
  char *exact = malloc(len);
  assert_non_null(exact);
  memcpy(exact, json, len);
  tsr_status st = config_parse(exact, len, "inline", &doc, &err);
  free(exact);
  if (st != TSR_OK) fail_msg("config_parse failed: %s", err.text);
  ASSERT_OK(simulation_options_read(doc, &o, &err));
  assert_int_equal(o.domain.cells[0], 3);
  assert_int_equal(o.steps, 12);
  assert_string_equal(config_source(doc), "inline");
  config_free(&doc);
  assert_null(doc);
  config_free(&doc); /* NULL-safe */
  config_free(NULL);
  /* bytes after len are not part of the document */
  char longer[128];
  snprintf(longer, sizeof longer, "%s, \"garbage\": ]", json);
  ASSERT_OK(config_parse(longer, len, "inline", &doc, &err));
  config_free(&doc);
  ASSERT_ERR(config_parse(longer, strlen(longer), "inline", &doc, &err), TSR_ERR_INVALID,
             "inline:1:");
  assert_null(doc);
  /* steps may be as large as int64 allows */
  use("{\"domain\": {\"cells\": [1, 1, 1]}, \"steps\": 9223372036854775807}");
  ASSERT_OK(simulation_options_read(doc, &o, &err));
  assert_int_equal(o.steps, INT64_MAX);
}

static void test_parse_error_leaves_no_document(void **state) {
  (void)state;
  tsr_error_t err;
  config_t *cfg = (config_t *)&err; /* any non-NULL value: a failed parse sets NULL */
  const char bad[] = "{\"domain\": {\"cells\": [3, 2, 1]}, \"steps\": -5,}";
  ASSERT_ERR(config_parse(bad, strlen(bad), "neg.json", &cfg, &err), TSR_ERR_INVALID,
             "neg.json:1:");
  assert_null(cfg);
  cfg = (config_t *)&err;
  ASSERT_ERR(config_parse("[]", 2, "arr.json", &cfg, &err), TSR_ERR_INVALID,
             "arr.json: the top level must be an object {...}, got an array");
  assert_null(cfg);
  cfg = (config_t *)&err;
  ASSERT_ERR(config_parse("", 0, "empty.json", &cfg, &err), TSR_ERR_INVALID, "empty.json:1:0:");
  assert_null(cfg);
  /* a read that fails leaves the caller's options alone */
  simulation_options_t o = simulation_options_default();
  o.steps = 77;
  use("{\"domain\": {\"cells\": [3, 2, 1]}, \"steps\": -5}");
  ASSERT_MSG(simulation_options_read(doc, &o, &err), "steps = -5: allowed are 0..9223372036854775807");
  assert_int_equal(o.steps, 77);
  assert_int_equal(o.domain.cells[0], 1);
}

/* What JSON cannot say does not reach a reader: no NaN, no Infinity, no overflowing reals,
 * no NUL characters in strings or keys. */
static void test_parse_rejects_non_json_numbers_and_nul(void **state) {
  (void)state;
  tsr_error_t err;
  static const char *const bad[] = {
      "{\"x\": NaN}",         "{\"x\": nan}",        "{\"x\": Infinity}",  "{\"x\": -Infinity}",
      "{\"x\": 1e999}",       "{\"x\": -1e999}",     "{\"x\": .5}",        "{\"x\": 0x10}",
      "{\"x\": \"a\\u0000b\"}", "{\"a\\u0000b\": 1}", "{\"x\": 01}",        "{\"x\": +1}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    config_t *cfg = NULL;
    tsr_error_clear(&err);
    tsr_status st = config_parse(bad[i], strlen(bad[i]), "t.json", &cfg, &err);
    if (st != TSR_ERR_INVALID) {
      config_free(&cfg);
      fail_msg("%s: config_parse returned %d, expected TSR_ERR_INVALID", bad[i], (int)st);
    }
    assert_null(cfg);
    if (strncmp(err.text, "t.json:1:", 9) != 0)
      fail_msg("%s: message \"%s\" lacks the line:column", bad[i], err.text);
  }
}

static void test_read_file_missing(void **state) {
  (void)state;
  tsr_error_t err;
  char *text = (char *)"untouched";
  size_t len = 99;
  char path[PATH_MAX_LEN];
  path_join(path, invalid_dir, "no_such_case", ".json");
  ASSERT_ERR(config_read_file(path, &text, &len, &err), TSR_ERR_IO, path);
  assert_non_null(strstr(err.text, "cannot open"));
  assert_non_null(strstr(err.text, "No such file or directory"));
  assert_null(text);
  assert_int_equal(len, 0);
}

static void test_read_file_directory(void **state) {
  (void)state;
  tsr_error_t err;
  char *text = NULL;
  size_t len = 0;
  /* a directory opens but does not read */
  ASSERT_ERR(config_read_file(invalid_dir, &text, &len, &err), TSR_ERR_IO, invalid_dir);
  assert_null(text);
}

static void test_read_file_contents(void **state) {
  (void)state;
  tsr_error_t err;
  char path[PATH_MAX_LEN], *text = NULL;
  size_t len = 0;
  path_join(path, invalid_dir, "../valid/", "full.json");
  ASSERT_OK(config_read_file(path, &text, &len, &err));
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  char expect[4096];
  size_t n = fread(expect, 1, sizeof expect, f);
  fclose(f);
  assert_int_equal(len, n);
  assert_memory_equal(text, expect, n);
  assert_int_equal(text[len], '\0');
  free(text);

  /* an empty file reads as zero bytes */
  path_join(path, invalid_dir, "syntax_empty", ".json");
  ASSERT_OK(config_read_file(path, &text, &len, &err));
  assert_int_equal(len, 0);
  assert_non_null(text);
  assert_int_equal(text[0], '\0');
  free(text);
}

/* ---------------------------------------------------------------- readers */

static const char *const lbm_choices[] = {"bgk", "trt", "mrt", NULL};

/* Every reader, given the wrong JSON type, names the key path and the type it got, and
 * leaves the caller's value alone. */
static void test_type_mismatch(void **state) {
  (void)state;
  tsr_error_t err;
  config_node_t *root = use(
      "{\"i\": \"7\", \"r\": true, \"b\": 1, \"i3\": {\"x\": 1}, \"r3\": [1, \"2\", 3],"
      " \"b3\": [true, false, null], \"c\": 3, \"s\": [\"a\"], \"o\": 5, \"l\": {\"a\": 1},"
      " \"sec\": {\"n\": 1.5, \"deeper\": {\"flag\": \"yes\"}}, \"r2\": null}");
  int64_t i = 42, i3[3] = {4, 5, 6};
  double r = 0.25, r3[3] = {0.5, 0.5, 0.5};
  bool b = true, b3[3] = {true, true, true};
  int c = 1;
  char s[16] = "keep";
  size_t count = 99;
  config_node_t *o = root, *sec, *deeper;

  ASSERT_MSG(config_int(root, "i", true, 0, 10, &i, &err),
             "i: expected an integer in 0..10, got a string");
  ASSERT_MSG(config_real(root, "r", true, 0, 1, &r, &err),
             "r: expected a number in [0, 1], got a boolean");
  ASSERT_MSG(config_real(root, "r2", false, 0, 1, &r, &err),
             "r2: expected a number in [0, 1], got null");
  ASSERT_MSG(config_bool(root, "b", true, &b, &err), "b: expected true or false, got an integer");
  ASSERT_MSG(config_int3(root, "i3", true, 0, 10, i3, &err),
             "i3: expected an array of 3 values [x, y, z], got an object");
  ASSERT_MSG(config_real3(root, "r3", true, 0, 10, r3, &err),
             "r3[1]: expected a number in [0, 10], got a string");
  ASSERT_MSG(config_bool3(root, "b3", true, b3, &err), "b3[2]: expected true or false, got null");
  ASSERT_MSG(config_choice(root, "c", true, lbm_choices, &c, &err),
             "c: expected one of \"bgk\", \"trt\", \"mrt\", got an integer");
  ASSERT_MSG(config_string(root, "s", true, s, sizeof s, &err), "s: expected a string, got an array");
  ASSERT_MSG(config_object(root, "o", true, &o, &err), "o: expected an object {...}, got an integer");
  assert_null(o);
  ASSERT_MSG(config_list(root, "l", &count, &err), "l: expected an array [{...}, ...], got an object");
  assert_int_equal(count, 0);
  /* nested objects: the key path names every level */
  ASSERT_OK(config_object(root, "sec", true, &sec, &err));
  assert_string_equal(config_path(sec), "sec");
  ASSERT_MSG(config_int(sec, "n", true, 0, 10, &i, &err),
             "sec.n: expected an integer in 0..10, got a real number");
  ASSERT_OK(config_object(sec, "deeper", true, &deeper, &err));
  assert_string_equal(config_path(deeper), "sec.deeper");
  ASSERT_MSG(config_bool(deeper, "flag", false, &b, &err),
             "sec.deeper.flag: expected true or false, got a string");
  ASSERT_MSG(config_object(root, "i", false, &o, &err), "i: expected an object {...}, got a string");
  ASSERT_MSG(config_object(root, "b3", false, &o, &err), "b3: expected an object {...}, got an array");
  ASSERT_MSG(config_object(root, "r", false, &o, &err), "r: expected an object {...}, got a boolean");
  ASSERT_MSG(config_object(root, "r2", false, &o, &err), "r2: expected an object {...}, got null");

  /* nothing was written */
  assert_int_equal(i, 42);
  assert_true(r == 0.25);
  assert_true(b);
  for (int a = 0; a < 3; ++a) {
    assert_int_equal(i3[a], 4 + a);
    assert_true(r3[a] == 0.5);
    assert_true(b3[a]);
  }
  assert_int_equal(c, 1);
  assert_string_equal(s, "keep");
}

static void test_int_ranges(void **state) {
  (void)state;
  tsr_error_t err;
  config_node_t *root = use(
      "{\"lo\": -3, \"hi\": 11, \"min\": 0, \"max\": 10, \"big\": 9223372036854775807,"
      " \"small\": -9223372036854775808, \"v\": [1, 20, 3], \"w\": [-1, 0, 1], \"x\": 1.0}");
  int64_t v = 5;
  ASSERT_MSG(config_int(root, "lo", true, 0, 10, &v, &err), "lo = -3: allowed are 0..10");
  ASSERT_MSG(config_int(root, "hi", true, 0, 10, &v, &err), "hi = 11: allowed are 0..10");
  assert_int_equal(v, 5);
  /* bounds are inclusive */
  ASSERT_OK(config_int(root, "min", true, 0, 10, &v, &err));
  assert_int_equal(v, 0);
  ASSERT_OK(config_int(root, "max", true, 0, 10, &v, &err));
  assert_int_equal(v, 10);
  ASSERT_OK(config_int(root, "max", true, 10, 10, &v, &err));
  assert_int_equal(v, 10);
  /* the int64 extremes */
  ASSERT_OK(config_int(root, "big", true, INT64_MIN, INT64_MAX, &v, &err));
  assert_true(v == INT64_MAX);
  ASSERT_OK(config_int(root, "small", true, INT64_MIN, INT64_MAX, &v, &err));
  assert_true(v == INT64_MIN);
  ASSERT_MSG(config_int(root, "big", true, 0, INT64_MAX - 1, &v, &err),
             "big = 9223372036854775807: allowed are 0..9223372036854775806");
  ASSERT_MSG(config_int(root, "small", true, INT64_MIN + 1, 0, &v, &err),
             "small = -9223372036854775808: allowed are -9223372036854775807..0");
  assert_true(v == INT64_MIN);
  /* a real with an integral value is still not an integer */
  ASSERT_MSG(config_int(root, "x", true, 0, 10, &v, &err),
             "x: expected an integer in 0..10, got a real number");
  /* triples: one bad element names its index and leaves all three alone */
  int64_t t[3] = {7, 8, 9};
  ASSERT_MSG(config_int3(root, "v", true, 0, 10, t, &err), "v[1] = 20: allowed are 0..10");
  assert_int_equal(t[0], 7);
  assert_int_equal(t[1], 8);
  assert_int_equal(t[2], 9);
  ASSERT_MSG(config_int3(root, "w", true, 0, 10, t, &err), "w[0] = -1: allowed are 0..10");
  ASSERT_OK(config_int3(root, "w", true, -1, 1, t, &err));
  assert_int_equal(t[0], -1);
  assert_int_equal(t[1], 0);
  assert_int_equal(t[2], 1);
}

static void test_real_ranges(void **state) {
  (void)state;
  tsr_error_t err;
  config_node_t *root = use(
      "{\"half\": 0.5, \"one\": 1, \"zero\": 0, \"neg\": -0.25, \"two\": 2, \"huge\": 1e300,"
      " \"tiny\": 2.5e-3, \"bigint\": 9223372036854775807, \"v\": [1, 2.5, -3],"
      " \"w\": [0, 2, 0.5]}");
  double v = 0.75;
  ASSERT_OK(config_real(root, "half", true, 0, 1, &v, &err));
  assert_true(v == 0.5);
  /* integers are reals too; bounds are inclusive */
  ASSERT_OK(config_real(root, "one", true, 0, 1, &v, &err));
  assert_true(v == 1.0);
  ASSERT_OK(config_real(root, "zero", true, 0, 1, &v, &err));
  assert_true(v == 0.0);
  ASSERT_OK(config_real(root, "tiny", true, 0, 1, &v, &err));
  assert_true(v == 2.5e-3);
  ASSERT_OK(config_real(root, "bigint", true, 0, DBL_MAX, &v, &err));
  assert_true(v == 9223372036854775807.0);
  ASSERT_OK(config_real(root, "huge", true, -DBL_MAX, DBL_MAX, &v, &err));
  assert_true(v == 1e300);
  v = 0.75;
  ASSERT_MSG(config_real(root, "neg", true, 0, 1, &v, &err),
             "neg = -0.25: allowed are numbers in [0, 1]");
  ASSERT_MSG(config_real(root, "two", true, 0, 1, &v, &err), "two = 2: allowed are numbers in [0, 1]");
  ASSERT_MSG(config_real(root, "huge", true, 0, 1e6, &v, &err),
             "huge = 1e+300: allowed are numbers in [0, 1e+06]");
  ASSERT_MSG(config_real(root, "half", true, 0.6, 0.7, &v, &err),
             "half = 0.5: allowed are numbers in [0.6, 0.7]");
  assert_true(v == 0.75);
  /* triples of reals take integers; one bad element leaves all three alone */
  double t[3] = {9, 9, 9};
  ASSERT_OK(config_real3(root, "v", true, -10, 10, t, &err));
  assert_true(t[0] == 1.0 && t[1] == 2.5 && t[2] == -3.0);
  ASSERT_MSG(config_real3(root, "w", true, 0, 1, t, &err), "w[1] = 2: allowed are numbers in [0, 1]");
  assert_true(t[0] == 1.0 && t[1] == 2.5 && t[2] == -3.0);
}

static void test_bool_readers(void **state) {
  (void)state;
  tsr_error_t err;
  config_node_t *root = use("{\"t\": true, \"f\": false, \"p\": [false, true, false]}");
  bool b = false, p[3] = {true, false, true};
  ASSERT_OK(config_bool(root, "t", true, &b, &err));
  assert_true(b);
  ASSERT_OK(config_bool(root, "f", true, &b, &err));
  assert_false(b);
  ASSERT_OK(config_bool3(root, "p", true, p, &err));
  assert_false(p[0]);
  assert_true(p[1]);
  assert_false(p[2]);
  ASSERT_MSG(config_bool3(root, "t", true, p, &err),
             "t: expected an array of 3 values [x, y, z], got a boolean");
}

static void test_choice(void **state) {
  (void)state;
  tsr_error_t err;
  char json[256];
  char long_value[101];
  memset(long_value, 'x', 100);
  long_value[100] = '\0';
  snprintf(json, sizeof json,
           "{\"m\": \"mrt\", \"f\": \"bgk\", \"bad\": \"MRT\", \"empty\": \"\", \"long\": \"%s\"}",
           long_value);
  config_node_t *root = use(json);
  int v = 7;
  ASSERT_OK(config_choice(root, "m", true, lbm_choices, &v, &err));
  assert_int_equal(v, 2);
  ASSERT_OK(config_choice(root, "f", true, lbm_choices, &v, &err));
  assert_int_equal(v, 0);
  v = 7;
  /* case matters; the message lists every choice */
  ASSERT_MSG(config_choice(root, "bad", true, lbm_choices, &v, &err),
             "bad = \"MRT\": allowed are \"bgk\", \"trt\", \"mrt\"");
  ASSERT_MSG(config_choice(root, "empty", true, lbm_choices, &v, &err),
             "empty = \"\": allowed are \"bgk\", \"trt\", \"mrt\"");
  assert_int_equal(v, 7);
  /* a long value is cut in the message, the choices are not */
  ASSERT_ERR(config_choice(root, "long", true, lbm_choices, &v, &err), TSR_ERR_INVALID,
             "\": allowed are \"bgk\", \"trt\", \"mrt\"");
  assert_non_null(strstr(err.text, "long = \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\": "));
  assert_int_equal(v, 7);
  /* absent: optional keeps the default, required names the key */
  ASSERT_OK(config_choice(root, "none", false, lbm_choices, &v, &err));
  assert_int_equal(v, 7);
  ASSERT_MSG(config_choice(root, "none", true, lbm_choices, &v, &err), "none is missing");
  /* a single choice */
  static const char *const only[] = {"mrt", NULL};
  ASSERT_OK(config_choice(root, "m", true, only, &v, &err));
  assert_int_equal(v, 0);
  ASSERT_MSG(config_choice(root, "f", true, only, &v, &err), "f = \"bgk\": allowed are \"mrt\"");
}

static void test_string_limit(void **state) {
  (void)state;
  tsr_error_t err;
  /* "\u00e9" is two bytes of UTF-8; the limit counts bytes */
  config_node_t *root =
      use("{\"s7\": \"abcdefg\", \"s8\": \"abcdefgh\", \"e\": \"\", \"u\": \"\\u00e9\"}");
  char s[8] = "keep";
  ASSERT_OK(config_string(root, "s7", true, s, sizeof s, &err));
  assert_string_equal(s, "abcdefg");
  strcpy(s, "keep");
  ASSERT_MSG(config_string(root, "s8", true, s, sizeof s, &err),
             "s8: 8 characters; at most 7 are allowed");
  assert_string_equal(s, "keep");
  ASSERT_OK(config_string(root, "u", true, s, 3, &err));
  assert_string_equal(s, "\xc3\xa9");
  strcpy(s, "keep");
  ASSERT_MSG(config_string(root, "u", true, s, 2, &err), "u: 2 characters; at most 1 are allowed");
  assert_string_equal(s, "keep");
  ASSERT_OK(config_string(root, "e", true, s, 1, &err));
  assert_string_equal(s, "");
}

static void test_list(void **state) {
  (void)state;
  tsr_error_t err;
  config_node_t *root = use(
      "{\"obstacles\": [{\"radius\": 1}, 7, {\"center\": [1, 2, 3], \"radius\": -2}],"
      " \"empty\": [], \"notlist\": {\"a\": 1},"
      " \"sec\": {\"items\": [{\"x\": \"no\"}, [1]]}}");
  size_t n = 99;
  config_node_t *item = NULL, *again = NULL, *sec = NULL;
  double r = 5, c[3] = {0, 0, 0};

  ASSERT_OK(config_list(root, "obstacles", &n, &err));
  assert_int_equal(n, 3);
  ASSERT_OK(config_list(root, "empty", &n, &err));
  assert_int_equal(n, 0);
  n = 99;
  ASSERT_OK(config_list(root, "absent", &n, &err));
  assert_int_equal(n, 0);
  n = 99;
  ASSERT_MSG(config_list(root, "notlist", &n, &err),
             "notlist: expected an array [{...}, ...], got an object");
  assert_int_equal(n, 0);

  ASSERT_OK(config_list_item(root, "obstacles", 0, &item, &err));
  assert_string_equal(config_path(item), "obstacles[0]");
  ASSERT_OK(config_real(item, "radius", true, 0, 10, &r, &err));
  assert_true(r == 1.0);
  /* a non-object item */
  item = root;
  ASSERT_MSG(config_list_item(root, "obstacles", 1, &item, &err),
             "obstacles[1]: expected an object {...}, got an integer");
  assert_null(item);
  /* readers on an item name it in their key paths */
  ASSERT_OK(config_list_item(root, "obstacles", 2, &item, &err));
  assert_string_equal(config_path(item), "obstacles[2]");
  r = 5;
  ASSERT_MSG(config_real(item, "radius", true, 0, 10, &r, &err),
             "obstacles[2].radius = -2: allowed are numbers in [0, 10]");
  assert_true(r == 5);
  ASSERT_MSG(config_real(item, "height", true, 0, 10, &r, &err), "obstacles[2].height is missing");
  ASSERT_MSG(config_real3(item, "center", true, 0, 2, c, &err),
             "obstacles[2].center[2] = 3: allowed are numbers in [0, 2]");
  ASSERT_OK(config_real3(item, "center", true, 0, 3, c, &err));
  assert_true(c[0] == 1 && c[1] == 2 && c[2] == 3);
  /* the same item twice is the same node */
  ASSERT_OK(config_list_item(root, "obstacles", 2, &again, &err));
  assert_ptr_equal(item, again);
  /* past the end, and lists that are not there */
  ASSERT_MSG(config_list_item(root, "obstacles", 3, &item, &err), "obstacles[3]: no such item");
  assert_null(item);
  ASSERT_MSG(config_list_item(root, "empty", 0, &item, &err), "empty[0]: no such item");
  ASSERT_MSG(config_list_item(root, "absent", 0, &item, &err), "absent is missing");
  ASSERT_MSG(config_list_item(root, "notlist", 0, &item, &err), "notlist[0]: no such item");
  /* lists inside objects */
  ASSERT_OK(config_object(root, "sec", true, &sec, &err));
  ASSERT_OK(config_list(sec, "items", &n, &err));
  assert_int_equal(n, 2);
  ASSERT_OK(config_list_item(sec, "items", 0, &item, &err));
  assert_string_equal(config_path(item), "sec.items[0]");
  int64_t x = 1;
  ASSERT_MSG(config_int(item, "x", true, 0, 10, &x, &err),
             "sec.items[0].x: expected an integer in 0..10, got a string");
  ASSERT_MSG(config_list_item(sec, "items", 1, &item, &err),
             "sec.items[1]: expected an object {...}, got an array");
}

/* Absent keys: required ones are errors naming the key path; optional ones leave every
 * reader's value as the caller set it. */
static void test_required_and_optional(void **state) {
  (void)state;
  tsr_error_t err;
  config_node_t *root = use("{\"sec\": {}}"), *sec, *obj = root;
  int64_t i = 3, i3[3] = {1, 2, 3};
  double r = 0.5, r3[3] = {0.25, 0.5, 0.75};
  bool b = true, b3[3] = {true, false, true};
  int c = 2;
  char s[8] = "dflt";
  size_t n = 9;
  ASSERT_OK(config_object(root, "sec", true, &sec, &err));

  ASSERT_OK(config_int(sec, "i", false, 0, 10, &i, &err));
  ASSERT_OK(config_real(sec, "r", false, 0, 1, &r, &err));
  ASSERT_OK(config_bool(sec, "b", false, &b, &err));
  ASSERT_OK(config_int3(sec, "i3", false, 0, 10, i3, &err));
  ASSERT_OK(config_real3(sec, "r3", false, 0, 1, r3, &err));
  ASSERT_OK(config_bool3(sec, "b3", false, b3, &err));
  ASSERT_OK(config_choice(sec, "c", false, lbm_choices, &c, &err));
  ASSERT_OK(config_string(sec, "s", false, s, sizeof s, &err));
  ASSERT_OK(config_object(sec, "o", false, &obj, &err));
  ASSERT_OK(config_list(sec, "l", &n, &err));
  assert_int_equal(i, 3);
  assert_true(r == 0.5);
  assert_true(b);
  for (int a = 0; a < 3; ++a) {
    assert_int_equal(i3[a], a + 1);
    assert_true(r3[a] == 0.25 * (a + 1));
    assert_int_equal(b3[a], a != 1);
  }
  assert_int_equal(c, 2);
  assert_string_equal(s, "dflt");
  assert_null(obj);
  assert_int_equal(n, 0);

  ASSERT_MSG(config_int(sec, "i", true, 0, 10, &i, &err), "sec.i is missing");
  ASSERT_MSG(config_real(sec, "r", true, 0, 1, &r, &err), "sec.r is missing");
  ASSERT_MSG(config_bool(sec, "b", true, &b, &err), "sec.b is missing");
  ASSERT_MSG(config_int3(sec, "i3", true, 0, 10, i3, &err), "sec.i3 is missing");
  ASSERT_MSG(config_real3(sec, "r3", true, 0, 1, r3, &err), "sec.r3 is missing");
  ASSERT_MSG(config_bool3(sec, "b3", true, b3, &err), "sec.b3 is missing");
  ASSERT_MSG(config_choice(sec, "c", true, lbm_choices, &c, &err), "sec.c is missing");
  ASSERT_MSG(config_string(sec, "s", true, s, sizeof s, &err), "sec.s is missing");
  ASSERT_MSG(config_object(sec, "o", true, &obj, &err), "sec.o is missing");
  ASSERT_MSG(config_object(root, "top", true, &obj, &err), "top is missing");
  assert_int_equal(i, 3);
  assert_string_equal(s, "dflt");
  /* asked for but absent is not unknown */
  ASSERT_OK(config_check_unknown(doc, &err));
}

static void test_unknown_top_level(void **state) {
  (void)state;
  tsr_error_t err;
  config_node_t *root = use("{\"a\": 1, \"b\": 2, \"zz\": 3}");
  /* nothing asked yet */
  ASSERT_MSG(config_check_unknown(doc, &err),
             "unknown key 'a'; allowed at the top level are: (none)");
  int64_t v = 0;
  ASSERT_OK(config_int(root, "a", true, 0, 10, &v, &err));
  ASSERT_OK(config_int(root, "a", true, 0, 10, &v, &err)); /* asked twice, listed once */
  ASSERT_OK(config_int(root, "b", true, 0, 10, &v, &err));
  ASSERT_OK(config_int(root, "c", false, 0, 10, &v, &err)); /* absent: still allowed */
  ASSERT_MSG(config_check_unknown(doc, &err),
             "unknown key 'zz'; allowed at the top level are: a, b, c");
  ASSERT_OK(config_int(root, "zz", true, 0, 10, &v, &err));
  ASSERT_OK(config_check_unknown(doc, &err));
  /* a key whose reader failed was still asked for */
  root = use("{\"a\": \"x\"}");
  ASSERT_MSG(config_int(root, "a", true, 0, 10, &v, &err),
             "a: expected an integer in 0..10, got a string");
  ASSERT_OK(config_check_unknown(doc, &err));
}

static void test_unknown_nested(void **state) {
  (void)state;
  tsr_error_t err;
  config_node_t *root = use("{\"sec\": {\"x\": 1, \"y\": 2}, \"other\": {\"q\": 1}}"), *sec, *other;
  int64_t v = 0;
  ASSERT_OK(config_object(root, "sec", true, &sec, &err));
  ASSERT_OK(config_object(root, "other", true, &other, &err));
  ASSERT_OK(config_int(sec, "x", true, 0, 10, &v, &err));
  ASSERT_OK(config_int(sec, "w", false, 0, 10, &v, &err));
  ASSERT_MSG(config_check_unknown(doc, &err), "unknown key 'sec.y'; allowed in sec are: x, w");
  ASSERT_OK(config_int(sec, "y", true, 0, 10, &v, &err));
  /* an object opened but never read allows nothing */
  ASSERT_MSG(config_check_unknown(doc, &err), "unknown key 'other.q'; allowed in other are: (none)");
  ASSERT_OK(config_int(other, "q", true, 0, 10, &v, &err));
  ASSERT_OK(config_check_unknown(doc, &err));
  /* deeper */
  config_node_t *a, *b;
  root = use("{\"a\": {\"b\": {\"keep\": true, \"typo\": 1}}}");
  ASSERT_OK(config_object(root, "a", true, &a, &err));
  ASSERT_OK(config_object(a, "b", true, &b, &err));
  bool flag = false;
  ASSERT_OK(config_bool(b, "keep", true, &flag, &err));
  ASSERT_MSG(config_check_unknown(doc, &err), "unknown key 'a.b.typo'; allowed in a.b are: keep");
}

static void test_unknown_in_list_item(void **state) {
  (void)state;
  tsr_error_t err;
  config_node_t *root =
      use("{\"obstacles\": [{\"radius\": 1}, {\"radius\": 2, \"radiu\": 3}]}"), *item;
  size_t n = 0;
  double r = 0;
  ASSERT_OK(config_list(root, "obstacles", &n, &err));
  assert_int_equal(n, 2);
  for (size_t k = 0; k < n; ++k) {
    ASSERT_OK(config_list_item(root, "obstacles", k, &item, &err));
    ASSERT_OK(config_real(item, "radius", true, 0, 10, &r, &err));
    ASSERT_OK(config_real3(item, "center", false, 0, 10, (double[3]){0, 0, 0}, &err));
  }
  ASSERT_MSG(config_check_unknown(doc, &err),
             "unknown key 'obstacles[1].radiu'; allowed in obstacles[1] are: radius, center");
}

/* ---------------------------------------------------------------- data-driven cases */

/* Every .json in the case directory is listed in CMake, so no case is skipped. */
static void test_every_case_is_listed(void **state) {
  (void)state;
  DIR *d = opendir(invalid_dir);
  assert_non_null(d);
  int found = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t n = strlen(e->d_name);
    if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0) continue;
    ++found;
    bool listed = false;
    for (int i = 0; i < ncases; ++i)
      listed = listed || (strlen(case_names[i]) == n - 5 &&
                          strncmp(case_names[i], e->d_name, n - 5) == 0);
    if (!listed) {
      closedir(d);
      fail_msg("%s/%s is not listed in tests/unit/CMakeLists.txt", invalid_dir, e->d_name);
    }
  }
  closedir(d);
  assert_int_equal(found, ncases);
}

/* ---------------------------------------------------------------- overrides */

static void test_set_values(void **state) {
  (void)state;
  tsr_error_t err;
  use("{\"domain\": {\"cells\": [8, 4, 2]}, \"obstacles\": [{\"radius\": 1}]}");
  ASSERT_OK(config_set(doc, "domain.cells[1]=16", &err));
  ASSERT_OK(config_set(doc, "domain.blocks=[2,2,1]", &err));
  ASSERT_OK(config_set(doc, "steps=7", &err));
  ASSERT_OK(config_set(doc, "output.probes.x=\"a=b\"", &err)); /* the first '=' splits */
  ASSERT_OK(config_set(doc, "obstacles[0].radius=2.5", &err));
  ASSERT_OK(config_set_string(doc, "--output", "output.folder", "r\"un", &err));
  config_node_t *root = config_root(doc), *domain, *output, *probes, *ob;
  int64_t cells[3], blocks[3], steps = 0;
  double radius = 0;
  char folder[32], x[8];
  ASSERT_OK(config_object(root, "domain", true, &domain, &err));
  ASSERT_OK(config_int3(domain, "cells", true, 1, 100, cells, &err));
  ASSERT_OK(config_int3(domain, "blocks", true, 1, 100, blocks, &err));
  assert_int_equal(cells[1], 16);
  assert_int_equal(blocks[0], 2);
  ASSERT_OK(config_int(root, "steps", true, 0, 100, &steps, &err));
  assert_int_equal(steps, 7);
  ASSERT_OK(config_object(root, "output", true, &output, &err));
  ASSERT_OK(config_string(output, "folder", true, folder, sizeof folder, &err));
  assert_string_equal(folder, "r\"un");
  ASSERT_OK(config_object(output, "probes", true, &probes, &err));
  ASSERT_OK(config_string(probes, "x", true, x, sizeof x, &err));
  assert_string_equal(x, "a=b");
  ASSERT_OK(config_list_item(root, "obstacles", 0, &ob, &err));
  ASSERT_OK(config_real(ob, "radius", true, 0, 10, &radius, &err));
  assert_true(radius == 2.5);
  /* after a read: refused */
  ASSERT_ERR(config_set(doc, "steps=8", &err), TSR_ERR_INVALID, "read already");
}

static void test_set_refused(void **state) {
  (void)state;
  static const struct {
    const char *assignment, *message;
  } bad[] = {
      {"steps", "--set steps: expected PATH=VALUE, e.g. --set steps=1000"},
      {"=1", "--set =1: expected PATH=VALUE, e.g. --set steps=1000"},
      {"lbm.lattice=D2Q9", "--set lbm.lattice=D2Q9: the value is not JSON (invalid token near "
                           "'D'); a string needs its quotes: --set 'lbm.lattice=\"...\"'"},
      {"steps=", "--set steps=: the value is not JSON"},
      {"a..b=1", "--set a..b=1: 'a..b' is not a key path"},
      {".a=1", "--set .a=1: '.a' is not a key path"},
      {"a.=1", "--set a.=1: 'a.' is not a key path"},
      {"a[x]=1", "--set a[x]=1: 'a[x]' is not a key path"},
      {"a]=1", "--set a]=1: 'a]' is not a key path"},
      {"domain.cells[3]=1", "--set domain.cells[3]=1: domain.cells has 3 item(s); [3] does not "
                            "exist"},
      {"domain.cells.x=1", "t.json: domain.cells is an array, not an object (--set domain.cells.x=1)"},
      {"domain[0]=1", "t.json: domain is an object, not an array (--set domain[0]=1)"},
      {"steps.a=1", "t.json: steps is an integer, not an object (--set steps.a=1)"},
      {"obstacles[0]=1", "--set obstacles[0]=1: obstacles is missing; an array item must exist"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    tsr_error_t err;
    use("{\"domain\": {\"cells\": [8, 4, 2]}, \"steps\": 3}");
    tsr_status st = config_set(doc, bad[i].assignment, &err);
    if (st != TSR_ERR_INVALID || strncmp(err.text, bad[i].message, strlen(bad[i].message)) != 0)
      fail_msg("%s: status %d, \"%s\"", bad[i].assignment, (int)st, err.text);
  }
}

/* config_text of a document parses back to an equal one; reals keep every bit. */
static void test_text_reads_back(void **state) {
  (void)state;
  tsr_error_t err;
  const char *json = "{\"a\": {\"r\": [0.1, 1e-300, 3.0, -0.0, 0.30000000000000004], \"s\": "
                     "\"q\\\"\\u00e9\", \"e\": {}, \"l\": [], \"o\": [{\"x\": 1}, [true, null]]}}";
  use(json);
  ASSERT_OK(config_set(doc, "a.n=123456789012", &err));
  char *text = config_text(doc);
  assert_non_null(text);
  assert_int_equal(text[strlen(text) - 1], '\n');
  json_error_t jerr;
  json_t *back = json_loads(text, 0, &jerr), *orig = json_loads(json, 0, &jerr);
  assert_non_null(back);
  assert_non_null(orig);
  json_object_set_new(json_object_get(orig, "a"), "n", json_integer(123456789012));
  assert_true(json_equal(back, orig));
  json_t *reals = json_object_get(json_object_get(back, "a"), "r");
  assert_true(json_is_real(json_array_get(reals, 2))); /* 3.0 stays a real */
  assert_true(json_real_value(json_array_get(reals, 4)) == 0.30000000000000004);
  assert_non_null(strstr(text, "[0.1, 1e-300, 3.0, -0.0, 0.30000000000000004]"));
  json_decref(back);
  json_decref(orig);
  free(text);
}

/* One --set per leaf of v (key path kp); false when an override was refused. */
static bool set_leaves(const json_t *v, const char *kp, tsr_error_t *err) {
  if (json_is_object(v) && json_object_size(v) > 0) {
    const char *key;
    json_t *item;
    json_object_foreach((json_t *)v, key, item) {
      char sub[PATH_MAX_LEN];
      snprintf(sub, sizeof sub, "%s%s%s", kp, kp[0] ? "." : "", key);
      if (!set_leaves(item, sub, err)) return false;
    }
    return true;
  }
  char *value = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
  char assignment[4 * PATH_MAX_LEN];
  int n = snprintf(assignment, sizeof assignment, "%s=%s", kp, value);
  free(value);
  assert_true(n > 0 && (size_t)n < sizeof assignment);
  return config_set(doc, assignment, err) == TSR_OK;
}

/* The case as overrides of "{}": the same failure as the file's. */
static void check_case_as_overrides(const char *path, const char *text, size_t len,
                                    const char *fragment) {
  json_error_t jerr;
  json_t *file = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
  if (!file || !json_is_object(file)) { /* syntax, duplicates, top level: the file's own */
    json_decref(file);
    return;
  }
  tsr_error_t err;
  tsr_error_clear(&err);
  config_free(&doc);
  ASSERT_OK(config_parse("{}", 2, path, &doc, &err));
  bool set = set_leaves(file, "", &err);
  json_decref(file);
  if (!set) fail_msg("%s as --set: refused: %s", path, err.text);
  simulation_options_t o;
  tsr_status st = simulation_options_read(doc, &o, &err);
  if (st == TSR_OK) st = config_check_unknown(doc, &err);
  config_free(&doc);
  if (st == TSR_OK) fail_msg("%s as --set: accepted", path);
  if (!strstr(err.text, fragment))
    fail_msg("%s as --set: message \"%s\" lacks \"%s\"", path, err.text, fragment);
}

/* The command line's order: parse, read the simulation options, reject unknown keys. */
static tsr_status check_like_the_command_line(const char *text, size_t len, const char *path,
                                              tsr_error_t *err) {
  simulation_options_t o;
  tsr_status st = config_parse(text, len, path, &doc, err);
  if (st == TSR_OK) st = simulation_options_read(doc, &o, err);
  if (st == TSR_OK) st = config_check_unknown(doc, err);
  config_free(&doc);
  return st;
}

static void test_invalid_case(void **state) {
  const char *name = *state;
  tsr_error_t err;
  char path[PATH_MAX_LEN], err_path[PATH_MAX_LEN], fragment[1024];
  path_join(path, invalid_dir, name, ".json");
  path_join(err_path, invalid_dir, name, ".err");

  FILE *f = fopen(err_path, "rb");
  if (!f) fail_msg("%s: missing (every case needs its expected message fragment)", err_path);
  char *line = fgets(fragment, sizeof fragment, f);
  fclose(f);
  assert_non_null(line);
  fragment[strcspn(fragment, "\r\n")] = '\0';
  if (fragment[0] == '\0') fail_msg("%s: empty fragment", err_path);

  char *text = NULL;
  size_t len = 0;
  ASSERT_OK(config_read_file(path, &text, &len, &err));
  tsr_error_clear(&err);
  tsr_status st = check_like_the_command_line(text, len, path, &err);
  check_case_as_overrides(path, text, len, fragment);
  free(text);
  if (st == TSR_OK) fail_msg("%s was accepted", path);
  assert_int_equal(st, TSR_ERR_INVALID);
  assert_int_equal(err.code, TSR_ERR_INVALID);
  if (!strstr(err.text, fragment)) fail_msg("message \"%s\" lacks \"%s\"", err.text, fragment);
  char file_name[PATH_MAX_LEN];
  snprintf(file_name, sizeof file_name, "%s.json", name);
  if (!strstr(err.text, file_name))
    fail_msg("message \"%s\" does not name the file %s", err.text, file_name);
  /* the message starts with the file: "<path>:" or "<path>: " */
  if (strncmp(err.text, path, strlen(path)) != 0 || err.text[strlen(path)] != ':')
    fail_msg("message \"%s\" does not start with %s:", err.text, path);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s INVALID_DIR CASE...\n", argv[0]);
    return 1;
  }
  invalid_dir = argv[1];
  ncases = argc - 2;
  case_names = argv + 2;

  const struct CMUnitTest fixed[] = {
      cmocka_unit_test(test_default),
      DOC_TEST(test_valid_minimal_gets_defaults),
      DOC_TEST(test_valid_full),
      DOC_TEST(test_simulation_output),
      DOC_TEST(test_simulation_read_errors),
      DOC_TEST(test_simulation_allowed_keys),
      cmocka_unit_test(test_validate_filled_struct),
      DOC_TEST(test_parse_reads_len_bytes_only),
      DOC_TEST(test_parse_error_leaves_no_document),
      cmocka_unit_test(test_parse_rejects_non_json_numbers_and_nul),
      cmocka_unit_test(test_read_file_missing),
      cmocka_unit_test(test_read_file_directory),
      cmocka_unit_test(test_read_file_contents),
      DOC_TEST(test_type_mismatch),
      DOC_TEST(test_int_ranges),
      DOC_TEST(test_real_ranges),
      DOC_TEST(test_bool_readers),
      DOC_TEST(test_choice),
      DOC_TEST(test_string_limit),
      DOC_TEST(test_list),
      DOC_TEST(test_required_and_optional),
      DOC_TEST(test_unknown_top_level),
      DOC_TEST(test_unknown_nested),
      DOC_TEST(test_unknown_in_list_item),
      cmocka_unit_test(test_every_case_is_listed),
      DOC_TEST(test_set_values),
      DOC_TEST(test_set_refused),
      DOC_TEST(test_text_reads_back),
  };
  int failed = cmocka_run_group_tests_name("config", fixed, NULL, NULL);

  struct CMUnitTest *cases = calloc((size_t)ncases, sizeof *cases);
  if (!cases) return 1;
  for (int i = 0; i < ncases; ++i)
    cases[i] = (struct CMUnitTest){.name = case_names[i], .test_func = test_invalid_case,
                                   .teardown_func = free_doc, .initial_state = case_names[i]};
  failed += _cmocka_run_group_tests("config_invalid", cases, (size_t)ncases, NULL, NULL);
  free(cases);
  return failed;
}
