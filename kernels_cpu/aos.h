/* aos: the CPU field layout (array of structures) and its slice packing.
 *
 * A field of a block with nx*ny*nz interior cells and one ghost layer stores, for every
 * cell, its ncomp components next to each other; cells run x fastest, then y, then z.
 * Local coordinates go from -1 (ghost) through n-1 (interior) to n (ghost).
 *
 * aos_pack/aos_unpack copy the cells of a box [lo, hi) in z-y-x order, and for each
 * cell the listed components in list order, to or from a contiguous byte buffer of
 * elements of esize bytes (4: float, 8: double), in host byte order. Plain C: no MPI,
 * no registry; OpenMP threads where the box is large. */
#ifndef AOS_H
#define AOS_H

#include <stddef.h>
#include <stdint.h>

typedef struct aos_dims {
  int nx, ny, nz; /* interior cells */
  int ncomp;      /* components per cell */
} aos_dims_t;

/* Element index of component c of local cell (x, y, z). */
static inline size_t aos_index(const aos_dims_t *d, int x, int y, int z, int c) {
  return ((((size_t)(z + 1) * (size_t)(d->ny + 2) + (size_t)(y + 1)) * (size_t)(d->nx + 2) +
           (size_t)(x + 1)) *
          (size_t)d->ncomp) +
         (size_t)c;
}

/* aos_index with bounds checks: aborts with a message on a coordinate or component
 * outside the field. For debugging kernels. */
size_t aos_index_checked(const aos_dims_t *d, int x, int y, int z, int c);

/* Elements of a whole field, ghost layer included. */
size_t aos_field_elements(const aos_dims_t *d);

/* Bytes aos_pack writes for a box and a component list. */
size_t aos_slice_bytes(const int lo[3], const int hi[3], int ncomps, size_t esize);

/* Copies the box out of the field; returns the bytes written. */
size_t aos_pack(const void *restrict field, const aos_dims_t *dims, size_t esize,
                const int lo[3], const int hi[3], const int *restrict comps, int ncomps,
                uint8_t *restrict out);

/* Copies a buffer written by aos_pack (same box size and component list) into the box. */
size_t aos_unpack(void *restrict field, const aos_dims_t *dims, size_t esize, const int lo[3],
                  const int hi[3], const int *restrict comps, int ncomps,
                  const uint8_t *restrict in);

/* One box copied between two fields of the same layout and element size: cells
 * [src_lo, src_lo + extent) of src to [dst_lo, dst_lo + extent) of dst, the listed
 * components only. */
typedef struct aos_copy_job {
  const void *src;
  aos_dims_t src_dims;
  int src_lo[3];
  void *dst;
  aos_dims_t dst_dims;
  int dst_lo[3];
  int extent[3];
  const int *comps;
  int ncomps;
} aos_copy_job_t;

/* Carries out n independent jobs (no two may write the same element), spread over the
 * OpenMP threads. */
void aos_copy_boxes(const aos_copy_job_t *jobs, size_t n, size_t esize);

#endif
