/* statistics: time statistics of other modules' quantities, per cell (statistics.h).
 *
 * The samples are the steps s with from <= s <= to and (s - from) % every == 0. At each
 * the quantities are sampled on the host as output samples them (after their prepare
 * items and output sweeps, in lattice units) and every cell's running moments are
 * updated by Welford's recurrence (n: the samples so far, this one included):
 *   d = x - mean;  mean += d / n;  M2 += d (x - mean)
 * and for a quantity of three components the co-moments of its pairs,
 *   C_ab += (x_a - mean_a before) (x_b - mean_b after).
 * Published as <q>_mean, <q>_rms = sqrt(M2 / n) (the root mean square of the
 * fluctuation x - mean, each component) and, for three components, <q>_covariance =
 * C / n (pairs xy, xz, yz: with the velocity, the Reynolds stresses over -rho); all 0
 * before the first sample. The moments and every cell's n are one host field of doubles
 * (field_spec_t.host, also on GPU blocks), so checkpoints keep them and a restart, on any
 * processes and hardware, continues them bit for bit; it may move the window (from, to,
 * every): the samples taken stay what they are. */
#include "statistics.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "field.h"
#include "sim.h"
#include "verdict.h"

#define STAT_FIELD "statistics.moments"

/* STAT_EVERY: steps between samples by default. A sample costs about a step of the flow
 * (the moments, a pass over the statistics); 25 keeps that at 4% of the run, and the
 * flow barely changes in 25 steps at a lattice Mach number of 0.1 (a flow-through of 100
 * cells takes 1700 steps at U = 0.06). */
enum { STAT_MAX = 4, STAT_NAME = SIMULATION_NAME_MAX + 16, STAT_EVERY = 25 };
enum { STAT_MEAN, STAT_RMS, STAT_COVARIANCE };

/* The components of the covariances xy, xz, yz, in order. */
static const int stat_pair[3][2] = {{0, 1}, {0, 2}, {1, 2}};

/* One quantity whose statistics are kept. */
typedef struct stat_q {
  char name[SIMULATION_NAME_MAX];
  int components;
  int offset;                        /* its first moment in the field (after n) */
  char out[3][STAT_NAME];            /* <q>_mean, <q>_rms, <q>_covariance */
  char columns[3][3][STAT_NAME];     /* their probe columns */
} stat_q_t;

typedef struct stat_state stat_state_t;

/* A published quantity: which statistic of which quantity (a sampler's context). */
typedef struct stat_out {
  const stat_state_t *s;
  int q, kind;
} stat_out_t;

struct stat_state {
  stat_q_t q[STAT_MAX];
  int nq;
  int64_t from, to, every;           /* to: INT64_MAX where the samples do not end */
  int components;                    /* of the field: n, then 2 c (+ 3) per quantity */
  int field_id;
  const char *sampled[STAT_MAX + 1]; /* the quantities' names, NULL-ended (samples) */
  stat_out_t outs[MODULE_MAX_QUANTITIES];
};

static tsr_status stat_read(config_t *cfg, const simulation_options_t *so, void **state,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  stat_state_t *s = calloc(1, sizeof *s);
  config_node_t *n = NULL;
  char names[STAT_MAX][SIMULATION_NAME_MAX];
  size_t count = 0;
  (void)so;
  *state = NULL;
  TSR_CHECK(s, TSR_ERR_NOMEM, "out of memory");
  *s = (stat_state_t){.every = STAT_EVERY, .to = INT64_MAX, .field_id = -1};
  TSR_TRY(config_object(config_root(cfg), "statistics", true, &n, err));
  TSR_TRY(config_strings(n, "quantities", true, STAT_MAX, sizeof names[0], &names[0][0], &count,
                         err));
  TSR_CHECK(count >= 1, TSR_ERR_INVALID,
            "%s: statistics.quantities: an empty list; name the quantities to average "
            "(at most %d)", config_source(cfg), STAT_MAX);
  TSR_TRY(config_int(n, "from", false, 0, INT64_MAX / 2, &s->from, err));
  TSR_TRY(config_int(n, "to", false, 0, INT64_MAX / 2, &s->to, err));
  TSR_TRY(config_int(n, "every", false, 1, INT64_MAX / 2, &s->every, err));
  TSR_CHECK(s->to >= s->from, TSR_ERR_INVALID,
            "%s: statistics.to = %lld: before statistics.from = %lld; the samples are the "
            "steps from..to", config_source(cfg), (long long)s->to, (long long)s->from);
  for (size_t i = 0; i < count && i < STAT_MAX; ++i) {
    for (size_t j = 0; j < i; ++j)
      TSR_CHECK(strcmp(names[i], names[j]) != 0, TSR_ERR_INVALID,
                "%s: statistics.quantities[%zu] = \"%s\": given twice", config_source(cfg), i,
                names[i]);
    memcpy(s->q[i].name, names[i], sizeof s->q[i].name);
    s->sampled[i] = s->q[i].name;
  }
  s->nq = (int)count;
  *state = s;
  s = NULL;
cleanup:
  free(s);
  return st;
}

static void stat_free(void *state) { free(state); }

/* The calibration's physics: nothing to average (the statistics cost output time). */
static tsr_status stat_calibration(const void *state, void **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  (void)state;
  stat_state_t *s = calloc(1, sizeof *s);
  *out = NULL;
  TSR_CHECK(s, TSR_ERR_NOMEM, "out of memory");
  *s = (stat_state_t){.every = 1, .to = INT64_MAX, .field_id = -1};
  *out = s;
cleanup:
  return st;
}

static void stat_describe(const void *state, bool cpu, bool gpu, char *out, size_t cap) {
  (void)cpu, (void)gpu;
  const stat_state_t *s = state;
  size_t used = (size_t)snprintf(out, cap, "statistics of");
  for (int i = 0; i < s->nq && used < cap; ++i)
    used += (size_t)snprintf(out + used, cap - used, "%s %s", i ? "," : "", s->q[i].name);
  if (used >= cap) return;
  if (s->to == INT64_MAX)
    snprintf(out + used, cap - used, ", steps %lld.. every %lld", (long long)s->from,
             (long long)s->every);
  else
    snprintf(out + used, cap - used, ", steps %lld..%lld every %lld", (long long)s->from,
             (long long)s->to, (long long)s->every);
}

/* ---- sampling ---- */

/* One sample of quantity q of a block (values x[c * cells], from its sampler) into the
 * block's moments; count: first counts it (component 0: the samples), else the count
 * holds it already. Rows in parallel: every cell's arithmetic is its own, so the result
 * does not depend on the threads. */
static void stat_update(const stat_q_t *q, const block_info_t *b, grid_field_t *h,
                        const double *x, bool count) {
  const int c = q->components, nx = b->size[0], ny = b->size[1], nz = b->size[2];
  const ptrdiff_t sc = h->dims.sc;
  double *v = h->values;
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int i = 0; i < nx; ++i) {
        double *cell = v + grid_index(&h->dims, i, y, z, 0);
        const double *in = x + (((size_t)z * (size_t)ny + (size_t)y) * (size_t)nx + (size_t)i) * (size_t)c;
        if (count) cell[0] += 1.0;
        const double n = cell[0];
        double *mean = cell + q->offset * sc, *m2 = mean + c * sc, before[3];
        for (int a = 0; a < c; ++a) {
          const double d = in[a] - mean[a * sc];
          before[a] = d;
          mean[a * sc] += d / n;
          m2[a * sc] += d * (in[a] - mean[a * sc]);
        }
        for (int p = 0; c == 3 && p < 3; ++p)
          m2[(3 + p) * sc] +=
              before[stat_pair[p][0]] * (in[stat_pair[p][1]] - mean[stat_pair[p][1] * sc]);
      }
}

/* One more sample: every quantity's sample of every local block into the moments. */
static tsr_status stat_sample_blocks(stat_state_t *s, sim_t *sim, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  patch_t *patch = sim_patch(sim);
  double *x = NULL;
  size_t most = 0;
  TSR_TRY(sim_largest_block(sim, 3, "statistics", &most, err));
  x = malloc(3 * most * sizeof *x + 1);
  TSR_CHECK(x, TSR_ERR_NOMEM, "statistics: out of memory for a block's samples");
  for (int32_t i = 0; i < patch_local_count(patch); ++i) {
    const int32_t id = patch_local_id(patch, i);
    const block_info_t *b = patch_block(patch, id);
    block_data_t *data = patch_block_data(patch, id);
    field_block_t *f = field_block_of(data, s->field_id);
    if (!f) continue; /* a block without the field: none of its module's cells */
    for (int k = 0; k < s->nq; ++k) {
      const module_quantity_t *q = sim_quantity(sim, s->q[k].name);
      TSR_CHECK(q, TSR_ERR_INTERNAL, "statistics: no quantity \"%s\"", s->q[k].name);
      TSR_TRY(q->sample(b, data, x, q->ctx, err)); /* lattice units, as the moments */
      stat_update(&s->q[k], b, &f->host, x, k == 0);
    }
  }
cleanup:
  free(x);
  return st;
}

static tsr_status stat_observe(void *state, sim_t *sim, int64_t step, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  stat_state_t *s = state;
  if (s->nq == 0 || step < s->from || step > s->to || (step - s->from) % s->every != 0)
    goto cleanup;
  TSR_TRY(sim_prepare_outputs(sim, err));
  st = stat_sample_blocks(s, sim, err);
  TSR_TRY(verdict_reduce(sim_comm(sim), st, 0, err));
cleanup:
  return st;
}

static const char *const *stat_samples(const void *state) {
  return ((const stat_state_t *)state)->sampled;
}

/* A statistic of a block's cells (0 before the first sample). */
static tsr_status stat_sample(const block_info_t *b, const block_data_t *data, double *out,
                              void *vctx, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const stat_out_t *o = vctx;
  const stat_state_t *s = o->s;
  const stat_q_t *q = &s->q[o->q];
  const grid_field_t *h = NULL;
  TSR_TRY(field_sync(data, s->field_id, &h, err)); /* on the host on every hs: no copy */
  const int c = o->kind == STAT_COVARIANCE ? 3 : q->components;
  const int first = q->offset + (o->kind == STAT_MEAN ? 0 : o->kind == STAT_RMS ? c : 2 * c);
  size_t i = 0;
  for (int z = 0; z < b->size[2]; ++z)
    for (int y = 0; y < b->size[1]; ++y)
      for (int x = 0; x < b->size[0]; ++x) {
        const double *v = h ? (const double *)h->values : NULL;
        const double n = v ? v[grid_index(&h->dims, x, y, z, 0)] : 0.0;
        for (int a = 0; a < c; ++a, ++i) {
          const double m = n > 0 ? v[grid_index(&h->dims, x, y, z, first + a)] : 0.0;
          out[i] = o->kind == STAT_MEAN ? m : o->kind == STAT_RMS ? sqrt(m / (n > 0 ? n : 1))
                                                                  : m / (n > 0 ? n : 1);
        }
      }
cleanup:
  return st;
}

/* ---- registration ---- */

/* Quantity k's published statistics (its name and columns from the source quantity src)
 * into decl; *offset: its first moment in the field, advanced past its moments. */
static void stat_publish(stat_state_t *s, int k, const module_quantity_t *src,
                         module_decl_t *decl, int *offset) {
  static const char *const suffix[3] = {"mean", "rms", "covariance"};
  stat_q_t *q = &s->q[k];
  char name[SIMULATION_NAME_MAX]; /* a copy: GCC sees q->name and q->out overlap */
  memcpy(name, q->name, sizeof name);
  q->components = src->components;
  q->offset = *offset;
  *offset += 2 * q->components + (q->components == 3 ? 3 : 0);
  for (int kind = 0; kind < (q->components == 3 ? 3 : 2); ++kind) {
    const int c = kind == STAT_COVARIANCE ? 3 : q->components;
    stat_out_t *o = &s->outs[decl->nquantities];
    *o = (stat_out_t){.s = s, .q = k, .kind = kind};
    snprintf(q->out[kind], sizeof q->out[kind], "%s_%s", name, suffix[kind]);
    module_quantity_t *d = &decl->quantities[decl->nquantities++];
    *d = (module_quantity_t){.name = q->out[kind], .components = c, .sample = stat_sample,
                             .ctx = o, .dim = src->dim};
    if (kind == STAT_COVARIANCE)
      d->dim = (units_dim_t){(signed char)(2 * src->dim.length), (signed char)(2 * src->dim.time),
                             (signed char)(2 * src->dim.mass)};
    for (int a = 0; a < c; ++a) {
      if (kind == STAT_COVARIANCE)
        snprintf(q->columns[kind][a], STAT_NAME, "%s_%s", src->columns[stat_pair[a][0]],
                 src->columns[stat_pair[a][1]]);
      else
        snprintf(q->columns[kind][a], STAT_NAME, "%s_%s", src->columns[a], suffix[kind]);
      d->columns[a] = q->columns[kind][a];
    }
  }
}

static tsr_status stat_register(void *state, registry_t *reg, const module_env_t *env,
                                module_decl_t *decl, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  stat_state_t *s = state;
  char list[512];
  int offset = 1, m = 0, qi = 0; /* component 0: the count */
  *decl = (module_decl_t){.nfields = 0};
  if (s->nq == 0) goto cleanup;
  module_quantity_list(env->decls, env->ndecls, list, sizeof list);
  if (!list[0])
    snprintf(list, sizeof list, "none (list \"statistics\" after the modules whose "
                                "quantities it averages)");
  for (int k = 0; k < s->nq; ++k) {
    TSR_CHECK(module_quantity_index(env->decls, env->ndecls, s->q[k].name, &m, &qi),
              TSR_ERR_INVALID,
              "%s: statistics.quantities[%d] = \"%s\": no such quantity among the modules "
              "before \"statistics\" in \"modules\"; they have %s", env->so->source, k,
              s->q[k].name, list);
    const module_quantity_t *src = &env->decls[m].quantities[qi];
    TSR_CHECK(!src->small_integer && !src->wall, TSR_ERR_INVALID,
              "%s: statistics.quantities[%d] = \"%s\": cell flags, which have no mean; "
              "name a physical quantity (%s)", env->so->source, k, s->q[k].name, list);
    stat_publish(s, k, src, decl, &offset);
  }
  s->components = offset;
  TSR_TRY(module_declare_field(decl, reg, env, &(field_spec_t){
      .name = STAT_FIELD, .components = offset, .esize = 8, .layout = GRID_AOS, .host = true},
      err));
  TSR_TRY(registry_data_id(reg, STAT_FIELD, &s->field_id, err));
cleanup:
  return st;
}

/* A restart may move the window (the samples taken stay what they are). */
static const char *const stat_restart_keys[] = {"statistics.from", "statistics.to",
                                                "statistics.every", NULL};

const module_def_t statistics_module = {
    .name = "statistics",
    .read = stat_read,
    .free = stat_free,
    .calibration = stat_calibration,
    .describe = stat_describe,
    .register_items = stat_register,
    .samples = stat_samples,
    .observe = stat_observe,
    .restart_keys = stat_restart_keys,
    .physical_units = true,
};
