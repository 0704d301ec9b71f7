# Finds the external dependencies; a missing one stops the configure step with
# the Debian package that provides it.
find_package(PkgConfig QUIET)
if(NOT PkgConfig_FOUND)
  message(FATAL_ERROR "pkg-config not found: install the Debian package 'pkg-config' "
                      "(or run scripts/install-deps.sh)")
endif()

if(NOT TESSERA_KERNELS_ONLY)
find_package(MPI COMPONENTS C QUIET)
if(NOT MPI_C_FOUND)
  message(FATAL_ERROR "MPI (C bindings) not found: install the Debian packages "
                      "'libopenmpi-dev openmpi-bin' (or run scripts/install-deps.sh)")
endif()

find_package(OpenCL QUIET)
if(NOT OpenCL_FOUND)
  message(FATAL_ERROR "OpenCL not found: install the Debian packages "
                      "'ocl-icd-opencl-dev opencl-headers' and, for a CPU device, "
                      "'pocl-opencl-icd' (or run scripts/install-deps.sh)")
endif()

endif()

find_package(OpenMP COMPONENTS C QUIET)
if(NOT OpenMP_C_FOUND)
  message(FATAL_ERROR "OpenMP not found: install the Debian package 'libgomp1' "
                      "(part of gcc) or use a compiler with OpenMP support")
endif()

if(NOT TESSERA_KERNELS_ONLY)
pkg_check_modules(JANSSON QUIET IMPORTED_TARGET jansson)
if(NOT JANSSON_FOUND)
  message(FATAL_ERROR "Jansson not found: install the Debian package 'libjansson-dev' "
                      "(or run scripts/install-deps.sh)")
endif()

pkg_check_modules(LIBPNG QUIET IMPORTED_TARGET libpng)
if(NOT LIBPNG_FOUND)
  message(FATAL_ERROR "libpng not found: install the Debian package 'libpng-dev' "
                      "(or run scripts/install-deps.sh)")
endif()

endif()

if(TESSERA_TESTS)
  pkg_check_modules(CMOCKA QUIET IMPORTED_TARGET cmocka)
  if(NOT CMOCKA_FOUND)
    message(FATAL_ERROR "cmocka not found: install the Debian package 'libcmocka-dev' "
                        "(or run scripts/install-deps.sh), or configure with -DTESSERA_TESTS=OFF")
  endif()
endif()
