#include "registry.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

typedef struct registry_entry {
  registry_item_t item; /* strings owned by the entry */
  uint64_t fs_on, fs_off, hs, bs;
} registry_entry_t;

struct registry {
  selector_table_t *selectors;
  registry_entry_t **entries;
  size_t count, cap;
  char **data_names;
  int ndata;
  void **kept;
  size_t nkept;
  uint64_t exclusive[SELECTOR_MAX]; /* fs groups of which at most one switch is on */
  int nexclusive;
};

const char *registry_kind_name(registry_kind_t kind) {
  static const char *const names[REGISTRY_KIND_COUNT] = {"kernel",    "allocator", "extraction",
                                                         "insertion", "boundary",  "copy"};
  return (unsigned)kind < REGISTRY_KIND_COUNT ? names[kind] : "?";
}

tsr_status registry_create(registry_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *out = NULL;
  registry_t *reg = calloc(1, sizeof *reg);
  TSR_CHECK(reg, TSR_ERR_NOMEM, "out of memory allocating the registry");
  TSR_TRY(selector_table_create(&reg->selectors, err));
  *out = reg;
  reg = NULL;
cleanup:
  registry_free(&reg);
  return st;
}

static void registry_entry_free(registry_entry_t *e) {
  if (!e) return;
  free((char *)e->item.name);
  free((char *)e->item.fs);
  free((char *)e->item.hs);
  free((char *)e->item.bs);
  free(e);
}

void registry_free(registry_t **reg) {
  if (!reg || !*reg) return;
  registry_t *r = *reg;
  for (size_t i = 0; i < r->count; ++i) registry_entry_free(r->entries[i]);
  free(r->entries);
  for (int i = 0; i < r->ndata; ++i) free(r->data_names[i]);
  free(r->data_names);
  for (size_t i = 0; i < r->nkept; ++i) free(r->kept[i]);
  free(r->kept);
  selector_table_free(&r->selectors);
  free(r);
  *reg = NULL;
}

selector_table_t *registry_selectors(registry_t *reg) { return reg->selectors; }
const selector_table_t *registry_selectors_const(const registry_t *reg) { return reg->selectors; }

uint32_t registry_gpu_hs(const registry_t *reg) {
  uint32_t hs = UINT32_MAX;
  tsr_error_t ignored;
  if (selector_find(reg->selectors, SELECTOR_HS, "gpu", &hs, &ignored) != TSR_OK) hs = UINT32_MAX;
  return hs;
}

tsr_status registry_nothing(const registry_work_t *w, void *ctx, tsr_error_t *err) {
  (void)w, (void)ctx, (void)err;
  return TSR_OK;
}

size_t registry_count(const registry_t *reg) { return reg->count; }

tsr_status registry_batch_state(registry_batch_t *batch, registry_state_make_fn make,
                                void (*free_state)(void *state), const void *ctx, void **out,
                                tsr_error_t *err) {
  tsr_status st = TSR_OK;
  if (!batch->state) {
    void *made = NULL;
    TSR_TRY(make(batch, ctx, &made, err));
    batch->state = made;
    batch->state_free = free_state;
  }
  *out = batch->state;
cleanup:
  return st;
}

/* Writes "kind 'name' fs=... hs=... bs=..." for messages. */
static void registry_describe(const registry_t *reg, const registry_entry_t *e, char *out,
                              size_t cap) {
  snprintf(out, cap, "%s '%s' fs=%s hs=%s bs=%s", registry_kind_name(e->item.kind), e->item.name,
           e->item.fs, e->item.hs, e->item.bs);
}

/* Some fs set has two switches of one exclusive group on. */
static bool registry_excluded(const registry_t *reg, uint64_t on) {
  for (int g = 0; g < reg->nexclusive; ++g) {
    uint64_t x = on & reg->exclusive[g];
    if (x & (x - 1)) return true;
  }
  return false;
}

static bool registry_overlap(const registry_t *reg, const registry_entry_t *a,
                             const registry_entry_t *b) {
  return (a->hs & b->hs) && (a->bs & b->bs) && !(a->fs_on & b->fs_off) &&
         !(b->fs_on & a->fs_off) && !registry_excluded(reg, a->fs_on | b->fs_on);
}

static tsr_status registry_check_functions(const registry_item_t *it, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  bool want_kernel = it->kind == REGISTRY_KIND_KERNEL || it->kind == REGISTRY_KIND_BOUNDARY;
  bool want_alloc = it->kind == REGISTRY_KIND_ALLOCATOR;
  bool want_extract = it->kind == REGISTRY_KIND_EXTRACTION;
  bool want_insert = it->kind == REGISTRY_KIND_INSERTION;
  bool want_size = want_extract || want_insert;
  bool want_copy = it->kind == REGISTRY_KIND_COPY;
  const char *kind = registry_kind_name(it->kind);
  const char *a = strchr("aeiou", kind[0]) ? "an" : "a";
  struct {
    const char *field;
    bool has, wanted, allowed; /* wanted: required; allowed: may be there */
  } fields[] = {
      {".work", it->work != NULL, want_kernel, want_kernel},
      {".batch", it->batch != 0, false, want_kernel},
      {".parts", it->parts != 0, false, want_kernel},
      {".group", it->ngroup != 0, false, want_kernel && it->batch},
      {".alloc or .alloc_batch", it->alloc || it->alloc_batch, want_alloc, want_alloc},
      {".alloc_batch", it->alloc_batch != NULL, false, want_alloc},
      {".free", it->free != NULL, want_alloc, want_alloc},
      {".size", it->size != NULL, want_size, want_size},
      {".extract", it->extract != NULL, want_extract, want_extract},
      {".insert", it->insert != NULL, want_insert, want_insert},
      {".copy", it->copy != NULL, want_copy, want_copy},
      {".stage_out", it->stage_out != NULL, false, want_extract},
      {".stage_wait", it->stage_wait != NULL, false, want_extract},
      {".stage_in", it->stage_in != NULL, false, want_insert},
  };
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i) {
    TSR_CHECK(fields[i].has || !fields[i].wanted, TSR_ERR_INVALID,
              "registry item %s '%s': %s %s item needs %s", kind, it->name, a, kind,
              fields[i].field);
    TSR_CHECK(!fields[i].has || fields[i].allowed, TSR_ERR_INVALID,
              "registry item %s '%s': %s %s item has no %s", kind, it->name, a, kind,
              fields[i].field);
  }
  TSR_CHECK(!it->batch_early || (it->batch && it->kind == REGISTRY_KIND_BOUNDARY),
            TSR_ERR_INVALID,
            "registry item %s '%s': .batch_early says when a boundary batch item may run "
            "early; give .batch too", kind, it->name);
  TSR_CHECK(!it->parts || !it->batch || it->kind == REGISTRY_KIND_KERNEL || it->batch_early,
            TSR_ERR_INVALID,
            "registry item %s '%s': a boundary batch item's parts run where its .batch_early "
            "allows; give .batch_early too", kind, it->name);
  TSR_CHECK(it->ngroup >= 0 && it->ngroup <= REGISTRY_MAX_GROUP && (!it->group_key || it->ngroup),
            TSR_ERR_INVALID, "registry item %s '%s': .group names 0 to %d fields (and "
            ".group_key goes with them)", kind, it->name, REGISTRY_MAX_GROUP);
  /* comm calls stage_wait only for blocks it staged out: alone it would never run */
  TSR_CHECK(!it->stage_wait || it->stage_out, TSR_ERR_INVALID,
            "registry item %s '%s': .stage_wait waits for what .stage_out started; give "
            ".stage_out too, or no .stage_wait",
            kind, it->name);
cleanup:
  return st;
}

static char *registry_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

tsr_status registry_add(registry_t *reg, const registry_item_t *item, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  registry_entry_t *e = NULL;
  uint64_t unused;
  TSR_CHECK((unsigned)item->kind < REGISTRY_KIND_COUNT, TSR_ERR_INVALID,
            "registry item kind %d does not exist", (int)item->kind);
  TSR_CHECK(item->name && item->name[0], TSR_ERR_INVALID, "registry %s item without a name",
            registry_kind_name(item->kind));
  TSR_CHECK(item->fs && item->hs && item->bs, TSR_ERR_INVALID,
            "registry item %s '%s': fs, hs and bs must all be given (\"*\" for any)",
            registry_kind_name(item->kind), item->name);
  TSR_TRY(registry_check_functions(item, err));

  e = calloc(1, sizeof *e);
  TSR_CHECK(e, TSR_ERR_NOMEM, "out of memory adding a registry item");
  e->item = *item;
  e->item.name = registry_strdup(item->name);
  e->item.fs = registry_strdup(item->fs);
  e->item.hs = registry_strdup(item->hs);
  e->item.bs = registry_strdup(item->bs);
  TSR_CHECK(e->item.name && e->item.fs && e->item.hs && e->item.bs, TSR_ERR_NOMEM,
            "out of memory adding a registry item");
  st = selector_parse(reg->selectors, SELECTOR_FS, item->fs, &e->fs_on, &e->fs_off, err);
  if (st == TSR_OK) st = selector_parse(reg->selectors, SELECTOR_HS, item->hs, &e->hs, &unused, err);
  if (st == TSR_OK) st = selector_parse(reg->selectors, SELECTOR_BS, item->bs, &e->bs, &unused, err);
  if (st != TSR_OK) {
    tsr_error_prefix(err, "registry item %s '%s'", registry_kind_name(item->kind), item->name);
    goto cleanup;
  }
  TSR_CHECK(!(e->fs_on & e->fs_off), TSR_ERR_INVALID,
            "registry item %s '%s': fs '%s' wants a switch both on and off",
            registry_kind_name(item->kind), item->name, item->fs);

  for (size_t i = 0; i < reg->count; ++i) {
    const registry_entry_t *o = reg->entries[i];
    if (o->item.kind != item->kind || strcmp(o->item.name, item->name) != 0) continue;
    if (registry_overlap(reg, o, e)) {
      char a[512], b[512];
      registry_describe(reg, e, a, sizeof a);
      registry_describe(reg, o, b, sizeof b);
      TSR_FAIL(TSR_ERR_LOOKUP,
               "registry item [%s] is ambiguous with [%s]: a block can match both; make "
               "their fs, hs or bs exclusive",
               a, b);
    }
  }
  void *entries = reg->entries;
  TSR_CHECK(grow_for_one(&entries, &reg->cap, reg->count, sizeof *reg->entries, 16),
            TSR_ERR_NOMEM, "out of memory growing the registry");
  reg->entries = entries;
  reg->entries[reg->count++] = e;
  e = NULL;
cleanup:
  registry_entry_free(e);
  return st;
}

static bool registry_matches(const registry_entry_t *e, const registry_request_t *req) {
  return (req->fs & e->fs_on) == e->fs_on && !(req->fs & e->fs_off) && req->hs < 64 &&
         (e->hs >> req->hs & 1) && (e->bs == UINT64_MAX || (e->bs & req->bs));
}

tsr_status registry_lookup(const registry_t *reg, registry_kind_t kind, const char *name,
                           const registry_request_t *req, const registry_item_t **out,
                           tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const registry_entry_t *found = NULL;
  int nmatch = 0, ncand = 0;
  *out = NULL;
  for (size_t i = 0; i < reg->count; ++i) {
    const registry_entry_t *e = reg->entries[i];
    if (e->item.kind != kind || strcmp(e->item.name, name) != 0) continue;
    ++ncand;
    if (registry_matches(e, req)) {
      ++nmatch;
      found = e;
    }
  }
  if (nmatch == 1) {
    *out = &found->item;
    goto cleanup;
  }
  /* describe the request and every candidate */
  char fs[512], bs[SELECTOR_MAX * (SELECTOR_NAME_MAX + 1) + 3], msg[TSR_ERROR_TEXT_MAX];
  size_t used = (size_t)snprintf(
      msg, sizeof msg, "%s %s '%s' for fs={%s} hs=%s bs=%s; candidates: ",
      nmatch == 0 ? "no registry item matches" : "more than one registry item matches",
      registry_kind_name(kind), name,
      req->fs ? selector_format(reg->selectors, SELECTOR_FS, req->fs, fs, sizeof fs) : "",
      selector_name(reg->selectors, SELECTOR_HS, req->hs),
      selector_format_set(reg->selectors, SELECTOR_BS, req->bs, bs, sizeof bs));
  if (ncand == 0 && used < sizeof msg)
    snprintf(msg + used, sizeof msg - used, "none (nothing registered under that name)");
  for (size_t i = 0; i < reg->count && used < sizeof msg; ++i) {
    const registry_entry_t *e = reg->entries[i];
    if (e->item.kind != kind || strcmp(e->item.name, name) != 0) continue;
    char d[512];
    registry_describe(reg, e, d, sizeof d);
    int n = snprintf(msg + used, sizeof msg - used, "%s[%s]", used && msg[used - 1] == ']' ? ", " : "", d);
    if (n < 0) break;
    used += (size_t)n;
  }
  TSR_FAIL(TSR_ERR_LOOKUP, "%s", msg);
cleanup:
  return st;
}

tsr_status registry_parse_fs(registry_t *reg, const char *fs, uint64_t *bits, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  uint64_t off = 0;
  *bits = 0;
  if (fs[0] == '\0') goto cleanup;
  TSR_CHECK(strcmp(fs, "*") != 0, TSR_ERR_INVALID,
            "fs set '*': a simulation names the switches it turns on");
  TSR_TRY(selector_parse(reg->selectors, SELECTOR_FS, fs, bits, &off, err));
  TSR_CHECK(off == 0, TSR_ERR_INVALID, "fs set '%s': a simulation cannot turn a switch off "
            "with '!'; leave it out", fs);
  for (int g = 0; g < reg->nexclusive; ++g) {
    uint64_t x = *bits & reg->exclusive[g];
    if (x & (x - 1)) {
      char both[512], group[512];
      selector_format(reg->selectors, SELECTOR_FS, x, both, sizeof both);
      selector_format(reg->selectors, SELECTOR_FS, reg->exclusive[g], group, sizeof group);
      TSR_FAIL(TSR_ERR_INVALID, "fs set '%s' turns on %s; of %s at most one may be on", fs, both,
               group);
    }
  }
cleanup:
  return st;
}

tsr_status registry_data_id(registry_t *reg, const char *name, int *id, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (int i = 0; i < reg->ndata; ++i)
    if (strcmp(reg->data_names[i], name) == 0) {
      *id = i;
      goto cleanup;
    }
  char **grown = realloc(reg->data_names, (size_t)(reg->ndata + 1) * sizeof *grown);
  TSR_CHECK(grown, TSR_ERR_NOMEM, "out of memory adding data name '%s'", name);
  reg->data_names = grown;
  reg->data_names[reg->ndata] = registry_strdup(name);
  TSR_CHECK(reg->data_names[reg->ndata], TSR_ERR_NOMEM, "out of memory adding data name '%s'",
            name);
  *id = reg->ndata++;
cleanup:
  return st;
}

tsr_status registry_keep(registry_t *reg, const void *bytes, size_t n, void **copy,
                         tsr_error_t *err) {
  tsr_status st = TSR_OK;
  void *c = NULL;
  *copy = NULL;
  void **grown = realloc(reg->kept, (reg->nkept + 1) * sizeof *grown);
  TSR_CHECK(grown, TSR_ERR_NOMEM, "out of memory keeping a registry context");
  reg->kept = grown;
  c = malloc(n ? n : 1);
  TSR_CHECK(c, TSR_ERR_NOMEM, "out of memory keeping a registry context of %zu bytes", n);
  if (n) memcpy(c, bytes, n);
  reg->kept[reg->nkept++] = c;
  *copy = c;
cleanup:
  return st;
}

tsr_status registry_exclusive(registry_t *reg, const char *switches, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  uint64_t on = 0, off = 0;
  TSR_TRY(selector_parse(reg->selectors, SELECTOR_FS, switches, &on, &off, err));
  TSR_CHECK(off == 0 && (on & (on - 1)), TSR_ERR_INVALID,
            "exclusive fs group '%s': name two or more switches, without '!'", switches);
  for (int g = 0; g < reg->nexclusive; ++g)
    if (reg->exclusive[g] == on) goto cleanup; /* declared before, by another sweep */
  TSR_CHECK(reg->nexclusive < SELECTOR_MAX, TSR_ERR_INVALID,
            "too many exclusive fs groups (%d)", SELECTOR_MAX);
  reg->exclusive[reg->nexclusive++] = on;
cleanup:
  return st;
}
