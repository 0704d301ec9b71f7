/* direction: the 26 neighbour directions and their ghost-exchange slices.
 *
 * Checks the numbering (faces, edges, corners; inverse d ^ 1 negates the offsets),
 * direction_from_offset against every offset, the names, and the send/receive slices
 * of every direction on several block sizes and ghost widths: equal extents, the send
 * slice on the interior side +d, the receive slice in the ghost layer on side -d,
 * covered once, the wrap round blocks thinner than the ghost layer, and the cell
 * counts. */
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "direction.h"

/* Block sizes the slice tests walk: cubes, flat blocks, single cells. */
static const int sizes[][3] = {{4, 5, 6}, {1, 1, 1}, {1, 7, 2}, {3, 1, 1}, {8, 8, 8}};
enum { NSIZES = sizeof sizes / sizeof sizes[0] };

static void test_inverse_negates_offsets(void **state) {
  (void)state;
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    int inv = direction_inverse(d);
    assert_int_equal(inv, d ^ 1);
    assert_in_range(inv, 0, DIRECTION_COUNT - 1);
    assert_int_not_equal(inv, d);
    assert_int_equal(direction_inverse(inv), d);
    for (int a = 0; a < 3; ++a)
      assert_int_equal(direction_offsets[inv][a], -direction_offsets[d][a]);
    assert_int_equal(direction_order(inv), direction_order(d));
  }
}

static void test_offsets_are_distinct_and_nonzero(void **state) {
  (void)state;
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    const int8_t *o = direction_offsets[d];
    assert_false(o[0] == 0 && o[1] == 0 && o[2] == 0);
    for (int a = 0; a < 3; ++a) assert_in_range(o[a] + 1, 0, 2);
    for (int e = d + 1; e < DIRECTION_COUNT; ++e)
      assert_false(memcmp(o, direction_offsets[e], 3) == 0);
  }
}

static void test_face_edge_corner_counts_and_numbering(void **state) {
  (void)state;
  int count[4] = {0};
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    int order = direction_order(d);
    assert_in_range(order, 1, 3);
    count[order]++;
    /* 0..5 faces, 6..17 edges, 18..25 corners */
    int expected = d < DIRECTION_FACES ? 1 : d < DIRECTION_FACES + DIRECTION_EDGES ? 2 : 3;
    assert_int_equal(order, expected);
  }
  assert_int_equal(count[1], 6);
  assert_int_equal(count[2], 12);
  assert_int_equal(count[3], 8);
  assert_int_equal(DIRECTION_FACES + DIRECTION_EDGES + DIRECTION_CORNERS, DIRECTION_COUNT);
  assert_int_equal(direction_order(-1), 0);
  assert_int_equal(direction_order(DIRECTION_COUNT), 0);
}

static void test_from_offset_round_trip(void **state) {
  (void)state;
  int seen[DIRECTION_COUNT] = {0};
  for (int z = -1; z <= 1; ++z)
    for (int y = -1; y <= 1; ++y)
      for (int x = -1; x <= 1; ++x) {
        int d = direction_from_offset(x, y, z);
        if (x == 0 && y == 0 && z == 0) {
          assert_int_equal(d, -1);
          continue;
        }
        assert_in_range(d, 0, DIRECTION_COUNT - 1);
        assert_int_equal(direction_offsets[d][0], x);
        assert_int_equal(direction_offsets[d][1], y);
        assert_int_equal(direction_offsets[d][2], z);
        seen[d]++;
      }
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    assert_int_equal(seen[d], 1);
    const int8_t *o = direction_offsets[d];
    assert_int_equal(direction_from_offset(o[0], o[1], o[2]), d);
  }
  assert_int_equal(direction_from_offset(2, 0, 0), -1);
  assert_int_equal(direction_from_offset(0, -2, 0), -1);
  assert_int_equal(direction_from_offset(1, 1, 5), -1);
}

/* The name spells the nonzero offsets as "+x-y..." in x, y, z order. */
static void test_names_spell_offsets(void **state) {
  (void)state;
  assert_string_equal(direction_name(0), "+x");
  assert_string_equal(direction_name(1), "-x");
  assert_string_equal(direction_name(5), "-z");
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    char expect[8] = "";
    size_t n = 0;
    for (int a = 0; a < 3; ++a) {
      if (direction_offsets[d][a] == 0) continue;
      expect[n++] = direction_offsets[d][a] > 0 ? '+' : '-';
      expect[n++] = (char)('x' + a);
    }
    expect[n] = '\0';
    assert_string_equal(direction_name(d), expect);
  }
  assert_string_equal(direction_name(-1), "?");
  assert_string_equal(direction_name(DIRECTION_COUNT), "?");
}

/* Ghost widths the slice tests walk: the common 1, wider layers, mixed, and 0 along z
 * (a 2-D field). */
static const int widths[][3] = {{1, 1, 1}, {2, 2, 2}, {3, 3, 3}, {3, 1, 2}, {2, 2, 0}};
enum { NWIDTHS = sizeof widths / sizeof widths[0] };

/* Whether direction d moves along an axis of width 0 (nothing crosses). */
static int crosses_nothing(const int *w, int d) {
  for (int a = 0; a < 3; ++a)
    if (direction_offsets[d][a] != 0 && w[a] == 0) return 1;
  return 0;
}

/* Every box: send and receive extents equal and non-empty; the send box inside the
 * interior, the receive box inside the ghost layer on side -d within the width; every
 * received cell is the image of its sent cell (equal along axes d does not move, equal
 * modulo the block size along the others: with one block along a periodic axis the
 * sender is the receiver's column, wrapped round). The receive boxes cover the ghost
 * slice exactly once, and their cells add up to direction_slice_cells. */
static void test_boxes_cover_the_ghost_slice_once(void **state) {
  (void)state;
  for (int s = 0; s < NSIZES; ++s)
    for (int w = 0; w < NWIDTHS; ++w)
      for (int d = 0; d < DIRECTION_COUNT; ++d) {
        const int *size = sizes[s], *wd = widths[w];
        const int nb = direction_slice_boxes(size, wd, d);
        if (crosses_nothing(wd, d)) {
          assert_int_equal(nb, 0);
          assert_int_equal(direction_slice_cells(size, wd, d), 0);
          continue;
        }
        int runs = 1; /* ceil(width / size) along each axis d moves */
        for (int a = 0; a < 3; ++a)
          if (direction_offsets[d][a]) runs *= (wd[a] + size[a] - 1) / size[a];
        assert_int_equal(nb, runs);
        /* the ghost slice of d, as a box: [glo, ghi) */
        int glo[3], ghi[3];
        for (int a = 0; a < 3; ++a) {
          int o = direction_offsets[d][a];
          glo[a] = o > 0 ? -wd[a] : o < 0 ? size[a] : 0;
          ghi[a] = o > 0 ? 0 : o < 0 ? size[a] + wd[a] : size[a];
        }
        int ext[3] = {ghi[0] - glo[0], ghi[1] - glo[1], ghi[2] - glo[2]};
        unsigned char *seen = calloc((size_t)ext[0] * ext[1] * ext[2], 1);
        assert_non_null(seen);
        int64_t cells = 0;
        for (int k = 0; k < nb; ++k) {
          int slo[3], shi[3], rlo[3], rhi[3];
          direction_send_box(size, wd, d, k, slo, shi);
          direction_recv_box(size, wd, d, k, rlo, rhi);
          int64_t n = 1;
          for (int a = 0; a < 3; ++a) {
            assert_true(shi[a] > slo[a]);
            assert_int_equal(shi[a] - slo[a], rhi[a] - rlo[a]);
            assert_true(slo[a] >= 0 && shi[a] <= size[a]);
            assert_true(rlo[a] >= glo[a] && rhi[a] <= ghi[a]);
            int shift = rlo[a] - slo[a];
            if (direction_offsets[d][a] == 0) assert_int_equal(shift, 0);
            else assert_int_equal(((shift % size[a]) + size[a]) % size[a], 0);
            n *= rhi[a] - rlo[a];
          }
          cells += n;
          for (int z = rlo[2]; z < rhi[2]; ++z)
            for (int y = rlo[1]; y < rhi[1]; ++y)
              for (int x = rlo[0]; x < rhi[0]; ++x) {
                size_t i = (size_t)(x - glo[0]) +
                           (size_t)ext[0] * ((size_t)(y - glo[1]) + (size_t)ext[1] * (size_t)(z - glo[2]));
                assert_int_equal(seen[i], 0);
                seen[i] = 1;
              }
        }
        assert_int_equal(cells, (int64_t)ext[0] * ext[1] * ext[2]);
        assert_int_equal(cells, direction_slice_cells(size, wd, d));
        free(seen);
      }
}

/* Blocks at least as thick as the ghost layer: one box; send slice the outermost width
 * cells of the interior on side +d, receive slice the ghost layer on side -d, and the
 * receive slice of d sits where the send slice of the inverse would be, pushed outward
 * by the width. */
static void test_one_box_without_wrap(void **state) {
  (void)state;
  const int size[3] = {4, 5, 6};
  for (int w = 0; w < NWIDTHS; ++w)
    for (int d = 0; d < DIRECTION_COUNT; ++d) {
      const int *wd = widths[w];
      if (crosses_nothing(wd, d)) continue;
      assert_int_equal(direction_slice_boxes(size, wd, d), 1);
      int slo[3], shi[3], rlo[3], rhi[3], ilo[3], ihi[3];
      direction_send_box(size, wd, d, 0, slo, shi);
      direction_recv_box(size, wd, d, 0, rlo, rhi);
      direction_send_box(size, wd, direction_inverse(d), 0, ilo, ihi);
      int ghost_axes = 0;
      for (int a = 0; a < 3; ++a) {
        switch (direction_offsets[d][a]) {
        case 1:
          assert_int_equal(slo[a], size[a] - wd[a]);
          assert_int_equal(shi[a], size[a]);
          assert_int_equal(rlo[a], -wd[a]);
          assert_int_equal(rhi[a], 0);
          ++ghost_axes;
          break;
        case -1:
          assert_int_equal(slo[a], 0);
          assert_int_equal(shi[a], wd[a]);
          assert_int_equal(rlo[a], size[a]);
          assert_int_equal(rhi[a], size[a] + wd[a]);
          ++ghost_axes;
          break;
        default:
          assert_int_equal(slo[a], 0);
          assert_int_equal(shi[a], size[a]);
          assert_int_equal(rlo[a], 0);
          assert_int_equal(rhi[a], size[a]);
        }
        assert_int_equal(rlo[a], ilo[a] - direction_offsets[d][a] * wd[a]);
      }
      assert_int_equal(ghost_axes, direction_order(d));
    }
}

/* A block of 2 cells with a ghost layer of 5 along x (one block, periodic): ghost cells
 * -5..-1 are the images of cells 1 0 1 0 1, cells 2..6 of 0 1 0 1 0. Box by box. */
static void test_wrap_round_a_thin_block(void **state) {
  (void)state;
  const int size[3] = {2, 3, 3}, width[3] = {5, 1, 1};
  const int px = direction_from_offset(1, 0, 0), mx = direction_from_offset(-1, 0, 0);
  assert_int_equal(direction_slice_boxes(size, width, px), 3);
  int image[16], k, lo[3], hi[3], slo[3], shi[3];
  memset(image, -1, sizeof image);
  for (k = 0; k < 3; ++k) {
    direction_recv_box(size, width, px, k, lo, hi);
    direction_send_box(size, width, px, k, slo, shi);
    for (int x = lo[0]; x < hi[0]; ++x) image[x + 5] = slo[0] + (x - lo[0]);
  }
  const int want_minus[5] = {1, 0, 1, 0, 1};
  for (int x = 0; x < 5; ++x) assert_int_equal(image[x], want_minus[x]);
  memset(image, -1, sizeof image);
  for (k = 0; k < 3; ++k) {
    direction_recv_box(size, width, mx, k, lo, hi);
    direction_send_box(size, width, mx, k, slo, shi);
    for (int x = lo[0]; x < hi[0]; ++x) image[x - 2] = slo[0] + (x - lo[0]);
  }
  const int want_plus[5] = {0, 1, 0, 1, 0};
  for (int x = 0; x < 5; ++x) assert_int_equal(image[x], want_plus[x]);
  /* a corner wraps along x only: 3 boxes, the y and z extents one cell each */
  const int corner = direction_from_offset(1, 1, 1);
  assert_int_equal(direction_slice_boxes(size, width, corner), 3);
  assert_int_equal(direction_slice_cells(size, width, corner), 5);
}

static void test_slice_cell_counts(void **state) {
  (void)state;
  const int size[3] = {4, 5, 6}, *one = direction_width_one;
  assert_int_equal(direction_slice_cells(size, one, direction_from_offset(1, 0, 0)), 30);
  assert_int_equal(direction_slice_cells(size, one, direction_from_offset(0, -1, 0)), 24);
  assert_int_equal(direction_slice_cells(size, one, direction_from_offset(0, 0, 1)), 20);
  assert_int_equal(direction_slice_cells(size, one, direction_from_offset(1, -1, 0)), 6);
  assert_int_equal(direction_slice_cells(size, one, direction_from_offset(-1, 0, 1)), 5);
  assert_int_equal(direction_slice_cells(size, one, direction_from_offset(0, 1, 1)), 4);
  assert_int_equal(direction_slice_cells(size, one, direction_from_offset(-1, 1, -1)), 1);
  const int w[3] = {3, 2, 1};
  assert_int_equal(direction_slice_cells(size, w, direction_from_offset(1, 0, 0)), 90);
  assert_int_equal(direction_slice_cells(size, w, direction_from_offset(1, -1, 0)), 36);
  assert_int_equal(direction_slice_cells(size, w, direction_from_offset(-1, 1, -1)), 6);
  /* large faces do not overflow int */
  const int big[3] = {100000, 100000, 3};
  assert_int_equal(direction_slice_cells(big, one, direction_from_offset(0, 0, 1)),
                   INT64_C(10000000000));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_inverse_negates_offsets),
      cmocka_unit_test(test_offsets_are_distinct_and_nonzero),
      cmocka_unit_test(test_face_edge_corner_counts_and_numbering),
      cmocka_unit_test(test_from_offset_round_trip),
      cmocka_unit_test(test_names_spell_offsets),
      cmocka_unit_test(test_boxes_cover_the_ghost_slice_once),
      cmocka_unit_test(test_one_box_without_wrap),
      cmocka_unit_test(test_wrap_round_a_thin_block),
      cmocka_unit_test(test_slice_cell_counts),
  };
  return cmocka_run_group_tests_name("direction", tests, NULL, NULL);
}
