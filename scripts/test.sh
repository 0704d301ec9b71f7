#!/usr/bin/env bash
# The whole test suite: installs what is missing, then builds and runs every test twice:
# a Release build with warnings as errors, and a Debug build with AddressSanitizer and
# UndefinedBehaviorSanitizer. Usage: scripts/test.sh [ctest args...]
# (scripts/cross-check.sh runs the CPU kernels' tests for aarch64 under qemu-user; it is
# not part of this suite, which stays under 20 minutes on 2 cores)
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
