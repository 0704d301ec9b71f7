#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs on 2 MPI ranks `tessera info`
# and the 3-D lid-driven cavity (configs/cavity.json): progress lines, then a summary,
# also written to out/cavity/summary.json, with PNG slices and VTK files there (see the
# README). Run again, it replaces the output of its last run there (--overwrite).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
ranks=2
mpirun_args=(-np "$ranks" --bind-to none)
if [[ $(id -u) -eq 0 ]]; then
  # Open MPI refuses to run as root unless told so; this machine runs as root.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
cores=$(nproc)
if [[ $cores -lt $ranks ]]; then mpirun_args+=(--oversubscribe); fi
# the cores are shared out between the ranks' OpenMP teams
threads=$(( cores / ranks > 0 ? cores / ranks : 1 ))
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$threads}
mpirun "${mpirun_args[@]}" build/apps/tessera info
mpirun "${mpirun_args[@]}" build/apps/tessera run configs/cavity.json --overwrite
