/* fuzz_stl: feeds the input bytes to stl_parse as the file "fuzz.stl", then checks a mesh
 * it accepts with stl_check_closed and places it.
 *
 * On success the mesh must have triangles, finite vertices inside its bounds; on failure
 * the error must carry its code and a non-empty, NUL-terminated message that starts with
 * the source name, and the mesh must be left empty. Every mesh is freed (sanitizer builds
 * check for leaks). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stl.h"
#include "tsr_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_require(int cond) {
  if (!cond) abort();
}

static void fuzz_message(const tsr_error_t *err, tsr_status st) {
  fuzz_require(err->code == st);
  fuzz_require(memchr(err->text, '\0', sizeof err->text) != NULL);
  fuzz_require(strncmp(err->text, "fuzz.stl: ", 10) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  stl_mesh_t m;
  tsr_error_t err;
  tsr_error_clear(&err);
  tsr_status st = stl_parse(data, size, "fuzz.stl", &m, &err);
  if (st != TSR_OK) {
    fuzz_message(&err, st);
    fuzz_require(m.tri == NULL && m.n == 0);
    return 0;
  }
  fuzz_require(m.n > 0 && m.tri != NULL);
  for (size_t k = 0; k < m.n; ++k)
    for (int v = 0; v < 3; ++v)
      for (int a = 0; a < 3; ++a) {
        const double x = m.tri[k][v][a];
        fuzz_require(isfinite(x) && x >= m.lo[a] && x <= m.hi[a]);
      }
  st = stl_check_closed(&m, "fuzz.stl", &err);
  if (st != TSR_OK) fuzz_message(&err, st);
  const double rot[3] = {30, -45, 90}, off[3] = {1, 2, 3};
  stl_place(&m, 0.5, rot, off);
  for (int a = 0; a < 3; ++a) fuzz_require(m.lo[a] <= m.hi[a]);
  stl_free(&m);
  return 0;
}
