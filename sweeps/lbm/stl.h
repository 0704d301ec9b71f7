/* stl: triangle meshes from STL files (binary and ASCII), checked to bound a solid, and
 * placed in the domain.
 *
 * Binary STL: an 80-byte header, a little-endian uint32 triangle count, then 50 bytes per
 * triangle (normal, three vertices as little-endian float32, a 2-byte attribute); the file
 * is binary exactly when its size is 84 + 50 x count. Otherwise it must be ASCII: "solid
 * [name]", then facets "facet normal nx ny nz / outer loop / vertex x y z (3 times) /
 * endloop / endfacet", then "endsolid [name]"; keywords are case-insensitive, any white
 * space separates tokens. Normals are read and ignored: the vertex order (counter-clockwise
 * seen from outside) orients a triangle. Every failure is one message naming the source
 * and, for ASCII, the line.
 *
 * A mesh bounds a solid when it is closed and consistently oriented: every edge (its end
 * vertices compared exactly, as the file gives them) is used by exactly two triangles, once
 * in each direction. Triangles without area are refused. Plain C: no MPI. */
#ifndef STL_H
#define STL_H

#include <stddef.h>
#include <stdint.h>

#include "tsr_error.h"

enum { STL_MAX_TRIANGLES = 50000000 };

typedef struct stl_mesh {
  double (*tri)[3][3]; /* tri[k][v][axis] */
  size_t n;
  double lo[3], hi[3]; /* bounds of the vertices */
} stl_mesh_t;

/* Parses the bytes of an STL file (binary or ASCII, see above); source names it in
 * messages. On failure *out is left empty. */
TSR_NODISCARD tsr_status stl_parse(const uint8_t *data, size_t len, const char *source,
                                   stl_mesh_t *out, tsr_error_t *err);

/* Reads and parses the file at path. */
TSR_NODISCARD tsr_status stl_read(const char *path, stl_mesh_t *out, tsr_error_t *err);

void stl_free(stl_mesh_t *m);

/* Checks that the mesh bounds a solid (closed, consistently oriented, no triangle without
 * area); the message names the first edge or triangle at fault. */
TSR_NODISCARD tsr_status stl_check_closed(const stl_mesh_t *m, const char *source,
                                          tsr_error_t *err);

/* Places the mesh: every vertex p becomes offset + R (scale * p), R the rotations about x,
 * then y, then z by rotate[] degrees (right-handed); the bounds follow. */
void stl_place(stl_mesh_t *m, double scale, const double rotate[3], const double offset[3]);

#endif
