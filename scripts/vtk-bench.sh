#!/usr/bin/env bash
# The cost of one VTK output step of the whole domain (output.vtk_files "one", written by
# all processes together through MPI-IO) against the disk: a 256^3 D3Q19 DP cavity in 8
# blocks on 2 processes writes density, velocity and flags at steps 0, 1 and 2 (33 bytes a
# cell: 554 MB in float64, 286 MB in float32), interleaved, round by round, with dd writing
# the same bytes to the same folder (O_DIRECT, 16 MB requests: the disk's sequential
# bandwidth). A write counts until the file is synced and renamed ("VTK of step N written
# in T s"). The rate is that of step 2, with the writer's buffers warm as at every output
# step of a run but its first; step 0's time (cold: the buffers' first touch) is printed
# beside it. Prints each round and the medians of the rates and of the per-round ratios
# (tessera's rate / dd's).
# Usage: scripts/vtk-bench.sh [ROUNDS [BUILD_DIR [FOLDER [CELLS]]]] (defaults 5, build/, a
# folder under build/, 256). About 5 GB of memory and 1.2 GB free on FOLDER's disk; about
# 30 s a round here. Don't run it beside other work.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
build=$(realpath "${2:-build}")
work=${3:-$build/vtk-bench}
n=${4:-256}
mkdir -p "$work"
work=$(realpath "$work")
trap 'rm -rf "$work"/o64 "$work"/o32 "$work"/o64.log "$work"/o32.log "$work"/dd.bin' EXIT
cat > "$work/cavity.json" <<JSON
{ "domain": { "cells": [$n, $n, $n], "blocks": [2, 2, 2] },
  "boundaries": { "y+": { "kind": "moving", "velocity": [0.05, 0, 0] } },
  "steps": 2, "lbm": { "lattice": "d3q19", "precision": "dp", "viscosity": 0.05 },
  "output": { "vtk_every": 1, "progress_every": 1, "quantities": ["density", "velocity", "flags"] } }
JSON
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
. scripts/bench-common.sh
# a run's VTK writes: step 2's seconds, the file's bytes, step 0's seconds
vtk() {
  rm -rf "$work/$1"
  mpirun --oversubscribe -np 2 "$build/apps/tessera" run "$work/cavity.json" --output "$work/$1" \
    --set "output.vtk_precision=\"$2\"" > "$work/$1.log"
  echo "$(sed -n 's/^VTK of step 2 written in \([0-9.]*\) s/\1/p' "$work/$1.log")" \
       "$(stat -c %s "$work/$1/fields_000002.vti")" \
       "$(sed -n 's/^VTK of step 0 written in \([0-9.]*\) s/\1/p' "$work/$1.log")"
}
# dd's rate writing that many bytes, MB/s
dd_rate() {
  local count=$(( ($1 + 16777215) / 16777216 )) s
  s=$(dd if=/dev/zero of="$work/dd.bin" bs=16M count="$count" oflag=direct 2>&1 | awk 'END { print $(NF-3) }')
  rm -f "$work/dd.bin"
  awk -v b="$((count * 16777216))" -v s="$s" 'BEGIN { printf "%.1f", b / s / 1e6 }'
}
echo "round, dd MB/s, float64 MB/s, ratio, dd MB/s, float32 MB/s, ratio, float64 s, float32 s, float64 s cold, float32 s cold"
rows=()
for r in $(seq "$rounds"); do
  read -r t64 b64 c64 < <(vtk o64 float64)
  d64=$(dd_rate "$b64")
  read -r t32 b32 c32 < <(vtk o32 float32)
  d32=$(dd_rate "$b32")
  row=$(awk -v r="$r" -v t64="$t64" -v b64="$b64" -v d64="$d64" -v t32="$t32" -v b32="$b32" -v d32="$d32" -v c64="$c64" -v c32="$c32" \
        'BEGIN { a = b64 / t64 / 1e6; c = b32 / t32 / 1e6
                 printf "%d, %.1f, %.1f, %.2f, %.1f, %.1f, %.2f, %.2f, %.2f, %.2f, %.2f", r, d64, a, a / d64, d32, c, c / d32, t64, t32, c64, c32 }')
  echo "$row"
  rows+=("$row")
done
col() { printf '%s\n' "${rows[@]}" | cut -d, -f"$1" | median_of_lines; }
echo "median, $(col 2), $(col 3), $(col 4), $(col 5), $(col 6), $(col 7), $(col 8), $(col 9), $(col 10), $(col 11)   ($b64 and $b32 bytes; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
