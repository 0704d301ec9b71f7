#!/usr/bin/env bash
# The plan's model against the measured step: `tessera bench --config` with the
# throughputs calibrated (hardware.balance.calibrate) on the benchmark cases of this
# machine: the periodic 128^3 box of configs/bench_box.json (D3Q19 TRT DP) in 1, 8 and
# 64 blocks, on 1 process of 2 threads and on 2 processes of 1 thread, on the OpenCL
# device (PoCL here) in 1 and 8 blocks, and the coupled flow and temperature. Prints one
# markdown row per case: predicted and measured ms per step and their ratio.
#   scripts/model-check.sh [BUILD_DIR] [STEPS]
set -euo pipefail
build=${1:-build}
steps=${2:-20}
tessera=$build/apps/tessera
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
coupled=$(mktemp --suffix=.json)
trap 'rm -f "$coupled"' EXIT
cat > "$coupled" <<'JSON'
{
  "modules": ["lbm", "thermal"],
  "domain": { "cells": [128, 64, 128], "blocks": [1, 1, 1], "periodic": [true, false, true] },
  "steps": 100,
  "lbm": { "lattice": "d3q19", "collision": "trt", "precision": "dp", "viscosity": 0.04 },
  "thermal": { "rayleigh": 20000, "prandtl": 0.71, "perturbation": 0.05, "axis": "y" },
  "output": { "progress_every": 0 }
}
JSON
row() { # name ranks threads config blocks [more --set]
  local name=$1 np=$2 th=$3 cfg=$4 blocks=$5
  shift 5
  local out
  out=$(OMP_NUM_THREADS=$th mpirun --oversubscribe --bind-to none -np "$np" "$tessera" bench \
        --config "$cfg" --set "domain.blocks=$blocks" --set hardware.balance.calibrate=true \
        "$@" --steps "$steps" --repeat 3 2>&1)
  echo "$out" | sed -n 's/^step: predicted \([0-9.]*\) ms .*measured \([0-9.]*\) ms .*predicted \/ measured \([0-9.]*\)$/| '"$name"' | \1 | \2 | \3 |/p'
}
echo "| case | predicted ms | measured ms | predicted / measured |"
echo "|---|---|---|---|"
row "CPU, 1 process x 2 threads, 1 block of 128^3" 1 2 configs/bench_box.json '[1,1,1]'
row "CPU, 1 process x 2 threads, 8 blocks of 64^3" 1 2 configs/bench_box.json '[2,2,2]'
row "CPU, 1 process x 2 threads, 64 blocks of 32^3" 1 2 configs/bench_box.json '[4,4,4]'
row "CPU, 2 processes x 1 thread, 2 blocks" 2 1 configs/bench_box.json '[1,1,2]'
row "CPU, 2 processes x 1 thread, 8 blocks" 2 1 configs/bench_box.json '[2,2,2]'
row "CPU, 2 processes x 1 thread, 64 blocks" 2 1 configs/bench_box.json '[4,4,4]'
row "coupled D3Q19 + D3Q7, 1 process x 2 threads, 1 block" 1 2 "$coupled" '[1,1,1]'
row "OpenCL device, 1 process, 1 block of 64^3" 1 2 configs/bench_box.json '[1,1,1]' \
    --set 'domain.cells=[64,64,64]' --set 'hardware.hs="gpu"'
row "OpenCL device, 1 process, 8 blocks of 32^3" 1 2 configs/bench_box.json '[2,2,2]' \
    --set 'domain.cells=[64,64,64]' --set 'hardware.hs="gpu"'
