#include "simulation.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

simulation_options_t simulation_options_default(void) {
  simulation_options_t o;
  memset(&o, 0, sizeof o);
  o.domain = patch_options_default();
  o.steps = 1;
  snprintf(o.output_folder, sizeof o.output_folder, "out");
  o.progress_every = 100;
  return o;
}

tsr_status simulation_options_validate(const simulation_options_t *o, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(o->steps >= 0, TSR_ERR_INVALID, "steps = %lld: allowed are integers >= 0",
            (long long)o->steps);
  TSR_CHECK(o->progress_every >= 0, TSR_ERR_INVALID,
            "output.progress_every = %lld: allowed are integers >= 0", (long long)o->progress_every);
  TSR_CHECK(o->output_folder[0] != '\0', TSR_ERR_INVALID, "output.folder is empty");
  TSR_CHECK(o->vtk_every >= 0, TSR_ERR_INVALID, "output.vtk_every = %lld: allowed are integers >= 0",
            (long long)o->vtk_every);
  TSR_CHECK(o->nprobes >= 0 && o->nprobes <= SIMULATION_MAX_PROBES, TSR_ERR_INVALID,
            "output.probes: %d probes; at most %d are allowed", o->nprobes, SIMULATION_MAX_PROBES);
  for (int i = 0; i < o->nprobes; ++i) {
    const simulation_probe_t *p = &o->probes[i];
    TSR_CHECK(p->name[0] != '\0' && strspn(p->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == strlen(p->name),
              TSR_ERR_INVALID, "output.probes[%d].name = \"%s\": allowed are letters, digits, _ and -",
              i, p->name);
    for (int q = 0; q < i; ++q)
      TSR_CHECK(strcmp(o->probes[q].name, p->name) != 0, TSR_ERR_INVALID,
                "output.probes[%d].name = \"%s\" is also the name of probes[%d]", i, p->name, q);
    TSR_CHECK(p->every >= 1, TSR_ERR_INVALID, "output.probes[%d].every = %lld: allowed are integers >= 1",
              i, (long long)p->every);
    for (int a = 0; a < 3; ++a) {
      TSR_CHECK(p->from[a] >= 0 && p->from[a] < o->domain.cells[a], TSR_ERR_INVALID,
                "output.probes[%d].from[%d] = %lld: outside the domain (cells 0..%lld)", i, a,
                (long long)p->from[a], (long long)o->domain.cells[a] - 1);
      TSR_CHECK(p->to[a] >= 0 && p->to[a] < o->domain.cells[a], TSR_ERR_INVALID,
                "output.probes[%d].to[%d] = %lld: outside the domain (cells 0..%lld)", i, a,
                (long long)p->to[a], (long long)o->domain.cells[a] - 1);
    }
  }
  st = patch_options_validate(&o->domain, err);
  if (st != TSR_OK && err) {
    /* patch messages start with the option ("blocks[0] ..."): make it a key path */
    char text[TSR_ERROR_TEXT_MAX - 8];
    if (snprintf(text, sizeof text, "%s", err->text) >= 0)
      snprintf(err->text, sizeof err->text, "domain.%s", text);
  }
cleanup:
  return st;
}

tsr_status simulation_options_read(config_t *cfg, simulation_options_t *o, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  simulation_options_t r = simulation_options_default();
  config_node_t *root = config_root(cfg), *domain, *output;
  int64_t v[3];
  TSR_TRY(config_object(root, "domain", true, &domain, err));
  TSR_TRY(config_int3(domain, "cells", true, 1, INT_MAX, r.domain.cells, err));
  for (int a = 0; a < 3; ++a) v[a] = r.domain.blocks[a];
  TSR_TRY(config_int3(domain, "blocks", false, 1, INT_MAX, v, err));
  for (int a = 0; a < 3; ++a) r.domain.blocks[a] = (int)v[a];
  TSR_TRY(config_bool3(domain, "periodic", false, r.domain.periodic, err));
  TSR_TRY(config_int(root, "steps", false, 0, INT64_MAX, &r.steps, err));
  TSR_TRY(config_object(root, "output", false, &output, err));
  if (output) {
    TSR_TRY(config_string(output, "folder", false, r.output_folder, sizeof r.output_folder, err));
    TSR_TRY(config_int(output, "progress_every", false, 0, INT64_MAX, &r.progress_every, err));
    TSR_TRY(config_int(output, "vtk_every", false, 0, INT64_MAX, &r.vtk_every, err));
    size_t n = 0;
    TSR_TRY(config_list(output, "probes", &n, err));
    if (n > SIMULATION_MAX_PROBES) {
      st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                         "%s: output.probes: %zu probes; at most %d are allowed",
                         config_source(cfg), n, SIMULATION_MAX_PROBES);
      goto cleanup;
    }
    for (size_t i = 0; i < n; ++i) {
      config_node_t *p;
      simulation_probe_t *q = &r.probes[i];
      TSR_TRY(config_list_item(output, "probes", i, &p, err));
      TSR_TRY(config_string(p, "name", true, q->name, sizeof q->name, err));
      TSR_TRY(config_int3(p, "from", true, 0, INT_MAX, q->from, err));
      TSR_TRY(config_int3(p, "to", true, 0, INT_MAX, q->to, err));
      q->every = 1;
      TSR_TRY(config_int(p, "every", false, 1, INT64_MAX, &q->every, err));
    }
    r.nprobes = (int)n;
  }
  st = simulation_options_validate(&r, err);
  if (st != TSR_OK) {
    tsr_error_prefix(err, "%s", config_source(cfg));
    goto cleanup;
  }
  *o = r;
cleanup:
  return st;
}
