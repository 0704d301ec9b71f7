/* sim_checkpoint: a simulation's (sim.h) checkpoints, written into an output folder and
 * read back on any processes and hardware. */
#ifndef SIM_CHECKPOINT_H
#define SIM_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "output.h"
#include "sim.h"
#include "sim_output.h"
#include "simulation.h"
#include "tsr_error.h"

/* Checkpoints (collective; checkpoint.h gives the format, docs/checkpoints.md the
 * contract). sim_write_checkpoint writes every declared field of every block, the step,
 * physics (the settings a restart must keep, module_config_physics: its hash, and the
 * text as the extra physics.json) and the run state of the writers w (VTK steps, series;
 * NULL: none) as
 * checkpoint_<step>.tsrc in out (name gets the file name), through a temporary name,
 * synced, renamed and the folder synced; listed in the manifest. */
TSR_NODISCARD tsr_status sim_write_checkpoint(sim_t *sim, sim_output_t *w, output_folder_t *out,
                                              int64_t step, const char *physics, char *name,
                                              size_t cap, tsr_error_t *err);

/* Collective: the checkpoint `restart` names, into path (cap bytes): a checkpoint file as
 * it is; a folder, or "latest" for output_folder, the checkpoint of the highest step in
 * it (checkpoint_<step>.tsrc: written whole or not at all, so every one there is
 * complete). One error on every rank where a folder holds none. */
TSR_NODISCARD tsr_status sim_checkpoint_find(MPI_Comm comm, const char *restart,
                                             const char *output_folder, char *path, size_t cap,
                                             tsr_error_t *err);

/* Loads the checkpoint at path into a simulation created from the same configuration
 * (physics' hash, block grid and fields must match: one message naming what differs; its
 * checksums must hold): each rank reads its blocks by BlockID, whatever ranks, hardware
 * and layouts wrote them, and the writers' run state into w (NULL: skipped); then the
 * modules' resume hooks, and one exchange of the ghost layers. *step: the checkpoint's
 * step. */
TSR_NODISCARD tsr_status sim_read_checkpoint(sim_t *sim, sim_output_t *w,
                                             const simulation_options_t *so, const char *path,
                                             const char *physics, int64_t *step,
                                             tsr_error_t *err);

#endif
