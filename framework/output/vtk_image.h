/* vtk_image: one ImageData file (.vti, vtk.h) of the whole domain per output step,
 * written by every process at once, whatever the number of blocks.
 *
 * The file is what a single process would write: the XML head, then per array its 8-byte
 * size and its values over the whole domain, x fastest. A block's values are rows of that
 * array (one per y and z of the block). The file is cut into one range per process, of
 * equal size, each starting at a multiple of 4 KiB; per array, every process copies its
 * blocks' rows in file order and sends each piece to the process whose range it falls
 * into, straight into its place there (MPI_Alltoallw: a datatype of the places per
 * source). Each process writes the head, sizes and tail that fall into its range, then
 * the range, O_DIRECT where the file system takes it (bulk_file.h), one 8 MiB piece in
 * transfer while the next is copied, like a checkpoint; then fsync. The file is written
 * under a temporary name in the folder and renamed into place by rank 0 (output.h: never
 * half a file).
 *
 * Two-phase I/O of our own, not MPI-IO's collective writes: on this project's 2-core KVM
 * host, MPI_File_write_at_all (Open MPI's OMPIO and ROMIO alike) went through the page
 * cache, where fresh pages are expensive: a 256^3 D3Q19 field (554 MB) at 0.11 of the
 * disk's direct rate. And not HDF5 with an XDMF index: the same two-phase writes, but a
 * dependency more (Debian's parallel HDF5 build), a second file per step to keep
 * consistent, and the per-block files' format (vtk.h) is this one: ParaView and VTK's
 * Python reader open both with the same reader. */
#ifndef VTK_IMAGE_H
#define VTK_IMAGE_H

#include <mpi.h>
#include <stdint.h>

#include "vtk.h"

/* Writes one local block's values of array `array` (x fastest, components interleaved,
 * in the array's type) into out, which holds cells * components * type size bytes. */
typedef tsr_status (*vtk_image_fill_fn)(void *ctx, int array, int local, void *out,
                                        tsr_error_t *err);

/* The buffers a process keeps from one image to the next (their first touch costs more
 * than the copies through them): one block's values of an array, its blocks' values of an
 * array, its range of the file. Zero-initialised; vtk_image_buffers_free. */
typedef struct vtk_image_buffers {
  uint8_t *p[3];
  size_t bytes[3];
} vtk_image_buffers_t;

void vtk_image_buffers_free(vtk_image_buffers_t *bufs);

/* Collective. The image of the domain's cells[3] at path: arrays[narrays] (names, types,
 * components; data unused), each process's blocks local[nlocal] (their lo and size;
 * together they tile the domain), their values from fill; bufs: this process's buffers,
 * grown as needed. One verdict on every rank. */
TSR_NODISCARD tsr_status vtk_write_image(MPI_Comm comm, vtk_image_buffers_t *bufs,
                                         const char *path, const int64_t cells[3],
                                         double spacing, const vtk_array_t *arrays,
                                         int narrays, const vtk_piece_t *local, int nlocal,
                                         vtk_image_fill_fn fill, void *ctx, tsr_error_t *err);

#endif
