/* lattice: the velocity sets of lattice_defs.h as run-time descriptors, for host code
 * that loops over a lattice chosen by the configuration (initialisation, boundary
 * links, which values cross a block face, edge or corner). Kernels read the same
 * tables at compile time through lattice_defs.h. */
#ifndef LATTICE_H
#define LATTICE_H

#include "lattice_defs.h"

typedef struct lattice {
  const char *name; /* "d3q19", ... */
  int d, q, reach;
  int inv_cs2;      /* 1 / c_s^2 (0: not an integer; then see cs2) */
  double cs2;       /* c_s^2 */
  const int *c[3];  /* c[a][i]: component a of c_i */
  const int *inv;   /* inv[i]: the direction with c = -c_i */
  const double *w;  /* w[i] */
  /* The orthogonal moment basis (lattice_defs.h LATTICE_L_MOMENT): moment k of velocity c,
     and the class (LATTICE_MOMENT_*) whose rate relaxes moment k. NULL for D2Q37. */
  int (*moment)(int k, int x, int y, int z);
  int (*moment_class)(int k);
  /* For a shear moment k: kappa in nu = kappa (1/s_k - 1/2) (c_s^2 but for D3Q13). */
  double (*shear_cs2)(int k);
  /* LATTICE_L_EQ: 1 where the equilibrium's second-order moments are set in moment space
     (D3Q13: MRT only), 0 for the polynomial of the weights. */
  int moment_eq;
} lattice_t;

/* D2Q37 (reach 3; the d2q37 module's, not among lattice_all's). */
extern const lattice_t lattice_d2q37;

/* The lattice of this name (of LATTICE_LIST), NULL for an unknown name. Static storage. */
const lattice_t *lattice_find(const char *name);

/* Every lattice, in the order of LATTICE_LIST; *n gets their number. */
const lattice_t *const *lattice_all(int *n);

/* The descriptors by name: lattice_d2q9, lattice_d3q7, ... */
#define LATTICE_DECLARE(lower, UPPER) extern const lattice_t lattice_##lower;
LATTICE_LIST(LATTICE_DECLARE)
#undef LATTICE_DECLARE

/* M_ki, moment k of c_i (l->moment non-NULL), and |M_k|^2 = sum_i M_ki^2. */
int lattice_moment(const lattice_t *l, int k, int i);
long lattice_moment_norm(const lattice_t *l, int k);

/* The ghost widths of a field of the lattice's populations: its reach along each of its
 * dimensions, 0 along z for a 2-D lattice (nothing crosses along z). */
void lattice_ghost_width(const lattice_t *l, int width[3]);

/* The directions i whose c_i crosses a block boundary in the direction with offsets
 * off (each in {-1, 0, 1}): every non-zero component of off has the sign of that of c_i
 * (for a lattice of reach 1: equals it). Writes
 * them in increasing order to out (room for l->q) and returns their number. */
int lattice_crossing(const lattice_t *l, const int off[3], int *out);

/* The table of streaming in place (the AA pattern; gpu_field_shape_t.stream): for each
 * direction i, 4 ints into out (room for 4 LATTICE_MAX_Q): inv[i] and c_i, where the
 * value of direction i of a cell lies while the populations are swapped. */
void lattice_stream_table(const lattice_t *l, int *out);

#endif
