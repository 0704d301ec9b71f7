#include "direction.h"

const int8_t direction_offsets[DIRECTION_COUNT][3] = {
    /* faces */
    {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1},
    /* edges */
    {1, 1, 0}, {-1, -1, 0}, {1, -1, 0}, {-1, 1, 0},
    {1, 0, 1}, {-1, 0, -1}, {1, 0, -1}, {-1, 0, 1},
    {0, 1, 1}, {0, -1, -1}, {0, 1, -1}, {0, -1, 1},
    /* corners */
    {1, 1, 1}, {-1, -1, -1}, {1, 1, -1}, {-1, -1, 1},
    {1, -1, 1}, {-1, 1, -1}, {-1, 1, 1}, {1, -1, -1},
};

static const char *const direction_names[DIRECTION_COUNT] = {
    "+x", "-x", "+y", "-y", "+z", "-z",
    "+x+y", "-x-y", "+x-y", "-x+y", "+x+z", "-x-z", "+x-z", "-x+z",
    "+y+z", "-y-z", "+y-z", "-y+z",
    "+x+y+z", "-x-y-z", "+x+y-z", "-x-y+z", "+x-y+z", "-x+y-z", "-x+y+z", "+x-y-z",
};

int direction_order(int d) {
  if (d < 0 || d >= DIRECTION_COUNT) return 0;
  const int8_t *o = direction_offsets[d];
  return (o[0] != 0) + (o[1] != 0) + (o[2] != 0);
}

const char *direction_name(int d) {
  if (d < 0 || d >= DIRECTION_COUNT) return "?";
  return direction_names[d];
}

int direction_from_offset(int x, int y, int z) {
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    const int8_t *o = direction_offsets[d];
    if (o[0] == x && o[1] == y && o[2] == z) return d;
  }
  return -1;
}

void direction_send_slice(const int size[3], int d, int lo[3], int hi[3]) {
  for (int a = 0; a < 3; ++a) {
    switch (direction_offsets[d][a]) {
    case 1: lo[a] = size[a] - 1; hi[a] = size[a]; break;
    case -1: lo[a] = 0; hi[a] = 1; break;
    default: lo[a] = 0; hi[a] = size[a]; break;
    }
  }
}

void direction_recv_slice(const int size[3], int d, int lo[3], int hi[3]) {
  for (int a = 0; a < 3; ++a) {
    switch (direction_offsets[d][a]) {
    case 1: lo[a] = -1; hi[a] = 0; break;            /* came from the -a neighbour */
    case -1: lo[a] = size[a]; hi[a] = size[a] + 1; break;
    default: lo[a] = 0; hi[a] = size[a]; break;
    }
  }
}

int64_t direction_slice_cells(const int size[3], int d) {
  int64_t n = 1;
  for (int a = 0; a < 3; ++a)
    if (direction_offsets[d][a] == 0) n *= size[a];
  return n;
}
