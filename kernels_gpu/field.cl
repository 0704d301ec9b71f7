/* field.cl: the ghost exchange of any field on the GPU layout, whatever it holds (PDFs
 * of any lattice, a scalar, a vector), its element size, its number of components, its
 * ghost width and which components cross each direction.
 *
 * Build define: ELEM_BYTES (4 or 8): the values are moved as unsigned integers of that
 * size, never as floating point, so every bit travels as it is (and a device without
 * doubles moves double fields too).
 *
 * A field holds `components` arrays (component c at element c * ncells) of sx * sy * sz
 * cells, the ghost layers included, x fastest: cell (x, y, z) of the block (-ghost <= x
 * < nx + ghost, ...) is element (x + ghost) + sx * ((y + ghost) + sy * (z + ghost)).
 *
 * The 26 slots are the faces, edges and corners of the block in the numbering of
 * blocks/direction.h. A slot's slice is one or more boxes (more than one where the ghost
 * layer is wider than a block along a periodic axis); a table row per box (B_ROW ints):
 * its first cell (3), extent (3), the number of crossing components, where their list
 * starts in `comps`, the slot, the box's first work item and the value where the box
 * starts: in the whole message buffer for packing, from the slot's start for
 * unpacking. A slot's values are its boxes in order, each box's cells in z-y-x order,
 * each cell with its crossing components in list order: the common message layout of
 * every hardware. */
#if ELEM_BYTES == 8
typedef ulong elem_t;
#else
typedef uint elem_t;
#endif

#define FIELD_SLOTS 26
#define B_LO 0
#define B_EXT 3
#define B_NCOMP 6
#define B_COMP 7
#define B_SLOT 8
#define B_ITEM 9
#define B_VALUE 10
#define B_ROW 11

/* The box of work item g: the last row whose first item is at most g. */
static int field_box(__global const int *tab, const int nboxes, const int g) {
  int lo = 0, hi = nboxes - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (tab[mid * B_ROW + B_ITEM] <= g) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* The field element of cell k (z-y-x order) of box t. */
static long field_cell(__global const int *t, const int k, const long sx, const long sy,
                       const int ghost) {
  const int x = t[B_LO] + k % t[B_EXT], y = t[B_LO + 1] + (k / t[B_EXT]) % t[B_EXT + 1],
            z = t[B_LO + 2] + k / (t[B_EXT] * t[B_EXT + 1]);
  return (long)(x + ghost) + sx * ((long)(y + ghost) + sy * (long)(z + ghost));
}

/* Writes the crossing components of every box into out; one work item per slice cell. */
__kernel void field_pack(__global const elem_t *f, __global elem_t *out, __global const int *tab,
                         __global const int *comps, const int nboxes, const int nitems,
                         const long sx, const long sy, const long ncells, const int ghost) {
  const int g = get_global_id(0);
  if (g >= nitems) return;
  __global const int *t = tab + field_box(tab, nboxes, g) * B_ROW;
  const int k = g - t[B_ITEM], n = t[B_NCOMP];
  const long cell = field_cell(t, k, sx, sy, ghost);
  const long o = (long)t[B_VALUE] + (long)k * n;
  __global const int *cs = comps + t[B_COMP];
  for (int c = 0; c < n; ++c) out[o + c] = f[(long)cs[c] * ncells + cell];
}

/* Reads the slots whose bit is set in mask into the ghost layers (tab: the receiving
 * boxes). Slot s comes from buffer s<s> at value o<s>: the block's own message buffer
 * (data that came through the host) or a neighbour's pack buffer on this device. */
#define FIELD_SRC(S) __global const elem_t *s##S, const long o##S
#define FIELD_CASE(S) case S: src = s##S + o##S; break;
__kernel void field_unpack(__global elem_t *f, __global const int *tab,
                           __global const int *comps, const int nboxes, const int nitems,
                           const long sx, const long sy, const long ncells, const int ghost,
                           const uint mask, FIELD_SRC(0), FIELD_SRC(1), FIELD_SRC(2),
                           FIELD_SRC(3), FIELD_SRC(4), FIELD_SRC(5), FIELD_SRC(6),
                           FIELD_SRC(7), FIELD_SRC(8), FIELD_SRC(9), FIELD_SRC(10),
                           FIELD_SRC(11), FIELD_SRC(12), FIELD_SRC(13), FIELD_SRC(14),
                           FIELD_SRC(15), FIELD_SRC(16), FIELD_SRC(17), FIELD_SRC(18),
                           FIELD_SRC(19), FIELD_SRC(20), FIELD_SRC(21), FIELD_SRC(22),
                           FIELD_SRC(23), FIELD_SRC(24), FIELD_SRC(25)) {
  const int g = get_global_id(0);
  if (g >= nitems) return;
  __global const int *t = tab + field_box(tab, nboxes, g) * B_ROW;
  const int s = t[B_SLOT];
  if (!((mask >> s) & 1u)) return;
  __global const elem_t *src = 0;
  switch (s) {
    FIELD_CASE(0) FIELD_CASE(1) FIELD_CASE(2) FIELD_CASE(3) FIELD_CASE(4) FIELD_CASE(5)
    FIELD_CASE(6) FIELD_CASE(7) FIELD_CASE(8) FIELD_CASE(9) FIELD_CASE(10) FIELD_CASE(11)
    FIELD_CASE(12) FIELD_CASE(13) FIELD_CASE(14) FIELD_CASE(15) FIELD_CASE(16) FIELD_CASE(17)
    FIELD_CASE(18) FIELD_CASE(19) FIELD_CASE(20) FIELD_CASE(21) FIELD_CASE(22) FIELD_CASE(23)
    FIELD_CASE(24) FIELD_CASE(25)
  }
  const int k = g - t[B_ITEM], n = t[B_NCOMP];
  const long cell = field_cell(t, k, sx, sy, ghost);
  const long o = (long)t[B_VALUE] + (long)k * n;
  __global const int *cs = comps + t[B_COMP];
  for (int c = 0; c < n; ++c) f[(long)cs[c] * ncells + cell] = src[o + c];
}
