/* data: simulation data of the local blocks, allocated by the registry's allocators.
 *
 * data_allocate interns the data name as a data id and, for every block this process
 * owns, looks up the allocator item of that name for the block's hs and bs, allocates,
 * and hands the item to the block's data list together with the allocator's free
 * function. Collective: every rank returns the same verdict. */
#ifndef DATA_H
#define DATA_H

#include <mpi.h>
#include <stdint.h>

#include "patch.h"
#include "registry.h"
#include "tsr_error.h"

TSR_NODISCARD tsr_status data_allocate(MPI_Comm comm, registry_t *reg, patch_t *patch,
                                       const char *name, uint64_t fs, int *data_id,
                                       tsr_error_t *err);

/* Runs the kernel item `name` on every local block (looked up by its hs and bs).
 * Not collective: a failure is this rank's alone until the caller reduces it. */
TSR_NODISCARD tsr_status data_run_kernel(const registry_t *reg, patch_t *patch, const char *name,
                                         uint64_t fs, tsr_error_t *err);

#endif
