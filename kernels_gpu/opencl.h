/* opencl: the OpenCL seam of the framework (host side): discovering platforms and
 * devices, naming OpenCL error codes, and a process's OpenCL context (the chosen device,
 * one in-order queue, program builds with their log). All OpenCL calls of framework/
 * live here; kernels_gpu/ gets the raw handles from the context. */
#ifndef OPENCL_H
#define OPENCL_H

#include <stddef.h>
#include <stdint.h>

#include "tsr_error.h"

enum { OPENCL_NAME_MAX = 128 };

typedef struct opencl_device_desc {
  int platform;                          /* platform index */
  int device;                            /* device index within the platform */
  char platform_name[OPENCL_NAME_MAX];
  char name[OPENCL_NAME_MAX];
  char version[OPENCL_NAME_MAX];         /* CL_DEVICE_VERSION */
  char type[16];                         /* "gpu", "cpu", "accelerator", "other" */
  uint64_t global_mem_bytes;
  uint32_t compute_units;
  uint64_t max_alloc_bytes;
  uint32_t base_align;                   /* bytes: where a sub-buffer may start
                                            (CL_DEVICE_MEM_BASE_ADDR_ALIGN) */
  int double_precision;                  /* 1 if the device supports doubles */
} opencl_device_desc_t;

/* Lists every device of every platform into a new array the caller frees with free().
 * No platform at all gives *count = 0 and TSR_OK. */
TSR_NODISCARD tsr_status opencl_list_devices(opencl_device_desc_t **out, size_t *count,
                                             tsr_error_t *err);

/* Which device a process uses. A platform is picked by index (platform >= 0) or as the
 * first platform whose name contains platform_name (platform < 0); with neither (platform
 * < 0, empty name) it is the first platform that has a GPU device, else the first that has
 * any device (a GPU node often has PoCL's CPU platform listed before the vendor's); then
 * a device of that platform by index (device >= 0) or name substring (device < 0). */
typedef struct opencl_select {
  int platform;
  char platform_name[OPENCL_NAME_MAX];
  int device;
  char device_name[OPENCL_NAME_MAX];
} opencl_select_t;

/* The default platform (above), its device 0. */
opencl_select_t opencl_select_default(void);

/* The platform index sel picks among the listed devices, or -1 if none matches. */
int opencl_pick_platform(const opencl_device_desc_t *list, size_t n, const opencl_select_t *sel);

typedef struct opencl_context opencl_context_t;

/* Opens the selected device: a context and one in-order queue. No platform, an index
 * that does not exist or a name that matches nothing is a TSR_ERR_INVALID naming what
 * exists. */
TSR_NODISCARD tsr_status opencl_context_create(const opencl_select_t *sel,
                                               opencl_context_t **out, tsr_error_t *err);
void opencl_context_free(opencl_context_t **ctx);

/* The device's description (borrowed). */
const opencl_device_desc_t *opencl_context_desc(const opencl_context_t *ctx);

/* Raw handles for kernels_gpu/ (cl_context, cl_device_id, cl_command_queue), borrowed:
 * the queue of kernels and most copies, and a second in-order queue of its own for the
 * transfers of ghost messages (gpu_buffer_read_after, gpu_buffer_write_before). */
void *opencl_context_cl(const opencl_context_t *ctx);
void *opencl_context_device(const opencl_context_t *ctx);
void *opencl_context_queue(const opencl_context_t *ctx);
void *opencl_context_transfer_queue(const opencl_context_t *ctx);

/* Builds source with options for the context's device into *program (a cl_program the
 * caller releases with opencl_program_release). A failed build is a TSR_ERR_OPENCL whose
 * message names what (e.g. "kernels_gpu/name.cl"), the options and the build log. With
 * the environment variable TESSERA_CL_BINARIES naming a folder, every program built is
 * also written there as the device's binary (PTX on NVIDIA), one file per program and
 * options, listed in its index.txt. */
TSR_NODISCARD tsr_status opencl_build_program(opencl_context_t *ctx, const char *source,
                                              const char *options, const char *what,
                                              void **program, tsr_error_t *err);
void opencl_program_release(void *program);

/* Enqueues kernel (a cl_kernel, its arguments set) on the context's queue over global[dims]
 * work items in groups of local[dims] (NULL: the driver picks), and counts the launch;
 * what names the kernel in a failure. */
TSR_NODISCARD tsr_status opencl_launch(opencl_context_t *ctx, void *kernel, int dims,
                                       const size_t *global, const size_t *local,
                                       const char *what, tsr_error_t *err);
/* The same with a global work offset (offset[d] added to every work item's global id;
 * NULL: none), for a launch over part of a range. */
TSR_NODISCARD tsr_status opencl_launch_at(opencl_context_t *ctx, void *kernel, int dims,
                                          const size_t *offset, const size_t *global,
                                          const size_t *local, const char *what,
                                          tsr_error_t *err);
/* A 1-D launch over n items of a kernel that returns for global ids >= n: groups of
 * OPENCL_ITEMS_GROUP work items (fewer where the kernel takes fewer), the global size n
 * rounded up to a whole group. The driver's own choice for a NULL group follows n (n
 * prime: groups of one), and PoCL compiles the kernel anew for every group size it meets
 * (every message size of a ghost exchange). */
enum { OPENCL_ITEMS_GROUP = 64 };
TSR_NODISCARD tsr_status opencl_launch_items(opencl_context_t *ctx, void *kernel, size_t n,
                                             const char *what, tsr_error_t *err);

/* What the context's queue was given since the context was opened: kernel launches
 * (opencl_launch) and transfers between host and device (gpu_buffer_read and _write,
 * counted by opencl_count_transfer). A test counts the launches of a step with it; the
 * bench reports them. */
typedef struct opencl_counts {
  int64_t launches;
  int64_t reads, writes;             /* device -> host, host -> device */
  int64_t bytes_read, bytes_written;
} opencl_counts_t;
opencl_counts_t opencl_context_counts(const opencl_context_t *ctx);
void opencl_count_transfer(opencl_context_t *ctx, int to_device, size_t bytes);

/* Fails with a message giving both numbers when bytes more device memory than the
 * device has (global memory, and the largest single allocation for largest) are asked
 * for; what names the use. */
TSR_NODISCARD tsr_status opencl_check_memory(const opencl_context_t *ctx, uint64_t bytes,
                                             uint64_t largest, const char *what,
                                             tsr_error_t *err);

/* Runs an OpenCL call and fails with its name and the error's name unless it returns
 * CL_SUCCESS (0); for functions with tsr_status st, tsr_error_t *err and a cleanup
 * label (TSR_CHECK's conventions). */
#define OPENCL_CHECK(call)                                                               \
  do {                                                                                   \
    const int32_t opencl_rc_ = (int32_t)(call);                                          \
    TSR_CHECK(opencl_rc_ == 0, TSR_ERR_OPENCL, "%s failed: %s (%d)", #call,              \
              opencl_error_name(opencl_rc_), (int)opencl_rc_);                           \
  } while (0)

/* Symbolic name of an OpenCL error code ("CL_OUT_OF_RESOURCES"), or "unknown". */
const char *opencl_error_name(int32_t code);

#endif
