/* fuzz_config: feeds the input bytes to config_parse as the text of "fuzz.json".
 *
 * On success the config must pass config_validate, keep the source name, and (for block
 * grids small enough to build quickly) give a patch; on failure the error must carry
 * its code and a non-empty, NUL-terminated message that names the source. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "patch.h"
#include "tsr_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FUZZ_MAX_PATCH_BLOCKS = 4096 };

static void fuzz_require(int cond) {
  if (!cond) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char source[] = "fuzz.json";
  config_t cfg = config_default();
  tsr_error_t err;
  tsr_error_clear(&err);
  tsr_status st = config_parse((const char *)data, size, source, &cfg, &err);
  if (st != TSR_OK) {
    fuzz_require(err.code == st);
    size_t n = strlen(err.text);
    fuzz_require(n > 0 && n < sizeof err.text);
    fuzz_require(strncmp(err.text, source, strlen(source)) == 0);
    return 0;
  }

  fuzz_require(strcmp(cfg.source, source) == 0);
  tsr_error_t verr;
  tsr_error_clear(&verr);
  fuzz_require(config_validate(&cfg, &verr) == TSR_OK);

  int64_t nblocks = 1;
  for (int a = 0; a < 3; ++a) nblocks *= cfg.domain.blocks[a];
  if (nblocks <= FUZZ_MAX_PATCH_BLOCKS) {
    patch_t *patch = NULL;
    patch_layout_t layout = {.nranks = 3, .my_rank = 2};
    fuzz_require(patch_create(&cfg.domain, &layout, &patch, &verr) == TSR_OK);
    fuzz_require(patch_block_count(patch) == nblocks);
    int32_t owned = 0;
    for (int r = 0; r < layout.nranks; ++r) owned += patch_rank_block_count(patch, r);
    fuzz_require(owned == nblocks);
    patch_free(&patch);
  }
  return 0;
}
