/* mesh: a closed triangle mesh (stl.h) placed in the domain, as a solid shape of the
 * geometry: whether a point lies inside, and where a segment enters it.
 *
 * Inside: the parity of the crossings of the ray from the point along +x with the
 * triangles. The triangles are binned by their extent in (y, z), one bin per cell, so a
 * query tests the few triangles of one bin. The ray starts from the point moved by
 * (0, 1e-7 pi, 1e-7 e) cells in y and z: a ray through an edge or a vertex shared by
 * triangles would count it twice or not at all; the fixed shift makes that as good as
 * impossible for the meshes people make (vertices on round numbers), and changes the answer
 * only for points within 3e-7 cells of the surface. Entry of a segment: the nearest
 * intersection (Moeller and Trumbore) with the triangles of the bins it crosses.
 *
 * Meshes are loaded once per process and placement, kept until the process ends (shapes
 * are copied by value with the options; they share the mesh). */
#ifndef MESH_H
#define MESH_H

#include <stdbool.h>

#include "tsr_error.h"

typedef struct geometry_mesh geometry_mesh_t;

/* The mesh of an STL file (stl_read, stl_check_closed), placed by stl_place(scale,
 * rotate, offset), with its bins; the same placement of the same file gives the same
 * mesh. */
TSR_NODISCARD tsr_status geometry_mesh_load(const char *path, double scale, const double rotate[3],
                                            const double offset[3], const geometry_mesh_t **out,
                                            tsr_error_t *err);

bool geometry_mesh_inside(const geometry_mesh_t *m, const double p[3]);

/* The smallest t in [0, 1] where p + t d crosses a triangle, or 2 where it crosses none. */
double geometry_mesh_entry(const geometry_mesh_t *m, const double p[3], const double d[3]);

void geometry_mesh_bounds(const geometry_mesh_t *m, double lo[3], double hi[3]);

/* Triangles of the mesh. */
size_t geometry_mesh_triangles(const geometry_mesh_t *m);
/* The unit normal at the point of the mesh nearest p, pointing towards p (out of the
 * solid for a point outside it), into n; false where no triangle lies within 4 cells of
 * p in y and z. */
bool geometry_mesh_normal(const geometry_mesh_t *m, const double p[3], double n[3]);
/* Their vertices as placed, 9 values per triangle (3 vertices, x y z each). */
const double *geometry_mesh_vertices(const geometry_mesh_t *m);

#endif
