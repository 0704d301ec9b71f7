#include "simulation.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

simulation_options_t simulation_options_default(void) {
  simulation_options_t o;
  memset(&o, 0, sizeof o);
  o.domain = patch_options_default();
  o.steps = 1;
  o.check_every = 200;
  snprintf(o.output_folder, sizeof o.output_folder, "out");
  o.progress_every = 100;
  o.series_plots = true;
  o.checkpoint_keep = 2;
  o.steady.tolerance = 1e-6;
  o.units = units_none();
  o.hardware.hs = SIMULATION_HS_CPU;
  o.hardware.opencl = opencl_select_default();
  o.hardware.exchange = SIMULATION_EXCHANGE_MERGED;
  o.hardware.overlap = SIMULATION_OVERLAP_AUTO;
  o.hardware.balance = (simulation_balance_t){.throughput = {20.0, 440.0}, .cpu_threads = 1,
                                              .calibrate = false,
                                              .network_gbs = 10.0, .exchange_gbs = 2.5,
                                              .device_gbs = 12.0, .process_mb = 90.0,
                                              .latency_us = 2.0,
                                              .intranode_latency_us = -1.0};
  return o;
}

const char *simulation_hs_name(simulation_hs_t hs) { return hs == SIMULATION_HS_GPU ? "gpu" : "cpu"; }

opencl_select_t simulation_process_device(const simulation_hardware_t *h,
                                          const simulation_process_t *p) {
  opencl_select_t sel = h->opencl;
  if (p->device >= 0) {
    sel.device = p->device;
    sel.device_name[0] = '\0';
  }
  return sel;
}

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

/* Names used in file names and references: [A-Za-z0-9_-]+. */
static const char name_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";

/* Probes and slices: lists of named outputs. */

static const char *const axis_names[] = {"x", "y", "z", NULL};
const char *const simulation_range_names[] = {"first", "each", NULL};

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
  TSR_CHECK(name[0] != '\0' && strspn(name, name_chars) == strlen(name), TSR_ERR_INVALID,
            "output.%s[%d].name = \"%s\": allowed are letters, digits, _ and -", list, i, name);
  for (int q = 0; q < i; ++q)
    TSR_CHECK(strcmp(base + (size_t)q * stride + name_offset, name) != 0, TSR_ERR_INVALID,
              "output.%s[%d].name = \"%s\" is also the name of %s[%d]", list, i, name, list, q);
  TSR_CHECK(every >= 1, TSR_ERR_INVALID, "output.%s[%d].every = %lld: allowed are integers >= 1",
            list, i, (long long)every);
cleanup:
  return st;
}

/* The process entries of hardware.configurations[c]: hs, device, threads, throughput and
 * counts, at most SIMULATION_MAX_NODE_PROCESSES in all. */
static tsr_status simulation_entries_validate(const simulation_node_config_t *nc, int c,
                                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int64_t total = 0;
  for (int e = 0; e < nc->nentries; ++e) {
    const simulation_process_t *p = &nc->entries[e];
    TSR_CHECK(p->hs == SIMULATION_HS_CPU || p->hs == SIMULATION_HS_GPU, TSR_ERR_INVALID,
              "hardware.configurations[%d].processes[%d].hs = %d: allowed are cpu, gpu", c, e,
              (int)p->hs);
    TSR_CHECK(p->device >= -1 && p->device <= 1023 && (p->device < 0 || p->hs == SIMULATION_HS_GPU),
              TSR_ERR_INVALID,
              "hardware.configurations[%d].processes[%d].device = %d: allowed are 0..1023, "
              "for hs gpu only", c, e, p->device);
    TSR_CHECK(p->threads >= 0 && p->threads <= 4096 && (p->threads == 0 || p->hs == SIMULATION_HS_CPU),
              TSR_ERR_INVALID,
              "hardware.configurations[%d].processes[%d].threads = %d: allowed are 1..4096, "
              "for hs cpu only", c, e, p->threads);
    TSR_CHECK(p->mlups >= 0 && isfinite(p->mlups), TSR_ERR_INVALID,
              "hardware.configurations[%d].processes[%d].mlups = %g: allowed are MLUPS > 0", c,
              e, p->mlups);
    TSR_CHECK(p->count >= 1 && p->count <= SIMULATION_MAX_NODE_PROCESSES, TSR_ERR_INVALID,
              "hardware.configurations[%d].processes[%d].count = %d: allowed are 1..%d", c, e,
              p->count, SIMULATION_MAX_NODE_PROCESSES);
    total += p->count;
  }
  TSR_CHECK(total <= SIMULATION_MAX_NODE_PROCESSES, TSR_ERR_INVALID,
            "hardware.configurations[%d] lists %lld processes; at most %d are allowed", c,
            (long long)total, SIMULATION_MAX_NODE_PROCESSES);
cleanup:
  return st;
}

static tsr_status simulation_hardware_validate(const simulation_hardware_t *h, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const simulation_balance_t *b = &h->balance;
  for (int k = 0; k < 2; ++k)
    TSR_CHECK(b->throughput[k] > 0 && isfinite(b->throughput[k]), TSR_ERR_INVALID,
              "hardware.balance.throughput.%s = %g: allowed are MLUPS > 0",
              simulation_hs_name((simulation_hs_t)k), b->throughput[k]);
  TSR_CHECK(b->network_gbs > 0 && isfinite(b->network_gbs), TSR_ERR_INVALID,
            "hardware.balance.network_gbs = %g: allowed are GB/s > 0", b->network_gbs);
  TSR_CHECK(b->exchange_gbs > 0 && isfinite(b->exchange_gbs), TSR_ERR_INVALID,
            "hardware.balance.exchange_gbs = %g: allowed are GB/s > 0", b->exchange_gbs);
  TSR_CHECK(b->device_gbs > 0 && isfinite(b->device_gbs), TSR_ERR_INVALID,
            "hardware.balance.device_gbs = %g: allowed are GB/s > 0", b->device_gbs);
  TSR_CHECK(b->latency_us >= 0 && isfinite(b->latency_us), TSR_ERR_INVALID,
            "hardware.balance.latency_us = %g: allowed are microseconds >= 0", b->latency_us);
  TSR_CHECK(b->intranode_gbs >= 0 && isfinite(b->intranode_gbs), TSR_ERR_INVALID,
            "hardware.balance.intranode_gbs = %g: allowed are GB/s > 0", b->intranode_gbs);
  TSR_CHECK(isfinite(b->intranode_latency_us), TSR_ERR_INVALID,
            "hardware.balance.intranode_latency_us = %g: allowed are microseconds >= 0",
            b->intranode_latency_us);
  TSR_CHECK(h->nconfigurations >= 0 && h->nconfigurations <= SIMULATION_MAX_CONFIGURATIONS,
            TSR_ERR_INVALID, "hardware.configurations: %d configurations; at most %d are allowed",
            h->nconfigurations, SIMULATION_MAX_CONFIGURATIONS);
  TSR_CHECK(h->nnodes >= 0 && h->nnodes <= SIMULATION_MAX_NODE_RULES, TSR_ERR_INVALID,
            "hardware.nodes: %d entries; at most %d are allowed", h->nnodes,
            SIMULATION_MAX_NODE_RULES);
  TSR_CHECK((h->nconfigurations > 0) == (h->nnodes > 0), TSR_ERR_INVALID,
            "hardware: %s without %s: give both (configurations say what a node runs, nodes "
            "which node names use which configuration)",
            h->nnodes > 0 ? "nodes" : "configurations", h->nnodes > 0 ? "configurations" : "nodes");
  for (int c = 0; c < h->nconfigurations; ++c) {
    const simulation_node_config_t *nc = &h->configurations[c];
    TSR_CHECK(nc->name[0] && strspn(nc->name, name_chars) == strlen(nc->name), TSR_ERR_INVALID,
              "hardware.configurations[%d].name = \"%s\": allowed are letters, digits, _ and -",
              c, nc->name);
    for (int q = 0; q < c; ++q)
      TSR_CHECK(strcmp(h->configurations[q].name, nc->name) != 0, TSR_ERR_INVALID,
                "hardware.configurations[%d].name = \"%s\" is also the name of "
                "configurations[%d]", c, nc->name, q);
    TSR_CHECK(nc->nentries >= 1 && nc->nentries <= SIMULATION_MAX_ENTRIES, TSR_ERR_INVALID,
              "hardware.configurations[%d].processes: %d entries; allowed are 1 to %d", c,
              nc->nentries, SIMULATION_MAX_ENTRIES);
    TSR_TRY(simulation_entries_validate(nc, c, err));
  }
  for (int c = 0; c < h->nconfigurations; ++c) { /* a configuration nobody uses is a slip */
    bool used = false;
    for (int r = 0; r < h->nnodes; ++r) used = used || h->nodes[r].configuration == c;
    TSR_CHECK(used, TSR_ERR_INVALID,
              "hardware.configurations[%d] (\"%s\") is named by no entry of hardware.nodes; "
              "use it or remove it", c, h->configurations[c].name);
  }
  for (int r = 0; r < h->nnodes; ++r) {
    TSR_CHECK(h->nodes[r].match[0], TSR_ERR_INVALID, "hardware.nodes[%d].match is empty", r);
    TSR_CHECK(h->nodes[r].configuration >= 0 && h->nodes[r].configuration < h->nconfigurations,
              TSR_ERR_INVALID, "hardware.nodes[%d].configuration = %d: allowed are 0..%d", r,
              h->nodes[r].configuration, h->nconfigurations - 1);
  }
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
    for (int a = 0; a < 3 && p->point; ++a)
      TSR_CHECK(p->at[a] >= 0 && p->at[a] <= (double)o->domain.cells[a], TSR_ERR_INVALID,
                "output.probes[%d].at[%d] = %g: outside the domain (0 to %lld: cell i spans "
                "[i, i + 1))", i, a, p->at[a], (long long)o->domain.cells[a]);
    for (int a = 0; a < 3 && !p->point; ++a) {
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
  TSR_TRY(simulation_hardware_validate(&o->hardware, err));
  const simulation_steady_t *sd = &o->steady;
  if (sd->total[0]) {
    TSR_CHECK(sd->tolerance >= 1e-15 && sd->tolerance <= 1, TSR_ERR_INVALID,
              "stop.when_steady.tolerance = %g: allowed are numbers in [1e-15, 1]",
              sd->tolerance);
    TSR_CHECK(sd->window >= 1 && sd->every >= 1 && sd->every <= sd->window, TSR_ERR_INVALID,
              "stop.when_steady.every = %lld exceeds window = %lld: a window needs at least "
              "two samples", (long long)sd->every, (long long)sd->window);
    TSR_CHECK(sd->window / sd->every < SIMULATION_MAX_STEADY_SAMPLES, TSR_ERR_INVALID,
              "stop.when_steady: window / every = %lld samples; at most %d (sample less "
              "often)", (long long)(sd->window / sd->every), SIMULATION_MAX_STEADY_SAMPLES - 1);
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

/* A list of quantity names (absent: *q left as it is; an empty list is an error). Whether
 * the names exist is the assembly's to check (sim.h): the modules declare them. */
static tsr_status read_quantities(config_t *cfg, config_node_t *node, const char *where,
                                  simulation_quantities_t *q, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t n = (size_t)-1;
  TSR_TRY(config_strings(node, "quantities", false, SIMULATION_MAX_QUANTITIES,
                         SIMULATION_NAME_MAX, &q->names[0][0], &n, err));
  if (n == (size_t)-1) goto cleanup;
  TSR_CHECK(n >= 1, TSR_ERR_INVALID,
            "%s: %s.quantities: an empty list; name at least one quantity or leave the key out "
            "(every quantity)", config_source(cfg), where);
  q->n = (int)n;
cleanup:
  return st;
}

/* The keys every item of an output list has: "name" (required) and "every" (default 1). */
static tsr_status read_list_item(config_node_t *item, char *name, size_t cap, int64_t *every,
                                 int64_t every_default, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_TRY(config_string(item, "name", true, name, cap, err));
  *every = every_default;
  TSR_TRY(config_int(item, "every", false, 1, INT64_MAX, every, err));
cleanup:
  return st;
}

static const char *const hs_names[] = {"cpu", "gpu", NULL};
const char *const simulation_exchange_names[] = {"merged", "per_sweep", NULL};
const char *const simulation_overlap_names[] = {"auto", "on", "off", NULL};

/* hardware.configurations[c]: a name and its process entries. */
static tsr_status read_configuration(config_t *cfg, config_node_t *item, int c,
                                     simulation_node_config_t *nc, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t n = 0;
  TSR_TRY(config_string(item, "name", true, nc->name, sizeof nc->name, err));
  TSR_TRY(config_list(item, "processes", &n, err));
  if (n < 1 || n > SIMULATION_MAX_ENTRIES) {
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                       "%s: hardware.configurations[%d].processes: %s; allowed are 1 to %d "
                       "entries (an entry may stand for several processes with \"count\")",
                       config_source(cfg), c, n ? "too many entries" : "missing or empty",
                       SIMULATION_MAX_ENTRIES);
    goto cleanup;
  }
  for (size_t e = 0; e < n; ++e) {
    config_node_t *p;
    simulation_process_t *q = &nc->entries[e];
    int hs = 0;
    int64_t device = -1, threads = 0, count = 1;
    double mlups = 0;
    TSR_TRY(config_list_item(item, "processes", e, &p, err));
    TSR_TRY(config_choice(p, "hs", true, hs_names, &hs, err));
    TSR_TRY(config_int(p, "device", false, 0, 1023, &device, err));
    TSR_TRY(config_int(p, "threads", false, 1, 4096, &threads, err));
    TSR_TRY(config_real(p, "mlups", false, 1e-9, 1e12, &mlups, err));
    TSR_TRY(config_int(p, "count", false, 1, SIMULATION_MAX_NODE_PROCESSES, &count, err));
    if ((hs == SIMULATION_HS_CPU && device >= 0) || (hs == SIMULATION_HS_GPU && threads > 0)) {
      st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                         "%s: hardware.configurations[%d].processes[%zu]: \"%s\" is for hs %s "
                         "processes, and this one is hs %s", config_source(cfg), c, e,
                         device >= 0 ? "device" : "threads", device >= 0 ? "gpu" : "cpu",
                         hs_names[hs]);
      goto cleanup;
    }
    *q = (simulation_process_t){.hs = (simulation_hs_t)hs, .device = (int)device,
                                .threads = (int)threads, .mlups = mlups, .count = (int)count};
  }
  nc->nentries = (int)n;
cleanup:
  return st;
}

/* The figures of hardware.balance in the object bal (a configuration's section or a
 * machine file's top level). */
static tsr_status read_figures(config_node_t *bal, simulation_balance_t *b, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  config_node_t *tp;
  TSR_TRY(config_object(bal, "throughput", false, &tp, err));
  for (int k = 0; tp && k < 2; ++k)
    TSR_TRY(config_real(tp, hs_names[k], false, 1e-9, 1e12, &b->throughput[k], err));
  TSR_TRY(config_int(bal, "cpu_threads", false, 1, 4096, &b->cpu_threads, err));
  TSR_TRY(config_real(bal, "network_gbs", false, 1e-9, 1e9, &b->network_gbs, err));
  TSR_TRY(config_real(bal, "exchange_gbs", false, 1e-9, 1e9, &b->exchange_gbs, err));
  TSR_TRY(config_real(bal, "device_gbs", false, 1e-9, 1e9, &b->device_gbs, err));
  TSR_TRY(config_real(bal, "process_mb", false, 0, 1e9, &b->process_mb, err));
  TSR_TRY(config_real(bal, "latency_us", false, 0, 1e9, &b->latency_us, err));
  TSR_TRY(config_real(bal, "intranode_gbs", false, 1e-9, 1e9, &b->intranode_gbs, err));
  TSR_TRY(config_real(bal, "intranode_latency_us", false, 0, 1e9, &b->intranode_latency_us,
                      err));
cleanup:
  return st;
}

/* hardware.machine: a machine description file (`tessera bench --machine` writes one):
 * the figures of hardware.balance at its top level, and its name; the configuration's
 * hardware.balance section then overrides what it gives. */
static tsr_status read_machine(config_t *cfg, config_node_t *hw, simulation_balance_t *b,
                               tsr_error_t *err) {
  tsr_status st = TSR_OK;
  config_t *m = NULL;
  char *text = NULL, path[SIMULATION_PATH_MAX + 1024];
  size_t len = 0;
  TSR_TRY(config_string(hw, "machine", false, b->machine, sizeof b->machine, err));
  if (!b->machine[0]) goto cleanup;
  config_path_beside(cfg, b->machine, path, sizeof path);
  st = config_read_file(path, &text, &len, err);
  if (st != TSR_OK) {
    tsr_error_prefix(err, "%s: hardware.machine = \"%s\"", config_source(cfg), b->machine);
    goto cleanup;
  }
  TSR_TRY(config_parse(text, len, path, &m, err));
  config_node_t *root = config_root(m);
  TSR_TRY(config_string(root, "name", false, b->machine_name, sizeof b->machine_name, err));
  char measured[512];
  TSR_TRY(config_string(root, "measured", false, measured, sizeof measured, err));
  TSR_TRY(read_figures(root, b, err));
  TSR_TRY(config_check_unknown(m, err));
cleanup:
  free(text);
  config_free(&m);
  return st;
}

/* hardware.balance */
static tsr_status read_balance(config_node_t *hw, simulation_balance_t *b, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  config_node_t *bal;
  TSR_TRY(config_object(hw, "balance", false, &bal, err));
  if (!bal) goto cleanup;
  TSR_TRY(read_figures(bal, b, err));
  TSR_TRY(config_bool(bal, "calibrate", false, &b->calibrate, err));
cleanup:
  return st;
}

static tsr_status read_hardware(config_t *cfg, config_node_t *root, simulation_hardware_t *h,
                                tsr_error_t *err) {
  tsr_status st = TSR_OK;
  config_node_t *hw, *ocl;
  size_t n = 0;
  int hs = -1;
  TSR_TRY(config_object(root, "hardware", false, &hw, err));
  if (!hw) goto cleanup;
  TSR_TRY(config_choice(hw, "hs", false, hs_names, &hs, err));
  if (hs >= 0) h->hs = (simulation_hs_t)hs;
  int exchange = -1;
  TSR_TRY(config_choice(hw, "exchange", false, simulation_exchange_names, &exchange, err));
  if (exchange >= 0) h->exchange = (simulation_exchange_t)exchange;
  int overlap = -1;
  TSR_TRY(config_choice(hw, "overlap", false, simulation_overlap_names, &overlap, err));
  if (overlap >= 0) h->overlap = (simulation_overlap_t)overlap;
  TSR_TRY(config_object(hw, "opencl", false, &ocl, err));
  if (ocl) TSR_TRY(read_opencl(cfg, ocl, &h->opencl, err));
  TSR_TRY(config_list(hw, "configurations", &n, err));
  if (n > SIMULATION_MAX_CONFIGURATIONS) {
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                       "%s: hardware.configurations: %zu configurations; at most %d are allowed",
                       config_source(cfg), n, SIMULATION_MAX_CONFIGURATIONS);
    goto cleanup;
  }
  if (n > 0 && hs >= 0) {
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                       "%s: hardware: give hs (one for every process) or configurations (per "
                       "process), not both", config_source(cfg));
    goto cleanup;
  }
  for (size_t c = 0; c < n; ++c) {
    config_node_t *item;
    TSR_TRY(config_list_item(hw, "configurations", c, &item, err));
    TSR_TRY(read_configuration(cfg, item, (int)c, &h->configurations[c], err));
  }
  h->nconfigurations = (int)n;
  TSR_TRY(config_list(hw, "nodes", &n, err));
  if (n > SIMULATION_MAX_NODE_RULES) {
    st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                       "%s: hardware.nodes: %zu entries; at most %d are allowed",
                       config_source(cfg), n, SIMULATION_MAX_NODE_RULES);
    goto cleanup;
  }
  for (size_t i = 0; i < n; ++i) {
    config_node_t *item;
    char name[SIMULATION_NAME_MAX];
    simulation_node_rule_t *rule = &h->nodes[i];
    TSR_TRY(config_list_item(hw, "nodes", i, &item, err));
    TSR_TRY(config_string(item, "match", true, rule->match, sizeof rule->match, err));
    TSR_TRY(config_string(item, "configuration", true, name, sizeof name, err));
    rule->configuration = -1;
    for (int c = 0; c < h->nconfigurations; ++c)
      if (strcmp(h->configurations[c].name, name) == 0) rule->configuration = c;
    if (rule->configuration < 0) {
      char known[512] = "";
      for (int c = 0; c < h->nconfigurations; ++c)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", c ? ", " : "",
                 h->configurations[c].name);
      st = tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__,
                         "%s: hardware.nodes[%zu].configuration = \"%s\": no configuration has "
                         "that name; hardware.configurations has: %s", config_source(cfg), i,
                         name, h->nconfigurations ? known : "none");
      goto cleanup;
    }
  }
  h->nnodes = (int)n;
  TSR_TRY(read_machine(cfg, hw, &h->balance, err));
  TSR_TRY(read_balance(hw, &h->balance, err));
cleanup:
  return st;
}

/* "units": the scales of a run in physical units (units.h); absent: lattice units. Sets
 * the document's units, so that every measure read after it is converted. */
static tsr_status read_units(config_t *cfg, config_node_t *root, units_t *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  config_node_t *un;
  static const char *const outputs[] = {"lattice", "physical", NULL};
  /* at most one of each pair or triple gives a scale */
  static const char *const space[] = {"cells", "cell_size"};
  static const char *const time[] = {"lattice_velocity", "time_step", "lattice_viscosity"};
  units_input_t in = {.by = UNITS_BY_LATTICE_VELOCITY};
  double cells = -1, cell_size = -1, t[3] = {-1, -1, -1};
  int output = 0;
  char why[256];
  *out = units_none();
  TSR_TRY(config_object(root, "units", false, &un, err));
  if (!un) goto cleanup;
  TSR_TRY(config_real(un, "length", true, 1e-300, 1e300, &in.length, err));
  TSR_TRY(config_real(un, "velocity", true, 1e-300, 1e300, &in.velocity, err));
  TSR_TRY(config_real(un, "viscosity", true, 1e-300, 1e300, &in.viscosity, err));
  TSR_TRY(config_real(un, "density", true, 1e-300, 1e300, &in.density, err));
  TSR_TRY(config_real(un, space[0], false, 1e-9, 1e12, &cells, err));
  TSR_TRY(config_real(un, space[1], false, 1e-300, 1e300, &cell_size, err));
  TSR_TRY(config_real(un, time[0], false, 1e-12, 0.4, &t[0], err));
  TSR_TRY(config_real(un, time[1], false, 1e-300, 1e300, &t[1], err));
  TSR_TRY(config_real(un, time[2], false, 1e-12, 1e6, &t[2], err));
  TSR_TRY(config_choice(un, "output", false, outputs, &output, err));
  TSR_CHECK((cells > 0) != (cell_size > 0), TSR_ERR_INVALID,
            "%s: units: give the resolution in space as %s (cells across units.length) or %s "
            "(m), %s", config_source(cfg), space[0], space[1],
            cells > 0 ? "not both" : "one of them");
  int given = 0;
  for (int k = 0; k < 3; ++k)
    if (t[k] > 0) given++, in.by = (units_time_scale_t)k, in.time = t[k];
  TSR_CHECK(given == 1, TSR_ERR_INVALID,
            "%s: units: give the resolution in time as one of %s (units.velocity in lattice "
            "units), %s (s) or %s (units.viscosity in lattice units); %s", config_source(cfg),
            time[0], time[1], time[2], given ? "more than one is given" : "none is given");
  in.cells = cells > 0 ? cells : 0;
  in.cell_size = cell_size > 0 ? cell_size : 0;
  in.physical_output = output == 1;
  TSR_CHECK(units_make(&in, out, why, sizeof why), TSR_ERR_INVALID, "%s: units: %s",
            config_source(cfg), why);
  config_set_units(cfg, out);
cleanup:
  return st;
}

/* output.probes: every probe's point or line, series and quantities, into r. */
static tsr_status read_probes(config_t *cfg, config_node_t *output, simulation_options_t *r,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t n = 0;
  TSR_TRY(read_list(cfg, output, "probes", SIMULATION_MAX_PROBES, &n, err));
  for (size_t i = 0; i < n; ++i) {
    config_node_t *p;
    simulation_probe_t *q = &r->probes[i];
    TSR_TRY(config_list_item(output, "probes", i, &p, err));
    TSR_TRY(read_list_item(p, q->name, sizeof q->name, &q->every, SIMULATION_PROBE_EVERY, err));
    char where[64];
    snprintf(where, sizeof where, "output.probes[%zu]", i);
    for (int a = 0; a < 3; ++a) {
      q->at[a] = NAN;
      q->from[a] = q->to[a] = -1;
    }
    TSR_TRY(config_measure3(p, "at", false, UNITS_LENGTH, -1e15, 1e15, q->at, err));
    q->point = !isnan(q->at[0]);
    TSR_TRY(config_int3(p, "from", !q->point, 0, INT_MAX, q->from, err));
    TSR_TRY(config_int3(p, "to", !q->point, 0, INT_MAX, q->to, err));
    TSR_CHECK(!q->point || (q->from[0] < 0 && q->to[0] < 0), TSR_ERR_INVALID,
              "%s: %s: give \"at\" (a point) or \"from\" and \"to\" (a line), not both",
              config_source(cfg), where);
    q->series = q->point;
    TSR_TRY(config_bool(p, "series", false, &q->series, err));
    TSR_CHECK(q->series || !q->point, TSR_ERR_INVALID,
              "%s: %s.series = false: a point probe always writes one row per sample",
              config_source(cfg), where);
    q->quantities = r->quantities;
    TSR_TRY(read_quantities(cfg, p, where, &q->quantities, err));
  }
  r->nprobes = (int)n;
cleanup:
  return st;
}

/* stop.when_steady: the total, tolerance, window and sampling, into r. */
static tsr_status read_steady(config_t *cfg, config_node_t *root, simulation_options_t *r,
                              tsr_error_t *err) {
  tsr_status st = TSR_OK;
  config_node_t *stop, *steady = NULL;
  TSR_TRY(config_object(root, "stop", false, &stop, err));
  if (stop) TSR_TRY(config_object(stop, "when_steady", false, &steady, err));
  if (!steady) goto cleanup;
  simulation_steady_t *s = &r->steady;
  TSR_TRY(config_string(steady, "total", true, s->total, sizeof s->total, err));
  TSR_CHECK(s->total[0], TSR_ERR_INVALID,
            "%s: stop.when_steady.total is empty; name a total of the run's modules (a "
            "column of series.csv, e.g. \"nusselt\")", config_source(cfg));
  TSR_TRY(config_real(steady, "tolerance", false, 1e-15, 1.0, &s->tolerance, err));
  TSR_TRY(config_int(steady, "window", true, 1, INT64_MAX, &s->window, err));
  /* a tenth of the window, but no sample more often than a probe's default */
  s->every = s->window / 10 > SIMULATION_PROBE_EVERY ? s->window / 10 : SIMULATION_PROBE_EVERY;
  if (s->every > s->window) s->every = s->window;
  TSR_TRY(config_int(steady, "every", false, 1, INT64_MAX, &s->every, err));
cleanup:
  return st;
}

tsr_status simulation_options_read(config_t *cfg, simulation_options_t *o, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  simulation_options_t r = simulation_options_default();
  config_node_t *root = config_root(cfg), *domain, *output;
  int64_t v[3];
  TSR_TRY(config_object(root, "domain", true, &domain, err));
  TSR_TRY(config_int3(domain, "cells", true, 1, PATCH_MAX_AXIS_CELLS, r.domain.cells, err));
  for (int a = 0; a < 3; ++a) v[a] = r.domain.blocks[a];
  TSR_TRY(config_int3(domain, "blocks", false, 1, INT_MAX, v, err));
  for (int a = 0; a < 3; ++a) r.domain.blocks[a] = (int)v[a];
  TSR_TRY(config_bool3(domain, "periodic", false, r.domain.periodic, err));
  TSR_TRY(config_int(root, "steps", false, 0, INT64_MAX, &r.steps, err));
  TSR_TRY(config_int(root, "check_every", false, 1, INT64_MAX, &r.check_every, err));
  TSR_TRY(read_units(cfg, root, &r.units, err));
  TSR_TRY(config_object(root, "output", false, &output, err));
  if (output) {
    TSR_TRY(config_string(output, "folder", false, r.output_folder, sizeof r.output_folder, err));
    TSR_TRY(config_int(output, "progress_every", false, 0, INT64_MAX, &r.progress_every, err));
    TSR_TRY(config_int(output, "vtk_every", false, 0, INT64_MAX, &r.vtk_every, err));
    static const char *const vtk_files[] = {"one", "blocks", NULL};
    static const char *const vtk_precision[] = {"float64", "float32", NULL};
    TSR_TRY(config_choice(output, "vtk_files", false, vtk_files, &r.vtk_files, err));
    TSR_TRY(config_choice(output, "vtk_precision", false, vtk_precision, &r.vtk_precision, err));
    TSR_TRY(config_int(output, "series_every", false, 0, INT64_MAX, &r.series_every, err));
    TSR_TRY(config_int(output, "surface_every", false, 0, INT64_MAX, &r.surface_every, err));
    TSR_TRY(config_bool(output, "series_plots", false, &r.series_plots, err));
    TSR_TRY(config_int(output, "checkpoint_every", false, 0, INT64_MAX, &r.checkpoint_every, err));
    TSR_TRY(config_real(output, "checkpoint_interval", false, 0, 1e9, &r.checkpoint_interval,
                        err));
    TSR_TRY(config_int(output, "checkpoint_keep", false, 1, 1000000, &r.checkpoint_keep, err));
    TSR_TRY(read_quantities(cfg, output, "output", &r.quantities, err));
    TSR_TRY(read_probes(cfg, output, &r, err));
    size_t n = 0;
    TSR_TRY(read_list(cfg, output, "slices", SIMULATION_MAX_SLICES, &n, err));
    for (size_t i = 0; i < n; ++i) {
      config_node_t *p;
      simulation_slice_t *q = &r.slices[i];
      TSR_TRY(config_list_item(output, "slices", i, &p, err));
      TSR_TRY(read_list_item(p, q->name, sizeof q->name, &q->every, 1, err));
      TSR_TRY(config_choice(p, "axis", true, axis_names, &q->axis, err));
      TSR_TRY(config_int(p, "position", true, 0, INT_MAX, &q->position, err));
      TSR_TRY(config_string(p, "quantity", false, q->quantity, sizeof q->quantity, err));
      q->range = SIMULATION_RANGE_FIRST;
      TSR_TRY(config_choice_or_range(p, "range", simulation_range_names, &q->range,
                                     q->range_values, err));
    }
    r.nslices = (int)n;
  }
  TSR_TRY(read_hardware(cfg, root, &r.hardware, err));
  TSR_TRY(read_steady(cfg, root, &r, err));
  st = simulation_options_validate(&r, err);
  if (st != TSR_OK) {
    tsr_error_prefix(err, "%s", config_source(cfg));
    goto cleanup;
  }
  snprintf(r.source, sizeof r.source, "%s", config_source(cfg));
  *o = r;
cleanup:
  return st;
}
