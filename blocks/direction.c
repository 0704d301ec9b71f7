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

const int direction_width_one[3] = {1, 1, 1};

/* Runs of the ghost layer along an axis where a direction moves: ceil(width / size). */
static int direction_runs(int size, int width) { return width <= size ? 1 : (width + size - 1) / size; }

int direction_slice_boxes(const int size[3], const int width[3], int d) {
  int n = 1;
  for (int a = 0; a < 3; ++a) {
    if (direction_offsets[d][a] == 0) continue;
    if (width[a] <= 0) return 0;
    n *= direction_runs(size[a], width[a]);
  }
  return n;
}

/* Box k along axis a: the run j of that axis, and the sender's and receiver's cells. For
   a move in +a the receiver's ghost cells are [-w, 0), the sender's cells end at size;
   for -a they are [size, size + w), the sender's cells start at 0. Run j is the j-th
   stretch of size cells outward from the block: ghost cells g receive interior cell
   g mod size. */
static void direction_box_axis(const int size[3], const int width[3], int d, int a, int *k,
                               int *send_lo, int *recv_lo, int *extent) {
  const int n = size[a], w = width[a], o = direction_offsets[d][a];
  if (o == 0) {
    *send_lo = *recv_lo = 0;
    *extent = n;
    return;
  }
  const int runs = direction_runs(n, w), j = *k % runs;
  *k /= runs;
  const int near = j * n, far = (j + 1) * n < w ? (j + 1) * n : w; /* cells from the block */
  *extent = far - near;
  if (o > 0) {
    *recv_lo = -far;
    *send_lo = -far + (j + 1) * n;
  } else {
    *recv_lo = n + near;
    *send_lo = 0;
  }
}

void direction_send_box(const int size[3], const int width[3], int d, int k, int lo[3],
                        int hi[3]) {
  for (int a = 0; a < 3; ++a) {
    int recv_lo, extent;
    direction_box_axis(size, width, d, a, &k, &lo[a], &recv_lo, &extent);
    hi[a] = lo[a] + extent;
  }
}

void direction_recv_box(const int size[3], const int width[3], int d, int k, int lo[3],
                        int hi[3]) {
  for (int a = 0; a < 3; ++a) {
    int send_lo, extent;
    direction_box_axis(size, width, d, a, &k, &send_lo, &lo[a], &extent);
    hi[a] = lo[a] + extent;
  }
}

int64_t direction_slice_cells(const int size[3], const int width[3], int d) {
  int64_t n = 1;
  for (int a = 0; a < 3; ++a) n *= direction_offsets[d][a] == 0 ? size[a] : width[a];
  return n;
}
