/* ghost_check: test fields for the ghost exchange, used by `tessera exchange-demo` and
 * the MPI tests.
 *
 * A field (default name "ghost_check.field") holds `comps` doubles per cell in a CPU
 * layout (AoS or SoA) with ghost layers of the widths given per axis. Its kernel
 * (default "ghost_check.fill") writes into every interior cell the code of its global
 * cell and component (ghost_check_code, components numbered from first_comp, so that
 * several fields hold different codes) and GHOST_CHECK_EMPTY into every ghost cell.
 * After an exchange, ghost_check_verify compares every cell of every local block with
 * what it must hold: interior cells their own code; a ghost cell within the ghost widths
 * the code of the global cell it mirrors (wrapped on periodic axes, several times round
 * a block thinner than the ghost layer), GHOST_CHECK_EMPTY where the domain ends or
 * beyond the width along some axis (e.g. along z for a width of 0 there).
 * The field is declared through the field kit (field.h), so it lives and travels on CPU
 * blocks (either layout) and GPU blocks alike; the fill kernel and the check serve both. */
#ifndef GHOST_CHECK_H
#define GHOST_CHECK_H

#include <stdint.h>

#include "config.h"
#include "gpu_field.h"
#include "grid.h"
#include "patch.h"
#include "registry.h"
#include "tsr_error.h"

enum { GHOST_CHECK_MAX_COMPS = 4, GHOST_CHECK_MAX_CELLS = 1 << 16 };
#define GHOST_CHECK_EMPTY (-1.0)
#define GHOST_CHECK_FIELD "ghost_check.field"
#define GHOST_CHECK_FILL "ghost_check.fill"

typedef struct ghost_check_options {
  const char *field;  /* registry name of the field (copied) */
  const char *fill;   /* registry name of its fill kernel (copied) */
  int width[3];       /* ghost cells along each axis, 0..DIRECTION_MAX_WIDTH */
  grid_layout_t layout;
  int comps;          /* values per cell, 1..GHOST_CHECK_MAX_COMPS - first_comp */
  int first_comp;     /* component number of the first value in the codes */
} ghost_check_options_t;

/* GHOST_CHECK_FIELD and GHOST_CHECK_FILL, width 1 along every axis, AoS, 2 components
 * from 0. */
ghost_check_options_t ghost_check_options_default(void);

/* Reads the optional "exchange" section of a configuration into o (which holds the
 * defaults): "ghost": [wx, wy, wz] (0..DIRECTION_MAX_WIDTH each), "layout": "aos" or
 * "soa". */
TSR_NODISCARD tsr_status ghost_check_options_read(config_t *cfg, ghost_check_options_t *o,
                                                  tsr_error_t *err);

/* gpu: this process's device programs for its GPU blocks, NULL where it has none. */
TSR_NODISCARD tsr_status ghost_check_register(registry_t *reg, gpu_field_programs_t *gpu,
                                              const ghost_check_options_t *opts,
                                              tsr_error_t *err);

/* Exact (below 2^53) and distinct for every global cell and component of domains of
 * up to GHOST_CHECK_MAX_CELLS cells per axis. */
double ghost_check_code(int64_t gx, int64_t gy, int64_t gz, int comp);

typedef struct ghost_check_report {
  int64_t cells;          /* cells compared, ghosts included */
  int64_t ghost_cells;    /* ghost cells compared */
  int64_t filled[4];      /* ghost cells that hold a neighbour's value, by direction
                             order: [1] faces, [2] edges, [3] corners */
  int64_t empty;          /* ghost cells left empty: the domain ends, or beyond a width */
  int64_t mismatches;     /* values that differ */
} ghost_check_report_t;

/* Checks every cell of every local block of the field with these options (local only;
 * reduce the status across ranks). The first mismatch is described in err; the counts
 * cover all blocks. */
TSR_NODISCARD tsr_status ghost_check_verify(const patch_t *patch, int data_id,
                                            const ghost_check_options_t *opts,
                                            ghost_check_report_t *report, tsr_error_t *err);

#endif
