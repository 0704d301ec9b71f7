/* opencl: the OpenCL seam of the framework (host side). For now: discovering platforms
 * and devices, and naming OpenCL error codes. All OpenCL calls of framework/ live here. */
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
  int double_precision;                  /* 1 if the device supports doubles */
} opencl_device_desc_t;

/* Lists every device of every platform into a new array the caller frees with free().
 * No platform at all gives *count = 0 and TSR_OK. */
TSR_NODISCARD tsr_status opencl_list_devices(opencl_device_desc_t **out, size_t *count,
                                             tsr_error_t *err);

/* Symbolic name of an OpenCL error code ("CL_OUT_OF_RESOURCES"), or "unknown". */
const char *opencl_error_name(int32_t code);

#endif
