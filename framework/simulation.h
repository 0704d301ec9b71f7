/* simulation: the options every run has, read from the configuration.
 *
 *   "domain": {
 *     "cells":    [nx, ny, nz],   required, integers >= 1
 *     "blocks":   [bx, by, bz],   default [1, 1, 1]; 1 <= b <= cells
 *     "periodic": [px, py, pz]    default [false, false, false]
 *   },
 *   "steps": n                    default 1; integer >= 0
 *   "output": {
 *     "folder": "out",            where summary.json, VTK files and probe CSVs go
 *     "progress_every": n,        steps between progress lines; 0: none (default 100)
 *     "vtk_every": n,             steps between VTK outputs; 0: none (default 0)
 *     "probes": [                 line probes (at most 16)
 *       { "name": "centre", "from": [x, y, z], "to": [x, y, z], "every": n }
 *     ],
 *     "slices": [                 PNG pictures of |u| on a plane of cells (at most 8)
 *       { "name": "mid", "axis": "z", "position": 16, "every": n }
 *     ]
 *   },
 *   "hardware": {                 what every process runs its blocks on
 *     "hs": "cpu",                cpu (default: OpenMP threads) or gpu (an OpenCL device)
 *     "opencl": {                 which OpenCL device (hs gpu); default: the first
 *       "platform": 0,            platform index, or
 *       "platform_name": "NVIDIA" a substring of the platform's name (not both)
 *       "device": 0,              device index within the platform, or
 *       "device_name": "H100"     a substring of the device's name (not both)
 *     },
 *     "kernel_sources": "dir"     OpenCL sources read from this folder instead of the
 *   }                             ones built in (kernel development)
 * Probe and slice names are [A-Za-z0-9_-]+, unique in their list; "every" is >= 1
 * (default 1).
 * Sweeps read their own sections (see lbm_options_read). */
#ifndef SIMULATION_H
#define SIMULATION_H

#include <stdint.h>

#include "config.h"
#include "opencl.h"
#include "patch.h"
#include "tsr_error.h"

enum {
  SIMULATION_PATH_MAX = 256,
  SIMULATION_MAX_PROBES = 16,
  SIMULATION_MAX_SLICES = 8,
  SIMULATION_NAME_MAX = 64
};

typedef struct simulation_probe {
  char name[SIMULATION_NAME_MAX]; /* [A-Za-z0-9_-]+, used in file names */
  int64_t from[3], to[3];         /* global cells, inside the domain */
  int64_t every;                  /* steps between outputs, >= 1 */
} simulation_probe_t;

typedef struct simulation_slice {
  char name[SIMULATION_NAME_MAX]; /* [A-Za-z0-9_-]+, used in file names */
  int axis;                       /* normal of the plane: 0 x, 1 y, 2 z */
  int64_t position;               /* global cell index along axis, inside the domain */
  int64_t every;                  /* steps between outputs, >= 1 */
} simulation_slice_t;

typedef enum simulation_hs { SIMULATION_HS_CPU = 0, SIMULATION_HS_GPU = 1 } simulation_hs_t;

typedef struct simulation_hardware {
  simulation_hs_t hs;
  opencl_select_t opencl;
  char kernel_sources[SIMULATION_PATH_MAX]; /* "": the sources built in */
} simulation_hardware_t;

/* "cpu" or "gpu": the hs selector name. */
const char *simulation_hs_name(simulation_hs_t hs);

typedef struct simulation_options {
  patch_options_t domain;
  int64_t steps;
  char output_folder[SIMULATION_PATH_MAX];
  int64_t progress_every;
  int64_t vtk_every;
  simulation_probe_t probes[SIMULATION_MAX_PROBES];
  int nprobes;
  simulation_slice_t slices[SIMULATION_MAX_SLICES];
  int nslices;
  simulation_hardware_t hardware;
} simulation_options_t;

simulation_options_t simulation_options_default(void);
TSR_NODISCARD tsr_status simulation_options_validate(const simulation_options_t *o, tsr_error_t *err);

/* Reads "domain", "steps", "output" and "hardware" from the top level of cfg and validates them. */
TSR_NODISCARD tsr_status simulation_options_read(config_t *cfg, simulation_options_t *o,
                                                 tsr_error_t *err);

#endif
