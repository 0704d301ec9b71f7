#include "simulation.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

simulation_options_t simulation_options_default(void) {
  simulation_options_t o;
  memset(&o, 0, sizeof o);
  o.domain = patch_options_default();
  o.steps = 1;
  snprintf(o.output_folder, sizeof o.output_folder, "out");
  o.progress_every = 100;
  o.hardware.hs = SIMULATION_HS_CPU;
  o.hardware.opencl = opencl_select_default();
  return o;
}

const char *simulation_hs_name(simulation_hs_t hs) { return hs == SIMULATION_HS_GPU ? "gpu" : "cpu"; }

/* hardware.opencl: a platform and a device, each by index or by name, not both. */
static tsr_status read_opencl(config_t *cfg, config_node_t *ocl, opencl_select_t *sel,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *what[2] = {"platform", "device"};
  const char *names[2] = {"platform_name", "device_name"};
  int *index[2] = {&sel->platform, &sel->device};
  char *name[2] = {sel->platform_name, sel->device_name};
  for (int k = 0; k < 2; ++k) {
    int64_t i = -1;
    char text[OPENCL_NAME_MAX] = "";
    TSR_TRY(config_int(ocl, what[k], false, 0, 1023, &i, err));
    TSR_TRY(config_string(ocl, names[k], false, text, sizeof text, err));
    if (i >= 0 && text[0]) {
      st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                         "%s: hardware.opencl: give %s or %s, not both", config_source(cfg),
                         what[k], names[k]);
      goto cleanup;
    }
    if (i >= 0) {
      *index[k] = (int)i;
      name[k][0] = '\0';
    } else if (text[0]) {
      *index[k] = -1;
      snprintf(name[k], OPENCL_NAME_MAX, "%s", text);
    }
  }
cleanup:
  return st;
}

/* Probes and slices: lists of named outputs. */

static const char *const axis_names[] = {"x", "y", "z", NULL};

static tsr_status check_list_count(const char *list, int n, int max, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(n >= 0 && n <= max, TSR_ERR_INVALID, "output.%s: %d %s; at most %d are allowed", list,
            n, list, max);
cleanup:
  return st;
}

/* output.<list>[i]: its name (at name_offset in each item; items are stride bytes apart)
 * is [A-Za-z0-9_-]+ and not that of an earlier item; every >= 1. */
static tsr_status check_list_item(const char *list, const void *items, size_t stride,
                                  size_t name_offset, int i, int64_t every, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *base = items;
  const char *name = base + (size_t)i * stride + name_offset;
  static const char allowed[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
  TSR_CHECK(name[0] != '\0' && strspn(name, allowed) == strlen(name), TSR_ERR_INVALID,
            "output.%s[%d].name = \"%s\": allowed are letters, digits, _ and -", list, i, name);
  for (int q = 0; q < i; ++q)
    TSR_CHECK(strcmp(base + (size_t)q * stride + name_offset, name) != 0, TSR_ERR_INVALID,
              "output.%s[%d].name = \"%s\" is also the name of %s[%d]", list, i, name, list, q);
  TSR_CHECK(every >= 1, TSR_ERR_INVALID, "output.%s[%d].every = %lld: allowed are integers >= 1",
            list, i, (long long)every);
cleanup:
  return st;
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
  TSR_TRY(check_list_count("probes", o->nprobes, SIMULATION_MAX_PROBES, err));
  for (int i = 0; i < o->nprobes; ++i) {
    const simulation_probe_t *p = &o->probes[i];
    TSR_TRY(check_list_item("probes", o->probes, sizeof o->probes[0],
                            offsetof(simulation_probe_t, name), i, p->every, err));
    for (int a = 0; a < 3; ++a) {
      TSR_CHECK(p->from[a] >= 0 && p->from[a] < o->domain.cells[a], TSR_ERR_INVALID,
                "output.probes[%d].from[%d] = %lld: outside the domain (cells 0..%lld)", i, a,
                (long long)p->from[a], (long long)o->domain.cells[a] - 1);
      TSR_CHECK(p->to[a] >= 0 && p->to[a] < o->domain.cells[a], TSR_ERR_INVALID,
                "output.probes[%d].to[%d] = %lld: outside the domain (cells 0..%lld)", i, a,
                (long long)p->to[a], (long long)o->domain.cells[a] - 1);
    }
  }
  TSR_TRY(check_list_count("slices", o->nslices, SIMULATION_MAX_SLICES, err));
  for (int i = 0; i < o->nslices; ++i) {
    const simulation_slice_t *sl = &o->slices[i];
    TSR_TRY(check_list_item("slices", o->slices, sizeof o->slices[0],
                            offsetof(simulation_slice_t, name), i, sl->every, err));
    TSR_CHECK(sl->axis >= 0 && sl->axis < 3, TSR_ERR_INVALID,
              "output.slices[%d].axis = %d: allowed are x, y, z (0, 1, 2)", i, sl->axis);
    TSR_CHECK(sl->position >= 0 && sl->position < o->domain.cells[sl->axis], TSR_ERR_INVALID,
              "output.slices[%d].position = %lld: outside the domain along %s (cells 0..%lld)", i,
              (long long)sl->position, axis_names[sl->axis],
              (long long)o->domain.cells[sl->axis] - 1);
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

/* The length of output.<list>, at most max. */
static tsr_status read_list(config_t *cfg, config_node_t *output, const char *list, int max,
                            size_t *n, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(config_list(output, list, n, err));
  if (*n > (size_t)max)
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                       "%s: output.%s: %zu %s; at most %d are allowed", config_source(cfg), list,
                       *n, list, max);
cleanup:
  return st;
}

/* The keys every item of an output list has: "name" (required) and "every" (default 1). */
static tsr_status read_list_item(config_node_t *item, char *name, size_t cap, int64_t *every,
                                 tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(config_string(item, "name", true, name, cap, err));
  *every = 1;
  TSR_TRY(config_int(item, "every", false, 1, INT64_MAX, every, err));
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
    TSR_TRY(read_list(cfg, output, "probes", SIMULATION_MAX_PROBES, &n, err));
    for (size_t i = 0; i < n; ++i) {
      config_node_t *p;
      simulation_probe_t *q = &r.probes[i];
      TSR_TRY(config_list_item(output, "probes", i, &p, err));
      TSR_TRY(read_list_item(p, q->name, sizeof q->name, &q->every, err));
      TSR_TRY(config_int3(p, "from", true, 0, INT_MAX, q->from, err));
      TSR_TRY(config_int3(p, "to", true, 0, INT_MAX, q->to, err));
    }
    r.nprobes = (int)n;
    TSR_TRY(read_list(cfg, output, "slices", SIMULATION_MAX_SLICES, &n, err));
    for (size_t i = 0; i < n; ++i) {
      config_node_t *p;
      simulation_slice_t *q = &r.slices[i];
      TSR_TRY(config_list_item(output, "slices", i, &p, err));
      TSR_TRY(read_list_item(p, q->name, sizeof q->name, &q->every, err));
      TSR_TRY(config_choice(p, "axis", true, axis_names, &q->axis, err));
      TSR_TRY(config_int(p, "position", true, 0, INT_MAX, &q->position, err));
    }
    r.nslices = (int)n;
  }
  config_node_t *hw, *ocl;
  static const char *const hs_names[] = {"cpu", "gpu", NULL};
  TSR_TRY(config_object(root, "hardware", false, &hw, err));
  if (hw) {
    int hs = (int)r.hardware.hs;
    TSR_TRY(config_choice(hw, "hs", false, hs_names, &hs, err));
    r.hardware.hs = (simulation_hs_t)hs;
    TSR_TRY(config_object(hw, "opencl", false, &ocl, err));
    if (ocl) TSR_TRY(read_opencl(cfg, ocl, &r.hardware.opencl, err));
    TSR_TRY(config_string(hw, "kernel_sources", false, r.hardware.kernel_sources,
                          sizeof r.hardware.kernel_sources, err));
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
