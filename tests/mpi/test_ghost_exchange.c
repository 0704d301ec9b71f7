/* Ghost exchange on 1, 2 and 4 ranks: a field whose cells encode (global cell,
 * component) is exchanged over many block grids, ghost widths 1, 2 and 3, both CPU
 * layouts, every periodicity combination, 1 to 27 blocks per rank, uneven splits and
 * blocks thinner than the ghost layer along periodic axes with one block (the ghost
 * cells wrap round the block); afterwards every cell of every block, interior, faces,
 * edges and corners of the ghost layers, must hold exactly what ghost_check_verify
 * expects (exact comparison: values are copied, never computed). A 2-D field (width 0
 * along z) sends nothing along z. Blocks thinner than the ghost layer elsewhere are an
 * error naming the block. Several fields of different widths, layouts and components
 * travel in one round: one MPI message per neighbour rank (counted at MPI_Isend through
 * the profiling interface), every value exact. Also: a failing extraction on one rank gives the same error on
 * all ranks without a hang; ranks whose plans disagree on a message's size (shorter or
 * longer than the receiver planned, sent through the real exchange) give every rank an
 * error naming the sender and the byte counts; comm_timing counts the exchanges and its
 * phases fit in the wall time around them; staging functions run in the documented order
 * (every stage_out, then stage_wait for each host-bound block, then the extractions) and
 * stage_wait is timed as device time.
 *
 * With "--hs gpu" every block of the matrix, the one-cell blocks, the 2-D field and the
 * round of three fields lives on the OpenCL device (PoCL in CI: every value packed and
 * unpacked by field.cl); with "--hs mixed" every other block does (BlockID odd: GPU), so
 * that every pair of hardware meets: CPU-CPU and GPU-GPU copies, CPU-GPU pairs through
 * the message layout inside a process and across ranks. Skipped (exit 77) where there is
 * no OpenCL device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "comm.h"
#include "data.h"
#include "direction.h"
#include "ghost_check.h"
#include "gpu_field.h"
#include "../unit/unit_test.h"
#include "message.h"
#include "mpi_test.h"
#include "patch.h"
#include "registry.h"
#include "verdict.h"

/* The hardware of the blocks (--hs): 0 CPU, 1 GPU, 2 every other block GPU. */
static int test_hs_mode = 0;
static opencl_context_t *test_cl;
static gpu_field_programs_t *test_gpu;

/* The hs of every block of a grid of nblocks, by the mode; NULL: each its rank's (CPU). */
static uint32_t *block_hs(const patch_options_t *o) {
  if (test_hs_mode == 0) return NULL;
  const int32_t n = o->blocks[0] * o->blocks[1] * o->blocks[2];
  uint32_t *hs = malloc((size_t)n * sizeof *hs);
  if (!hs) fail_msg("out of memory");
  for (int32_t id = 0; id < n; ++id)
    hs[id] = test_hs_mode == 1 || id % 2 ? SELECTOR_HS_GPU : SELECTOR_HS_CPU;
  return hs;
}

typedef struct exchange_result {
  tsr_status st;
  tsr_error_t err;
  int64_t messages, local_copies; /* summed over ranks */
  int64_t filled[4], empty, ghost_cells;
  int64_t remote_links; /* (block, direction) pairs with a neighbour on another rank and a
                           non-empty slice, summed over ranks: the messages expected */
  int32_t min_blocks, max_blocks; /* blocks per rank */
} exchange_result_t;

/* Runs one case: patch, field, fill, two exchanges, verification; all ranks agree. */
static exchange_result_t run_case(const patch_options_t *opts, const ghost_check_options_t *fo) {
  exchange_result_t r;
  memset(&r, 0, sizeof r);
  tsr_error_t *err = &r.err;
  tsr_status st = TSR_OK;
  registry_t *reg = NULL;
  patch_t *patch = NULL;
  comm_t *ex = NULL;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  uint32_t *hs = block_hs(opts);
  patch_layout_t layout = {.nranks = size, .my_rank = rank, .hs_of_block = hs};
  st = patch_create(opts, &layout, &patch, err);
  free(hs);
  if (st == TSR_OK) st = registry_create(&reg, err);
  if (st == TSR_OK) st = ghost_check_register(reg, test_gpu, fo, err);
  TSR_TRY(verdict_reduce(MPI_COMM_WORLD, st, 0, err));
  int field;
  TSR_TRY(data_allocate(MPI_COMM_WORLD, reg, patch, fo->field, 0, &field, err));
  st = data_run_kernel(reg, patch, fo->fill, 0, err);
  TSR_TRY(verdict_reduce(MPI_COMM_WORLD, st, 0, err));
  comm_options_t co = comm_options_one(fo->field, field, fo->width, 7);
  TSR_TRY(comm_create(&co, patch, reg, MPI_COMM_WORLD, &ex, err));
  TSR_TRY(comm_exchange(ex, err));
  const opencl_counts_t before = test_cl ? opencl_context_counts(test_cl) : (opencl_counts_t){0};
  TSR_TRY(comm_exchange(ex, err)); /* a second exchange must leave everything as it is */
  const opencl_counts_t after = test_cl ? opencl_context_counts(test_cl) : (opencl_counts_t){0};
  tsr_status dev_st = TSR_OK; /* reduced with the verification below */
  const comm_stats_t xs = comm_stats(ex);
  const int64_t payload = xs.bytes_sent - xs.messages_sent * MESSAGE_HEADER_BYTES;
  /* every block on the device: exactly the payload of the messages this rank sends
     leaves the device, in one transfer (one field: one set); at most one comes back */
  if (test_hs_mode == 1 &&
      !(after.bytes_read - before.bytes_read == payload &&
        after.reads - before.reads == (payload > 0) && after.writes - before.writes <= 1))
    dev_st = tsr_error_set(err, TSR_ERR_INTERNAL, __FILE__, __LINE__,
                           "rank %d: %lld bytes in %lld transfers left the device for %lld "
                           "bytes of messages; %lld transfers to it", rank,
                           (long long)(after.bytes_read - before.bytes_read),
                           (long long)(after.reads - before.reads), (long long)payload,
                           (long long)(after.writes - before.writes));
  ghost_check_report_t rep;
  st = dev_st;
  if (st == TSR_OK) st = ghost_check_verify(patch, field, fo, &rep, err);
  TSR_TRY(verdict_reduce(MPI_COMM_WORLD, st, 1, err));
  int64_t remote = 0;
  for (int32_t i = 0; i < patch_local_count(patch); ++i) {
    const block_info_t *b = patch_block(patch, patch_local_id(patch, i));
    for (int d = 0; d < DIRECTION_COUNT; ++d) {
      int32_t nb = patch_neighbor(patch, b->id, d);
      if (nb >= 0 && patch_block(patch, nb)->rank != rank &&
          direction_slice_cells(b->size, fo->width, d) > 0)
        ++remote;
    }
  }
  comm_stats_t cs = comm_stats(ex);
  int64_t mine[8] = {cs.messages_sent, cs.local_copies, rep.filled[1], rep.filled[2],
                     rep.filled[3], rep.empty, rep.ghost_cells, remote};
  int64_t sum[8];
  MPI_Allreduce(mine, sum, 8, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  r.messages = sum[0];
  r.local_copies = sum[1];
  for (int k = 1; k <= 3; ++k) r.filled[k] = sum[1 + k];
  r.empty = sum[5];
  r.ghost_cells = sum[6];
  r.remote_links = sum[7];
  r.min_blocks = INT32_MAX;
  for (int q = 0; q < size; ++q) {
    int32_t n = patch_rank_block_count(patch, q);
    if (n < r.min_blocks) r.min_blocks = n;
    if (n > r.max_blocks) r.max_blocks = n;
  }
cleanup:
  r.st = st;
  comm_free(&ex);
  patch_free(&patch);
  registry_free(&reg);
  return r;
}

static void describe(const patch_options_t *o, const ghost_check_options_t *fo, char *out,
                     size_t cap) {
  snprintf(out, cap, "cells %lldx%lldx%lld blocks %dx%dx%d periodic %d%d%d width %d,%d,%d %s",
           (long long)o->cells[0], (long long)o->cells[1], (long long)o->cells[2], o->blocks[0],
           o->blocks[1], o->blocks[2], o->periodic[0], o->periodic[1], o->periodic[2],
           fo->width[0], fo->width[1], fo->width[2], grid_layout_name(fo->layout));
}

/* Every ghost cell of every block holds the value of the cell it mirrors, over a matrix
 * of cases: block grids with 1 to 27 blocks per rank, ghost widths 1, 2 and 3, every
 * periodicity, both layouts (alternating). Blocks are w or w + 1 cells thick (uneven
 * splits), except along periodic axes with one block, where they are 1 or 2 cells thick:
 * thinner than the ghost layer for w = 2 and 3, so the ghost cells wrap round the block
 * itself, several times for w = 3 and 1 cell. */
static void test_exchange_matrix(void **state) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* block grids: per-rank counts from 1 up to 27 (the last grids scale with the ranks) */
  const int grids[][3] = {{1, 1, 1}, {2, 1, 1}, {1, 3, 1}, {1, 1, 2}, {2, 2, 1}, {2, 2, 2},
                          {3, 2, 1}, {3, 3, 3}, {4, 3, 2}, {size, 1, 1}, {2 * size, 2, 2},
                          {3 * size, 3, 3}};
  int ncases = 0, mixed = 0, max_per_rank = 0, wrapped = 0, layouts[2] = {0, 0};
  for (int w = 1; w <= 3; ++w)
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; ++g) {
      for (int per = 0; per < 8; ++per) {
        patch_options_t o = patch_options_default();
        ghost_check_options_t fo = ghost_check_options_default();
        fo.layout = (ncases % 2) ? GRID_SOA : GRID_AOS;
        bool thin = false;
        for (int a = 0; a < 3; ++a) {
          fo.width[a] = w;
          o.blocks[a] = grids[g][a];
          o.periodic[a] = (per >> a) & 1;
          if (o.blocks[a] == 1 && o.periodic[a]) {
            o.cells[a] = 1 + (a + (int)g) % 2;
            thin = thin || o.cells[a] < w;
          } else {
            /* w or w + 1 cells per block: a remainder on some axes */
            o.cells[a] = w * grids[g][a] + (a + (int)g) % (grids[g][a] + 1);
          }
        }
        char name[200];
        describe(&o, &fo, name, sizeof name);
        exchange_result_t r = run_case(&o, &fo);
        if (r.st != TSR_OK) fail_msg("%s: %s", name, r.err.text);
        /* counts that the geometry fixes */
        assert_int_equal(r.filled[1] + r.filled[2] + r.filled[3] + r.empty, r.ghost_cells);
        if (per == 7) assert_int_equal(r.empty, 0); /* fully periodic: every ghost is filled */
        if (per == 0 && o.blocks[0] * o.blocks[1] * o.blocks[2] == 1)
          assert_int_equal(r.filled[1] + r.filled[2] + r.filled[3], 0);
        assert_int_equal(r.messages, r.remote_links);
        if (r.messages > 0 && r.local_copies > 0) ++mixed;
        if (r.max_blocks > max_per_rank) max_per_rank = r.max_blocks;
        assert_true(r.max_blocks - r.min_blocks <= 1); /* Morton even split */
        wrapped += thin;
        layouts[fo.layout]++;
        ++ncases;
      }
    }
  assert_int_equal(ncases, 288);
  assert_int_equal(max_per_rank, 27);
  assert_true(wrapped > 0 && layouts[0] > 0 && layouts[1] > 0);
  if (size > 1) assert_true(mixed > 0); /* some blocks had local and remote neighbours */
}

/* One cell per block: every slice is a single cell, every block is a corner block. */
static void test_exchange_one_cell_blocks(void **state) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  patch_options_t o = patch_options_default();
  for (int a = 0; a < 3; ++a) {
    o.cells[a] = a == 0 ? 2 * size : 3;
    o.blocks[a] = (int)o.cells[a];
    o.periodic[a] = a != 1;
  }
  ghost_check_options_t fo = ghost_check_options_default();
  exchange_result_t r = run_case(&o, &fo);
  if (r.st != TSR_OK) fail_msg("%s", r.err.text);
  assert_true(r.filled[3] > 0);
}

/* A 2-D run: one cell along z, periodic, and a field with no ghost layer along z (width
 * 0): the blocks exchange along x and y only; no message and no copy goes along z (the
 * messages are exactly the x-y links to other ranks), and the field stores no ghost
 * planes along z (grid_dims.gz = 0), so every ghost cell it has is filled. */
static void test_exchange_two_dimensional(void **state) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int w = 1; w <= 3; ++w) {
    patch_options_t o = patch_options_default();
    o.cells[0] = 4 * size;
    o.blocks[0] = size;
    o.cells[1] = 7;
    o.blocks[1] = 2;
    o.cells[2] = 1;
    o.periodic[0] = o.periodic[1] = o.periodic[2] = true;
    ghost_check_options_t fo = ghost_check_options_default();
    fo.width[0] = fo.width[1] = w;
    fo.width[2] = 0;
    fo.layout = w == 2 ? GRID_SOA : GRID_AOS;
    exchange_result_t r = run_case(&o, &fo);
    if (r.st != TSR_OK) fail_msg("width %d: %s", w, r.err.text);
    int64_t blocks = (int64_t)o.blocks[0] * o.blocks[1];
    /* each block: 8 x-y directions, each to a neighbour (periodic), nothing along z */
    assert_int_equal(r.messages + r.local_copies, 8 * blocks);
    assert_int_equal(r.messages, r.remote_links);
    assert_int_equal(r.empty, 0); /* no z ghost planes, which no exchange would fill */
  }
}

/* Blocks thinner than the ghost layer are refused on every rank, with the block, the axis
 * and the widths in the message, unless the axis is periodic with one block. */
static void test_exchange_thin_blocks_refused(void **state) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ghost_check_options_t fo = ghost_check_options_default();
  fo.width[0] = fo.width[1] = fo.width[2] = 3;
  /* along x: 2 cells per block, several blocks, periodic */
  patch_options_t o = patch_options_default();
  o.cells[0] = 4 * size;
  o.blocks[0] = 2 * size;
  o.cells[1] = o.cells[2] = 3;
  o.periodic[0] = true;
  exchange_result_t r = run_case(&o, &fo);
  assert_int_equal(r.st, TSR_ERR_INVALID);
  if (!strstr(r.err.text, "'ghost_check.field' has ghost layers of 3 cells, but BlockID 0 is 2 "
                          "cells thick along x"))
    fail_msg("unexpected message: %s", r.err.text);
  /* along y: one block, not periodic */
  o = patch_options_default();
  o.cells[0] = 3 * size;
  o.blocks[0] = size;
  o.cells[1] = 2;
  o.cells[2] = 3;
  r = run_case(&o, &fo);
  assert_int_equal(r.st, TSR_ERR_INVALID);
  assert_non_null(strstr(r.err.text, "is 2 cells thick along y"));
  /* the same along a periodic axis with one block: allowed, the ghosts wrap */
  o.periodic[1] = true;
  r = run_case(&o, &fo);
  if (r.st != TSR_OK) fail_msg("%s", r.err.text);
  /* a width beyond the most */
  fo.width[2] = DIRECTION_MAX_WIDTH + 1;
  r = run_case(&o, &fo);
  assert_int_equal(r.st, TSR_ERR_INVALID);
}

/* Every MPI_Isend of the process goes through here (the PMPI profiling interface):
 * the count of MPI messages the exchanges really send. */
static int64_t isend_calls;
int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request) {
  ++isend_calls;
  return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}

/* Three fields of different widths, layouts and components exchanged in one round: one
 * MPI message to each neighbour rank per exchange (counted at MPI_Isend), carrying the
 * block messages of all three; every value of every field arrives exactly. The same
 * fields in three rounds of their own send three times the MPI messages and the same
 * block messages. */
static void test_exchange_fields_in_one_round(void **state) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  tsr_error_t err;
  tsr_error_clear(&err);
  registry_t *reg = NULL;
  patch_t *patch = NULL;
  patch_options_t o = patch_options_default();
  o.blocks[0] = 2 * size;
  o.blocks[1] = 2;
  o.cells[0] = 3 * o.blocks[0] + 1;
  o.cells[1] = 7;
  o.cells[2] = 4;
  o.periodic[0] = o.periodic[2] = true;
  uint32_t *hs = block_hs(&o);
  patch_layout_t layout = {.nranks = size, .my_rank = rank, .hs_of_block = hs};
  assert_int_equal(patch_create(&o, &layout, &patch, &err), TSR_OK);
  free(hs);
  assert_int_equal(registry_create(&reg, &err), TSR_OK);
  ghost_check_options_t fo[3];
  const char *names[3][2] = {{"test.a", "test.a_fill"}, {"test.b", "test.b_fill"},
                             {"test.c", "test.c_fill"}};
  const int widths[3][3] = {{1, 1, 1}, {3, 3, 3}, {2, 2, 0}};
  const int comps[3] = {2, 1, 1}, first[3] = {0, 2, 3};
  comm_options_t round = {.nfields = 3, .tag = 8};
  for (int f = 0; f < 3; ++f) {
    fo[f] = ghost_check_options_default();
    fo[f].field = names[f][0];
    fo[f].fill = names[f][1];
    for (int a = 0; a < 3; ++a) fo[f].width[a] = widths[f][a];
    fo[f].layout = f == 1 ? GRID_SOA : GRID_AOS;
    fo[f].comps = comps[f];
    fo[f].first_comp = first[f];
    assert_int_equal(ghost_check_register(reg, test_gpu, &fo[f], &err), TSR_OK);
    int id;
    assert_int_equal(data_allocate(MPI_COMM_WORLD, reg, patch, fo[f].field, 0, &id, &err), TSR_OK);
    round.fields[f] = (comm_field_t){.name = fo[f].field, .data_id = id,
                                     .width = {widths[f][0], widths[f][1], widths[f][2]}};
  }
  /* the neighbour ranks of this process's blocks */
  int peers = 0;
  int *is_peer = calloc((size_t)size, sizeof *is_peer);
  assert_non_null(is_peer);
  for (int32_t i = 0; i < patch_local_count(patch); ++i)
    for (int d = 0; d < DIRECTION_COUNT; ++d) {
      int32_t nb = patch_neighbor(patch, patch_local_id(patch, i), d);
      if (nb < 0) continue;
      int r = patch_block(patch, nb)->rank;
      if (r != rank && !is_peer[r]) peers += is_peer[r] = 1;
    }
  free(is_peer);
  if (size > 1) assert_true(peers > 0);

  /* one round of three fields */
  comm_t *one = NULL;
  assert_int_equal(comm_create(&round, patch, reg, MPI_COMM_WORLD, &one, &err), TSR_OK);
  for (int f = 0; f < 3; ++f)
    assert_int_equal(data_run_kernel(reg, patch, fo[f].fill, 0, &err), TSR_OK);
  const int n = 3;
  isend_calls = 0;
  for (int k = 0; k < n; ++k) assert_int_equal(comm_exchange(one, &err), TSR_OK);
  assert_int_equal(isend_calls, (int64_t)n * peers);
  comm_stats_t together = comm_stats(one);
  assert_int_equal(together.peers, peers);
  for (int f = 0; f < 3; ++f) {
    ghost_check_report_t rep;
    tsr_status st = ghost_check_verify(patch, round.fields[f].data_id, &fo[f], &rep, &err);
    if (st != TSR_OK) fail_msg("rank %d: %s", rank, err.text);
    assert_true(rep.filled[1] > 0 && rep.filled[2] > 0);
    if (widths[f][2] == 0) assert_int_equal(rep.filled[3], 0); /* no corner without z */
    else assert_true(rep.filled[3] > 0);
  }
  comm_free(&one);

  /* three rounds of one field each: three times the MPI messages, the same block
     messages */
  int64_t block_messages = 0;
  isend_calls = 0;
  for (int f = 0; f < 3; ++f) {
    comm_t *single = NULL;
    comm_options_t co = comm_options_one(round.fields[f].name, round.fields[f].data_id,
                                         round.fields[f].width, 9 + f);
    assert_int_equal(comm_create(&co, patch, reg, MPI_COMM_WORLD, &single, &err), TSR_OK);
    assert_int_equal(comm_exchange(single, &err), TSR_OK);
    block_messages += comm_stats(single).messages_sent;
    comm_free(&single);
  }
  assert_int_equal(isend_calls, 3 * (int64_t)peers);
  assert_int_equal(block_messages, together.messages_sent);

  /* a field named twice is refused */
  comm_options_t twice = round;
  twice.fields[2] = twice.fields[0];
  comm_t *bad = NULL;
  assert_int_equal(comm_create(&twice, patch, reg, MPI_COMM_WORLD, &bad, &err), TSR_ERR_INVALID);
  ASSERT_HAS("names field 'test.a' twice");
  assert_null(bad);
  patch_free(&patch);
  registry_free(&reg);
}

/* An extraction that fails on one block only: every rank returns the same error, and
 * no rank hangs waiting for messages. */
static tsr_status faulty_alloc(const block_info_t *b, void *ctx, void **out, tsr_error_t *err) {
  *out = malloc(8);
  return *out ? TSR_OK : TSR_ERR_NOMEM;
}
static void faulty_free(void *data, void *ctx) { free(data); }
static size_t faulty_size(const block_info_t *b, int dir, void *ctx) { return 8; }
static tsr_status faulty_extract(const block_info_t *b, const void *data, int dir, uint8_t *out,
                                 size_t cap, size_t *written, void *ctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int bad = *(const int *)ctx;
  TSR_CHECK(b->id != bad, TSR_ERR_INVALID, "faulty extraction refuses BlockID %d", (int)b->id);
  memset(out, 0, 8);
  *written = 8;
cleanup:
  return st;
}
/* direct copies inside a process refuse the same block as sender */
static tsr_status faulty_copy(const registry_copy_task_t *tasks, size_t n, void *ctx,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int bad = *(const int *)ctx;
  for (size_t i = 0; i < n; ++i)
    TSR_CHECK(tasks[i].src->id != bad, TSR_ERR_INVALID, "faulty extraction refuses BlockID %d",
              (int)tasks[i].src->id);
cleanup:
  return st;
}

static tsr_status faulty_insert(const block_info_t *b, void *data, int dir, const uint8_t *in,
                                size_t len, void *ctx, tsr_error_t *err) {
  return TSR_OK;
}

/* The items of a test field (each block's data: faulty_alloc's 8 bytes); ctx_data
 * (ctx_bytes) is kept by the registry and handed to all four functions. */
typedef struct row_items {
  registry_size_fn size;
  registry_extract_fn extract;
  registry_insert_fn insert;
  registry_copy_fn copy;
  const void *ctx_data;
  size_t ctx_bytes;
} row_items_t;

/* One exchange of such a field over a periodic row of 2 blocks per rank; its status and
 * message (the same on every rank). */
static tsr_status run_row_exchange(const row_items_t *it, int tag, tsr_error_t *err) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  tsr_error_clear(err);
  registry_t *reg = NULL;
  patch_t *patch = NULL;
  comm_t *ex = NULL;
  patch_options_t o = patch_options_default();
  o.cells[0] = 4 * size;
  o.blocks[0] = 2 * size;
  o.periodic[0] = true;
  patch_layout_t layout = {.nranks = size, .my_rank = rank};
  assert_int_equal(patch_create(&o, &layout, &patch, err), TSR_OK);
  assert_int_equal(registry_create(&reg, err), TSR_OK);
  void *ctx;
  assert_int_equal(registry_keep(reg, it->ctx_data, it->ctx_bytes, &ctx, err), TSR_OK);
  const char *f = "test.field";
  assert_int_equal(registry_add(reg, &(registry_item_t){.kind = REGISTRY_KIND_ALLOCATOR, .name = f,
                   .fs = "*", .hs = "cpu", .bs = "*", .alloc = faulty_alloc, .free = faulty_free}, err), TSR_OK);
  assert_int_equal(registry_add(reg, &(registry_item_t){.kind = REGISTRY_KIND_EXTRACTION, .name = f,
                   .fs = "*", .hs = "cpu", .bs = "*", .extract = it->extract, .size = it->size,
                   .ctx = ctx}, err), TSR_OK);
  assert_int_equal(registry_add(reg, &(registry_item_t){.kind = REGISTRY_KIND_INSERTION, .name = f,
                   .fs = "*", .hs = "cpu", .bs = "*", .insert = it->insert, .size = it->size,
                   .ctx = ctx}, err), TSR_OK);
  assert_int_equal(registry_add(reg, &(registry_item_t){.kind = REGISTRY_KIND_COPY, .name = f,
                   .fs = "*", .hs = "cpu", .bs = "*", .copy = it->copy, .ctx = ctx}, err), TSR_OK);
  int id;
  assert_int_equal(data_allocate(MPI_COMM_WORLD, reg, patch, f, 0, &id, err), TSR_OK);
  assert_int_equal(comm_create(&(comm_options_t){.fields = {{.name = f, .data_id = id, .width = {1, 1, 1}}},
                                               .nfields = 1, .tag = tag}, patch, reg,
                               MPI_COMM_WORLD, &ex, err), TSR_OK);
  tsr_status st = comm_exchange(ex, err);
  comm_free(&ex);
  patch_free(&patch);
  registry_free(&reg);
  return st;
}

static void test_exchange_failure_is_shared(void **state) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  tsr_error_t err;
  int bad = 2 * size - 1; /* the last block: on the last rank */
  const row_items_t items = {.size = faulty_size, .extract = faulty_extract,
                             .insert = faulty_insert, .copy = faulty_copy, .ctx_data = &bad,
                             .ctx_bytes = sizeof bad};
  assert_int_equal(run_row_exchange(&items, 3, &err), TSR_ERR_INVALID);
  char want[64];
  snprintf(want, sizeof want, "refuses BlockID %d", bad);
  assert_non_null(strstr(err.text, want));
}

/* Items of a field that exists on CPU blocks only (every field of the field kit has GPU
 * items too). */
static size_t cpu_only_size(const block_info_t *b, int dir, void *ctx) { return 8; }
static tsr_status cpu_only_extract(const block_info_t *b, const void *data, int dir, uint8_t *out,
                                   size_t cap, size_t *written, void *ctx, tsr_error_t *err) {
  *written = 0;
  return TSR_OK;
}
static tsr_status cpu_only_insert(const block_info_t *b, void *data, int dir, const uint8_t *in,
                                  size_t len, void *ctx, tsr_error_t *err) {
  return TSR_OK;
}
static tsr_status cpu_only_copy(const registry_copy_task_t *tasks, size_t n, void *ctx,
                                tsr_error_t *err) {
  return TSR_OK;
}

/* A lookup that fails on some ranks only (a rank whose blocks have no extraction item)
 * makes comm_create fail everywhere with the same message. */
static void test_create_failure_is_shared(void **state) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  tsr_error_t err;
  tsr_error_clear(&err);
  registry_t *reg = NULL;
  patch_t *patch = NULL;
  comm_t *ex = NULL;
  patch_options_t o = patch_options_default();
  o.cells[0] = 4 * size;
  o.blocks[0] = 2 * size;
  uint32_t hs[4] = {SELECTOR_HS_CPU, SELECTOR_HS_CPU, SELECTOR_HS_CPU, SELECTOR_HS_CPU};
  hs[size - 1] = SELECTOR_HS_GPU; /* the last rank pretends to be a GPU process */
  patch_layout_t layout = {.nranks = size, .my_rank = rank, .hs_of_rank = hs};
  assert_true(size <= 4);
  assert_int_equal(patch_create(&o, &layout, &patch, &err), TSR_OK);
  assert_int_equal(registry_create(&reg, &err), TSR_OK);
  const registry_item_t items[] = {
      {.kind = REGISTRY_KIND_EXTRACTION, .name = "cpu_only", .fs = "*", .hs = "cpu", .bs = "*",
       .extract = cpu_only_extract, .size = cpu_only_size},
      {.kind = REGISTRY_KIND_INSERTION, .name = "cpu_only", .fs = "*", .hs = "cpu", .bs = "*",
       .insert = cpu_only_insert, .size = cpu_only_size},
      {.kind = REGISTRY_KIND_COPY, .name = "cpu_only", .fs = "*", .hs = "cpu", .bs = "*",
       .copy = cpu_only_copy}};
  for (size_t i = 0; i < sizeof items / sizeof items[0]; ++i)
    assert_int_equal(registry_add(reg, &items[i], &err), TSR_OK);
  /* no field allocated on purpose: the lookup fails before any data is touched */
  comm_options_t co = comm_options_one("cpu_only", 0, direction_width_one, 4);
  tsr_status st = comm_create(&co,
                              patch, reg, MPI_COMM_WORLD, &ex, &err);
  assert_int_equal(st, TSR_ERR_LOOKUP);
  assert_null(ex);
  assert_non_null(strstr(err.text, "hs=gpu"));
  assert_non_null(strstr(err.text, "candidates"));
  patch_free(&patch);
  registry_free(&reg);
}

/* Ranks whose plans disagree on the size of a message: the items of even ranks say
 * `even` payload bytes per block and direction, those of odd ranks `odd`. Each rank's
 * plan is consistent on its own (its extraction and insertion sizes agree), so
 * comm_create succeeds everywhere, and every rank sends what its own plan says: rank 0
 * then receives messages of another size than it planned from its odd neighbours. */
typedef struct parity_sizes {
  size_t even, odd;
} parity_sizes_t;

static size_t parity_size(const block_info_t *b, int dir, void *ctx) {
  const parity_sizes_t *p = ctx;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank % 2 ? p->odd : p->even;
}
static tsr_status parity_extract(const block_info_t *b, const void *data, int dir, uint8_t *out,
                                 size_t cap, size_t *written, void *ctx, tsr_error_t *err) {
  memset(out, 0, cap);
  *written = cap;
  return TSR_OK;
}
static tsr_status parity_copy(const registry_copy_task_t *tasks, size_t n, void *ctx,
                              tsr_error_t *err) {
  return TSR_OK;
}

/* One exchange over a row of 2 blocks per rank with the sizes above. */
static tsr_status run_parity_case(parity_sizes_t sizes, tsr_error_t *err) {
  const row_items_t items = {.size = parity_size, .extract = parity_extract,
                             .insert = faulty_insert, .copy = parity_copy, .ctx_data = &sizes,
                             .ctx_bytes = sizeof sizes};
  return run_row_exchange(&items, 5, err);
}

/* Rank 1 sends rank 0 shorter messages than rank 0 planned: without a check of the
 * received count the end of rank 0's buffer would be whatever the exchange before left
 * there. The error names the sender, the receiver and both counts, on every rank. */
static void test_received_size_short(void **state) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) skip(); /* no message between ranks */
  tsr_error_t err;
  assert_int_equal(run_parity_case((parity_sizes_t){.even = 16, .odd = 8}, &err), TSR_ERR_CORRUPT);
  /* rank 1 sends rank 0 m block messages: both blocks' faces with 2 ranks, one with more */
  const int m = size == 2 ? 2 : 1, got = m * (MESSAGE_HEADER_BYTES + 8),
            want = m * (MESSAGE_HEADER_BYTES + 16);
  char text[160];
  snprintf(text, sizeof text, "rank 1 sent rank 0 %d bytes; the exchange plan expects %d", got,
           want);
  ASSERT_HAS(text);
}

/* Rank 1 sends rank 0 longer messages than planned: MPI cuts them; the error says so with
 * the sender and the planned count (and the count sent, where MPI tells it: Open MPI does). */
static void test_received_size_long(void **state) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) skip();
  tsr_error_t err;
  tsr_status st_long = run_parity_case((parity_sizes_t){.even = 8, .odd = 16}, &err);
  if (st_long != TSR_ERR_CORRUPT) fail_msg("status %d: %s", (int)st_long, err.text);
  const int m = size == 2 ? 2 : 1, want = m * (MESSAGE_HEADER_BYTES + 8);
  char text[160];
  ASSERT_HAS("ghost exchange: rank 1 sent rank 0 ");
  snprintf(text, sizeof text, "; the exchange plan expects %d (the message was cut", want);
  ASSERT_HAS(text);
}

/* Phases of comm_timing summed (exchanges not included). */
static double timing_sum(const comm_timing_t *t) {
  return t->device + t->extract + t->copy + t->wait + t->insert;
}

/* comm_timing counts every exchange; its phases are non-negative and, not overlapping,
 * add up to at most the wall time around the exchanges. Data in host memory has no
 * staging, so its device time is exactly 0. */
static void test_exchange_timing(void **state) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  tsr_error_t err;
  tsr_error_clear(&err);
  registry_t *reg = NULL;
  patch_t *patch = NULL;
  comm_t *ex = NULL;
  patch_options_t o = patch_options_default();
  for (int a = 0; a < 3; ++a) {
    o.blocks[a] = a == 0 ? 2 * size : 2; /* 8 blocks per rank: local copies everywhere */
    o.cells[a] = 6 * o.blocks[a];
    o.periodic[a] = true;
  }
  patch_layout_t layout = {.nranks = size, .my_rank = rank};
  assert_int_equal(patch_create(&o, &layout, &patch, &err), TSR_OK);
  assert_int_equal(registry_create(&reg, &err), TSR_OK);
  ghost_check_options_t fo = ghost_check_options_default();
  assert_int_equal(ghost_check_register(reg, NULL, &fo, &err), TSR_OK);
  int field;
  assert_int_equal(data_allocate(MPI_COMM_WORLD, reg, patch, GHOST_CHECK_FIELD, 0, &field, &err),
                   TSR_OK);
  assert_int_equal(data_run_kernel(reg, patch, GHOST_CHECK_FILL, 0, &err), TSR_OK);
  comm_options_t co = comm_options_one(GHOST_CHECK_FIELD, field, fo.width, 5);
  assert_int_equal(comm_create(&co,
                               patch, reg, MPI_COMM_WORLD, &ex, &err),
                   TSR_OK);
  comm_timing_t t = comm_timing(ex);
  assert_int_equal(t.exchanges, 0);
  assert_true(timing_sum(&t) == 0.0); /* nothing timed before the first exchange */

  const int n = 25;
  double wall = 0;
  for (int k = 0; k < n; ++k) {
    /* half of them split into start and finish, as an overlapping caller would */
    double t0 = MPI_Wtime();
    if (k % 2) {
      assert_int_equal(comm_exchange(ex, &err), TSR_OK);
    } else {
      assert_int_equal(comm_start(ex, &err), TSR_OK);
      assert_int_equal(comm_finish(ex, &err), TSR_OK);
    }
    wall += MPI_Wtime() - t0;
  }
  t = comm_timing(ex);
  comm_stats_t cs = comm_stats(ex);
  assert_int_equal(t.exchanges, n);
  assert_true(t.device == 0.0);
  assert_true(t.extract >= 0 && t.copy >= 0 && t.wait >= 0 && t.insert >= 0);
  if (timing_sum(&t) > wall)
    fail_msg("rank %d: phases add up to %g s (device %g, extract %g, copy %g, wait %g, "
             "insert %g), more than the %g s of wall time around the exchanges",
             rank, timing_sum(&t), t.device, t.extract, t.copy, t.wait, t.insert, wall);
  /* what ran was timed: every rank copies locally and waits for the verdict; with
     neighbours on other ranks it also packs and unpacks messages */
  assert_true(cs.local_copies > 0);
  assert_true(t.copy > 0);
  assert_true(t.wait > 0);
  if (cs.messages_sent > 0) assert_true(t.extract > 0 && t.insert > 0);
  if (size > 1) assert_true(cs.messages_sent > 0);
  /* and the values arrived */
  ghost_check_report_t rep;
  assert_int_equal(ghost_check_verify(patch, field, &fo, &rep, &err), TSR_OK);
  assert_int_equal(rep.empty, 0);
  comm_free(&ex);
  patch_free(&patch);
  registry_free(&reg);
}

/* A field with staging, in host memory for the test: records the order of the calls. */
typedef struct staged_block {
  int staged_out, host_bound, waited;
} staged_block_t;

typedef struct staged_log {
  int64_t outs, waits, ins, extracts;
  int64_t out_calls, wait_calls, in_calls; /* calls of the staging functions */
  int64_t out_after_wait;      /* a stage_out that came after a stage_wait */
  int64_t wait_not_host_bound; /* a stage_wait with host_bound 0 or before stage_out */
  int64_t extract_unwaited;    /* an extraction from a block not yet waited for */
} staged_log_t;

#define STAGED_FIELD "staged.field"
#define STAGED_WAIT_S 0.002 /* each stage_wait spins this long: a transfer's stand-in */

static tsr_status staged_alloc(const block_info_t *b, void *ctx, void **out, tsr_error_t *err) {
  *out = calloc(1, sizeof(staged_block_t));
  return *out ? TSR_OK : tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "no memory");
}
static void staged_free(void *data, void *ctx) { free(data); }
static size_t staged_size(const block_info_t *b, int dir, void *ctx) { return 8; }
static tsr_status staged_out(const registry_stage_task_t *t, size_t n, void *ctx,
                             tsr_error_t *err) {
  staged_log_t *log = *(staged_log_t **)ctx;
  log->out_calls++;
  for (size_t k = 0; k < n; ++k) {
    staged_block_t *s = t[k].data;
    log->outs++;
    if (log->waits > 0) log->out_after_wait++;
    *s = (staged_block_t){.staged_out = 1, .host_bound = t[k].host_bound};
  }
  return TSR_OK;
}
static tsr_status staged_wait(const registry_stage_task_t *t, size_t n, void *ctx,
                              tsr_error_t *err) {
  staged_log_t *log = *(staged_log_t **)ctx;
  log->wait_calls++;
  for (size_t k = 0; k < n; ++k) {
    staged_block_t *s = t[k].data;
    log->waits++;
    if (!t[k].host_bound || !s->staged_out || !s->host_bound) log->wait_not_host_bound++;
    s->waited = 1;
    double until = MPI_Wtime() + STAGED_WAIT_S; /* the clock comm_timing reads */
    while (MPI_Wtime() < until) {
    }
  }
  return TSR_OK;
}
static tsr_status staged_in(const registry_stage_task_t *t, size_t n, void *ctx,
                            tsr_error_t *err) {
  staged_log_t *log = *(staged_log_t **)ctx;
  log->in_calls++;
  log->ins += (int64_t)n;
  return TSR_OK;
}
static tsr_status staged_extract(const block_info_t *b, const void *data, int dir, uint8_t *out,
                                 size_t cap, size_t *written, void *ctx, tsr_error_t *err) {
  staged_log_t *log = *(staged_log_t **)ctx;
  const staged_block_t *s = data;
  log->extracts++;
  if (!s->waited) log->extract_unwaited++;
  memset(out, 1, 8);
  *written = 8;
  return TSR_OK;
}
static tsr_status staged_insert(const block_info_t *b, void *data, int dir, const uint8_t *in,
                                size_t len, void *ctx, tsr_error_t *err) {
  return TSR_OK;
}
static tsr_status staged_copy(const registry_copy_task_t *tasks, size_t n, void *ctx,
                              tsr_error_t *err) {
  return TSR_OK;
}

/* Each staging function runs once per exchange, with all its blocks; stage_wait with
 * every block that sends to another rank (its
 * stage_out ran host-bound), after every stage_out and before any extraction; blocks
 * with local neighbours only are staged out and in but not waited for. The time spent
 * in stage_wait shows up as device time. */
static void test_exchange_stage_wait(void **state) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  tsr_error_t err;
  tsr_error_clear(&err);
  registry_t *reg = NULL;
  patch_t *patch = NULL;
  comm_t *ex = NULL;
  staged_log_t log;
  memset(&log, 0, sizeof log);
  staged_log_t *logp = &log;
  patch_options_t o = patch_options_default();
  o.blocks[0] = 3 * size; /* per rank: 3 blocks in a row, the middle one local only */
  o.cells[0] = 3 * o.blocks[0];
  o.cells[1] = o.cells[2] = 3;
  o.periodic[0] = true;
  patch_layout_t layout = {.nranks = size, .my_rank = rank};
  assert_int_equal(patch_create(&o, &layout, &patch, &err), TSR_OK);
  assert_int_equal(registry_create(&reg, &err), TSR_OK);
  void *ctx;
  assert_int_equal(registry_keep(reg, &logp, sizeof logp, &ctx, &err), TSR_OK);
  const char *f = STAGED_FIELD;
  assert_int_equal(registry_add(reg, &(registry_item_t){.kind = REGISTRY_KIND_ALLOCATOR, .name = f,
                   .fs = "*", .hs = "cpu", .bs = "*", .alloc = staged_alloc, .free = staged_free},
                   &err), TSR_OK);
  assert_int_equal(registry_add(reg, &(registry_item_t){.kind = REGISTRY_KIND_EXTRACTION,
                   .name = f, .fs = "*", .hs = "cpu", .bs = "*", .extract = staged_extract,
                   .size = staged_size, .stage_out = staged_out, .stage_wait = staged_wait,
                   .ctx = ctx}, &err), TSR_OK);
  assert_int_equal(registry_add(reg, &(registry_item_t){.kind = REGISTRY_KIND_INSERTION,
                   .name = f, .fs = "*", .hs = "cpu", .bs = "*", .insert = staged_insert,
                   .size = staged_size, .stage_in = staged_in, .ctx = ctx}, &err), TSR_OK);
  assert_int_equal(registry_add(reg, &(registry_item_t){.kind = REGISTRY_KIND_COPY, .name = f,
                   .fs = "*", .hs = "cpu", .bs = "*", .copy = staged_copy}, &err), TSR_OK);
  int id;
  assert_int_equal(data_allocate(MPI_COMM_WORLD, reg, patch, f, 0, &id, &err), TSR_OK);
  assert_int_equal(comm_create(&(comm_options_t){.fields = {{.name = f, .data_id = id, .width = {1, 1, 1}}},
                                               .nfields = 1, .tag = 6}, patch, reg,
                               MPI_COMM_WORLD, &ex, &err), TSR_OK);
  /* what the geometry fixes: blocks with any neighbour, and those with a remote one */
  int64_t linked = 0, remote = 0;
  for (int32_t i = 0; i < patch_local_count(patch); ++i) {
    int32_t b = patch_local_id(patch, i);
    int any = 0, far = 0;
    for (int d = 0; d < DIRECTION_COUNT; ++d) {
      int32_t nb = patch_neighbor(patch, b, d);
      if (nb < 0) continue;
      any = 1;
      if (patch_block(patch, nb)->rank != rank) far = 1;
    }
    linked += any;
    remote += far;
  }
  assert_int_equal(linked, 3);
  assert_int_equal(remote, size > 1 ? 2 : 0);
  const int n = 3;
  for (int k = 0; k < n; ++k) {
    memset(&log, 0, sizeof log);
    assert_int_equal(comm_exchange(ex, &err), TSR_OK);
    assert_int_equal(log.outs, linked);
    assert_int_equal(log.waits, remote);
    assert_int_equal(log.ins, linked);
    /* one call per item and exchange, with every block of it */
    assert_int_equal(log.out_calls, 1);
    assert_int_equal(log.in_calls, 1);
    assert_int_equal(log.wait_calls, remote > 0 ? 1 : 0);
    assert_int_equal(log.out_after_wait, 0);
    assert_int_equal(log.wait_not_host_bound, 0);
    assert_int_equal(log.extract_unwaited, 0);
    if (size > 1) assert_true(log.extracts > 0);
  }
  comm_timing_t t = comm_timing(ex);
  assert_int_equal(t.exchanges, n);
  if (t.device < STAGED_WAIT_S * (double)(n * remote))
    fail_msg("rank %d: device time %g s, but stage_wait alone took %g s", rank, t.device,
             STAGED_WAIT_S * (double)(n * remote));
  comm_free(&ex);
  patch_free(&patch);
  registry_free(&reg);
}

int main(int argc, char **argv) {
  mpi_test_init(&argc, &argv);
  if (argc == 3 && strcmp(argv[1], "--hs") == 0 &&
      (strcmp(argv[2], "gpu") == 0 || strcmp(argv[2], "mixed") == 0)) {
    test_hs_mode = strcmp(argv[2], "gpu") == 0 ? 1 : 2;
    if (!mpi_test_have_opencl()) {
      MPI_Finalize();
      return MPI_TEST_SKIPPED;
    }
    tsr_error_t err;
    opencl_select_t sel = opencl_select_default();
    if (opencl_context_create(&sel, &test_cl, &err) != TSR_OK ||
        gpu_field_programs_create(test_cl, &test_gpu, &err) != TSR_OK) {
      fprintf(stderr, "%s\n", err.text);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const struct CMUnitTest gpu_tests[] = {
        cmocka_unit_test(test_exchange_matrix),
        cmocka_unit_test(test_exchange_one_cell_blocks),
        cmocka_unit_test(test_exchange_two_dimensional),
        cmocka_unit_test(test_exchange_fields_in_one_round),
    };
    int failed = cmocka_run_group_tests_name("ghost_exchange_gpu", gpu_tests, NULL, NULL);
    gpu_field_programs_free(&test_gpu);
    opencl_context_free(&test_cl);
    return mpi_test_finish(failed);
  }
  if (argc != 1) {
    fprintf(stderr, "usage: %s [--hs gpu | --hs mixed]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exchange_matrix),
      cmocka_unit_test(test_exchange_one_cell_blocks),
      cmocka_unit_test(test_exchange_two_dimensional),
      cmocka_unit_test(test_exchange_thin_blocks_refused),
      cmocka_unit_test(test_exchange_fields_in_one_round),
      cmocka_unit_test(test_exchange_failure_is_shared),
      cmocka_unit_test(test_create_failure_is_shared),
      cmocka_unit_test(test_received_size_short),
      cmocka_unit_test(test_received_size_long),
      cmocka_unit_test(test_exchange_timing),
      cmocka_unit_test(test_exchange_stage_wait),
  };
  return mpi_test_finish(cmocka_run_group_tests_name("ghost_exchange", tests, NULL, NULL));
}
