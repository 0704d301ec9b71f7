/* vtk_image: one ImageData file (.vti, vtk.h) of the whole domain per output step,
 * written by every process at once, whatever the number of blocks.
 *
 * The file is what a single process would write: the XML head, then per array its 8-byte
 * size and its values over the whole domain, x fastest. A block's values are rows of that
 * array (one per y and z of the block), so each process hands MPI-IO its blocks' rows,
 * sorted by their place in the file and merged where they touch, as one file view, and
 * all write together (MPI_File_write_at_all, one call per array): MPI-IO's collective
 * buffering gathers the rows into large contiguous writes by a few aggregating
 * processes, instead of every process seeking to each of its rows. Rank 0 writes the
 * head, the sizes and the tail. The file is written under a temporary name in the
 * folder, synced, and renamed into place by rank 0 (output.h: never half a file).
 *
 * Why not HDF5 with an XDMF index: the same collective writes, but a dependency more
 * (Debian's parallel HDF5 build), a second file per step to keep consistent, and the
 * per-block files' format (vtk.h) is this one: ParaView and VTK's Python reader open
 * both with the same reader. */
#ifndef VTK_IMAGE_H
#define VTK_IMAGE_H

#include <mpi.h>

#include "vtk.h"

/* Writes one local block's values of array `array` (x fastest, components interleaved,
 * in the array's type) into out, which holds cells * components * type size bytes. */
typedef tsr_status (*vtk_image_fill_fn)(void *ctx, int array, int local, void *out,
                                        tsr_error_t *err);

/* Collective. The image of the domain's cells[3] at path: arrays[narrays] (names, types,
 * components; data unused), each process's blocks local[nlocal] (their lo and size;
 * together they tile the domain), their values from fill. One verdict on every rank. */
TSR_NODISCARD tsr_status vtk_write_image(MPI_Comm comm, const char *path,
                                         const int64_t cells[3], double spacing,
                                         const vtk_array_t *arrays, int narrays,
                                         const vtk_piece_t *local, int nlocal,
                                         vtk_image_fill_fn fill, void *ctx, tsr_error_t *err);

#endif
