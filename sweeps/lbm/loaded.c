#include "loaded.h"

#include <stdlib.h>
#include <string.h>

typedef struct loaded_entry {
  struct loaded_entry *next;
  void *obj;
  void (*free_fn)(void *obj);
  size_t len;
  unsigned char key[];
} loaded_entry_t;

static loaded_entry_t *loaded_list;

static void loaded_clear(void) {
  while (loaded_list) {
    loaded_entry_t *e = loaded_list;
    loaded_list = e->next;
    e->free_fn(e->obj);
    free(e);
  }
}

void *loaded_find(const void *key, size_t len) {
  for (const loaded_entry_t *e = loaded_list; e; e = e->next)
    if (e->len == len && memcmp(e->key, key, len) == 0) return e->obj;
  return NULL;
}

tsr_status loaded_keep(const void *key, size_t len, void *obj, void (*free_fn)(void *obj),
                       tsr_error_t *err) {
  tsr_status st = TSR_OK;
  loaded_entry_t *e = malloc(sizeof *e + len);
  TSR_CHECK(e, TSR_ERR_NOMEM, "out of memory keeping a file's contents");
  if (!loaded_list) atexit(loaded_clear);
  *e = (loaded_entry_t){.next = loaded_list, .obj = obj, .free_fn = free_fn, .len = len};
  memcpy(e->key, key, len);
  loaded_list = e;
cleanup:
  return st;
}
