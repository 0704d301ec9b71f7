/* lbm_surface: the surface data of the flow's bodies (named obstacles), published as
 * surfaces (module.h, module_def_t.surfaces; output.surface_every writes them).
 *
 * A body's points are the fluid cells with a lattice link into one of its solid cells,
 * at their centres, each with
 *   normal                       out of the body: a sphere's or cylinder's exact normal
 *                                at the surface point nearest the cell, an STL mesh's
 *                                nearest triangle's; else -sum of w_i c_i over its links,
 *                                unit (boxes, voxel images);
 *   area                         the surface it stands for: the sum over its links
 *                                along the axes of |n_a| (the staircase's faces across
 *                                axis a add up to the surface's projection on that
 *                                plane); per cell of depth in 2-D;
 *   pressure                     p - p_ref = c_s^2 (rho - rho0) of the cell;
 *   wall_shear_stress            the part along the wall of the viscous traction
 *                                mu (grad u + grad u^T) n, mu = rho0 nu, the gradient
 *                                taken at the wall along the axes it crosses
 *                                (lbm_gradient_wall: exact for a parabolic profile);
 *   wall_shear_stress_magnitude  its length;
 * and with a forces section pressure_coefficient (p - p_ref) / (rho U^2 / 2) and
 * skin_friction_coefficient |tau| / (rho U^2 / 2). The force on the body is close to
 * the sum of area (-p n + tau) (at a wall at rest the normal viscous stress vanishes).
 * A body's STL meshes' triangles come along for the mapping (sim_write_surfaces). The
 * cells are found once per block, at its first surface output. */
#ifndef LBM_SURFACE_H
#define LBM_SURFACE_H

#include "lbm_block.h"
#include "module.h"

typedef struct lbm_surfaces lbm_surfaces_t;

/* The bodies of the options' geometry (o must outlive the surfaces: their names) and
 * their meshes' triangles. */
TSR_NODISCARD tsr_status lbm_surfaces_create(const lbm_options_t *o, lbm_surfaces_t **out,
                                             tsr_error_t *err);
void lbm_surfaces_free(lbm_surfaces_t **s);

/* The surfaces, a body each, at most cap into out (module_def_t.surfaces). */
int lbm_surfaces_list(const lbm_surfaces_t *s, module_surface_t *out, int cap);

/* This process's points of body k (module_def_t.surface_points), after the output sweeps
 * (the gradient input is current). */
TSR_NODISCARD tsr_status lbm_surface_points(lbm_surfaces_t *s, const lbm_ctx_t *c,
                                            patch_t *patch, int k, module_points_t *pts,
                                            tsr_error_t *err);

#endif
