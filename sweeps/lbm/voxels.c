#define _POSIX_C_SOURCE 200809L /* pread */
#include "voxels.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loaded.h"
#include "tsr_size.h"

enum { VOXELS_MAX_BOX = 1 << 30 }; /* voxels of a prepared box */

struct voxels {
  voxels_options_t o;
  patch_options_t domain;
  int fd;
  bool wrap[3];          /* a periodic axis the image spans exactly: it repeats */
  int32_t nblocks;
  uint8_t *touched, *full;
  bool any;
  /* the prepared box: voxels [blo, blo + bn) per axis (indices beyond the image where it
     repeats), one byte each, 1 solid */
  int64_t blo[3], bn[3];
  uint8_t *box;
};

static void voxels_free(void *vv) {
  struct voxels *v = vv;
  if (!v) return;
  if (v->fd >= 0) close(v->fd);
  free(v->touched);
  free(v->full);
  free(v->box);
  free(v);
}

static bool voxels_solid_value(const voxels_options_t *o, const uint8_t *p) {
  const unsigned value = o->bytes == 1 ? p[0]
                         : o->big_endian ? (unsigned)p[0] << 8 | p[1]
                                         : (unsigned)p[1] << 8 | p[0];
  return o->solid_below ? (double)value < o->threshold : (double)value >= o->threshold;
}

/* Reads n bytes at offset, all of them. */
static tsr_status voxels_pread(const struct voxels *v, void *buf, size_t n, int64_t offset,
                               tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t done = 0;
  while (done < n) {
    const ssize_t got = pread(v->fd, (uint8_t *)buf + done, n - done, (off_t)(offset + (int64_t)done));
    if (got < 0 && errno == EINTR) continue;
    TSR_CHECK(got > 0, TSR_ERR_IO, "%s: read error at byte %lld: %s", v->o.path,
              (long long)(offset + (int64_t)done), got < 0 ? strerror(errno) : "the file ended");
    done += (size_t)got;
  }
cleanup:
  return st;
}

/* The voxel index holding the coordinate x (cells) along axis a. */
static int64_t voxels_index(const struct voxels *v, int a, double x) {
  return (int64_t)floor((x - v->o.offset[a]) / v->o.spacing);
}

/* A voxel index along axis a into the image, repeated where the image repeats; -1
 * outside it. */
static int64_t voxels_wrap(const struct voxels *v, int a, int64_t i) {
  const int64_t n = v->o.size[a];
  if (v->wrap[a]) return (i % n + n) % n;
  return i >= 0 && i < n ? i : -1;
}

/* Whether voxel i (indices as voxels_index gives them) is solid: from the prepared box,
 * else read from the file. */
static bool voxels_solid(const struct voxels *v, const int64_t i[3]) {
  if (v->box) { /* the common case: the index itself in the box */
    const int64_t x = i[0] - v->blo[0], y = i[1] - v->blo[1], z = i[2] - v->blo[2];
    if (x >= 0 && x < v->bn[0] && y >= 0 && y < v->bn[1] && z >= 0 && z < v->bn[2] &&
        i[0] >= 0 && i[0] < v->o.size[0] && i[1] >= 0 && i[1] < v->o.size[1] && i[2] >= 0 &&
        i[2] < v->o.size[2])
      return v->box[(z * v->bn[1] + y) * v->bn[0] + x] != 0;
  }
  int64_t w[3], b[3];
  bool in_box = v->box != NULL;
  for (int a = 0; a < 3; ++a) {
    w[a] = voxels_wrap(v, a, i[a]);
    if (w[a] < 0) return false;
    /* the box holds the index itself, or its repeat one image further */
    b[a] = i[a] - v->blo[a];
    if (v->wrap[a] && (b[a] < 0 || b[a] >= v->bn[a])) {
      b[a] = i[a] + v->o.size[a] - v->blo[a];
      if (b[a] < 0 || b[a] >= v->bn[a]) b[a] = i[a] - v->o.size[a] - v->blo[a];
    }
    in_box = in_box && b[a] >= 0 && b[a] < v->bn[a];
  }
  if (in_box) return v->box[(b[2] * v->bn[1] + b[1]) * v->bn[0] + b[0]] != 0;
  uint8_t raw[2];
  const int64_t at = v->o.header + ((w[2] * v->o.size[1] + w[1]) * v->o.size[0] + w[0]) * v->o.bytes;
  tsr_error_t ignored;
  if (voxels_pread(v, raw, (size_t)v->o.bytes, at, &ignored) != TSR_OK) return false; /* the
      file was read whole at load; a later failure reads as fluid */
  return voxels_solid_value(&v->o, raw);
}

/* For every cell g along axis a: its block, and the blocks whose ghost layer holds it
 * (the previous block's where g is its block's first cell, the next one's where g is the
 * last; across periodic faces too), -1 where none: three per cell. */
static void voxels_axis_blocks(const patch_options_t *d, int a, int32_t *out) {
  const int nb = d->blocks[a];
  for (int b = 0; b < nb; ++b) {
    int64_t lo;
    int size;
    patch_axis_span(d, a, b, &lo, &size);
    for (int64_t g = lo; g < lo + size; ++g) {
      int32_t *c = out + 3 * g;
      c[0] = b;
      c[1] = c[2] = -1;
      if (g == lo) c[1] = b > 0 ? b - 1 : d->periodic[a] ? nb - 1 : -1;
      if (g == lo + size - 1) c[2] = b < nb - 1 ? b + 1 : d->periodic[a] ? 0 : -1;
    }
  }
}

/* The blocks' summaries: every cell plane of the domain against its plane of voxels. */
static tsr_status voxels_summarise(struct voxels *v, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const patch_options_t *d = &v->domain;
  const voxels_options_t *o = &v->o;
  int32_t *axis[3] = {NULL, NULL, NULL};
  int64_t *count = NULL, *vox[2] = {NULL, NULL};
  uint8_t *plane = NULL;
  const int64_t nb = (int64_t)d->blocks[0] * d->blocks[1] * d->blocks[2];
  const size_t plane_bytes = (size_t)(o->size[0] * o->size[1] * o->bytes);
  v->nblocks = (int32_t)nb;
  v->touched = calloc((size_t)nb, 1);
  v->full = calloc((size_t)nb, 1);
  count = calloc((size_t)nb, sizeof *count);
  plane = malloc(plane_bytes);
  for (int a = 0; a < 3; ++a) axis[a] = malloc(3 * (size_t)d->cells[a] * sizeof *axis[a]);
  for (int a = 0; a < 2; ++a) vox[a] = malloc((size_t)d->cells[a] * sizeof *vox[a]);
  TSR_CHECK(v->touched && v->full && count && plane && axis[0] && axis[1] && axis[2] && vox[0] &&
                vox[1],
            TSR_ERR_NOMEM, "%s: out of memory", o->path);
  for (int a = 0; a < 3; ++a) voxels_axis_blocks(d, a, axis[a]);
  /* the voxel of each cell centre along x and y, -1 outside the image */
  for (int a = 0; a < 2; ++a)
    for (int64_t g = 0; g < d->cells[a]; ++g)
      vox[a][g] = voxels_wrap(v, a, voxels_index(v, a, (double)g + 0.5));
  int64_t loaded = -1;
  for (int64_t gz = 0; gz < d->cells[2]; ++gz) {
    const int64_t kz = voxels_wrap(v, 2, voxels_index(v, 2, (double)gz + 0.5));
    if (kz < 0) continue;
    if (kz != loaded) {
      TSR_TRY(voxels_pread(v, plane, plane_bytes, o->header + kz * (int64_t)plane_bytes, err));
      loaded = kz;
    }
    for (int64_t gy = 0; gy < d->cells[1]; ++gy) {
      if (vox[1][gy] < 0) continue;
      const uint8_t *row = plane + (size_t)(vox[1][gy] * o->size[0] * o->bytes);
      for (int64_t gx = 0; gx < d->cells[0]; ++gx) {
        if (vox[0][gx] < 0 || !voxels_solid_value(o, row + vox[0][gx] * o->bytes)) continue;
        v->any = true;
        const int32_t *cx = axis[0] + 3 * gx, *cy = axis[1] + 3 * gy, *cz = axis[2] + 3 * gz;
        count[((int64_t)cz[0] * d->blocks[1] + cy[0]) * d->blocks[0] + cx[0]]++;
        for (int k = 0; k < 3; ++k)
          for (int j = 0; j < 3; ++j)
            for (int i = 0; i < 3; ++i)
              if (cx[i] >= 0 && cy[j] >= 0 && cz[k] >= 0)
                v->touched[((int64_t)cz[k] * d->blocks[1] + cy[j]) * d->blocks[0] + cx[i]] = 1;
      }
    }
  }
  for (int64_t id = 0; id < nb; ++id) {
    int64_t cells = 1, lo;
    int size;
    const int64_t g[3] = {id % d->blocks[0], id / d->blocks[0] % d->blocks[1],
                          id / d->blocks[0] / d->blocks[1]};
    for (int a = 0; a < 3; ++a) {
      patch_axis_span(d, a, g[a], &lo, &size);
      cells *= size;
    }
    v->full[id] = count[id] == cells;
  }
cleanup:
  for (int a = 0; a < 3; ++a) free(axis[a]);
  for (int a = 0; a < 2; ++a) free(vox[a]);
  free(count);
  free(plane);
  return st;
}

tsr_status voxels_load(const voxels_options_t *o, const patch_options_t *domain,
                       const voxels_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  static const char axes[] = "xyz";
  struct { /* the image, its placement and the domain's blocks */
    char path[sizeof o->path];
    int64_t bytes, big_endian, size[3], header, solid_below, cells[3], blocks[3], periodic[3];
    double spacing, offset[3], threshold;
  } key;
  memset(&key, 0, sizeof key);
  memcpy(key.path, o->path, sizeof key.path);
  key.bytes = o->bytes, key.big_endian = o->big_endian, key.header = o->header;
  key.solid_below = o->solid_below, key.spacing = o->spacing, key.threshold = o->threshold;
  for (int a = 0; a < 3; ++a) {
    key.size[a] = o->size[a], key.offset[a] = o->offset[a];
    key.cells[a] = domain->cells[a], key.blocks[a] = domain->blocks[a];
    key.periodic[a] = domain->periodic[a];
  }
  struct voxels *v = loaded_find(&key, sizeof key);
  if (v) {
    *out = v;
    return st;
  }
  v = calloc(1, sizeof *v);
  TSR_CHECK(v, TSR_ERR_NOMEM, "%s: out of memory", o->path);
  v->fd = -1;
  v->o = *o;
  v->domain = *domain;
  TSR_CHECK(o->bytes == 1 || o->bytes == 2, TSR_ERR_INVALID, "%s: %d bytes per voxel", o->path,
            o->bytes);
  size_t voxels = 1, bytes = 0;
  bool fits = true;
  for (int a = 0; a < 3; ++a)
    fits = fits && o->size[a] >= 1 && tsr_mul_size(voxels, (size_t)o->size[a], &voxels);
  fits = fits && tsr_mul_size(voxels, (size_t)o->bytes, &bytes) &&
         tsr_add_size(bytes, (size_t)o->header, &bytes) && bytes <= (size_t)INT64_MAX;
  TSR_CHECK(fits, TSR_ERR_INVALID, "%s: an image of %lld x %lld x %lld voxels is too large",
            o->path, (long long)o->size[0], (long long)o->size[1], (long long)o->size[2]);
  v->fd = open(o->path, O_RDONLY);
  TSR_CHECK(v->fd >= 0, TSR_ERR_IO, "%s: cannot open: %s", o->path, strerror(errno));
  struct stat sb;
  TSR_CHECK(fstat(v->fd, &sb) == 0 && S_ISREG(sb.st_mode), TSR_ERR_INVALID,
            "%s: not a regular file", o->path);
  TSR_CHECK((size_t)sb.st_size == bytes, TSR_ERR_INVALID,
            "%s: %lld bytes, but %lld x %lld x %lld voxels of %s after a header of %lld bytes "
            "are %zu: not the image the configuration describes", o->path,
            (long long)sb.st_size, (long long)o->size[0], (long long)o->size[1],
            (long long)o->size[2], o->bytes == 1 ? "uint8" : "uint16", (long long)o->header,
            bytes);
  for (int a = 0; a < 3; ++a) {
    const double lo = o->offset[a], hi = o->offset[a] + (double)o->size[a] * o->spacing;
    const double n = (double)domain->cells[a];
    TSR_CHECK(lo >= -1e-9 && hi <= n + 1e-9 * fmax(1.0, n), TSR_ERR_INVALID,
              "%s: the image spans %c from %g to %g (cells); it must lie inside the domain, "
              "0 to %g (offset, and size times spacing)", o->path, axes[a], lo, hi, n);
    v->wrap[a] = domain->periodic[a] && o->offset[a] == 0.0 && fabs(hi - n) <= 1e-9 * n;
  }
  TSR_TRY(voxels_summarise(v, err));
  TSR_TRY(loaded_keep(&key, sizeof key, v, voxels_free, err));
  *out = v;
  v = NULL;
cleanup:
  voxels_free(v);
  return st;
}

bool voxels_block_touched(const voxels_t *v, int32_t id) {
  return id >= 0 && id < v->nblocks && v->touched[id];
}
bool voxels_block_full(const voxels_t *v, int32_t id) {
  return id >= 0 && id < v->nblocks && v->full[id];
}
bool voxels_any(const voxels_t *v) { return v->any; }

tsr_status voxels_prepare(const voxels_t *cv, const int64_t lo[3], const int size[3],
                          tsr_error_t *err) {
  tsr_status st = TSR_OK;
  struct voxels *v = (struct voxels *)cv; /* the box is a cache of the file */
  const voxels_options_t *o = &v->o;
  uint8_t *row = NULL, *box = NULL;
  int64_t blo[3], bn[3];
  size_t n = 1;
  for (int a = 0; a < 3; ++a) {
    int64_t i0 = voxels_index(v, a, (double)(lo[a] - 2)),
            i1 = voxels_index(v, a, (double)(lo[a] + size[a] + 2));
    if (!v->wrap[a]) { /* only what the image has */
      i0 = i0 < 0 ? 0 : i0;
      i1 = i1 > o->size[a] - 1 ? o->size[a] - 1 : i1;
    }
    blo[a] = i0;
    bn[a] = i1 >= i0 ? i1 - i0 + 1 : 0;
    n *= (size_t)bn[a];
  }
  free(v->box);
  v->box = NULL;
  TSR_CHECK(n <= VOXELS_MAX_BOX, TSR_ERR_INVALID,
            "%s: %zu voxels around a block of %d x %d x %d cells: use a coarser spacing or "
            "smaller blocks", o->path, n, size[0], size[1], size[2]);
  if (n == 0) goto cleanup;
  const size_t row_bytes = (size_t)(o->size[0] * o->bytes);
  box = malloc(n);
  row = malloc(row_bytes);
  TSR_CHECK(box && row, TSR_ERR_NOMEM, "%s: out of memory for %zu voxels", o->path, n);
  for (int64_t k = 0; k < bn[2]; ++k)
    for (int64_t j = 0; j < bn[1]; ++j) {
      const int64_t wz = voxels_wrap(v, 2, blo[2] + k), wy = voxels_wrap(v, 1, blo[1] + j);
      TSR_TRY(voxels_pread(v, row, row_bytes,
                           o->header + (wz * o->size[1] + wy) * (int64_t)row_bytes, err));
      for (int64_t i = 0; i < bn[0]; ++i) {
        const int64_t wx = voxels_wrap(v, 0, blo[0] + i);
        box[(k * bn[1] + j) * bn[0] + i] = voxels_solid_value(o, row + wx * o->bytes);
      }
    }
  memcpy(v->blo, blo, sizeof blo);
  memcpy(v->bn, bn, sizeof bn);
  v->box = box;
  box = NULL;
cleanup:
  free(box);
  free(row);
  return st;
}

bool voxels_inside(const voxels_t *v, const double p[3]) {
  const int64_t i[3] = {voxels_index(v, 0, p[0]), voxels_index(v, 1, p[1]),
                        voxels_index(v, 2, p[2])};
  return voxels_solid(v, i);
}

double voxels_entry(const voxels_t *v, const double p[3], const double d[3]) {
  /* the voxels the segment crosses, in order (Amanatides and Woo): in voxel units */
  int64_t i[3], step[3];
  double t_next[3], t_delta[3];
  for (int a = 0; a < 3; ++a) {
    const double u = (p[a] - v->o.offset[a]) / v->o.spacing, e = d[a] / v->o.spacing;
    i[a] = (int64_t)floor(u);
    step[a] = e > 0 ? 1 : -1;
    if (e == 0) {
      t_next[a] = t_delta[a] = INFINITY;
    } else {
      const double boundary = e > 0 ? (double)(i[a] + 1) : (double)i[a];
      t_next[a] = (boundary - u) / e;
      t_delta[a] = 1.0 / fabs(e);
    }
  }
  if (voxels_solid(v, i)) return 0.0;
  for (;;) {
    const int a = t_next[0] <= t_next[1] && t_next[0] <= t_next[2] ? 0
                  : t_next[1] <= t_next[2]                         ? 1
                                                                   : 2;
    const double t = t_next[a];
    if (t > 1.0) return 2.0;
    i[a] += step[a];
    t_next[a] += t_delta[a];
    if (voxels_solid(v, i)) return t;
  }
}

void voxels_bounds(const voxels_t *v, double lo[3], double hi[3]) {
  for (int a = 0; a < 3; ++a) {
    lo[a] = v->o.offset[a];
    hi[a] = v->o.offset[a] + (double)v->o.size[a] * v->o.spacing;
  }
}
