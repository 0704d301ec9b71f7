/* direction: the 26 neighbour directions of a block (6 faces, 12 edges, 8 corners)
 * and the cell slices that a ghost exchange in a direction touches.
 *
 * Numbering: 0..5 faces, 6..17 edges, 18..25 corners; the inverse of direction d is
 * d ^ 1. The first 18 offsets are also the moving D3Q19 lattice velocities.
 *
 * Local cell coordinates run over 0..size-1 inside a block; the ghost layer sits at -1
 * and at size along each axis. A message that travels in direction d is packed from
 * the sender's interior slice direction_send_slice(d) and unpacked into the receiver's
 * ghost slice direction_recv_slice(d), which lies on the receiver's side -d. Both
 * slices have the same extent and are walked in z-y-x order (x fastest).
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

/* Interior cells [lo, hi) of a block of `size` cells that a message in direction d
 * carries. */
void direction_send_slice(const int size[3], int d, int lo[3], int hi[3]);

/* Ghost cells [lo, hi) that receive a message that travelled in direction d. */
void direction_recv_slice(const int size[3], int d, int lo[3], int hi[3]);

/* Number of cells in the slice of direction d (the same for send and receive). */
int64_t direction_slice_cells(const int size[3], int d);

#endif
