/* inlet_profile: an inlet's velocity over its face, from a CSV file.
 *
 * The file's first line names its columns: one or two coordinates among x, y, z (axes
 * along the face: not its normal) and one to three velocity components among ux, uy,
 * uz (those not named are 0), each at most once, in any order. Every further line is one
 * point: as many numbers as there are columns. Lines that are empty or start with '#'
 * are skipped. With two coordinates the points must form a full grid: every pair of the
 * two axes' values exactly once, in any order.
 *
 *   y,ux
 *   0,0
 *   20.5,0.0375
 *   41,0.05
 *   ...
 *
 * Coordinates are cell coordinates (cell i spans [i, i + 1)) and velocities lattice
 * units, or metres and m/s where the configuration has units. The table must cover every
 * cell centre of the face along each of its coordinates (0.5 to n - 0.5); between its
 * points the velocity is interpolated linearly (bilinearly with two coordinates), beyond
 * its ends (within half a cell of the face's edges) it is the end value; along an axis of
 * the face the file does not name it is the same. A velocity must stay below 0.4 (lattice
 * units) in each component, as a configured one.
 *
 * Every fault is one message naming the file and, where there is one, the line. Tables
 * are read once per process and file and kept until the process ends (walls are copied
 * by value with the options; they share the table). */
#ifndef INLET_PROFILE_H
#define INLET_PROFILE_H

#include "patch.h"
#include "tsr_error.h"
#include "units.h"

typedef struct inlet_profile inlet_profile_t;

/* The table of the CSV file at path for the face (0..5: x-, x+, y-, ..., z+) of the
 * domain, its values converted from the units u (NULL: lattice units). */
TSR_NODISCARD tsr_status inlet_profile_load(const char *path, int face,
                                            const patch_options_t *domain, const units_t *u,
                                            const inlet_profile_t **out, tsr_error_t *err);

/* The velocity at the point p of the face (lattice units) into u[3]. */
void inlet_profile_velocity(const inlet_profile_t *t, const double p[3], double u[3]);

/* The point of the table whose velocity is the largest (its magnitude), into u[3]: what
 * the checks of speed take as the face's velocity. */
void inlet_profile_peak(const inlet_profile_t *t, double u[3]);

#endif
