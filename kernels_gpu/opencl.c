#define CL_TARGET_OPENCL_VERSION 120
#include "opencl.h"

#include <CL/cl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
  OPENCL_CHECK(clGetPlatformIDs(nplat, plats, NULL));
  for (cl_uint p = 0; p < nplat; ++p) {
    char pname[OPENCL_NAME_MAX] = "";
    OPENCL_CHECK(clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL));
    cl_uint ndev = 0;
    rc = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &ndev);
    if (rc == CL_DEVICE_NOT_FOUND || ndev == 0) continue;
    TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "clGetDeviceIDs on platform %u (%s) failed: %s",
              p, pname, opencl_error_name(rc));
    /* one allocation checked at a time: a realloc that moved list has freed the old
       block, so list must take the new one before anything can fail */
    free(devs);
    devs = calloc(ndev, sizeof *devs);
    TSR_CHECK(devs, TSR_ERR_NOMEM, "out of memory listing OpenCL devices");
    opencl_device_desc_t *grown = realloc(list, (n + ndev) * sizeof *grown);
    TSR_CHECK(grown, TSR_ERR_NOMEM, "out of memory listing OpenCL devices");
    list = grown;
    OPENCL_CHECK(clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, ndev, devs, NULL));
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
      OPENCL_CHECK(clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof x->name - 1, x->name, NULL));
      OPENCL_CHECK(clGetDeviceInfo(devs[d], CL_DEVICE_VERSION, sizeof x->version - 1, x->version, NULL));
      OPENCL_CHECK(clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof type, &type, NULL));
      OPENCL_CHECK(clGetDeviceInfo(devs[d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL));
      OPENCL_CHECK(clGetDeviceInfo(devs[d], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc, NULL));
      OPENCL_CHECK(clGetDeviceInfo(devs[d], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL));
      OPENCL_CHECK(clGetDeviceInfo(devs[d], CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL));
      cl_uint align_bits = 0;
      OPENCL_CHECK(clGetDeviceInfo(devs[d], CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits,
                                   &align_bits, NULL));
      x->base_align = align_bits >= 8 ? align_bits / 8 : 1;
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

opencl_select_t opencl_select_default(void) {
  opencl_select_t s;
  memset(&s, 0, sizeof s);
  s.platform = -1;
  s.device = 0;
  return s;
}

struct opencl_context {
  cl_context context;
  cl_device_id device;
  cl_command_queue queue;
  cl_command_queue transfer; /* the ghost messages' transfers (gpu_buffer_read_after) */
  opencl_device_desc_t desc;
  opencl_counts_t counts;
};

/* "0: name, 1: name" of the devices in list that are on platform p (or of all platform
 * names when p < 0), for error messages. */
static void opencl_describe(const opencl_device_desc_t *list, size_t n, int p, char *out,
                            size_t cap) {
  size_t used = 0;
  out[0] = '\0';
  int last_platform = -1;
  for (size_t i = 0; i < n && used + 1 < cap; ++i) {
    int w = 0;
    if (p < 0) {
      if (list[i].platform == last_platform) continue;
      last_platform = list[i].platform;
      w = snprintf(out + used, cap - used, "%s%d: %s", used ? ", " : "", list[i].platform,
                   list[i].platform_name);
    } else if (list[i].platform == p) {
      w = snprintf(out + used, cap - used, "%s%d: %s (%s)", used ? ", " : "", list[i].device,
                   list[i].name, list[i].type);
    }
    if (w > 0) used += (size_t)w < cap - used ? (size_t)w : cap - used - 1;
  }
}

int opencl_pick_platform(const opencl_device_desc_t *list, size_t n, const opencl_select_t *sel) {
  if (sel->platform < 0 && !sel->platform_name[0])
    for (size_t i = 0; i < n; ++i)
      if (strcmp(list[i].type, "gpu") == 0) return list[i].platform;
  for (size_t i = 0; i < n; ++i) {
    if (sel->platform >= 0 ? list[i].platform == sel->platform
                           : strstr(list[i].platform_name, sel->platform_name) != NULL)
      return list[i].platform;
  }
  return -1;
}

/* The platform of sel among the devices list[0..n) (an error lists those there are). */
static tsr_status opencl_context_platform(const opencl_device_desc_t *list, size_t n,
                                          const opencl_select_t *sel, int *out,
                                          tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char known[1024];
  int platform = opencl_pick_platform(list, n, sel);
  if (platform < 0) {
    opencl_describe(list, n, -1, known, sizeof known);
    if (sel->platform >= 0)
      TSR_FAIL(TSR_ERR_INVALID,
               "OpenCL platform %d does not exist or has no device; platforms with devices: %s",
               sel->platform, known);
    TSR_FAIL(TSR_ERR_INVALID,
             "no OpenCL platform name contains \"%s\"; platforms with devices: %s",
             sel->platform_name, known);
  }
  *out = platform;
cleanup:
  return st;
}

/* The device of sel on platform among the devices list[0..n) (an error lists those of
 * the platform). */
static tsr_status opencl_context_pick(const opencl_device_desc_t *list, size_t n,
                                      const opencl_select_t *sel, int platform,
                                      const opencl_device_desc_t **out, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char known[1024];
  const opencl_device_desc_t *pick = NULL;
  for (size_t i = 0; i < n && !pick; ++i) {
    if (list[i].platform != platform) continue;
    if (sel->device >= 0 ? list[i].device == sel->device
                         : strstr(list[i].name, sel->device_name) != NULL)
      pick = &list[i];
  }
  if (!pick) {
    opencl_describe(list, n, platform, known, sizeof known);
    const char *pname = "";
    for (size_t i = 0; i < n; ++i)
      if (list[i].platform == platform) pname = list[i].platform_name;
    if (sel->device >= 0)
      TSR_FAIL(TSR_ERR_INVALID, "OpenCL device %d does not exist on platform %d (%s); its devices: %s",
               sel->device, platform, pname, known);
    TSR_FAIL(TSR_ERR_INVALID,
             "no OpenCL device name on platform %d (%s) contains \"%s\"; its devices: %s",
             platform, pname, sel->device_name, known);
  }
  *out = pick;
cleanup:
  return st;
}

/* The OpenCL ids of the picked device (c->device) and of its platform (*out). */
static tsr_status opencl_context_ids(opencl_context_t *c, int platform,
                                     const opencl_device_desc_t *pick, cl_platform_id *out,
                                     tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_platform_id *plats = NULL;
  cl_device_id *devs = NULL;
  cl_uint nplat = 0;
  OPENCL_CHECK(clGetPlatformIDs(0, NULL, &nplat));
  plats = calloc(nplat, sizeof *plats);
  TSR_CHECK(plats, TSR_ERR_NOMEM, "out of memory listing OpenCL platforms");
  OPENCL_CHECK(clGetPlatformIDs(nplat, plats, NULL));
  TSR_CHECK((cl_uint)platform < nplat, TSR_ERR_OPENCL, "OpenCL platform %d disappeared", platform);
  cl_uint ndev = 0;
  OPENCL_CHECK(clGetDeviceIDs(plats[platform], CL_DEVICE_TYPE_ALL, 0, NULL, &ndev));
  TSR_CHECK((cl_uint)pick->device < ndev, TSR_ERR_OPENCL,
            "OpenCL device %d of platform %d disappeared", pick->device, platform);
  devs = calloc(ndev, sizeof *devs);
  TSR_CHECK(devs, TSR_ERR_NOMEM, "out of memory listing OpenCL devices");
  OPENCL_CHECK(clGetDeviceIDs(plats[platform], CL_DEVICE_TYPE_ALL, ndev, devs, NULL));
  c->device = devs[pick->device];
  *out = plats[platform];
cleanup:
  free(plats);
  free(devs);
  return st;
}

/* The context of c's device on platform and its two command queues. */
static tsr_status opencl_context_queues(opencl_context_t *c, cl_platform_id platform,
                                        const opencl_device_desc_t *pick, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  cl_int rc = CL_SUCCESS;
  const cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                         (cl_context_properties)platform, 0};
  c->context = clCreateContext(props, 1, &c->device, NULL, NULL, &rc);
  TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "clCreateContext for %s failed: %s (%d)",
            pick->name, opencl_error_name(rc), (int)rc);
  c->queue = clCreateCommandQueue(c->context, c->device, 0, &rc);
  TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "clCreateCommandQueue for %s failed: %s (%d)",
            pick->name, opencl_error_name(rc), (int)rc);
  c->transfer = clCreateCommandQueue(c->context, c->device, 0, &rc);
  TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "clCreateCommandQueue (transfers) for %s failed: "
            "%s (%d)", pick->name, opencl_error_name(rc), (int)rc);
cleanup:
  return st;
}

tsr_status opencl_context_create(const opencl_select_t *sel, opencl_context_t **out,
                                 tsr_error_t *err) {
  tsr_status st = TSR_OK;
  opencl_device_desc_t *list = NULL;
  size_t n = 0;
  opencl_context_t *c = NULL;
  *out = NULL;
  TSR_TRY(opencl_list_devices(&list, &n, err));
  TSR_CHECK(n > 0, TSR_ERR_INVALID,
            "no OpenCL device found: no platform with a device is installed (on Debian, "
            "pocl-opencl-icd gives a CPU device; GPU vendors ship their own ICD)");
  int platform = -1;
  TSR_TRY(opencl_context_platform(list, n, sel, &platform, err));
  const opencl_device_desc_t *pick = NULL;
  TSR_TRY(opencl_context_pick(list, n, sel, platform, &pick, err));
  c = calloc(1, sizeof *c);
  TSR_CHECK(c, TSR_ERR_NOMEM, "out of memory for an OpenCL context");
  c->desc = *pick;
  cl_platform_id platform_id = NULL;
  TSR_TRY(opencl_context_ids(c, platform, pick, &platform_id, err));
  TSR_TRY(opencl_context_queues(c, platform_id, pick, err));
  *out = c;
  c = NULL;
cleanup:
  opencl_context_free(&c);
  free(list);
  return st;
}

void opencl_context_free(opencl_context_t **ctx) {
  if (!ctx || !*ctx) return;
  opencl_context_t *c = *ctx;
  if (c->transfer) {
    clFinish(c->transfer);
    clReleaseCommandQueue(c->transfer);
  }
  if (c->queue) {
    clFinish(c->queue);
    clReleaseCommandQueue(c->queue);
  }
  if (c->context) clReleaseContext(c->context);
  free(c);
  *ctx = NULL;
}

const opencl_device_desc_t *opencl_context_desc(const opencl_context_t *ctx) { return &ctx->desc; }
void *opencl_context_cl(const opencl_context_t *ctx) { return ctx->context; }
void *opencl_context_device(const opencl_context_t *ctx) { return ctx->device; }
void *opencl_context_queue(const opencl_context_t *ctx) { return ctx->queue; }
void *opencl_context_transfer_queue(const opencl_context_t *ctx) { return ctx->transfer; }

/* With TESSERA_CL_BINARIES set to a folder, the device binary of program p (PTX text on
 * NVIDIA, an ELF object on PoCL) into <folder>/<what>-<hash of the options>.bin, written
 * whole under a temporary name first, and a line "<file> <device> <options>" appended to
 * <folder>/index.txt: the registers and spills of the kernels can then be read on
 * another machine (ptxas -v). A binary that cannot be written is an error. */
static tsr_status opencl_dump_binary(const opencl_context_t *ctx, cl_program p, const char *what,
                                     const char *options, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const char *dir = getenv("TESSERA_CL_BINARIES");
  unsigned char *bin = NULL;
  FILE *fp = NULL;
  if (!dir || !dir[0]) return TSR_OK;
  size_t size = 0;
  cl_int rc = clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL);
  TSR_CHECK(rc == CL_SUCCESS && size > 0, TSR_ERR_OPENCL,
            "TESSERA_CL_BINARIES: the binary of %s: clGetProgramInfo failed: %s", what,
            opencl_error_name(rc));
  bin = malloc(size);
  TSR_CHECK(bin, TSR_ERR_NOMEM, "TESSERA_CL_BINARIES: out of memory for the binary of %s", what);
  rc = clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
  TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "TESSERA_CL_BINARIES: the binary of %s: %s", what,
            opencl_error_name(rc));
  uint32_t h = 2166136261u; /* FNV-1a of the options: one file per program */
  for (const char *c = options ? options : ""; *c; ++c) h = (h ^ (unsigned char)*c) * 16777619u;
  char name[256], path[4096], tmp[4200];
  snprintf(name, sizeof name, "%s", what);
  for (char *c = name; *c; ++c)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
          *c == '.' || *c == '-'))
      *c = '_';
  snprintf(path, sizeof path, "%s/%s-%08x.bin", dir, name, (unsigned)h);
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()); /* ranks write alike */
  fp = fopen(tmp, "wb");
  TSR_CHECK(fp, TSR_ERR_IO, "TESSERA_CL_BINARIES: cannot write %s (does the folder %s exist?)",
            tmp, dir);
  const bool ok = fwrite(bin, 1, size, fp) == size;
  const bool closed = fclose(fp) == 0;
  fp = NULL;
  TSR_CHECK(ok && closed && rename(tmp, path) == 0, TSR_ERR_IO,
            "TESSERA_CL_BINARIES: cannot write %s", path);
  snprintf(tmp, sizeof tmp, "%s/index.txt", dir);
  fp = fopen(tmp, "a");
  TSR_CHECK(fp && fprintf(fp, "%s-%08x.bin %s %s\n", name, (unsigned)h, ctx->desc.name,
                          options ? options : "") > 0,
            TSR_ERR_IO, "TESSERA_CL_BINARIES: cannot append to %s", tmp);
cleanup:
  if (fp) fclose(fp);
  free(bin);
  return st;
}

tsr_status opencl_build_program(opencl_context_t *ctx, const char *source, const char *options,
                                const char *what, void **program, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char *log = NULL;
  cl_int rc = CL_SUCCESS;
  *program = NULL;
  cl_program p = clCreateProgramWithSource(ctx->context, 1, &source, NULL, &rc);
  TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "clCreateProgramWithSource (%s) failed: %s (%d)",
            what, opencl_error_name(rc), (int)rc);
  rc = clBuildProgram(p, 1, &ctx->device, options ? options : "", NULL, NULL);
  if (rc != CL_SUCCESS) {
    size_t len = 0;
    clGetProgramBuildInfo(p, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
    log = calloc(len + 1, 1);
    if (log) clGetProgramBuildInfo(p, ctx->device, CL_PROGRAM_BUILD_LOG, len, log, NULL);
    TSR_FAIL(TSR_ERR_OPENCL, "building %s for %s (options \"%s\") failed: %s (%d); build log:\n%s",
             what, ctx->desc.name, options ? options : "", opencl_error_name(rc), (int)rc,
             log && log[0] ? log : "(empty)");
  }
  TSR_TRY(opencl_dump_binary(ctx, p, what, options, err));
  *program = p;
  p = NULL;
cleanup:
  if (p) clReleaseProgram(p);
  free(log);
  return st;
}

tsr_status opencl_launch(opencl_context_t *ctx, void *kernel, int dims, const size_t *global,
                         const size_t *local, const char *what, tsr_error_t *err) {
  return opencl_launch_at(ctx, kernel, dims, NULL, global, local, what, err);
}

tsr_status opencl_launch_at(opencl_context_t *ctx, void *kernel, int dims, const size_t *offset,
                            const size_t *global, const size_t *local, const char *what,
                            tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const cl_int rc = clEnqueueNDRangeKernel(ctx->queue, (cl_kernel)kernel, (cl_uint)dims, offset,
                                           global, local, 0, NULL, NULL);
  TSR_CHECK(rc == CL_SUCCESS, TSR_ERR_OPENCL, "enqueueing kernel %s on %s failed: %s (%d)", what,
            ctx->desc.name, opencl_error_name(rc), (int)rc);
  ctx->counts.launches++;
cleanup:
  return st;
}

tsr_status opencl_launch_items(opencl_context_t *ctx, void *kernel, size_t n, const char *what,
                               tsr_error_t *err) {
  tsr_status st = TSR_OK;
  size_t most = OPENCL_ITEMS_GROUP;
  OPENCL_CHECK(clGetKernelWorkGroupInfo((cl_kernel)kernel, ctx->device, CL_KERNEL_WORK_GROUP_SIZE,
                                        sizeof most, &most, NULL));
  const size_t local = most < OPENCL_ITEMS_GROUP ? most : OPENCL_ITEMS_GROUP;
  const size_t global = (n + local - 1) / local * local;
  if (global > 0) TSR_TRY(opencl_launch(ctx, kernel, 1, &global, &local, what, err));
cleanup:
  return st;
}

opencl_counts_t opencl_context_counts(const opencl_context_t *ctx) { return ctx->counts; }

void opencl_count_transfer(opencl_context_t *ctx, int to_device, size_t bytes) {
  if (to_device) {
    ctx->counts.writes++;
    ctx->counts.bytes_written += (int64_t)bytes;
  } else {
    ctx->counts.reads++;
    ctx->counts.bytes_read += (int64_t)bytes;
  }
}

void opencl_program_release(void *program) {
  if (program) clReleaseProgram((cl_program)program);
}

static double opencl_mib(uint64_t b) { return (double)b / (1024.0 * 1024.0); }

tsr_status opencl_check_memory(const opencl_context_t *ctx, uint64_t bytes, uint64_t largest,
                               const char *what, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  TSR_CHECK(bytes <= ctx->desc.global_mem_bytes, TSR_ERR_INVALID,
            "%s needs %.1f MiB of device memory, but %s has %.1f MiB", what, opencl_mib(bytes),
            ctx->desc.name, opencl_mib(ctx->desc.global_mem_bytes));
  TSR_CHECK(largest <= ctx->desc.max_alloc_bytes, TSR_ERR_INVALID,
            "%s needs one device buffer of %.1f MiB, but %s allows at most %.1f MiB per buffer",
            what, opencl_mib(largest), ctx->desc.name, opencl_mib(ctx->desc.max_alloc_bytes));
cleanup:
  return st;
}
