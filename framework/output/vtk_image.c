#define _DEFAULT_SOURCE /* MADV_HUGEPAGE, MAP_ANONYMOUS */
#include "vtk_image.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "output.h"
#include "verdict.h"

/* A row of a local block: its first cell's index in the domain (x fastest) and where it
 * starts in the block. */
typedef struct vtk_row {
  uint64_t cell;
  uint32_t local;
  uint32_t at; /* cell index in the block */
} vtk_row_t;

static int vtk_row_cmp(const void *a, const void *b) {
  const uint64_t x = ((const vtk_row_t *)a)->cell, y = ((const vtk_row_t *)b)->cell;
  return x < y ? -1 : x > y;
}

/* The rows of the local blocks, sorted by their place in the file. */
static vtk_row_t *vtk_rows(const int64_t cells[3], const vtk_piece_t *local, int nlocal,
                           size_t *nrows) {
  size_t n = 0;
  for (int b = 0; b < nlocal; ++b) n += (size_t)local[b].size[1] * (size_t)local[b].size[2];
  vtk_row_t *rows = malloc((n ? n : 1) * sizeof *rows);
  if (!rows) return NULL;
  size_t k = 0;
  for (int b = 0; b < nlocal; ++b) {
    const vtk_piece_t *p = &local[b];
    for (int z = 0; z < p->size[2]; ++z)
      for (int y = 0; y < p->size[1]; ++y)
        rows[k++] = (vtk_row_t){
            .cell = ((uint64_t)(p->lo[2] + z) * (uint64_t)cells[1] + (uint64_t)(p->lo[1] + y)) *
                        (uint64_t)cells[0] + (uint64_t)p->lo[0],
            .local = (uint32_t)b,
            .at = (uint32_t)(((size_t)z * (size_t)p->size[1] + (size_t)y) * (size_t)p->size[0])};
  }
  qsort(rows, n, sizeof *rows, vtk_row_cmp);
  *nrows = n;
  return rows;
}

/* MPI-IO's verdict on a call: its message where it failed. */
static tsr_status vtk_io(int rc, const char *what, const char *path, tsr_error_t *err) {
  if (rc == MPI_SUCCESS) return TSR_OK;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return tsr_error_set(err, TSR_ERR_IO, __FILE__, __LINE__, "cannot %s %s: %s", what, path, text);
}

/* The state of one image's writing on this process. */
typedef struct vtk_writer {
  MPI_File fh;
  const char *tmp;
  vtk_row_t *rows;
  size_t nrows;
  size_t *block_at; /* local block b's values start at byte block_at[b] * value size */
  size_t cells;     /* local cells */
  uint8_t *blocks, *packed; /* blocks: the local blocks' values of one array, block after
                               block; packed: the same rows in file order */
  size_t buffer_bytes;        /* of each */
  int *len;        /* merged runs of rows: bytes, */
  MPI_Aint *where; /* and place in the file */
  MPI_Aint *mem;   /* and place in packed */
} vtk_writer_t;

/* Rank 0: the head, each array's size before its values, the tail; *data: where the
 * first array's values start, on every rank. */
static tsr_status vtk_image_frame(MPI_Comm comm, vtk_writer_t *w, const int64_t cells[3],
                                  double spacing, const vtk_array_t *arrays, int narrays,
                                  uint64_t *data, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  char *head = NULL;
  size_t len = 0;
  const int64_t lo[3] = {0, 0, 0};
  const uint64_t n = (uint64_t)cells[0] * (uint64_t)cells[1] * (uint64_t)cells[2];
  st = vtk_head(lo, cells, spacing, arrays, narrays, &head, &len, err);
  *data = (uint64_t)len;
  if (st == TSR_OK && rank == 0) {
    uint64_t at = (uint64_t)len;
    st = vtk_io(MPI_File_write_at(w->fh, 0, head, (int)len, MPI_BYTE, MPI_STATUS_IGNORE),
                "write", w->tmp, err);
    for (int a = 0; st == TSR_OK && a < narrays; ++a) {
      const uint64_t bytes = n * (uint64_t)arrays[a].components * vtk_type_size(arrays[a].type);
      uint8_t size[8];
      for (int k = 0; k < 8; ++k) size[k] = (uint8_t)(bytes >> (8 * k));
      st = vtk_io(MPI_File_write_at(w->fh, (MPI_Offset)at, size, 8, MPI_BYTE, MPI_STATUS_IGNORE),
                  "write", w->tmp, err);
      at += 8 + bytes;
    }
    if (st == TSR_OK)
      st = vtk_io(MPI_File_write_at(w->fh, (MPI_Offset)at, vtk_tail, (int)strlen(vtk_tail),
                                    MPI_BYTE, MPI_STATUS_IGNORE),
                  "write", w->tmp, err);
  }
  free(head);
  return verdict_reduce(comm, st, 0, err);
}

/* This process's rows of one array (values of vsize bytes; the array starts at byte
 * `start` of the file) copied in file order into packed, merged into runs where they
 * touch in the file (a process's blocks side by side in x: one run); their number. */
static size_t vtk_pack(vtk_writer_t *w, const vtk_piece_t *local, size_t vsize, uint64_t start) {
  size_t nruns = 0, pos = 0;
  uint64_t end = UINT64_MAX;
  for (size_t r = 0; r < w->nrows; ++r) {
    const vtk_row_t *row = &w->rows[r];
    const size_t bytes = (size_t)local[row->local].size[0] * vsize;
    memcpy(w->packed + pos, w->blocks + (w->block_at[row->local] + row->at) * vsize, bytes);
    const uint64_t at = start + row->cell * vsize;
    if (at == end && (size_t)w->len[nruns - 1] + bytes <= (size_t)INT32_MAX) {
      w->len[nruns - 1] += (int)bytes;
    } else {
      w->len[nruns] = (int)bytes;
      w->where[nruns] = (MPI_Aint)at;
      w->mem[nruns] = (MPI_Aint)pos;
      ++nruns;
    }
    end = at + bytes;
    pos += bytes;
  }
  return nruns;
}

/* Collective: array a's values of every process into the file at `start`. */
static tsr_status vtk_image_array(MPI_Comm comm, vtk_writer_t *w, const vtk_array_t *array,
                                  int a, const vtk_piece_t *local, int nlocal, uint64_t start,
                                  vtk_image_fill_fn fill, void *ctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const size_t vsize = (size_t)array->components * vtk_type_size(array->type);
  for (int b = 0; st == TSR_OK && b < nlocal; ++b)
    st = fill(ctx, a, b, w->blocks + w->block_at[b] * vsize, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  const size_t nruns = vtk_pack(w, local, vsize, start);
  MPI_Datatype file = MPI_BYTE, mem = MPI_BYTE;
  int count = 0;
  if (nruns > 0) {
    TSR_CHECK(nruns <= (size_t)INT32_MAX, TSR_ERR_INVALID, "%zu rows of VTK output on one process",
              nruns);
    MPI_Type_create_hindexed((int)nruns, w->len, w->where, MPI_BYTE, &file);
    MPI_Type_create_hindexed((int)nruns, w->len, w->mem, MPI_BYTE, &mem);
    MPI_Type_commit(&file);
    MPI_Type_commit(&mem);
    count = 1;
  }
  st = vtk_io(MPI_File_set_view(w->fh, 0, MPI_BYTE, file, "native", MPI_INFO_NULL),
              "set the view of", w->tmp, err);
  /* every process takes part in the write, also after a failed view */
  tsr_status wst = vtk_io(MPI_File_write_at_all(w->fh, 0, w->packed, st == TSR_OK ? count : 0,
                                                mem, MPI_STATUS_IGNORE),
                          "write", w->tmp, err);
  if (st == TSR_OK) st = wst;
  if (nruns > 0) {
    MPI_Type_free(&file);
    MPI_Type_free(&mem);
  }
  st = verdict_reduce(comm, st, 0, err);
cleanup:
  return st;
}

/* A buffer of bytes, in huge pages where the kernel gives them: the buffers are written
 * once per output step, and first touches of 4 KiB pages cost more than the copies
 * (1.3 GB/s on a KVM guest); NULL where there is no memory. */
static uint8_t *vtk_buffer(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

/* The buffers of the largest array; the rows. */
static tsr_status vtk_image_alloc(vtk_writer_t *w, const int64_t cells[3],
                                  const vtk_array_t *arrays, int narrays,
                                  const vtk_piece_t *local, int nlocal, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t vmax = 1;
  for (int a = 0; a < narrays; ++a) {
    const size_t v = (size_t)arrays[a].components * vtk_type_size(arrays[a].type);
    if (v > vmax) vmax = v;
  }
  w->block_at = malloc(((size_t)nlocal + 1) * sizeof *w->block_at);
  TSR_CHECK(w->block_at, TSR_ERR_NOMEM, "out of memory for VTK output");
  w->cells = 0;
  for (int b = 0; b < nlocal; ++b) {
    w->block_at[b] = w->cells;
    w->cells += (size_t)local[b].size[0] * (size_t)local[b].size[1] * (size_t)local[b].size[2];
  }
  w->rows = vtk_rows(cells, local, nlocal, &w->nrows);
  w->buffer_bytes = w->cells * vmax + 1;
  w->blocks = vtk_buffer(w->buffer_bytes);
  w->packed = vtk_buffer(w->buffer_bytes);
  w->len = malloc((w->nrows + 1) * sizeof *w->len);
  w->where = malloc((w->nrows + 1) * sizeof *w->where);
  w->mem = malloc((w->nrows + 1) * sizeof *w->mem);
  TSR_CHECK(w->rows && w->blocks && w->packed && w->len && w->where && w->mem, TSR_ERR_NOMEM,
            "out of memory for VTK output (%zu cells)", w->cells);
cleanup:
  return st;
}

static void vtk_image_free(vtk_writer_t *w) {
  free(w->rows);
  free(w->block_at);
  if (w->blocks) munmap(w->blocks, w->buffer_bytes);
  if (w->packed) munmap(w->packed, w->buffer_bytes);
  free(w->len);
  free(w->where);
  free(w->mem);
}

tsr_status vtk_write_image(MPI_Comm comm, const char *path, const int64_t cells[3], double spacing,
                           const vtk_array_t *arrays, int narrays, const vtk_piece_t *local,
                           int nlocal, vtk_image_fill_fn fill, void *ctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  vtk_writer_t w = {.fh = MPI_FILE_NULL};
  char tmp[OUTPUT_PATH_MAX + 32], folder[OUTPUT_PATH_MAX];
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  const int dir = slash ? (int)(slash - path) : 1;
  int n = snprintf(tmp, sizeof tmp, "%.*s/.%s.tmp-mpiio0", dir, slash ? path : ".", base);
  snprintf(folder, sizeof folder, "%.*s", dir, slash ? path : ".");
  w.tmp = tmp;
  st = n > 0 && (size_t)n < sizeof tmp
           ? vtk_image_alloc(&w, cells, arrays, narrays, local, nlocal, err)
           : tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__, "output path too long: %.200s", path);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  /* a leftover of a killed run under the temporary name goes first */
  if (rank == 0) unlink(tmp);
  MPI_Barrier(comm);
  st = vtk_io(MPI_File_open(comm, tmp, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &w.fh),
              "create", tmp, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  uint64_t start = 0;
  TSR_TRY(vtk_image_frame(comm, &w, cells, spacing, arrays, narrays, &start, err));
  const uint64_t ncells = (uint64_t)cells[0] * (uint64_t)cells[1] * (uint64_t)cells[2];
  for (int a = 0; a < narrays; ++a) {
    start += 8;
    TSR_TRY(vtk_image_array(comm, &w, &arrays[a], a, local, nlocal, start, fill, ctx, err));
    start += ncells * (uint64_t)arrays[a].components * vtk_type_size(arrays[a].type);
  }
  /* on disk before it gets its name */
  st = vtk_io(MPI_File_sync(w.fh), "sync", tmp, err);
  tsr_status cst = vtk_io(MPI_File_close(&w.fh), "close", tmp, err);
  if (st == TSR_OK) st = cst;
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  if (rank == 0) {
    if (rename(tmp, path) != 0)
      st = tsr_error_set(err, TSR_ERR_IO, __FILE__, __LINE__, "cannot rename %s to %s: %s", tmp,
                         path, strerror(errno));
    if (st == TSR_OK) st = output_sync_folder(folder, err);
  }
  st = verdict_reduce(comm, st, 0, err);
cleanup:
  if (w.fh != MPI_FILE_NULL) MPI_File_close(&w.fh);
  if (st != TSR_OK && rank == 0) unlink(tmp); /* a name of ours */
  vtk_image_free(&w);
  return st;
}
