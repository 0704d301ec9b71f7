/* simulation: the options every run has, read from the configuration.
 *
 *   "domain": {
 *     "cells":    [nx, ny, nz],   required, integers >= 1
 *     "blocks":   [bx, by, bz],   default [1, 1, 1]; 1 <= b <= cells
 *     "periodic": [px, py, pz]    default [false, false, false]
 *   },
 *   "steps": n                    default 1; integer >= 0
 *   "check_every": n              steps between stability checks (default 200; >= 1)
 *   "units": {                    physical units (units.h); absent: lattice units
 *     "length": L, "velocity": U, "viscosity": nu, "density": rho,   SI, required
 *     "cells": n | "cell_size": dx,                 one of them
 *     "lattice_velocity": u | "time_step": dt | "lattice_viscosity": nu_l,   one of them
 *     "output": "lattice" | "physical"              the units outputs are written in
 *   },
 *   "output": {
 *     "folder": "out",            where summary.json, VTK files and probe CSVs go
 *     "progress_every": n,        steps between progress lines; 0: none (default 100)
 *     "vtk_every": n,             steps between VTK outputs; 0: none (default 0)
 *     "vtk_files": "one",         one .vti of the whole domain per output step, written
 *                                 by all processes together (default), or "blocks": one
 *                                 .vti per block and a .pvti index (vtk.h)
 *     "vtk_precision": "float64", the VTK files' real values: float64 (default) or
 *                                 float32 (half the bytes)
 *     "quantities": ["velocity"], what VTK files and probes show (default: every
 *                                 quantity of the run's modules)
 *     "series_plots": true,       series.png, series_<group>.png: plots of the series at
 *                                 the end (default true)
 *     "series_every": n,          steps between rows of series.csv, the modules' totals
 *                                 over time (the fluid mass, a Nusselt number); 0: none
 *                                 (default 0)
 *     "probes": [                 line probes (at most 16)
 *       { "name": "centre", "from": [x, y, z], "to": [x, y, z], "every": n,
 *         "quantities": [...] }   default: output.quantities
 *     ],
 *     "slices": [                 PNG pictures of a quantity (its magnitude for vectors)
 *                                 on a plane of cells (at most 8)
 *       { "name": "mid", "axis": "z", "position": 16, "every": n,
 *         "quantity": "velocity", default: the first vector quantity
 *         "range": [0, 0.1] }     the colour map's range; "first" (default): that of
 *                                 the first picture whose values differ; "each": each
 *                                 picture's own
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
 *     "configurations": [         node configurations (instead of "hs": per process)
 *       { "name": "gpu_node",     [A-Za-z0-9_-]+, unique
 *         "processes": [          the processes of such a node, in rank order on it
 *           { "hs": "gpu",        cpu or gpu
 *             "device": 0,        hs gpu: device index in the platform hardware.opencl
 *                                 selects (default: hardware.opencl's device)
 *             "threads": 8,       hs cpu: OpenMP threads (default: OMP_NUM_THREADS or
 *                                 the node's processors shared out)
 *             "mlups": 400,       throughput for balancing (default: balance.throughput)
 *             "count": 1 }        this many processes alike (default 1)
 *         ] }
 *     ],
 *     "nodes": [                  which node names use which configuration; the first
 *       { "match": "gpu*",        entry whose fnmatch(3) pattern (an exact name, or with
 *         "configuration": "gpu_node" }   * ? [...]) matches the node name wins
 *     ],
 *     "balance": {                weights of the static block -> rank assignment
 *       "throughput": { "cpu": 20, "gpu": 440 },   MLUPS of one process of each hs
 *       "calibrate": false,       true: every process measures its own kernel at start-up
 *       "network_gbs": 10,        GB/s between processes of different nodes
 *       "intranode_gbs": 10,      GB/s between processes of one node (default: network_gbs)
 *       "exchange_gbs": 2.5,      ghost bytes copied or packed per second
 *       "device_gbs": 12,         GB/s between host and device (GPU processes)
 *       "latency_us": 2,          microseconds per message between nodes
 *       "intranode_latency_us": 2 ... within a node (default: latency_us)
 *     }
 *   }
 * A process finds its node name with MPI_Get_processor_name, or TESSERA_NODE_NAME (see
 * node.h); its place among the ranks with the same node name picks its entry.
 * Probe and slice names are [A-Za-z0-9_-]+, unique in their list; "every" is >= 1
 * (default 1).
 * Physics modules read their own sections. */
#ifndef SIMULATION_H
#define SIMULATION_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "opencl.h"
#include "patch.h"
#include "tsr_error.h"
#include "units.h"

enum {
  SIMULATION_PATH_MAX = 256,
  SIMULATION_MAX_PROBES = 16,
  SIMULATION_MAX_SLICES = 8,
  SIMULATION_NAME_MAX = 64,
  SIMULATION_MAX_CONFIGURATIONS = 16,
  SIMULATION_MAX_ENTRIES = 16,    /* process entries per configuration */
  SIMULATION_MAX_NODE_PROCESSES = 4096,
  SIMULATION_MAX_NODE_RULES = 32,
  SIMULATION_MAX_QUANTITIES = 16  /* quantities one output names */
};

/* Quantities an output shows, by name (the modules' quantities; checked by the assembly).
 * n = 0: every quantity of the run. */
typedef struct simulation_quantities {
  char names[SIMULATION_MAX_QUANTITIES][SIMULATION_NAME_MAX];
  int n;
} simulation_quantities_t;

/* A probe: a line of cells (from, to), or a point (at) whose values are interpolated
 * trilinearly between the 8 cell centres around it. A point probe, and a line probe with
 * series, writes one CSV of one row per sample (probe_<name>.csv); a line probe without
 * writes one file per sample (probe_<name>_<step>.csv). */
typedef struct simulation_probe {
  char name[SIMULATION_NAME_MAX]; /* [A-Za-z0-9_-]+, used in file names */
  bool point;                     /* at, not from/to */
  double at[3];                   /* point: the position (cell i spans [i, i + 1)), in the
                                     domain [0, cells] */
  int64_t from[3], to[3];         /* line: global cells, inside the domain */
  bool series;                    /* one CSV of rows (always for a point) */
  int64_t every;                  /* steps between samples, >= 1 (SIMULATION_PROBE_EVERY) */
  simulation_quantities_t quantities; /* its columns; none given: output.quantities */
} simulation_probe_t;

typedef struct simulation_slice {
  char name[SIMULATION_NAME_MAX]; /* [A-Za-z0-9_-]+, used in file names */
  int axis;                       /* normal of the plane: 0 x, 1 y, 2 z */
  int64_t position;               /* global cell index along axis, inside the domain */
  int64_t every;                  /* steps between outputs, >= 1 */
  char quantity[SIMULATION_NAME_MAX]; /* what it shows; "": the first vector quantity */
  int range;                      /* SIMULATION_RANGE_*, or -1: fixed at range_values */
  double range_values[2];         /* the colour map's [min, max] (in the output's units) */
} simulation_slice_t;
/* A slice's colour range: fixed by its first picture whose values are not all equal
 * (default), or each picture's own. */
enum { SIMULATION_RANGE_FIRST = 0, SIMULATION_RANGE_EACH = 1 };
extern const char *const simulation_range_names[];

typedef enum simulation_hs { SIMULATION_HS_CPU = 0, SIMULATION_HS_GPU = 1 } simulation_hs_t;

/* One entry of a node configuration: `count` processes alike. */
typedef struct simulation_process {
  simulation_hs_t hs;
  int device;    /* hs gpu: device index; -1: the one hardware.opencl selects */
  int threads;   /* hs cpu: OpenMP threads; 0: the default */
  double mlups;  /* throughput for balancing; 0: balance.throughput of its hs */
  int count;     /* >= 1 */
} simulation_process_t;

typedef struct simulation_node_config {
  char name[SIMULATION_NAME_MAX];
  simulation_process_t entries[SIMULATION_MAX_ENTRIES];
  int nentries;
} simulation_node_config_t;

typedef struct simulation_node_rule {
  char match[SIMULATION_NAME_MAX * 2]; /* fnmatch(3) pattern of node names */
  int configuration;                   /* index into configurations */
} simulation_node_rule_t;

typedef struct simulation_balance {
  double throughput[2]; /* MLUPS of one process, by simulation_hs_t */
  int64_t cpu_threads;  /* the OpenMP threads of the process throughput[cpu] is for: a CPU
                           process listing its threads weighs throughput[cpu] * threads /
                           cpu_threads */
  bool calibrate;       /* measure each process's own kernel at start-up instead */
  double network_gbs;   /* between processes of different nodes */
  double intranode_gbs; /* between processes of one node; 0: network_gbs */
  double exchange_gbs;  /* ghost bytes one process copies or packs per second: a block's
                           exchange work, to a neighbour of its own process, itself or
                           another process alike */
  double device_gbs;    /* between host and device */
  double process_mb;    /* a process's memory besides its blocks' fields (the program, MPI,
                           OpenMP, an OpenCL runtime): the plan's memory prediction */
  double latency_us;    /* per message between nodes */
  double intranode_latency_us; /* per message within a node; < 0: latency_us */
  char machine[SIMULATION_PATH_MAX]; /* hardware.machine: the file these figures came
                                        from ("": none), as given */
  char machine_name[128]; /* its "name" */
} simulation_balance_t;

/* The figures between processes of one node: intranode_gbs and intranode_latency_us where
 * given, else those between nodes. */
static inline double simulation_intranode_gbs(const simulation_balance_t *b) {
  return b->intranode_gbs > 0 ? b->intranode_gbs : b->network_gbs;
}
static inline double simulation_intranode_latency_us(const simulation_balance_t *b) {
  return b->intranode_latency_us >= 0 ? b->intranode_latency_us : b->latency_us;
}

/* hardware.exchange: how the ghost exchanges of a step are grouped into rounds. */
typedef enum simulation_exchange {
  SIMULATION_EXCHANGE_MERGED,    /* a field travels in the earliest round after its last
                                    writer: fewer rounds, one message per neighbour process
                                    for every field they carry */
  SIMULATION_EXCHANGE_PER_SWEEP  /* each sweep's round carries the fields it reads */
} simulation_exchange_t;

/* hardware.overlap: whether a sweep's items run on the cells that need no late ghost
 * value while its exchange travels (timeloop.h). The results are the same bit for bit
 * either way. */
typedef enum simulation_overlap {
  SIMULATION_OVERLAP_AUTO, /* on in a process that exchanges with a process on another
                              node (a network's transfers run beside its work); off where
                              every neighbour process shares its node (the transfer is the
                              cores' own copy: splitting the work only costs) */
  SIMULATION_OVERLAP_ON,
  SIMULATION_OVERLAP_OFF
} simulation_overlap_t;

/* "auto", "on", "off", NULL: the values of hardware.overlap, by simulation_overlap_t. */
extern const char *const simulation_overlap_names[];

typedef struct simulation_hardware {
  simulation_hs_t hs;   /* every process's hs, when there are no configurations */
  simulation_exchange_t exchange;
  simulation_overlap_t overlap;
  opencl_select_t opencl;
  simulation_node_config_t configurations[SIMULATION_MAX_CONFIGURATIONS];
  int nconfigurations;  /* 0: every process as hs and opencl say */
  simulation_node_rule_t nodes[SIMULATION_MAX_NODE_RULES];
  int nnodes;
  simulation_balance_t balance;
  /* For programs, not configurations: the hs of every block by BlockID, overriding its
     process's (a process then runs CPU and GPU blocks side by side, and every process
     opens its OpenCL device when any block is hs gpu). Borrowed; NULL: every block runs
     on its process's hardware. */
  const simulation_hs_t *block_hs;
} simulation_hardware_t;

/* "cpu" or "gpu": the hs selector name. */
const char *simulation_hs_name(simulation_hs_t hs);

/* "merged", "per_sweep", NULL: the values of hardware.exchange, by simulation_exchange_t. */
extern const char *const simulation_exchange_names[];

/* stop.when_steady: the run ends once a total of its modules (a column of series.csv:
 * "mass", "nusselt", ...) changed by at most tolerance (relative to its largest magnitude)
 * over the samples of the last `window` steps, sampled every `every` steps from step 0. */
typedef struct simulation_steady {
  char total[SIMULATION_NAME_MAX]; /* "": no such stop */
  double tolerance;                /* default 1e-6 */
  int64_t window;                  /* steps, required */
  int64_t every;                   /* steps between samples, default window / 10, at least
                                      SIMULATION_PROBE_EVERY (at most window) */
} simulation_steady_t;

/* The default steps between samples of a probe (and the least default of a steady-state
 * window's samples). A sample brings the quantities up to date on every block and copies
 * the probe's blocks: 1.2-3.5 steps' time on one block of 64^3 to 128^3 cells (D3Q19 DP,
 * docs/performance.md), so every 500 steps costs at most 0.7% of the run. */
enum { SIMULATION_PROBE_EVERY = 500 };

/* The most samples a steady-state window holds (window / every + 1). */
enum { SIMULATION_MAX_STEADY_SAMPLES = 1 << 20 };

/* output.vtk_files and output.vtk_precision, in the order of their names. */
enum { SIMULATION_VTK_ONE = 0, SIMULATION_VTK_BLOCKS = 1 };
enum { SIMULATION_VTK_FLOAT64 = 0, SIMULATION_VTK_FLOAT32 = 1 };

typedef struct simulation_options {
  patch_options_t domain;
  int64_t steps;
  int64_t check_every;
  char output_folder[SIMULATION_PATH_MAX];
  int64_t progress_every;
  int64_t vtk_every;
  int vtk_files;     /* SIMULATION_VTK_ONE or SIMULATION_VTK_BLOCKS */
  int vtk_precision; /* SIMULATION_VTK_FLOAT64 or SIMULATION_VTK_FLOAT32 */
  simulation_quantities_t quantities; /* of VTK output and probes */
  int64_t series_every;       /* steps between rows of series.csv; 0: none */
  int64_t surface_every;      /* steps between the surfaces' files (a body's surface data,
                                 module_def_t.surfaces); 0: none */
  bool series_plots;          /* series.png and series_<group>.png at the end (default) */
  int64_t checkpoint_every;   /* steps between checkpoints; 0: none */
  double checkpoint_interval; /* wall-clock seconds between checkpoints; 0: none */
  int64_t checkpoint_keep;    /* the newest checkpoints kept, >= 1 (default 2) */
  simulation_probe_t probes[SIMULATION_MAX_PROBES];
  int nprobes;
  simulation_slice_t slices[SIMULATION_MAX_SLICES];
  int nslices;
  simulation_hardware_t hardware;
  simulation_steady_t steady;
  units_t units;                    /* "units" (units.h); off: lattice units */
  char source[SIMULATION_PATH_MAX]; /* the configuration's file name, for messages */
} simulation_options_t;

/* The OpenCL device a process opens: hardware.opencl, with the device index of its
 * process entry where the entry gives one. */
opencl_select_t simulation_process_device(const simulation_hardware_t *h,
                                          const simulation_process_t *p);

simulation_options_t simulation_options_default(void);
TSR_NODISCARD tsr_status simulation_options_validate(const simulation_options_t *o, tsr_error_t *err);

/* Reads "domain", "steps", "check_every", "units", "output", "hardware" and "stop" from the
 * top level of cfg and validates them; with units, sets cfg's units (config_set_units)
 * before it reads the probes' positions, so that they and every module's measures read
 * after it are converted. */
TSR_NODISCARD tsr_status simulation_options_read(config_t *cfg, simulation_options_t *o,
                                                 tsr_error_t *err);

#endif
