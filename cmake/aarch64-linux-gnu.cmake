# Cross build for 64-bit ARM Linux with Debian's cross compiler (gcc-aarch64-linux-gnu),
# run under qemu-user (the kernels and their tests: -DTESSERA_KERNELS_ONLY=ON; see
# scripts/cross-check.sh).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
# Debian's cross libraries (libgomp) live in /usr/aarch64-linux-gnu, multiarch ones
# (libc6:arm64, libcmocka:arm64) in /usr/lib/aarch64-linux-gnu. One OpenMP thread: under
# Debian 12's qemu-user (7.2) a parallel region of two threads never returns, even one of
# four lines (a libgomp thread start that qemu does not complete), while the same binary
# with one thread runs the kernels' tests in a second.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib
                                  -E OMP_NUM_THREADS=1)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
