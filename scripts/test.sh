#!/usr/bin/env bash
# The whole test suite: installs what is missing, then builds and runs every test twice:
# a Release build with warnings as errors, and a Debug build with AddressSanitizer and
# UndefinedBehaviorSanitizer; as root, the Release build's bundle is tested in a minimal
# Debian root too (scripts/bundle-test.sh, about 20 s; it downloads that root from
# Debian's mirror). Usage: scripts/test.sh [ctest args...]
# (scripts/cross-check.sh runs the CPU kernels' tests for aarch64 under qemu-user; it is
# not part of this suite, which stays under 30 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)

echo "== Release build, warnings as errors (build/)"
scripts/build.sh build
ctest --test-dir build -j "$jobs" --output-on-failure "$@"

if [[ $(id -u) -eq 0 ]]; then
  echo "== the bundle in a minimal Debian root (scripts/bundle-test.sh)"
  scripts/bundle-test.sh --build build
else
  echo "== the bundle test needs root (chroot): skipped; run scripts/bundle-test.sh as root"
fi

echo "== ASan + UBSan build (build-asan/)"
# the CPU kernels once, for this machine (TESSERA_NATIVE): the sanitizers check the code,
# and the per-level dispatch is the Release build's to test; it halves the build's time.
# Line tables only (-g1): all the sanitizers' reports need (file and line of every
# frame); full debug information doubled the time of the kernels' compilation (the D3Q27
# kernels: 131 s against 71 s) and made up half of this build's. -O1 (the kernels: -O2
# always): AddressSanitizer's advice for a usable speed; at -O0 the instrumented framework
# code made this suite take twice the Release one's time.
scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DTESSERA_SANITIZE=ON -DTESSERA_NATIVE=ON \
  "-DCMAKE_C_FLAGS_DEBUG=-g1 -O1"
ctest --test-dir build-asan -j "$jobs" --output-on-failure "$@"
