/* vtk: VTK XML output that ParaView reads.
 *
 * Cell data without ghost cells, in appended raw binary (little-endian, UInt64 headers),
 * extents in the global cell numbering, in one of two layouts (output.vtk_files):
 *  - one ImageData file (.vti) per output step of the whole domain, written by every
 *    process at once (vtk_image.h: MPI-IO, collective):
 *      <folder>/<name>_<step>.vti
 *  - one .vti per block and output step, written by the process owning the block, and a
 *    parallel image (.pvti) whose pieces are the blocks' files, written by rank 0:
 *      <folder>/<name>_<step>/block_<BlockID>.vti
 *      <folder>/<name>_<step>.pvti
 * ParaView reads either as one image of the whole domain, so filters that interpolate
 * (cell data to point data, contours, streamlines, volume rendering) see no block seams.
 * Rank 0 also rewrites a time series (.pvd) over all output steps so far:
 *   <folder>/<name>.pvd
 * Each file is written under a temporary name and renamed into place (output.h). */
#ifndef VTK_H
#define VTK_H

#include <stddef.h>
#include <stdint.h>

#include "tsr_error.h"

typedef enum vtk_type { VTK_FLOAT64, VTK_FLOAT32, VTK_UINT8 } vtk_type_t;

/* Bytes of one value of type t. */
size_t vtk_type_size(vtk_type_t t);

typedef struct vtk_array {
  const char *name;
  vtk_type_t type;
  int components;   /* 1 or 3 */
  const void *data; /* cells x components values, x fastest */
} vtk_array_t;

typedef struct vtk_block {
  double spacing;   /* a cell's edge (1: lattice units) */
  int64_t lo[3];    /* first global cell */
  int size[3];      /* cells */
  const vtk_array_t *arrays;
  int narrays;
} vtk_block_t;

/* Path of a block's file for an output step (into out, cap bytes). */
void vtk_block_path(char *out, size_t cap, const char *folder, const char *name, int64_t step,
                    int32_t block_id);

/* Writes one block's .vti (the step folder must exist: vtk_make_step_folder). */
TSR_NODISCARD tsr_status vtk_write_block(const char *path, const vtk_block_t *block, tsr_error_t *err);

/* Rank 0: creates <folder>/<name>_<step>/. */
TSR_NODISCARD tsr_status vtk_make_step_folder(const char *folder, const char *name, int64_t step,
                                              tsr_error_t *err);

/* One block's file in the index: its BlockID and cells. */
typedef struct vtk_piece {
  int32_t id;
  int64_t lo[3];
  int size[3];
} vtk_piece_t;

/* The XML of an ImageData file of the cells lo .. lo + size (whole extent and one piece)
 * up to the "_" that starts its appended data, with arrays[narrays] (names, types,
 * components; data unused): into *text (malloc'ed, *len bytes). After it, each array's
 * 8-byte little-endian size and its bytes, then vtk_tail. */
TSR_NODISCARD tsr_status vtk_head(const int64_t lo[3], const int64_t size[3], double spacing,
                                  const vtk_array_t *arrays, int narrays, char **text,
                                  size_t *len, tsr_error_t *err);
extern const char vtk_tail[];

/* A PolyData file (.vtp) of the points xyz[3 npoints] (Float64): with ntriangles 0 a
 * vertex per point and the arrays point data (a value per point), else the triangles
 * tri[3 ntriangles] (indices of points) and the arrays cell data (a value per triangle).
 * Written through a temporary name (output.h). */
TSR_NODISCARD tsr_status vtk_write_polydata(const char *path, const double *xyz, int64_t npoints,
                                            const int64_t *tri, int64_t ntriangles,
                                            const vtk_array_t *arrays, int narrays,
                                            tsr_error_t *err);

/* Rank 0: the .pvti of a step over the domain's cells[3], with arrays[narrays] (names,
 * types and components; data unused) and the block files pieces[npieces]. */
TSR_NODISCARD tsr_status vtk_write_pvti(const char *folder, const char *name, int64_t step,
                                        const int64_t cells[3], const vtk_array_t *arrays,
                                        int narrays, const vtk_piece_t *pieces,
                                        int32_t npieces, double spacing, tsr_error_t *err);

/* Rank 0: the .pvd over steps[nsteps] (every output step so far, at step times
 * step_time), each step's .vti where it exists, else its .pvti. */
TSR_NODISCARD tsr_status vtk_write_pvd(const char *folder, const char *name, const int64_t *steps,
                                       int64_t nsteps, double step_time, tsr_error_t *err);

#endif
