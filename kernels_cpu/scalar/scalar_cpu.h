/* scalar_cpu: the passive scalar's step on CPU blocks (OpenMP over the block's rows), from
 * the cell arithmetic it shares with its OpenCL program (scalar_cell.h). */
#ifndef SCALAR_CPU_H
#define SCALAR_CPU_H

#include "grid.h"

/* One step on the cells of r (NULL: every interior cell): the values of src (its ghost
 * layers current) into dst (the same dims), with the velocity u (3 components, its ghost
 * layers current) and the diffusivity d, over nd axes (2: z is left alone). walls: bit
 * 2a the block's face at -a is closed (no flux), bit 2a + 1 its face at +a; n the block's
 * interior cells. Values are doubles (esize 8) or floats (4), u's alike. */
void scalar_step(int nd, const int n[3], int walls, double d, const grid_field_t *src,
                 void *dst, const grid_field_t *u, const grid_region_t *r);

#endif
