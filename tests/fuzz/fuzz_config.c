/* fuzz_config: feeds the input bytes to config_parse as the text of "fuzz.json", then reads
 * it the way `tessera run` does: simulation_options_read, lbm_options_read (the LBM
 * sweep's sections), then config_check_unknown, stopping at the first failure.
 *
 * On success the options must pass simulation_options_validate and (for block grids small
 * enough to build quickly) give a patch; on failure the error must carry its code and a
 * non-empty, NUL-terminated message that starts with the source name, a failed parse
 * leaves no document, and a failed read leaves the caller's options alone. Every document
 * is freed (sanitizer builds check for leaks). */
#define _POSIX_C_SOURCE 200809L /* strnlen */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "lbm.h"
#include "patch.h"
#include "simulation.h"
#include "tsr_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FUZZ_MAX_PATCH_BLOCKS = 4096 };

static void fuzz_require(int cond) {
  if (!cond) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char source[] = "fuzz.json";
  config_t *cfg = NULL;
  simulation_options_t opts = simulation_options_default(), before;
  opts.steps = -7; /* a value no successful read gives */
  memcpy(&before, &opts, sizeof opts); /* bytes, padding included, for memcmp below */
  tsr_error_t err;
  tsr_error_clear(&err);

  tsr_status st = config_parse((const char *)data, size, source, &cfg, &err);
  if (st == TSR_OK) {
    fuzz_require(cfg != NULL);
    fuzz_require(strcmp(config_source(cfg), source) == 0);
    fuzz_require(strcmp(config_path(config_root(cfg)), "") == 0);
    st = simulation_options_read(cfg, &opts, &err);
    if (st != TSR_OK) fuzz_require(memcmp(&opts, &before, sizeof opts) == 0);
  } else {
    fuzz_require(cfg == NULL);
  }
  lbm_options_t lbm = lbm_options_default();
  if (st == TSR_OK) {
    st = lbm_options_read(cfg, &opts.domain, &lbm, &err);
    if (st == TSR_OK) {
      tsr_error_t lerr;
      fuzz_require(lbm_options_validate(&lbm, &lerr) == TSR_OK);
    }
  }
  if (st == TSR_OK) st = config_check_unknown(cfg, &err);

  if (st != TSR_OK) {
    fuzz_require(err.code == st);
    size_t n = strnlen(err.text, sizeof err.text);
    fuzz_require(n > 0 && n < sizeof err.text);
    fuzz_require(strncmp(err.text, source, strlen(source)) == 0);
    config_free(&cfg);
    fuzz_require(cfg == NULL);
    return 0;
  }

  /* a second check gives the same verdict */
  fuzz_require(config_check_unknown(cfg, &err) == TSR_OK);
  config_free(&cfg);

  tsr_error_t verr;
  tsr_error_clear(&verr);
  fuzz_require(simulation_options_validate(&opts, &verr) == TSR_OK);
  fuzz_require(opts.steps >= 0 && opts.progress_every >= 0);
  fuzz_require(opts.output_folder[0] != '\0');
  fuzz_require(strnlen(opts.output_folder, sizeof opts.output_folder) < sizeof opts.output_folder);

  int64_t nblocks = 1;
  for (int a = 0; a < 3; ++a) nblocks *= opts.domain.blocks[a];
  if (nblocks <= FUZZ_MAX_PATCH_BLOCKS) {
    patch_t *patch = NULL;
    patch_layout_t layout = {.nranks = 3, .my_rank = 2};
    fuzz_require(patch_create(&opts.domain, &layout, &patch, &verr) == TSR_OK);
    fuzz_require(patch_block_count(patch) == nblocks);
    int32_t owned = 0;
    for (int r = 0; r < layout.nranks; ++r) owned += patch_rank_block_count(patch, r);
    fuzz_require(owned == nblocks);
    patch_free(&patch);
  }
  return 0;
}
