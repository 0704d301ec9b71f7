#!/usr/bin/env bash
# Builds the CPU kernels and their tests for 64-bit ARM (aarch64) with Debian's cross
# compiler and runs the tests under qemu-user: the portable code path (GCC vector types
# as NEON registers) computes what the kernel tests demand, bitwise where they demand
# it. Installs what is missing (Debian 12, as root: the arm64 architecture for
# libcmocka-dev:arm64, gcc-aarch64-linux-gnu, qemu-user).
# Usage: scripts/cross-check.sh [BUILD_DIR]   (default: build-aarch64)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-aarch64}
need=()
command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
[ -e /usr/lib/aarch64-linux-gnu/pkgconfig/cmocka.pc ] || need+=(libcmocka-dev:arm64)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "cross-check: missing ${need[*]}; run as root to install them" >&2
    exit 1
  fi
  dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
cmake -S . -B "$dir" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DTESSERA_KERNELS_ONLY=ON \
  -DCMAKE_BUILD_TYPE=Release -DTESSERA_WERROR=ON >/dev/null
cmake --build "$dir" -j "$(nproc)"
ctest --test-dir "$dir" --output-on-failure
