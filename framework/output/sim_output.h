/* sim_output: the output writers of a simulation (sim.h): VTK, the series of totals,
 * probes and PNG slices, each written into an output folder (output.h). All functions
 * are collective unless they say otherwise. */
#ifndef SIM_OUTPUT_H
#define SIM_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "output.h"
#include "sim.h"
#include "simulation.h"
#include "tsr_error.h"

/* The writers of one run of a simulation and their run state: the VTK steps written so
 * far (for the .pvd) and, on rank 0, the text of every series file. */
typedef struct sim_output sim_output_t;

/* Writers for sim (borrowed: it must outlive them). Not collective. */
TSR_NODISCARD tsr_status sim_output_create(sim_t *sim, sim_output_t **out, tsr_error_t *err);
void sim_output_free(sim_output_t **w);

/* The names (fnmatch patterns relative to the output folder) of the files the output
 * functions below write: what an earlier run may have left in a folder. */
extern const char *const sim_output_patterns[];
enum { SIM_OUTPUT_PATTERNS = 14 };

/* The output functions write into the folder out, every file through a temporary name
 * (output.h), and rank 0 records each file in out's manifest. All after sim_prepare. */

/* VTK (vtk.h) of the quantities so->quantities names (every quantity where it names
 * none; cell data), in so->vtk_files's layout and so->vtk_precision: one image of the
 * domain written by all ranks together, or every rank its own blocks' files and rank 0
 * the step's .pvti; rank 0 then the .pvd of all steps these writers wrote so far. */
TSR_NODISCARD tsr_status sim_write_vtk(sim_output_t *w, output_folder_t *out, int64_t step,
                                       const simulation_options_t *so, tsr_error_t *err);

/* Rank 0 adds a row (step, time (sim_output_time), values[n]) to series.csv (a header
 * "step,time,<names>" first), and the totals of each group, the consecutive names
 * "<group>.<name>" (a body's force, say), also to series_<group>.csv (columns "step,time,
 * <name>..."); it writes each whole file (through a temporary name) unless it did less
 * than 2 s ago (series.h); with final set it always writes. names NULL: no row, only the
 * write. values as they are written (sim_totals_output). Other ranks: no-op; not
 * collective. */
/* Collective, at the end of a run: series.png, a plot of series.csv's ungrouped totals
 * against the time (a panel each), and series_<group>.png of each group's file (a body's
 * force and coefficients); rank 0 draws, listed in the manifest. */
TSR_NODISCARD tsr_status sim_write_series_plots(sim_output_t *w, output_folder_t *out,
                                                tsr_error_t *err);

TSR_NODISCARD tsr_status sim_write_series(sim_output_t *w, output_folder_t *out, int64_t step,
                                          const char **names, const double *values, int n,
                                          bool final, tsr_error_t *err);

/* A sample of probe `index` of the options (collective):
 *  - a line (from, to: max |to - from| + 1 cells, rounded to the nearest cell) without
 *    series: <folder>/probe_<name>_<step>.csv with columns x,y,z and the columns of the
 *    probe's quantities, a row per cell;
 *  - with series: a row of probe_<name>.csv, the step and each cell's columns
 *    (<column>_<x>_<y>_<z>);
 *  - a point (at): a row of probe_<name>.csv, the step and the columns interpolated
 *    trilinearly between the 8 cell centres around it.
 * The series files are rewritten whole (series.h) as they grow and at the end
 * (sim_write_series with final). Rank 0 writes. */
TSR_NODISCARD tsr_status sim_write_probe(sim_output_t *w, output_folder_t *out,
                                         const simulation_probe_t *probe, int index,
                                         int64_t step, tsr_error_t *err);

/* A picture of slice->quantity (the first vector quantity when ""; its magnitude for
 * vectors) on the plane of cells at
 * slice->position across slice->axis, cells of the wall quantity grey, with a legend, as
 * <folder>/slice_<name>_<step>.png (see image.h). Only the plane's cells travel: every
 * rank sends those of its own blocks to rank 0, which assembles and writes the picture.
 * Horizontal in the picture is x for z and y slices and y for x slices; vertical is y
 * for z slices and z otherwise, growing upwards. */
TSR_NODISCARD tsr_status sim_write_png(sim_output_t *w, output_folder_t *out,
                                       const simulation_slice_t *slice, int64_t step,
                                       tsr_error_t *err);

/* Every surface the modules publish (module_def_t.surfaces; after sim_prepare_outputs):
 * the points of every rank gathered on rank 0, in the order of their cells, written in
 * the units the run writes as
 *   surface_<name>_<step>.vtp       a vertex per point, the values as point data;
 *   surface_<name>_<step>_mesh.vtp  a surface given by triangles (an STL mesh): the
 *                                   triangles, each with the values of the point nearest
 *                                   its centroid (cell data);
 *   surface_<name>_<step>.csv/.png  2-D (one cell along z): the points along the contour,
 *                                   by their angle around the points' centroid (from -180
 *                                   degrees), with the angle and the arc length, and a
 *                                   plot of the values the surface marks against the
 *                                   angle. */
TSR_NODISCARD tsr_status sim_write_surfaces(sim_t *sim, output_folder_t *out, int64_t step,
                                            tsr_error_t *err);

/* The writers' run state as a checkpoint keeps it (rank 0): named byte strings, borrowed
 * until the next call or the writers go: "vtk_steps" (each step an i64, little-endian),
 * "series.csv", every "series_<group>.csv" and the probes' "probe_<name>.csv" as they
 * stand; at most cap into x. Returns the count, or -1 when out of memory (cap < 2). */
typedef struct sim_output_extra {
  const char *name;
  const uint8_t *bytes;
  uint64_t len;
} sim_output_extra_t;
int sim_output_state(sim_output_t *w, sim_output_extra_t *x, int cap);

/* One such string back (a restart, rank 0): p[bytes + 1] (p[bytes] is overwritten). A
 * series' last row off the run's series_every is dropped (the earlier run wrote it as
 * it ended); a name that no writer of this run (so) has is skipped. path: the
 * checkpoint, for messages. */
TSR_NODISCARD tsr_status sim_output_restore(sim_output_t *w, const simulation_options_t *so,
                                            const char *path, const char *name, uint8_t *p,
                                            uint64_t bytes, tsr_error_t *err);

#endif
