#!/usr/bin/env bash
# Configures and builds tessera. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# Default: build/, Release, warnings as errors.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DTESSERA_WERROR=ON "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)"
