#define _GNU_SOURCE /* O_CLOEXEC, flock */
#include "output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"
#include "verdict.h"

/* ---- files written whole ---- */

/* Temporary files: ".<name>" + OUTPUT_TMP_SUFFIX, the X's filled in by mkstemp. */
#define OUTPUT_TMP_SUFFIX ".tmp-XXXXXX"
#define OUTPUT_TMP_PATTERN ".*.tmp-??????"
#define OUTPUT_LOCK ".tessera.lock"
#define OUTPUT_MANIFEST "manifest.json"

tsr_status output_make_folder(const char *path, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char buf[4096];
  size_t n = strlen(path);
  TSR_CHECK(n > 0 && n < sizeof buf, TSR_ERR_INVALID, "output folder '%.200s': empty or too long",
            path);
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; ++i) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    char c = buf[i];
    buf[i] = '\0';
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
      TSR_FAIL(TSR_ERR_IO, "cannot create the folder '%s': %s", buf, strerror(errno));
    struct stat sb;
    TSR_CHECK(stat(buf, &sb) == 0 && S_ISDIR(sb.st_mode), TSR_ERR_IO,
              "'%s' exists and is not a folder", buf);
    buf[i] = c;
  }
cleanup:
  return st;
}

tsr_status output_file_open(output_file_t *o, const char *path, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int fd = -1;
  memset(o, 0, sizeof *o);
  size_t n = strlen(path);
  TSR_CHECK(n > 0 && n < sizeof o->path, TSR_ERR_INVALID, "output path empty or too long: %.200s",
            path);
  memcpy(o->path, path, n + 1);
  const char *slash = strrchr(path, '/');
  int dir = slash ? (int)(slash - path) : 0;
  int m = slash ? snprintf(o->tmp, sizeof o->tmp, "%.*s/.%s" OUTPUT_TMP_SUFFIX, dir, path, slash + 1)
                : snprintf(o->tmp, sizeof o->tmp, ".%s" OUTPUT_TMP_SUFFIX, path);
  TSR_CHECK(m > 0 && (size_t)m < sizeof o->tmp, TSR_ERR_INVALID, "output path too long: %.200s",
            path);
  fd = mkstemp(o->tmp);
  TSR_CHECK(fd >= 0, TSR_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  mode_t mask = umask(0); /* mkstemp makes 0600; an output file gets what the umask allows */
  umask(mask);
  if (fchmod(fd, 0666 & ~mask) != 0 || !(o->f = fdopen(fd, "wb"))) {
    int e = errno;
    close(fd);
    unlink(o->tmp);
    TSR_FAIL(TSR_ERR_IO, "cannot write %s: %s", path, strerror(e));
  }
cleanup:
  return st;
}

tsr_status output_file_commit(output_file_t *o, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(o->f, TSR_ERR_INVALID, "%s: committed twice", o->path);
  errno = 0;
  bool failed = ferror(o->f) != 0;
  int e = errno;
  if (fclose(o->f) != 0 && !failed) failed = true, e = errno; /* a full disk shows here */
  o->f = NULL;
  if (failed) {
    unlink(o->tmp);
    TSR_FAIL(TSR_ERR_IO, "cannot write %s: %s", o->path, e ? strerror(e) : "write error");
  }
  if (rename(o->tmp, o->path) != 0) {
    e = errno;
    unlink(o->tmp);
    TSR_FAIL(TSR_ERR_IO, "cannot write %s: %s", o->path, strerror(e));
  }
cleanup:
  return st;
}

void output_file_discard(output_file_t *o) {
  if (!o->f) return;
  fclose(o->f);
  o->f = NULL;
  unlink(o->tmp);
}

/* ---- the folder a run owns ---- */

/* A list of relative paths (the stale files, the manifest's list). */
typedef struct output_list {
  char **items;
  size_t n, cap;
} output_list_t;

struct output_folder {
  char path[OUTPUT_PATH_MAX];
  int rank;
  int lock; /* rank 0: the locked file, -1 elsewhere */
  output_list_t files; /* rank 0: written by this run, for the manifest */
  bool dirty;
  char status[16];
};

const char *output_folder_path(const output_folder_t *d) { return d->path; }

/* folder/relative into out (cap bytes). */
static tsr_status output_join(char *out, size_t cap, const char *folder, const char *relative,
                              tsr_error_t *err) {
  int n = snprintf(out, cap, "%s/%s", folder, relative);
  if (n > 0 && (size_t)n < cap) return TSR_OK;
  return tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__, "output path too long: %.200s/%s",
                       folder, relative);
}

/* A path a manifest may name: relative, without "..", "." or empty parts. */
static bool output_relative_ok(const char *p) {
  if (!p[0] || p[0] == '/') return false;
  for (const char *s = p; *s;) {
    size_t len = strcspn(s, "/");
    if (len == 0 || (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
      return false;
    s += len;
    if (*s == '/') ++s;
  }
  return true;
}

static bool output_matches(const char *relative, const char *const *patterns, int n) {
  const char *base = strrchr(relative, '/');
  if (fnmatch(OUTPUT_TMP_PATTERN, base ? base + 1 : relative, FNM_PERIOD) == 0) return true;
  for (int i = 0; i < n; ++i)
    if (fnmatch(patterns[i], relative, FNM_PATHNAME | FNM_PERIOD) == 0) return true;
  return false;
}

static tsr_status output_list_add(output_list_t *l, const char *item, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  void *items = l->items;
  TSR_CHECK(grow_for_one(&items, &l->cap, l->n, sizeof *l->items, 64), TSR_ERR_NOMEM,
            "out of memory listing output files");
  l->items = items;
  TSR_CHECK(l->items[l->n] = strdup(item), TSR_ERR_NOMEM, "out of memory listing output files");
  ++l->n;
cleanup:
  return st;
}

static void output_list_free(output_list_t *l) {
  for (size_t i = 0; i < l->n; ++i) free(l->items[i]);
  free(l->items);
  memset(l, 0, sizeof *l);
}

static int output_compare(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts the list and drops repeated items. */
static void output_list_unique(output_list_t *l) {
  if (l->n == 0) return;
  qsort(l->items, l->n, sizeof *l->items, output_compare);
  size_t k = 1;
  for (size_t i = 1; i < l->n; ++i) {
    if (strcmp(l->items[i], l->items[k - 1]) == 0) free(l->items[i]);
    else l->items[k++] = l->items[i];
  }
  l->n = k;
}

/* Adds relative to the list when it is a regular file in folder (not a link). */
static tsr_status output_add_file(output_list_t *l, const char *folder, const char *relative,
                                  tsr_error_t *err) {
  char path[OUTPUT_PATH_MAX];
  struct stat sb;
  tsr_status st = output_join(path, sizeof path, folder, relative, err);
  if (st == TSR_OK && lstat(path, &sb) == 0 && S_ISREG(sb.st_mode))
    st = output_list_add(l, relative, err);
  return st;
}

/* Whether a name (relative to the folder) is a temporary file of output_file_open. */
static bool output_is_temporary(const char *relative) {
  const char *base = strrchr(relative, '/');
  base = base ? base + 1 : relative;
  return base[0] == '.' && strstr(base, ".tmp-") != NULL;
}

/* The files an earlier manifest lists (when it is one tessera wrote). */
static tsr_status output_manifest_files(const char *folder, output_list_t *l, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char path[OUTPUT_PATH_MAX];
  TSR_TRY(output_join(path, sizeof path, folder, OUTPUT_MANIFEST, err));
  json_t *doc = json_load_file(path, 0, NULL);
  const json_t *files = json_object_get(doc, "files");
  const char *format = json_string_value(json_object_get(doc, "format"));
  if (format && strcmp(format, "tessera-manifest") == 0 && json_is_array(files)) {
    size_t i;
    st = output_add_file(l, folder, OUTPUT_MANIFEST, err);
    const json_t *v;
    json_array_foreach(files, i, v) {
      const char *p = json_string_value(v);
      if (st == TSR_OK && p && output_relative_ok(p) && strcmp(p, OUTPUT_LOCK) != 0)
        st = output_add_file(l, folder, p, err);
      if (st != TSR_OK) break;
    }
  }
  json_decref(doc);
cleanup:
  return st;
}

/* Whether item is in the sorted list l. */
static bool output_list_has(const output_list_t *l, const char *item) {
  return l->n > 0 && bsearch(&item, l->items, l->n, sizeof *l->items, output_compare) != NULL;
}

/* What an earlier run left in the folder:
 *  - listed: its manifest (one tessera wrote), the files that lists, and the temporary
 *    files of output_file_open: tessera's own, which --overwrite may remove;
 *  - foreign: every other file at the top or one folder down whose path matches a
 *    pattern (and a manifest.json tessera did not write): files a run would write over
 *    although no manifest says a run wrote them, so never removed. */
static tsr_status output_find_stale(const char *folder, const char *const *patterns, int npatterns,
                                    output_list_t *listed, output_list_t *foreign,
                                    tsr_error_t *err) {
  tsr_status st = TSR_OK;
  DIR *top = NULL, *sub = NULL;
  output_list_t found = {0};
  TSR_TRY(output_manifest_files(folder, listed, err));
  TSR_TRY(output_add_file(&found, folder, OUTPUT_MANIFEST, err));
  top = opendir(folder);
  TSR_CHECK(top, TSR_ERR_IO, "cannot read the output folder '%s': %s", folder, strerror(errno));
  for (struct dirent *e; (e = readdir(top));) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char path[OUTPUT_PATH_MAX];
    struct stat sb;
    TSR_TRY(output_join(path, sizeof path, folder, e->d_name, err));
    if (lstat(path, &sb) != 0) continue;
    if (S_ISREG(sb.st_mode) && strcmp(e->d_name, OUTPUT_LOCK) != 0 &&
        output_matches(e->d_name, patterns, npatterns))
      TSR_TRY(output_list_add(&found, e->d_name, err));
    if (!S_ISDIR(sb.st_mode)) continue;
    sub = opendir(path);
    for (struct dirent *f; sub && (f = readdir(sub));) {
      char relative[OUTPUT_PATH_MAX];
      if (strcmp(f->d_name, ".") == 0 || strcmp(f->d_name, "..") == 0) continue;
      TSR_TRY(output_join(relative, sizeof relative, e->d_name, f->d_name, err));
      if (output_matches(relative, patterns, npatterns))
        TSR_TRY(output_add_file(&found, folder, relative, err));
    }
    if (sub) closedir(sub);
    sub = NULL;
  }
  output_list_unique(listed);
  for (size_t i = 0; i < found.n; ++i)
    if (output_is_temporary(found.items[i]))
      TSR_TRY(output_list_add(listed, found.items[i], err));
    else if (!output_list_has(listed, found.items[i]))
      TSR_TRY(output_list_add(foreign, found.items[i], err));
  output_list_unique(listed);
  output_list_unique(foreign);
cleanup:
  output_list_free(&found);
  if (sub) closedir(sub);
  if (top) closedir(top);
  return st;
}

/* Removes the stale files, then the folders holding them where they are left empty. */
static tsr_status output_remove(const char *folder, const output_list_t *stale, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char path[OUTPUT_PATH_MAX];
  for (size_t i = 0; i < stale->n; ++i) {
    TSR_TRY(output_join(path, sizeof path, folder, stale->items[i], err));
    TSR_CHECK(unlink(path) == 0 || errno == ENOENT, TSR_ERR_IO,
              "cannot remove %s (output of an earlier run): %s", path, strerror(errno));
  }
  for (size_t i = stale->n; i-- > 0;) { /* deepest first: reverse sorted order */
    TSR_TRY(output_join(path, sizeof path, folder, stale->items[i], err));
    for (char *slash = strrchr(path, '/'); slash && slash > path + strlen(folder);
         slash = strrchr(path, '/')) {
      *slash = '\0';
      if (rmdir(path) != 0) break; /* not empty: something else lives there */
    }
  }
cleanup:
  return st;
}

/* Rank 0: takes the folder's lock, or says which run holds it. */
static tsr_status output_lock(output_folder_t *d, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char path[OUTPUT_PATH_MAX];
  TSR_TRY(output_join(path, sizeof path, d->path, OUTPUT_LOCK, err));
  d->lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  TSR_CHECK(d->lock >= 0, TSR_ERR_IO, "cannot write in the output folder '%s': %s", d->path,
            strerror(errno));
  if (flock(d->lock, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    char holder[256] = "";
    ssize_t n = pread(d->lock, holder, sizeof holder - 1, 0);
    holder[n > 0 ? n : 0] = '\0';
    holder[strcspn(holder, "\n")] = '\0';
    TSR_CHECK(e != EWOULDBLOCK, TSR_ERR_IO,
              "the output folder '%s' is in use by another tessera run (%s); wait for it to end "
              "or choose another folder",
              d->path, holder[0] ? holder : "unknown process");
    TSR_FAIL(TSR_ERR_IO, "cannot lock the output folder '%s': %s", d->path, strerror(e));
  }
  char host[128] = "", holder[256];
  gethostname(host, sizeof host - 1);
  int n = snprintf(holder, sizeof holder, "process %ld on %s\n", (long)getpid(), host);
  TSR_CHECK(ftruncate(d->lock, 0) == 0 && pwrite(d->lock, holder, (size_t)n, 0) == n, TSR_ERR_IO,
            "cannot write in the output folder '%s': %s", d->path, strerror(errno));
cleanup:
  return st;
}

/* Up to four names of a list, for a message. */
static void output_list_names(const output_list_t *l, char *out, size_t cap) {
  size_t used = 0;
  out[0] = '\0';
  for (size_t i = 0; i < l->n && i < 4 && used < cap; ++i) {
    int n = snprintf(out + used, cap - used, "%s'%s'", i ? ", " : "", l->items[i]);
    used += n > 0 ? (size_t)n : 0;
  }
  if (l->n > 4 && used < cap) snprintf(out + used, cap - used, " and %zu more", l->n - 4);
}

/* Rank 0's part of output_folder_open. */
static tsr_status output_claim(output_folder_t *d, const char *const *patterns, int npatterns,
                               output_mode_t mode, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  output_list_t listed = {0}, foreign = {0}, temporary = {0};
  char names[512];
  TSR_TRY(output_make_folder(d->path, err));
  TSR_TRY(output_lock(d, err));
  TSR_TRY(output_find_stale(d->path, patterns, npatterns, &listed, &foreign, err));
  output_list_names(&foreign, names, sizeof names);
  TSR_CHECK(foreign.n == 0, TSR_ERR_INVALID,
            "the output folder '%s' holds %zu file(s) a run would write over that no tessera "
            "manifest lists (%s): a user's files, or a run's killed before it listed them; "
            "tessera removes only what a manifest lists, so move them or choose another folder",
            d->path, foreign.n, names);
  if (mode == OUTPUT_CONTINUE) {
    /* the earlier run's files stay, listed; its half-written files go */
    for (size_t i = 0; i < listed.n; ++i)
      if (output_is_temporary(listed.items[i]))
        TSR_TRY(output_list_add(&temporary, listed.items[i], err));
      else if (strcmp(listed.items[i], OUTPUT_MANIFEST) != 0)
        TSR_TRY(output_list_add(&d->files, listed.items[i], err));
    TSR_TRY(output_remove(d->path, &temporary, err));
    d->dirty = true;
    TSR_TRY(output_folder_manifest(d, "running", err));
    goto cleanup;
  }
  TSR_CHECK(listed.n == 0 || mode == OUTPUT_OVERWRITE, TSR_ERR_INVALID,
            "the output folder '%s' holds the output of an earlier run (%zu file(s), e.g. '%s'); "
            "pass --overwrite to replace it, or choose another folder",
            d->path, listed.n, listed.n ? listed.items[0] : "");
  TSR_TRY(output_remove(d->path, &listed, err));
  TSR_TRY(output_folder_manifest(d, "running", err));
cleanup:
  output_list_free(&listed);
  output_list_free(&foreign);
  output_list_free(&temporary);
  return st;
}

tsr_status output_folder_open(MPI_Comm comm, const char *path, const char *const *patterns,
                              int npatterns, output_mode_t mode, output_folder_t **out,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  output_folder_t *d = calloc(1, sizeof *d);
  *out = NULL;
  if (!d) st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  else {
    d->lock = -1;
    MPI_Comm_rank(comm, &d->rank);
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof d->path)
      st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                         "output folder '%.200s': empty or too long", path);
    else memcpy(d->path, path, n + 1);
  }
  if (st == TSR_OK && d->rank == 0) st = output_claim(d, patterns, npatterns, mode, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  /* every rank: can it create a file there? (ranks may see other file systems) */
  output_file_t probe;
  char where[OUTPUT_PATH_MAX];
  st = output_join(where, sizeof where, d->path, "write-check", err);
  if (st == TSR_OK) st = output_file_open(&probe, where, err);
  if (st == TSR_OK) output_file_discard(&probe);
  else {
    char why[sizeof err->text];
    snprintf(why, sizeof why, "%s", err->text);
    st = tsr_error_set(err, st, __FILE__, __LINE__, "rank %d cannot write in the output folder: %s",
                       d->rank, why);
  }
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  *out = d;
  d = NULL;
cleanup:
  output_folder_close(&d);
  return st;
}

tsr_status output_folder_add(output_folder_t *d, const char *relative, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  if (d->rank != 0) goto cleanup;
  st = output_list_add(&d->files, relative, err);
  d->dirty = true;
cleanup:
  return st;
}

tsr_status output_folder_remove(output_folder_t *d, const char *relative, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char path[OUTPUT_PATH_MAX];
  if (d->rank != 0) goto cleanup;
  TSR_TRY(output_join(path, sizeof path, d->path, relative, err));
  TSR_CHECK(unlink(path) == 0 || errno == ENOENT, TSR_ERR_IO, "cannot remove %s: %s", path,
            strerror(errno));
  for (size_t i = 0; i < d->files.n; ++i)
    if (strcmp(d->files.items[i], relative) == 0) {
      free(d->files.items[i]);
      d->files.items[i] = d->files.items[--d->files.n];
      d->dirty = true;
      break;
    }
cleanup:
  return st;
}

tsr_status output_folder_file(output_folder_t *d, char *path, size_t cap, tsr_error_t *err,
                              const char *format, ...) {
  tsr_status st = TSR_OK;
  char relative[OUTPUT_PATH_MAX];
  va_list ap;
  va_start(ap, format);
  int n = vsnprintf(relative, sizeof relative, format, ap);
  va_end(ap);
  TSR_CHECK(n > 0 && (size_t)n < sizeof relative, TSR_ERR_INVALID, "output file name too long");
  TSR_TRY(output_join(path, cap, d->path, relative, err));
  TSR_TRY(output_folder_add(d, relative, err));
cleanup:
  return st;
}

/* Drops the names whose file is not there: a write that failed (a full disk) had named
 * its file before it gave up. Once, for the run's last manifest. */
static void output_list_existing(output_folder_t *d) {
  size_t k = 0;
  for (size_t i = 0; i < d->files.n; ++i) {
    char path[OUTPUT_PATH_MAX];
    struct stat sb;
    tsr_error_t ignored;
    if (output_join(path, sizeof path, d->path, d->files.items[i], &ignored) == TSR_OK &&
        lstat(path, &sb) != 0 && errno == ENOENT)
      free(d->files.items[i]);
    else d->files.items[k++] = d->files.items[i];
  }
  d->files.n = k;
}

tsr_status output_folder_manifest(output_folder_t *d, const char *status, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  json_t *doc = NULL, *files = NULL;
  output_file_t f = {.f = NULL};
  char path[OUTPUT_PATH_MAX];
  if (d->rank != 0 || (!d->dirty && strcmp(status, d->status) == 0)) goto cleanup;
  output_list_unique(&d->files);
  if (strcmp(status, "running") != 0) output_list_existing(d);
  doc = json_object();
  files = json_array();
  TSR_CHECK(doc && files, TSR_ERR_NOMEM, "out of memory writing the manifest");
  for (size_t i = 0; i < d->files.n; ++i)
    TSR_CHECK(json_array_append_new(files, json_string(d->files.items[i])) == 0, TSR_ERR_INVALID,
              "cannot list '%s' in the manifest", d->files.items[i]);
  TSR_CHECK(json_object_set_new(doc, "format", json_string("tessera-manifest")) == 0 &&
                json_object_set_new(doc, "version", json_integer(1)) == 0 &&
                json_object_set_new(doc, "status", json_string(status)) == 0 &&
                json_object_set(doc, "files", files) == 0,
            TSR_ERR_NOMEM, "out of memory writing the manifest");
  TSR_TRY(output_join(path, sizeof path, d->path, OUTPUT_MANIFEST, err));
  TSR_TRY(output_file_open(&f, path, err));
  TSR_CHECK(json_dumpf(doc, f.f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0, TSR_ERR_IO,
            "cannot write %s", path);
  fputc('\n', f.f);
  TSR_TRY(output_file_commit(&f, err));
  snprintf(d->status, sizeof d->status, "%s", status);
  d->dirty = false;
cleanup:
  output_file_discard(&f);
  json_decref(files);
  json_decref(doc);
  return st;
}

void output_folder_close(output_folder_t **d) {
  if (!*d) return;
  tsr_error_t ignored; /* best effort: a full disk may be why the run ends */
  if (strcmp((*d)->status, "running") == 0 &&
      output_folder_manifest(*d, "failed", &ignored) != TSR_OK)
    (*d)->status[0] = '\0';
  if ((*d)->lock >= 0) close((*d)->lock);
  output_list_free(&(*d)->files);
  free(*d);
  *d = NULL;
}

tsr_status output_sync_folder(const char *folder, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int fd = open(folder, O_RDONLY);
  TSR_CHECK(fd >= 0, TSR_ERR_IO, "cannot open the folder %s to sync it: %s", folder,
            strerror(errno));
  if (fsync(fd) != 0 && errno != EINVAL) {
    int e = errno;
    close(fd);
    TSR_FAIL(TSR_ERR_IO, "cannot sync the folder %s: %s", folder, strerror(e));
  }
  close(fd);
cleanup:
  return st;
}
