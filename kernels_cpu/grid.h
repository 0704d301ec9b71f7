/* grid: the CPU field layouts of a block and their slice packing and box copies.
 *
 * A field of a block with nx*ny*nz interior cells, ncomp values per cell and a ghost
 * layer of width g along x and y and gz along z is a strided array: the value of
 * component c of local cell (x, y, z) (-g <= x < nx + g, -g <= y < ny + g, -gz <= z <
 * nz + gz) is element origin + x sx + y sy + z sz + c sc. gz is g, except for a field
 * that nothing crosses along z (a 2-D lattice's: width 0 there), which stores no ghost
 * planes along z (one plane for a 2-D block instead of 2 g + 1). Two layouts:
 *   GRID_AOS  array of structures (the design card's reference CPU layout): a cell's
 *             values are adjacent; cells run x fastest, then y, then z; no padding.
 *   GRID_SOA  structure of arrays: one array per component, x fastest. The rows of a
 *             plane (ghost cells included) lie back to back with no padding, so that
 *             every line read holds values a kernel uses; each plane starts a 64-byte
 *             line (the vector unit's width), and a guard line before and after the
 *             planes lets a kernel run whole aligned vectors across a plane, ghost cells
 *             and all. Components lie a few lines off a multiple of 4 KiB apart, so that
 *             the rows of the components of one cell do not all fall into the same cache
 *             sets.
 * The allocation of a field (grid_dims.elements values) must be 64-byte aligned.
 *
 * grid_pack/grid_unpack copy the cells of a box [lo, hi) in z-y-x order, and for each
 * cell the listed components in list order, to or from a contiguous byte buffer of
 * elements of esize bytes (2: 16 bits, 4: float, 8: double), in host byte order: the common message
 * layout, the same for both layouts. Plain C: no MPI, no registry; OpenMP threads where
 * the box is large. */
#ifndef GRID_H
#define GRID_H

#include <stddef.h>
#include <stdint.h>

typedef enum grid_layout { GRID_AOS = 0, GRID_SOA = 1 } grid_layout_t;

typedef struct grid_dims {
  int nx, ny, nz;       /* interior cells */
  int ncomp;            /* components per cell */
  int ghost;            /* ghost layer width along x and y */
  int gz;               /* ghost layer width along z: ghost, or less (grid_dims_make_gz) */
  grid_layout_t layout;
  ptrdiff_t sx, sy, sz, sc; /* element strides of x, y, z and the component */
  ptrdiff_t origin;     /* element of cell (0, 0, 0), component 0 */
  size_t elements;      /* elements of the whole field: ghosts and padding included */
} grid_dims_t;

/* A CPU block's data of a field that other modules read by name (a coupling field: a
 * force, a velocity, a temperature): its values, 64-byte aligned, and their dims. */
typedef struct grid_field {
  void *values;
  grid_dims_t dims;
  size_t esize;
} grid_field_t;

/* The cells of a block's interior a kernel call covers. An overlapped step (the time
 * loop's) runs a sweep's kernel on the inner box while the ghost layers travel, then on
 * the rest, the shell, once they have arrived; cells are independent within a step, so
 * the two calls give what one call on every cell gives, bit for bit.
 *   GRID_PART_ALL    every interior cell (lo and hi unused);
 *   GRID_PART_INNER  the cells of the box [lo, hi) (inside the interior);
 *   GRID_PART_SHELL  the interior cells outside that box. */
typedef enum grid_part { GRID_PART_ALL = 0, GRID_PART_INNER, GRID_PART_SHELL } grid_part_t;
typedef struct grid_region {
  grid_part_t part;
  int lo[3], hi[3];
} grid_region_t;

/* The rows of the interior (y, z) that hold cells of region r: y in [*y0, *y1), z in
 * [*z0, *z1) (all rows but for GRID_PART_INNER; a row in that range may still hold none). */
static inline void grid_region_rows(const grid_dims_t *d, const grid_region_t *r, int *y0,
                                    int *y1, int *z0, int *z1) {
  const int in = r && r->part == GRID_PART_INNER;
  *y0 = in ? r->lo[1] : 0;
  *y1 = in ? r->hi[1] : d->ny;
  *z0 = in ? r->lo[2] : 0;
  *z1 = in ? r->hi[2] : d->nz;
}

/* The runs of cells [x0[k], x1[k]) of row (y, z) that lie in region r (NULL: every cell),
 * in increasing x; returns their number (0, 1 or 2). */
static inline int grid_region_row(const grid_dims_t *d, const grid_region_t *r, int y, int z,
                                  int x0[2], int x1[2]) {
  const grid_part_t part = r ? r->part : GRID_PART_ALL;
  const int inbox = part != GRID_PART_ALL && y >= r->lo[1] && y < r->hi[1] && z >= r->lo[2] &&
                    z < r->hi[2];
  int n = 0;
  if (part == GRID_PART_ALL || (part == GRID_PART_SHELL && !inbox)) {
    x0[n] = 0;
    x1[n++] = d->nx;
  } else if (part == GRID_PART_INNER) {
    if (inbox && r->lo[0] < r->hi[0]) {
      x0[n] = r->lo[0];
      x1[n++] = r->hi[0];
    }
  } else { /* a shell row through the box: the cells either side of it */
    if (r->lo[0] > 0) {
      x0[n] = 0;
      x1[n++] = r->lo[0];
    }
    if (r->hi[0] < d->nx) {
      x0[n] = r->hi[0];
      x1[n++] = d->nx;
    }
  }
  return n;
}

/* The dims of a field of n[3] interior cells in a layout, for elements of esize bytes
 * (the SoA padding is in bytes; 2-byte elements get the element offsets of 4-byte ones,
 * planes starting at 16 elements: kernels that compute in float and store 16 bits read a
 * float vector's 16 cells from 32 aligned bytes, and per-cell float fields of the same
 * cells share their element offsets). A field whose element count or strides do not fit in a
 * ptrdiff_t gets elements = 0 (every other field has at least one element): callers
 * check it before allocating. */
grid_dims_t grid_dims_make(const int n[3], int ncomp, int ghost, grid_layout_t layout,
                           size_t esize);
/* The same with gz (0 <= gz <= ghost) ghost planes along z. */
grid_dims_t grid_dims_make_gz(const int n[3], int ncomp, int ghost, int gz,
                              grid_layout_t layout, size_t esize);
/* The ghost widths a field stores for the widths it exchanges along each axis: ghost =
 * the largest, gz = width[2]. */
void grid_ghost_of(const int width[3], int *ghost, int *gz);

/* "aos" or "soa". */
const char *grid_layout_name(grid_layout_t layout);

/* Element index of component c of local cell (x, y, z). */
static inline size_t grid_index(const grid_dims_t *d, int x, int y, int z, int c) {
  return (size_t)(d->origin + (ptrdiff_t)x * d->sx + (ptrdiff_t)y * d->sy +
                  (ptrdiff_t)z * d->sz + (ptrdiff_t)c * d->sc);
}

/* grid_index with bounds checks: aborts with a message on a coordinate or component
 * outside the field. For debugging kernels. */
size_t grid_index_checked(const grid_dims_t *d, int x, int y, int z, int c);

/* Bytes grid_pack writes for a box and a component list. */
size_t grid_slice_bytes(const int lo[3], const int hi[3], int ncomps, size_t esize);

/* Copies the box out of the field; returns the bytes written. */
size_t grid_pack(const void *restrict field, const grid_dims_t *dims, size_t esize,
                 const int lo[3], const int hi[3], const int *restrict comps, int ncomps,
                 uint8_t *restrict out);

/* Copies a buffer written by grid_pack (same box size and component list, from a field
 * of either layout) into the box. */
size_t grid_unpack(void *restrict field, const grid_dims_t *dims, size_t esize,
                   const int lo[3], const int hi[3], const int *restrict comps, int ncomps,
                   const uint8_t *restrict in);

/* One box copied between two fields with the same element size (of the same layout or
 * not): cells [src_lo, src_lo + extent) of src to [dst_lo, dst_lo + extent) of dst, the
 * listed components only. */
typedef struct grid_copy_job {
  const void *src;
  grid_dims_t src_dims;
  int src_lo[3];
  void *dst;
  grid_dims_t dst_dims;
  int dst_lo[3];
  int extent[3];
  const int *comps;
  int ncomps;
} grid_copy_job_t;

/* Carries out n independent jobs (no two may write the same element), spread over the
 * OpenMP threads. */
void grid_copy_boxes(const grid_copy_job_t *jobs, size_t n, size_t esize);

#endif
