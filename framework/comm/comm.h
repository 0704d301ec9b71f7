/* comm: the communication scheme of one ghost exchange round of one or more fields.
 *
 * comm_create walks every local block, every direction with a neighbour and every field,
 * once:
 *   neighbour on this process, same hardware -> a direct copy by the field's copy item
 *                                (REGISTRY_KIND_COPY; both blocks must resolve to the
 *                                same item), all copies of one item in one call;
 *   neighbour on this process, other hardware -> extract(b, d) into a scratch buffer,
 *                                insert(n, d) from it;
 *   neighbour on another rank -> a block message (its header names the field) appended
 *                                to the one send buffer of that rank.
 * However many fields the round carries, one MPI message goes to each neighbour rank
 * and one comes from it, with the block messages of every field in (sending BlockID,
 * direction, field) order.
 * Extraction and insertion functions come from the registry by the field name, the
 * simulation's fs and each block's hs and bs. Every message size is computed from block
 * metadata before anything is sent, so one MPI_Irecv/MPI_Isend pair per neighbour rank
 * moves exact-size buffers; what arrives is checked before insertion: the byte count of
 * each peer's message against the plan (MPI_Get_count; a message of another size, e.g.
 * from a rank whose plan disagrees, is an error naming the sender and both counts), then
 * the messages in it against the expected list (order, route, payload length). Where the sending or the receiving
 * block holds no data for a direction (its item's size is 0, e.g. a block that is all
 * solid), nothing is sent or copied.
 *
 * comm_start stages out (and waits for the staged data to reach the host), posts the
 * receives, packs and sends, then does the direct copies while the messages travel;
 * comm_finish does the local pairs of different hardware, waits, checks, inserts and
 * stages in. Between the two a caller may compute what needs none of the ghost slices
 * comm_late names (an overlapped step, timeloop.h), calling comm_progress now and then.
 * Both are collective; comm_finish returns the same verdict on every rank. comm_timing
 * says where this process spent the time. */
#ifndef COMM_H
#define COMM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "patch.h"
#include "registry.h"
#include "tsr_error.h"

typedef struct comm comm_t;

/* One field of an exchange round. */
typedef struct comm_field {
  const char *name;  /* registry name of its extraction, insertion and copy items */
  int data_id;       /* block data item handed to them */
  int width[3];      /* its ghost widths per axis: comm_create checks that the blocks suit
                        them (patch_check_ghost_width) */
} comm_field_t;

enum { COMM_MAX_FIELDS = 16 };

typedef struct comm_options {
  comm_field_t fields[COMM_MAX_FIELDS]; /* borrowed names, read during comm_create only */
  int nfields;       /* 1..COMM_MAX_FIELDS, names distinct */
  uint64_t fs;       /* the simulation's fs switches */
  int tag;           /* MPI tag on the duplicated communicator */
} comm_options_t;

/* Options for one field, the common case. */
comm_options_t comm_options_one(const char *name, int data_id, const int width[3], int tag);

typedef struct comm_stats {
  int peers;               /* neighbour ranks: MPI messages sent (and received) per exchange */
  int64_t messages_sent;   /* block messages sent per exchange, all fields */
  int64_t bytes_sent;      /* bytes sent per exchange, headers included */
  int64_t local_copies;    /* block-to-block copies inside this process per exchange */
  int64_t local_bytes;     /* payload bytes of those copies */
} comm_stats_t;

/* Seconds (MPI_Wtime) this process spent in each phase of its ghost exchanges, summed
 * over every comm_start/comm_finish pair since comm_create. The phases do not overlap,
 * so their sum is at most the wall time of the exchanges; what is left is bookkeeping
 * between the phases. */
typedef struct comm_timing {
  double device;  /* seconds in stage_out, stage_wait and stage_in (host<->device transfers
                     and the device's pack/unpack) */
  double extract; /* extraction into send buffers, message headers included, and the
                     extraction half of local pairs of different hardware (into scratch) */
  double copy;    /* direct block-to-block copies inside this process (copy items) */
  double wait;    /* MPI: posting MPI_Irecv/MPI_Isend, MPI_Waitall for the messages, and
                     the verdict that ends comm_finish (an MPI_Allreduce, where ranks that
                     finish early wait for the others) */
  double insert;  /* checking and inserting received messages, and the insertion half of
                     local pairs of different hardware (from scratch) */
  int64_t exchanges; /* comm_finish calls that followed a comm_start, failed ones included */
} comm_timing_t;

/* Collective over mpi_comm (duplicated inside). patch and reg are borrowed and must
 * outlive the comm. */
TSR_NODISCARD tsr_status comm_create(const comm_options_t *opts, patch_t *patch,
                                     const registry_t *reg, MPI_Comm mpi_comm, comm_t **out,
                                     tsr_error_t *err);
void comm_free(comm_t **c);

TSR_NODISCARD tsr_status comm_start(comm_t *c, tsr_error_t *err);
/* comm_start in two halves: the staging out is enqueued and the receives posted; then
 * the wait for the staged data, the packs and sends, the direct copies. Between the two a
 * device may be given work that needs none of the ghost slices comm_late names (its
 * queue runs it while the staged data travels to the host). */
TSR_NODISCARD tsr_status comm_start_stage(comm_t *c, tsr_error_t *err);
TSR_NODISCARD tsr_status comm_start_send(comm_t *c, tsr_error_t *err);
TSR_NODISCARD tsr_status comm_finish(comm_t *c, tsr_error_t *err);
/* comm_start then comm_finish. */
TSR_NODISCARD tsr_status comm_exchange(comm_t *c, tsr_error_t *err);

/* The ghost slices of local block `local` (patch_local_id order) that comm_finish fills,
 * as bits of directions (direction.h): those received from other processes, inserted
 * from a block of other hardware, or brought to a device by stage_in (a device block's
 * direct copies too: its unpack does them). The others are in place when comm_start
 * returns. */
uint32_t comm_late(const comm_t *c, int32_t local);

/* Between comm_start and comm_finish: lets MPI move the messages in flight (a probe:
 * nothing is received or completed), at most once a millisecond (calls in between return
 * at once). Not collective. */
void comm_progress(comm_t *c);

comm_stats_t comm_stats(const comm_t *c);
comm_timing_t comm_timing(const comm_t *c);

#endif
