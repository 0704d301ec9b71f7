/* lbm_kernels_impl.h: the CPU kernels of one lattice in one storage, written once for
 * every lattice. Included only by the generated
 * lbm_kernels_lattice_<lattice>_<storage>_<level>.c, with LATTICE_NAME (D3Q19, ...),
 * LNAME (d3q19, ...), REAL (float or double: the arithmetic), SFX (f32, f64, or h16s,
 * h16c: 16-bit storage, with LBM_PRECISION_<SFX> defined) and LBM_LEVEL (the CPU
 * level's id, cpu_level.h: v3, ...) defined; defines the lbm_kernels_t of both layouts,
 * lbm_kernels_aos_<LNAME>_<SFX>_<LBM_LEVEL> and _soa_.
 * The collision itself is lbm_collide.h.
 *
 * Stream-collide goes along x rows, every row the same way whatever block it is in:
 *   SoA: a plane's rows are contiguous in each component's array (grid.h), so the
 *        kernel walks each plane as one run of cells, from the first interior cell to the
 *        last, in vectors of 8 or 16 cells (simd.h) aligned to the array: each direction's pulled values are one unaligned load, each result one
 *        aligned whole-line store (nontemporal where the ISA has them). Lanes that fall on
 *        ghost cells (the ends of rows, the rows before and after) are computed like the
 *        others and written to the ghost layer of dst, whose values are unspecified after
 *        a step: every ghost value a fluid cell pulls is written again before the next
 *        step (exchange, boundary links). No scalar rest, no padding read.
 *        With 16-bit storage a vector's 16 cells are 32 bytes of each direction, decoded
 *        to floats as they are loaded; the results are encoded and written as whole lines,
 *        two vectors at a time (store16_simd.h store16_vstore_line).
 *   AoS: where the CPU has AVX-512, vectors of cells with gathers of stride Q and the
 *        results transposed back into the cell layout in registers (lbm_simd.h); rows
 *        shorter than a vector, every row on other CPUs and with 16-bit storage, take
 *        the portable code.
 *   Portable code: runs of at most LBM_CHUNK cells, vectorised by the compiler over x;
 *        the results go to a per-thread buffer of Q rows, then to the field (AoS: put
 *        back into the cell layout and written out as one contiguous run).
 * Every cell goes through the same operations in the same order whatever its position,
 * block, run or layout, and the kernels are compiled without floating-point
 * contraction. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lbm_collide.h"
#include "lbm_kernels.h"
#include "lbm_simd.h"

#define LBM_CAT3_(a, b, c) a##_##b##_##c
#define LBM_CAT3(a, b, c) LBM_CAT3_(a, b, c)
#define LBM_FN(name) LBM_CAT3(name, LNAME, SFX)
#define LBM_CAT2_(a, b) a##_##b
#define LBM_CAT2(a, b) LBM_CAT2_(a, b)

/* The storage. STORE: the type of a stored population (REAL, or 16 bits: store16.h, with
 * REAL float); LBM_DEC and LBM_ENC: a stored value to REAL and back; LBM_VLD and LBM_VST:
 * the SoA code's vector of 64 bytes of REAL from and to the stored values (whole 32-byte
 * halves of lines for 16 bits); CSFX: the arithmetic's suffix (f64, f32) for the
 * precision-only helpers of lbm_simd.h (LBM_P). */
#if defined(LBM_PRECISION_h16s) || defined(LBM_PRECISION_h16c)
#include "store16_simd.h"
#define LBM_STORE16 1
#define STORE store16_u16
#define CSFX f32
#ifdef LBM_PRECISION_h16s
#define LBM_STORAGE LBM_STORAGE_F16S
#define LBM_DEC(h) store16_s_decode(h)
#define LBM_ENC(v) store16_s_encode(v)
#define LBM_VLD(p) store16_s_vload(p)
#define LBM_VENC(v) store16_s_vencode(v)
#else
#define LBM_STORAGE LBM_STORAGE_F16C
#define LBM_DEC(h) store16_c_decode(h)
#define LBM_ENC(v) store16_c_encode(v)
#define LBM_VLD(p) store16_c_vload(p)
#define LBM_VENC(v) store16_c_vencode(v)
#endif
/* the vector of direction I out as part of whole lines (store16_vstore_line), with the
   run's loop variable v_, its destination d and the hold_ of each direction */
#define LBM_VST(I, p, v) store16_vstore_line((p), &hold_[I], LBM_VENC(v), v_ > 0)
#define LBM_VHOLD                                                                        \
  store16_vu16 hold_[LAT(Q)];                                                            \
  memset(hold_, 0, sizeof hold_)
#define LBM_VFLUSH(nvec, d, sc)                                                           \
  if ((nvec) > 0)                                                                        \
    LBM_UNROLL for (int i_ = 0; i_ < LAT(Q); ++i_)                                       \
      store16_vflush((d) - LBM_P(SIMD_VW) + (ptrdiff_t)i_ * (sc), &hold_[i_]);
#else
#define LBM_STORE16 0
#define STORE REAL
#define CSFX SFX
#define LBM_STORAGE (sizeof(REAL) == 8 ? LBM_STORAGE_F64 : LBM_STORAGE_F32)
#define LBM_DEC(v) (v)
#define LBM_ENC(v) (v)
#define LBM_VLD(p) LBM_P(simd_vload)(p)
#define LBM_VST(I, p, v) LBM_P(simd_vstore)((p), (v))
#define LBM_VHOLD
#define LBM_VFLUSH(nvec, d, sc)
#endif
#define LBM_P(name) LBM_CAT2(name, CSFX) /* precision-only helpers of lbm_simd.h */
/* The AoS vector code (AVX-512 gathers of the stored values) for 4- and 8-byte values. */
#if defined(LBM_AOS_SIMD) && !LBM_STORE16
#define LBM_AOS_VEC 1
#endif

/* The lattice's tables, read with constant indices in unrolled loops (folded away). */
static const int LBM_FN(lat_cx)[LAT(Q)] = {LAT(CX)};
static const int LBM_FN(lat_cy)[LAT(Q)] = {LAT(CY)};
static const int LBM_FN(lat_cz)[LAT(Q)] = {LAT(CZ)};
static const int LBM_FN(lat_inv)[LAT(Q)] = {LAT(INV)};
static const double LBM_FN(lat_w)[LAT(Q)] = {LAT(W)};
static const int LBM_FN(lat_m)[LATTICE_MAX_Q][LATTICE_MAX_Q] = LATTICE_MOMENT_TABLE;
#define LAT_CX(i) LBM_FN(lat_cx)[i]
#define LAT_CY(i) LBM_FN(lat_cy)[i]
#define LAT_CZ(i) LBM_FN(lat_cz)[i]
#define LAT_INV(i) LBM_FN(lat_inv)[i]
#define LAT_M(k, i) LBM_FN(lat_m)[k][i]

/* Per-run constants of the collision, in the storage precision (lbm_collide.h). */
typedef struct LBM_FN(consts) {
  LBM_CONSTS_FIELDS(REAL)
} LBM_FN(consts_t);

static void LBM_FN(consts_init)(LBM_FN(consts_t) *k, const lbm_params_t *p, lbm_variant_t v) {
  const int trt = v == LBM_VARIANT_TRT || v == LBM_VARIANT_ADE_TRT;
  const REAL rho0 = (REAL)p->rho0;
  const REAL fx = (REAL)p->force[0], fy = (REAL)p->force[1], fz = (REAL)p->force[2];
  const REAL sp = (REAL)(1.0 - 0.5 * p->omega_plus);
  const REAL sm = (REAL)(1.0 - 0.5 * (trt ? p->omega_minus : p->omega_plus));
  for (int i = 0; i < LAT(Q); ++i) {
    const REAL w = (REAL)LBM_FN(lat_w)[i];
    const REAL cf = (REAL)LAT_CX(i) * fx + (REAL)LAT_CY(i) * fy + (REAL)LAT_CZ(i) * fz;
    k->w[i] = w;
    k->wr3[i] = w * rho0 * LBM_A1;
    k->cf[i] = cf;
    k->cf3[i] = LBM_A1 * cf;
    k->spw[i] = sp * w;
    k->smw3cf[i] = sm * w * LBM_A1 * cf;
    const long norm = lattice_moment_norm(&LBM_CAT2(lattice, LNAME), i); /* |M_i|^2 */
    const bool relaxed = v == LBM_VARIANT_MRT && LBM_MOMENT_CLASS(i) != LATTICE_MOMENT_CONSERVED;
    k->mrt[i] = relaxed ? (REAL)(p->mrt_rate[i] / (double)norm) : (REAL)0;
    k->mrn[i] = (REAL)(1.0 / (double)norm);
  }
  k->rho0 = rho0;
  k->inv_rho0 = (REAL)(1.0 / p->rho0);
  k->op = (REAL)p->omega_plus;
  k->om = (REAL)(trt ? p->omega_minus : p->omega_plus);
  k->fx = fx;
  k->fy = fy;
  k->fz = fz;
  k->hfx = (REAL)0.5 * fx;
  k->hfy = (REAL)0.5 * fy;
  k->hfz = (REAL)0.5 * fz;
  k->ax = (REAL)p->velocity[0];
  k->ay = (REAL)p->velocity[1];
  k->az = (REAL)p->velocity[2];
  k->tau0 = (REAL)(1.0 / p->omega_plus);
  k->les = (REAL)(18.0 * sqrt(2.0) * p->smagorinsky * p->smagorinsky / p->rho0);
  k->magic = (REAL)p->magic;
  for (int r = 0; r < 5; ++r) k->cum[r] = (REAL)p->cumulant_rate[r];
  k->shift = (REAL)p->shift;
  k->kind = (REAL)(v == LBM_VARIANT_CUMULANT ? 3
                   : v == LBM_VARIANT_MRT    ? 2
                   : v == LBM_VARIANT_TRT    ? 1
                                             : 0);
  k->lesf = (REAL)(p->smagorinsky > 0 ? 1 : 0);
}

/* The constants broadcast into vectors of the SoA (and AVX-512 AoS) vector code: each
 * value once per call, not once per use (GCC broadcasts a scalar into a vector wider
 * than a register through the stack, and the reloads that follow stall on store
 * forwarding: SRT at 62% of TRT's MLUPS in DP with AVX2). */
typedef struct LBM_FN(vconsts) {
  LBM_CONSTS_FIELDS(LBM_P(simd_vec))
} LBM_FN(vconsts_t);

static void LBM_FN(vconsts_init)(LBM_FN(vconsts_t) *restrict kv, const LBM_FN(consts_t) *restrict k) {
  _Static_assert(sizeof *kv == LBM_CONSTS_COUNT(LAT(Q)) * sizeof(LBM_P(simd_vec)),
                 "vector constants are packed");
  /* field by field in declaration order, as arrays of the structs' whole size */
  REAL s[LBM_CONSTS_COUNT(LAT(Q))];
  LBM_P(simd_vec) v[LBM_CONSTS_COUNT(LAT(Q))];
  memcpy(s, k, sizeof s);
  for (int i = 0; i < LBM_CONSTS_COUNT(LAT(Q)); ++i) v[i] = (LBM_P(simd_vec)){0} + s[i];
  memcpy(kv, v, sizeof v);
}

static void LBM_FN(constants)(const lbm_params_t *p, lbm_variant_t v, void *out) {
  LBM_FN(consts_t) k;
  _Static_assert(sizeof k == LBM_CONSTS_COUNT(LAT(Q)) * sizeof(REAL), "constants are packed");
  LBM_FN(consts_init)(&k, p, v);
  memcpy(out, &k, sizeof k);
}

/* Streaming alone (no collision): each pulled value is stored as it is. */
#define LBM_COPY_CELL                                                                    \
  LBM_UNROLL for (int i_ = 0; i_ < LAT(Q); ++i_) LBM_ST(i_, LBM_LD(i_));

/* The seven kernel variants of a code path whose functions are named P_<variant>, and
 * the one of them a call uses. MRT, the cumulant and the Smagorinsky model take the
 * coupled code (below: stream_collide_region hands them to coupled_region), whose
 * variants always carry the force terms (a zero force adds zeros): one instance of their
 * long collisions per path. */
#define LBM_VARIANTS(DEFINE, P)                                                          \
  DEFINE(P##_srt, LBM_FLOW_CELL(0, 0, 0))                                                \
  DEFINE(P##_srt_force, LBM_FLOW_CELL(0, 0, 1))                                          \
  DEFINE(P##_trt, LBM_FLOW_CELL(1, 0, 0))                                                \
  DEFINE(P##_trt_force, LBM_FLOW_CELL(1, 0, 1))                                          \
  DEFINE(P##_ade_srt, LBM_ADE_CELL(0))                                                   \
  DEFINE(P##_ade_trt, LBM_ADE_CELL(1))                                                   \
  DEFINE(P##_copy, LBM_COPY_CELL)
#define LBM_PICK(P)                                                                      \
  (v == LBM_VARIANT_ADE_SRT   ? LBM_FN(P##_ade_srt)                                      \
   : v == LBM_VARIANT_ADE_TRT ? LBM_FN(P##_ade_trt)                                      \
   : v == LBM_VARIANT_STREAM || v == LBM_VARIANT_COPY ? LBM_FN(P##_copy)                 \
   : v == LBM_VARIANT_TRT ? (p->use_force ? LBM_FN(P##_trt_force) : LBM_FN(P##_trt))     \
                          : (p->use_force ? LBM_FN(P##_srt_force) : LBM_FN(P##_srt)))

/* Whether a call of variant v with parameters p collides in moment space (MRT, the
 * cumulant, or the Smagorinsky model): the coupled code's variants. */
#define LBM_MOMENT_VARIANT(v, p)                                                         \
  ((v) == LBM_VARIANT_MRT || (v) == LBM_VARIANT_CUMULANT ||                              \
   ((p)->smagorinsky > 0 && ((v) == LBM_VARIANT_SRT || (v) == LBM_VARIANT_TRT)))

/* The coupled kernel variants (the flow with a force field, the ADE with an advection
 * field) of a code path P_<variant>, and the one of them a call uses. MRT, the cumulant
 * and the Smagorinsky model are one variant, "moment", which reads the kind of relaxation
 * from the constants at run time (a branch every cell takes the same way): one copy of
 * the long collisions per path keeps the library's compile time. */
#define LBM_COUPLED_VARIANTS(DEFINE, P)                                                  \
  DEFINE(P##_srt, 0, LBM_FLOW_CELL(0, 0, 1))                                             \
  DEFINE(P##_trt, 0, LBM_FLOW_CELL(1, 0, 1))                                             \
  DEFINE(P##_moment, 0, LBM_RELAX_CELL(mkind_, mles_, 1))                                \
  DEFINE(P##_ade_srt, 1, LBM_ADE_CELL(0))                                                \
  DEFINE(P##_ade_trt, 1, LBM_ADE_CELL(1))
#define LBM_COUPLED_PICK(P)                                                              \
  (v == LBM_VARIANT_ADE_SRT   ? LBM_FN(P##_ade_srt)                                      \
   : v == LBM_VARIANT_ADE_TRT ? LBM_FN(P##_ade_trt)                                      \
   : LBM_MOMENT_VARIANT(v, p) ? LBM_FN(P##_moment)                                       \
   : v == LBM_VARIANT_TRT     ? LBM_FN(P##_trt)                                          \
                              : LBM_FN(P##_srt))

/* Portable AoS code: n <= LBM_CHUNK cells from s (the first cell's slot 0 in the source
 * field) into out (one row per direction). */
#define LBM_LD(I) LBM_DEC(s[off[I] + (ptrdiff_t)x * LAT(Q)])
#define LBM_ST(I, V) out[I][x] = (V)
#define LBM_DEFINE_RUN(NAME, BODY)                                                       \
  static void LBM_FN(NAME)(int n, const STORE *restrict s, const ptrdiff_t *restrict off, \
                           REAL (*restrict out)[LBM_CHUNK],                              \
                           const LBM_FN(consts_t) *restrict k) {                         \
    LBM_COLLIDE_CONSTS;                                                                  \
    _Pragma("omp simd")                                                                  \
    for (int x = 0; x < n; ++x) {                                                        \
      BODY                                                                               \
    }                                                                                    \
  }
#define LBM_T REAL
#define LBM_ZERO ((REAL)0)
#define LBM_K_T REAL
#define LBM_K_ZERO ((REAL)0)
LBM_VARIANTS(LBM_DEFINE_RUN, run_aos)
#undef LBM_T
#undef LBM_ZERO
#undef LBM_K_T
#undef LBM_K_ZERO
#undef LBM_LD
#undef LBM_ST
typedef void (*LBM_FN(run_fn))(int n, const STORE *restrict s, const ptrdiff_t *restrict off,
                               REAL (*restrict out)[LBM_CHUNK],
                               const LBM_FN(consts_t) *restrict k);

/* Lines (64 bytes) ahead whose pulled values the SoA code asks for (0: none). The hardware
 * prefetchers alone follow the Q read streams too late once the collision's arithmetic
 * sits between the loads: asking 2 to 4 lines ahead gave 25-40% more MLUPS on the
 * 2-core AMD EPYC VM (128^3, D3Q19, DP and SP; docs/performance.md). */
#ifndef LBM_SOA_PREFETCH
#define LBM_SOA_PREFETCH 3
#endif

/* SoA vector code: nvec vectors of cells from s (the first cell's component 0 in the
 * source field; off: element offsets of the pulled values) to d (the same cell in the
 * destination field, aligned to the vector size; sc: the component stride). */
#define LBM_T LBM_P(simd_vec)
#define LBM_ZERO ((LBM_T){0})
#define LBM_K_T LBM_T
#define LBM_K_ZERO LBM_ZERO
#define LBM_SQRT(V) LBM_P(lbm_vsqrt)(V)
#define LBM_LD(I) LBM_VLD(s + off[I])
#define LBM_ST(I, V) LBM_VST(I, d + (ptrdiff_t)(I) * sc, (V))
#define LBM_DEFINE_VEC_SOA(NAME, BODY)                                                   \
  static void LBM_FN(NAME)(const STORE *restrict s, const ptrdiff_t *restrict off,       \
                           STORE *restrict d, ptrdiff_t sc,                              \
                           const LBM_FN(vconsts_t) *restrict k, ptrdiff_t nvec) {        \
    LBM_COLLIDE_CONSTS;                                                                  \
    LBM_VHOLD;                                                                           \
    for (ptrdiff_t v_ = 0; v_ < nvec; ++v_, s += LBM_P(SIMD_VW), d += LBM_P(SIMD_VW)) {     \
      if (LBM_SOA_PREFETCH)                                                              \
        LBM_UNROLL for (int i_ = 0; i_ < LAT(Q); ++i_)                                   \
          __builtin_prefetch(s + off[i_] + LBM_SOA_PREFETCH * 64 / (int)sizeof(STORE), 0, 3); \
      BODY                                                                               \
    }                                                                                    \
    LBM_VFLUSH(nvec, d, sc)                                                              \
  }
LBM_VARIANTS(LBM_DEFINE_VEC_SOA, vec_soa)

/* The coupled SoA vector code (lbm_kernels_t.coupled): vec_soa with, for each lane's cell,
 * the force (flow) or the advection velocity (ADE) read from a coupling field at the
 * same element offset as the cell's populations (a field of the same dims: c->in, its
 * component stride c->in_sc; NULL for the flow: the constant force alone), and the
 * velocity the collision used (flow) or the source beta (C - c0) (ADE; written or added
 * to) written there (c->out; NULL: not written). The force's constants are computed per
 * vector by the expressions of LBM_CELL_FORCE_CONSTS, from the scalar constants k0: every
 * lane as the scalar coupled code computes its cell. The outputs are whole aligned
 * vectors (the populations' vectors are; a coupling field's components start lines) with
 * nontemporal stores, as the populations'. */
typedef struct LBM_FN(vcouple) {
  const REAL *in;
  REAL *out;
  ptrdiff_t in_sc, out_sc;
  REAL fw, bx, by, bz, c0;
  int acc;
} LBM_FN(vcouple_t);
typedef struct LBM_FN(kf) {
  LBM_P(simd_vec) fx, fy, fz, hfx, hfy, hfz, ax, ay, az;
  LBM_P(simd_vec) cf[LAT(Q)], cf3[LAT(Q)], smw3cf[LAT(Q)];
} LBM_FN(kf_t);
#undef LBM_KF
#define LBM_KF(F) (kf_.F)
#define LBM_DEFINE_VEC_SOA_COUPLED(NAME, ADE_, BODY)                                     \
  static void LBM_FN(NAME)(const STORE *restrict s, const ptrdiff_t *restrict off,       \
                           STORE *restrict d, ptrdiff_t sc,                              \
                           const LBM_FN(vconsts_t) *restrict k,                          \
                           const LBM_FN(consts_t) *restrict k0, ptrdiff_t nvec,          \
                           const LBM_FN(vcouple_t) *restrict c, ptrdiff_t at) {          \
    LBM_FN(kf_t) kf_;                                                                    \
    const REAL sm_ = (REAL)1 - (REAL)0.5 * k0->om;                                       \
    kf_.fx = k->fx, kf_.fy = k->fy, kf_.fz = k->fz;                                      \
    kf_.hfx = k->hfx, kf_.hfy = k->hfy, kf_.hfz = k->hfz;                                \
    kf_.ax = k->ax, kf_.ay = k->ay, kf_.az = k->az;                                      \
    LBM_UNROLL for (int i_ = 0; i_ < LAT(Q); ++i_) {                                     \
      kf_.cf[i_] = k->cf[i_];                                                            \
      kf_.cf3[i_] = k->cf3[i_];                                                          \
      kf_.smw3cf[i_] = k->smw3cf[i_];                                                    \
    }                                                                                    \
    (void)sm_;                                                                           \
    const int mkind_ = (int)k0->kind, mles_ = k0->lesf != (REAL)0;                       \
    (void)mkind_, (void)mles_;                                                           \
    LBM_VHOLD;                                                                           \
    for (ptrdiff_t v_ = 0; v_ < nvec; ++v_, s += LBM_P(SIMD_VW), d += LBM_P(SIMD_VW),       \
                   at += LBM_P(SIMD_VW)) {                                                \
      if (LBM_SOA_PREFETCH)                                                              \
        LBM_UNROLL for (int i_ = 0; i_ < LAT(Q); ++i_)                                   \
          __builtin_prefetch(s + off[i_] + LBM_SOA_PREFETCH * 64 / (int)sizeof(STORE), 0, 3); \
      if (ADE_) {                                                                        \
        kf_.ax = LBM_P(simd_vload)(c->in + at);                                           \
        kf_.ay = LBM_P(simd_vload)(c->in + at + c->in_sc);                                \
        kf_.az = LBM_P(simd_vload)(c->in + at + 2 * c->in_sc);                            \
      } else if (c->in) {                                                                \
        kf_.fx = c->fw * (k0->fx + LBM_P(simd_vload)(c->in + at));                        \
        kf_.fy = c->fw * (k0->fy + LBM_P(simd_vload)(c->in + at + c->in_sc));             \
        kf_.fz = c->fw * (k0->fz + LBM_P(simd_vload)(c->in + at + 2 * c->in_sc));         \
        kf_.hfx = (REAL)0.5 * kf_.fx;                                                    \
        kf_.hfy = (REAL)0.5 * kf_.fy;                                                    \
        kf_.hfz = (REAL)0.5 * kf_.fz;                                                    \
        LBM_UNROLL for (int i_ = 0; i_ < LAT(Q); ++i_) {                                 \
          const LBM_P(simd_vec) cf_ = (REAL)LAT_CX(i_) * kf_.fx + (REAL)LAT_CY(i_) * kf_.fy + \
                                     (REAL)LAT_CZ(i_) * kf_.fz;                          \
          kf_.cf[i_] = cf_;                                                              \
          kf_.cf3[i_] = LBM_A1 * cf_;                                                    \
          kf_.smw3cf[i_] = sm_ * k0->w[i_] * LBM_A1 * cf_;                               \
        }                                                                                \
      }                                                                                  \
      LBM_COLLIDE_CONSTS;                                                                \
      BODY                                                                               \
      if (ADE_ && c->out) {                                                              \
        const LBM_P(simd_vec) dc_ = rho - c->c0;                                          \
        for (int a_ = 0; a_ < 3; ++a_) {                                                 \
          REAL *o_ = c->out + at + a_ * c->out_sc;                                       \
          const REAL b_ = a_ == 0 ? c->bx : a_ == 1 ? c->by : c->bz;                     \
          const LBM_P(simd_vec) s_ =                                                      \
              (c->acc ? LBM_P(simd_vload)(o_) : (LBM_P(simd_vec)){0}) + b_ * dc_;          \
          LBM_P(simd_vstore)(o_, s_);                                                     \
        }                                                                                \
      } else if (!ADE_ && c->out) {                                                      \
        LBM_P(simd_vstore)(c->out + at, ux);                                              \
        LBM_P(simd_vstore)(c->out + at + c->out_sc, uy);                                  \
        LBM_P(simd_vstore)(c->out + at + 2 * c->out_sc, uz);                              \
      }                                                                                  \
    }                                                                                    \
    LBM_VFLUSH(nvec, d, sc)                                                              \
  }
LBM_COUPLED_VARIANTS(LBM_DEFINE_VEC_SOA_COUPLED, vcpl)
#undef LBM_DEFINE_VEC_SOA_COUPLED
#undef LBM_KF
#define LBM_KF(F) (k->F)
typedef void (*LBM_FN(vcpl_fn))(const STORE *restrict s, const ptrdiff_t *restrict off,
                                STORE *restrict d, ptrdiff_t sc,
                                const LBM_FN(vconsts_t) *restrict k,
                                const LBM_FN(consts_t) *restrict k0, ptrdiff_t nvec,
                                const LBM_FN(vcouple_t) *restrict c, ptrdiff_t at);
#undef LBM_LD
#undef LBM_ST
typedef void (*LBM_FN(vec_soa_fn))(const STORE *restrict s, const ptrdiff_t *restrict off,
                                   STORE *restrict d, ptrdiff_t sc,
                                   const LBM_FN(vconsts_t) *restrict k, ptrdiff_t nvec);

#ifdef LBM_AOS_VEC
/* AoS vector code: the first n <= one vector of cells from s (the first cell's slot 0
 * in the source field) to d (the same cell in the destination field). */
#define LBM_LD(I) LBM_P(lbm_gather)(s + off[I], lanes, LAT(Q))
#define LBM_ST(I, V) o[I] = (V)
#define LBM_DEFINE_VEC_AOS(NAME, BODY)                                                   \
  static void LBM_FN(NAME)(int n, const REAL *restrict s, const ptrdiff_t *restrict off, \
                           REAL *restrict d, const LBM_FN(vconsts_t) *restrict k) {      \
    LBM_COLLIDE_CONSTS;                                                                  \
    const unsigned lanes = (1u << n) - 1;                                                \
    LBM_T o[LAT(Q)];                                                                     \
    BODY                                                                                 \
    LBM_P(lbm_put)(o, d, n, LAT(Q));                                                     \
  }
LBM_VARIANTS(LBM_DEFINE_VEC_AOS, vec_aos)
#undef LBM_LD
#undef LBM_ST
typedef void (*LBM_FN(vec_aos_fn))(int n, const REAL *restrict s, const ptrdiff_t *restrict off,
                                   REAL *restrict d, const LBM_FN(vconsts_t) *restrict k);
#endif
#undef LBM_T
#undef LBM_ZERO
#undef LBM_K_T
#undef LBM_K_ZERO
#undef LBM_SQRT

#define LBM_VW LBM_P(SIMD_VW)
/* Vectors per work item of the SoA loop (a few rows of a 128-cell block). */
#define LBM_SEG 64

/* One call's SoA work: the plain vector code (vec), or the coupled one (cpl, with k0 and
 * c), on vectors of cells from element `at` of the populations. */
typedef struct LBM_FN(soa_job) {
  const STORE *src;
  STORE *dst;
  const ptrdiff_t *off;
  ptrdiff_t sc;
  const LBM_FN(vconsts_t) *kv;
  LBM_FN(vec_soa_fn) vec;
  const LBM_FN(consts_t) *k0;
  LBM_FN(vcpl_fn) cpl;
  const LBM_FN(vcouple_t) *c;
} LBM_FN(soa_job_t);

static inline void LBM_FN(soa_run)(const LBM_FN(soa_job_t) *j, ptrdiff_t at, ptrdiff_t n) {
  if (j->cpl) j->cpl(j->src + at, j->off, j->dst + at, j->sc, j->kv, j->k0, n, j->c, at);
  else j->vec(j->src + at, j->off, j->dst + at, j->sc, j->kv, n);
}

/* The SoA vectors of region r (NULL or GRID_PART_ALL: every cell): each plane's run of
 * cells from the first interior cell to the last, rounded out to whole aligned vectors,
 * cut into segments of at most LBM_SEG vectors; for a part, each segment computes the
 * vectors in it that hold a cell of r, so that no two threads write one vector. */
static void LBM_FN(soa_all)(const grid_dims_t *d, const LBM_FN(soa_job_t) *j,
                            const grid_region_t *r) {
  const ptrdiff_t first = d->origin, last = d->origin + (ptrdiff_t)(d->ny - 1) * d->sy + d->nx - 1;
  const ptrdiff_t v0 = first / LBM_VW * LBM_VW, nvec = (last + 1 - v0 + LBM_VW - 1) / LBM_VW;
  const ptrdiff_t nseg = (nvec + LBM_SEG - 1) / LBM_SEG, sy = d->sy, origin = d->origin;
  const bool whole = !r || r->part == GRID_PART_ALL;
  int y0, y1, z0, z1;
  grid_region_rows(d, r, &y0, &y1, &z0, &z1);
#pragma omp parallel
  {
#pragma omp for collapse(2) schedule(static)
    for (int z = z0; z < z1; ++z)
      for (ptrdiff_t g = 0; g < nseg; ++g) {
        const ptrdiff_t s0 = v0 + g * LBM_SEG * LBM_VW;
        const ptrdiff_t n = nvec - g * LBM_SEG < LBM_SEG ? nvec - g * LBM_SEG : LBM_SEG;
        const ptrdiff_t s1 = s0 + n * LBM_VW, plane = (ptrdiff_t)z * d->sz;
        if (whole) {
          LBM_FN(soa_run)(j, plane + s0, n);
          continue;
        }
        /* the rows whose interior cells may fall into [s0, s1) */
        int ya = s0 <= origin ? 0 : (int)((s0 - origin) / sy);
        int yb = s1 - 1 < origin ? 0 : (int)((s1 - 1 - origin) / sy) + 1;
        ya = ya > y0 ? ya : y0;
        yb = yb < y1 ? yb : y1;
        ptrdiff_t ra = 0, rb = 0; /* the run of vectors in hand: elements [ra, rb) */
        for (int y = ya; y < yb; ++y) {
          int xs[2], xe[2];
          const int m = grid_region_row(d, r, y, z, xs, xe);
          for (int k = 0; k < m; ++k) {
            const ptrdiff_t e0 = origin + (ptrdiff_t)y * sy + xs[k];
            const ptrdiff_t e1 = origin + (ptrdiff_t)y * sy + xe[k];
            ptrdiff_t a = e0 / LBM_VW * LBM_VW, b = (e1 + LBM_VW - 1) / LBM_VW * LBM_VW;
            a = a > s0 ? a : s0;
            b = b < s1 ? b : s1;
            if (a >= b) continue;
            if (rb > ra && a <= rb) {
              rb = b > rb ? b : rb;
              continue;
            }
            if (rb > ra) LBM_FN(soa_run)(j, plane + ra, (rb - ra) / LBM_VW);
            ra = a;
            rb = b;
          }
        }
        if (rb > ra) LBM_FN(soa_run)(j, plane + ra, (rb - ra) / LBM_VW);
      }
    simd_store_fence();
  }
}

static void LBM_FN(coupled_region)(const void *restrict vsrc, void *restrict vdst,
                                   const grid_dims_t *d, const lbm_params_t *p, lbm_variant_t v,
                                   const lbm_coupling_t *c, const grid_region_t *r);

/* m values of the portable AoS code's buffer s out to the field at d. */
static inline void LBM_FN(store_run)(STORE *restrict d, const REAL *restrict s, size_t m) {
#if LBM_STORE16
  for (size_t j = 0; j < m; ++j) d[j] = LBM_ENC(s[j]);
#else
  LBM_P(simd_store_run)(d, s, m);
#endif
}

static void LBM_FN(stream_collide_region)(const void *restrict vsrc, void *restrict vdst,
                                          const grid_dims_t *d, const lbm_params_t *p,
                                          lbm_variant_t v, const grid_region_t *r) {
  if (LBM_MOMENT_VARIANT(v, p)) { /* the coupled code without fields: its force is p's */
    lbm_params_t pc = *p;
    if (!p->use_force) memset(pc.force, 0, sizeof pc.force);
    const lbm_coupling_t none = {0};
    LBM_FN(coupled_region)(vsrc, vdst, d, &pc, v, &none, r);
    return;
  }
  const STORE *restrict src = vsrc;
  STORE *restrict dst = vdst;
  const bool soa = d->layout == GRID_SOA;
  /* element offset of the value pulled into slot i, from the cell's slot 0 */
  ptrdiff_t off[LAT(Q)];
  int newest = 0; /* the direction whose source row is the furthest ahead */
  ptrdiff_t ahead = 0;
  for (int i = 0; i < LAT(Q); ++i) {
    const ptrdiff_t row = (ptrdiff_t)LAT_CY(i) * d->sy + (ptrdiff_t)LAT_CZ(i) * d->sz;
    off[i] = (ptrdiff_t)i * d->sc;
    if (v != LBM_VARIANT_COPY) off[i] -= (ptrdiff_t)LAT_CX(i) * d->sx + row;
    if (-row > ahead) {
      ahead = -row;
      newest = i;
    }
  }
  (void)newest;
  LBM_FN(consts_t) k;
  LBM_FN(consts_init)(&k, p, v);
  LBM_FN(vconsts_t) kv;
  LBM_FN(vconsts_init)(&kv, &k);
  const LBM_FN(run_fn) run = LBM_PICK(run_aos);
  const LBM_FN(vec_soa_fn) vec_soa = LBM_PICK(vec_soa);
#ifdef LBM_AOS_VEC
  const LBM_FN(vec_aos_fn) vec_aos = LBM_PICK(vec_aos);
#endif
  if (soa) {
    const LBM_FN(soa_job_t) job = {.src = src, .dst = dst, .off = off, .sc = d->sc, .kv = &kv,
                                   .vec = vec_soa};
    LBM_FN(soa_all)(d, &job, r);
    return;
  }
  int y0, y1, z0, z1;
  grid_region_rows(d, r, &y0, &y1, &z0, &z1);
#pragma omp parallel
  {
    LBM_ALIGNED REAL out[LAT(Q)][LBM_CHUNK];
    LBM_ALIGNED REAL cells[LBM_CHUNK * LAT(Q)];
#pragma omp for collapse(2) schedule(static)
    for (int z = z0; z < z1; ++z)
      for (int y = y0; y < y1; ++y) {
        const ptrdiff_t row = d->origin + (ptrdiff_t)y * d->sy + (ptrdiff_t)z * d->sz;
        int xs[2], xe[2];
        const int m = grid_region_row(d, r, y, z, xs, xe);
        for (int seg = 0; seg < m; ++seg) {
          const int xend = xe[seg];
          int x0 = xs[seg];
#ifdef LBM_AOS_VEC
          /* vectors; the last one of a run may have lanes masked off. Runs shorter than
             a vector take the portable code. Of the source rows of a row only one, the
             one the newest direction pulls from, is new to the caches when rows advance
             along y then z: its lines are asked for two vectors ahead (prefetches past
             the row's end are harmless). */
          if (xend - x0 >= LBM_VW)
            for (; x0 < xend; x0 += LBM_VW) {
              lbm_prefetch_run((uintptr_t)(src + row + (ptrdiff_t)x0 * LAT(Q) + off[newest]) +
                                   2u * 64u * LAT(Q), LAT(Q));
              vec_aos(xend - x0 < LBM_VW ? xend - x0 : LBM_VW,
                      src + row + (ptrdiff_t)x0 * LAT(Q), off,
                      dst + row + (ptrdiff_t)x0 * LAT(Q), &kv);
            }
#endif
          for (; x0 < xend; x0 += LBM_CHUNK) {
            const int n = xend - x0 < LBM_CHUNK ? xend - x0 : LBM_CHUNK;
            const ptrdiff_t base = row + (ptrdiff_t)x0 * LAT(Q);
            run(n, src + base, off, out, &k);
            /* back to the cell layout, then out to the field in one sweep of stores */
            for (int x = 0; x < n; ++x)
              for (int i = 0; i < LAT(Q); ++i) cells[x * LAT(Q) + i] = out[i][x];
            LBM_FN(store_run)(dst + base, cells, (size_t)n * LAT(Q));
          }
        }
      }
    simd_store_fence();
  }
}

static void LBM_FN(stream_collide)(const void *restrict vsrc, void *restrict vdst,
                                   const grid_dims_t *d, const lbm_params_t *p,
                                   lbm_variant_t v) {
  LBM_FN(stream_collide_region)(vsrc, vdst, d, p, v, NULL);
}

/* The coupled stream-collide: every interior cell, in z-y-x order (threads over z and y),
 * scalar code over the layout's strides. */
#define LBM_T REAL
#define LBM_ZERO ((REAL)0)
#define LBM_K_T REAL
#define LBM_K_ZERO ((REAL)0)
#define LBM_SQRT(V) LBM_P(lbm_sqrt)(V)
#define LBM_LD(I) LBM_DEC(src[cell + off[I]])
#define LBM_ST(I, V) dst[cell + (ptrdiff_t)(I) * d->sc] = LBM_ENC(V)
#define LBM_AUX(F, X, Y, Z) ((F).origin + (ptrdiff_t)(X) * (F).sx + (ptrdiff_t)(Y) * (F).sy + \
                             (ptrdiff_t)(Z) * (F).sz)
#define LBM_DEFINE_COUPLED(NAME, ADE_, BODY)                                              \
  static void LBM_FN(NAME)(const STORE *restrict src, STORE *restrict dst,               \
                           const grid_dims_t *d, const ptrdiff_t *off,                   \
                           const LBM_FN(consts_t) *k0, const lbm_coupling_t *c,          \
                           const grid_region_t *r_) {                                    \
    const REAL *force = c->force, *adv = c->advection;                                   \
    REAL *vel = c->velocity, *sf = c->source_force;                                      \
    const REAL bx = (REAL)c->beta[0], by = (REAL)c->beta[1], bz = (REAL)c->beta[2];       \
    const REAL c0 = (REAL)c->c0, fw_ = c->start ? (REAL)0.5 : (REAL)1;                    \
    const int acc_ = c->accumulate;                                                      \
    const int mkind_ = (int)k0->kind, mles_ = k0->lesf != (REAL)0;                       \
    (void)mkind_, (void)mles_;                                                           \
    (void)force, (void)adv, (void)vel, (void)sf, (void)bx, (void)by, (void)bz, (void)c0; \
    (void)fw_, (void)acc_;                                                               \
    int y0_, y1_, z0_, z1_;                                                              \
    grid_region_rows(d, r_, &y0_, &y1_, &z0_, &z1_);                                     \
    _Pragma("omp parallel for collapse(2) schedule(static)")                             \
    for (int z = z0_; z < z1_; ++z)                                                      \
      for (int y = y0_; y < y1_; ++y) {                                                  \
        LBM_FN(consts_t) kc = *k0;                                                       \
        int xs_[2], xe_[2];                                                              \
        const int m_ = grid_region_row(d, r_, y, z, xs_, xe_);                           \
        for (int q_ = 0; q_ < m_; ++q_)                                                  \
        for (int x = xs_[q_]; x < xe_[q_]; ++x) {                                        \
          const ptrdiff_t cell = d->origin + (ptrdiff_t)x * d->sx + (ptrdiff_t)y * d->sy + \
                                 (ptrdiff_t)z * d->sz;                                   \
          if (ADE_) {                                                                    \
            const ptrdiff_t a_ = LBM_AUX(c->advection_dims, x, y, z);                    \
            kc.ax = adv[a_];                                                             \
            kc.ay = adv[a_ + c->advection_dims.sc];                                      \
            kc.az = adv[a_ + 2 * c->advection_dims.sc];                                  \
          } else if (force) {                                                            \
            const ptrdiff_t a_ = LBM_AUX(c->force_dims, x, y, z);                        \
            LBM_CELL_FORCE_CONSTS(kc, fw_ * (k0->fx + force[a_]),                        \
                                  fw_ * (k0->fy + force[a_ + c->force_dims.sc]),         \
                                  fw_ * (k0->fz + force[a_ + 2 * c->force_dims.sc]));    \
          }                                                                              \
          const LBM_FN(consts_t) *k = &kc;                                               \
          LBM_COLLIDE_CONSTS;                                                            \
          BODY                                                                           \
          if (ADE_ && sf) {                                                              \
            const ptrdiff_t a_ = LBM_AUX(c->source_force_dims, x, y, z);                 \
            const REAL dc_ = rho - c0;                                                   \
            const ptrdiff_t s_ = c->source_force_dims.sc;                                \
            sf[a_] = (acc_ ? sf[a_] : (REAL)0) + bx * dc_;                               \
            sf[a_ + s_] = (acc_ ? sf[a_ + s_] : (REAL)0) + by * dc_;                     \
            sf[a_ + 2 * s_] = (acc_ ? sf[a_ + 2 * s_] : (REAL)0) + bz * dc_;             \
          } else if (!ADE_ && vel) {                                                     \
            const ptrdiff_t a_ = LBM_AUX(c->velocity_dims, x, y, z);                     \
            vel[a_] = ux;                                                                \
            vel[a_ + c->velocity_dims.sc] = uy;                                          \
            vel[a_ + 2 * c->velocity_dims.sc] = uz;                                      \
          }                                                                              \
        }                                                                                \
      }                                                                                  \
  }
LBM_COUPLED_VARIANTS(LBM_DEFINE_COUPLED, coupled)
#undef LBM_SQRT
#undef LBM_DEFINE_COUPLED
#undef LBM_AUX
#undef LBM_LD
#undef LBM_ST
#undef LBM_T
#undef LBM_ZERO
#undef LBM_K_T
#undef LBM_K_ZERO

/* Whether the coupled SoA vector code serves populations of dims d and coupling fields
 * of dims a and b (NULL: not used): SoA, the same row and plane strides and origin (a
 * lane's cell lies at the same element in each), so that the lanes' ghost cells, which
 * the vector code computes too, fall on ghost cells of the coupling fields. */
static bool LBM_FN(coupled_vectors)(const grid_dims_t *d, const grid_dims_t *a,
                                    const grid_dims_t *b) {
  if (d->layout != GRID_SOA) return false;
  const grid_dims_t *f[2] = {a, b};
  for (int i = 0; i < 2; ++i)
    if (f[i] && (f[i]->layout != GRID_SOA || f[i]->sy != d->sy || f[i]->sz != d->sz ||
                 f[i]->origin != d->origin || f[i]->ghost != d->ghost || f[i]->gz != d->gz ||
                 f[i]->ncomp < 3))
      return false;
  return true;
}

static void LBM_FN(coupled_region)(const void *restrict vsrc, void *restrict vdst,
                                   const grid_dims_t *d, const lbm_params_t *p, lbm_variant_t v,
                                   const lbm_coupling_t *c, const grid_region_t *r) {
  ptrdiff_t off[LAT(Q)];
  for (int i = 0; i < LAT(Q); ++i)
    off[i] = (ptrdiff_t)i * d->sc - (ptrdiff_t)LAT_CX(i) * d->sx - (ptrdiff_t)LAT_CY(i) * d->sy -
             (ptrdiff_t)LAT_CZ(i) * d->sz;
  LBM_FN(consts_t) k;
  LBM_FN(consts_init)(&k, p, v);
  const bool ade = v == LBM_VARIANT_ADE_SRT || v == LBM_VARIANT_ADE_TRT;
  const void *in = ade ? c->advection : c->force;
  void *out = ade ? c->source_force : c->velocity;
  const grid_dims_t *in_d = ade ? &c->advection_dims : &c->force_dims;
  const grid_dims_t *out_d = ade ? &c->source_force_dims : &c->velocity_dims;
  const bool out_aligned = !out || ((uintptr_t)out % 64 == 0 &&
                                     (size_t)out_d->sc * sizeof(REAL) % 64 == 0);
  if (out_aligned && LBM_FN(coupled_vectors)(d, in ? in_d : NULL, out ? out_d : NULL)) {
    /* the vector code: every coupling field at the populations' element offsets */
    LBM_FN(vconsts_t) kv;
    LBM_FN(vconsts_init)(&kv, &k);
    const LBM_FN(vcouple_t) vc = {
        .in = in, .out = out, .in_sc = in ? in_d->sc : 0, .out_sc = out ? out_d->sc : 0,
        .fw = c->start && in ? (REAL)0.5 : (REAL)1, .bx = (REAL)c->beta[0],
        .by = (REAL)c->beta[1], .bz = (REAL)c->beta[2], .c0 = (REAL)c->c0,
        .acc = c->accumulate};
    const LBM_FN(soa_job_t) job = {
        .src = vsrc, .dst = vdst, .off = off, .sc = d->sc, .kv = &kv, .k0 = &k, .c = &vc,
        .cpl = LBM_COUPLED_PICK(vcpl)};
    LBM_FN(soa_all)(d, &job, r);
    return;
  }
  LBM_COUPLED_PICK(coupled)(vsrc, vdst, d, off, &k, c, r);
}

static void LBM_FN(coupled)(const void *restrict vsrc, void *restrict vdst, const grid_dims_t *d,
                            const lbm_params_t *p, lbm_variant_t v, const lbm_coupling_t *c) {
  LBM_FN(coupled_region)(vsrc, vdst, d, p, v, c, NULL);
}

/* (1 - tau) / c_s^2 S of the initial velocity at interior cell (x, y, z) into q[3][3]
 * (LBM_FILL_NONEQ): S by central differences of init, tau the relaxation time. */
static void LBM_FN(init_strain)(int x, int y, int z, lbm_init_fn init, void *ctx,
                                const lbm_params_t *p, double q[3][3]) {
  double du[3][3] = {{0}}; /* du[a][b] = d u_b / d x_a */
  for (int a = 0; a < LAT(D); ++a) {
    double hi[4], lo[4];
    init(x + (a == 0), y + (a == 1), z + (a == 2), ctx, hi);
    init(x - (a == 0), y - (a == 1), z - (a == 2), ctx, lo);
    for (int b = 0; b < 3; ++b) du[a][b] = 0.5 * (hi[1 + b] - lo[1 + b]);
  }
  double ss = 0.0;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      q[a][b] = 0.5 * (du[a][b] + du[b][a]);
      ss += q[a][b] * q[a][b];
    }
  const double tau = 1.0 / p->omega_plus + 3.0 * p->smagorinsky * p->smagorinsky * sqrt(2.0 * ss);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) q[a][b] *= (1.0 - tau) * LAT(INV_CS2);
}

static void LBM_FN(init)(void *vf, const grid_dims_t *d, const lbm_params_t *p, int flags,
                         lbm_init_fn init, void *ctx) {
  const int shifted = flags & LBM_FILL_SHIFTED;
  STORE *f = vf;
  const int g = d->ghost;
  /* padding and guards to zero (the SoA kernel reads them in lanes it throws away), in
     parallel like the kernels, so that pages land near the threads that use them */
  const size_t chunk = 1 << 16, nchunks = (d->elements + chunk - 1) / chunk;
#pragma omp parallel for schedule(static)
  for (size_t c = 0; c < nchunks; ++c)
    memset(f + c * chunk, 0, (c + 1 < nchunks ? chunk : d->elements - c * chunk) * sizeof(STORE));
#pragma omp parallel for schedule(static)
  for (int z = -d->gz; z < d->nz + d->gz; ++z)
    for (int y = -g; y < d->ny + g; ++y)
      for (int x = -g; x < d->nx + g; ++x) {
        bool ghost = x < 0 || y < 0 || z < 0 || x >= d->nx || y >= d->ny || z >= d->nz;
        double m[4] = {p->rho0, 0, 0, 0}, q[3][3] = {{0}}, tr = 0.0;
        if (!ghost && init) init(x, y, z, ctx, m);
        if (!ghost && init && (flags & LBM_FILL_NONEQ)) {
          LBM_FN(init_strain)(x, y, z, init, ctx, p, q);
          tr = (q[0][0] + q[1][1] + q[2][2]) / LAT(INV_CS2);
        }
        double usq = 0.5 * LAT(INV_CS2) * (m[1] * m[1] + m[2] * m[2] + m[3] * m[3]);
        for (int i = 0; i < LAT(Q); ++i) {
          double cu = LAT_CX(i) * m[1] + LAT_CY(i) * m[2] + LAT_CZ(i) * m[3];
          double rho = shifted ? m[0] - p->rho0 : m[0];
          /* the kernels' bracket (lbm_collide.h), in double */
          const double e =
              LAT(EQ) ? LBM_EQ13(i, cu, m[1], m[2], m[3])
                      : LAT(INV_CS2) * cu + 0.5 * LAT(INV_CS2) * LAT(INV_CS2) * cu * cu - usq;
          const double c[3] = {LAT_CX(i), LAT_CY(i), LAT_CZ(i)};
          double ne = -tr; /* (c c - c_s^2 I) : q */
          for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) ne += c[a] * c[b] * q[a][b];
          f[grid_index(d, x, y, z, i)] =
              LBM_ENC((REAL)(LBM_FN(lat_w)[i] * (rho + p->rho0 * (e + ne))));
        }
      }
}

/* Cells per run of the moments loop (the sums of a run stay on the stack). */
#define LBM_MOMENTS_RUN 512

/* rho and j of the n <= LBM_MOMENTS_RUN cells from cell (slot 0) on, cells sx apart: cell
 * by cell, each summing its values in direction order in registers (the directions
 * unrolled, the loop over the cells vectorised: a load per value, four stores per cell). */
static inline void LBM_FN(moments_run)(const STORE *restrict f, ptrdiff_t sx, ptrdiff_t sc, int n,
                                       double *restrict rho, double (*restrict j)[LBM_MOMENTS_RUN]) {
  for (int x = 0; x < n; ++x) {
    double r = 0.0, jx = 0.0, jy = 0.0, jz = 0.0;
    LBM_UNROLL for (int i = 0; i < LAT(Q); ++i) {
      const double v = (double)LBM_DEC(f[(ptrdiff_t)i * sc + (ptrdiff_t)x * sx]);
      r += v;
      jx += LAT_CX(i) * v;
      jy += LAT_CY(i) * v;
      jz += LAT_CZ(i) * v;
    }
    rho[x] = r;
    j[0][x] = jx;
    j[1][x] = jy;
    j[2][x] = jz;
  }
}

static void LBM_FN(moments)(const void *vf, const grid_dims_t *d, const lbm_params_t *p,
                            int shifted, double *rho_out, double *u_out) {
  const STORE *f = vf;
  /* stored PDFs are post-collision: their momentum holds the whole force of the step,
     the fluid velocity half of it */
  const double half = p->use_force ? -0.5 : 0.0;
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = 0; z < d->nz; ++z)
    for (int y = 0; y < d->ny; ++y)
      for (int x0 = 0; x0 < d->nx; x0 += LBM_MOMENTS_RUN) {
        const int n = d->nx - x0 < LBM_MOMENTS_RUN ? d->nx - x0 : LBM_MOMENTS_RUN;
        const STORE *run = f + grid_index(d, x0, y, z, 0);
        double rho[LBM_MOMENTS_RUN], j[3][LBM_MOMENTS_RUN];
        if (d->sx == 1) LBM_FN(moments_run)(run, 1, d->sc, n, rho, j); /* SoA: unit stride */
        else LBM_FN(moments_run)(run, d->sx, d->sc, n, rho, j);
        const size_t first = ((size_t)z * (size_t)d->ny + (size_t)y) * (size_t)d->nx + (size_t)x0;
        for (int x = 0; x < n; ++x) {
          rho_out[first + (size_t)x] = shifted ? rho[x] + p->rho0 : rho[x];
          for (int a = 0; a < 3; ++a)
            u_out[3 * (first + (size_t)x) + (size_t)a] = (j[a][x] + half * p->force[a]) / p->rho0;
        }
      }
}

static void LBM_FN(boundary)(void *vf, const lbm_link_t *links, size_t n, int negate,
                             const double *scale) {
  STORE *f = vf;
  /* links write wall slots and read fluid slots: independent, in any order */
  if (scale) { /* walls whose velocity changes in time: the factors of the step */
    REAL s[LBM_LINK_GROUPS];
    for (int g = 0; g < LBM_LINK_GROUPS; ++g) s[g] = (REAL)scale[g];
    const REAL sign = negate ? (REAL)-1 : (REAL)1;
#pragma omp parallel for schedule(static) if (n > 8192)
    for (size_t k = 0; k < n; ++k)
      f[links[k].to] =
          LBM_ENC(sign * LBM_DEC(f[links[k].from]) + (REAL)links[k].extra * s[links[k].group]);
  } else if (negate) {
#pragma omp parallel for schedule(static) if (n > 8192)
    for (size_t k = 0; k < n; ++k)
      f[links[k].to] = LBM_ENC(-LBM_DEC(f[links[k].from]) + (REAL)links[k].extra);
  } else {
#pragma omp parallel for schedule(static) if (n > 8192)
    for (size_t k = 0; k < n; ++k)
      f[links[k].to] = LBM_ENC(LBM_DEC(f[links[k].from]) + (REAL)links[k].extra);
  }
}

static void LBM_FN(bodies)(void *vf, const lbm_body_link_t *links, size_t n, int64_t *acc,
                           int nbodies) {
  STORE *f = vf;
  const REAL scale = (REAL)(double)(INT64_C(1) << LBM_FORCE_SHIFT);
  (void)nbodies;
#pragma omp parallel for schedule(static) reduction(+ : acc[:3 * nbodies]) if (n > 8192)
  for (size_t k = 0; k < n; ++k) {
    const lbm_body_link_t *l = &links[k];
    const REAL from = LBM_DEC(f[l->from]);
    const REAL v = (REAL)l->a * from + (REAL)l->b * LBM_DEC(f[l->from2]);
    f[l->to] = LBM_ENC(v);
    if (l->body < 0) continue;
    const REAL s = (from + LBM_DEC(f[l->to])) * scale;
    const int64_t m = (int64_t)llrint((double)s);
    const int c[3] = {LAT_CX(l->dir), LAT_CY(l->dir), LAT_CZ(l->dir)};
    for (int a = 0; a < 3; ++a)
      if (c[a]) acc[3 * l->body + a] += c[a] > 0 ? m : -m;
  }
}

static void LBM_FN(outlet)(void *vf, const grid_dims_t *d, const lbm_open_link_t *links,
                           size_t n, const lbm_params_t *p) {
  STORE *f = vf;
  const ptrdiff_t sc = d->sc;
  /* as the collision's constants (consts_init) */
  const REAL h = p->use_force ? (REAL)0.5 : (REAL)0;
  const REAL hfx = h * (REAL)p->force[0], hfy = h * (REAL)p->force[1],
             hfz = h * (REAL)p->force[2], inv_rho0 = (REAL)(1.0 / p->rho0);
  /* a cell's moments once for its links (listed together); the same values as per link */
#pragma omp parallel for schedule(static) if (n > 8192)
  for (size_t k0 = 0; k0 < n; k0 += 64) {
    const size_t k1 = k0 + 64 < n ? k0 + 64 : n;
    size_t cell = SIZE_MAX;
    REAL r = 0, fx = 0, fy = 0, fz = 0, gx = 0, gy = 0, gz = 0;
    for (size_t k = k0; k < k1; ++k) {
      const lbm_open_link_t *l = &links[k];
      if (l->cell[0] != cell) {
        const STORE *c1 = f + l->cell[0], *c2 = f + l->cell[1];
#define LBM_OUT_LD1(i) LBM_DEC(c1[(ptrdiff_t)(i) * sc])
#define LBM_OUT_LD2(i) LBM_DEC(c2[(ptrdiff_t)(i) * sc])
        LBM_OUTLET_CELL(LBM_OUT_LD1, LBM_OUT_LD2, r, fx, fy, fz, gx, gy, gz, hfx, hfy, hfz,
                        inv_rho0);
#undef LBM_OUT_LD1
#undef LBM_OUT_LD2
        cell = l->cell[0];
      }
      REAL v;
      LBM_OUTLET_LINK(v, l->dir, LBM_DEC(f[l->from]), (REAL)l->extra, (REAL)l->w2,
                      (REAL)l->wrho0, r, fx, fy, fz, gx, gy, gz);
      f[l->to] = LBM_ENC(v);
    }
  }
}

static void LBM_FN(pulled_density)(const void *vf, const grid_dims_t *d, double shift,
                                   void *vout, const grid_dims_t *od) {
  const STORE *f = vf;
  REAL *out = vout;
  const REAL sh = (REAL)shift;
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = 0; z < d->nz; ++z)
    for (int y = 0; y < d->ny; ++y)
      for (int x = 0; x < d->nx; ++x) {
        REAL r = LBM_DEC(f[grid_index(d, x, y, z, 0)]);
        LBM_UNROLL for (int i = 1; i < LAT(Q); ++i)
          r = r + LBM_DEC(f[grid_index(d, x - LAT_CX(i), y - LAT_CY(i), z - LAT_CZ(i), i)]);
        out[grid_index(od, x, y, z, 0)] = r + sh;
      }
}

/* The two sets: lbm_kernels_aos_<LNAME>_<SFX>_<LBM_LEVEL> and lbm_kernels_soa_... */
#define LBM_SET_(name, lat, sfx, level) name##_##lat##_##sfx##_##level
#define LBM_SET(name, lat, sfx, level) LBM_SET_(name, lat, sfx, level)
#define LBM_DEFINE_SET(NAME, LAYOUT)                                                     \
  const lbm_kernels_t LBM_SET(NAME, LNAME, SFX, LBM_LEVEL) = {.lattice = &LBM_CAT2(lattice, LNAME),              \
                                      .layout = LAYOUT,                                  \
                                      .esize = sizeof(STORE),                            \
                                      .storage = LBM_STORAGE,                            \
                                      .nontemporal = SIMD_NONTEMPORAL,                    \
                                      .stream_collide = LBM_FN(stream_collide),          \
                                      .coupled = LBM_FN(coupled),                        \
                                      .stream_collide_region = LBM_FN(stream_collide_region), \
                                      .coupled_region = LBM_FN(coupled_region),          \
                                      .init = LBM_FN(init),                              \
                                      .moments = LBM_FN(moments),                        \
                                      .boundary = LBM_FN(boundary),                      \
                                      .outlet = LBM_FN(outlet),                          \
                                      .bodies = LBM_FN(bodies),                          \
                                      .constants = LBM_FN(constants),                    \
                                      .pulled_density = LBM_FN(pulled_density)};
LBM_DEFINE_SET(lbm_kernels_aos, GRID_AOS)
LBM_DEFINE_SET(lbm_kernels_soa, GRID_SOA)

#undef LBM_DEFINE_SET
#undef LBM_SET
#undef LBM_SET_
#undef LBM_FN
#undef LBM_P
#undef CSFX
#undef STORE
#undef LBM_STORE16
#undef LBM_STORAGE
#undef LBM_DEC
#undef LBM_ENC
#undef LBM_VLD
#undef LBM_VST
#undef LBM_VENC
#undef LBM_VHOLD
#undef LBM_VFLUSH
#undef LBM_AOS_VEC
#undef LBM_VW
#undef LBM_SEG
#undef LBM_COPY_CELL
#undef LBM_VARIANTS
#undef LBM_PICK
#undef LBM_MOMENT_VARIANT
#undef LBM_COUPLED_VARIANTS
#undef LBM_COUPLED_PICK
#undef LBM_DEFINE_RUN
#undef LBM_DEFINE_VEC_SOA
#undef LBM_DEFINE_VEC_AOS
#undef LAT_CX
#undef LAT_CY
#undef LAT_CZ
#undef LAT_INV
#undef LAT_M
