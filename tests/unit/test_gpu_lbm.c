#define _DEFAULT_SOURCE /* mkdtemp */
/* The OpenCL LBM stream-collide (kernels_gpu, SoA) against the CPU kernel (kernels_cpu,
 * AoS) on the same block: the same field in, bitwise the same field out, for every
 * lattice, SRT and TRT, with and without force, advection-diffusion, and the coupled
 * variants (a force per cell in and the velocity out, with the half force of the first
 * step; an advection velocity per cell in and the scalar's force out: the per-cell
 * outputs compared as well), in single and double precision, over several steps. Both
 * evaluate the macros of lbm_collide.h with contraction off, so no tolerance is
 * needed. Also: a device index that does not exist and a kernel source folder with a
 * broken kernel give clear errors (the build log included); transfers between host and
 * device split into pieces (as large ones are, for NVIDIA's driver) move every byte.
 *
 * Runs on the first OpenCL device (PoCL in CI); skipped (exit 77) where there is none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "field.h"
#include "gpu_buffer.h"
#include "gpu_field.h"
#include "gpu_lbm.h"
#include "grid.h"
#include "lbm_collide.h"
#include "lbm_kernels.h"
#include "opencl.h"

static opencl_context_t *ctx;
static gpu_field_programs_t *progs;

/* 3 steps on both devices from the same random field; compares all interior cells (and
 * the per-cell output of a coupled step). */
static void compare(const lattice_t *l, int dp, int trt, int force, int ade, int coupled,
                    int les) {
  tsr_error_t err;
  const lbm_kernels_t *k = lbm_kernels_find(l, GRID_AOS, dp);
  const int n[3] = {13, 6, 5};
  const grid_dims_t d = grid_dims_make(n, k->lattice->q, 1, GRID_AOS, k->esize);
  const size_t ne = d.elements, es = k->esize;
  uint8_t *a = malloc(ne * es), *b = malloc(ne * es), *g = malloc(ne * es);
  double consts[LBM_CONSTS_COUNT(LATTICE_MAX_Q)];
  srand(4242);
  for (size_t e = 0; e < ne; ++e) {
    const double v = k->lattice->w[e % (size_t)k->lattice->q] * (0.9 + 0.2 * rand() / (double)RAND_MAX);
    if (dp) ((double *)a)[e] = v;
    else ((float *)a)[e] = (float)v;
  }
  memcpy(b, a, ne * es);
  lbm_params_t p = {.omega_plus = 1.6, .omega_minus = lbm_omega_minus(1.6, 3.0 / 16),
                    .rho0 = 1, .force = {2e-5, -1e-5, l->d == 3 ? 3e-6 : 0}, .use_force = force,
                    .velocity = {0.02, 0.01, l->d == 3 ? -0.03 : 0},
                    .smagorinsky = les ? 0.17 : 0, .magic = 3.0 / 16};
  for (int m = 0; m < l->q; ++m) p.mrt_rate[m] = 1.0 + 0.05 * (m % 7); /* distinct rates */
  for (int r = 0; r < 5; ++r) p.cumulant_rate[r] = 1.0 + 0.1 * r;
  const lbm_variant_t v = ade ? (trt ? LBM_VARIANT_ADE_TRT : LBM_VARIANT_ADE_SRT)
                          : trt == 3 ? LBM_VARIANT_CUMULANT
                          : trt == 2 ? LBM_VARIANT_MRT
                          : trt == 1 ? LBM_VARIANT_TRT
                                     : LBM_VARIANT_SRT;
  k->constants(&p, v, consts);
  gpu_lbm_spec_t spec = {.lattice = k->lattice, .n = {d.nx, d.ny, d.nz}, .dp = dp,
                         .collision = trt, .les = les, .force = force, .ade = ade,
                         .coupled = coupled};
  /* coupled: a random field in (a force of the order of the constant one, or an
     advection velocity), the output field out; on the CPU as on the device */
  const grid_dims_t ad = grid_dims_make(n, 3, 0, GRID_SOA, es);
  void *ain = field_values_alloc(&ad, es), *aout = field_values_alloc(&ad, es),
       *gout = field_values_alloc(&ad, es);
  assert_non_null(ain);
  assert_non_null(aout);
  assert_non_null(gout);
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x)
        for (int c = 0; c < 3; ++c)
          field_set(ain, es, grid_index(&ad, x, y, z, c),
                    (ade ? 0.05 : 3e-5) * (rand() / (double)RAND_MAX - 0.5));
  gpu_buffer_t din = {0}, dout = {0};
  const size_t abytes = ad.elements * es;
  if (coupled) {
    if (gpu_buffer_create(ctx, abytes, "in", &din, &err) != TSR_OK ||
        gpu_buffer_create(ctx, abytes, "out", &dout, &err) != TSR_OK ||
        gpu_buffer_write(ctx, &din, 0, abytes, ain, NULL, &err) != TSR_OK ||
        gpu_buffer_write(ctx, &dout, 0, abytes, aout, NULL, &err) != TSR_OK)
      fail_msg("%s", err.text);
  }
  gpu_lbm_t *gp = NULL;
  gpu_field_t gf;
  int width[3], ghost, gz; /* as the field kit stores the populations, and gpu_lbm */
  lattice_ghost_width(k->lattice, width);
  grid_ghost_of(width, &ghost, &gz);
  const gpu_field_shape_t shape = {.n = {n[0], n[1], n[2]}, .ghost = ghost, .gz = gz,
                                   .components = k->lattice->q, .esize = es, .copies = 2};
  if (gpu_lbm_create(ctx, &spec, consts, &gp, &err) != TSR_OK) fail_msg("%s", err.text);
  if (gpu_field_create(&gf, progs, &shape, &err) != TSR_OK) fail_msg("%s", err.text);
  if (gpu_field_upload(&gf, a, &d, &err) != TSR_OK) fail_msg("%s", err.text);
  /* the ghost layer stays as it was: the same on both sides */
  for (int s = 0; s < 3; ++s) {
    if (!coupled) {
      k->stream_collide(s % 2 ? b : a, s % 2 ? a : b, &d, &p, v);
      gpu_lbm_field_t f = {.grid = {gf.grid[0].mem, gf.grid[1].mem}, .cur = gf.cur};
      if (gpu_lbm_step(gp, &f, &err) != TSR_OK) fail_msg("%s", err.text);
      gpu_field_swap(&gf);
      continue;
    }
    lbm_coupling_t cp = {.beta = {0.3, -0.2, 0.1}, .c0 = 0.4, .start = s == 0};
    gpu_lbm_aux_t ga = {.in = &din, .out = &dout, .dims = ad, .beta = {0.3, -0.2, 0.1},
                        .c0 = 0.4, .start = s == 0};
    if (ade) {
      cp.advection = ain, cp.advection_dims = ad;
      cp.source_force = aout, cp.source_force_dims = ad;
    } else {
      cp.force = ain, cp.force_dims = ad;
      cp.velocity = aout, cp.velocity_dims = ad;
    }
    k->coupled(s % 2 ? b : a, s % 2 ? a : b, &d, &p, v, &cp);
    gpu_lbm_field_t f = {.grid = {gf.grid[0].mem, gf.grid[1].mem}, .cur = gf.cur};
    if (gpu_lbm_step_coupled(gp, &f, &ga, &err) != TSR_OK) fail_msg("%s", err.text);
    gpu_field_swap(&gf);
  }
  if (coupled) {
    if (gpu_buffer_read(ctx, &dout, 0, abytes, gout, NULL, &err) != TSR_OK) fail_msg("%s", err.text);
    int off = 0;
    for (int z = 0; z < n[2]; ++z)
      for (int y = 0; y < n[1]; ++y)
        for (int x = 0; x < n[0]; ++x)
          for (int c = 0; c < 3; ++c) {
            const size_t e = grid_index(&ad, x, y, z, c);
            if (memcmp((uint8_t *)gout + e * es, (uint8_t *)aout + e * es, es) != 0 && off++ < 3)
              print_message("%s dp %d trt %d ade %d coupled: output (%d,%d,%d)[%d] differs\n",
                            l->name, dp, trt, ade, x, y, z, c);
          }
    assert_int_equal(off, 0);
  }
  gpu_buffer_free(&din);
  gpu_buffer_free(&dout);
  free(ain);
  free(aout);
  free(gout);
  memcpy(g, b, ne * es); /* ghosts as on the CPU */
  if (gpu_field_download(&gf, g, &d, &err) != TSR_OK) fail_msg("%s", err.text);
  int bad = 0;
  for (int z = 0; z < d.nz; ++z)
    for (int y = 0; y < d.ny; ++y)
      for (int x = 0; x < d.nx; ++x)
        for (int i = 0; i < k->lattice->q; ++i) {
          size_t e = grid_index(&d, x, y, z, i);
          if (memcmp(g + e * es, b + e * es, es) != 0 && bad++ < 3)
            print_message("%s dp %d trt %d force %d ade %d: cell (%d,%d,%d) slot %d differs\n",
                          l->name, dp, trt, force, ade, x, y, z, i);
        }
  gpu_field_release(&gf);
  gpu_lbm_free(&gp);
  free(a);
  free(b);
  free(g);
  assert_int_equal(bad, 0);
}

/* SRT and TRT on every lattice, each mode, in one precision (dp 1: where the device has
 * it). */
static void cpu_gpu_bitwise(int dp) {
  int nl;
  const lattice_t *const *all = lattice_all(&nl);
  if (dp && !opencl_context_desc(ctx)->double_precision) return;
  for (int li = 0; li < nl; ++li)
    for (int trt = 0; trt < 2 && !all[li]->moment_eq; ++trt) /* D3Q13: MRT only */
      for (int mode = 0; mode < 5; ++mode) { /* no force, force, advection-diffusion,
                                                 coupled flow, coupled advection-diffusion */
        const int force = mode == 1, ade = mode == 2 || mode == 4, coupled = mode >= 3;
        compare(all[li], dp, trt, force, ade, coupled, 0);
      }
}

static void test_cpu_gpu_bitwise(void **state) {
  (void)state;
  cpu_gpu_bitwise(0);
}

static void test_cpu_gpu_bitwise_dp(void **state) {
  (void)state;
  cpu_gpu_bitwise(1);
}

/* The moment-space collisions with a force, plain and coupled, both precisions: every
 * value bitwise as on the CPU. PoCL builds an MRT program in 6 to 14 s on the 2-core CI
 * machine (the cumulant's and the Smagorinsky SRT/TRT ones in about 2 s), so each group is
 * a test of its own and a selection: "moments", MRT (trt 2) on every flow lattice once
 * (D3Q13 coupled, DP),
 * D3Q19's with the Smagorinsky model; "les", the Smagorinsky model with SRT and TRT (les
 * 1) and the cumulant (trt 3: D2Q9, D3Q27) with and without it. */
typedef struct {
  const lattice_t *l;
  int dp, trt, les, coupled;
} moment_case_t;

static void compare_cases(const moment_case_t *cases, size_t n) {
  for (size_t c = 0; c < n; ++c)
    if (!cases[c].dp || opencl_context_desc(ctx)->double_precision)
      compare(cases[c].l, cases[c].dp, cases[c].trt, 1, 0, cases[c].coupled, cases[c].les);
}

static void test_cpu_gpu_bitwise_mrt(void **state) {
  (void)state;
  static const moment_case_t cases[] = {{&lattice_d2q9, 1, 2, 0, 0},
                                        {&lattice_d3q13, 1, 2, 0, 1},
                                        {&lattice_d3q15, 0, 2, 0, 1},
                                        {&lattice_d3q19, 1, 2, 1, 1},
                                        {&lattice_d3q27, 1, 2, 0, 0}};
  compare_cases(cases, sizeof cases / sizeof cases[0]);
}

static void test_cpu_gpu_bitwise_les_cumulant(void **state) {
  (void)state;
  static const moment_case_t cases[] = {{&lattice_d3q19, 0, 0, 1, 1}, {&lattice_d2q9, 1, 1, 1, 0},
                                        {&lattice_d3q27, 0, 1, 1, 1}, {&lattice_d2q9, 0, 3, 0, 0},
                                        {&lattice_d3q27, 1, 3, 0, 1}, {&lattice_d3q27, 0, 3, 1, 0}};
  compare_cases(cases, sizeof cases / sizeof cases[0]);
}

static void test_bad_device(void **state) {
  (void)state;
  tsr_error_t err;
  opencl_select_t sel = opencl_select_default();
  sel.device = 99;
  opencl_context_t *c = NULL;
  assert_int_equal(opencl_context_create(&sel, &c, &err), TSR_ERR_INVALID);
  assert_non_null(strstr(err.text, "OpenCL device 99 does not exist"));
  assert_non_null(strstr(err.text, "its devices: 0: "));
  sel = opencl_select_default();
  snprintf(sel.platform_name, sizeof sel.platform_name, "no such platform");
  assert_int_equal(opencl_context_create(&sel, &c, &err), TSR_ERR_INVALID);
  assert_non_null(strstr(err.text, "no OpenCL platform name contains \"no such platform\""));
}

/* A kernel source folder whose lbm.cl does not compile: the build log is in the error. */
static void test_build_failure(void **state) {
  (void)state;
  tsr_error_t err;
  char dir[] = "/tmp/tessera_cl_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256];
  const char *empty[3] = {"lattice_defs.h", "store16.h", "lbm_collide.h"};
  FILE *fp;
  for (int i = 0; i < 3; ++i) {
    snprintf(path, sizeof path, "%s/%s", dir, empty[i]);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("/* empty */\n", fp);
    fclose(fp);
  }
  snprintf(path, sizeof path, "%s/lbm.cl", dir);
  fp = fopen(path, "w");
  assert_non_null(fp);
  fputs("__kernel void lbm_stream_collide(__global float *f) { f[0] = undeclared_name; }\n", fp);
  fclose(fp);
  float consts[LBM_CONSTS_COUNT(LATTICE_MAX_Q)] = {0};
  gpu_lbm_spec_t spec = {.lattice = &lattice_d3q19, .n = {4, 4, 4}, .dp = 0, .collision = 1,
                         .source_dir = dir};
  gpu_lbm_t *gp = NULL;
  assert_int_equal(gpu_lbm_create(ctx, &spec, consts, &gp, &err), TSR_ERR_OPENCL);
  assert_non_null(strstr(err.text, "CL_BUILD_PROGRAM_FAILURE"));
  assert_non_null(strstr(err.text, "undeclared_name"));
  remove(path);
  for (int i = 0; i < 3; ++i) {
    snprintf(path, sizeof path, "%s/%s", dir, empty[i]);
    remove(path);
  }
  rmdir(dir);
}

/* Reads and writes in pieces of 64 bytes (1 GiB in a run): at offsets, of lengths that
 * are and are not multiples of the piece, blocking and with an event; every byte lands
 * where the unsplit copy puts it. */
static void test_transfer_pieces(void **state) {
  (void)state;
  tsr_error_t err;
  enum { N = 1000 };
  uint8_t src[N], back[N];
  for (int i = 0; i < N; ++i) src[i] = (uint8_t)(i * 37 + 11);
  gpu_buffer_t b = {0};
  assert_int_equal(gpu_buffer_create(ctx, N, "test", &b, &err), TSR_OK);
  assert_int_equal(gpu_buffer_write(ctx, &b, 0, N, src, NULL, &err), TSR_OK);
  const size_t was = gpu_buffer_set_piece(64);
  const size_t offs[3] = {0, 3, 128}, lens[3] = {64, 200, 777};
  for (int k = 0; k < 3; ++k) {
    uint8_t in[N];
    for (size_t i = 0; i < lens[k]; ++i) in[i] = (uint8_t)(255 - i - k);
    void *ev = NULL;
    assert_int_equal(gpu_buffer_write(ctx, &b, offs[k], lens[k], in, k == 1 ? &ev : NULL, &err),
                     TSR_OK);
    assert_int_equal(gpu_event_wait(&ev, &err), TSR_OK);
    memcpy(src + offs[k], in, lens[k]);
    memset(back, 0, sizeof back);
    assert_int_equal(gpu_buffer_read(ctx, &b, 0, N, back, k == 2 ? &ev : NULL, &err), TSR_OK);
    assert_int_equal(gpu_event_wait(&ev, &err), TSR_OK);
    assert_memory_equal(back, src, N);
    memset(back, 0, sizeof back);
    assert_int_equal(gpu_buffer_read(ctx, &b, offs[k], lens[k], back, NULL, &err), TSR_OK);
    assert_memory_equal(back, src + offs[k], lens[k]);
  }
  gpu_buffer_set_piece(was);
  gpu_buffer_free(&b);
}

int main(int argc, char **argv) {
  tsr_error_t err;
  opencl_select_t sel = opencl_select_default();
  opencl_device_desc_t *list = NULL;
  size_t n = 0;
  if (opencl_list_devices(&list, &n, &err) != TSR_OK || n == 0) {
    free(list);
    printf("skipped: no OpenCL device on this machine (install pocl-opencl-icd)\n");
    return 77;
  }
  free(list);
  if (opencl_context_create(&sel, &ctx, &err) != TSR_OK ||
      gpu_field_programs_create(ctx, &progs, &err) != TSR_OK) {
    fprintf(stderr, "%s\n", err.text);
    return 1;
  }
  printf("OpenCL device: %s\n", opencl_context_desc(ctx)->name);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cpu_gpu_bitwise),
      cmocka_unit_test(test_bad_device),
      cmocka_unit_test(test_build_failure),
      cmocka_unit_test(test_transfer_pieces),
  };
  /* "moments", "les", "dp": the MRT programs, the Smagorinsky and cumulant ones, and SRT
     and TRT in double precision, tests of their own (with an empty PoCL cache the
     programs' builds are the time: the MRT ones take as long as all the others, and SRT
     and TRT in both precisions took 62 s of busy CI) */
  const struct CMUnitTest mrt[] = {cmocka_unit_test(test_cpu_gpu_bitwise_mrt)};
  const struct CMUnitTest les[] = {cmocka_unit_test(test_cpu_gpu_bitwise_les_cumulant)};
  const struct CMUnitTest dp[] = {cmocka_unit_test(test_cpu_gpu_bitwise_dp)};
  const char *group = argc > 1 ? argv[1] : "";
  int rc = strcmp(group, "moments") == 0 ? cmocka_run_group_tests_name("gpu_lbm_moments", mrt, NULL, NULL)
           : strcmp(group, "les") == 0   ? cmocka_run_group_tests_name("gpu_lbm_les", les, NULL, NULL)
           : strcmp(group, "dp") == 0    ? cmocka_run_group_tests_name("gpu_lbm_dp", dp, NULL, NULL)
                                         : cmocka_run_group_tests_name("gpu_lbm", tests, NULL, NULL);
  gpu_field_programs_free(&progs);
  opencl_context_free(&ctx);
  return rc;
}
