#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs tessera on 2 MPI ranks:
# `tessera info`, then the ghost-exchange demo on configs/exchange.json.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
mpirun_args=(-np 2)
if [[ $(id -u) -eq 0 ]]; then
  # Open MPI refuses to run as root unless told so; this machine runs as root.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
if [[ $(nproc) -lt 2 ]]; then mpirun_args+=(--oversubscribe); fi
mpirun "${mpirun_args[@]}" build/apps/tessera info
mpirun "${mpirun_args[@]}" build/apps/tessera exchange-demo configs/exchange.json
