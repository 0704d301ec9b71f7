/* direction: the 26 neighbour directions of a block (6 faces, 12 edges, 8 corners)
 * and the cell slices that a ghost exchange in a direction touches.
 *
 * Numbering: 0..5 faces, 6..17 edges, 18..25 corners; the inverse of direction d is
 * d ^ 1. The first 18 (faces and edges) are the moving velocities of the lattices of
 * reach 1 without corners.
 *
 * Local cell coordinates run over 0..size-1 inside a block; a ghost layer of width w
 * sits at -w..-1 and at size..size+w-1 along each axis. A message that travels in
 * direction d is packed from the sender's interior slice (direction_send_box) and
 * unpacked into the receiver's ghost slice (direction_recv_box), which lies on the
 * receiver's side -d. Both slices have the same extent.
 * Functions taking a direction d require d in 0..DIRECTION_COUNT-1 unless they say
 * otherwise. */
#ifndef DIRECTION_H
#define DIRECTION_H

#include <stdint.h>

enum { DIRECTION_COUNT = 26, DIRECTION_FACES = 6, DIRECTION_EDGES = 12, DIRECTION_CORNERS = 8 };

/* Offsets (x, y, z) of each direction, each component in {-1, 0, 1}. */
extern const int8_t direction_offsets[DIRECTION_COUNT][3];

static inline int direction_inverse(int d) { return d ^ 1; }

/* 1 for a face, 2 for an edge, 3 for a corner. */
int direction_order(int d);

/* Readable name such as "+x" or "-x+y-z" (static storage). "?" when d is out of range. */
const char *direction_name(int d);

/* The direction with these offsets, or -1 for (0,0,0) or components outside {-1,0,1}. */
int direction_from_offset(int x, int y, int z);

/* Ghost slices of any width. A field with ghost layers of width[a] cells along axis a
 * (0 <= width[a] <= DIRECTION_MAX_WIDTH) exchanges, in direction d, the sender's
 * interior cells within width[a] of its side +d along each axis a where d moves (the
 * whole interior along the other axes) into the receiver's ghost cells on its side -d.
 * A width of 0 along an axis where d moves means that nothing crosses (e.g. along z in
 * a 2-D run): the slice is empty.
 *
 * A slice is one box, [lo, hi) on either side, walked in z-y-x order (x fastest). Where
 * a block is thinner than the ghost layer along an axis where d moves (allowed only when
 * that axis is periodic with one block, so that the sender is the same column of blocks
 * as the receiver and the ghost cells wrap around it several times; see
 * patch_check_ghost_width), the slice is several boxes: along each such axis the ghost
 * layer is cut into runs of at most size[a] cells, each the image of interior cells.
 * The boxes are numbered k = 0..count-1, with the run index of x varying fastest, then
 * y, then z; the message payload holds them in that order, each in z-y-x order. Sender
 * and receiver compute the same boxes: along an axis where d moves with several boxes,
 * they are the same block column, and the box count only depends on sizes there. */
enum { DIRECTION_MAX_WIDTH = 8 };

/* Number of boxes of the slice of direction d: 0 when it is empty, 1 when size[a] >=
 * width[a] along every axis where d moves. */
int direction_slice_boxes(const int size[3], const int width[3], int d);

/* Interior cells [lo, hi) of box k (0..direction_slice_boxes-1) that a block of `size`
 * cells sends in direction d. */
void direction_send_box(const int size[3], const int width[3], int d, int k, int lo[3],
                        int hi[3]);

/* Ghost cells [lo, hi) of box k that a block of `size` cells receives from a message that
 * travelled in direction d. */
void direction_recv_box(const int size[3], const int width[3], int d, int k, int lo[3],
                        int hi[3]);

/* Number of cells in the slice of direction d, all boxes (the same for send and receive
 * between neighbours): width[a] along each axis where d moves, size[a] along the others. */
int64_t direction_slice_cells(const int size[3], const int width[3], int d);

/* Width 1 along every axis: the ghost layer of a stencil of reach 1. */
extern const int direction_width_one[3];

#endif
