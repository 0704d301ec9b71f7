#include "lattice.h"

#include <string.h>

#define LATTICE_DEFINE(lower, UPPER)                                                     \
  static const int lower##_cx[] = {LATTICE_##UPPER##_CX};                                \
  static const int lower##_cy[] = {LATTICE_##UPPER##_CY};                                \
  static const int lower##_cz[] = {LATTICE_##UPPER##_CZ};                                \
  static const int lower##_inv[] = {LATTICE_##UPPER##_INV};                              \
  static const double lower##_w[] = {LATTICE_##UPPER##_W};                               \
  _Static_assert(sizeof lower##_cx / sizeof(int) == LATTICE_##UPPER##_Q &&                \
                     sizeof lower##_cy / sizeof(int) == LATTICE_##UPPER##_Q &&            \
                     sizeof lower##_cz / sizeof(int) == LATTICE_##UPPER##_Q &&            \
                     sizeof lower##_inv / sizeof(int) == LATTICE_##UPPER##_Q &&           \
                     sizeof lower##_w / sizeof(double) == LATTICE_##UPPER##_Q,            \
                 #lower ": every table has Q entries");
LATTICE_LIST(LATTICE_DEFINE)

/* The moment bases (lattice_defs.h LATTICE_L_MOMENT) as functions of k and c. */
#define LATTICE_MOMENTS(lower, UPPER)                                                    \
  static int lower##_moment(int k, int x, int y, int z) {                               \
    return LATTICE_##UPPER##_MOMENT(k, x, y, z);                                         \
  }                                                                                      \
  static int lower##_moment_class(int k) { return LATTICE_##UPPER##_MOMENT_CLASS(k); }  \
  static double lower##_shear_cs2(int k) {                                               \
    (void)k;                                                                             \
    return LATTICE_##UPPER##_SHEAR_CS2(k);                                               \
  }
LATTICE_LIST(LATTICE_MOMENTS)
#undef LATTICE_MOMENTS

#define LATTICE_ENTRY(lower, UPPER)                                                      \
  const lattice_t lattice_##lower = {                                                    \
      .name = #lower, .d = LATTICE_##UPPER##_D, .q = LATTICE_##UPPER##_Q,                \
      .reach = LATTICE_##UPPER##_REACH, .inv_cs2 = LATTICE_##UPPER##_INV_CS2,            \
      .cs2 = 1.0 / LATTICE_##UPPER##_INV_CS2,                                            \
      .c = {lower##_cx, lower##_cy, lower##_cz}, .inv = lower##_inv, .w = lower##_w,       \
      .moment = lower##_moment, .moment_class = lower##_moment_class,                    \
      .shear_cs2 = lower##_shear_cs2, .moment_eq = LATTICE_##UPPER##_EQ};
LATTICE_LIST(LATTICE_ENTRY)

LATTICE_DEFINE(d2q37, D2Q37)
const lattice_t lattice_d2q37 = {
    .name = "d2q37", .d = LATTICE_D2Q37_D, .q = LATTICE_D2Q37_Q, .reach = LATTICE_D2Q37_REACH,
    .inv_cs2 = LATTICE_D2Q37_INV_CS2,
    .cs2 = 1.0 / (LATTICE_D2Q37_SCALE * LATTICE_D2Q37_SCALE),
    .c = {d2q37_cx, d2q37_cy, d2q37_cz}, .inv = d2q37_inv, .w = d2q37_w};
#undef LATTICE_ENTRY

#define LATTICE_POINTER(lower, UPPER) &lattice_##lower,
static const lattice_t *const lattices[] = {LATTICE_LIST(LATTICE_POINTER)};
#undef LATTICE_POINTER
enum { LATTICE_COUNT = sizeof lattices / sizeof lattices[0] };

const lattice_t *const *lattice_all(int *n) {
  *n = LATTICE_COUNT;
  return lattices;
}

const lattice_t *lattice_find(const char *name) {
  for (int k = 0; name && k < LATTICE_COUNT; ++k)
    if (strcmp(lattices[k]->name, name) == 0) return lattices[k];
  return NULL;
}

void lattice_ghost_width(const lattice_t *l, int width[3]) {
  for (int a = 0; a < 3; ++a) width[a] = a < l->d ? l->reach : 0;
}

int lattice_crossing(const lattice_t *l, const int off[3], int *out) {
  int n = 0;
  for (int i = 0; i < l->q; ++i) {
    int crosses = off[0] != 0 || off[1] != 0 || off[2] != 0;
    for (int a = 0; a < 3; ++a)
      if (off[a] != 0 && (l->c[a][i] > 0) - (l->c[a][i] < 0) != off[a]) crosses = 0;
    if (crosses) out[n++] = i;
  }
  return n;
}

void lattice_stream_table(const lattice_t *l, int *out) {
  for (int i = 0; i < l->q; ++i) {
    out[4 * i] = l->inv[i];
    for (int a = 0; a < 3; ++a) out[4 * i + 1 + a] = l->c[a][i];
  }
}

int lattice_moment(const lattice_t *l, int k, int i) {
  return l->moment(k, l->c[0][i], l->c[1][i], l->c[2][i]);
}

long lattice_moment_norm(const lattice_t *l, int k) {
  long n = 0;
  for (int i = 0; i < l->q; ++i) n += (long)lattice_moment(l, k, i) * lattice_moment(l, k, i);
  return n;
}
