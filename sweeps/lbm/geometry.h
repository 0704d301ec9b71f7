/* geometry: what every cell of the patch is — fluid, no-slip wall or a wall with a
 * velocity (a moving wall, a velocity inlet) — from the walls on the non-periodic domain
 * faces and from simple solid shapes.
 *
 * Cells are evaluated at their centres (g + 0.5 in lattice units). A cell outside the
 * domain on a non-periodic axis is a wall of that face; outside several such faces
 * (an edge or corner ghost cell), it moves with the first moving wall among them in
 * the order x-, x+, y-, y+, z-, z+, and is a no-slip wall when none of them moves.
 * Edge cells so belong to the moving wall: the moving-wall terms of all links that
 * leave a wall plane then cancel, and a closed cavity keeps its mass to round-off. On periodic axes coordinates wrap, so a shape seen across a periodic
 * boundary appears in the ghost layer as it should. Every process evaluates the same
 * global geometry, so all agree on every block's block selector. */
#ifndef GEOMETRY_H
#define GEOMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "patch.h"
#include "tsr_error.h"

enum { GEOMETRY_MAX_SHAPES = 64, GEOMETRY_NAME_MAX = 32 };

typedef enum geometry_face { GEOMETRY_XM, GEOMETRY_XP, GEOMETRY_YM, GEOMETRY_YP, GEOMETRY_ZM, GEOMETRY_ZP } geometry_face_t;

/* A face's kind: no-slip; a wall moving along its own plane; a velocity inlet (any
 * direction: into the domain an inlet, out of it a prescribed outflow), uniform or with a
 * parabolic profile. Those two are the same scheme (bounce-back with the wall-velocity
 * term, docs/physics.md), evaluated at the wall point of each link. Open faces: a
 * pressure outlet (a fixed density, anti-bounce-back with the velocity extrapolated to
 * the face) and a zero-gradient outflow (the populations of the cell next inwards
 * copied). */
typedef enum geometry_wall_kind {
  GEOMETRY_WALL_NOSLIP = 0,
  GEOMETRY_WALL_MOVING = 1,
  GEOMETRY_WALL_VELOCITY = 2,
  GEOMETRY_WALL_PRESSURE = 3,
  GEOMETRY_WALL_OUTFLOW = 4
} geometry_wall_kind_t;

typedef enum geometry_profile {
  GEOMETRY_PROFILE_UNIFORM = 0,
  GEOMETRY_PROFILE_PARABOLIC = 1,
  GEOMETRY_PROFILE_FILE = 2 /* a table (inlet_profile.h) */
} geometry_profile_t;

struct inlet_profile; /* inlet_profile.h */

typedef struct geometry_wall {
  geometry_wall_kind_t kind;
  double velocity[3];  /* moving walls: tangential; inlets: the velocity (parabolic: at the
                          profile's peak), lattice units */
  geometry_profile_t profile; /* inlets */
  const struct inlet_profile *table; /* GEOMETRY_PROFILE_FILE: the velocity over the face
                                        (shared, kept until the process ends); velocity
                                        then holds its largest */
  double ramp;                /* moving walls and inlets: steps over which the velocity
                                 rises smoothly from 0 (lbm_link_scale); 0: none */
  double density;             /* pressure outlets: the density at the face */
} geometry_wall_t;

/* Whether a wall of this kind has a velocity (moving walls and inlets). */
bool geometry_wall_moves(geometry_wall_kind_t kind);

/* Whether a face of this kind is open (pressure outlet, outflow). */
bool geometry_wall_open(geometry_wall_kind_t kind);

typedef enum geometry_shape_kind {
  GEOMETRY_BOX,
  GEOMETRY_SPHERE,
  GEOMETRY_CYLINDER,
  GEOMETRY_MESH,
  GEOMETRY_IMAGE /* a raw voxel image (voxels.h) */
} geometry_shape_kind_t;

struct geometry_mesh; /* mesh.h */
struct voxels;        /* voxels.h */

typedef struct geometry_shape {
  geometry_shape_kind_t kind;
  double min[3], max[3]; /* box: corners (cell centres inside [min, max]) */
  double center[3];      /* sphere, cylinder (the cylinder's axis passes through it) */
  double radius;         /* sphere, cylinder */
  int axis;              /* cylinder: 0, 1, 2 for x, y, z */
  char name[GEOMETRY_NAME_MAX]; /* obstacles: the body it belongs to ("": none); shapes
                                   of one name are one body */
  bool interpolated;     /* obstacles: interpolated bounce-back (Bouzidi et al.) on its
                            links, from the exact distance; else half-way */
  const struct geometry_mesh *mesh; /* mesh: a closed triangle mesh (shared, kept until
                                       the process ends) */
  const struct voxels *voxels;      /* image: the voxel image (shared, kept until the
                                       process ends); its solid cells are known per block
                                       (geometry_classify) and read per block
                                       (geometry_prepare) */
} geometry_shape_t;

typedef struct geometry {
  geometry_wall_t walls[6]; /* used on non-periodic faces only */
  geometry_shape_t shapes[GEOMETRY_MAX_SHAPES];
  int nshapes;
} geometry_t;

/* Cell flags: fluid, no-slip, a wall with a velocity (moving, inlet) of a face, a cell
 * beyond an open face. */
enum { GEOMETRY_FLUID = 0, GEOMETRY_NOSLIP = 1, GEOMETRY_MOVING = 2 /* + face */,
       GEOMETRY_OPEN = 8 /* + face */ };

/* The face of an open flag, or -1. */
int geometry_open_face(uint8_t flag);

/* Whether point p (cell-centre coordinates: cell x has centre x + 0.5) lies in shape s. */
bool geometry_inside(const geometry_shape_t *s, const double p[3]);

/* The first shape (in list order) holding the centre of global cell (gx, gy, gz), wrapped
 * on periodic axes; -1 for none (fluid, or a wall of the domain's faces). */
int geometry_shape_at(const geometry_t *g, const patch_options_t *domain, int64_t gx, int64_t gy,
                      int64_t gz);

/* Where the segment from the centre of global fluid cell (gx, gy, gz) to the centre of
 * the cell c away (c a lattice velocity; that cell solid by a shape) first enters a
 * shape: the fraction q in (0, 1] of the segment that lies in the fluid, and that shape
 * in *shape. Exact for the analytic shapes (the intersection of a line with a sphere,
 * cylinder or box); the solid cell's coordinates wrapped on periodic axes as
 * geometry_flag does. */
double geometry_link_fraction(const geometry_t *g, const patch_options_t *domain, int64_t gx,
                              int64_t gy, int64_t gz, const int c[3], int *shape);

/* The bodies: shapes with a name, one body per distinct name in order of first
 * appearance. body[i] gets shape i's body (-1: unnamed), names[k] body k's name; returns
 * the number of bodies. */
int geometry_bodies(const geometry_t *g, int body[GEOMETRY_MAX_SHAPES],
                    const char *names[GEOMETRY_MAX_SHAPES]);

/* Whether shape s holds the centre of at least one cell of the domain (shapes are
 * evaluated at the domain's cell centres only). Exact: the centre nearest to the shape's
 * centre (or, for a box, any centre inside its bounds) decides. */
bool geometry_covers_a_cell(const geometry_shape_t *s, const patch_options_t *domain);

/* All walls no-slip, no shapes. */
geometry_t geometry_default(void);

/* Checks shape sizes (radius > 0, min < max, axis in 0..2) and wall kinds; messages name
 * "obstacles[i]" and the face. */
TSR_NODISCARD tsr_status geometry_validate(const geometry_t *g, tsr_error_t *err);

/* Flag of global cell (gx, gy, gz); coordinates may lie one cell outside the domain.
 * Outside several non-periodic faces (an edge or corner), a wall with a velocity wins
 * (the first in face order), then a no-slip wall; the cell is open only where every face
 * it lies beyond is open (the first of them). */
uint8_t geometry_flag(const geometry_t *g, const patch_options_t *domain, int64_t gx, int64_t gy,
                      int64_t gz);

/* Wall velocity of a flag (zero for fluid and no-slip; an inlet's velocity as configured,
 * its profile's peak). */
void geometry_flag_velocity(const geometry_t *g, uint8_t flag, double u[3]);

/* The wall velocity of a flag at the point p (lattice units, cell x spans [x, x + 1]) of
 * the wall: a parabolic inlet's velocity times 4 s (n - s) / n^2 along each non-periodic
 * axis of its plane (s = p clamped to [0, n], n the domain's cells along the axis: zero
 * on the domain's edges, the configured velocity at the centre); an inlet's table
 * interpolated at p (inlet_profile_velocity); else as geometry_flag_velocity. */
void geometry_wall_velocity_at(const geometry_t *g, const patch_options_t *domain, uint8_t flag,
                               const double p[3], double u[3]);

typedef enum geometry_class { GEOMETRY_CLASS_FLUID, GEOMETRY_CLASS_BOUNDARY, GEOMETRY_CLASS_SOLID } geometry_class_t;

/* Fluid: every cell of the block and of its ghost layer is fluid; solid: every interior
 * cell is a wall; boundary: anything else. Voxel images count by their blocks' summaries
 * (voxels.h): a block that only the union of an image and other shapes fills is
 * classified boundary, not solid (it computes, correctly, a little more). */
geometry_class_t geometry_classify(const geometry_t *g, const patch_options_t *domain,
                                   const block_info_t *b);

/* Before the flags and links of block b are built: reads the voxels of every image shape
 * around it (voxels_prepare); nothing for other shapes. */
TSR_NODISCARD tsr_status geometry_prepare(const geometry_t *g, const block_info_t *b,
                                          tsr_error_t *err);

#endif
