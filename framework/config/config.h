/* config: JSON configuration documents, read through Jansson, with typed, strict readers.
 *
 * Only this module sees Jansson. A parsed document (config_t) hands out borrowed object
 * nodes (config_node_t); modules read their own sections with the typed readers below,
 * so a new sweep reads its section without an edit here. Every reader records the key
 * it asked for in its object, present or not; config_check_unknown then rejects every
 * key that nobody asked for, listing the keys that are allowed there. Keys given twice
 * are rejected when parsing (JSON_REJECT_DUPLICATES).
 *
 * Messages start with the document's source (file name) and name the key path
 * ("domain.cells[1]"), the value and what is allowed; syntax errors give Jansson's
 * line:column. Readers leave *value untouched when the key is absent and not required,
 * so callers pass their default in. */
#ifndef CONFIG_H
#define CONFIG_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tsr_error.h"
#include "units.h"

typedef struct config config_t;
typedef struct config_node config_node_t;

/* Reads a whole file into a new NUL-terminated buffer the caller frees. */
TSR_NODISCARD tsr_status config_read_file(const char *path, char **text, size_t *len,
                                          tsr_error_t *err);

/* Parses len bytes of JSON text (no NUL needed); source names it in messages. The top
 * level must be an object. */
TSR_NODISCARD tsr_status config_parse(const char *text, size_t len, const char *source,
                                      config_t **out, tsr_error_t *err);

/* Collective: rank 0 reads the file and sends its text to every rank, every rank parses
 * it, and all ranks return the same verdict. */
TSR_NODISCARD tsr_status config_load(MPI_Comm comm, const char *path, config_t **out,
                                     tsr_error_t *err);

void config_free(config_t **cfg);

/* An override from the command line (`--set PATH=VALUE`), applied to the document before
 * anything reads it, so that the value is validated exactly as if it were in the file.
 * PATH is a key path as messages write it ("lbm.viscosity", "obstacles[1].center"):
 * missing objects on the way are made, an array item must exist. VALUE is JSON text
 * ("0.01", "[128,128,1]", "\"D3Q27\"", "{...}"). Every fault (no '=', an empty key, a
 * value that is not JSON, a path through a number or past an array's end) is one
 * TSR_ERR_INVALID message naming the assignment (the document is then only fit to be
 * freed). Once a reader has run, overrides are refused (TSR_ERR_INVALID). */
TSR_NODISCARD tsr_status config_set(config_t *cfg, const char *assignment, tsr_error_t *err);

/* The same for a string value from a command-line option (named in messages, e.g.
 * "--output"): value is the text itself, no quotes. */
TSR_NODISCARD tsr_status config_set_string(config_t *cfg, const char *option, const char *path,
                                           const char *value, tsr_error_t *err);

/* A 64-bit hash (FNV-1a) of the document with the key paths skip[0..nskip) left out
 * ("output", "lbm.cpu_layout"; absent ones are fine), over its text with sorted keys:
 * the same for documents that say the same thing, key order and spacing aside. A
 * checkpoint keeps the hash of the settings a restart may not change. */
uint64_t config_hash(const config_t *cfg, const char *const *skip, size_t nskip);

/* The text config_hash hashes (compact JSON, keys sorted), in a new buffer the caller
 * frees; NULL when out of memory. */
char *config_canonical(const config_t *cfg, const char *const *skip, size_t nskip);

/* FNV-1a 64 of a text (config_hash of a document is this of its config_canonical). */
uint64_t config_text_hash(const char *text);

/* Where two JSON texts first differ, in words, into out (cap bytes): "lbm.viscosity is
 * 0.05 there, 0.06 here", "thermal is missing here"; false when they say the same (or
 * one does not parse: "" then). */
bool config_difference(const char *there, const char *here, char *out, size_t cap);

/* The document as JSON text (two-space indent, keys in their order, a final newline),
 * overrides included, into a new buffer the caller frees; NULL when out of memory. */
char *config_text(const config_t *cfg);

/* The units of the document's measures (config_measure): a copy of *u. The reader of the
 * "units" section sets them before any module reads its sections; without, lattice
 * units. */
void config_set_units(config_t *cfg, const units_t *u);
/* The document's units (lattice units where none were set); borrowed. */
const units_t *config_units(const config_t *cfg);

const char *config_source(const config_t *cfg);
/* The path of a file a configuration names: as it is where absolute, else beside the
 * configuration's file (its folder). */
void config_path_beside(const config_t *cfg, const char *file, char *path, size_t cap);
config_node_t *config_root(config_t *cfg);
/* Key path of a node: "" for the top level, "domain", "obstacles[2]". */
const char *config_path(const config_node_t *node);

/* An object; *out = NULL when absent and not required. */
TSR_NODISCARD tsr_status config_object(config_node_t *node, const char *key, bool required,
                                       config_node_t **out, tsr_error_t *err);
TSR_NODISCARD tsr_status config_int(config_node_t *node, const char *key, bool required,
                                    int64_t min, int64_t max, int64_t *value, tsr_error_t *err);
/* Reals accept integers too. */
TSR_NODISCARD tsr_status config_real(config_node_t *node, const char *key, bool required,
                                     double min, double max, double *value, tsr_error_t *err);
/* A number of dimension dim (units.h): where the document has units (config_set_units),
 * the value is in SI units and *value gets it in lattice units; min and max bound the
 * lattice value, and a message names the value, its unit, its lattice value and the
 * allowed range in both. Without units, config_real. */
TSR_NODISCARD tsr_status config_measure(config_node_t *node, const char *key, bool required,
                                        units_dim_t dim, double min, double max, double *value,
                                        tsr_error_t *err);
TSR_NODISCARD tsr_status config_measure3(config_node_t *node, const char *key, bool required,
                                         units_dim_t dim, double min, double max,
                                         double value[3], tsr_error_t *err);
TSR_NODISCARD tsr_status config_bool(config_node_t *node, const char *key, bool required,
                                     bool *value, tsr_error_t *err);
TSR_NODISCARD tsr_status config_int3(config_node_t *node, const char *key, bool required,
                                     int64_t min, int64_t max, int64_t value[3], tsr_error_t *err);
TSR_NODISCARD tsr_status config_real3(config_node_t *node, const char *key, bool required,
                                      double min, double max, double value[3], tsr_error_t *err);
TSR_NODISCARD tsr_status config_bool3(config_node_t *node, const char *key, bool required,
                                      bool value[3], tsr_error_t *err);
/* The index of s in names (NULL-terminated), or -1 where it is not there (or s is NULL). */
int config_name_index(const char *const *names, const char *s);
/* A string that must be one of choices (NULL-terminated); *value gets its index. */
TSR_NODISCARD tsr_status config_choice(config_node_t *node, const char *key, bool required,
                                       const char *const *choices, int *value, tsr_error_t *err);
/* Either one of choices (a string; *choice its index; choices has at least two) or a range
 * [min, max] of finite numbers with min < max (*choice -1, range[2]); untouched when the
 * key is absent. */
TSR_NODISCARD tsr_status config_choice_or_range(config_node_t *node, const char *key,
                                                const char *const *choices, int *choice,
                                                double range[2], tsr_error_t *err);
TSR_NODISCARD tsr_status config_string(config_node_t *node, const char *key, bool required,
                                       char *value, size_t cap, tsr_error_t *err);
/* An array of at most max strings of at most cap - 1 characters each, into
 * values[max * cap] (string i at values + i * cap) and *count; both untouched when the
 * key is absent and not required. */
TSR_NODISCARD tsr_status config_strings(config_node_t *node, const char *key, bool required,
                                        size_t max, size_t cap, char *values, size_t *count,
                                        tsr_error_t *err);
/* An array of objects: its length (0 when absent), and its items as nodes. */
TSR_NODISCARD tsr_status config_list(config_node_t *node, const char *key, size_t *count,
                                     tsr_error_t *err);
TSR_NODISCARD tsr_status config_list_item(config_node_t *node, const char *key, size_t i,
                                          config_node_t **out, tsr_error_t *err);

/* Rejects every key nobody asked for, in every object that was read. */
TSR_NODISCARD tsr_status config_check_unknown(const config_t *cfg, tsr_error_t *err);

#endif
