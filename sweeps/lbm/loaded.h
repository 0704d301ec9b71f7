/* loaded: what the geometry reads from files (STL meshes, voxel images, inlet profiles),
 * read once per process and placement and kept until the process ends: the options are
 * copied by value, so shapes and walls share what they point to, and a configuration
 * read again (a calibration, a restart's check) finds it again by the same key.
 *
 * A key is a plain struct of the file's path and placement, zeroed before it is filled
 * (it is compared byte for byte). */
#ifndef LOADED_H
#define LOADED_H

#include <stddef.h>

#include "tsr_error.h"

/* The object kept under key (len bytes), or NULL. */
void *loaded_find(const void *key, size_t len);

/* Keeps obj under a copy of key until the process ends, when free_fn(obj) runs. On
 * failure (out of memory) obj is not kept: the caller frees it. */
TSR_NODISCARD tsr_status loaded_keep(const void *key, size_t len, void *obj,
                                     void (*free_fn)(void *obj), tsr_error_t *err);

#endif
