#include "comm.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "direction.h"
#include "message.h"
#include "tsr_size.h"
#include "verdict.h"

/* Seconds between two probes of comm_progress at least. */
#define COMM_PROGRESS_S 1e-3

/* One message or local copy: src packs in dir, dst unpacks the same bytes. */
typedef struct comm_task {
  int32_t src, dst;
  int dir;
  int field;                  /* index into the exchange's fields */
  const registry_item_t *ext; /* extraction item of src (NULL for receives) */
  const registry_item_t *ins; /* insertion item of dst (NULL for sends) */
  size_t bytes;               /* payload bytes */
} comm_task_t;

typedef struct comm_peer {
  int rank;
  comm_task_t *sends, *recvs; /* in (src, dir) order, as the sender walks them */
  int nsends, nrecvs;
  uint8_t *send_buf, *recv_buf;
  size_t send_bytes, recv_bytes;
  int send_count, recv_count; /* the same, as MPI counts (checked to fit) */
} comm_peer_t;

/* Direct copies of one copy item, carried out in one call. */
typedef struct comm_copy_group {
  const registry_item_t *item;
  comm_task_t *tasks;
  registry_copy_task_t *calls; /* filled with the blocks' data at each exchange */
  int64_t n, cap;
} comm_copy_group_t;

/* A block whose extraction or insertion item stages its data around an exchange. */
typedef struct comm_stage {
  int32_t id;
  int field;
  const registry_item_t *item;
  int host_bound;
  uint32_t extract_dirs; /* registry_stage_task_t */
} comm_stage_t;

struct comm {
  MPI_Comm mpi;
  int tag;
  patch_t *patch;
  int data_id[COMM_MAX_FIELDS]; /* per field */
  int nfields;
  comm_peer_t *peers;
  int npeers;
  comm_task_t *locals;  /* local pairs of different hardware: extract, then insert */
  int64_t nlocals;
  comm_copy_group_t *groups; /* local pairs of one hardware: direct copies */
  int ngroups;
  comm_stage_t *stage_out, *stage_in; /* in local block order */
  int32_t nstage_out, nstage_in;
  registry_stage_task_t *stage_tasks; /* room for the longer list */
  uint8_t *scratch;
  size_t scratch_bytes;
  MPI_Request *reqs; /* npeers receives, then npeers sends */
  MPI_Status *statuses; /* of reqs, for the received byte counts */
  bool started, sent; /* comm_start_stage, comm_start_send */
  tsr_status start_status; /* first failure of comm_start, reported by comm_finish */
  tsr_error_t start_err;
  uint32_t *late; /* per local block: the ghost slices comm_finish fills (comm_late) */
  double progressed; /* MPI_Wtime of the last probe of comm_progress */
  comm_stats_t stats;
  comm_timing_t timing;
};

static void comm_peer_clear(comm_peer_t *p) {
  free(p->sends);
  free(p->recvs);
  free(p->send_buf);
  free(p->recv_buf);
}

void comm_free(comm_t **c) {
  if (!c || !*c) return;
  comm_t *x = *c;
  for (int i = 0; i < x->npeers; ++i) comm_peer_clear(&x->peers[i]);
  free(x->peers);
  free(x->locals);
  for (int g = 0; g < x->ngroups; ++g) {
    free(x->groups[g].tasks);
    free(x->groups[g].calls);
  }
  free(x->groups);
  free(x->stage_out);
  free(x->stage_in);
  free(x->stage_tasks);
  free(x->scratch);
  free(x->reqs);
  free(x->statuses);
  free(x->late);
  if (x->mpi != MPI_COMM_NULL) MPI_Comm_free(&x->mpi);
  free(x);
  *c = NULL;
}

comm_options_t comm_options_one(const char *name, int data_id, const int width[3], int tag) {
  comm_options_t o;
  memset(&o, 0, sizeof o);
  o.fields[0] = (comm_field_t){.name = name, .data_id = data_id,
                               .width = {width[0], width[1], width[2]}};
  o.nfields = 1;
  o.tag = tag;
  return o;
}

/* The data of a field of a block this process owns (NULL when it has none). */
static void *comm_data(const comm_t *c, int32_t id, int field) {
  return block_data_get(patch_block_data(c->patch, id), c->data_id[field]);
}

static tsr_status comm_lookup(const registry_t *reg, const comm_options_t *o, int field,
                              registry_kind_t kind, const block_info_t *b,
                              const registry_item_t **item, tsr_error_t *err) {
  registry_request_t req = {.fs = o->fs, .hs = b->hs, .bs = b->bs};
  const char *name = o->fields[field].name;
  tsr_status st = registry_lookup(reg, kind, name, &req, item, err);
  if (st != TSR_OK) tsr_error_prefix(err, "ghost exchange of '%s', BlockID %d", name, (int)b->id);
  return st;
}

/* Appends t to a growable task array. */
static tsr_status comm_push(comm_task_t **arr, int64_t *n, int64_t *cap, comm_task_t t,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  if (*n == *cap) {
    int64_t nc = *cap ? 2 * *cap : 32;
    comm_task_t *g = realloc(*arr, (size_t)nc * sizeof *g);
    TSR_CHECK(g, TSR_ERR_NOMEM, "out of memory planning the ghost exchange");
    *arr = g;
    *cap = nc;
  }
  (*arr)[(*n)++] = t;
cleanup:
  return st;
}

/* Files a direct copy under its copy item. */
static tsr_status comm_add_copy(comm_t *c, const registry_item_t *item, comm_task_t t,
                                tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int g = 0;
  while (g < c->ngroups && c->groups[g].item != item) ++g;
  if (g == c->ngroups) {
    comm_copy_group_t *grown = realloc(c->groups, (size_t)(c->ngroups + 1) * sizeof *grown);
    TSR_CHECK(grown, TSR_ERR_NOMEM, "out of memory planning the ghost exchange");
    c->groups = grown;
    memset(&c->groups[g], 0, sizeof c->groups[g]);
    c->groups[g].item = item;
    c->ngroups++;
  }
  TSR_TRY(comm_push(&c->groups[g].tasks, &c->groups[g].n, &c->groups[g].cap, t, err));
cleanup:
  return st;
}

static int comm_peer_index(comm_t *c, int rank) {
  for (int i = 0; i < c->npeers; ++i)
    if (c->peers[i].rank == rank) return i;
  return -1;
}

static tsr_status comm_add_peer_task(comm_t *c, int rank, bool send, comm_task_t t,
                                     tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int i = comm_peer_index(c, rank);
  if (i < 0) {
    comm_peer_t *g = realloc(c->peers, (size_t)(c->npeers + 1) * sizeof *g);
    TSR_CHECK(g, TSR_ERR_NOMEM, "out of memory planning the ghost exchange");
    c->peers = g;
    i = c->npeers++;
    memset(&c->peers[i], 0, sizeof c->peers[i]);
    c->peers[i].rank = rank;
  }
  comm_peer_t *p = &c->peers[i];
  comm_task_t **arr = send ? &p->sends : &p->recvs;
  int *n = send ? &p->nsends : &p->nrecvs;
  comm_task_t *g = realloc(*arr, (size_t)(*n + 1) * sizeof *g);
  TSR_CHECK(g, TSR_ERR_NOMEM, "out of memory planning the ghost exchange");
  *arr = g;
  (*arr)[(*n)++] = t;
  size_t *bytes = send ? &p->send_bytes : &p->recv_bytes;
  TSR_CHECK(tsr_add_size(*bytes, MESSAGE_HEADER_BYTES, bytes) && tsr_add_size(*bytes, t.bytes, bytes),
            TSR_ERR_INVALID, "the messages %s rank %d: their bytes do not fit in a size_t",
            send ? "to" : "from", rank);
cleanup:
  return st;
}

static int comm_task_cmp(const void *a, const void *b) {
  const comm_task_t *x = a, *y = b;
  if (x->src != y->src) return x->src < y->src ? -1 : 1;
  if (x->dir != y->dir) return x->dir < y->dir ? -1 : 1;
  return (x->field > y->field) - (x->field < y->field);
}

static int comm_peer_cmp(const void *a, const void *b) {
  const comm_peer_t *x = a, *y = b;
  return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Size of the message src sends in dir, checked against what dst's insertion expects.
 * A side that holds no data there (size 0, e.g. a block that is all solid) means no
 * message at all: *bytes = 0. */
static tsr_status comm_sizes(const registry_item_t *ext, const block_info_t *src,
                             const registry_item_t *ins, const block_info_t *dst, int dir,
                             const char *field, size_t *bytes, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t out = ext->size(src, dir, ext->ctx), in = ins->size(dst, dir, ins->ctx);
  *bytes = 0;
  if (out == 0 || in == 0) goto cleanup;
  TSR_CHECK(out == in, TSR_ERR_INTERNAL,
            "ghost exchange of '%s': BlockID %d packs %zu bytes in direction %s, but the "
            "insertion for BlockID %d expects %zu: the extraction and insertion items of "
            "the two blocks' hardware disagree on the message layout",
            field, (int)src->id, out, direction_name(dir), (int)dst->id, in);
  *bytes = out;
cleanup:
  return st;
}

/* The working arrays of comm_plan: per local block and field, out and in at slot index
 * 2 * (i * nf + f) (+ 1) (comm_slot). */
typedef struct comm_plan_state {
  const comm_options_t *o;
  const registry_t *reg;
  int nf;
  int64_t cap;                     /* of the comm's locals */
  int *flow;                       /* 0 nothing, 1 direct copies only, 2 also host buffers */
  uint32_t *dirs;                  /* as flow: the extractions' directions */
  const registry_item_t **stagers; /* as flow: the extraction and insertion items */
  uint32_t *copied; /* per local block: the directions a direct copy fills (late where
                       stage_in does it) */
} comm_plan_state_t;

/* One pair comm_plan plans: local block i (b) and its neighbour nid (n) in direction d,
 * for field f, with b's extraction and insertion items of f. */
typedef struct comm_pair {
  int32_t i, nid;
  const block_info_t *b, *n;
  int d, f;
  const registry_item_t *ext, *ins;
} comm_pair_t;

/* The index of the out slot of local block i and field f in the working arrays. */
static size_t comm_slot(const comm_plan_state_t *s, int32_t i, int f) {
  return 2 * ((size_t)i * s->nf + f);
}

/* Files the direct copy t of a pair on one hardware under the copy item both resolve to. */
static tsr_status comm_plan_copy(comm_t *c, const comm_plan_state_t *s, const comm_pair_t *q,
                                 comm_task_t t, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const registry_t *reg = s->reg;
  const block_info_t *b = q->b, *n = q->n;
  const registry_item_t *cb, *cn;
  char bsb[256], bsn[256];
  TSR_TRY(comm_lookup(reg, s->o, q->f, REGISTRY_KIND_COPY, b, &cb, err));
  TSR_TRY(comm_lookup(reg, s->o, q->f, REGISTRY_KIND_COPY, n, &cn, err));
  TSR_CHECK(cb == cn, TSR_ERR_LOOKUP,
            "ghost exchange of '%s': BlockID %d and its neighbour BlockID %d run on "
            "the same hardware but resolve to different copy items (bs %s and %s); "
            "register one copy item for both",
            s->o->fields[q->f].name, (int)b->id, (int)q->nid,
            selector_format_set(registry_selectors_const(reg), SELECTOR_BS, b->bs,
                                bsb, sizeof bsb),
            selector_format_set(registry_selectors_const(reg), SELECTOR_BS, n->bs,
                                bsn, sizeof bsn));
  TSR_TRY(comm_add_copy(c, cb, t, err));
cleanup:
  return st;
}

/* Plans a pair on this rank: b sends to n in d, n's insertion unpacks, by a direct copy
 * on one hardware, else through the host. */
static tsr_status comm_plan_local(comm_t *c, comm_plan_state_t *s, const comm_pair_t *q,
                                  tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const block_info_t *b = q->b, *n = q->n;
  const int d = q->d, f = q->f;
  const registry_item_t *nins;
  TSR_TRY(comm_lookup(s->reg, s->o, f, REGISTRY_KIND_INSERTION, n, &nins, err));
  comm_task_t t = {b->id, q->nid, d, f, q->ext, nins, 0};
  TSR_TRY(comm_sizes(q->ext, b, nins, n, d, s->o->fields[f].name, &t.bytes, err));
  if (t.bytes == 0) goto cleanup;
  c->stats.local_bytes += (int64_t)t.bytes;
  c->stats.local_copies++;
  int ni = patch_local_index(c->patch, q->nid), kind = b->hs == n->hs ? 1 : 2;
  int *out_flow = &s->flow[comm_slot(s, q->i, f)];
  int *n_in_flow = &s->flow[comm_slot(s, ni, f) + 1];
  if (*out_flow < kind) *out_flow = kind;
  if (*n_in_flow < kind) *n_in_flow = kind;
  if (b->hs == n->hs) {
    TSR_TRY(comm_plan_copy(c, s, q, t, err));
    s->copied[ni] |= 1u << direction_inverse(d);
    goto cleanup;
  }
  TSR_TRY(comm_push(&c->locals, &c->nlocals, &s->cap, t, err));
  c->late[ni] |= 1u << direction_inverse(d);
  if (t.bytes > c->scratch_bytes) c->scratch_bytes = t.bytes;
  s->dirs[comm_slot(s, q->i, f)] |= 1u << d;
cleanup:
  return st;
}

/* Plans a pair across ranks: b sends to n in d, and n sends to b in the inverse
 * direction. */
static tsr_status comm_plan_remote(comm_t *c, comm_plan_state_t *s, const comm_pair_t *q,
                                   tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const block_info_t *b = q->b, *n = q->n;
  const int d = q->d, f = q->f;
  const char *name = s->o->fields[f].name;
  const size_t k = comm_slot(s, q->i, f);
  const registry_item_t *next, *nins;
  TSR_TRY(comm_lookup(s->reg, s->o, f, REGISTRY_KIND_EXTRACTION, n, &next, err));
  TSR_TRY(comm_lookup(s->reg, s->o, f, REGISTRY_KIND_INSERTION, n, &nins, err));
  comm_task_t snd = {b->id, q->nid, d, f, q->ext, NULL, 0};
  TSR_TRY(comm_sizes(q->ext, b, nins, n, d, name, &snd.bytes, err));
  if (snd.bytes > 0) {
    TSR_TRY(comm_add_peer_task(c, n->rank, true, snd, err));
    s->flow[k] = 2;
    s->dirs[k] |= 1u << d;
  }
  int inv = direction_inverse(d);
  comm_task_t rcv = {q->nid, b->id, inv, f, NULL, q->ins, 0};
  TSR_TRY(comm_sizes(next, n, q->ins, b, inv, name, &rcv.bytes, err));
  if (rcv.bytes > 0) {
    TSR_TRY(comm_add_peer_task(c, n->rank, false, rcv, err));
    s->flow[k + 1] = 2;
    c->late[q->i] |= 1u << d;
  }
cleanup:
  return st;
}

/* Plans what local block i exchanges with each of its neighbours, field by field. */
static tsr_status comm_plan_block(comm_t *c, comm_plan_state_t *s, int32_t i, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const patch_t *patch = c->patch;
  const int me = patch_my_rank(patch);
  const block_info_t *b = patch_block(patch, patch_local_id(patch, i));
  const registry_item_t *ext[COMM_MAX_FIELDS], *ins[COMM_MAX_FIELDS];
  for (int f = 0; f < s->nf; ++f) {
    TSR_TRY(comm_lookup(s->reg, s->o, f, REGISTRY_KIND_EXTRACTION, b, &ext[f], err));
    TSR_TRY(comm_lookup(s->reg, s->o, f, REGISTRY_KIND_INSERTION, b, &ins[f], err));
    s->stagers[comm_slot(s, i, f)] = ext[f];
    s->stagers[comm_slot(s, i, f) + 1] = ins[f];
  }
  for (int d = 0; d < DIRECTION_COUNT; ++d) {
    int32_t nid = patch_neighbor(patch, b->id, d);
    if (nid < 0) continue;
    const block_info_t *n = patch_block(patch, nid);
    for (int f = 0; f < s->nf; ++f) {
      const comm_pair_t q = {i, nid, b, n, d, f, ext[f], ins[f]};
      if (n->rank == me) TSR_TRY(comm_plan_local(c, s, &q, err));
      else TSR_TRY(comm_plan_remote(c, s, &q, err));
    }
  }
cleanup:
  return st;
}

/* Lists the blocks whose items stage their data out before an exchange and in after it. */
static tsr_status comm_plan_stages(comm_t *c, const comm_plan_state_t *s, size_t nslots,
                                   tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const patch_t *patch = c->patch;
  const int32_t nlocal = patch_local_count(patch);
  const int *flow = s->flow;
  const registry_item_t *const *stagers = s->stagers;
  c->stage_out = malloc(nslots * sizeof *c->stage_out);
  c->stage_in = malloc(nslots * sizeof *c->stage_in);
  c->stage_tasks = malloc(nslots * sizeof *c->stage_tasks);
  TSR_CHECK(c->stage_out && c->stage_in && c->stage_tasks, TSR_ERR_NOMEM, "out of memory planning the ghost exchange");
  for (int32_t i = 0; i < nlocal; ++i) {
    int32_t id = patch_local_id(patch, i);
    for (int f = 0; f < s->nf; ++f) {
      const size_t k = comm_slot(s, i, f);
      if (flow[k] && stagers[k]->stage_out)
        c->stage_out[c->nstage_out++] =
            (comm_stage_t){id, f, stagers[k], flow[k] == 2, s->dirs[k]};
      if (flow[k + 1] && stagers[k + 1]->stage_in) {
        c->stage_in[c->nstage_in++] =
            (comm_stage_t){id, f, stagers[k + 1], flow[k + 1] == 2, s->dirs[k]};
        /* the direct copies too come in with stage_in (the device's unpack) */
        c->late[i] |= s->copied[i];
      }
    }
  }
cleanup:
  return st;
}

/* Orders the peers and their receives, checks the message sizes and allocates the
 * message buffers. */
static tsr_status comm_plan_peers(comm_t *c, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int me = patch_my_rank(c->patch);
  if (c->npeers > 1) qsort(c->peers, (size_t)c->npeers, sizeof *c->peers, comm_peer_cmp);
  for (int i = 0; i < c->npeers; ++i) {
    comm_peer_t *p = &c->peers[i];
    /* senders walk (src, dir, field) in increasing order: expect messages in that order */
    qsort(p->recvs, (size_t)p->nrecvs, sizeof *p->recvs, comm_task_cmp);
    /* one MPI message each way: its count is an int */
    TSR_CHECK(tsr_size_to_int(p->send_bytes, &p->send_count) &&
                  tsr_size_to_int(p->recv_bytes, &p->recv_count),
              TSR_ERR_INVALID,
              "the messages between rank %d and rank %d need %zu bytes, more than one MPI "
              "message carries (%d); use more, smaller blocks",
              me, p->rank, p->send_bytes > p->recv_bytes ? p->send_bytes : p->recv_bytes, INT_MAX);
    p->send_buf = malloc(p->send_bytes ? p->send_bytes : 1);
    p->recv_buf = malloc(p->recv_bytes ? p->recv_bytes : 1);
    TSR_CHECK(p->send_buf && p->recv_buf, TSR_ERR_NOMEM,
              "out of memory for the message buffers to rank %d (%zu + %zu bytes)", p->rank,
              p->send_bytes, p->recv_bytes);
    c->stats.messages_sent += p->nsends;
    c->stats.bytes_sent += (int64_t)p->send_bytes;
  }
  c->stats.peers = c->npeers;
cleanup:
  return st;
}

/* Allocates the copy groups' calls, the scratch buffer and the MPI requests. */
static tsr_status comm_plan_buffers(comm_t *c, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (int g = 0; g < c->ngroups; ++g) {
    c->groups[g].calls = malloc((size_t)c->groups[g].n * sizeof *c->groups[g].calls);
    TSR_CHECK(c->groups[g].calls, TSR_ERR_NOMEM, "out of memory planning the ghost exchange");
  }
  c->scratch = malloc(c->scratch_bytes ? c->scratch_bytes : 1);
  c->reqs = malloc((size_t)(2 * c->npeers + 1) * sizeof *c->reqs);
  c->statuses = malloc((size_t)(2 * c->npeers + 1) * sizeof *c->statuses);
  TSR_CHECK(c->scratch && c->reqs && c->statuses, TSR_ERR_NOMEM,
            "out of memory planning the ghost exchange");
cleanup:
  return st;
}

/* Plans the exchange of this rank: its local copies, messages and staged blocks. */
static tsr_status comm_plan(comm_t *c, const comm_options_t *o, const registry_t *reg,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const int32_t nlocal = patch_local_count(c->patch);
  const size_t nslots = 2 * (size_t)nlocal * (size_t)o->nfields + 1;
  comm_plan_state_t s = {.o = o, .reg = reg, .nf = o->nfields, .cap = 0};
  s.flow = calloc(nslots, sizeof *s.flow);
  s.dirs = calloc(nslots, sizeof *s.dirs);
  s.stagers = calloc(nslots, sizeof *s.stagers);
  s.copied = calloc((size_t)(nlocal ? nlocal : 1), sizeof *s.copied);
  c->late = calloc((size_t)(nlocal ? nlocal : 1), sizeof *c->late);
  TSR_CHECK(s.flow && s.dirs && s.stagers && s.copied && c->late, TSR_ERR_NOMEM,
            "out of memory planning the ghost exchange");
  for (int32_t i = 0; i < nlocal; ++i) TSR_TRY(comm_plan_block(c, &s, i, err));
  TSR_TRY(comm_plan_stages(c, &s, nslots, err));
  TSR_TRY(comm_plan_peers(c, err));
  TSR_TRY(comm_plan_buffers(c, err));
cleanup:
  free(s.flow);
  free(s.dirs);
  free(s.stagers);
  free(s.copied);
  return st;
}

tsr_status comm_create(const comm_options_t *opts, patch_t *patch, const registry_t *reg,
                       MPI_Comm mpi_comm, comm_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  comm_t *c = NULL;
  *out = NULL;
  c = calloc(1, sizeof *c);
  if (!c) return tsr_error_set(err, TSR_ERR_NOMEM, __FILE__, __LINE__,
                               "out of memory creating the ghost exchange");
  c->mpi = MPI_COMM_NULL;
  c->patch = patch;
  c->tag = opts->tag;
  c->nfields = opts->nfields;
  TSR_MPI(MPI_Comm_dup(mpi_comm, &c->mpi));
  TSR_MPI(MPI_Comm_set_errhandler(c->mpi, MPI_ERRORS_RETURN));
  int size;
  TSR_MPI(MPI_Comm_size(c->mpi, &size));
  TSR_CHECK(size == patch_nranks(patch), TSR_ERR_INVALID,
            "the patch was planned for %d ranks, the communicator has %d",
            patch_nranks(patch), size);
  TSR_CHECK(opts->nfields >= 1 && opts->nfields <= COMM_MAX_FIELDS, TSR_ERR_INVALID,
            "a ghost exchange of %d fields; allowed are 1..%d", opts->nfields, COMM_MAX_FIELDS);
  for (int f = 0; f < opts->nfields && st == TSR_OK; ++f) {
    const comm_field_t *fd = &opts->fields[f];
    TSR_CHECK(fd->name, TSR_ERR_INVALID, "field %d of a ghost exchange has no name", f);
    for (int g = 0; g < f; ++g)
      TSR_CHECK(strcmp(opts->fields[g].name, fd->name) != 0, TSR_ERR_INVALID,
                "a ghost exchange names field '%s' twice", fd->name);
    c->data_id[f] = fd->data_id;
    st = patch_check_ghost_width(patch, fd->width, fd->name, err);
  }
  if (st == TSR_OK) st = comm_plan(c, opts, reg, err);
cleanup:
  if (c && c->mpi != MPI_COMM_NULL) st = verdict_reduce(c->mpi, st, 0, err);
  if (st == TSR_OK) *out = c;
  else comm_free(&c);
  return st;
}

static tsr_status comm_pack(comm_t *c, comm_peer_t *p, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t off = 0;
  for (int k = 0; k < p->nsends; ++k) {
    const comm_task_t *t = &p->sends[k];
    const block_info_t *b = patch_block(c->patch, t->src);
    message_header_t h = {.src = (uint32_t)t->src, .dst = (uint32_t)t->dst,
                          .dir = (uint32_t)t->dir, .field = (uint32_t)t->field,
                          .payload = t->bytes};
    message_encode_header(p->send_buf + off, &h);
    off += MESSAGE_HEADER_BYTES;
    const void *data = comm_data(c, t->src, t->field);
    TSR_CHECK(data, TSR_ERR_INTERNAL, "BlockID %d has no data item %d to extract from",
              (int)t->src, c->data_id[t->field]);
    size_t written = 0;
    TSR_TRY(t->ext->extract(b, data, t->dir, p->send_buf + off, t->bytes, &written, t->ext->ctx, err));
    TSR_CHECK(written == t->bytes, TSR_ERR_INTERNAL,
              "extraction '%s' of BlockID %d in direction %s wrote %zu bytes; the metadata "
              "gives %zu", t->ext->name, (int)t->src, direction_name(t->dir), written, t->bytes);
    off += t->bytes;
  }
cleanup:
  return st;
}

typedef enum comm_stage_step { COMM_STAGE_OUT, COMM_STAGE_WAIT, COMM_STAGE_IN } comm_stage_step_t;

/* Runs one staging function of the listed blocks, one call per item with every block
 * of that item (in list order): stage_out or stage_in of each, or stage_wait of those
 * staged out host-bound whose item has one. */
static tsr_status comm_stage(comm_t *c, const comm_stage_t *list, int32_t n,
                             comm_stage_step_t step, tsr_error_t *err) {
  static const char *what[] = {"staging out", "waiting for the staged data", "staging in"};
  tsr_status st = TSR_OK;
  for (int32_t k = 0; k < n; ++k) {
    const registry_item_t *item = list[k].item;
    int32_t seen = 0; /* an item earlier in the list was called with this block's */
    while (seen < k && list[seen].item != item) ++seen;
    if (seen < k) continue;
    registry_stage_fn fn = step == COMM_STAGE_OUT  ? item->stage_out
                           : step == COMM_STAGE_IN ? item->stage_in
                                                   : item->stage_wait;
    if (!fn) continue;
    size_t m = 0;
    for (int32_t j = k; j < n; ++j) {
      const comm_stage_t *s = &list[j];
      if (s->item != item || (step == COMM_STAGE_WAIT && !s->host_bound)) continue;
      void *data = comm_data(c, s->id, s->field);
      TSR_CHECK(data, TSR_ERR_INTERNAL, "BlockID %d has no data item %d", (int)s->id,
                c->data_id[s->field]);
      c->stage_tasks[m++] = (registry_stage_task_t){.block = patch_block(c->patch, s->id),
                                                    .data = data, .host_bound = s->host_bound,
                                                    .extract_dirs = s->extract_dirs};
    }
    if (m == 0) continue;
    st = fn(c->stage_tasks, m, item->ctx, err);
    if (st != TSR_OK) {
      tsr_error_prefix(err, "%s of '%s' on %zu block(s) from BlockID %d", what[step], item->name,
                       m, (int)c->stage_tasks[0].block->id);
      goto cleanup;
    }
  }
cleanup:
  return st;
}

static tsr_status comm_direct_copies(comm_t *c, tsr_error_t *err);

tsr_status comm_start_stage(comm_t *c, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(!c->started, TSR_ERR_INTERNAL, "comm_start called twice without comm_finish");
  c->started = true;
  c->sent = false;
  c->start_status = TSR_OK;
  tsr_error_clear(&c->start_err);
  /* data in host memory has no staging: its device time stays exactly 0 */
  double t0 = MPI_Wtime();
  if (c->nstage_out > 0)
    c->start_status = comm_stage(c, c->stage_out, c->nstage_out, COMM_STAGE_OUT, &c->start_err);
  double t1 = MPI_Wtime();
  for (int i = 0; i < c->npeers; ++i) {
    comm_peer_t *p = &c->peers[i];
    int rc = MPI_Irecv(p->recv_buf, p->recv_count, MPI_BYTE, p->rank, c->tag, c->mpi,
                       &c->reqs[i]);
    if (rc != MPI_SUCCESS && c->start_status == TSR_OK)
      c->start_status = verdict_mpi_error(rc, "MPI_Irecv", __FILE__, __LINE__, &c->start_err);
  }
  if (c->nstage_out > 0) c->timing.device += t1 - t0;
  c->timing.wait += MPI_Wtime() - t1;
cleanup:
  return st;
}

tsr_status comm_start(comm_t *c, tsr_error_t *err) {
  tsr_status st = comm_start_stage(c, err);
  if (st == TSR_OK) st = comm_start_send(c, err);
  return st;
}

tsr_status comm_start_send(comm_t *c, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(c->started && !c->sent, TSR_ERR_INTERNAL,
            "comm_start_send called without comm_start_stage, or twice");
  c->sent = true;
  bool staged = c->nstage_out > 0;
  double t2 = MPI_Wtime();
  /* every transfer is in flight by now: waiting here measures them apart from the
     extraction (and the receives are posted while they travel) */
  if (staged && c->start_status == TSR_OK)
    c->start_status = comm_stage(c, c->stage_out, c->nstage_out, COMM_STAGE_WAIT, &c->start_err);
  double t3 = MPI_Wtime();
  if (staged) c->timing.device += t3 - t2;
  for (int i = 0; i < c->npeers; ++i) {
    comm_peer_t *p = &c->peers[i];
    double a = MPI_Wtime();
    /* a failed pack still sends, so that no rank waits forever; the verdict in
       comm_finish reports the cause first */
    if (c->start_status == TSR_OK) c->start_status = comm_pack(c, p, &c->start_err);
    double b = MPI_Wtime();
    int rc = MPI_Isend(p->send_buf, p->send_count, MPI_BYTE, p->rank, c->tag, c->mpi,
                       &c->reqs[c->npeers + i]);
    if (rc != MPI_SUCCESS && c->start_status == TSR_OK)
      c->start_status = verdict_mpi_error(rc, "MPI_Isend", __FILE__, __LINE__, &c->start_err);
    c->timing.extract += b - a;
    c->timing.wait += MPI_Wtime() - b;
  }
  /* the direct copies while the messages travel: afterwards every ghost slice outside
     comm_late is in place */
  double t4 = MPI_Wtime();
  if (c->start_status == TSR_OK) c->start_status = comm_direct_copies(c, &c->start_err);
  c->timing.copy += MPI_Wtime() - t4;
cleanup:
  return st;
}

uint32_t comm_late(const comm_t *c, int32_t local) { return c->late[local]; }

void comm_progress(comm_t *c) {
  int flag = 0;
  if (!c->started || c->npeers == 0) return;
  /* a probe drives every transport of the library: a millisecond apart at most (every
     block, 64 blocks of 32^3 on 2 ranks, cost 7-17% on a shared-memory node) */
  const double now = MPI_Wtime();
  if (now - c->progressed < COMM_PROGRESS_S) return;
  c->progressed = now;
  MPI_Iprobe(MPI_ANY_SOURCE, c->tag, c->mpi, &flag, MPI_STATUS_IGNORE);
}

/* The direct copies between blocks of one hardware, one call per copy item. */
static tsr_status comm_direct_copies(comm_t *c, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (int g = 0; g < c->ngroups; ++g) {
    comm_copy_group_t *grp = &c->groups[g];
    for (int64_t k = 0; k < grp->n; ++k) {
      const comm_task_t *t = &grp->tasks[k];
      registry_copy_task_t *call = &grp->calls[k];
      call->src = patch_block(c->patch, t->src);
      call->dst = patch_block(c->patch, t->dst);
      call->src_data = comm_data(c, t->src, t->field);
      call->dst_data = comm_data(c, t->dst, t->field);
      call->dir = t->dir;
      TSR_CHECK(call->src_data && call->dst_data, TSR_ERR_INTERNAL,
                "BlockID %d or %d has no data item %d", (int)t->src, (int)t->dst,
                c->data_id[t->field]);
    }
    st = grp->item->copy(grp->calls, (size_t)grp->n, grp->item->ctx, err);
    if (st != TSR_OK) {
      tsr_error_prefix(err, "copy item '%s'", grp->item->name);
      goto cleanup;
    }
  }
cleanup:
  return st;
}

/* The local pairs of different hardware: extract into scratch (timed as extract), then
 * insert from it (timed as insert). */
static tsr_status comm_local_pairs(comm_t *c, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (int64_t k = 0; k < c->nlocals; ++k) {
    const comm_task_t *t = &c->locals[k];
    const block_info_t *s = patch_block(c->patch, t->src), *d = patch_block(c->patch, t->dst);
    const void *sdata = comm_data(c, t->src, t->field);
    void *ddata = comm_data(c, t->dst, t->field);
    TSR_CHECK(sdata && ddata, TSR_ERR_INTERNAL, "BlockID %d or %d has no data item %d",
              (int)t->src, (int)t->dst, c->data_id[t->field]);
    size_t written = 0;
    double t0 = MPI_Wtime();
    st = t->ext->extract(s, sdata, t->dir, c->scratch, t->bytes, &written, t->ext->ctx, err);
    double t1 = MPI_Wtime();
    c->timing.extract += t1 - t0;
    TSR_TRY(st);
    TSR_CHECK(written == t->bytes, TSR_ERR_INTERNAL,
              "extraction '%s' of BlockID %d in direction %s wrote %zu bytes; the metadata "
              "gives %zu", t->ext->name, (int)t->src, direction_name(t->dir), written, t->bytes);
    t1 = MPI_Wtime();
    st = t->ins->insert(d, ddata, t->dir, c->scratch, t->bytes, t->ins->ctx, err);
    c->timing.insert += MPI_Wtime() - t1;
    TSR_TRY(st);
  }
cleanup:
  return st;
}

/* MPI_Waitall over every request, each status kept. Where one request fails, Open MPI
 * returns at once and marks the requests not complete yet MPI_ERR_PENDING: those are
 * waited for one by one, so that none outlives the exchange (and its buffer), and the
 * error field of each status is its own outcome. Returns MPI_Waitall's code. */
static int comm_wait(comm_t *c) {
  const int n = 2 * c->npeers;
  int rc = MPI_Waitall(n, c->reqs, c->statuses);
  for (int i = 0; rc == MPI_ERR_IN_STATUS && i < n; ++i)
    if (c->statuses[i].MPI_ERROR == MPI_ERR_PENDING)
      c->statuses[i].MPI_ERROR = MPI_Wait(&c->reqs[i], &c->statuses[i]);
  return rc;
}

/* After comm_wait (its return code rc): every receive must hold exactly the bytes the
 * plan expects from its peer. A rank whose plan differs (its blocks, sizes or items
 * disagree with this rank's) sends a message of another size: fewer bytes would leave
 * the end of the buffer from the exchange before, more are cut (MPI_ERR_TRUNCATE). */
static tsr_status comm_check_received(comm_t *c, int rc, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int me = patch_my_rank(c->patch);
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
    st = verdict_mpi_error(rc, "MPI_Waitall", __FILE__, __LINE__, err);
    goto cleanup;
  }
  for (int i = 0; i < c->npeers; ++i) {
    const comm_peer_t *p = &c->peers[i];
    const MPI_Status *s = &c->statuses[i];
    /* the error fields are set only when MPI_Waitall says so */
    int code = rc == MPI_ERR_IN_STATUS ? s->MPI_ERROR : MPI_SUCCESS, got = 0;
    if (code != MPI_SUCCESS && code != MPI_ERR_TRUNCATE) {
      st = verdict_mpi_error(code, "MPI_Irecv", __FILE__, __LINE__, err);
      tsr_error_prefix(err, "ghost exchange, the message from rank %d", p->rank);
      goto cleanup;
    }
    TSR_MPI(MPI_Get_count(s, MPI_BYTE, &got));
    /* a cut message: Open MPI counts what was sent, others may count what was kept */
    TSR_CHECK(code != MPI_ERR_TRUNCATE || got <= p->recv_count, TSR_ERR_CORRUPT,
              "ghost exchange: rank %d sent rank %d %d bytes; the exchange plan expects %d (the "
              "message was cut, MPI_ERR_TRUNCATE): the ranks' plans disagree",
              p->rank, me, got, p->recv_count);
    TSR_CHECK(code != MPI_ERR_TRUNCATE, TSR_ERR_CORRUPT,
              "ghost exchange: rank %d sent rank %d more than %d bytes; the exchange plan "
              "expects %d (the message was cut, MPI_ERR_TRUNCATE): the ranks' plans disagree",
              p->rank, me, p->recv_count, p->recv_count);
    TSR_CHECK(got == p->recv_count, TSR_ERR_CORRUPT,
              "ghost exchange: rank %d sent rank %d %d bytes; the exchange plan expects %d: the "
              "ranks' plans disagree", p->rank, me, got, p->recv_count);
  }
  for (int i = 0; rc == MPI_ERR_IN_STATUS && i < c->npeers; ++i) {
    int code = c->statuses[c->npeers + i].MPI_ERROR;
    if (code == MPI_SUCCESS) continue;
    st = verdict_mpi_error(code, "MPI_Isend", __FILE__, __LINE__, err);
    tsr_error_prefix(err, "ghost exchange, the message to rank %d", c->peers[i].rank);
    goto cleanup;
  }
cleanup:
  return st;
}

static tsr_status comm_unpack(comm_t *c, const comm_peer_t *p, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  buffer_reader_t r = buffer_reader(p->recv_buf, p->recv_bytes);
  for (int k = 0; k < p->nrecvs; ++k) {
    const comm_task_t *t = &p->recvs[k];
    message_header_t h;
    const uint8_t *payload;
    st = message_read(&r, &h, &payload, err);
    if (st == TSR_OK) st = message_check_route(&h, c->patch, p->rank, err);
    if (st != TSR_OK) {
      tsr_error_prefix(err, "message %d of %d from rank %d", k + 1, p->nrecvs, p->rank);
      goto cleanup;
    }
    TSR_CHECK(h.src == (uint32_t)t->src && h.dst == (uint32_t)t->dst &&
                  h.dir == (uint32_t)t->dir && h.field == (uint32_t)t->field,
              TSR_ERR_CORRUPT,
              "message %d of %d from rank %d is BlockID %u -> %u (%s), field %u; expected "
              "BlockID %d -> %d (%s), field %d: messages are missing, repeated or out of order",
              k + 1, p->nrecvs, p->rank, (unsigned)h.src, (unsigned)h.dst,
              direction_name((int)h.dir), (unsigned)h.field, (int)t->src, (int)t->dst,
              direction_name(t->dir), t->field);
    TSR_TRY(message_check_payload(&h, t->bytes, err));
    const block_info_t *b = patch_block(c->patch, t->dst);
    void *data = comm_data(c, t->dst, t->field);
    TSR_CHECK(data, TSR_ERR_INTERNAL, "BlockID %d has no data item %d", (int)t->dst,
              c->data_id[t->field]);
    TSR_TRY(t->ins->insert(b, data, t->dir, payload, t->bytes, t->ins->ctx, err));
  }
  TSR_CHECK(buffer_reader_left(&r) == 0, TSR_ERR_CORRUPT,
            "%zu bytes from rank %d follow its last expected message", buffer_reader_left(&r),
            p->rank);
cleanup:
  return st;
}

tsr_status comm_finish(comm_t *c, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  int phase = 1;
  if (!c->started) {
    st = tsr_error_set(err, TSR_ERR_INTERNAL, __FILE__, __LINE__,
                       "comm_finish called without comm_start");
    return st;
  }
  if (!c->sent) { /* the messages leave in any case: no rank waits for this one */
    tsr_error_t ignored;
    if (comm_start_send(c, &ignored) != TSR_OK) { /* reported through start_status */ }
  }
  c->started = false;
  st = c->start_status;
  if (st != TSR_OK) {
    *err = c->start_err;
    phase = 0;
  }
  if (st == TSR_OK) st = comm_local_pairs(c, err); /* times itself */
  if (st != TSR_OK) phase = 0; /* failed before any message was read */
  double t2 = MPI_Wtime();
  int rc = comm_wait(c);
  if (st == TSR_OK) st = comm_check_received(c, rc, err);
  double t3 = MPI_Wtime();
  for (int i = 0; i < c->npeers && st == TSR_OK; ++i) st = comm_unpack(c, &c->peers[i], err);
  double t4 = MPI_Wtime();
  if (st == TSR_OK && c->nstage_in > 0)
    st = comm_stage(c, c->stage_in, c->nstage_in, COMM_STAGE_IN, err);
  double t5 = MPI_Wtime();
  st = verdict_reduce(c->mpi, st, phase, err);
  c->timing.wait += (t3 - t2) + (MPI_Wtime() - t5);
  c->timing.insert += t4 - t3;
  if (c->nstage_in > 0) c->timing.device += t5 - t4;
  c->timing.exchanges++;
  return st;
}

tsr_status comm_exchange(comm_t *c, tsr_error_t *err) {
  tsr_status st = comm_start(c, err);
  if (st != TSR_OK) return st;
  return comm_finish(c, err);
}

comm_stats_t comm_stats(const comm_t *c) { return c->stats; }

comm_timing_t comm_timing(const comm_t *c) { return c->timing; }
