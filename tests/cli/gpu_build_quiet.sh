#!/usr/bin/env bash
# Building the OpenCL programs says nothing of its own: runs of every module on GPU
# processes (the flow with walls, ramps and curved walls, D3Q27 in single precision,
# Shan-Chen with temperature, the passive scalar, D2Q37), each with an empty PoCL
# kernel cache (so that every program is compiled), print no compiler line such as
# "1 warning generated." (a vector argument's ABI warning made PoCL print one on every
# build). Usage: gpu_build_quiet.sh TESSERA WORKDIR, from the source tree.
set -euo pipefail
tessera=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
export OMP_NUM_THREADS=1
for config in tests/configs/run_small_cavity_gpu.json tests/configs/inlet/ramp_gpu_mixed.json \
  tests/configs/curved/sphere_d3q27_sp_gpu_mixed.json tests/configs/shan_chen/thermal_gpu_mixed.json \
  tests/cli/cluster_cavity.json tests/configs/d2q37/walls_gpu_mixed.json; do
  name=$(basename "$config" .json)
  mkdir -p "$work/cache_$name"
  # the scalar's case names its nodes: one process of its GPU node
  ranks=2 node=()
  if [[ $name == cluster_cavity ]]; then ranks=1 node=(-x TESSERA_NODE_NAME=tessera-node1); fi
  if ! POCL_CACHE_DIR=$work/cache_$name mpirun -np $ranks --oversubscribe "${node[@]}" "$tessera" \
    run "$config" --steps 2 --output "$work/$name" >"$work/$name.out" 2>"$work/$name.err"; then
    echo "FAIL: $config: $(cat "$work/$name.err")" >&2
    exit 1
  fi
  if grep -Ev "^tessera: warning: " "$work/$name.err" | grep -q .; then
    echo "FAIL: $config printed beside tessera's own lines:" >&2
    grep -Ev "^tessera: warning: " "$work/$name.err" >&2
    exit 1
  fi
  echo "ok: $config"
done
