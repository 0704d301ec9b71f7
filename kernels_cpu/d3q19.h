/* d3q19: D3Q19 lattice Boltzmann kernels on the CPU layout (AoS, see aos.h).
 *
 * Velocity set: c_0 = (0,0,0), c_i = direction_offsets[i-1] for i = 1..18 (faces, then
 * edges); the inverse of i >= 1 is ((i-1)^1)+1. Weights 1/3, 1/18 (faces), 1/36 (edges).
 *
 * Equilibrium (incompressible, He & Luo):
 *   f_eq_i = w_i [ rho + rho0 (3 c_i.u + 4.5 (c_i.u)^2 - 1.5 u.u) ],  u = j / rho0.
 * The stored PDFs may be f_i or f_i - w_i rho0 ("shifted", for single-precision
 * accuracy); the kernels are the same for both, since the collision sees only
 * differences f - f_eq and the sum of the stored values, rho or rho - rho0, enters the
 * equilibrium in the same place. Only initialisation and the density read-out differ.
 *
 * Stream-collide: pull, two grids. dst(x) = collide(src(x - c_i)) for every interior
 * cell; the ghost layer of src must hold what streams in (neighbours' post-collision
 * values or boundary values). No boundary branches.
 *
 * Collision: TRT with symmetric rate omega_plus and antisymmetric rate omega_minus;
 * SRT is the variant with one rate. Body force F (force density, lattice units) with
 * Guo's scheme split into symmetric and antisymmetric parts:
 *   u = (j + F/2) / rho0,
 *   S_i^- = (1 - omega_minus/2) 3 w_i c_i.F,
 *   S_i^+ = (1 - omega_plus/2)  w_i (9 (c_i.u)(c_i.F) - 3 u.F).
 * All arithmetic in the storage precision. */
#ifndef D3Q19_H
#define D3Q19_H

#include <stddef.h>
#include <stdint.h>

#include "aos.h"

enum { D3Q19_Q = 19 };

extern const int d3q19_c[D3Q19_Q][3];
extern const double d3q19_w[D3Q19_Q];

static inline int d3q19_inverse(int i) { return i == 0 ? 0 : ((i - 1) ^ 1) + 1; }

typedef struct d3q19_params {
  double omega_plus;   /* 1/tau; viscosity nu = (1/omega_plus - 1/2) / 3 */
  double omega_minus;  /* TRT only: from the magic parameter, see d3q19_omega_minus */
  double rho0;         /* reference density */
  double force[3];     /* body force density */
  int use_force;       /* 0: the force terms are skipped */
} d3q19_params_t;

/* omega_minus for magic parameter Lambda = (1/omega_plus - 1/2)(1/omega_minus - 1/2). */
double d3q19_omega_minus(double omega_plus, double lambda);

void d3q19_stream_collide_srt_f64(const double *restrict src, double *restrict dst,
                                const aos_dims_t *dims, const d3q19_params_t *p);
void d3q19_stream_collide_trt_f64(const double *restrict src, double *restrict dst,
                                const aos_dims_t *dims, const d3q19_params_t *p);
void d3q19_stream_collide_srt_f32(const float *restrict src, float *restrict dst,
                                const aos_dims_t *dims, const d3q19_params_t *p);
void d3q19_stream_collide_trt_f32(const float *restrict src, float *restrict dst,
                                const aos_dims_t *dims, const d3q19_params_t *p);

/* Streaming without collision, dst(x)_i = src(x - c_i)_i, with the stream-collide
 * kernels' loop, loads and stores: the ceiling of the layout's access pattern on a
 * machine (tessera bench reports it beside the kernels). */
void d3q19_stream_only_f64(const double *restrict src, double *restrict dst,
                         const aos_dims_t *dims);
void d3q19_stream_only_f32(const float *restrict src, float *restrict dst,
                         const aos_dims_t *dims);

/* dst(x)_i = src(x)_i, through the same loop, loads and stores: the pull taken out, so
 * that beside d3q19_stream_only it shows what the pull's access pattern costs. */
void d3q19_copy_cells_f64(const double *restrict src, double *restrict dst,
                        const aos_dims_t *dims);
void d3q19_copy_cells_f32(const float *restrict src, float *restrict dst,
                        const aos_dims_t *dims);

/* The collision's constants (d3q19_collide.h: D3Q19_CONSTS_COUNT values in the order of
 * D3Q19_CONSTS_FIELDS) for the parameters, SRT (trt 0) or TRT (1), in the storage
 * precision: what other devices' kernels need to compute exactly what these do. */
#define D3Q19_CONSTS_COUNT (6 * 19 + 10)
void d3q19_collision_constants_f64(const d3q19_params_t *p, int trt, double *out);
void d3q19_collision_constants_f32(const d3q19_params_t *p, int trt, float *out);

/* Sets every cell (ghosts included) to the equilibrium of density rho and velocity
 * (ux, uy, uz) given per cell by init(x, y, z, ctx, out[4]) for interior cells, and of
 * (rho0, 0) for ghosts; shifted storage subtracts w_i rho0. init is called from
 * several OpenMP threads at once. */
typedef void (*d3q19_init_fn)(int x, int y, int z, void *ctx, double out[4]);
void d3q19_init_f64(double *f, const aos_dims_t *dims, const d3q19_params_t *p, int shifted,
                  d3q19_init_fn init, void *ctx);
void d3q19_init_f32(float *f, const aos_dims_t *dims, const d3q19_params_t *p, int shifted,
                  d3q19_init_fn init, void *ctx);

/* Density and velocity of every interior cell of a stored (post-collision) field into
 * rho[n] and u[3n] (n = nx*ny*nz, x fastest): u = (j - F/2) / rho0, the velocity the
 * collision of the step saw, since j after collision carries the step's whole force. */
void d3q19_moments_f64(const double *f, const aos_dims_t *dims, const d3q19_params_t *p,
                     int shifted, double *rho, double *u);
void d3q19_moments_f32(const float *f, const aos_dims_t *dims, const d3q19_params_t *p,
                     int shifted, double *rho, double *u);

/* Boundary links: dst slot = src slot value + extra, both element indices into the
 * field (cell index * 19 + i). No link reads a slot another link writes (links write
 * wall slots and read fluid slots), so they are applied in parallel. */
typedef struct d3q19_link {
  size_t to;     /* ghost or solid cell's slot i */
  size_t from;   /* fluid cell's slot inverse(i) */
  double extra;  /* moving-wall term 6 w_i rho0 c_i.u_w, 0 for no-slip */
} d3q19_link_t;

void d3q19_boundary_apply_f64(double *f, const d3q19_link_t *links, size_t n);
void d3q19_boundary_apply_f32(float *f, const d3q19_link_t *links, size_t n);

#endif
