/* direction: the 26 neighbour directions and their ghost-exchange slices.
 *
 * Checks the numbering (faces, edges, corners; inverse d ^ 1 negates the offsets),
 * direction_from_offset against every offset, the names, and the send/receive slices
 * of every direction on several block sizes: equal extents, the send slice on the
 * interior side +d, the receive slice in the ghost layer on side -d, and the cell
 * counts. */
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

static void test_send_and_recv_slices_have_equal_extent(void **state) {
  (void)state;
  for (int s = 0; s < NSIZES; ++s)
    for (int d = 0; d < DIRECTION_COUNT; ++d) {
      int slo[3], shi[3], rlo[3], rhi[3];
      direction_send_slice(sizes[s], d, slo, shi);
      direction_recv_slice(sizes[s], d, rlo, rhi);
      for (int a = 0; a < 3; ++a) {
        assert_true(shi[a] > slo[a]);
        assert_int_equal(shi[a] - slo[a], rhi[a] - rlo[a]);
      }
    }
}

/* Send slice: interior cells, one layer thick on side +d along each axis where d moves. */
static void test_send_slice_is_interior_on_side_plus_d(void **state) {
  (void)state;
  for (int s = 0; s < NSIZES; ++s)
    for (int d = 0; d < DIRECTION_COUNT; ++d) {
      const int *size = sizes[s];
      int lo[3], hi[3];
      direction_send_slice(size, d, lo, hi);
      for (int a = 0; a < 3; ++a) {
        assert_true(lo[a] >= 0 && hi[a] <= size[a]); /* interior only */
        switch (direction_offsets[d][a]) {
        case 1:
          assert_int_equal(lo[a], size[a] - 1);
          assert_int_equal(hi[a], size[a]);
          break;
        case -1:
          assert_int_equal(lo[a], 0);
          assert_int_equal(hi[a], 1);
          break;
        default:
          assert_int_equal(lo[a], 0);
          assert_int_equal(hi[a], size[a]);
        }
      }
    }
}

/* Receive slice: ghost cells on side -d (at -1 when d moves +, at size when d moves -),
 * the whole interior extent along axes where d does not move. */
static void test_recv_slice_is_ghost_layer_on_side_minus_d(void **state) {
  (void)state;
  for (int s = 0; s < NSIZES; ++s)
    for (int d = 0; d < DIRECTION_COUNT; ++d) {
      const int *size = sizes[s];
      int lo[3], hi[3];
      direction_recv_slice(size, d, lo, hi);
      int ghost_axes = 0;
      for (int a = 0; a < 3; ++a) {
        assert_true(lo[a] >= -1 && hi[a] <= size[a] + 1);
        switch (direction_offsets[d][a]) {
        case 1: /* travelled +a: arrives from the -a side */
          assert_int_equal(lo[a], -1);
          assert_int_equal(hi[a], 0);
          ++ghost_axes;
          break;
        case -1:
          assert_int_equal(lo[a], size[a]);
          assert_int_equal(hi[a], size[a] + 1);
          ++ghost_axes;
          break;
        default:
          assert_int_equal(lo[a], 0);
          assert_int_equal(hi[a], size[a]);
        }
      }
      assert_int_equal(ghost_axes, direction_order(d));
      /* the receive slice of d sits where the send slice of the inverse would be,
       * pushed one cell outward: recv(d) = send(-d) - offset(d) along moving axes */
      int slo[3], shi[3];
      direction_send_slice(size, direction_inverse(d), slo, shi);
      for (int a = 0; a < 3; ++a)
        assert_int_equal(lo[a], slo[a] - direction_offsets[d][a]);
    }
}

static void test_slice_cell_counts(void **state) {
  (void)state;
  const int size[3] = {4, 5, 6};
  assert_int_equal(direction_slice_cells(size, direction_from_offset(1, 0, 0)), 30);
  assert_int_equal(direction_slice_cells(size, direction_from_offset(0, -1, 0)), 24);
  assert_int_equal(direction_slice_cells(size, direction_from_offset(0, 0, 1)), 20);
  assert_int_equal(direction_slice_cells(size, direction_from_offset(1, -1, 0)), 6);
  assert_int_equal(direction_slice_cells(size, direction_from_offset(-1, 0, 1)), 5);
  assert_int_equal(direction_slice_cells(size, direction_from_offset(0, 1, 1)), 4);
  assert_int_equal(direction_slice_cells(size, direction_from_offset(-1, 1, -1)), 1);
  /* every size: the count is the product of both slices' extents */
  for (int s = 0; s < NSIZES; ++s)
    for (int d = 0; d < DIRECTION_COUNT; ++d) {
      int slo[3], shi[3], rlo[3], rhi[3];
      direction_send_slice(sizes[s], d, slo, shi);
      direction_recv_slice(sizes[s], d, rlo, rhi);
      int64_t send = 1, recv = 1;
      for (int a = 0; a < 3; ++a) {
        send *= shi[a] - slo[a];
        recv *= rhi[a] - rlo[a];
      }
      assert_int_equal(direction_slice_cells(sizes[s], d), send);
      assert_int_equal(direction_slice_cells(sizes[s], d), recv);
      if (direction_order(d) == 3) assert_int_equal(send, 1);
    }
  /* large faces do not overflow int */
  const int big[3] = {100000, 100000, 3};
  assert_int_equal(direction_slice_cells(big, direction_from_offset(0, 0, 1)),
                   INT64_C(10000000000));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_inverse_negates_offsets),
      cmocka_unit_test(test_offsets_are_distinct_and_nonzero),
      cmocka_unit_test(test_face_edge_corner_counts_and_numbering),
      cmocka_unit_test(test_from_offset_round_trip),
      cmocka_unit_test(test_names_spell_offsets),
      cmocka_unit_test(test_send_and_recv_slices_have_equal_extent),
      cmocka_unit_test(test_send_slice_is_interior_on_side_plus_d),
      cmocka_unit_test(test_recv_slice_is_ghost_layer_on_side_minus_d),
      cmocka_unit_test(test_slice_cell_counts),
  };
  return cmocka_run_group_tests_name("direction", tests, NULL, NULL);
}
