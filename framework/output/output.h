/* output: files that are never half-written, and the folder a run owns.
 *
 * An output file is written to a unique temporary name beside it (".<name>.tmp-XXXXXX",
 * created with mkstemp, so two writers never share one) and renamed into place once it
 * is complete: a reader, a crash or a full disk never leaves half a file under the
 * final name, and a file that could not be completed is removed.
 *
 * A run owns its output folder (output_folder_open):
 *  - a lock (".tessera.lock", flock) refuses a second run into the same folder while the
 *    first one lives; the lock goes with the process, so a killed run leaves none;
 *  - output of an earlier run there (the files its manifest lists, or temporary files of
 *    a run that was killed) makes the run refuse to start, unless it was asked to
 *    overwrite: then exactly those files are removed first (folders they leave empty
 *    too) and nothing else in the folder is touched;
 *  - a file matching the caller's patterns that no manifest lists (a user's file, or one
 *    a killed run wrote but had not listed yet) makes the run refuse in every mode, with
 *    the names; it is never removed;
 *  - every rank checks that it can create a file there before step 0;
 *  - rank 0 keeps a manifest (manifest.json) of every file the run wrote, rewritten
 *    whole whenever the list or the status changes:
 *      {"format": "tessera-manifest", "version": 1, "status": "running" | "completed" |
 *       "diverged" | "failed", "files": ["summary.json", ...]}
 *    with paths relative to the folder, sorted. */
#ifndef OUTPUT_H
#define OUTPUT_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "tsr_error.h"

enum { OUTPUT_PATH_MAX = 4096 };

typedef struct output_file {
  FILE *f; /* write here between output_file_open and output_file_commit */
  char path[OUTPUT_PATH_MAX];
  char tmp[OUTPUT_PATH_MAX + 32];
} output_file_t;

/* Opens a new temporary file beside path (binary mode, permissions as the umask allows). */
TSR_NODISCARD tsr_status output_file_open(output_file_t *o, const char *path, tsr_error_t *err);

/* Flushes, checks and closes the temporary file and renames it to path. On failure the
 * temporary file is removed and path is left as it was. */
TSR_NODISCARD tsr_status output_file_commit(output_file_t *o, tsr_error_t *err);

/* Closes and removes the temporary file of a write that is given up (no-op when closed). */
void output_file_discard(output_file_t *o);

/* Creates the folder path and every missing parent (like mkdir -p); an existing folder
 * is fine, a file of that name is an error. */
TSR_NODISCARD tsr_status output_make_folder(const char *path, tsr_error_t *err);

/* fsync of a folder, so that a rename in it is on disk (a file system that cannot sync a
 * folder is fine). */
TSR_NODISCARD tsr_status output_sync_folder(const char *folder, tsr_error_t *err);

typedef struct output_folder output_folder_t;

/* Collective. Rank 0 creates the folder, takes its lock, finds the output of an earlier
 * run (see above: patterns[npatterns] are fnmatch patterns of paths relative to the
 * folder, one "/" at most) and removes it when overwrite is set or refuses otherwise,
 * and writes the manifest with status "running"; then every rank checks that it can
 * write there. The same error on every rank. */
/* What output_folder_open does with an earlier run's output there. */
typedef enum output_mode {
  OUTPUT_NEW,       /* refuse to start */
  OUTPUT_OVERWRITE, /* remove it first */
  OUTPUT_CONTINUE   /* keep it and list it in the manifest (a restart going on from a
                       checkpoint); only temporary files of a killed run are removed */
} output_mode_t;

TSR_NODISCARD tsr_status output_folder_open(MPI_Comm comm, const char *path,
                                            const char *const *patterns, int npatterns,
                                            output_mode_t mode, output_folder_t **out,
                                            tsr_error_t *err);

const char *output_folder_path(const output_folder_t *d);

/* Rank 0: records a file (path relative to the folder) the run wrote, or is about to
 * write, for the manifest. Other ranks: no-op. */
TSR_NODISCARD tsr_status output_folder_add(output_folder_t *d, const char *relative,
                                           tsr_error_t *err);

/* Rank 0: removes a file the run wrote (path relative to the folder) and its entry in the
 * manifest (an older checkpoint past checkpoint_keep). Other ranks: no-op. */
TSR_NODISCARD tsr_status output_folder_remove(output_folder_t *d, const char *relative,
                                              tsr_error_t *err);

/* The path of a file in the folder (into path, cap bytes), its name relative to the folder
 * formatted as printf does; rank 0 records it (output_folder_add). */
TSR_NODISCARD tsr_status output_folder_file(output_folder_t *d, char *path, size_t cap,
                                            tsr_error_t *err, const char *format, ...)
    __attribute__((format(printf, 5, 6)));

/* Rank 0: rewrites the manifest with this status (a no-op when neither the status nor
 * the list changed since the last write). Other ranks: no-op. */
TSR_NODISCARD tsr_status output_folder_manifest(output_folder_t *d, const char *status,
                                                tsr_error_t *err);

/* Rank 0: a manifest still "running" becomes "failed" (as far as it can be written: the
 * run ends on an error). Releases the lock and frees *d. */
void output_folder_close(output_folder_t **d);

#endif
