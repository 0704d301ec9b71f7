/* field.cl: the ghost exchange of a field on the GPU layout, whatever it holds (PDFs of
 * any lattice, a scalar, a vector), its element size, its number of components, its
 * ghost width and which components cross each direction: the pack and the unpack of
 * every block of a field set (gpu_field.h) in one launch each.
 *
 * Build define: ELEM_BYTES (2, 4 or 8): the values are moved as unsigned integers of that
 * size, never as floating point, so every bit travels as it is (and a device without
 * doubles moves double fields too).
 *
 * The blocks of a set keep their fields in the set's arrays (one per copy, g0 and g1):
 * block b's field starts at element K_BASE of its row of the block table and holds
 * `components` arrays (component c at element c * ncells) of sx * sy * sz cells, the
 * ghost layers included, x fastest: cell (x, y, z) of the block (-ghost <= x < nx +
 * ghost, ...; -gz <= z < nz + gz, gz at K_GZ) is element (x + ghost) + sx * ((y + ghost) +
 * sy * (z + gz)). A block's
 * present copy is g1 where its K_FLIP bit differs from the launch's flip, else g0; a
 * field streamed in place has one copy (g1 is g0) and that bit says it is swapped
 * (field_elem).
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
#elif ELEM_BYTES == 2
typedef ushort elem_t;
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
#define K_GZ 5
#define K_ROW 6

/* The row of work item g: the last row whose first item is at most g, searched from the
 * row where g's chunk of ROW_CHUNK items starts (chunks[g / ROW_CHUNK]). */
#define ROW_CHUNK_BITS 6 /* 64 items */
static long field_row(__global const long *tab, __global const int *chunks, const long g) {
  long r = chunks[g >> ROW_CHUNK_BITS];
  while (tab[(r + 1) * R_ROW + R_ITEM] <= g) ++r;
  return r;
}

/* Cell k (z-y-x order) of a box of extent t[R_EXT..]: its offsets from the box's first
 * cell (32-bit arithmetic: a box has fewer than 2^31 cells, and 64-bit division is
 * slow on GPUs and CPUs alike). */
static int3 field_offsets(__global const long *t, const int k) {
  const int ex = (int)t[R_EXT], ey = (int)t[R_EXT + 1];
  const int yz = k / ex;
  return (int3)(k - yz * ex, yz % ey, yz / ey);
}

/* The element of the cell at offsets o of box t in its block's field (bk: the block's
 * row). */
static long field_cell(__global const long *t, const int3 o, __global const long *bk,
                       const long ghost) {
  const long x = t[R_LO] + o.x, y = t[R_LO + 1] + o.y, z = t[R_LO + 2] + o.z;
  return (x + ghost) + bk[K_SX] * ((y + ghost) + bk[K_SY] * (z + bk[K_GZ]));
}

/* The element of component c of a block's field at cell (an element of component 0).
 * A field streamed in place (populations of one array, gpu_field_shape_t.stream) holds,
 * while it is swapped (odd steps), the value of component c of a cell at component
 * st[c].x of the cell st[c].yzw away; otherwise, and for every other field, at c. */
static long field_elem(const int c, const long cell, const long nc, const int swapped,
                       __global const int4 *st, __global const long *bk) {
  if (!swapped) return c * nc + cell;
  const int4 m = st[c];
  return m.x * nc + cell + m.y + bk[K_SX] * (m.z + bk[K_SY] * (long)m.w);
}

/* A work item's cells: one cell (rows 0: a GPU, where consecutive work items touch
 * consecutive cells), or a whole x row of its box (rows 1: a CPU device, where the
 * lookups of a work item are paid once per row). */
#define FIELD_CELLS                                                                    \
  const int ex_ = (int)t[R_EXT];                                                       \
  const int kb = rows ? (int)k0 * ex_ : (int)k0, cnt = rows ? ex_ : 1;

/* Writes the crossing components of every box into out, from element obase on. */
__kernel void field_pack(__global const elem_t *g0, __global const elem_t *g1, const int flip,
                         __global elem_t *out, __global const long *tab,
                         __global const long *blocks, __global const int *comps,
                         __global const int *chunks, const long nitems, const long ghost,
                         const int rows, __global const int4 *st, const int in_place,
                         const long obase) {
  const long g = get_global_id(0);
  if (g >= nitems) return;
  out += obase; /* the set's place in the process's message array */
  __global const long *t = tab + field_row(tab, chunks, g) * R_ROW;
  __global const long *bk = blocks + t[R_BLOCK] * K_ROW;
  const int par = ((int)bk[K_FLIP] ^ flip) & 1, sw = in_place & par;
  __global const elem_t *f = (par ? g1 : g0) + bk[K_BASE];
  const long k0 = g - t[R_ITEM], n = t[R_NCOMP], nc = bk[K_NCELLS];
  FIELD_CELLS
  const long cell = field_cell(t, field_offsets(t, kb), bk, ghost);
  const long o = t[R_VALUE] + (long)kb * n;
  __global const int *cs = comps + t[R_COMP];
  for (int j = 0; j < cnt; ++j)
    for (long c = 0; c < n; ++c) out[o + j * n + c] = f[field_elem(cs[c], cell + j, nc, sw, st, bk)];
}

/* Reads the boxes whose source is set into the ghost layers (tab: the receiving boxes).
 * src per row: x, where the values come from: -1, nowhere this time; 0, the in array
 * (messages that came through the host), y the value where the slot's message starts;
 * 1, the pack array, the same; 2, straight from the sending block of this set,
 * y the row of the sending box in send (the box table of field_pack), whose cells
 * match this box's one by one. */
__kernel void field_unpack(__global elem_t *g0, __global elem_t *g1, const int flip,
                           __global const elem_t *in, __global const elem_t *out,
                           __global const long *tab, __global const long2 *src,
                           __global const long *blocks, __global const int *comps,
                           __global const int *chunks, const long nitems, const long ghost,
                           __global const long *send, const int rows,
                           __global const int4 *st, const int in_place) {
  const long g = get_global_id(0);
  if (g >= nitems) return;
  const long r = field_row(tab, chunks, g);
  const long2 s = src[r];
  if (s.x < 0) return;
  __global const long *t = tab + r * R_ROW;
  __global const long *bk = blocks + t[R_BLOCK] * K_ROW;
  const int par = ((int)bk[K_FLIP] ^ flip) & 1, sw = in_place & par;
  __global elem_t *f = (par ? g1 : g0) + bk[K_BASE];
  const long k0 = g - t[R_ITEM], n = t[R_NCOMP], nc = bk[K_NCELLS];
  FIELD_CELLS
  const int3 off = field_offsets(t, kb); /* the sending box's too: the same extent */
  const long cell = field_cell(t, off, bk, ghost);
  __global const int *cs = comps + t[R_COMP];
  if (s.x == 2) {
    __global const long *ts = send + s.y * R_ROW;
    __global const long *bs = blocks + ts[R_BLOCK] * K_ROW;
    const int pars = ((int)bs[K_FLIP] ^ flip) & 1, sws = in_place & pars;
    __global const elem_t *fs = (pars ? g1 : g0) + bs[K_BASE];
    const long cs_ = field_cell(ts, off, bs, ghost), ns = bs[K_NCELLS];
    for (int j = 0; j < cnt; ++j)
      for (long c = 0; c < n; ++c)
        f[field_elem(cs[c], cell + j, nc, sw, st, bk)] =
            fs[field_elem(cs[c], cs_ + j, ns, sws, st, bs)];
    return;
  }
  __global const elem_t *from = s.x ? out : in;
  const long o = s.y + t[R_VALUE] + (long)kb * n;
  for (int j = 0; j < cnt; ++j)
    for (long c = 0; c < n; ++c) f[field_elem(cs[c], cell + j, nc, sw, st, bk)] = from[o + j * n + c];
}
