/* voxels: a raw voxel image (a micro-CT scan of a porous rock, say) as a solid shape of
 * the geometry.
 *
 * The file holds nx * ny * nz values, x fastest, unsigned 8- or 16-bit integers (16: little-
 * or big-endian), after a header of some bytes that are skipped; nothing else. A voxel is
 * solid where its value is at least the threshold (solid "above") or below it (solid
 * "below"). Voxel (i, j, k) spans [offset + spacing (i, j, k), offset + spacing (i + 1,
 * j + 1, k + 1)) in cell coordinates (cell x spans [x, x + 1)): spacing is cells per
 * voxel edge (1: a voxel per cell; 0.5: 8 voxels a cell; 2: a voxel over 8 cells). A cell
 * is solid where its centre lies in a solid voxel; outside the image nothing is solid.
 * The image must lie inside the domain; along a periodic axis that it spans exactly
 * (offset 0, nx spacing = cells) it repeats across the periodic face.
 *
 * No process keeps the image whole. voxels_load reads the file once, a plane of voxels at
 * a time, and keeps for every block of the domain whether a solid cell lies in it or in
 * its one-cell ghost layer and whether every cell of it is solid: what classifying the
 * blocks needs, the same on every process. The voxels themselves are read where a
 * process builds its own blocks (voxels_prepare: the rows of the voxels around one block)
 * and, for a cell outside the prepared box, one voxel at a time. Images are loaded once
 * per process and placement and kept until the process ends (shapes are copied by value
 * with the options; they share the image). */
#ifndef VOXELS_H
#define VOXELS_H

#include <stdbool.h>
#include <stdint.h>

#include "patch.h"
#include "tsr_error.h"

typedef struct voxels voxels_t;

typedef struct voxels_options {
  char path[2048];
  int bytes;           /* 1 (uint8) or 2 (uint16) */
  bool big_endian;     /* uint16 */
  int64_t size[3];     /* voxels along x, y, z, each >= 1 */
  int64_t header;      /* bytes before the first voxel */
  double spacing;      /* cells per voxel edge, > 0 */
  double offset[3];    /* the image's lower corner, cells */
  double threshold;
  bool solid_below;    /* solid: value < threshold; else value >= threshold */
} voxels_options_t;

/* The image of o on the domain (its blocks as the domain's options give them), with the
 * blocks' summaries. Errors name the file: a file of another size than the header and
 * the voxels need, an image reaching beyond the domain, a read that fails. */
TSR_NODISCARD tsr_status voxels_load(const voxels_options_t *o, const patch_options_t *domain,
                                     const voxels_t **out, tsr_error_t *err);

/* Whether a solid cell of the image lies in the block of BlockID id or in its one-cell
 * ghost layer (across periodic faces too), and whether every cell of the block is solid;
 * whether any cell of the domain is solid. */
bool voxels_block_touched(const voxels_t *v, int32_t id);
bool voxels_block_full(const voxels_t *v, int32_t id);
bool voxels_any(const voxels_t *v);

/* Reads the voxels around the cells [lo - 2, lo + size + 2) (a block with a margin for its
 * ghost layer and links) into the image's box, so that the queries there need no read. */
TSR_NODISCARD tsr_status voxels_prepare(const voxels_t *v, const int64_t lo[3],
                                        const int size[3], tsr_error_t *err);

/* Whether the point p (cell coordinates) lies in a solid voxel. */
bool voxels_inside(const voxels_t *v, const double p[3]);

/* The smallest t in [0, 1] where p + t d enters a solid voxel (p in a voxel that is not
 * solid), or 2 where the segment meets none: the exact wall of the voxels' faces. */
double voxels_entry(const voxels_t *v, const double p[3], const double d[3]);

/* The image's bounds (cell coordinates). */
void voxels_bounds(const voxels_t *v, double lo[3], double hi[3]);

#endif
