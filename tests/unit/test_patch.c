/* patch, neighbourhood, balance and block_data.
 *
 * patch: uneven splits (sizes differ by at most one, the first cells % blocks blocks
 * get the extra cell, intervals tile each axis), AABBs, the BlockID formula, neighbour
 * lookup in all 26 directions with and without periodic wrap (one and two blocks along
 * a periodic axis included), option and layout validation with message text, block ->
 * rank assignment (default Morton split, custom functions, bad output), local blocks
 * and their data lists, hs_of_rank, patch_set_bs; the send slice of a block and the
 * receive slice of its neighbour cover the same global cells.
 * balance: Morton codes on small values, Morton order.
 * block_data: add/get, duplicate and negative ids, free order, ownership on failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "balance.h"
#include "block_data.h"
#include "direction.h"
#include "patch.h"
#include "patch_test.h"
#include "tsr_error.h"
#include "unit_test.h"

static patch_t *make_patch(const patch_options_t *o, int nranks, int my_rank) {
  tsr_error_t err;
  patch_t *p = NULL;
  patch_layout_t layout = {.nranks = nranks, .my_rank = my_rank};
  ASSERT_OK(patch_create(o, &layout, &p, &err));
  assert_non_null(p);
  return p;
}

/* ---------------------------------------------------------------- geometry */

static void test_options_default(void **state) {
  (void)state;
  patch_options_t o = patch_options_default();
  for (int a = 0; a < 3; ++a) {
    assert_int_equal(o.cells[a], 1);
    assert_int_equal(o.blocks[a], 1);
    assert_false(o.periodic[a]);
  }
}

/* cells 10, 7, 5 on blocks 3, 2, 5: x 4,3,3; y 4,3; z 1,1,1,1,1. */
static void test_uneven_split_explicit(void **state) {
  (void)state;
  patch_options_t o = opts3(10, 7, 5, 3, 2, 5, false, false, false);
  patch_t *p = make_patch(&o, 1, 0);
  assert_int_equal(patch_block_count(p), 30);
  const int xs[3] = {4, 3, 3}, xlo[3] = {0, 4, 7};
  const int ys[2] = {4, 3}, ylo[2] = {0, 4};
  for (int32_t id = 0; id < 30; ++id) {
    const block_info_t *b = patch_block(p, id);
    assert_non_null(b);
    assert_int_equal(b->size[0], xs[b->grid[0]]);
    assert_int_equal(b->lo[0], xlo[b->grid[0]]);
    assert_int_equal(b->size[1], ys[b->grid[1]]);
    assert_int_equal(b->lo[1], ylo[b->grid[1]]);
    assert_int_equal(b->size[2], 1);
    assert_int_equal(b->lo[2], b->grid[2]);
  }
  patch_free(&p);
  assert_null(p);
}

/* Every (cells, blocks) with cells up to 17 along x: sizes differ by at most one, the
 * first cells % blocks blocks are the larger ones, and the intervals tile [0, cells). */
static void test_uneven_split_tiles_axis(void **state) {
  (void)state;
  for (int cells = 1; cells <= 17; ++cells)
    for (int blocks = 1; blocks <= cells; ++blocks) {
      patch_options_t o = opts3(cells, 2, 1, blocks, 1, 1, false, false, false);
      patch_t *p = make_patch(&o, 1, 0);
      int64_t next = 0;
      int base = cells / blocks, extra = cells % blocks;
      for (int i = 0; i < blocks; ++i) {
        const block_info_t *b = patch_block(p, patch_block_at(p, i, 0, 0));
        assert_non_null(b);
        assert_int_equal(b->lo[0], next);
        assert_int_equal(b->size[0], i < extra ? base + 1 : base);
        assert_true(b->size[0] >= 1);
        next += b->size[0];
        /* the other axes are not split */
        assert_int_equal(b->lo[1], 0);
        assert_int_equal(b->size[1], 2);
      }
      assert_int_equal(next, cells);
      patch_free(&p);
    }
}

static void test_aabb_matches_interval(void **state) {
  (void)state;
  patch_options_t o = opts3(11, 6, 9, 3, 2, 4, true, false, true);
  patch_t *p = make_patch(&o, 1, 0);
  double volume = 0;
  for (int32_t id = 0; id < patch_block_count(p); ++id) {
    const block_info_t *b = patch_block(p, id);
    double v = 1;
    for (int a = 0; a < 3; ++a) {
      assert_float_equal(b->aabb_min[a], (double)b->lo[a], 0.0);
      assert_float_equal(b->aabb_max[a], (double)(b->lo[a] + b->size[a]), 0.0);
      assert_true(b->aabb_min[a] >= 0 && b->aabb_max[a] <= (double)o.cells[a]);
      v *= b->aabb_max[a] - b->aabb_min[a];
    }
    volume += v;
  }
  assert_float_equal(volume, 11.0 * 6 * 9, 0.0);
  /* a hand-checked block: grid (2, 1, 3) covers x [8, 11), y [3, 6), z [7, 9) */
  const block_info_t *b = patch_block(p, patch_block_at(p, 2, 1, 3));
  assert_float_equal(b->aabb_min[0], 8.0, 0.0);
  assert_float_equal(b->aabb_max[0], 11.0, 0.0);
  assert_float_equal(b->aabb_min[1], 3.0, 0.0);
  assert_float_equal(b->aabb_max[1], 6.0, 0.0);
  assert_float_equal(b->aabb_min[2], 7.0, 0.0);
  assert_float_equal(b->aabb_max[2], 9.0, 0.0);
  patch_free(&p);
}

static void test_block_id_is_linear_index_x_fastest(void **state) {
  (void)state;
  const int bx = 3, by = 4, bz = 2;
  patch_options_t o = opts3(6, 8, 4, bx, by, bz, false, false, false);
  patch_t *p = make_patch(&o, 1, 0);
  assert_int_equal(patch_block_count(p), bx * by * bz);
  for (int iz = 0; iz < bz; ++iz)
    for (int iy = 0; iy < by; ++iy)
      for (int ix = 0; ix < bx; ++ix) {
        int32_t id = ix + bx * (iy + by * iz);
        assert_int_equal(patch_block_at(p, ix, iy, iz), id);
        const block_info_t *b = patch_block(p, id);
        assert_non_null(b);
        assert_int_equal(b->id, id);
        assert_int_equal(b->grid[0], ix);
        assert_int_equal(b->grid[1], iy);
        assert_int_equal(b->grid[2], iz);
      }
  assert_int_equal(patch_block_at(p, 1, 2, 1), 1 + 3 * (2 + 4 * 1));
  assert_int_equal(patch_block_at(p, -1, 0, 0), -1);
  assert_int_equal(patch_block_at(p, bx, 0, 0), -1);
  assert_int_equal(patch_block_at(p, 0, by, 0), -1);
  assert_int_equal(patch_block_at(p, 0, 0, bz), -1);
  assert_int_equal(patch_block_at(p, 0, 0, -1), -1);
  assert_null(patch_block(p, -1));
  assert_null(patch_block(p, bx * by * bz));
  /* the patch keeps a copy of its options */
  const patch_options_t *kept = patch_options(p);
  assert_int_equal(kept->cells[1], 8);
  assert_int_equal(kept->blocks[2], 2);
  patch_free(&p);
}

/* ---------------------------------------------------------------- neighbourhood */

/* Independent oracle: grid position + offset, wrapped on periodic axes. */
static int32_t expected_neighbor(const patch_options_t *o, const block_info_t *b, int d) {
  int pos[3];
  for (int a = 0; a < 3; ++a) {
    int n = o->blocks[a];
    pos[a] = b->grid[a] + direction_offsets[d][a];
    if (pos[a] == -1) {
      if (!o->periodic[a]) return -1;
      pos[a] = n - 1;
    } else if (pos[a] == n) {
      if (!o->periodic[a]) return -1;
      pos[a] = 0;
    }
  }
  return pos[0] + o->blocks[0] * (pos[1] + o->blocks[1] * pos[2]);
}

static void test_neighbors_interior_block_all_26(void **state) {
  (void)state;
  patch_options_t o = opts3(9, 9, 9, 3, 3, 3, false, false, false);
  patch_t *p = make_patch(&o, 1, 0);
  const int32_t center = patch_block_at(p, 1, 1, 1);
  assert_int_equal(center, 13);
  bool seen[27] = {false};
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    const int8_t *off = direction_offsets[d];
    int32_t n = patch_neighbor(p, center, d);
    assert_int_equal(n, patch_block_at(p, 1 + off[0], 1 + off[1], 1 + off[2]));
    assert_false(seen[n]);
    seen[n] = true;
    /* symmetry: the neighbour's neighbour in the inverse direction is the centre */
    assert_int_equal(patch_neighbor(p, n, direction_inverse(d)), center);
  }
  assert_false(seen[center]);
  patch_free(&p);
}

/* Block 0 of a non-periodic grid has neighbours only in the 7 directions without a
 * negative component; all others end the domain (-1). */
static void test_neighbors_corner_block_nonperiodic(void **state) {
  (void)state;
  patch_options_t o = opts3(9, 9, 9, 3, 3, 3, false, false, false);
  patch_t *p = make_patch(&o, 1, 0);
  int found = 0;
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    const int8_t *off = direction_offsets[d];
    int32_t n = patch_neighbor(p, 0, d);
    if (off[0] < 0 || off[1] < 0 || off[2] < 0) {
      assert_int_equal(n, -1);
    } else {
      assert_int_equal(n, patch_block_at(p, off[0], off[1], off[2]));
      ++found;
    }
  }
  assert_int_equal(found, 7);
  /* the far corner: only directions without a positive component */
  int32_t last = patch_block_at(p, 2, 2, 2);
  assert_int_equal(patch_neighbor(p, last, direction_from_offset(1, 0, 0)), -1);
  assert_int_equal(patch_neighbor(p, last, direction_from_offset(-1, -1, -1)),
                   patch_block_at(p, 1, 1, 1));
  assert_int_equal(patch_neighbor(p, last, direction_from_offset(-1, 0, 1)), -1);
  patch_free(&p);
}

/* Fully periodic 3x3x3: block 0 wraps to the far side in every negative direction. */
static void test_neighbors_periodic_wrap_explicit(void **state) {
  (void)state;
  patch_options_t o = opts3(9, 9, 9, 3, 3, 3, true, true, true);
  patch_t *p = make_patch(&o, 1, 0);
  assert_int_equal(patch_neighbor(p, 0, direction_from_offset(-1, 0, 0)),
                   patch_block_at(p, 2, 0, 0));
  assert_int_equal(patch_neighbor(p, 0, direction_from_offset(0, -1, 0)),
                   patch_block_at(p, 0, 2, 0));
  assert_int_equal(patch_neighbor(p, 0, direction_from_offset(-1, -1, -1)),
                   patch_block_at(p, 2, 2, 2));
  assert_int_equal(patch_neighbor(p, 0, direction_from_offset(-1, 1, 0)),
                   patch_block_at(p, 2, 1, 0));
  assert_int_equal(patch_neighbor(p, patch_block_at(p, 2, 2, 2), direction_from_offset(1, 1, 1)),
                   0);
  for (int32_t id = 0; id < patch_block_count(p); ++id)
    for (int d = 0; d < DIRECTION_COUNT; ++d) assert_true(patch_neighbor(p, id, d) >= 0);
  patch_free(&p);
}

/* Every block, every direction, every periodicity combination, uneven grids: matches
 * the oracle and is symmetric under the inverse direction. */
static void test_neighbors_all_periodicity_combinations(void **state) {
  (void)state;
  const int grids[][3] = {{3, 2, 4}, {1, 1, 1}, {2, 1, 3}, {4, 4, 1}};
  for (size_t g = 0; g < sizeof grids / sizeof grids[0]; ++g)
    for (int mask = 0; mask < 8; ++mask) {
      patch_options_t o = opts3(8, 8, 8, grids[g][0], grids[g][1], grids[g][2], mask & 1,
                                mask & 2, mask & 4);
      patch_t *p = make_patch(&o, 1, 0);
      for (int32_t id = 0; id < patch_block_count(p); ++id)
        for (int d = 0; d < DIRECTION_COUNT; ++d) {
          const block_info_t *b = patch_block(p, id);
          int32_t n = patch_neighbor(p, id, d);
          assert_int_equal(n, expected_neighbor(&o, b, d));
          /* going back the inverse way returns to id, also across a wrap and
           * with one or two blocks on a periodic axis */
          if (n >= 0) assert_int_equal(patch_neighbor(p, n, direction_inverse(d)), id);
        }
      patch_free(&p);
    }
}

static void test_one_block_periodic_axis_is_own_neighbor(void **state) {
  (void)state;
  patch_options_t o = opts3(4, 8, 8, 1, 2, 2, true, false, false);
  patch_t *p = make_patch(&o, 1, 0);
  for (int32_t id = 0; id < patch_block_count(p); ++id) {
    assert_int_equal(patch_neighbor(p, id, direction_from_offset(1, 0, 0)), id);
    assert_int_equal(patch_neighbor(p, id, direction_from_offset(-1, 0, 0)), id);
  }
  /* block 0 at (0,0,0): +x+y goes to (0,1,0) via the wrap; -y ends the domain */
  assert_int_equal(patch_neighbor(p, 0, direction_from_offset(1, 1, 0)),
                   patch_block_at(p, 0, 1, 0));
  assert_int_equal(patch_neighbor(p, 0, direction_from_offset(0, -1, 0)), -1);
  assert_int_equal(patch_neighbor(p, 0, direction_from_offset(-1, -1, 0)), -1);
  patch_free(&p);

  /* a single block, periodic everywhere: its own neighbour in all 26 directions */
  o = opts3(5, 5, 5, 1, 1, 1, true, true, true);
  p = make_patch(&o, 1, 0);
  for (int d = 0; d < DIRECTION_COUNT; ++d) assert_int_equal(patch_neighbor(p, 0, d), 0);
  patch_free(&p);

  /* and a single block with no periodicity has none */
  o = opts3(5, 5, 5, 1, 1, 1, false, false, false);
  p = make_patch(&o, 1, 0);
  for (int d = 0; d < DIRECTION_COUNT; ++d) assert_int_equal(patch_neighbor(p, 0, d), -1);
  patch_free(&p);
}

static void test_two_blocks_periodic_both_sides_other_block(void **state) {
  (void)state;
  patch_options_t o = opts3(8, 4, 4, 2, 1, 1, true, false, false);
  patch_t *p = make_patch(&o, 1, 0);
  const int px = direction_from_offset(1, 0, 0), mx = direction_from_offset(-1, 0, 0);
  assert_int_equal(patch_neighbor(p, 0, px), 1);
  assert_int_equal(patch_neighbor(p, 0, mx), 1);
  assert_int_equal(patch_neighbor(p, 1, px), 0);
  assert_int_equal(patch_neighbor(p, 1, mx), 0);
  assert_int_equal(patch_neighbor(p, 0, direction_from_offset(0, 1, 0)), -1);
  assert_int_equal(patch_neighbor(p, 0, direction_from_offset(1, 0, 1)), -1);
  patch_free(&p);
  /* non-periodic: only the inner face connects */
  o.periodic[0] = false;
  p = make_patch(&o, 1, 0);
  assert_int_equal(patch_neighbor(p, 0, px), 1);
  assert_int_equal(patch_neighbor(p, 0, mx), -1);
  assert_int_equal(patch_neighbor(p, 1, px), -1);
  assert_int_equal(patch_neighbor(p, 1, mx), 0);
  patch_free(&p);
}

static void test_neighbor_arguments_out_of_range(void **state) {
  (void)state;
  patch_options_t o = opts3(4, 4, 4, 2, 2, 2, true, true, true);
  patch_t *p = make_patch(&o, 1, 0);
  assert_int_equal(patch_neighbor(p, 0, -1), -1);
  assert_int_equal(patch_neighbor(p, 0, DIRECTION_COUNT), -1);
  assert_int_equal(patch_neighbor(p, -1, 0), -1);
  assert_int_equal(patch_neighbor(p, 8, 0), -1);
  patch_free(&p);
}

/* The interior cells a block sends in d and the ghost cells its neighbour receives them
 * into are the same global cells (shifted by the domain length across a periodic
 * wrap), on uneven grids. */
static void test_send_slice_meets_neighbor_recv_slice(void **state) {
  (void)state;
  patch_options_t o = opts3(10, 7, 5, 3, 2, 2, true, false, true);
  patch_t *p = make_patch(&o, 1, 0);
  for (int32_t id = 0; id < patch_block_count(p); ++id)
    for (int d = 0; d < DIRECTION_COUNT; ++d) {
      int32_t nid = patch_neighbor(p, id, d);
      if (nid < 0) continue;
      const block_info_t *s = patch_block(p, id), *r = patch_block(p, nid);
      int slo[3], shi[3], rlo[3], rhi[3];
      direction_send_box(s->size, direction_width_one, d, 0, slo, shi);
      direction_recv_box(r->size, direction_width_one, d, 0, rlo, rhi);
      for (int a = 0; a < 3; ++a) {
        int64_t gs = s->lo[a] + slo[a], gr = r->lo[a] + rlo[a];
        int64_t diff = gr - gs;
        /* equal, or one domain length apart across a periodic wrap */
        if (diff != 0) {
          assert_true(o.periodic[a]);
          assert_true(diff == o.cells[a] || diff == -o.cells[a]);
        }
        assert_int_equal(shi[a] - slo[a], rhi[a] - rlo[a]);
      }
    }
  patch_free(&p);
}

/* ---------------------------------------------------------------- validation */

static void test_validate_rejects_bad_options(void **state) {
  (void)state;
  tsr_error_t err;
  patch_options_t o = opts3(8, 4, 2, 1, 1, 1, false, false, false);
  ASSERT_OK(patch_options_validate(&o, &err));

  o = opts3(8, 4, 2, 2, 5, 1, false, false, false);
  ASSERT_ERR(patch_options_validate(&o, &err), TSR_ERR_INVALID,
             "blocks[1] (y) = 5 exceeds cells[1] = 4");

  o = opts3(0, 4, 2, 1, 1, 1, false, false, false);
  ASSERT_ERR(patch_options_validate(&o, &err), TSR_ERR_INVALID, "cells[0] (x) = 0");
  assert_non_null(strstr(err.text, "allowed are 1.."));

  o = opts3(8, 4, -3, 1, 1, 1, false, false, false);
  ASSERT_ERR(patch_options_validate(&o, &err), TSR_ERR_INVALID, "cells[2] (z) = -3");

  o = opts3(8, (int64_t)INT_MAX + 1, 2, 1, 1, 1, false, false, false);
  ASSERT_ERR(patch_options_validate(&o, &err), TSR_ERR_INVALID, "cells[1] (y) = 2147483648");

  o = opts3(8, 4, 2, 1, 1, 0, false, false, false);
  ASSERT_ERR(patch_options_validate(&o, &err), TSR_ERR_INVALID, "blocks[2] (z) = 0");

  /* one axis of INT_MAX cells: a block's extent with ghost layers would leave an int */
  o = opts3(INT_MAX, 1, 1, 1, 1, 1, false, false, false);
  ASSERT_ERR(patch_options_validate(&o, &err), TSR_ERR_INVALID,
             "cells[0] (x) = 2147483647: allowed are 1..1073741824");

  /* the cell count: 2^90 would overflow 64 bits, 2^48 + 2^30 is one axis row too many */
  o = opts3(PATCH_MAX_AXIS_CELLS, PATCH_MAX_AXIS_CELLS, PATCH_MAX_AXIS_CELLS, 1, 1, 1, false,
            false, false);
  ASSERT_ERR(patch_options_validate(&o, &err), TSR_ERR_INVALID,
             "cells = [1073741824, 1073741824, 1073741824]: more than 281474976710656 (2^48) "
             "cells in all");
  o = opts3(PATCH_MAX_AXIS_CELLS, 262145, 1, 1, 1, 1, false, false, false);
  ASSERT_ERR(patch_options_validate(&o, &err), TSR_ERR_INVALID, "(2^48) cells in all");
  o = opts3(PATCH_MAX_AXIS_CELLS, 262144, 1, 1, 1, 1, false, false, false);
  ASSERT_OK(patch_options_validate(&o, &err)); /* exactly 2^48 */

  /* past 2^20 blocks: refused with the cost stated (no product overflows: 65536^2) */
  o = opts3(65536, 65536, 1, 65536, 65536, 1, false, false, false);
  ASSERT_ERR(patch_options_validate(&o, &err), TSR_ERR_INVALID,
             "blocks = [65536, 65536, 1]: more than 1048576 (2^20) blocks in all");
  o = opts3(200, 200, 200, 200, 200, 200, false, false, false);
  ASSERT_ERR(patch_options_validate(&o, &err), TSR_ERR_INVALID,
             "8e+06 blocks would take about 6.4 GB and 32 s per process");
  o = opts3(1024, 1024, 1, 1024, 1024, 1, false, false, false); /* exactly 2^20 */
  ASSERT_OK(patch_options_validate(&o, &err));
  o = opts3(1025, 1024, 1, 1025, 1024, 1, false, false, false);
  ASSERT_ERR(patch_options_validate(&o, &err), TSR_ERR_INVALID, "2^20");

  /* the largest axis that is still fine */
  o = opts3(PATCH_MAX_AXIS_CELLS, 2, 3, 1, 1, 1, false, false, false);
  ASSERT_OK(patch_options_validate(&o, &err));
}

static void test_create_rejects_bad_options_and_layout(void **state) {
  (void)state;
  tsr_error_t err;
  static char sentinel;
  patch_t *p = (patch_t *)(void *)&sentinel; /* must be reset to NULL on failure */
  patch_options_t o = opts3(4, 4, 4, 5, 1, 1, false, false, false);
  patch_layout_t layout = {.nranks = 1, .my_rank = 0};
  ASSERT_ERR(patch_create(&o, &layout, &p, &err), TSR_ERR_INVALID,
             "blocks[0] (x) = 5 exceeds cells[0] = 4");
  assert_null(p);

  o = opts3(4, 4, 4, 2, 2, 2, false, false, false);
  layout = (patch_layout_t){.nranks = 0, .my_rank = 0};
  ASSERT_ERR(patch_create(&o, &layout, &p, &err), TSR_ERR_INVALID, "number of ranks is 0");
  assert_null(p);
  layout = (patch_layout_t){.nranks = 2, .my_rank = 2};
  ASSERT_ERR(patch_create(&o, &layout, &p, &err), TSR_ERR_INVALID, "rank 2 is outside 0..1");
  assert_null(p);
  layout = (patch_layout_t){.nranks = 2, .my_rank = -1};
  ASSERT_ERR(patch_create(&o, &layout, &p, &err), TSR_ERR_INVALID, "rank -1 is outside 0..1");
  assert_null(p);

  patch_free(NULL);
  patch_free(&p); /* NULL-safe */
  assert_null(p);
}

/* ---------------------------------------------------------------- ranks */

static void test_morton_even_split(void **state) {
  (void)state;
  const int grids[][3] = {{4, 4, 4}, {3, 2, 5}, {1, 1, 1}, {7, 1, 1}, {2, 3, 2}};
  for (size_t g = 0; g < sizeof grids / sizeof grids[0]; ++g)
    for (int nranks = 1; nranks <= 9; ++nranks) {
      patch_options_t o = opts3(16, 16, 16, grids[g][0], grids[g][1], grids[g][2], false,
                                false, false);
      patch_t *p = make_patch(&o, nranks, nranks - 1);
      int32_t n = patch_block_count(p);
      int32_t counted[9] = {0};
      for (int32_t id = 0; id < n; ++id) {
        int r = patch_block(p, id)->rank;
        assert_in_range(r, 0, nranks - 1);
        counted[r]++;
      }
      int32_t lo = INT32_MAX, hi = 0, sum = 0;
      for (int r = 0; r < nranks; ++r) {
        int32_t c = patch_rank_block_count(p, r);
        assert_int_equal(c, counted[r]);
        assert_int_equal(c, n / nranks + (c > n / nranks ? 1 : 0));
        lo = c < lo ? c : lo;
        hi = c > hi ? c : hi;
        sum += c;
      }
      assert_true(hi - lo <= 1);
      assert_int_equal(sum, n);
      assert_int_equal(patch_rank_block_count(p, -1), 0);
      assert_int_equal(patch_rank_block_count(p, nranks), 0);
      assert_int_equal(patch_nranks(p), nranks);
      assert_int_equal(patch_my_rank(p), nranks - 1);

      /* ranks are contiguous runs of the Morton order, in rank order */
      tsr_error_t err;
      int32_t *order = malloc((size_t)n * sizeof *order);
      assert_non_null(order);
      ASSERT_OK(patch_morton_order(p, order, &err));
      for (int32_t i = 1; i < n; ++i)
        assert_true(patch_block(p, order[i - 1])->rank <= patch_block(p, order[i])->rank);
      free(order);
      patch_free(&p);
    }
}

/* 4x4x1 blocks on 4 ranks: each rank gets one 2x2 quadrant of the Z curve. */
static void test_morton_even_keeps_quadrants_together(void **state) {
  (void)state;
  patch_options_t o = opts3(8, 8, 1, 4, 4, 1, false, false, false);
  patch_t *p = make_patch(&o, 4, 0);
  for (int32_t id = 0; id < 16; ++id) {
    const block_info_t *b = patch_block(p, id);
    int quadrant = b->grid[0] / 2 + 2 * (b->grid[1] / 2);
    assert_int_equal(b->rank, quadrant);
  }
  patch_free(&p);
}

static void test_local_blocks_and_data(void **state) {
  (void)state;
  patch_options_t o = opts3(12, 12, 12, 3, 3, 2, false, true, false);
  const int nranks = 4;
  int32_t total = 0;
  for (int me = 0; me < nranks; ++me) {
    patch_t *p = make_patch(&o, nranks, me);
    int32_t nlocal = patch_local_count(p);
    assert_int_equal(nlocal, patch_rank_block_count(p, me));
    total += nlocal;
    int32_t prev = -1;
    for (int32_t i = 0; i < nlocal; ++i) {
      int32_t id = patch_local_id(p, i);
      assert_true(id > prev); /* ascending */
      prev = id;
      assert_int_equal(patch_block(p, id)->rank, me);
    }
    assert_int_equal(patch_local_id(p, -1), -1);
    assert_int_equal(patch_local_id(p, nlocal), -1);
    int32_t with_data = 0;
    for (int32_t id = 0; id < patch_block_count(p); ++id) {
      block_data_t *data = patch_block_data(p, id);
      if (patch_block(p, id)->rank == me) {
        assert_non_null(data);
        assert_int_equal(block_data_count(data), 0);
        ++with_data;
      } else {
        assert_null(data);
      }
    }
    assert_int_equal(with_data, nlocal);
    assert_null(patch_block_data(p, -1));
    assert_null(patch_block_data(p, patch_block_count(p)));
    patch_free(&p);
  }
  assert_int_equal(total, 18);
}

/* More ranks than blocks: some ranks own nothing and still get a valid patch. */
static void test_rank_without_blocks(void **state) {
  (void)state;
  patch_options_t o = opts3(4, 4, 4, 2, 1, 1, false, false, false);
  patch_t *p = make_patch(&o, 5, 4);
  int32_t owned = 0;
  for (int r = 0; r < 5; ++r) owned += patch_rank_block_count(p, r);
  assert_int_equal(owned, 2);
  for (int32_t id = 0; id < 2; ++id)
    if (patch_block(p, id)->rank != 4) assert_null(patch_block_data(p, id));
  patch_free(&p);
}

static void test_hs_of_rank_and_initial_bs(void **state) {
  (void)state;
  tsr_error_t err;
  patch_options_t o = opts3(8, 8, 8, 2, 2, 2, false, false, false);
  uint32_t hs[3] = {1, 0, 1};
  patch_layout_t layout = {.nranks = 3, .my_rank = 1, .hs_of_rank = hs, .bs = 5};
  patch_t *p = NULL;
  ASSERT_OK(patch_create(&o, &layout, &p, &err));
  hs[0] = hs[1] = hs[2] = 9; /* the patch must not depend on the array afterwards */
  const uint32_t want[3] = {1, 0, 1};
  for (int32_t id = 0; id < 8; ++id) {
    const block_info_t *b = patch_block(p, id);
    assert_int_equal(b->hs, want[b->rank]);
    assert_int_equal(b->bs, 5);
  }
  patch_free(&p);

  /* without hs_of_rank every block gets hs 0 */
  layout = (patch_layout_t){.nranks = 3, .my_rank = 0};
  ASSERT_OK(patch_create(&o, &layout, &p, &err));
  for (int32_t id = 0; id < 8; ++id) {
    assert_int_equal(patch_block(p, id)->hs, 0);
    assert_int_equal(patch_block(p, id)->bs, 0);
  }
  patch_free(&p);
}

typedef struct assign_ctx {
  int calls;
  int seen_blocks;
  bool geometry_ok;
} assign_ctx_t;

/* rank = (number of blocks - 1 - id) % nranks; records what it saw. */
static tsr_status assign_reverse(const patch_t *patch, int nranks, const void *ctx,
                                 int *rank_of_block, tsr_error_t *err) {
  (void)err;
  assign_ctx_t *c = (assign_ctx_t *)(uintptr_t)ctx;
  c->calls++;
  int32_t n = patch_block_count(patch);
  c->seen_blocks = n;
  c->geometry_ok = true;
  for (int32_t id = 0; id < n; ++id) {
    const block_info_t *b = patch_block(patch, id);
    if (!b || b->id != id || b->size[0] < 1) c->geometry_ok = false;
    rank_of_block[id] = (int)((n - 1 - id) % nranks);
  }
  return TSR_OK;
}

static void test_custom_assign_is_used(void **state) {
  (void)state;
  tsr_error_t err;
  assign_ctx_t ctx = {0};
  patch_options_t o = opts3(6, 6, 6, 3, 2, 1, false, false, false);
  patch_layout_t layout = {.nranks = 4, .my_rank = 2, .assign = assign_reverse,
                           .assign_ctx = &ctx};
  patch_t *p = NULL;
  ASSERT_OK(patch_create(&o, &layout, &p, &err));
  assert_int_equal(ctx.calls, 1);
  assert_int_equal(ctx.seen_blocks, 6);
  assert_true(ctx.geometry_ok);
  for (int32_t id = 0; id < 6; ++id) assert_int_equal(patch_block(p, id)->rank, (5 - id) % 4);
  /* rank 2 owns ids 3 (5-3=2) only; rank 1 owns 0 and 4 */
  assert_int_equal(patch_local_count(p), 1);
  assert_int_equal(patch_local_id(p, 0), 3);
  assert_int_equal(patch_rank_block_count(p, 1), 2);
  patch_free(&p);
}

static tsr_status assign_out_of_range(const patch_t *patch, int nranks, const void *ctx,
                                      int *rank_of_block, tsr_error_t *err) {
  (void)ctx;
  (void)err;
  for (int32_t id = 0; id < patch_block_count(patch); ++id) rank_of_block[id] = 0;
  rank_of_block[patch_block_count(patch) - 1] = nranks; /* one past the last rank */
  return TSR_OK;
}

static tsr_status assign_leaves_gap(const patch_t *patch, int nranks, const void *ctx,
                                    int *rank_of_block, tsr_error_t *err) {
  (void)ctx;
  (void)err;
  (void)nranks;
  for (int32_t id = 1; id < patch_block_count(patch); ++id) rank_of_block[id] = 0;
  return TSR_OK; /* block 0 never assigned */
}

static tsr_status assign_fails(const patch_t *patch, int nranks, const void *ctx,
                               int *rank_of_block, tsr_error_t *err) {
  (void)patch;
  (void)ctx;
  (void)rank_of_block;
  return tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                       "calibration says %d ranks are too few", nranks);
}

static void test_bad_assign_output_is_an_error(void **state) {
  (void)state;
  tsr_error_t err;
  patch_options_t o = opts3(6, 6, 6, 3, 2, 1, false, false, false);
  patch_t *p = NULL;
  patch_layout_t layout = {.nranks = 3, .my_rank = 0, .assign = assign_out_of_range};
  ASSERT_ERR(patch_create(&o, &layout, &p, &err), TSR_ERR_INTERNAL,
             "BlockID 5 the rank 3, outside 0..2");
  assert_null(p);

  layout.assign = assign_leaves_gap;
  ASSERT_ERR(patch_create(&o, &layout, &p, &err), TSR_ERR_INTERNAL,
             "BlockID 0 the rank -1, outside 0..2");
  assert_null(p);

  layout.assign = assign_fails;
  ASSERT_ERR(patch_create(&o, &layout, &p, &err), TSR_ERR_INVALID,
             "calibration says 3 ranks are too few");
  assert_null(p);
}

static void test_set_bs(void **state) {
  (void)state;
  tsr_error_t err;
  patch_options_t o = opts3(4, 4, 4, 2, 2, 2, false, false, false);
  patch_layout_t layout = {.nranks = 2, .my_rank = 0, .bs = 1};
  patch_t *p = NULL;
  ASSERT_OK(patch_create(&o, &layout, &p, &err));
  ASSERT_OK(patch_set_bs(p, 3, 7, &err));
  for (int32_t id = 0; id < 8; ++id) assert_int_equal(patch_block(p, id)->bs, id == 3 ? 7 : 1);
  ASSERT_ERR(patch_set_bs(p, 8, 2, &err), TSR_ERR_INVALID,
             "BlockID 8 does not exist (the patch has 8 blocks)");
  ASSERT_ERR(patch_set_bs(p, -1, 2, &err), TSR_ERR_INVALID, "BlockID -1 does not exist");
  for (int32_t id = 0; id < 8; ++id) assert_int_equal(patch_block(p, id)->bs, id == 3 ? 7 : 1);
  /* a set: block 3 carries bs ids 0, 1 and 2, the others id 0 */
  assert_true(patch_has_bs(patch_block(p, 3), 2));
  assert_false(patch_has_bs(patch_block(p, 3), 3));
  assert_false(patch_has_bs(patch_block(p, 0), 1));
  ASSERT_OK(patch_set_bs(p, 5, patch_bs_bit(63) | patch_bs_bit(0), &err));
  assert_true(patch_has_bs(patch_block(p, 5), 63) && patch_has_bs(patch_block(p, 5), 0));
  assert_false(patch_has_bs(patch_block(p, 5), 64)); /* no such id: never carried */
  assert_int_equal(patch_bs_bit(64), 0);
  patch_free(&p);
}

/* ---------------------------------------------------------------- balance */

/* Bit i of x goes to bit 3i, of y to 3i+1, of z to 3i+2. */
static uint64_t naive_morton(uint32_t x, uint32_t y, uint32_t z) {
  uint64_t m = 0;
  for (int i = 0; i < 21; ++i) {
    m |= (uint64_t)(x >> i & 1) << (3 * i);
    m |= (uint64_t)(y >> i & 1) << (3 * i + 1);
    m |= (uint64_t)(z >> i & 1) << (3 * i + 2);
  }
  return m;
}

static void test_morton_code_interleaves_bits(void **state) {
  (void)state;
  assert_int_equal(patch_morton_code(0, 0, 0), 0);
  assert_int_equal(patch_morton_code(1, 0, 0), 1);
  assert_int_equal(patch_morton_code(0, 1, 0), 2);
  assert_int_equal(patch_morton_code(0, 0, 1), 4);
  assert_int_equal(patch_morton_code(1, 1, 1), 7);
  assert_int_equal(patch_morton_code(2, 0, 0), 8);
  assert_int_equal(patch_morton_code(3, 0, 0), 9);    /* 0b001001 */
  assert_int_equal(patch_morton_code(0, 2, 0), 16);
  assert_int_equal(patch_morton_code(0, 0, 2), 32);
  /* x=101 y=011 z=110: groups (z y x) from bit 0: 011, 110, 101 */
  assert_int_equal(patch_morton_code(5, 3, 6), 0x173);
  for (int z = 0; z < 8; ++z)
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 8; ++x)
        assert_int_equal(patch_morton_code(x, y, z), naive_morton((uint32_t)x, (uint32_t)y,
                                                                    (uint32_t)z));
  /* the top of the 21-bit range */
  assert_int_equal(patch_morton_code(1 << 20, 0, 0), UINT64_C(1) << 60);
  assert_int_equal(patch_morton_code(0, 0, 1 << 20), UINT64_C(1) << 62);
  assert_int_equal(patch_morton_code(0x1fffff, 0x1fffff, 0x1fffff), (UINT64_C(1) << 63) - 1);
  assert_int_equal(patch_morton_code(123456, 654321, 1048575),
                   naive_morton(123456, 654321, 1048575));
}

static void test_morton_order(void **state) {
  (void)state;
  tsr_error_t err;
  patch_options_t o = opts3(8, 8, 1, 4, 4, 1, false, false, false);
  patch_t *p = make_patch(&o, 1, 0);
  int32_t order[16];
  ASSERT_OK(patch_morton_order(p, order, &err));
  const int32_t want[16] = {0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15};
  assert_memory_equal(order, want, sizeof want);
  patch_free(&p);

  /* 2x2x2: Morton order is the BlockID order */
  o = opts3(4, 4, 4, 2, 2, 2, false, false, false);
  p = make_patch(&o, 1, 0);
  ASSERT_OK(patch_morton_order(p, order, &err));
  for (int32_t i = 0; i < 8; ++i) assert_int_equal(order[i], i);
  patch_free(&p);
}

static void test_morton_even_rejects_zero_ranks(void **state) {
  (void)state;
  tsr_error_t err;
  patch_options_t o = opts3(4, 4, 4, 2, 2, 2, false, false, false);
  patch_t *p = make_patch(&o, 1, 0);
  int ranks[8];
  ASSERT_ERR(patch_morton_even(p, 0, NULL, ranks, &err), TSR_ERR_INVALID,
             "cannot assign blocks to 0 ranks");
  ASSERT_OK(patch_morton_even(p, 3, NULL, ranks, &err));
  int count[3] = {0};
  for (int i = 0; i < 8; ++i) {
    assert_in_range(ranks[i], 0, 2);
    count[ranks[i]]++;
  }
  assert_int_equal(count[0], 2); /* positions [0, 8/3) = 2 blocks, then 3, then 3 */
  assert_int_equal(count[1], 3);
  assert_int_equal(count[2], 3);
  patch_free(&p);
}

/* ---------------------------------------------------------------- block_data */

typedef struct free_log {
  int order[16];
  int n;
} free_log_t;

/* item points at an int holding its tag; logs the tag and frees the item. */
static void log_free(void *item, void *ctx) {
  free_log_t *log = ctx;
  log->order[log->n++] = *(int *)item;
  free(item);
}

static int *tagged(int tag) {
  int *p = malloc(sizeof *p);
  assert_non_null(p);
  *p = tag;
  return p;
}

static void test_block_data_add_get(void **state) {
  (void)state;
  tsr_error_t err;
  free_log_t log = {.n = 0};
  block_data_t *list = NULL;
  ASSERT_OK(block_data_create(&list, &err));
  assert_non_null(list);
  assert_int_equal(block_data_count(list), 0);
  assert_null(block_data_get(list, 0));

  int *a = tagged(10), *b = tagged(20);
  ASSERT_OK(block_data_add_take(list, 3, a, log_free, &log, &err));
  ASSERT_OK(block_data_add_take(list, 0, b, log_free, &log, &err));
  static int unowned = 42;
  ASSERT_OK(block_data_add_take(list, 7, &unowned, NULL, NULL, &err)); /* owns nothing */
  assert_int_equal(block_data_count(list), 3);
  assert_ptr_equal(block_data_get(list, 3), a);
  assert_ptr_equal(block_data_get(list, 0), b);
  assert_ptr_equal(block_data_get(list, 7), &unowned);
  assert_null(block_data_get(list, 1));
  assert_null(block_data_get(list, -1));
  assert_null(block_data_get(NULL, 3));
  assert_int_equal(block_data_count(NULL), 0);
  assert_int_equal(log.n, 0); /* nothing freed while the list lives */

  block_data_free(&list);
  assert_null(list);
  assert_int_equal(log.n, 2);
  block_data_free(&list); /* NULL-safe */
  block_data_free(NULL);
}

static void test_block_data_frees_in_reverse_order(void **state) {
  (void)state;
  tsr_error_t err;
  free_log_t log = {.n = 0};
  block_data_t *list = NULL;
  ASSERT_OK(block_data_create(&list, &err));
  /* more than the initial capacity, ids out of order */
  const int ids[9] = {5, 2, 8, 0, 1, 7, 3, 6, 4};
  for (int i = 0; i < 9; ++i)
    ASSERT_OK(block_data_add_take(list, ids[i], tagged(i), log_free, &log, &err));
  assert_int_equal(block_data_count(list), 9);
  for (int i = 0; i < 9; ++i) assert_int_equal(*(int *)block_data_get(list, ids[i]), i);
  block_data_free(&list);
  assert_int_equal(log.n, 9);
  for (int i = 0; i < 9; ++i) assert_int_equal(log.order[i], 8 - i);
}

static void test_block_data_failure_frees_item(void **state) {
  (void)state;
  tsr_error_t err;
  free_log_t log = {.n = 0};
  block_data_t *list = NULL;
  ASSERT_OK(block_data_create(&list, &err));
  int *first = tagged(1);
  ASSERT_OK(block_data_add_take(list, 4, first, log_free, &log, &err));

  /* duplicate id: rejected, the new item freed at once, the old one kept */
  ASSERT_ERR(block_data_add_take(list, 4, tagged(2), log_free, &log, &err), TSR_ERR_INVALID,
             "block data id 4 is already present");
  assert_int_equal(log.n, 1);
  assert_int_equal(log.order[0], 2);
  assert_ptr_equal(block_data_get(list, 4), first);
  assert_int_equal(block_data_count(list), 1);

  /* negative id: rejected and freed */
  ASSERT_ERR(block_data_add_take(list, -2, tagged(3), log_free, &log, &err), TSR_ERR_INVALID,
             "block data id -2 is negative");
  assert_int_equal(log.n, 2);
  assert_int_equal(log.order[1], 3);
  assert_int_equal(block_data_count(list), 1);

  block_data_free(&list);
  assert_int_equal(log.n, 3);
  assert_int_equal(log.order[2], 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_options_default),
      cmocka_unit_test(test_uneven_split_explicit),
      cmocka_unit_test(test_uneven_split_tiles_axis),
      cmocka_unit_test(test_aabb_matches_interval),
      cmocka_unit_test(test_block_id_is_linear_index_x_fastest),
      cmocka_unit_test(test_neighbors_interior_block_all_26),
      cmocka_unit_test(test_neighbors_corner_block_nonperiodic),
      cmocka_unit_test(test_neighbors_periodic_wrap_explicit),
      cmocka_unit_test(test_neighbors_all_periodicity_combinations),
      cmocka_unit_test(test_one_block_periodic_axis_is_own_neighbor),
      cmocka_unit_test(test_two_blocks_periodic_both_sides_other_block),
      cmocka_unit_test(test_neighbor_arguments_out_of_range),
      cmocka_unit_test(test_send_slice_meets_neighbor_recv_slice),
      cmocka_unit_test(test_validate_rejects_bad_options),
      cmocka_unit_test(test_create_rejects_bad_options_and_layout),
      cmocka_unit_test(test_morton_even_split),
      cmocka_unit_test(test_morton_even_keeps_quadrants_together),
      cmocka_unit_test(test_local_blocks_and_data),
      cmocka_unit_test(test_rank_without_blocks),
      cmocka_unit_test(test_hs_of_rank_and_initial_bs),
      cmocka_unit_test(test_custom_assign_is_used),
      cmocka_unit_test(test_bad_assign_output_is_an_error),
      cmocka_unit_test(test_set_bs),
      cmocka_unit_test(test_morton_code_interleaves_bits),
      cmocka_unit_test(test_morton_order),
      cmocka_unit_test(test_morton_even_rejects_zero_ranks),
      cmocka_unit_test(test_block_data_add_get),
      cmocka_unit_test(test_block_data_frees_in_reverse_order),
      cmocka_unit_test(test_block_data_failure_frees_item),
  };
  return cmocka_run_group_tests_name("patch", tests, NULL, NULL);
}
