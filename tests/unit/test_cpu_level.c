/* The CPU levels of the kernels (cpu_level.h): the dispatch picks the highest level the
 * CPU has (checked against the CPU's feature flags as the kernel lists them in
 * /proc/cpuinfo, independently of GCC's CPU model), TESSERA_CPU_LEVEL picks another and is
 * refused with the levels listed where it names none of this build, and every level
 * the CPU has computes bitwise what the lowest computes: stream-collide (every
 * collision, with and without force, advection-diffusion, streaming alone, copy), the
 * coupled kernels, initialisation, moments and boundary links, for every lattice, layout
 * and storage (double, single, both 16-bit formats), on a block whose rows end in a
 * partial vector. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpu_level.h"
#include "grid.h"
#include "lattice.h"
#include "lbm_kernels.h"
#include "store16.h"

static const char *const storage_names[LBM_STORAGES] = {"sp", "dp", "fp16s", "fp16c"};

/* 1 where every flag of the space-separated list is on the "flags" line of
 * /proc/cpuinfo; -1 where the file cannot be read. */
static int cpuinfo_has(const char *wanted) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return -1;
  static char line[1 << 14];
  int found = -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "flags", 5) == 0) {
      found = 1;
      char list[256];
      snprintf(list, sizeof list, "%s", wanted);
      for (char *w = strtok(list, " "); w && found; w = strtok(NULL, " ")) {
        char pad[64];
        snprintf(pad, sizeof pad, " %s", w);
        const char *at = line;
        int here = 0;
        while ((at = strstr(at, pad)) != NULL) {
          const char end = at[strlen(pad)];
          if (end == ' ' || end == '\n' || end == '\0') {
            here = 1;
            break;
          }
          at += strlen(pad);
        }
        found = here;
      }
      break;
    }
  fclose(f);
  return found;
}

/* The x86-64 psABI levels in the flag names of Linux (lzcnt is "abm"). */
static const char *const level_flags[][2] = {
    {"x86-64-v2", "cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3"},
    {"x86-64-v3", "avx avx2 bmi1 bmi2 f16c fma abm movbe xsave"},
    {"x86-64-v4", "avx512f avx512bw avx512cd avx512dq avx512vl"},
};

static void test_dispatch_picks_best(void **state) {
  (void)state;
  const int n = cpu_level_count();
  assert_true(n >= 1);
  const int best = cpu_level_best();
  if (cpu_level_find("x86-64-v2") < 0) { /* "native" or "generic": one level, always on */
    assert_int_equal(n, 1);
    assert_int_equal(best, 0);
    return;
  }
  assert_int_equal(n, 3);
  int expect = -1;
  for (int l = 0; l < 3; ++l) {
    assert_string_equal(cpu_level_name(l), level_flags[l][0]);
    int has = cpuinfo_has(level_flags[l][1]);
    if (has < 0) skip(); /* no /proc/cpuinfo: nothing independent to check against */
    for (int k = 0; k <= l && has; ++k) has = cpuinfo_has(level_flags[k][1]) == 1;
    assert_int_equal(cpu_level_supported(l), has);
    if (has) expect = l;
  }
  char built[256];
  cpu_level_describe(built, sizeof built);
  print_message("levels: %s; best %s\n", built, cpu_level_name(best));
  assert_int_equal(best, expect);
}

static void test_environment_override(void **state) {
  (void)state;
  char msg[512];
  int nl;
  const lattice_t *const *all = lattice_all(&nl);
  assert_int_equal(unsetenv("TESSERA_CPU_LEVEL"), 0);
  assert_int_equal(cpu_level_from_environment(msg, sizeof msg), 0);
  assert_int_equal(cpu_level_current(), cpu_level_best());
  for (int l = 0; l < cpu_level_count(); ++l) {
    assert_int_equal(setenv("TESSERA_CPU_LEVEL", cpu_level_name(l), 1), 0);
    if (!cpu_level_supported(l)) {
      assert_int_equal(cpu_level_from_environment(msg, sizeof msg), -1);
      assert_non_null(strstr(msg, "this CPU lacks that level"));
      assert_null(lbm_kernels_find(all[0], GRID_SOA, 1));
      continue;
    }
    assert_int_equal(cpu_level_from_environment(msg, sizeof msg), 0);
    assert_int_equal(cpu_level_current(), l);
    for (int li = 0; li < nl; ++li)
      for (int s = 0; s < 2; ++s)
        for (int dp = 0; dp < LBM_STORAGES; ++dp) {
          const lbm_kernels_t *k = lbm_kernels_find(all[li], (grid_layout_t)s, dp);
          assert_non_null(k);
          assert_ptr_equal(k, lbm_kernels_find_level(all[li], (grid_layout_t)s, dp, l));
          assert_ptr_equal(k->lattice, all[li]);
          assert_int_equal(k->layout, s);
          assert_int_equal((int)k->storage, dp);
          assert_int_equal(k->esize, lbm_storage_bytes((lbm_storage_t)dp));
          if (l > 0) assert_ptr_not_equal(k, lbm_kernels_find_level(all[li], (grid_layout_t)s, dp, 0));
        }
  }
  const char *bad[] = {"x86-64-v9", "", "X86-64-V3", "v3"};
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
    assert_int_equal(setenv("TESSERA_CPU_LEVEL", bad[b], 1), 0);
    assert_int_equal(cpu_level_from_environment(msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "no level of this build"));
    assert_non_null(strstr(msg, cpu_level_name(0))); /* the levels are listed */
    assert_int_equal(cpu_level_current(), -1);
  }
  assert_int_equal(unsetenv("TESSERA_CPU_LEVEL"), 0);
  assert_int_equal(cpu_level_from_environment(msg, sizeof msg), 0);
}

/* A field of a kernel set's layout and storage (the populations; aux: of the arithmetic's
 * precision, as the coupling fields), 64-byte aligned, every element (ghosts and padding
 * too) zero. */
typedef struct field {
  grid_dims_t d;
  size_t esize, bytes;
  lbm_storage_t storage;
  void *v;
} field_t;

static field_t field_make_as(const lbm_kernels_t *k, const int n[3], int ncomp, bool aux) {
  const lbm_storage_t st = aux ? (k->storage == LBM_STORAGE_F64 ? LBM_STORAGE_F64
                                                                : LBM_STORAGE_F32)
                               : k->storage;
  field_t f = {.d = grid_dims_make(n, ncomp, k->lattice->reach, k->layout, lbm_storage_bytes(st)),
               .esize = lbm_storage_bytes(st), .storage = st};
  f.bytes = (f.d.elements * f.esize + 63) / 64 * 64;
  f.v = aligned_alloc(64, f.bytes);
  assert_non_null(f.v);
  memset(f.v, 0, f.bytes);
  return f;
}
static field_t field_make(const lbm_kernels_t *k, const int n[3], int ncomp) {
  return field_make_as(k, n, ncomp, false);
}

/* base w_i (1 + scale r), r pseudo-random in [-1, 1], in every slot of every cell, ghosts
 * included (w_i: the lattice's weight for a PDF field, l NULL: 1); 16-bit fields hold it
 * shifted, less base w_i. */
static void fill(field_t *f, const lattice_t *l, double base, double scale) {
  const int g = f->d.ghost;
  for (int z = -g; z < f->d.nz + g; ++z)
    for (int y = -g; y < f->d.ny + g; ++y)
      for (int x = -g; x < f->d.nx + g; ++x)
        for (int c = 0; c < f->d.ncomp; ++c) {
          const unsigned h = (unsigned)x * 73856093u ^ (unsigned)y * 19349663u ^
                             (unsigned)z * 83492791u ^ (unsigned)c * 2654435761u;
          const double w = base * (l ? l->w[c] : 1.0);
          const double v = w * (1.0 + scale * ((double)(h % 2001u) / 1000.0 - 1.0));
          const size_t i = grid_index(&f->d, x, y, z, c);
          if (f->storage == LBM_STORAGE_F16S)
            ((uint16_t *)f->v)[i] = store16_s_encode((float)(v - w));
          else if (f->storage == LBM_STORAGE_F16C)
            ((uint16_t *)f->v)[i] = store16_c_encode((float)(v - w));
          else if (f->esize == 4) ((float *)f->v)[i] = (float)v;
          else ((double *)f->v)[i] = v;
        }
}

/* Bitwise equal interior cells (the kernels leave SoA ghost values unspecified). */
static void assert_same_interior(const field_t *a, const field_t *b, const char *what,
                                 const lattice_t *l, int level, int dp, grid_layout_t s) {
  for (int z = 0; z < a->d.nz; ++z)
    for (int y = 0; y < a->d.ny; ++y)
      for (int x = 0; x < a->d.nx; ++x)
        for (int c = 0; c < a->d.ncomp; ++c) {
          const size_t i = grid_index(&a->d, x, y, z, c);
          if (memcmp((const char *)a->v + i * a->esize, (const char *)b->v + i * b->esize,
                     a->esize) != 0)
            fail_msg("%s %s %s %s: cell (%d,%d,%d) component %d differs between %s and %s", what,
                     l->name, storage_names[dp], grid_layout_name(s), x, y, z, c,
                     cpu_level_name(level), cpu_level_name(0));
        }
}

static void init_flow(int x, int y, int z, void *ctx, double out[4]) {
  (void)ctx;
  out[0] = 1.0 + 0.01 * (double)((x + 2 * y + 3 * z) % 7);
  out[1] = 0.02 * (double)(x % 3 - 1);
  out[2] = -0.015 * (double)(y % 2);
  out[3] = 0.01 * (double)(z % 2);
}

/* One level's results of every kernel on the same inputs, into out[] (fields). */
enum { OUTS = 28 };
static int run_level(const lattice_t *l, grid_layout_t s, int dp, int level, field_t *out) {
  const lbm_kernels_t *k = lbm_kernels_find_level(l, s, dp, level);
  assert_non_null(k);
  const int n[3] = {37, 3, l->d == 3 ? 2 : 1};
  int m = 0;
  field_t src = field_make(k, n, l->q);
  fill(&src, l, 1.0, 0.05);
  const lbm_variant_t variants[] = {LBM_VARIANT_SRT,     LBM_VARIANT_TRT,     LBM_VARIANT_MRT,
                                    LBM_VARIANT_CUMULANT, LBM_VARIANT_ADE_SRT, LBM_VARIANT_ADE_TRT,
                                    LBM_VARIANT_STREAM,   LBM_VARIANT_COPY};
  for (size_t vi = 0; vi < sizeof variants / sizeof variants[0]; ++vi)
    for (int force = 0; force < 3; ++force) { /* 2: Smagorinsky, flow variants only */
      const int flow = vi < 4;
      if (force && !flow) continue;
      if (variants[vi] == LBM_VARIANT_CUMULANT && !lbm_cumulant_lattice(l)) continue;
      lbm_params_t p = {.omega_plus = 1.7, .omega_minus = lbm_omega_minus(1.7, 0.25),
                        .rho0 = 1, .force = {1e-4, -2e-5, 3e-5}, .use_force = force == 1,
                        .velocity = {0.03, -0.02, 0.01}, .smagorinsky = force == 2 ? 0.17 : 0,
                        .magic = 0.25, .cumulant_rate = {1.1, 0.9, 1.2, 1.0, 1.3}};
      for (int q = 0; q < l->q; ++q) p.mrt_rate[q] = 1.0 + 0.05 * (q % 7);
      out[m] = field_make(k, n, l->q);
      k->stream_collide(src.v, out[m].v, &src.d, &p, variants[vi]);
      ++m;
    }
  /* coupled: a force per cell and the velocity out; ADE with a velocity per cell and a
     source out */
  field_t aux = field_make_as(k, n, 3, true);
  fill(&aux, NULL, 0.02, 0.5); /* a force of 1e-2 or an advection velocity of 0.02 */
  for (int v = 0; v < 4; ++v) {
    const lbm_params_t p = {.omega_plus = 1.3, .omega_minus = lbm_omega_minus(1.3, 0.1875),
                            .rho0 = 1, .force = {2e-5, 1e-5, -1e-5}, .use_force = 1};
    const int ade = v >= 2;
    out[m] = field_make(k, n, l->q);
    out[m + 1] = field_make_as(k, n, 3, true);
    lbm_coupling_t c = {.beta = {0, 0, 1e-3}, .c0 = 1};
    if (ade) {
      c.advection = aux.v;
      c.advection_dims = aux.d;
      c.source_force = out[m + 1].v;
      c.source_force_dims = out[m + 1].d;
    } else {
      c.force = aux.v;
      c.force_dims = aux.d;
      c.velocity = out[m + 1].v;
      c.velocity_dims = out[m + 1].d;
    }
    const lbm_variant_t var = (v & 1) ? (ade ? LBM_VARIANT_ADE_TRT : LBM_VARIANT_TRT)
                                      : (ade ? LBM_VARIANT_ADE_SRT : LBM_VARIANT_SRT);
    k->coupled(src.v, out[m].v, &src.d, &p, var, &c);
    m += 2;
  }
  /* init, then moments (as doubles) and boundary links on the initialised field */
  const lbm_params_t p = {.omega_plus = 1, .omega_minus = 1, .rho0 = 1, .force = {1e-4, 0, 0},
                          .use_force = 1};
  out[m] = field_make(k, n, l->q);
  k->init(out[m].v, &out[m].d, &p, 1, init_flow, NULL);
  const size_t cells = (size_t)n[0] * (size_t)n[1] * (size_t)n[2];
  double *mom = malloc(4 * cells * sizeof(double));
  assert_non_null(mom);
  k->moments(out[m].v, &out[m].d, &p, 1, mom, mom + cells);
  /* the moments as a field of 4 doubles per cell, to compare as the others */
  const lbm_kernels_t *kd = lbm_kernels_find_level(l, GRID_AOS, 1, level);
  out[m + 1] = field_make(kd, n, 4);
  size_t q = 0;
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x, ++q) {
        double *d = (double *)out[m + 1].v;
        d[grid_index(&out[m + 1].d, x, y, z, 0)] = mom[q];
        for (int a = 0; a < 3; ++a) d[grid_index(&out[m + 1].d, x, y, z, 1 + a)] = mom[cells + 3 * q + (size_t)a];
      }
  free(mom);
  /* links write slots of row y = 0 and read slots of row y = 1, as the kernels' links
     write wall slots and read fluid slots */
  lbm_link_t links[64];
  for (int i = 0; i < 64; ++i) {
    const int x = i % n[0], dir = 1 + i % (l->q - 1);
    links[i] = (lbm_link_t){.to = grid_index(&out[m].d, x, 0, 0, dir),
                            .from = grid_index(&out[m].d, (x + 5) % n[0], 1, 0, l->inv[dir]),
                            .extra = 1e-3 * (double)(i % 5), .group = i % LBM_LINK_GROUPS};
  }
  /* the second half with factors per group, as walls whose velocity changes in time */
  const double scale[LBM_LINK_GROUPS] = {1, 0.5, 0.3, 1.0 / 3.0, 0, 0.9, 0.1, 2};
  k->boundary(out[m].v, links, 32, 0, NULL);
  k->boundary(out[m].v, links + 32, 16, 1, scale);
  k->boundary(out[m].v, links + 48, 16, 0, scale);
  m += 2;
  free(src.v);
  free(aux.v);
  assert_true(m <= OUTS);
  return m;
}

static void test_levels_bitwise(void **state) {
  (void)state;
  int nl;
  const lattice_t *const *all = lattice_all(&nl);
  int compared = 0;
  for (int li = 0; li < nl; ++li)
    for (int s = 0; s < 2; ++s)
      for (int dp = 0; dp < LBM_STORAGES; ++dp) {
        field_t base[OUTS], other[OUTS];
        const int m = run_level(all[li], (grid_layout_t)s, dp, 0, base);
        for (int level = 1; level < cpu_level_count(); ++level) {
          if (!cpu_level_supported(level)) continue;
          assert_int_equal(run_level(all[li], (grid_layout_t)s, dp, level, other), m);
          for (int o = 0; o < m; ++o) {
            char what[32];
            snprintf(what, sizeof what, "output %d", o);
            assert_same_interior(&base[o], &other[o], what, all[li], level, dp, (grid_layout_t)s);
            free(other[o].v);
          }
          ++compared;
        }
        for (int o = 0; o < m; ++o) free(base[o].v);
      }
  print_message("%d level comparisons (lattice, layout, storage) against %s\n", compared,
                cpu_level_name(0));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dispatch_picks_best),
      cmocka_unit_test(test_environment_override),
      cmocka_unit_test(test_levels_bitwise),
  };
  return cmocka_run_group_tests_name("cpu_level", tests, NULL, NULL);
}
