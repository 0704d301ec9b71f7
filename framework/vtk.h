/* vtk: VTK XML output that ParaView reads.
 *
 * Every process writes the blocks it owns, one ImageData file (.vti) per block and
 * output step, holding cell data without ghost cells, in appended raw binary
 * (little-endian, UInt64 headers). Rank 0 writes, per output step, a multiblock index
 * (.vtm) naming every block's file, and rewrites a time series (.pvd) over all output
 * steps so far. File names:
 *   <folder>/<name>_<step>/block_<BlockID>.vti
 *   <folder>/<name>_<step>.vtm
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

/* Rank 0: writes the .vtm of a step listing blocks[nblocks] (BlockIDs), and the .pvd
 * over steps[nsteps] (every output step so far, with its time). */
TSR_NODISCARD tsr_status vtk_write_index(const char *folder, const char *name, int64_t step,
                                         const int32_t *blocks, int32_t nblocks,
                                         const int64_t *steps, int64_t nsteps, tsr_error_t *err);

#endif
