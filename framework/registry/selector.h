/* selector: interned names of the three selector kinds, as ids and uint64_t bitsets.
 *
 * fs (functionality selector): switches of a simulation, such as srt/trt or sp/dp; a
 *    simulation has a set of them on at once.
 * hs (hardware selector): the hardware of a process; "cpu" is id 0 and "gpu" id 1 in
 *    every table.
 * bs (block selector): what a block simulates ("fluid", "solid", ...).
 * Each kind holds at most 64 names; names are 1..31 characters of [a-z0-9_].
 *
 * Expressions (used by registry items):
 *   fs: "*" (any), or names joined by ',' that must all be on; a name written "!name"
 *       must be off. Example: "trt,dp,!force".
 *   hs, bs: "*" (any), or alternatives joined by '|'. Example: "fluid|fluid_boundary".
 * A block carries a set of bs (e.g. fluid and thermal, as waLBerla's selector sets); a
 * bs expression matches a block whose set holds one of its alternatives. */
#ifndef SELECTOR_H
#define SELECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "tsr_error.h"

typedef enum selector_kind { SELECTOR_FS = 0, SELECTOR_HS = 1, SELECTOR_BS = 2 } selector_kind_t;

enum { SELECTOR_MAX = 64, SELECTOR_NAME_MAX = 31, SELECTOR_HS_CPU = 0, SELECTOR_HS_GPU = 1 };

typedef struct selector_table selector_table_t;

TSR_NODISCARD tsr_status selector_table_create(selector_table_t **out, tsr_error_t *err);
void selector_table_free(selector_table_t **table);

/* Returns the id of name, adding it when new. */
TSR_NODISCARD tsr_status selector_intern(selector_table_t *table, selector_kind_t kind,
                                         const char *name, uint32_t *id, tsr_error_t *err);

/* Id of an existing name; error listing the known names when it is unknown. */
TSR_NODISCARD tsr_status selector_find(const selector_table_t *table, selector_kind_t kind,
                                       const char *name, uint32_t *id, tsr_error_t *err);

/* Name of an id (borrowed), or "?" for an unknown id. */
const char *selector_name(const selector_table_t *table, selector_kind_t kind, uint32_t id);

/* "fs", "hs" or "bs". */
const char *selector_kind_name(selector_kind_t kind);

/* Parses an expression (see above), interning its names. For fs, *on gets the names that
 * must be on and *off those that must be off; for hs and bs, *on gets the alternatives
 * and *off is 0. "*" gives *on = *off = 0 for fs and all bits for hs and bs. */
TSR_NODISCARD tsr_status selector_parse(selector_table_t *table, selector_kind_t kind,
                                        const char *expr, uint64_t *on, uint64_t *off,
                                        tsr_error_t *err);

/* Writes the names of the bits as "a,b" (fs) or "a|b" (hs, bs) into out; "*" for all
 * bits of hs/bs; "{}" for none. Returns out. */
char *selector_format(const selector_table_t *table, selector_kind_t kind, uint64_t bits,
                      char *out, size_t cap);

/* Writes the names of the bits as a set, "{a,b}" ("{}" for none), for any kind: how a
 * block's bs set reads in messages. Returns out. */
char *selector_format_set(const selector_table_t *table, selector_kind_t kind, uint64_t bits,
                          char *out, size_t cap);

#endif
