/* config: JSON run configurations.
 *
 * Usage: test_config INVALID_DIR CASE...
 *
 * Every CASE names INVALID_DIR/CASE.json and INVALID_DIR/CASE.err (one line: a fragment
 * of the expected message). Each case is read with config_read_file and parsed with
 * config_parse, and must fail with TSR_ERR_INVALID and a message that contains the
 * fragment and the file name. Every .json in INVALID_DIR must be listed as a case.
 *
 * Fixed tests: defaults of a minimal config (INVALID_DIR/../valid/minimal.json), a full
 * config, len-bounded parsing of text without a NUL, config_validate on filled structs,
 * and config_read_file errors (missing file: TSR_ERR_IO naming the path). */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "patch.h"
#include "tsr_error.h"

#define ASSERT_OK(call)                                                                  \
  do {                                                                                   \
    tsr_status st_ = (call);                                                             \
    if (st_ != TSR_OK) fail_msg("%s failed: %s", #call, err.text);                       \
  } while (0)

#define ASSERT_ERR(call, want, frag)                                                     \
  do {                                                                                   \
    tsr_error_clear(&err);                                                               \
    tsr_status st_ = (call);                                                             \
    if (st_ != (want))                                                                   \
      fail_msg("%s returned %d, expected %d (text: %s)", #call, (int)st_, (int)(want),   \
               err.text);                                                                \
    assert_int_equal(err.code, (want));                                                  \
    if (strstr(err.text, (frag)) == NULL)                                                \
      fail_msg("error text \"%s\" lacks \"%s\"", err.text, (frag));                      \
  } while (0)

enum { PATH_MAX_LEN = 1024 };

static const char *invalid_dir; /* argv[1] */
static int ncases;
static char **case_names; /* argv[2..] */

static void path_join(char *out, const char *dir, const char *name, const char *ext) {
  int n = snprintf(out, PATH_MAX_LEN, "%s/%s%s", dir, name, ext);
  assert_true(n > 0 && n < PATH_MAX_LEN);
}

/* Reads and parses a config file that must be valid. */
static config_t load_valid(const char *name) {
  tsr_error_t err;
  char path[PATH_MAX_LEN], *text = NULL;
  size_t len = 0;
  config_t cfg;
  memset(&cfg, 0xa5, sizeof cfg); /* garbage: the parse must fill everything */
  path_join(path, invalid_dir, "../valid/", name);
  ASSERT_OK(config_read_file(path, &text, &len, &err));
  ASSERT_OK(config_parse(text, len, path, &cfg, &err));
  assert_string_equal(cfg.source, path);
  free(text);
  return cfg;
}

/* ---------------------------------------------------------------- fixed tests */

static void test_default(void **state) {
  (void)state;
  config_t cfg = config_default();
  for (int a = 0; a < 3; ++a) {
    assert_int_equal(cfg.domain.cells[a], 1);
    assert_int_equal(cfg.domain.blocks[a], 1);
    assert_false(cfg.domain.periodic[a]);
  }
  assert_int_equal(cfg.steps, 1);
  assert_string_equal(cfg.source, "(config)");
  tsr_error_t err;
  ASSERT_OK(config_validate(&cfg, &err));
}

static void test_valid_minimal_gets_defaults(void **state) {
  (void)state;
  config_t cfg = load_valid("minimal.json");
  assert_int_equal(cfg.domain.cells[0], 8);
  assert_int_equal(cfg.domain.cells[1], 4);
  assert_int_equal(cfg.domain.cells[2], 2);
  for (int a = 0; a < 3; ++a) {
    assert_int_equal(cfg.domain.blocks[a], 1);
    assert_false(cfg.domain.periodic[a]);
  }
  assert_int_equal(cfg.steps, 1);
}

static void test_valid_full(void **state) {
  (void)state;
  config_t cfg = load_valid("full.json");
  const int64_t cells[3] = {10, 7, 5};
  const int blocks[3] = {3, 2, 5};
  const bool periodic[3] = {true, false, true};
  for (int a = 0; a < 3; ++a) {
    assert_int_equal(cfg.domain.cells[a], cells[a]);
    assert_int_equal(cfg.domain.blocks[a], blocks[a]);
    assert_int_equal(cfg.domain.periodic[a], periodic[a]);
  }
  assert_int_equal(cfg.steps, 0);
  /* what config gives, patch takes */
  tsr_error_t err;
  patch_t *p = NULL;
  patch_layout_t layout = {.nranks = 2, .my_rank = 0};
  ASSERT_OK(patch_create(&cfg.domain, &layout, &p, &err));
  assert_int_equal(patch_block_count(p), 30);
  patch_free(&p);
}

static void test_parse_reads_len_bytes_only(void **state) {
  (void)state;
  tsr_error_t err;
  const char json[] = "{\"domain\": {\"cells\": [3, 2, 1]}, \"steps\": 12}";
  const size_t len = strlen(json);
  /* an exact copy without a NUL after it (ASan catches a read past the end) */
  char *exact = malloc(len);
  assert_non_null(exact);
  memcpy(exact, json, len);
  config_t cfg;
  ASSERT_OK(config_parse(exact, len, "inline", &cfg, &err));
  assert_int_equal(cfg.domain.cells[0], 3);
  assert_int_equal(cfg.steps, 12);
  assert_string_equal(cfg.source, "inline");
  free(exact);
  /* bytes after len are not part of the config */
  char longer[128];
  snprintf(longer, sizeof longer, "%s, \"garbage\": ]", json);
  ASSERT_OK(config_parse(longer, len, "inline", &cfg, &err));
  ASSERT_ERR(config_parse(longer, strlen(longer), "inline", &cfg, &err), TSR_ERR_INVALID,
             "inline:1:");
  /* steps may be as large as int64 allows */
  const char big[] = "{\"domain\": {\"cells\": [1, 1, 1]}, \"steps\": 9223372036854775807}";
  ASSERT_OK(config_parse(big, strlen(big), "big", &cfg, &err));
  assert_int_equal(cfg.steps, INT64_MAX);
}

static void test_parse_error_leaves_output_alone(void **state) {
  (void)state;
  tsr_error_t err;
  config_t cfg = config_default();
  cfg.steps = 77;
  const char bad[] = "{\"domain\": {\"cells\": [3, 2, 1]}, \"steps\": -5}";
  ASSERT_ERR(config_parse(bad, strlen(bad), "neg.json", &cfg, &err), TSR_ERR_INVALID,
             "neg.json: steps = -5: allowed are 0..");
  assert_int_equal(cfg.steps, 77);
  assert_string_equal(cfg.source, "(config)");
}

static void test_validate_filled_struct(void **state) {
  (void)state;
  tsr_error_t err;
  config_t cfg = config_default();
  cfg.steps = -1;
  ASSERT_ERR(config_validate(&cfg, &err), TSR_ERR_INVALID, "steps = -1: allowed are integers >= 0");
  cfg = config_default();
  cfg.domain.cells[0] = 4;
  cfg.domain.blocks[0] = 5;
  ASSERT_ERR(config_validate(&cfg, &err), TSR_ERR_INVALID,
             "domain.blocks[0] (x) = 5 exceeds cells[0] = 4");
  cfg.domain.blocks[0] = 4;
  ASSERT_OK(config_validate(&cfg, &err));
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

/* ---------------------------------------------------------------- data-driven cases */

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
  config_t cfg = config_default();
  tsr_error_clear(&err);
  tsr_status st = config_parse(text, len, path, &cfg, &err);
  free(text);
  if (st == TSR_OK) fail_msg("%s was accepted", path);
  assert_int_equal(st, TSR_ERR_INVALID);
  assert_int_equal(err.code, TSR_ERR_INVALID);
  if (!strstr(err.text, fragment)) fail_msg("message \"%s\" lacks \"%s\"", err.text, fragment);
  char file_name[PATH_MAX_LEN];
  snprintf(file_name, sizeof file_name, "%s.json", name);
  if (!strstr(err.text, file_name))
    fail_msg("message \"%s\" does not name the file %s", err.text, file_name);
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
      cmocka_unit_test(test_valid_minimal_gets_defaults),
      cmocka_unit_test(test_valid_full),
      cmocka_unit_test(test_parse_reads_len_bytes_only),
      cmocka_unit_test(test_parse_error_leaves_output_alone),
      cmocka_unit_test(test_validate_filled_struct),
      cmocka_unit_test(test_read_file_missing),
      cmocka_unit_test(test_read_file_directory),
      cmocka_unit_test(test_read_file_contents),
      cmocka_unit_test(test_every_case_is_listed),
  };
  int failed = cmocka_run_group_tests_name("config", fixed, NULL, NULL);

  struct CMUnitTest *cases = calloc((size_t)ncases, sizeof *cases);
  if (!cases) return 1;
  for (int i = 0; i < ncases; ++i)
    cases[i] = (struct CMUnitTest){.name = case_names[i], .test_func = test_invalid_case,
                                   .initial_state = case_names[i]};
  failed += _cmocka_run_group_tests("config_invalid", cases, (size_t)ncases, NULL, NULL);
  free(cases);
  return failed;
}
