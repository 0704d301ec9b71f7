#include "node.h"

#include <ctype.h>
#include <fnmatch.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tsr_parse.h"
#include "verdict.h"

tsr_status node_name(char *out, size_t cap, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *env = getenv(NODE_NAME_ENV);
  if (env) {
    size_t len = strlen(env);
    TSR_CHECK(len > 0 && len < NODE_NAME_MAX && strspn(env, NODE_NAME_CHARS) == len,
              TSR_ERR_INVALID,
              NODE_NAME_ENV " = '%.64s%s': allowed are 1 to %d letters, digits, '.', '-' and "
              "'_' (a host name); unset it to use the name MPI reports",
              env, len > 64 ? "..." : "", NODE_NAME_MAX - 1);
    snprintf(out, cap, "%s", env);
    goto cleanup;
  }
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  TSR_MPI(MPI_Get_processor_name(name, &len));
  snprintf(out, cap, "%.*s", len, name);
cleanup:
  return st;
}

/* Index into hardware.nodes of the first pattern matching name; -1: none. */
static int node_rule_of(const simulation_hardware_t *hw, const char *name) {
  for (int i = 0; i < hw->nnodes; ++i)
    if (fnmatch(hw->nodes[i].match, name, 0) == 0) return i;
  return -1;
}

/* Processes a configuration lists. */
static int node_config_processes(const simulation_node_config_t *nc) {
  int n = 0;
  for (int e = 0; e < nc->nentries; ++e) n += nc->entries[e].count;
  return n;
}

/* "gpu*, cpu*": the patterns of hardware.nodes, for messages. */
static void node_patterns(const simulation_hardware_t *hw, char *out, size_t cap) {
  out[0] = '\0';
  for (int i = 0; i < hw->nnodes; ++i) {
    size_t len = strlen(out);
    snprintf(out + len, cap - len, "%s\"%s\"", i ? ", " : "", hw->nodes[i].match);
  }
}

tsr_status node_assign(const simulation_hardware_t *hw, const char *const *names, int nranks,
                       node_process_t *out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int *count = NULL, *first = NULL;
  TSR_CHECK(nranks >= 1, TSR_ERR_INVALID, "cannot place %d processes on nodes", nranks);
  count = calloc((size_t)nranks, sizeof *count);
  first = malloc((size_t)nranks * sizeof *first);
  TSR_CHECK(count && first, TSR_ERR_NOMEM, "out of memory placing %d processes", nranks);
  /* first[r]: the lowest rank with r's node name; the index counts the ranks before r */
  for (int r = 0; r < nranks; ++r) {
    first[r] = r;
    for (int q = 0; q < r; ++q)
      if (first[q] == q && strcmp(names[q], names[r]) == 0) {
        first[r] = q;
        break;
      }
    node_process_t *p = &out[r];
    memset(p, 0, sizeof *p);
    snprintf(p->node, sizeof p->node, "%s", names[r]);
    p->index = count[first[r]]++;
    p->configuration = -1;
    p->proc = (simulation_process_t){.hs = hw->hs, .device = -1, .count = 1};
    if (hw->nconfigurations == 0) continue;
    int rule = node_rule_of(hw, names[r]);
    if (rule < 0) {
      char pats[1024];
      node_patterns(hw, pats, sizeof pats);
      TSR_CHECK(false, TSR_ERR_INVALID,
                "node \"%s\" (rank %d) matches no entry of hardware.nodes (patterns: %s); add "
                "one, e.g. {\"match\": \"*\", \"configuration\": \"...\"}, or set %s",
                names[r], r, pats, NODE_NAME_ENV);
    }
    const simulation_node_config_t *nc = &hw->configurations[hw->nodes[rule].configuration];
    p->configuration = hw->nodes[rule].configuration;
    int k = p->index;
    for (int e = 0; e < nc->nentries; ++e) {
      if (k < nc->entries[e].count) {
        p->proc = nc->entries[e];
        p->proc.count = 1;
        break;
      }
      k -= nc->entries[e].count;
    }
  }
  for (int r = 0; r < nranks; ++r) {
    if (out[r].configuration < 0 || first[r] != r) continue;
    const simulation_node_config_t *nc = &hw->configurations[out[r].configuration];
    int listed = node_config_processes(nc);
    TSR_CHECK(count[r] <= listed, TSR_ERR_INVALID,
              "node \"%s\" runs %d processes, and its configuration \"%s\" (hardware.nodes[%d] "
              "matches it) lists %d; start no more than that there, or list more",
              names[r], count[r], nc->name, node_rule_of(hw, names[r]), listed);
  }
cleanup:
  free(count);
  free(first);
  return st;
}

tsr_status node_resolve(MPI_Comm comm, const simulation_hardware_t *hw, node_process_t *out,
                        tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int size = 1;
  char mine[NODE_NAME_MAX] = "";
  char *all = NULL;
  const char **names = NULL;
  MPI_Comm_size(comm, &size);
  st = node_name(mine, sizeof mine, err);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  all = malloc((size_t)size * NODE_NAME_MAX);
  names = malloc((size_t)size * sizeof *names);
  st = all && names ? TSR_OK
                    : tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__,
                                    "out of memory gathering %d node names", size);
  TSR_TRY(verdict_reduce(comm, st, 0, err));
  TSR_MPI(MPI_Allgather(mine, NODE_NAME_MAX, MPI_CHAR, all, NODE_NAME_MAX, MPI_CHAR, comm));
  for (int r = 0; r < size; ++r) {
    all[(size_t)r * NODE_NAME_MAX + NODE_NAME_MAX - 1] = '\0';
    names[r] = all + (size_t)r * NODE_NAME_MAX;
  }
  /* every rank sees every name, so every rank reaches the same verdict on its own */
  st = node_assign(hw, names, size, out, err);
  st = verdict_reduce(comm, st, 0, err);
cleanup:
  free(all);
  free(names);
  return st;
}

void node_names_free(char **names, int n) {
  if (!names) return;
  for (int i = 0; i < n; ++i) free(names[i]);
  free(names);
}

/* One item of a node list: prefix, an optional range [lo-hi] of width digits, suffix. */
typedef struct node_item {
  char prefix[NODE_NAME_MAX], suffix[NODE_NAME_MAX];
  long lo, hi;
  int width, ranks; /* ranks: 0 = as the configuration says */
} node_item_t;

static tsr_status node_item_parse(const char *text, size_t len, node_item_t *it, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char buf[NODE_NAME_MAX];
  TSR_CHECK(len > 0 && len < sizeof buf, TSR_ERR_INVALID,
            "node list: item %zu characters long; allowed are 1 to %d", len, NODE_NAME_MAX - 1);
  memcpy(buf, text, len);
  buf[len] = '\0';
  memset(it, 0, sizeof *it);
  char *colon = strrchr(buf, ':');
  if (colon) {
    int64_t n = 0;
    TSR_CHECK(tsr_parse_int(colon + 1, 1, SIMULATION_MAX_NODE_PROCESSES, &n), TSR_ERR_INVALID,
              "node list: \"%s\": the ranks after ':' must be 1..%d", buf,
              SIMULATION_MAX_NODE_PROCESSES);
    it->ranks = (int)n;
    *colon = '\0';
  }
  TSR_CHECK(buf[0], TSR_ERR_INVALID, "node list: an item has no node name");
  char *open = strchr(buf, '['), *close = open ? strchr(open, ']') : NULL;
  if (!open) {
    snprintf(it->prefix, sizeof it->prefix, "%s", buf);
    it->lo = it->hi = -1;
    goto cleanup;
  }
  char *dash = strchr(open, '-');
  TSR_CHECK(close && dash && dash < close && isdigit((unsigned char)open[1]) &&
                isdigit((unsigned char)dash[1]),
            TSR_ERR_INVALID, "node list: \"%s\": a range is written [first-last], e.g. cpu[01-16]",
            buf);
  char *end = NULL;
  it->lo = strtol(open + 1, &end, 10);
  TSR_CHECK(end == dash, TSR_ERR_INVALID, "node list: \"%s\": bad range start", buf);
  it->hi = strtol(dash + 1, &end, 10);
  TSR_CHECK(end == close && it->lo <= it->hi, TSR_ERR_INVALID,
            "node list: \"%s\": the range must be [first-last] with first <= last", buf);
  TSR_CHECK(it->hi - it->lo < SIMULATION_MAX_NODE_PROCESSES * 16, TSR_ERR_INVALID,
            "node list: \"%s\": %ld nodes in one range; a range holds at most %d",
            buf, it->hi - it->lo + 1, SIMULATION_MAX_NODE_PROCESSES * 16);
  TSR_CHECK(!strchr(close + 1, '['), TSR_ERR_INVALID, "node list: \"%s\": at most one range per name",
            buf);
  it->width = (int)(dash - open - 1);
  *open = '\0';
  snprintf(it->prefix, sizeof it->prefix, "%s", buf);
  snprintf(it->suffix, sizeof it->suffix, "%s", close + 1);
cleanup:
  return st;
}

tsr_status node_list_expand(const simulation_hardware_t *hw, const char *list, int max_ranks,
                            char ***names, int *nranks, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char **out = NULL;
  int n = 0, cap = 0;
  *names = NULL;
  *nranks = 0;
  TSR_CHECK(list && list[0], TSR_ERR_INVALID, "node list: empty");
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    node_item_t it;
    TSR_TRY(node_item_parse(p, len, &it, err));
    for (long k = it.lo; k <= it.hi; ++k) {
      char name[2 * NODE_NAME_MAX + 32];
      if (it.lo < 0) snprintf(name, sizeof name, "%s", it.prefix);
      else snprintf(name, sizeof name, "%s%0*ld%s", it.prefix, it.width, k, it.suffix);
      size_t len_name = strlen(name);
      TSR_CHECK(len_name < NODE_NAME_MAX, TSR_ERR_INVALID,
                "node list: node name \"%.40s...\" longer than %d characters", name,
                NODE_NAME_MAX - 1);
      int ranks = it.ranks;
      if (ranks == 0) {
        int rule = hw->nconfigurations ? node_rule_of(hw, name) : -1;
        TSR_CHECK(hw->nconfigurations == 0 || rule >= 0, TSR_ERR_INVALID,
                  "node list: node \"%s\" matches no entry of hardware.nodes; give its ranks "
                  "as \"%s:N\" or add a pattern", name, name);
        ranks = rule >= 0 ? node_config_processes(&hw->configurations[hw->nodes[rule].configuration])
                          : 1;
      }
      TSR_CHECK(n + ranks <= max_ranks, TSR_ERR_INVALID,
                "node list: more than %d ranks", max_ranks);
      if (n + ranks > cap) {
        cap = 2 * (n + ranks);
        char **grown = realloc(out, (size_t)cap * sizeof *grown);
        TSR_CHECK(grown, TSR_ERR_NOMEM, "out of memory expanding the node list");
        out = grown;
      }
      for (int r = 0; r < ranks; ++r) {
        out[n] = malloc(len_name + 1);
        TSR_CHECK(out[n], TSR_ERR_NOMEM, "out of memory expanding the node list");
        memcpy(out[n], name, len_name + 1);
        ++n;
      }
      if (it.lo < 0) break;
    }
    p += len;
    if (*p == ',') {
      ++p;
      TSR_CHECK(*p, TSR_ERR_INVALID, "node list: \"%s\" ends with a comma", list);
    }
  }
  *names = out;
  *nranks = n;
  out = NULL;
cleanup:
  node_names_free(out, n);
  return st;
}

uint64_t node_memory_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (f) {
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
    fclose(f);
    if (kib > 0) return (uint64_t)kib * 1024u;
  }
  long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

tsr_status node_check_memory(MPI_Comm comm, uint64_t bytes, const char *what, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  MPI_Comm node = MPI_COMM_NULL;
  uint64_t need = 0;
  int local = 1;
  TSR_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  TSR_MPI(MPI_Comm_size(node, &local));
  TSR_MPI(MPI_Allreduce(&bytes, &need, 1, MPI_UINT64_T, MPI_SUM, node));
  uint64_t avail = node_memory_available();
  if (avail > 0 && need > avail) {
    char name[NODE_NAME_MAX] = "?";
    tsr_error_t ignored;
    if (node_name(name, sizeof name, &ignored) != TSR_OK) snprintf(name, sizeof name, "?");
    st = tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__,
                       "%s need %.2f GiB on node %s (%d rank(s)), and %.2f GiB are available "
                       "there; use fewer cells, single precision, or more nodes",
                       what, (double)need / 1073741824.0, name, local,
                       (double)avail / 1073741824.0);
  }
cleanup:
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  return verdict_reduce(comm, st, 0, err);
}
