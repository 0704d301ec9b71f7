/* grow: room for one more item at the end of a growing array. */
#ifndef GROW_H
#define GROW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* Makes *items (of *cap items of size bytes) hold at least count + 1 items, doubling its
 * capacity (first items at first). False, with *items and *cap unchanged, when memory or
 * the size arithmetic runs out. */
static inline bool grow_for_one(void **items, size_t *cap, size_t count, size_t size,
                                size_t first) {
  if (count < *cap) return true;
  size_t want = *cap ? 2 * *cap : first;
  if (want <= count || want > SIZE_MAX / size) return false;
  void *grown = realloc(*items, want * size);
  if (!grown) return false;
  *items = grown;
  *cap = want;
  return true;
}

#endif
