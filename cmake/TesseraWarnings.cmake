# Compiler flags shared by every tessera target.
add_library(tessera_flags INTERFACE)
target_compile_options(tessera_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
  -Wformat=2 -Wvla -Wno-unused-parameter)
if(TESSERA_WERROR)
  target_compile_options(tessera_flags INTERFACE -Werror)
endif()
if(TESSERA_SANITIZE)
  target_compile_options(tessera_flags INTERFACE
    -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(tessera_flags INTERFACE -fsanitize=address,undefined)
endif()
if(TESSERA_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TESSERA_FUZZ needs clang: configure with CC=clang "
                        "(Debian packages 'clang' and 'libclang-rt-14-dev')")
  endif()
  target_compile_options(tessera_flags INTERFACE
    -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  target_link_options(tessera_flags INTERFACE -fsanitize=address,undefined)
endif()

# tessera_sanitizer_support(target): in sanitizer builds, links tests/support/keep_plugins.c
# into an executable so LeakSanitizer can attribute the allocations that Open MPI and
# OpenCL plugins keep until exit (see that file).
function(tessera_sanitizer_support target)
  if(TESSERA_SANITIZE)
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support/keep_plugins.c)
  endif()
endfunction()
