/* vtk: VTK XML output that ParaView reads.
 *
 * Every process writes the blocks it owns, one ImageData file (.vti) per block and
 * output step, holding cell data without ghost cells, in appended raw binary
 * (little-endian, UInt64 headers), its extent in the global cell numbering. Rank 0
 * writes, per output step, a parallel image (.pvti) whose pieces are the blocks' files:
 * ParaView reads it as one image of the whole domain, so filters that interpolate (cell
 * data to point data, contours, streamlines, volume rendering) see no block seams. It
 * also rewrites a time series (.pvd) over all output steps so far. File names:
 *   <folder>/<name>_<step>/block_<BlockID>.vti
 *   <folder>/<name>_<step>.pvti
 *   <folder>/<name>.pvd
 * Each file is written under a temporary name and renamed into place (output.h). */
#ifndef VTK_H
#define VTK_H

#include <stddef.h>
#include <stdint.h>

#include "tsr_error.h"

typedef enum vtk_type { VTK_FLOAT64, VTK_UINT8 } vtk_type_t;

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

/* The scales of the files: a cell's edge, a step's time (1 and 1: lattice units). */
typedef struct vtk_scale {
  double spacing, step_time;
} vtk_scale_t;

/* Rank 0: writes the .pvti of a step over the domain's cells[3], with arrays[narrays]
 * (names, types and components; data unused) and pieces[npieces], and the .pvd over
 * steps[nsteps] (every output step so far, with its time: step times step_time). */
TSR_NODISCARD tsr_status vtk_write_index(const char *folder, const char *name, int64_t step,
                                         const int64_t cells[3], const vtk_array_t *arrays,
                                         int narrays, const vtk_piece_t *pieces,
                                         int32_t npieces, const int64_t *steps, int64_t nsteps,
                                         const vtk_scale_t *scale, tsr_error_t *err);

#endif
