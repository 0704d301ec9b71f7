/* replay_main: runs a fuzz target's LLVMFuzzerTestOneInput once on every file named on
 * the command line and on every file in a directory named there, for builds without
 * libFuzzer (gcc). Each input is copied into a buffer of exactly its size, so sanitizer
 * builds catch reads past the end as libFuzzer would.
 *
 * Usage: <target>_replay FILE_OR_DIR...
 * Exits non-zero when an argument cannot be read or when no input was found at all
 * (an empty or misnamed corpus must not pass silently). */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads a whole file into a new buffer of exactly its size (1 byte for an empty file,
 * which is passed with size 0). Returns 0 on success. */
static int replay_read(const char *path, uint8_t **data, size_t *size) {
  *data = NULL;
  *size = 0;
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
    return 1;
  }
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  int rc = 0;
  while (buf) {
    if (n == cap) {
      uint8_t *grown = realloc(buf, 2 * cap);
      if (!grown) break;
      buf = grown;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  if (!buf || ferror(f)) {
    fprintf(stderr, "%s: cannot read: %s\n", path, buf ? strerror(errno) : "out of memory");
    rc = 1;
  }
  fclose(f);
  if (rc == 0) {
    /* exact size: an overread of the input is then an overread of the allocation */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
      fprintf(stderr, "%s: out of memory\n", path);
      rc = 1;
    } else {
      if (n) memcpy(exact, buf, n);
      *data = exact;
      *size = n;
    }
  }
  free(buf);
  return rc;
}

static int replay_file(const char *path, long *count) {
  uint8_t *data = NULL;
  size_t size = 0;
  if (replay_read(path, &data, &size) != 0) return 1;
  printf("replay %s (%zu bytes)\n", path, size);
  fflush(stdout);
  LLVMFuzzerTestOneInput(data, size);
  free(data);
  ++*count;
  return 0;
}

static int replay_dir(const char *dir, long *count) {
  struct dirent **names = NULL;
  int n = scandir(dir, &names, NULL, alphasort);
  if (n < 0) {
    fprintf(stderr, "%s: cannot list: %s\n", dir, strerror(errno));
    return 1;
  }
  int rc = 0;
  for (int i = 0; i < n; ++i) {
    const char *name = names[i]->d_name;
    if (name[0] != '.') {
      size_t len = strlen(dir) + 1 + strlen(name) + 1;
      char *path = malloc(len);
      if (!path) {
        fprintf(stderr, "%s: out of memory\n", dir);
        rc = 1;
      } else {
        snprintf(path, len, "%s/%s", dir, name);
        struct stat sb;
        if (stat(path, &sb) != 0) {
          fprintf(stderr, "%s: cannot stat: %s\n", path, strerror(errno));
          rc = 1;
        } else if (S_ISREG(sb.st_mode)) {
          rc |= replay_file(path, count);
        }
        free(path);
      }
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  int rc = 0;
  long count = 0;
  for (int i = 1; i < argc; ++i) {
    struct stat sb;
    if (stat(argv[i], &sb) != 0) {
      fprintf(stderr, "%s: cannot stat: %s\n", argv[i], strerror(errno));
      rc = 1;
    } else if (S_ISDIR(sb.st_mode)) {
      rc |= replay_dir(argv[i], &count);
    } else {
      rc |= replay_file(argv[i], &count);
    }
  }
  if (count == 0) {
    fprintf(stderr, "no inputs found in the arguments\n");
    rc = 1;
  }
  printf("replayed %ld input%s\n", count, count == 1 ? "" : "s");
  return rc;
}
