#define _DEFAULT_SOURCE /* MADV_HUGEPAGE, MAP_ANONYMOUS */
#include "vtk_image.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bulk_file.h"
#include "output.h"
#include "verdict.h"

/* The pieces a range is written in (one in transfer while the next is copied). */
enum { VTK_IMAGE_PIECE = 8 << 20 };

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

/* The state of one image's writing on this process. */
typedef struct vtk_writer {
  const char *tmp;
  int rank, nranks;
  vtk_row_t *rows;
  size_t nrows;
  size_t *row_base; /* local block b's rows are row_pos[row_base[b] ...], y fastest */
  uint64_t *row_pos; /* where each row of a block starts in packed (in cells) */
  size_t cells;      /* local cells */
  uint8_t *scratch, *packed; /* scratch: one block's values of an array; packed: the
                                local blocks' rows of an array in file order */
  int *len;        /* merged runs of rows: bytes, */
  MPI_Aint *where; /* and place in the file */
  char *head;      /* the file's XML up to its appended data (vtk_head) */
  size_t head_len;
  uint64_t total;  /* the file's bytes */
  uint64_t *bound; /* [nranks + 1]: process r writes the file's bytes [bound[r], bound[r+1]) */
  uint8_t *range;  /* those bytes of this process, assembled */
  int *scount, *sdispl, *rcount, *rdispl; /* [nranks] each: the exchange of one array */
  MPI_Datatype *stype, *rtype;
  uint64_t *smeta, *rmeta; /* (offset, bytes) of each piece sent and received */
  size_t smeta_cap, rmeta_cap;
} vtk_writer_t;

/* Copies bytes [at, at + n) of the file, given in p, into this process's range (the
 * part that falls into it). */
static void vtk_put(vtk_writer_t *w, uint64_t at, const void *p, uint64_t n) {
  const uint64_t lo = w->bound[w->rank], hi = w->bound[w->rank + 1];
  const uint64_t a = at > lo ? at : lo, b = at + n < hi ? at + n : hi;
  if (a < b) memcpy(w->range + (a - lo), (const uint8_t *)p + (a - at), (size_t)(b - a));
}

/* The file's frame (head, each array's size before its values, tail) into this process's
 * range; returns where the first array's size starts. */
static uint64_t vtk_image_frame(vtk_writer_t *w, const int64_t cells[3],
                                const vtk_array_t *arrays, int narrays) {
  const uint64_t n = (uint64_t)cells[0] * (uint64_t)cells[1] * (uint64_t)cells[2];
  vtk_put(w, 0, w->head, w->head_len);
  uint64_t at = (uint64_t)w->head_len;
  const uint64_t data = at;
  for (int a = 0; a < narrays; ++a) {
    const uint64_t bytes = n * (uint64_t)arrays[a].components * vtk_type_size(arrays[a].type);
    uint8_t size[8];
    for (int k = 0; k < 8; ++k) size[k] = (uint8_t)(bytes >> (8 * k));
    vtk_put(w, at, size, 8);
    at += 8 + bytes;
  }
  vtk_put(w, at, vtk_tail, strlen(vtk_tail));
  return data;
}

/* This process's rows of one array (values of vsize bytes; the array starts at byte
 * `start` of the file) as runs, in packed's order, merged where they touch in the file (a
 * process's blocks side by side in x: one run); their number. */
static size_t vtk_runs(vtk_writer_t *w, const vtk_piece_t *local, size_t vsize, uint64_t start) {
  size_t nruns = 0;
  uint64_t end = UINT64_MAX;
  for (size_t r = 0; r < w->nrows; ++r) {
    const vtk_row_t *row = &w->rows[r];
    const size_t bytes = (size_t)local[row->local].size[0] * vsize;
    const uint64_t at = start + row->cell * vsize;
    if (at == end && (size_t)w->len[nruns - 1] + bytes <= (size_t)INT32_MAX) {
      w->len[nruns - 1] += (int)bytes;
    } else {
      w->len[nruns] = (int)bytes;
      w->where[nruns] = (MPI_Aint)at;
      ++nruns;
    }
    end = at + bytes;
  }
  return nruns;
}

/* The pieces of the runs[nruns] for each process (a run split where the processes'
 * ranges meet): (offset, bytes) pairs in w->smeta, process after process; the bytes and
 * pairs per process in scount and npairs. */
static tsr_status vtk_split(vtk_writer_t *w, size_t nruns, int *npairs, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t k = 0;
  int d = 0;
  for (int r = 0; r < w->nranks; ++r) w->scount[r] = npairs[r] = 0;
  for (size_t i = 0; i < nruns; ++i) {
    uint64_t at = (uint64_t)w->where[i], left = (uint64_t)w->len[i];
    while (left > 0) {
      while (at >= w->bound[d + 1]) ++d; /* the runs are in file order */
      const uint64_t n = left < w->bound[d + 1] - at ? left : w->bound[d + 1] - at;
      if (k + 2 > w->smeta_cap) {
        size_t cap = 2 * (k + 2);
        uint64_t *grown = realloc(w->smeta, cap * sizeof *grown);
        TSR_CHECK(grown, TSR_ERR_NOMEM, "out of memory for VTK output");
        w->smeta = grown;
        w->smeta_cap = cap;
      }
      w->smeta[k++] = at;
      w->smeta[k++] = n;
      w->scount[d] += (int)n;
      npairs[d] += 2;
      at += n;
      left -= n;
    }
  }
cleanup:
  return st;
}

/* Collective: every process's pieces of one array to the processes whose ranges they
 * fall into, straight into place in their ranges (MPI_Alltoallw: each source's pieces
 * received through a datatype of their places). */
static tsr_status vtk_exchange(MPI_Comm comm, vtk_writer_t *w, size_t nruns, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const int p = w->nranks;
  int *npairs = calloc((size_t)p * 4, sizeof *npairs), *rpairs = npairs + p;
  int *pdispl = npairs + 2 * p, *rpdispl = npairs + 3 * p;
  TSR_CHECK(npairs, TSR_ERR_NOMEM, "out of memory for VTK output");
  TSR_TRY(vtk_split(w, nruns, npairs, err));
  TSR_MPI(MPI_Alltoall(npairs, 1, MPI_INT, rpairs, 1, MPI_INT, comm));
  size_t sent = 0, recvd = 0;
  for (int r = 0; r < p; ++r) {
    pdispl[r] = (int)sent;
    rpdispl[r] = (int)recvd;
    sent += (size_t)npairs[r];
    recvd += (size_t)rpairs[r];
  }
  if (recvd > w->rmeta_cap) {
    free(w->rmeta);
    w->rmeta = malloc(recvd * sizeof *w->rmeta);
    w->rmeta_cap = w->rmeta ? recvd : 0;
  }
  TSR_CHECK(w->rmeta || recvd == 0, TSR_ERR_NOMEM, "out of memory for VTK output");
  TSR_MPI(MPI_Alltoallv(w->smeta, npairs, pdispl, MPI_UINT64_T, w->rmeta, rpairs, rpdispl,
                        MPI_UINT64_T, comm));
  /* sent: packed's bytes in order; received: each source's pieces into place */
  size_t off = 0;
  const uint64_t lo = w->bound[w->rank];
  for (int r = 0; r < p; ++r) {
    w->sdispl[r] = (int)off;
    off += (size_t)w->scount[r];
    w->stype[r] = MPI_BYTE;
    const int n = rpairs[r] / 2;
    w->rcount[r] = n > 0 ? 1 : 0;
    w->rdispl[r] = 0;
    w->rtype[r] = MPI_BYTE;
    if (n == 0) continue;
    int *len = malloc((size_t)n * sizeof *len);
    MPI_Aint *at = malloc((size_t)n * sizeof *at);
    if (len && at) {
      for (int i = 0; i < n; ++i) {
        at[i] = (MPI_Aint)(w->rmeta[rpdispl[r] + 2 * i] - lo);
        len[i] = (int)w->rmeta[rpdispl[r] + 2 * i + 1];
      }
      MPI_Type_create_hindexed(n, len, at, MPI_BYTE, &w->rtype[r]);
      MPI_Type_commit(&w->rtype[r]);
    }
    free(len);
    free(at);
    TSR_CHECK(w->rtype[r] != MPI_BYTE, TSR_ERR_NOMEM, "out of memory for VTK output");
  }
  TSR_MPI(MPI_Alltoallw(w->packed, w->scount, w->sdispl, w->stype, w->range, w->rcount,
                        w->rdispl, w->rtype, comm));
cleanup:
  for (int r = 0; npairs && r < p; ++r)
    if (w->rtype[r] != MPI_BYTE) MPI_Type_free(&w->rtype[r]);
  free(npairs);
  return st;
}

/* Collective: array a's values of every process into place in the ranges. */
static tsr_status vtk_image_array(MPI_Comm comm, vtk_writer_t *w, const vtk_array_t *array,
                                  int a, const vtk_piece_t *local, int nlocal, uint64_t start,
                                  vtk_image_fill_fn fill, void *ctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const size_t vsize = (size_t)array->components * vtk_type_size(array->type);
  /* each block's values, its rows copied to their places in file order */
  for (int b = 0; st == TSR_OK && b < nlocal; ++b) {
    st = fill(ctx, a, b, w->scratch, err);
    const size_t row = (size_t)local[b].size[0] * vsize;
    for (size_t j = 0; st == TSR_OK && j < w->row_base[b + 1] - w->row_base[b]; ++j)
      memcpy(w->packed + w->row_pos[w->row_base[b] + j] * vsize, w->scratch + j * row, row);
  }
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  const size_t nruns = vtk_runs(w, local, vsize, start);
  st = vtk_exchange(comm, w, nruns, err);
  st = verdict_reduce(comm, st, 0, err);
cleanup:
  return st;
}

/* Buffer i of bufs, at least bytes long: kept from one output step to the next (their
 * first touch cost more than the copies through them: 0.3-0.8 s for 400 MB against 0.03
 * s on a KVM guest, huge pages or not), in huge pages where the kernel gives them; NULL
 * where there is no memory. */
static uint8_t *vtk_buffer(vtk_image_buffers_t *bufs, int i, size_t bytes) {
  if (bufs->bytes[i] >= bytes) return bufs->p[i];
  if (bufs->p[i]) munmap(bufs->p[i], bufs->bytes[i]);
  bufs->p[i] = NULL;
  bufs->bytes[i] = 0;
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  bufs->p[i] = p;
  bufs->bytes[i] = bytes;
  return p;
}

void vtk_image_buffers_free(vtk_image_buffers_t *bufs) {
  for (int i = 0; i < 3; ++i)
    if (bufs->p[i]) munmap(bufs->p[i], bufs->bytes[i]);
  *bufs = (vtk_image_buffers_t){.bytes = {0, 0, 0}};
}

/* The file's size and the processes' ranges of it: equal shares, each starting at a
 * multiple of BULK_ALIGN (direct writes), the last one ending at the file's end. */
static void vtk_ranges(vtk_writer_t *w, const int64_t cells[3], const vtk_array_t *arrays,
                       int narrays, size_t head) {
  const uint64_t n = (uint64_t)cells[0] * (uint64_t)cells[1] * (uint64_t)cells[2];
  w->total = (uint64_t)head + strlen(vtk_tail);
  for (int a = 0; a < narrays; ++a)
    w->total += 8 + n * (uint64_t)arrays[a].components * vtk_type_size(arrays[a].type);
  for (int r = 0; r < w->nranks; ++r) {
    const uint64_t share = (uint64_t)((long double)w->total * r / w->nranks);
    w->bound[r] = share / BULK_ALIGN * BULK_ALIGN;
  }
  w->bound[w->nranks] = w->total;
}

/* The rows' places in packed (in file order), by block. */
static tsr_status vtk_places(vtk_writer_t *w, const vtk_piece_t *local, int nlocal,
                             tsr_error_t *err) {
  tsr_status st = TSR_OK;
  w->row_base = malloc(((size_t)nlocal + 1) * sizeof *w->row_base);
  w->row_pos = malloc((w->nrows + 1) * sizeof *w->row_pos);
  TSR_CHECK(w->row_base && w->row_pos, TSR_ERR_NOMEM, "out of memory for VTK output");
  w->row_base[0] = 0;
  for (int b = 0; b < nlocal; ++b)
    w->row_base[b + 1] = w->row_base[b] + (size_t)local[b].size[1] * (size_t)local[b].size[2];
  uint64_t pos = 0;
  for (size_t r = 0; r < w->nrows; ++r) {
    const vtk_row_t *row = &w->rows[r];
    const size_t sx = (size_t)local[row->local].size[0];
    w->row_pos[w->row_base[row->local] + row->at / sx] = pos;
    pos += sx;
  }
cleanup:
  return st;
}

/* The buffers, the rows, the ranges. */
static tsr_status vtk_image_alloc(vtk_writer_t *w, vtk_image_buffers_t *bufs,
                                  const int64_t cells[3], const vtk_array_t *arrays,
                                  int narrays, const vtk_piece_t *local, int nlocal,
                                  double spacing, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t vmax = 1, largest = 1;
  const int64_t zero[3] = {0, 0, 0};
  for (int a = 0; a < narrays; ++a) {
    const size_t v = (size_t)arrays[a].components * vtk_type_size(arrays[a].type);
    if (v > vmax) vmax = v;
  }
  const size_t p = (size_t)w->nranks;
  w->bound = malloc((p + 1) * sizeof *w->bound);
  w->scount = malloc(4 * p * sizeof *w->scount);
  w->stype = malloc(2 * p * sizeof *w->stype);
  TSR_CHECK(w->bound && w->scount && w->stype, TSR_ERR_NOMEM, "out of memory for VTK output");
  w->sdispl = w->scount + p;
  w->rcount = w->scount + 2 * p;
  w->rdispl = w->scount + 3 * p;
  w->rtype = w->stype + p;
  for (size_t r = 0; r < p; ++r) w->rtype[r] = MPI_BYTE;
  w->cells = 0;
  for (int b = 0; b < nlocal; ++b) {
    const size_t n = (size_t)local[b].size[0] * (size_t)local[b].size[1] * (size_t)local[b].size[2];
    w->cells += n;
    if (n > largest) largest = n;
  }
  TSR_TRY(vtk_head(zero, cells, spacing, arrays, narrays, &w->head, &w->head_len, err));
  vtk_ranges(w, cells, arrays, narrays, w->head_len);
  TSR_CHECK(w->cells * vmax <= (size_t)INT32_MAX, TSR_ERR_INVALID,
            "VTK output: %zu bytes of one array on one process, more than one exchange takes "
            "(2 GiB); use more processes or output.vtk_files \"blocks\"", w->cells * vmax);
  w->rows = vtk_rows(cells, local, nlocal, &w->nrows);
  TSR_CHECK(w->rows, TSR_ERR_NOMEM, "out of memory for VTK output");
  TSR_TRY(vtk_places(w, local, nlocal, err));
  w->scratch = vtk_buffer(bufs, 0, largest * vmax);
  w->packed = vtk_buffer(bufs, 1, w->cells * vmax + 1);
  w->range = vtk_buffer(bufs, 2, (size_t)(w->bound[w->rank + 1] - w->bound[w->rank]) + 1);
  w->len = malloc((w->nrows + 1) * sizeof *w->len);
  w->where = malloc((w->nrows + 1) * sizeof *w->where);
  TSR_CHECK(w->scratch && w->packed && w->range && w->len && w->where, TSR_ERR_NOMEM,
            "out of memory for VTK output (%zu cells)", w->cells);
cleanup:
  return st;
}

static void vtk_image_free(vtk_writer_t *w) {
  free(w->head);
  free(w->rows);
  free(w->row_base);
  free(w->row_pos);
  free(w->len);
  free(w->where);
  free(w->bound);
  free(w->scount);
  free(w->stype);
  free(w->smeta);
  free(w->rmeta);
}

/* Collective: every process its range of tmp, direct where the file system allows (the
 * last one cuts the padding of its last page); rank 0 creates tmp first. */
static tsr_status vtk_image_store(MPI_Comm comm, vtk_writer_t *w, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  bulk_file_t f = {.fd = -1};
  if (w->rank == 0) {
    unlink(w->tmp); /* a leftover of a killed run */
    st = bulk_open(&f, w->tmp, true, VTK_IMAGE_PIECE, err);
  }
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  if (w->rank != 0) st = bulk_open(&f, w->tmp, true, VTK_IMAGE_PIECE, err);
  const uint64_t lo = w->bound[w->rank], hi = w->bound[w->rank + 1];
  if (st == TSR_OK && hi > lo) {
    bulk_write_begin(&f, lo);
    st = bulk_write(&f, w->range, (size_t)(hi - lo), err);
    if (st == TSR_OK) st = bulk_write_end(&f, err);
    if (st == TSR_OK) st = bulk_finish(&f, err);
  }
  if (st == TSR_OK && w->rank == w->nranks - 1 && ftruncate(f.fd, (off_t)w->total) != 0)
    st = tsr_error_set(err, TSR_ERR_IO, __FILE__, __LINE__, "cannot size %s to %llu bytes: %s",
                       w->tmp, (unsigned long long)w->total, strerror(errno));
  /* on disk before it gets its name */
  if (st == TSR_OK) st = bulk_sync(&f, err);
  st = verdict_reduce(comm, st, 0, err);
cleanup:
  bulk_close(&f);
  return st;
}

tsr_status vtk_write_image(MPI_Comm comm, vtk_image_buffers_t *bufs, const char *path,
                           const int64_t cells[3], double spacing, const vtk_array_t *arrays,
                           int narrays, const vtk_piece_t *local, int nlocal,
                           vtk_image_fill_fn fill, void *ctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  vtk_writer_t w = {.rank = 0};
  MPI_Comm_rank(comm, &w.rank);
  MPI_Comm_size(comm, &w.nranks);
  char tmp[OUTPUT_PATH_MAX + 32], folder[OUTPUT_PATH_MAX];
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  const int dir = slash ? (int)(slash - path) : 1;
  int n = snprintf(tmp, sizeof tmp, "%.*s/.%s.tmp-vtk000", dir, slash ? path : ".", base);
  snprintf(folder, sizeof folder, "%.*s", dir, slash ? path : ".");
  w.tmp = tmp;
  st = n > 0 && (size_t)n < sizeof tmp
           ? vtk_image_alloc(&w, bufs, cells, arrays, narrays, local, nlocal, spacing, err)
           : tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__, "output path too long: %.200s", path);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  uint64_t start = vtk_image_frame(&w, cells, arrays, narrays);
  const uint64_t ncells = (uint64_t)cells[0] * (uint64_t)cells[1] * (uint64_t)cells[2];
  for (int a = 0; a < narrays; ++a) {
    start += 8;
    TSR_TRY(vtk_image_array(comm, &w, &arrays[a], a, local, nlocal, start, fill, ctx, err));
    start += ncells * (uint64_t)arrays[a].components * vtk_type_size(arrays[a].type);
  }
  TSR_TRY(vtk_image_store(comm, &w, err));
  if (w.rank == 0) {
    if (rename(tmp, path) != 0)
      st = tsr_error_set(err, TSR_ERR_IO, __FILE__, __LINE__, "cannot rename %s to %s: %s", tmp,
                         path, strerror(errno));
    if (st == TSR_OK) st = output_sync_folder(folder, err);
  }
  st = verdict_reduce(comm, st, 0, err);
cleanup:
  if (st != TSR_OK && w.rank == 0) unlink(tmp); /* a name of ours */
  vtk_image_free(&w);
  return st;
}
