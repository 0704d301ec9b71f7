/* module: a physics module, the unit in which physics comes to tessera.
 *
 * A module reads its own configuration sections, registers its registry items, sets
 * the bs of the blocks it cares about, and declares
 *   fields      the data of a block it allocates (an allocator item of the field's name)
 *               and whose ghost layers travel (extraction, insertion and copy items of
 *               that name; needed only where some sweep reads the field across faces):
 *               components, bytes per value, ghost width per axis, layout per hs;
 *   sweeps      the work of a time step, in order: which fields each reads with their
 *               ghost layers (exchanged first), reads in its own cells, and writes; a
 *               boundary item and a kernel item;
 *   quantities  what output can show (VTK, probes, PNG slices): name, components, the
 *               kernel item that brings them up to date on every hs ("prepare") and a
 *               host sampler; output sweeps, run only where output is due, bring
 *               neighbours' values into scratch fields for quantities that need them.
 * The assembly (sim.h) builds a simulation from the modules the configuration names;
 * the list of modules that exist lives with the program (apps/).
 *
 * Every function of a module_def_t but `read` and `free` is optional (NULL: nothing to
 * do). A module's state is its own: the assembly only passes it back. */
#ifndef MODULE_H
#define MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "field.h"
#include "gpu_field.h"
#include "opencl.h"
#include "patch.h"
#include "registry.h"
#include "simulation.h"
#include "tsr_error.h"

enum {
  MODULE_MAX = 8,            /* modules in one simulation */
  MODULE_MAX_FIELDS = 8,     /* fields of one module */
  MODULE_MAX_SWEEPS = 8,     /* sweeps of one module */
  MODULE_MAX_ACCESS = 8,     /* fields one sweep reads or writes */
  MODULE_MAX_QUANTITIES = 12, /* quantities of one module */
  MODULE_MAX_COMPONENTS = 3, /* components of one quantity */
  MODULE_MAX_VALUES = 48,    /* values of a divergence report, totals of a run */
  MODULE_MAX_SCALARS = 8,    /* published scalars of one module */
  MODULE_FS_MAX = 256        /* characters of a run's fs switches */
};

typedef struct sim sim_t;
typedef struct module_env module_env_t;

/* A field: a block's data of this name (module_declare_field and module_declare_data
 * write it). */
typedef struct module_field {
  const char *name;      /* "<module>.<field>": its allocator, extraction, insertion and
                            copy items carry this name */
  int components;        /* values per cell (0: data of the module's own allocator) */
  int value_bytes;       /* bytes per value */
  int width[3];          /* ghost layers per axis (0: nothing crosses that axis) */
  bool scratch;          /* values made anew before every use (an output sweep's): not
                            in checkpoints */
} module_field_t;

/* A sweep: one phase of the time step. */
typedef struct module_sweep {
  const char *name;                          /* for reports: "<module>.<sweep>" */
  const char *reads_ghosts[MODULE_MAX_ACCESS]; /* fields read across the block's faces:
                                                  their ghost layers must be current */
  int nreads_ghosts;
  const char *reads[MODULE_MAX_ACCESS];      /* fields read in the block's own cells
                                                (any module's, by name) */
  int nreads;
  const char *writes[MODULE_MAX_ACCESS];     /* fields it changes */
  int nwrites;
  const char *boundary;                      /* boundary item; NULL: none */
  const char *kernel;                        /* kernel item */
} module_sweep_t;

/* Fills out[components * cells] (x fastest over the block's interior cells) with the
 * quantity's values, after the prepare item ran on the block. A block the module has
 * nothing in fills the value it stands for (a wall at rest, say). */
typedef tsr_status (*module_sample_fn)(const block_info_t *block, const block_data_t *data,
                                       double *out, void *ctx, tsr_error_t *err);

/* A quantity output can show. */
typedef struct module_quantity {
  const char *name;      /* [a-z0-9_]+, unique in the simulation: "velocity" */
  int components;        /* 1 or 3 */
  const char *columns[MODULE_MAX_COMPONENTS]; /* probe CSV columns ("ux", "uy", "uz") */
  const char *prepare;   /* kernel item run on every local block before sampling (once per
                            output step, shared by the quantities naming it); NULL: none */
  module_sample_fn sample;
  void *ctx;             /* borrowed; lives as long as the module's state */
  bool small_integer;    /* values 0..255 (cell flags): VTK writes them as UInt8 */
  bool wall;             /* the cell mask of pictures: cells with a value != 0 are drawn
                            as walls */
  units_dim_t dim;       /* its dimension (units.h), for output in physical units */
  bool on_request;       /* shown only where an output names it (not in the outputs that
                            show every quantity, nor a slice's default) */
} module_quantity_t;

/* A surface a module publishes (a named body's, say): its points' values, by name, and,
 * for a surface given by triangles (an STL mesh), the triangles onto which output maps
 * them. */
enum { MODULE_MAX_SURFACE_VALUES = 8, MODULE_MAX_SURFACES = 8 };
typedef struct module_surface {
  const char *name;                               /* [A-Za-z0-9_-]+ */
  int nvalues;
  const char *values[MODULE_MAX_SURFACE_VALUES];  /* "pressure", ... */
  int components[MODULE_MAX_SURFACE_VALUES];      /* 1 or 3 */
  units_dim_t dims[MODULE_MAX_SURFACE_VALUES];
  bool plot[MODULE_MAX_SURFACE_VALUES];           /* 2-D: drawn against the angle (one
                                                     component) */
  const double *triangles;                        /* 9 per triangle (3 vertices, lattice
                                                     units: cell x spans [x, x + 1]);
                                                     NULL: none */
  size_t ntriangles;
} module_surface_t;

/* This process's points of a surface: point k in global cell cell[k] (its index
 * (z ny + y) nx + x, at most one point per cell: the files' order) at xyz[3 k] (lattice
 * units), with values[width k ..] (the surface's values in order, their components
 * each). module_points_add appends one. */
typedef struct module_points {
  int64_t n, cap;
  int width;
  int64_t *cell;
  double *xyz, *values;
} module_points_t;
TSR_NODISCARD tsr_status module_points_add(module_points_t *p, int64_t cell, const double xyz[3],
                                           const double *values, tsr_error_t *err);
void module_points_free(module_points_t *p);

/* A number a module publishes for others (a parameter of its physics that another
 * module's physics depends on, e.g. "lbm.viscosity"). */
typedef struct module_scalar {
  const char *name; /* "<module>.<name>" */
  double value;
} module_scalar_t;

/* What a module declares, after register_items. Borrowed from the module's state. */
typedef struct module_decl {
  module_scalar_t scalars[MODULE_MAX_SCALARS];
  int nscalars;
  module_field_t fields[MODULE_MAX_FIELDS];
  int nfields;
  module_sweep_t sweeps[MODULE_MAX_SWEEPS];
  int nsweeps;
  module_quantity_t quantities[MODULE_MAX_QUANTITIES];
  int nquantities;
  module_sweep_t start_sweeps[MODULE_MAX_SWEEPS]; /* run once after every field is
                            allocated, before the first step, every module's in module
                            order, each after the exchange of what it reads across faces
                            (a module's first contribution to an accumulator that needs
                            neighbours' values) */
  int nstart_sweeps;
  const char *start;     /* kernel item run once on every block after the start sweeps,
                            before the first step (e.g. a module's first contribution to
                            an accumulator another module reads); NULL: none */
  module_sweep_t output_sweeps[MODULE_MAX_SWEEPS]; /* run at every step that samples
                            quantities, after their prepare items, every module's in
                            module order, each after the exchange of what it reads across
                            faces (values an output needs from neighbouring cells:
                            gradients) */
  int noutput_sweeps;
} module_decl_t;

/* A field of the field kit, declared once: field_declare (its storage on every hs and its
 * exchange items; env->fields: this process's device programs) and its entry in the
 * module's declaration decl (name, components, value bytes, ghost widths), appended in
 * the order of the calls (the order of the fields in checkpoints). decl NULL: only
 * field_declare. Call it from register_items after filling the rest of *decl. */
TSR_NODISCARD tsr_status module_declare_field(module_decl_t *decl, registry_t *reg,
                                              const module_env_t *env,
                                              const field_spec_t *spec, tsr_error_t *err);
/* Block data of the module's own allocator item called name (no field of the kit: no
 * exchange, not in checkpoints), appended to decl so that the assembly allocates it. */
TSR_NODISCARD tsr_status module_declare_data(module_decl_t *decl, const char *name,
                                             tsr_error_t *err);

/* The scalar called name among decls[0..n) into *value; false if none publishes it. */
bool module_find_scalar(const module_decl_t *decls, int n, const char *name, double *value);
/* The field called name among decls[0..n), or NULL. */
const module_field_t *module_find_field(const module_decl_t *decls, int n, const char *name);

/* Checks that `field` of decls[0..n) holds values of value_bytes (4: sp, 8: dp), the
 * precision of module `module` that reads or writes it in its own cells; the error
 * names "<module>.precision" and both precisions. */
TSR_NODISCARD tsr_status module_check_precision(const module_decl_t *decls, int n,
                                                const char *module, const char *field,
                                                int value_bytes, tsr_error_t *err);

/* Whether a sweep of decls[0..n) reads `field` across block faces. */
bool module_reads_ghosts(const module_decl_t *decls, int n, const char *field);
/* Whether a sweep of decls[0..n) reads `field`, in its own cells or across faces. */
bool module_reads(const module_decl_t *decls, int n, const char *field);
/* Whether a sweep of decls[0..self) (the modules before module self; every module's
 * sweeps run in module order) writes `field`: a module that adds to an accumulator
 * writes it where nobody did before it in the step, adds where somebody did. */
bool module_writes_before(const module_decl_t *decls, int self, const char *field);
/* Removes field from d: its declaration and every sweep's reads and writes of it (a
 * field the module publishes only when some module uses it). */
void module_drop_field(module_decl_t *d, const char *field);

/* Where a run left the stable range. */
typedef struct sim_divergence {
  int64_t step;
  int32_t block;   /* BlockID; -1: every cell is stable */
  int64_t cell[3]; /* global cell */
  int nvalues;     /* the values there, by name ("rho", "ux", ...) */
  const char *names[MODULE_MAX_VALUES];
  double values[MODULE_MAX_VALUES];
} sim_divergence_t;

/* What the assembly gives a module when it registers its items. */
struct module_env {
  const simulation_options_t *so;
  opencl_context_t *cl;        /* this process's OpenCL device; NULL: it has no GPU blocks */
  gpu_field_programs_t *fields; /* the device's field programs (field_declare); NULL with cl */
  const module_decl_t *decls;  /* the declarations of the modules registered before this
                                  one (a module that builds on another's quantities comes
                                  after it in "modules"); ndecls of them */
  int ndecls;
  const char *const *sampled;  /* the quantities the run's modules sample
                                  (module_def_t.samples), nsampled of them */
  int nsampled;
};

/* Whether some output (output.quantities, a probe's quantities, a slice's quantity) or
 * some module (module_def_t.samples) names the quantity: a quantity shown on request
 * (module_quantity_t.on_request) needs its work only then. */
bool module_env_named(const module_env_t *env, const char *quantity);

typedef struct module_def {
  const char *name;            /* "flow": the name in the configuration's "modules" */
  /* Reads and validates its top-level sections (absent ones take their defaults) into a
     new state; config_check_unknown later rejects the sections of modules not listed. */
  tsr_status (*read)(config_t *cfg, const simulation_options_t *so, void **state,
                     tsr_error_t *err);
  void (*free)(void *state);
  /* Its fs switches, e.g. "trt,dp,soa" (static or in its state). */
  const char *(*fs)(const void *state);
  /* One line on the physics for the run's first line, e.g. "trt,dp, nu = 0.01"; cpu and
   * gpu: whether the run has processes of that hs (a switch of one hs alone, such as a
   * CPU layout, is named only where that hs runs). */
  void (*describe)(const void *state, bool cpu, bool gpu, char *out, size_t cap);
  /* Warnings on valid but risky options, one per line, into out; returns how many. */
  int (*warnings)(const void *state, const simulation_options_t *so, char *out, size_t cap);
  /* A new state for the calibration run (hardware.balance.calibrate): the same physics
     on one periodic block, without walls, at rest. */
  tsr_status (*calibration)(const void *state, void **out, tsr_error_t *err);
  /* Registers its items (every process registers every hs, so that any process can
     size any block's messages) and fills *decl. */
  tsr_status (*register_items)(void *state, registry_t *reg, const module_env_t *env,
                               module_decl_t *decl, tsr_error_t *err);
  /* After every module registered: sees every declaration (decls[n], its own is
     decls[self]) and may adapt its own: publish a field only where some module reads
     it (module_drop_field), write or add to an accumulator (module_writes_before). */
  tsr_status (*bind)(void *state, module_decl_t *decls, int n, int self, tsr_error_t *err);
  /* Sets the bs of the blocks (the same on every process), keeping other modules' names. */
  tsr_status (*classify)(void *state, patch_t *patch, registry_t *reg, tsr_error_t *err);
  /* Cells of block b it updates per step (0: none; the block costs it nothing). */
  double (*block_cells)(const void *state, registry_t *reg, const block_info_t *b);
  /* Bytes of what it allocates beyond its fields (the field kit counts those: its
     declared fields' storage and messages) on this process's local blocks, added to
     *host and *device; *largest: the largest single device buffer. NULL: nothing. */
  tsr_status (*local_bytes)(const void *state, registry_t *reg, const patch_t *patch,
                            size_t *host, size_t *device, size_t *largest, tsr_error_t *err);
  /* The stability check at `step` (collective): with prepared, on the values the
     quantities' prepare items computed this step; else its own way. Every rank gets the
     same *out; a failure is TSR_ERR_DIVERGED with a message naming the cell. */
  tsr_status (*check)(void *state, sim_t *sim, int64_t step, bool prepared,
                      sim_divergence_t *out, tsr_error_t *err);
  /* Conserved totals for the summary after the quantities were prepared (collective; the
     same on every rank): names[i] = values[i], at most cap; returns the count in *n. */
  tsr_status (*totals)(void *state, sim_t *sim, const char **names, double *values, int cap,
                       int *n, tsr_error_t *err);
  /* The dimension of its total called name (units.h), for output in physical units;
     NULL: every total is a pure number. */
  units_dim_t (*total_dim)(const void *state, const char *name);
  /* Its sections take physical units where the configuration has a "units" section: it
     reads every dimensional key with config_measure and gives its quantities' and totals'
     dimensions. A module without it is refused in a run with units (its keys would be
     taken as lattice values). */
  bool physical_units;
  /* A restart (collective): every declared field was loaded from a checkpoint of `step`;
     the module sets what else of its state a step depends on that follows from the step
     (e.g. a first-step flag). NULL: nothing. */
  tsr_status (*resume)(void *state, sim_t *sim, int64_t step, tsr_error_t *err);
  /* Key paths of its sections that a restart may change (a CPU layout: the checkpoint
     is hardware-independent), NULL-ended; NULL: none. The rest of its sections must be
     as the checkpoint's run had them. */
  const char *const *restart_keys;
  /* The quantities (any module's, by name) it samples in observe, NULL-ended; NULL: none.
     Read before any module registers its items (module_env_named). */
  const char *const *(*samples)(const void *state);
  /* After every step of a run, and at step 0 before the first (collective), before the
     step's stability check and output: a module that accumulates over steps (time
     statistics) samples quantities here (sim_prepare_outputs, module_quantity_t.sample).
     NULL: nothing. */
  tsr_status (*observe)(void *state, sim_t *sim, int64_t step, tsr_error_t *err);
  /* The surfaces it publishes (output.surface_every writes each: sim_output.h), at most
     cap into out (borrowed from its state); returns how many. NULL: none. */
  int (*surfaces)(const void *state, module_surface_t *out, int cap);
  /* This process's points of surface k, after sim_prepare_outputs, appended to *pts
     (width: the sum of the surface's components). Collective. */
  tsr_status (*surface_points)(void *state, sim_t *sim, int k, module_points_t *pts,
                               tsr_error_t *err);
} module_def_t;

/* One module of a simulation: its definition and state. */
typedef struct module {
  const module_def_t *def;
  void *state;
} module_t;

/* The module called name in defs (NULL-ended), or NULL. */
const module_def_t *module_find(const module_def_t *const *defs, const char *name);

/* Reads "modules": ["flow", ...] from cfg (default: the first of defs) and each named
 * module's sections, in the order given; out[MODULE_MAX]. A name that is not in defs,
 * or given twice, is an error naming the key, the value and the modules there are. */
TSR_NODISCARD tsr_status module_read_all(config_t *cfg, const simulation_options_t *so,
                                         const module_def_t *const *defs, module_t *out,
                                         int *n, tsr_error_t *err);

/* Frees the states of n modules (NULL-safe per entry). */
void module_free_all(module_t *modules, int n);

/* Registers the items of n modules into reg and fills decls[n] and the run's *fs (the
 * union of the modules' switches; their text, "trt,dp,soa", into fs_text[cap] unless
 * NULL); lets every module bind to the others' declarations (module_def_t.bind); checks
 * the declarations (unique field and quantity names, sweeps reading and writing
 * declared fields). Not collective; for sim_create and `tessera plan`. */
TSR_NODISCARD tsr_status module_register_all(module_t *modules, int n, registry_t *reg,
                                             const module_env_t *env, module_decl_t *decls,
                                             uint64_t *fs, char *fs_text, size_t cap,
                                             tsr_error_t *err);

/* The field called name among decls[0..n) as (module, index): *m, *f; false if none. */
bool module_field_index(const module_decl_t *decls, int n, const char *name, int *m, int *f);
/* The first quantity called name among decls[0..n) as (module, index); false if none. */
bool module_quantity_index(const module_decl_t *decls, int n, const char *name, int *m, int *q);
/* The names of every quantity of decls[0..n), "\"a\", \"b\"", into out[cap]. */
void module_quantity_list(const module_decl_t *decls, int n, char *out, size_t cap);
/* Whether name is among names[0..count). */
bool module_name_in(const char *const *names, int count, const char *name);

/* The settings a restart must keep (config_canonical): the document without output,
 * hardware, steps, stop, check_every, units.output and the modules' restart_keys; a new string the
 * caller frees, NULL when out of memory. */
char *module_config_physics(const config_t *doc, const module_t *modules, int n);

#endif
