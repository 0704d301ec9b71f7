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
