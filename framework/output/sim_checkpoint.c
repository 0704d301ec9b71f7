/* Checkpoints of a simulation (sim.h): every declared field of every block, written by
 * the ranks holding the blocks into one file (each block at its place, on whole pages,
 * direct: bulk_file.h), read back by BlockID by whichever rank holds the block in the
 * restarted run; the format is checkpoint.h's. */
#define _POSIX_C_SOURCE 200809L
#include "sim_checkpoint.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bulk_file.h"
#include "checkpoint.h"
#include "config.h"
#include "field.h"
#include "sim_output.h"
#include "verdict.h"

/* Header and extras are read with pread in calls of at most this many bytes. */
#define SIM_CKPT_CHUNK ((size_t)1 << 30)
/* Block data go through two buffers of about this many bytes each (bulk_file.h), one
 * being packed or unpacked while the other is in transfer; reading, a piece that stays in
 * the cache between the transfer and the CRC and unpacking that use it was fastest: a
 * 256^3 DP checkpoint read in 1.1-1.2 s in 2 MB pieces, 1.5-1.9 s in 4-8 MB, 2.2-2.6 s in
 * 32 MB and 3.3-4.1 s in 128 MB; writing, 8 MB to 32 MB were alike (1.1-1.3 s). */
#define SIM_CKPT_WRITE_PIECE ((size_t)8 << 20)
#define SIM_CKPT_READ_PIECE ((size_t)2 << 20)

/* Rows [r0, r0 + n) of g packed into p (load NULL) or unpacked from p into load (== g),
 * and crc continued over their bytes: the threads take a share of the rows each, pack
 * and sum each group of rows while it is in cache, and their shares' CRCs are combined in
 * order. */
static uint32_t sim_ckpt_rows(const grid_field_t *g, grid_field_t *load, int64_t r0, int64_t n,
                              uint8_t *p, uint32_t crc) {
  enum { SHARES = 64 };
  const size_t row = field_row_bytes(g);
  const int64_t group = row < ((size_t)64 << 10) ? (int64_t)(((size_t)64 << 10) / row) : 1;
  int shares = 1;
#ifdef _OPENMP
  shares = omp_get_max_threads();
#endif
  if (shares > SHARES) shares = SHARES;
  if (shares > n) shares = (int)n;
  if ((size_t)n * row < ((size_t)1 << 20)) shares = 1;
  uint32_t part[SHARES];
#pragma omp parallel for schedule(static, 1) num_threads(shares) if (shares > 1)
  for (int s = 0; s < shares; ++s) {
    const int64_t a = n * s / shares, b = n * (s + 1) / shares;
    uint32_t c = 0;
    for (int64_t r = a; r < b; r += group) {
      const int64_t k = b - r < group ? b - r : group;
      uint8_t *at = p + (size_t)r * row;
      if (load) {
        c = checkpoint_crc32(c, at, (size_t)k * row);
        field_rows_from_bytes(load, r0 + r, k, at);
      } else {
        field_rows_to_bytes(g, r0 + r, k, at);
        c = checkpoint_crc32(c, at, (size_t)k * row);
      }
    }
    part[s] = c;
  }
  for (int s = 0; s < shares; ++s)
    crc = checkpoint_crc32_combine(crc, part[s], (uint64_t)(n * (s + 1) / shares - n * s / shares) * row);
  return crc;
}

/* The fields a checkpoint holds: every declared field with storage, in module order;
 * ids[i] its data id. */
static uint32_t sim_ckpt_fields(const sim_t *sim, checkpoint_field_t *fields, int *ids) {
  uint32_t n = 0;
  int nm = 0;
  const module_decl_t *decls = sim_decls(sim, &nm);
  for (int m = 0; m < nm; ++m)
    for (int f = 0; f < decls[m].nfields; ++f) {
      const module_field_t *d = &decls[m].fields[f];
      const int id = sim_field_id(sim, d->name);
      if (d->components <= 0 || d->value_bytes <= 0 || id < 0 || d->scratch) continue;
      if (n == CHECKPOINT_MAX_FIELDS) return n + 1; /* too many: the caller refuses */
      memset(&fields[n], 0, sizeof fields[n]);
      snprintf(fields[n].name, sizeof fields[n].name, "%s", d->name);
      fields[n].components = (uint32_t)d->components;
      fields[n].value_bytes = (uint32_t)d->value_bytes;
      ids[n++] = id;
    }
  return n;
}

/* Bytes of a local block's fields. */
static uint64_t sim_ckpt_block_bytes(sim_t *sim, int32_t id, const int *ids, uint32_t nf) {
  uint64_t bytes = 0;
  block_data_t *data = patch_block_data(sim_patch(sim), id);
  for (uint32_t i = 0; i < nf; ++i) bytes += field_interior_bytes(data, ids[i]);
  return bytes;
}

/* "lbm,thermal: trt,dp,soa,two_grid" */
static void sim_ckpt_modules(const sim_t *sim, char *out, size_t cap) {
  size_t used = 0;
  int nm = 0;
  const module_t *modules = sim_modules(sim, &nm);
  out[0] = '\0';
  for (int m = 0; m < nm && used < cap; ++m) {
    int k = snprintf(out + used, cap - used, "%s%s", m ? "," : "", modules[m].def->name);
    if (k < 0) break;
    used += (size_t)k;
  }
  if (used + 2 < cap) snprintf(out + used, cap - used, ": %.*s", (int)(cap - used - 3), sim_fs_text(sim));
}

/* Rank 0's extras: physics.json (the settings a restart must keep), then the writers'
 * run state (sim_output_state; none without writers); -1 when out of memory. */
static int sim_ckpt_extras(sim_output_t *w, const char *physics, sim_output_extra_t *x) {
  x[0] = (sim_output_extra_t){"physics.json", (const uint8_t *)physics, strlen(physics)};
  if (!w) return 1;
  const int n = sim_output_state(w, x + 1, CHECKPOINT_MAX_EXTRAS - 1);
  return n < 0 ? -1 : 1 + n;
}

/* Header fields (ids: data ids), step, hash, grid and modules; the file's name, path and tmp. */
static tsr_status sim_ckpt_describe(sim_t *sim, output_folder_t *out, int64_t step,
                                    const char *physics, char *name, size_t cap,
                                    checkpoint_header_t *h, int *ids, char *final_path,
                                    size_t final_cap, char *tmp, size_t tmp_cap,
                                    tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const patch_options_t *d = patch_options(sim_patch(sim));
  h->nfields = sim_ckpt_fields(sim, h->fields, ids);
  TSR_CHECK(h->nfields <= CHECKPOINT_MAX_FIELDS, TSR_ERR_INVALID,
            "a checkpoint holds at most %d fields", CHECKPOINT_MAX_FIELDS);
  snprintf(name, cap, "checkpoint_%06lld.tsrc", (long long)step);
  TSR_TRY(output_folder_file(out, final_path, final_cap, err, "%s", name));
  snprintf(tmp, tmp_cap, "%s/.%s.tmp-ckpt00", output_folder_path(out), name);
  h->step = (uint64_t)step;
  h->config_hash = config_text_hash(physics);
  for (int a = 0; a < 3; ++a) {
    h->cells[a] = d->cells[a];
    h->blocks[a] = d->blocks[a];
    h->periodic[a] = d->periodic[a];
  }
  sim_ckpt_modules(sim, h->modules, sizeof h->modules);
cleanup:
  return st;
}

/* Collective: rank 0's extras' sizes broadcast, then each block's and extra's place; *end. */
static tsr_status sim_ckpt_layout(MPI_Comm comm, int rank, int nextras,
                                  const sim_output_extra_t *extra, const uint64_t *bytes,
                                  int32_t nb, checkpoint_header_t *h, uint64_t *end,
                                  tsr_error_t *err) {
  tsr_status st = TSR_OK;
  uint64_t xs[1 + CHECKPOINT_MAX_EXTRAS] = {0};
  if (rank == 0) {
    h->nextras = (uint32_t)nextras;
    xs[0] = h->nextras;
    for (uint32_t i = 0; i < h->nextras; ++i) xs[1 + i] = extra[i].len;
  }
  TSR_MPI(MPI_Bcast(xs, 1 + CHECKPOINT_MAX_EXTRAS, MPI_UINT64_T, 0, comm));
  h->nextras = (uint32_t)xs[0];
  h->nblocks = (uint32_t)nb;
  h->header_bytes = checkpoint_header_size(h->nfields, h->nblocks, h->nextras);
  h->data_offset = checkpoint_data_offset(h->header_bytes);
  uint64_t at = h->data_offset;
  for (int32_t id = 0; id < nb; ++id) { /* each block on whole pages of its own */
    h->block[id] = (checkpoint_block_t){.id = id, .offset = at, .bytes = bytes[id]};
    at = checkpoint_aligned(at + bytes[id]);
  }
  for (uint32_t i = 0; i < h->nextras; ++i) {
    if (rank == 0) snprintf(h->extras[i].name, sizeof h->extras[i].name, "%s", extra[i].name);
    h->extras[i].offset = at;
    h->extras[i].bytes = xs[1 + i];
    at += xs[1 + i];
  }
  *end = at;
cleanup:
  return st;
}

/* Collective: rank 0 creates tmp at end bytes (cutting a leftover), then the others open it. */
static tsr_status sim_ckpt_create(MPI_Comm comm, int rank, const char *tmp, uint64_t end,
                                  bulk_file_t *file, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  if (rank == 0) {
    st = bulk_open(file, tmp, true, SIM_CKPT_WRITE_PIECE, err);
    if (st == TSR_OK && ftruncate(file->fd, (off_t)end) != 0)
      st = tsr_error_set(err, TSR_ERR_IO, __FILE__, __LINE__,
                         "cannot size %s to %llu bytes: %s", tmp, (unsigned long long)end,
                         strerror(errno));
  }
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  if (rank != 0) st = bulk_open(file, tmp, true, SIM_CKPT_WRITE_PIECE, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
cleanup:
  return st;
}

/* One local block's fields packed in whole rows, summed into *crc and written. */
static tsr_status sim_ckpt_write_block(sim_t *sim, bulk_file_t *file, int32_t id,
                                       const checkpoint_header_t *h, const int *ids,
                                       uint32_t *crc, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  block_data_t *data = patch_block_data(sim_patch(sim), id);
  bulk_write_begin(file, h->block[id].offset);
  for (uint32_t f = 0; f < h->nfields && st == TSR_OK; ++f) {
    const grid_field_t *g = NULL;
    st = field_sync(data, ids[f], &g, err); /* GPU blocks: read back once */
    if (st != TSR_OK || !g) continue;
    const size_t row = field_row_bytes(g);
    for (int64_t r0 = 0, n = 0; r0 < field_rows(g) && st == TSR_OK; r0 += n) {
      uint8_t *p = NULL;
      size_t room = 0;
      st = bulk_write_room(file, row, &p, &room, err);
      if (st != TSR_OK) break;
      n = (int64_t)(room / row) < field_rows(g) - r0 ? (int64_t)(room / row) : field_rows(g) - r0;
      *crc = sim_ckpt_rows(g, NULL, r0, n, p, *crc);
      bulk_write_advance(file, (size_t)n * row);
    }
  }
  if (st == TSR_OK) st = bulk_write_end(file, err);
  return st;
}

/* Rank 0: the extras, the file cut to end bytes, then the header that describes it all. */
static tsr_status sim_ckpt_write_head(bulk_file_t *file, checkpoint_header_t *h,
                                      const sim_output_extra_t *extra, uint64_t end,
                                      const char *tmp, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  bulk_write_begin(file, h->nextras ? h->extras[0].offset : end);
  for (uint32_t i = 0; i < h->nextras && st == TSR_OK; ++i) {
    h->extras[i].crc = checkpoint_crc32(0, extra[i].bytes, (size_t)extra[i].len);
    st = bulk_write(file, extra[i].bytes, (size_t)extra[i].len, err);
  }
  if (st == TSR_OK) st = bulk_write_end(file, err);
  if (st == TSR_OK) st = bulk_finish(file, err);
  if (st == TSR_OK && ftruncate(file->fd, (off_t)end) != 0) /* the last page's padding */
    st = tsr_error_set(err, TSR_ERR_IO, __FILE__, __LINE__, "cannot size %s: %s", tmp,
                       strerror(errno));
  uint8_t *head = calloc(1, (size_t)h->data_offset);
  if (st == TSR_OK && !head)
    st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  if (st == TSR_OK) {
    checkpoint_header_encode(h, head);
    bulk_write_begin(file, 0);
    st = bulk_write(file, head, (size_t)h->data_offset, err);
    if (st == TSR_OK) st = bulk_write_end(file, err);
  }
  free(head);
  return st;
}

/* Collective: rank 0 renames tmp to final_path and syncs the folder; one verdict. */
static tsr_status sim_ckpt_publish(MPI_Comm comm, int rank, const char *tmp,
                                   const char *final_path, const char *folder,
                                   tsr_error_t *err) {
  tsr_status st = TSR_OK;
  if (rank == 0) {
    if (rename(tmp, final_path) != 0)
      st = tsr_error_set(err, TSR_ERR_IO, __FILE__, __LINE__, "cannot rename %s to %s: %s", tmp,
                         final_path, strerror(errno));
    if (st == TSR_OK) st = output_sync_folder(folder, err);
  }
  return verdict_reduce(comm, st, 0, err);
}

tsr_status sim_write_checkpoint(sim_t *sim, sim_output_t *w, output_folder_t *out, int64_t step,
                                const char *physics, char *name, size_t cap, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  MPI_Comm comm = sim_comm(sim);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const int32_t nb = patch_block_count(sim_patch(sim));
  checkpoint_header_t h = {.version = CHECKPOINT_VERSION};
  int ids[CHECKPOINT_MAX_FIELDS + 1];
  uint64_t *sizes = NULL, *crcs = NULL, *all = NULL, end = 0;
  sim_output_extra_t extra[CHECKPOINT_MAX_EXTRAS];
  bulk_file_t file = {.fd = -1};
  char final_path[OUTPUT_PATH_MAX], tmp[OUTPUT_PATH_MAX + 32] = "";
  bool written = false;

  TSR_TRY(sim_ckpt_describe(sim, out, step, physics, name, cap, &h, ids, final_path,
                            sizeof final_path, tmp, sizeof tmp, err));
  /* every block's bytes, from the rank holding it */
  sizes = calloc((size_t)nb, sizeof *sizes);
  crcs = calloc((size_t)nb, sizeof *crcs);
  all = calloc((size_t)nb, sizeof *all);
  h.block = calloc((size_t)nb, sizeof *h.block);
  /* rank 0's extras: their count and sizes for everybody's offsets */
  int nextras = rank == 0 ? sim_ckpt_extras(w, physics, extra) : 0;
  if (!sizes || !crcs || !all || !h.block || nextras < 0)
    st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory for a checkpoint");
  for (int32_t i = 0; st == TSR_OK && i < patch_local_count(sim_patch(sim)); ++i) {
    int32_t id = patch_local_id(sim_patch(sim), i);
    sizes[id] = sim_ckpt_block_bytes(sim, id, ids, h.nfields);
  }
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_MPI(MPI_Allreduce(sizes, all, nb, MPI_UINT64_T, MPI_SUM, comm));
  TSR_TRY(sim_ckpt_layout(comm, rank, nextras, extra, all, nb, &h, &end, err));
  TSR_TRY(sim_ckpt_create(comm, rank, tmp, end, &file, err));
  /* each rank its blocks */
  for (int32_t i = 0; st == TSR_OK && i < patch_local_count(sim_patch(sim)); ++i) {
    int32_t id = patch_local_id(sim_patch(sim), i);
    uint32_t crc = 0;
    st = sim_ckpt_write_block(sim, &file, id, &h, ids, &crc, err);
    crcs[id] = crc;
  }
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_MPI(MPI_Allreduce(crcs, all, nb, MPI_UINT64_T, MPI_SUM, comm));
  for (int32_t id = 0; id < nb; ++id) h.block[id].crc = (uint32_t)all[id];
  if (rank == 0) st = sim_ckpt_write_head(&file, &h, extra, end, tmp, err);
  /* on disk before it gets its name */
  if (st == TSR_OK) st = bulk_sync(&file, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_TRY(sim_ckpt_publish(comm, rank, tmp, final_path, output_folder_path(out), err));
  written = true;
cleanup:
  bulk_close(&file);
  if (!written && rank == 0 && tmp[0]) unlink(tmp); /* tmp: a name of ours, set */
  checkpoint_header_free(&h);
  free(sizes);
  free(crcs);
  free(all);
  return st;
}

/* pread of len bytes at offset, whole. */
static tsr_status sim_ckpt_pread(int fd, const char *path, uint64_t offset, uint8_t *p,
                                 uint64_t len, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (uint64_t done = 0; done < len;) {
    size_t n = len - done < SIM_CKPT_CHUNK ? (size_t)(len - done) : SIM_CKPT_CHUNK;
    ssize_t got = pread(fd, p + done, n, (off_t)(offset + done));
    TSR_CHECK(got > 0, TSR_ERR_IO, "%s: cannot read %zu bytes at %llu: %s", path, n,
              (unsigned long long)(offset + done), got < 0 ? strerror(errno) : "end of file");
    done += (uint64_t)got;
  }
cleanup:
  return st;
}

/* The checkpoint's header, read by rank 0 and decoded by every rank. */
static tsr_status sim_ckpt_header(MPI_Comm comm, const char *path, checkpoint_header_t *h,
                                  tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank = 0, fd = -1;
  MPI_Comm_rank(comm, &rank);
  uint8_t first[32];
  uint64_t meta[2] = {0, 0}; /* file bytes, header bytes */
  uint8_t *head = NULL;
  if (rank == 0) {
    struct stat sb;
    fd = open(path, O_RDONLY);
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
      st = tsr_error_set(err, TSR_ERR_IO, __FILE__, __LINE__, "%s: cannot read: %s", path,
                         fd < 0 ? strerror(errno) : "not a file");
    if (st == TSR_OK) {
      meta[0] = (uint64_t)sb.st_size;
      if (meta[0] < sizeof first)
        st = tsr_error_set(err, TSR_ERR_CORRUPT, __FILE__, __LINE__,
                           "%s: %llu bytes: truncated, or not a tessera checkpoint", path,
                           (unsigned long long)meta[0]);
    }
    if (st == TSR_OK) st = sim_ckpt_pread(fd, path, 0, first, sizeof first, err);
    if (st == TSR_OK) st = checkpoint_header_length(first, sizeof first, path, &meta[1], err);
    if (st == TSR_OK && meta[1] > meta[0])
      st = tsr_error_set(err, TSR_ERR_CORRUPT, __FILE__, __LINE__,
                         "%s: truncated: its header needs %llu bytes, the file has %llu", path,
                         (unsigned long long)meta[1], (unsigned long long)meta[0]);
  }
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_MPI(MPI_Bcast(meta, 2, MPI_UINT64_T, 0, comm));
  head = malloc((size_t)meta[1]);
  st = head ? TSR_OK : tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  if (st == TSR_OK && rank == 0) st = sim_ckpt_pread(fd, path, 0, head, meta[1], err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_MPI(MPI_Bcast(head, (int)meta[1], MPI_BYTE, 0, comm));
  st = checkpoint_header_decode(head, (size_t)meta[1], meta[0], path, h, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
cleanup:
  if (fd >= 0) close(fd);
  free(head);
  return st;
}

/* The checkpoint fits this simulation: same settings, block grid and fields. */

/* ", " and the modules' keys a restart may change (module_def_t.restart_keys), into
 * out[cap] ("" where none). */
static void sim_restart_keys(const sim_t *sim, char *out, size_t cap) {
  int n = 0;
  const module_t *m = sim_modules(sim, &n);
  size_t used = 0;
  for (int i = 0; i < n && used < cap; ++i)
    for (const char *const *k = m[i].def->restart_keys; k && *k && used < cap; ++k)
      used += (size_t)snprintf(out + used, cap - used, ", %s", *k);
}
static tsr_status sim_ckpt_match(const sim_t *sim, const checkpoint_header_t *h, const char *path,
                                 const char *physics, const checkpoint_field_t *fields,
                                 uint32_t nf, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const patch_options_t *d = patch_options(sim_patch(sim));
  bool grid = true;
  for (int a = 0; a < 3; ++a)
    grid = grid && h->cells[a] == d->cells[a] && h->blocks[a] == d->blocks[a] &&
           h->periodic[a] == d->periodic[a];
  TSR_CHECK(grid, TSR_ERR_INVALID,
            "%s: written for cells [%lld, %lld, %lld], blocks [%d, %d, %d], periodic [%d, %d, "
            "%d]; this run has cells [%lld, %lld, %lld], blocks [%d, %d, %d], periodic [%d, %d, "
            "%d]: the block grid must be the same", path, (long long)h->cells[0],
            (long long)h->cells[1], (long long)h->cells[2], h->blocks[0], h->blocks[1],
            h->blocks[2], h->periodic[0], h->periodic[1], h->periodic[2], (long long)d->cells[0],
            (long long)d->cells[1], (long long)d->cells[2], d->blocks[0], d->blocks[1],
            d->blocks[2], d->periodic[0], d->periodic[1], d->periodic[2]);
  if (h->config_hash != config_text_hash(physics)) {
    /* rank 0 names the first setting that differs from the checkpoint's physics.json */
    char what[320] = "";
    int rank = 0;
    MPI_Comm_rank(sim_comm(sim), &rank);
    for (uint32_t i = 0; rank == 0 && i < h->nextras; ++i) {
      const checkpoint_extra_t *x = &h->extras[i];
      int fd = strcmp(x->name, "physics.json") == 0 ? open(path, O_RDONLY) : -1;
      char *there = fd >= 0 ? calloc(1, (size_t)x->bytes + 1) : NULL;
      tsr_error_t ignored;
      if (there && sim_ckpt_pread(fd, path, x->offset, (uint8_t *)there, x->bytes, &ignored) == TSR_OK &&
          checkpoint_crc32(0, there, (size_t)x->bytes) == x->crc)
        config_difference(there, physics, what, sizeof what);
      free(there);
      if (fd >= 0) close(fd);
    }
    char keys[512] = "";
    sim_restart_keys(sim, keys, sizeof keys);
    TSR_FAIL(TSR_ERR_INVALID,
             "%s: written by a run of another configuration (%s)%s%s; only output, hardware, "
             "steps, stop, check_every%s may change across a restart",
             path, h->modules, what[0] ? ": " : ": its physics settings differ", what, keys);
  }
  TSR_CHECK(h->nfields == nf, TSR_ERR_INVALID, "%s: %u fields (%s); this run has %u", path,
            h->nfields, h->modules, nf);
  for (uint32_t i = 0; i < nf; ++i)
    TSR_CHECK(strcmp(h->fields[i].name, fields[i].name) == 0 &&
                  h->fields[i].components == fields[i].components &&
                  h->fields[i].value_bytes == fields[i].value_bytes,
              TSR_ERR_INVALID, "%s: field %u is %s (%u values of %u bytes per cell); this run's "
              "is %s (%u of %u)", path, i, h->fields[i].name, h->fields[i].components,
              h->fields[i].value_bytes, fields[i].name, fields[i].components,
              fields[i].value_bytes);
  TSR_CHECK(h->nblocks == (uint32_t)patch_block_count(sim_patch(sim)), TSR_ERR_INVALID,
            "%s: %u blocks; this run has %d", path, h->nblocks, (int)patch_block_count(sim_patch(sim)));
cleanup:
  return st;
}

/* Rank 0: the run state of the extras (VTK steps, series) back into the writers. */
static tsr_status sim_ckpt_restore_extras(sim_output_t *w, int fd, const char *path,
                                          const checkpoint_header_t *h,
                                          const simulation_options_t *so, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  uint8_t *p = NULL;
  for (uint32_t i = 0; i < h->nextras; ++i) {
    const checkpoint_extra_t *x = &h->extras[i];
    free(p);
    p = malloc((size_t)x->bytes + 1);
    TSR_CHECK(p, TSR_ERR_NOMEM, "%s: out of memory for '%s'", path, x->name);
    TSR_TRY(sim_ckpt_pread(fd, path, x->offset, p, x->bytes, err));
    TSR_CHECK(checkpoint_crc32(0, p, (size_t)x->bytes) == x->crc, TSR_ERR_CORRUPT,
              "%s: '%s' does not match its checksum: the file is damaged", path, x->name);
    if (w) TSR_TRY(sim_output_restore(w, so, path, x->name, p, x->bytes, err));
  }
cleanup:
  free(p);
  return st;
}

tsr_status sim_read_checkpoint(sim_t *sim, sim_output_t *w, const simulation_options_t *so, const char *path,
                               const char *physics, int64_t *step, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  MPI_Comm comm = sim_comm(sim);
  int rank = 0, fd = -1;
  MPI_Comm_rank(comm, &rank);
  checkpoint_header_t h = {.version = 0};
  checkpoint_field_t fields[CHECKPOINT_MAX_FIELDS + 1];
  int ids[CHECKPOINT_MAX_FIELDS + 1];
  bulk_file_t file = {.fd = -1};
  const uint32_t nf = sim_ckpt_fields(sim, fields, ids);
  TSR_TRY(sim_ckpt_header(comm, path, &h, err));
  TSR_TRY(sim_ckpt_match(sim, &h, path, physics, fields, nf, err));
  /* every rank its blocks, by BlockID */
  st = bulk_open(&file, path, false, SIM_CKPT_READ_PIECE, err);
  for (int32_t i = 0; st == TSR_OK && i < patch_local_count(sim_patch(sim)); ++i) {
    int32_t id = patch_local_id(sim_patch(sim), i);
    const checkpoint_block_t *b = &h.block[id];
    const uint64_t want = sim_ckpt_block_bytes(sim, id, ids, nf);
    if (b->bytes != want) {
      st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                         "%s: BlockID %d holds %llu bytes; this run's block needs %llu", path,
                         (int)id, (unsigned long long)b->bytes, (unsigned long long)want);
      break;
    }
    /* each field in pieces of whole rows: read, summed, unpacked (a damaged block's
       values are loaded too, but the run then ends on the checksum) */
    block_data_t *data = patch_block_data(sim_patch(sim), id);
    uint32_t crc = 0;
    bulk_read_begin(&file, b->offset, b->bytes);
    for (uint32_t f = 0; f < nf && st == TSR_OK; ++f) {
      grid_field_t *g = NULL;
      st = field_host_for_load(data, ids[f], &g, err);
      if (st != TSR_OK || !g) continue;
      const size_t row = field_row_bytes(g);
      for (int64_t r0 = 0, n = 0; r0 < field_rows(g) && st == TSR_OK; r0 += n) {
        const uint8_t *p = NULL;
        size_t avail = 0;
        st = bulk_read_take(&file, row, &p, &avail, err);
        if (st != TSR_OK) break;
        n = (int64_t)(avail / row) < field_rows(g) - r0 ? (int64_t)(avail / row) : field_rows(g) - r0;
        crc = sim_ckpt_rows(g, g, r0, n, (uint8_t *)(uintptr_t)p, crc);
        bulk_read_advance(&file, (size_t)n * row);
      }
      if (st == TSR_OK) st = field_upload_host(data, ids[f], err);
    }
    if (st == TSR_OK && crc != b->crc)
      st = tsr_error_set(err, TSR_ERR_CORRUPT, __FILE__, __LINE__,
                         "%s: BlockID %d does not match its checksum: the file is damaged", path,
                         (int)id);
  }
  if (st == TSR_OK && rank == 0) {
    fd = open(path, O_RDONLY);
    if (fd < 0)
      st = tsr_error_set(err, TSR_ERR_IO, __FILE__, __LINE__, "cannot read %s: %s", path,
                         strerror(errno));
    else
      st = sim_ckpt_restore_extras(w, fd, path, &h, so, err);
  }
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  /* what else the modules' state says about the step, then the ghost layers */
  int nm = 0;
  const module_t *modules = sim_modules(sim, &nm);
  for (int m = 0; m < nm; ++m)
    if (modules[m].def->resume)
      TSR_TRY(verdict_reduce(comm, modules[m].def->resume(modules[m].state, sim,
                                                          (int64_t)h.step, err), 0, err));
  TSR_TRY(sim_exchange_all(sim, err));
  *step = (int64_t)h.step;
cleanup:
  if (fd >= 0) close(fd);
  bulk_close(&file);
  checkpoint_header_free(&h);
  return st;
}

/* Rank 0's part of sim_checkpoint_find for a folder. */
static tsr_status sim_ckpt_newest(const char *folder, const char *asked, char *path, size_t cap,
                                  tsr_error_t *err) {
  tsr_status st = TSR_OK;
  DIR *dir = opendir(folder);
  long long best = -1;
  char name[NAME_MAX + 1] = "";
  TSR_CHECK(dir, TSR_ERR_IO, "--restart %s: cannot read the folder '%s': %s", asked, folder,
            strerror(errno));
  for (struct dirent *e; (e = readdir(dir));) {
    char *end = NULL;
    if (strncmp(e->d_name, "checkpoint_", 11) != 0 || !isdigit((unsigned char)e->d_name[11]))
      continue;
    errno = 0;
    const long long step = strtoll(e->d_name + 11, &end, 10);
    if (errno || strcmp(end, ".tsrc") != 0 || step <= best) continue;
    char file[OUTPUT_PATH_MAX];
    struct stat sb;
    if (snprintf(file, sizeof file, "%s/%s", folder, e->d_name) >= (int)sizeof file ||
        stat(file, &sb) != 0 || !S_ISREG(sb.st_mode))
      continue;
    best = step;
    snprintf(name, sizeof name, "%s", e->d_name);
  }
  TSR_CHECK(best >= 0, TSR_ERR_INVALID,
            "--restart %s: the folder '%s' holds no checkpoint (checkpoint_<step>.tsrc, written "
            "where output.checkpoint_every or output.checkpoint_interval asks for them)",
            asked, folder);
  TSR_CHECK(snprintf(path, cap, "%s/%s", folder, name) < (int)cap, TSR_ERR_INVALID,
            "--restart %s: the path of %s in '%s' is too long", asked, name, folder);
cleanup:
  if (dir) closedir(dir);
  return st;
}

tsr_status sim_checkpoint_find(MPI_Comm comm, const char *restart, const char *output_folder,
                               char *path, size_t cap, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const bool latest = strcmp(restart, "latest") == 0;
  const char *folder = latest ? output_folder : restart;
  struct stat sb;
  if (rank == 0) {
    if (latest || (stat(restart, &sb) == 0 && S_ISDIR(sb.st_mode)))
      st = sim_ckpt_newest(folder, restart, path, cap, err);
    else if (snprintf(path, cap, "%s", restart) >= (int)cap)
      st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                         "--restart: the path is too long");
  }
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_MPI(MPI_Bcast(path, (int)cap, MPI_CHAR, 0, comm));
cleanup:
  return st;
}
