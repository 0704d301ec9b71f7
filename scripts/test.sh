#!/usr/bin/env bash
# The whole test suite: installs what is missing, then builds and runs every test twice:
# a Release build with warnings as errors, and a Debug build with AddressSanitizer and
# UndefinedBehaviorSanitizer; then, on x86-64, the CPU kernels and their tests cross-built
# for aarch64 and run under qemu-user (scripts/cross-check.sh). Usage: scripts/test.sh
# [ctest args...] (for the first two)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)

echo "== Release build, warnings as errors (build/)"
scripts/build.sh build
ctest --test-dir build -j "$jobs" --output-on-failure "$@"

echo "== ASan + UBSan build (build-asan/)"
scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DTESSERA_SANITIZE=ON
ctest --test-dir build-asan -j "$jobs" --output-on-failure "$@"

if [ "$(uname -m)" = x86_64 ]; then
  echo "== aarch64 cross build of the CPU kernels, their tests under qemu-user (build-aarch64/)"
  scripts/cross-check.sh build-aarch64
fi
