#define CL_TARGET_OPENCL_VERSION 120
#include "opencl.h"

#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *opencl_error_name(int32_t code) {
  switch (code) {
#define TSR_CL_NAME(c) case c: return #c;
    TSR_CL_NAME(CL_SUCCESS)
    TSR_CL_NAME(CL_DEVICE_NOT_FOUND)
    TSR_CL_NAME(CL_DEVICE_NOT_AVAILABLE)
    TSR_CL_NAME(CL_COMPILER_NOT_AVAILABLE)
    TSR_CL_NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    TSR_CL_NAME(CL_OUT_OF_RESOURCES)
    TSR_CL_NAME(CL_OUT_OF_HOST_MEMORY)
    TSR_CL_NAME(CL_PROFILING_INFO_NOT_AVAILABLE)
    TSR_CL_NAME(CL_MEM_COPY_OVERLAP)
    TSR_CL_NAME(CL_IMAGE_FORMAT_MISMATCH)
    TSR_CL_NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    TSR_CL_NAME(CL_BUILD_PROGRAM_FAILURE)
    TSR_CL_NAME(CL_MAP_FAILURE)
    TSR_CL_NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    TSR_CL_NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    TSR_CL_NAME(CL_COMPILE_PROGRAM_FAILURE)
    TSR_CL_NAME(CL_LINKER_NOT_AVAILABLE)
    TSR_CL_NAME(CL_LINK_PROGRAM_FAILURE)
    TSR_CL_NAME(CL_DEVICE_PARTITION_FAILED)
    TSR_CL_NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    TSR_CL_NAME(CL_INVALID_VALUE)
    TSR_CL_NAME(CL_INVALID_DEVICE_TYPE)
    TSR_CL_NAME(CL_INVALID_PLATFORM)
    TSR_CL_NAME(CL_INVALID_DEVICE)
    TSR_CL_NAME(CL_INVALID_CONTEXT)
    TSR_CL_NAME(CL_INVALID_QUEUE_PROPERTIES)
    TSR_CL_NAME(CL_INVALID_COMMAND_QUEUE)
    TSR_CL_NAME(CL_INVALID_HOST_PTR)
    TSR_CL_NAME(CL_INVALID_MEM_OBJECT)
    TSR_CL_NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    TSR_CL_NAME(CL_INVALID_IMAGE_SIZE)
    TSR_CL_NAME(CL_INVALID_SAMPLER)
    TSR_CL_NAME(CL_INVALID_BINARY)
    TSR_CL_NAME(CL_INVALID_BUILD_OPTIONS)
    TSR_CL_NAME(CL_INVALID_PROGRAM)
    TSR_CL_NAME(CL_INVALID_PROGRAM_EXECUTABLE)
    TSR_CL_NAME(CL_INVALID_KERNEL_NAME)
    TSR_CL_NAME(CL_INVALID_KERNEL_DEFINITION)
    TSR_CL_NAME(CL_INVALID_KERNEL)
    TSR_CL_NAME(CL_INVALID_ARG_INDEX)
    TSR_CL_NAME(CL_INVALID_ARG_VALUE)
    TSR_CL_NAME(CL_INVALID_ARG_SIZE)
    TSR_CL_NAME(CL_INVALID_KERNEL_ARGS)
    TSR_CL_NAME(CL_INVALID_WORK_DIMENSION)
    TSR_CL_NAME(CL_INVALID_WORK_GROUP_SIZE)
    TSR_CL_NAME(CL_INVALID_WORK_ITEM_SIZE)
    TSR_CL_NAME(CL_INVALID_GLOBAL_OFFSET)
    TSR_CL_NAME(CL_INVALID_EVENT_WAIT_LIST)
    TSR_CL_NAME(CL_INVALID_EVENT)
    TSR_CL_NAME(CL_INVALID_OPERATION)
    TSR_CL_NAME(CL_INVALID_GL_OBJECT)
    TSR_CL_NAME(CL_INVALID_BUFFER_SIZE)
    TSR_CL_NAME(CL_INVALID_MIP_LEVEL)
    TSR_CL_NAME(CL_INVALID_GLOBAL_WORK_SIZE)
    TSR_CL_NAME(CL_INVALID_PROPERTY)
    TSR_CL_NAME(CL_INVALID_IMAGE_DESCRIPTOR)
    TSR_CL_NAME(CL_INVALID_COMPILER_OPTIONS)
    TSR_CL_NAME(CL_INVALID_LINKER_OPTIONS)
    TSR_CL_NAME(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef TSR_CL_NAME
  case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
  }
  return "unknown OpenCL error";
}

#define TSR_CL(call)                                                                     \
  do {                                                                                   \
    cl_int tsr_cl_rc_ = (call);                                                          \
    TSR_CHECK(tsr_cl_rc_ == CL_SUCCESS, TSR_ERR_OPENCL, "%s failed: %s (%d)", #call,     \
              opencl_error_name(tsr_cl_rc_), (int)tsr_cl_rc_);                           \
  } while (0)

static const char *opencl_type_name(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return "gpu";
  if (t & CL_DEVICE_TYPE_CPU) return "cpu";
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

tsr_status opencl_list_devices(opencl_device_desc_t **out, size_t *count, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_platform_id *plats = NULL;
  cl_device_id *devs = NULL;
  opencl_device_desc_t *list = NULL;
  size_t n = 0;
  *out = NULL;
  *count = 0;
  cl_uint nplat = 0;
  cl_int rc = clGetPlatformIDs(0, NULL, &nplat);
  if (rc == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: no ICD installed */ || nplat == 0) goto cleanup;
  TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "clGetPlatformIDs failed: %s (%d)",
            opencl_error_name(rc), (int)rc);
  plats = calloc(nplat, sizeof *plats);
  TSR_CHECK(plats, TSR_ERR_NOMEM, "out of memory listing OpenCL platforms");
  TSR_CL(clGetPlatformIDs(nplat, plats, NULL));
  for (cl_uint p = 0; p < nplat; ++p) {
    char pname[OPENCL_NAME_MAX] = "";
    TSR_CL(clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL));
    cl_uint ndev = 0;
    rc = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &ndev);
    if (rc == CL_DEVICE_NOT_FOUND || ndev == 0) continue;
    TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "clGetDeviceIDs on platform %u (%s) failed: %s",
              p, pname, opencl_error_name(rc));
    free(devs);
    devs = calloc(ndev, sizeof *devs);
    opencl_device_desc_t *grown = realloc(list, (n + ndev) * sizeof *grown);
    TSR_CHECK(devs && grown, TSR_ERR_NOMEM, "out of memory listing OpenCL devices");
    list = grown;
    TSR_CL(clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, ndev, devs, NULL));
    for (cl_uint d = 0; d < ndev; ++d) {
      opencl_device_desc_t *x = &list[n++];
      memset(x, 0, sizeof *x);
      x->platform = (int)p;
      x->device = (int)d;
      memcpy(x->platform_name, pname, sizeof pname);
      cl_device_type type;
      cl_ulong mem, alloc;
      cl_uint cu;
      cl_device_fp_config fp = 0;
      TSR_CL(clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof x->name - 1, x->name, NULL));
      TSR_CL(clGetDeviceInfo(devs[d], CL_DEVICE_VERSION, sizeof x->version - 1, x->version, NULL));
      TSR_CL(clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof type, &type, NULL));
      TSR_CL(clGetDeviceInfo(devs[d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL));
      TSR_CL(clGetDeviceInfo(devs[d], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc, NULL));
      TSR_CL(clGetDeviceInfo(devs[d], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL));
      TSR_CL(clGetDeviceInfo(devs[d], CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL));
      snprintf(x->type, sizeof x->type, "%s", opencl_type_name(type));
      x->global_mem_bytes = mem;
      x->max_alloc_bytes = alloc;
      x->compute_units = cu;
      x->double_precision = fp != 0;
    }
  }
  *out = list;
  *count = n;
  list = NULL;
cleanup:
  free(plats);
  free(devs);
  free(list);
  return st;
}
