/* field.cl: the ghost exchange of a field on the GPU layout, whatever it holds (PDFs of
 * any lattice, a scalar, a vector), its element size, its number of components, its
 * ghost width and which components cross each direction: the pack and the unpack of
 * every block of a field set (gpu_field.h) in one launch each.
 *
 * Build define: ELEM_BYTES (4 or 8): the values are moved as unsigned integers of that
 * size, never as floating point, so every bit travels as it is (and a device without
 * doubles moves double fields too).
 *
 * The blocks of a set keep their fields in the set's arrays (one per copy, g0 and g1):
 * block b's field starts at element K_BASE of its row of the block table and holds
 * `components` arrays (component c at element c * ncells) of sx * sy * sz cells, the
 * ghost layers included, x fastest: cell (x, y, z) of the block (-ghost <= x < nx +
 * ghost, ...) is element (x + ghost) + sx * ((y + ghost) + sy * (z + ghost)). A block's
 * present copy is g1 where its K_FLIP bit differs from the launch's flip, else g0.
 *
 * The 26 slots are the faces, edges and corners of a block in the numbering of
 * blocks/direction.h. A slot's slice is one or more boxes (more than one where the ghost
 * layer is wider than a block along a periodic axis); the box table has a row per box
 * of every block (R_ROW longs): its first cell (3), extent (3), the number of crossing
 * components, where their list starts in `comps`, the block, the box's first work item
 * and the value where the box starts: in the set's message array for packing, from the
 * start of the slot's message for unpacking. A slot's values are its boxes in order,
 * each box's cells in z-y-x order, each cell with its crossing components in list
 * order: the common message layout of every hardware. */
#if ELEM_BYTES == 8
typedef ulong elem_t;
#else
typedef uint elem_t;
#endif

#define R_LO 0
#define R_EXT 3
#define R_NCOMP 6
#define R_COMP 7
#define R_BLOCK 8
#define R_ITEM 9
#define R_VALUE 10
#define R_ROW 11

#define K_BASE 0
#define K_SX 1
#define K_SY 2
#define K_NCELLS 3
#define K_FLIP 4
#define K_ROW 5

/* The row of work item g: the last row whose first item is at most g. */
static long field_row(__global const long *tab, const long nrows, const long g) {
  long lo = 0, hi = nrows - 1;
  while (lo < hi) {
    const long mid = (lo + hi + 1) / 2;
    if (tab[mid * R_ROW + R_ITEM] <= g) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* The element of cell k (z-y-x order) of box t in its block's field (bk: the block's
 * row). */
static long field_cell(__global const long *t, const long k, __global const long *bk,
                       const long ghost) {
  const long x = t[R_LO] + k % t[R_EXT], y = t[R_LO + 1] + (k / t[R_EXT]) % t[R_EXT + 1],
             z = t[R_LO + 2] + k / (t[R_EXT] * t[R_EXT + 1]);
  return (x + ghost) + bk[K_SX] * ((y + ghost) + bk[K_SY] * (z + ghost));
}

/* Writes the crossing components of every box into out; one work item per slice cell. */
__kernel void field_pack(__global const elem_t *g0, __global const elem_t *g1, const int flip,
                         __global elem_t *out, __global const long *tab,
                         __global const long *blocks, __global const int *comps,
                         const long nrows, const long nitems, const long ghost) {
  const long g = get_global_id(0);
  if (g >= nitems) return;
  __global const long *t = tab + field_row(tab, nrows, g) * R_ROW;
  __global const long *bk = blocks + t[R_BLOCK] * K_ROW;
  __global const elem_t *f = (((int)bk[K_FLIP] ^ flip) & 1 ? g1 : g0) + bk[K_BASE];
  const long k = g - t[R_ITEM], n = t[R_NCOMP], nc = bk[K_NCELLS];
  const long cell = field_cell(t, k, bk, ghost);
  const long o = t[R_VALUE] + k * n;
  __global const int *cs = comps + t[R_COMP];
  for (long c = 0; c < n; ++c) out[o + c] = f[cs[c] * nc + cell];
}

/* Reads the boxes whose source is set into the ghost layers (tab: the receiving boxes).
 * src per row: x, the array the slot's message is in (-1: none this time, 0: in, the
 * messages that came through the host; 1: out, the set's pack array, where a neighbour
 * on this device packed it); y, the value where the slot's message starts there. */
__kernel void field_unpack(__global elem_t *g0, __global elem_t *g1, const int flip,
                           __global const elem_t *in, __global const elem_t *out,
                           __global const long *tab, __global const long2 *src,
                           __global const long *blocks, __global const int *comps,
                           const long nrows, const long nitems, const long ghost) {
  const long g = get_global_id(0);
  if (g >= nitems) return;
  const long r = field_row(tab, nrows, g);
  const long2 s = src[r];
  if (s.x < 0) return;
  __global const long *t = tab + r * R_ROW;
  __global const long *bk = blocks + t[R_BLOCK] * K_ROW;
  __global elem_t *f = (((int)bk[K_FLIP] ^ flip) & 1 ? g1 : g0) + bk[K_BASE];
  __global const elem_t *from = s.x ? out : in;
  const long k = g - t[R_ITEM], n = t[R_NCOMP], nc = bk[K_NCELLS];
  const long cell = field_cell(t, k, bk, ghost);
  const long o = s.y + t[R_VALUE] + k * n;
  __global const int *cs = comps + t[R_COMP];
  for (long c = 0; c < n; ++c) f[cs[c] * nc + cell] = from[o + c];
}
