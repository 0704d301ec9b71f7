/* units: physical units of a run (the configuration's "units" section).
 *
 * Without the section everything is in lattice units: lengths in cells, times in steps,
 * densities relative to the lattice density. With it, the keys the modules read through
 * config_measure (config.h) take SI values, converted once, when the configuration is
 * read, into lattice units by the factors below; the time loop never sees a physical
 * value, so a configuration in physical units runs exactly the lattice run of its
 * converted values.
 *
 * The section gives the scales of the problem and how to resolve them:
 *   length L (m), velocity U (m/s), viscosity nu (m^2/s), density rho (kg/m^3) of the
 *   fluid: the physics, Re = U L / nu;
 *   cells (cells across L) or cell_size (dx, m): the resolution in space;
 *   lattice_velocity (U in lattice units), time_step (dt, s) or lattice_viscosity (nu in
 *   lattice units): the resolution in time;
 *   output: "lattice" (default) or "physical": the units of what the run writes.
 * From them: dx = L / cells, dt = lattice_velocity dx / U (or nu_lattice dx^2 / nu), and a
 * lattice density of 1 is rho. A quantity of dimension m^l s^t kg^k is its lattice value
 * times dx^l dt^t (rho dx^3)^k.
 *
 * Physical values are taken as the decimals they were written as (the shortest decimal
 * that reads back as the double: 0.1475, not the double's 0.147499999999999992), and the
 * factors and conversions are computed from them in long double and rounded once: where
 * the decimal arithmetic gives a double exactly (0.1475 m over dx = 0.1 m / 20 is 29.5
 * cells; 0.2 m/s at 0.05 lattice units per 0.3 m/s is 1/30 rounded), that double is the
 * lattice value, so a configuration in physical units gives the lattice values one would
 * write by hand, bit for bit. */
#ifndef UNITS_H
#define UNITS_H

#include <stdbool.h>
#include <stddef.h>

/* The dimension of a quantity: exponents of metre, second and kilogram. */
typedef struct units_dim {
  signed char length, time, mass;
} units_dim_t;

#define UNITS_NONE ((units_dim_t){0, 0, 0})
#define UNITS_LENGTH ((units_dim_t){1, 0, 0})
#define UNITS_AREA ((units_dim_t){2, 0, 0})
#define UNITS_TIME ((units_dim_t){0, 1, 0})
#define UNITS_VELOCITY ((units_dim_t){1, -1, 0})
#define UNITS_VISCOSITY ((units_dim_t){2, -1, 0})
#define UNITS_DENSITY ((units_dim_t){-3, 0, 1})
#define UNITS_MASS ((units_dim_t){0, 0, 1})
#define UNITS_FORCE ((units_dim_t){1, -2, 1})
#define UNITS_FORCE_DENSITY ((units_dim_t){-2, -2, 1}) /* force per volume, N/m^3 */
#define UNITS_ENERGY ((units_dim_t){2, -2, 1})
#define UNITS_PRESSURE ((units_dim_t){-1, -2, 1})
#define UNITS_RATE ((units_dim_t){0, -1, 0}) /* per second: vorticity, strain rate */
#define UNITS_RATE2 ((units_dim_t){0, -2, 0}) /* per second squared: the Q-criterion */

typedef enum units_time_scale {
  UNITS_BY_LATTICE_VELOCITY, /* lattice_velocity given */
  UNITS_BY_TIME_STEP,        /* time_step given */
  UNITS_BY_LATTICE_VISCOSITY /* lattice_viscosity given */
} units_time_scale_t;

/* The inputs, as the section gives them (SI). */
typedef struct units_input {
  double length, velocity, viscosity, density;
  double cells;     /* > 0: cells across length; 0: cell_size gives dx */
  double cell_size;
  units_time_scale_t by;
  double time;      /* the value of the key `by` names */
  bool physical_output;
} units_input_t;

typedef struct units {
  bool on;              /* false: lattice units throughout (all factors 1) */
  bool physical_output; /* outputs in SI units */
  units_input_t in;
  long double dx, dt, mass; /* m per cell, s per step, kg per lattice mass (rho dx^3) */
  double lattice_velocity;  /* U in lattice units */
  double lattice_viscosity; /* nu in lattice units */
  double reynolds;          /* U L / nu */
} units_t;

/* Lattice units: no section. */
units_t units_none(void);

/* The units of the inputs (which must be positive and finite: the reader checks them).
 * Returns false, with a message into why[cap], when they give a non-finite or zero
 * scale (a factor out of range of a double). */
bool units_make(const units_input_t *in, units_t *out, char *why, size_t cap);

/* Physical per lattice: dx^l dt^t mass^k (1 without units). */
long double units_factor(const units_t *u, units_dim_t d);
/* A physical value in lattice units, and back (both the value itself without units). */
double units_to_lattice(const units_t *u, units_dim_t d, double physical);
double units_to_physical(const units_t *u, units_dim_t d, double lattice);
/* The factor outputs apply: units_factor when the run writes physical units, else 1. */
double units_output_factor(const units_t *u, units_dim_t d);

/* The SI unit of a dimension: N, Pa, J and N/m^3 by name, else of kg, m and s ("m/s",
 * "kg/m^3", "1/s^2"); "" for none. */
void units_name(units_dim_t d, char *out, size_t cap);

/* One line on the scales: "dx = 0.005 m, dt = 0.000833 s, Re = U L / nu = 30, lattice
 * velocity 0.05, lattice viscosity 0.0333333; outputs in lattice units". */
void units_describe(const units_t *u, char *out, size_t cap);

#endif
