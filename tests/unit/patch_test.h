/* Patch options for the unit tests that build patches: cells, blocks and periodicity per
 * axis in one call, the rest as patch_options_default gives them. */
#ifndef PATCH_TEST_H
#define PATCH_TEST_H

#include <stdbool.h>
#include <stdint.h>

#include "patch.h"

static inline patch_options_t opts3(int64_t cx, int64_t cy, int64_t cz, int bx, int by, int bz,
                                    bool px, bool py, bool pz) {
  patch_options_t o = patch_options_default();
  o.cells[0] = cx, o.cells[1] = cy, o.cells[2] = cz;
  o.blocks[0] = bx, o.blocks[1] = by, o.blocks[2] = bz;
  o.periodic[0] = px, o.periodic[1] = py, o.periodic[2] = pz;
  return o;
}

#endif
