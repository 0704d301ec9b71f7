/* shan_chen_cpu: the Shan-Chen model on CPU blocks (OpenMP over the block's rows), from the
 * cell arithmetic it shares with its OpenCL program (shan_chen_kernels.h), so that CPU
 * and GPU blocks agree bit for bit. Fields hold doubles (esize 8) or floats (esize 4);
 * psi and rho alike. */
#ifndef SHAN_CHEN_CPU_H
#define SHAN_CHEN_CPU_H

#include "grid.h"
#include "lattice.h"

/* psi = rho_psi (1 - exp(-rho / rho_psi)) in every interior cell (n cells per axis). */
void shan_chen_psi(const int n[3], const grid_field_t *rho, grid_field_t *psi, double rho_psi);

/* F = -G psi(x) sum_i w_i psi(x + c_i) c_i over the stencil l on the cells of r (NULL:
 * every interior cell), into the three components of force: written, or added to where
 * accumulate. psi's ghost layers hold the neighbours' values. */
void shan_chen_force(const grid_field_t *psi, grid_field_t *force, const lattice_t *l, double g,
                     int accumulate, const grid_region_t *r);

#endif
