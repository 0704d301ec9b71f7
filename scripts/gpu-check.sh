#!/usr/bin/env bash
# The checks and benchmarks of a GPU node, into one report file:
#   1. `tessera info` on every rank (the OpenCL platforms each process sees: a process
#      started by mpirun may see another list than the shell);
#   2. the `gpu` tests of the build (ctest -L gpu), where a build tree is given, or the
#      test programs of a bundle (--tests: scripts/bundle.sh's list);
#   3. `tessera bench` on the GPU: D3Q19, SRT, SP and DP, 1, 8, 64 and 512 blocks of one
#      256^3 process (one 256^3 block; 64 of 64^3; 512 of 32^3), two grids and in place,
#      against the device's copy bandwidth measured in the same run; the CPU rows at
#      64^3 (quick); then 16-bit storage (fp16s, fp16c) beside SP, one block;
#   4. the work-group shapes of the LBM kernels (bench --gpu-group) against the rule;
#   5. `tessera bench --hetero`: 1 GPU process and a CPU process on every other core,
#      one domain, against CPU alone and GPU alone;
#   6. flows past bodies: the DFG cylinder (configs/cylinder_2d.json) on one GPU process
#      as one block, 20000 steps: the boundary phase (walls, inlet, outlet, the cylinder's
#      interpolated links and force) against the step, as `tessera run` prints it;
#   7. the d2q37 model on the GPU: the device's FMA peak (tessera bench --fma, DP and SP),
#      then a periodic 2048^2 box in DP and SP, fused and split (d2q37.kernel), and the
#      Rayleigh-Taylor showcase at Calore et al.'s size (2048 x 4096, DP, walls) through
#      tessera bench --config; GFLOPS = MLUPS x 952 operations per update (counted by
#      scripts/d2q37-bench.sh);
#   8. the overlapped step on the GPU: 2 processes sharing the device, the periodic
#      D3Q19 box of configs/bench_box.json at N^3 (N = --gpu-cells), 64 blocks each, the
#      exchange overlapped and not, alternating (bench --overlap both): the exchange's
#      share of the step; then the d2q37 showcase the same way on 2 processes;
#   9. the plan's model on the GPU: the same box on one GPU process, 1, 8 and 64 blocks,
#      calibrated, the predicted step against the measured one;
#  (every OpenCL program built on the way is written beside the report, into
#      <report>-binaries/, as the device's binary: PTX on NVIDIA, index.txt lists the build
#      options of each; `ptxas -v -arch=sm_90 FILE` reads registers and spills from it);
#  10. what outputs cost on the GPU: configs/cavity.json at (N/2)^3 as one block on one GPU
#      process, 2000 steps at its output intervals, as it is, with every derived quantity
#      in its VTK files and slice, and with the statistics of velocity and pressure at
#      statistics.every's default, 3 interleaved rounds of whole-run wall seconds (the
#      targets: derived and statistics each <= 1.05 of the plain run).
# Usage: scripts/gpu-check.sh [--build DIR] [--tessera PATH] [--tests FILE] [--report FILE]
#        [--gpu-cells N] [--cpu-processes P] [--sections LIST | --quick]
#        [--fluidx3d DIR] [--fluidx3d-fp16s DIR]
# defaults: --build build, tessera of that build, report gpu-check-<host>-<date>.txt,
# 256, P = cores - 1, every section in the order above. --sections runs the named ones in
# the order given (comma-separated: info, tests, bench, fluidx3d, groups, hetero, cylinder,
# d2q37, overlap, model, outputs; --quick: info, tests, bench, fluidx3d, hetero, cylinder,
# model, the issue's prepared run; fluidx3d: scripts/peer-bench/fluidx3d.sh --no-build
# on FluidX3D benchmarks built beforehand with --build-only, FP32 (--fluidx3d) and
# FP16S (--fluidx3d-fp16s), each against tessera in the same storage, skipped without;
# the machine's description always comes first), e.g. the newest first when the node's
# time is short. Runs as root where it must (Open MPI's OMPI_ALLOW_RUN_AS_ROOT).
set -uo pipefail
cd "$(dirname "$0")/.."
build=build
tessera=""
report=""
tests=""
gcells=256
cpus=$(( $(nproc) - 1 ))
sections=info,tests,bench,groups,hetero,cylinder,d2q37,overlap,model,outputs
fluidx3d=""
fluidx3d16=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --tessera) tessera=$2; shift 2 ;;
    --report) report=$2; shift 2 ;;
    --tests) tests=$2; shift 2 ;;
    --gpu-cells) gcells=$2; shift 2 ;;
    --cpu-processes) cpus=$2; shift 2 ;;
    --sections) sections=$2; shift 2 ;;
    --quick) sections=info,tests,bench,fluidx3d,hetero,cylinder,model; shift ;;
    --fluidx3d) fluidx3d=$2; shift 2 ;;
    --fluidx3d-fp16s) fluidx3d16=$2; shift 2 ;;
    *) echo "gpu-check.sh: unknown argument $1 (see the head of this script)" >&2; exit 2 ;;
  esac
done
[ -n "$tessera" ] || tessera=$build/apps/tessera
if [ ! -x "$tessera" ]; then
  echo "gpu-check.sh: no tessera at $tessera (build first: scripts/build.sh $build)" >&2
  exit 2
fi
[ "$cpus" -ge 1 ] || cpus=1
[ -n "$report" ] || report="gpu-check-$(hostname)-$(date +%Y%m%d-%H%M).txt"
# every OpenCL program the runs build, as the device's binary (PTX on NVIDIA), beside the
# report: registers and spills read later with the CUDA toolkit (ptxas -v)
export TESSERA_CL_BINARIES="${report%.txt}-binaries"
mkdir -p "$TESSERA_CL_BINARIES"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi="mpirun --oversubscribe"
status=0
section() { printf '\n== %s (%s)\n' "$1" "$(date +%T)" | tee -a "$report"; }
run() { # the command, its output and its exit status into the report
  echo "\$ $*" | tee -a "$report"
  "$@" 2>&1 | tee -a "$report"
  local rc=${PIPESTATUS[0]}
  echo "(exit status $rc)" | tee -a "$report"
  [ "$rc" -eq 0 ] || status=1
}

: > "$report"
section "machine"
{
  echo "host $(hostname), $(nproc) cores"
  grep -m1 "model name" /proc/cpuinfo
  grep -m1 -o -w -E "avx512f|avx2" /proc/cpuinfo | sort -u | tr '\n' ' '; echo
  command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  git log -1 --format="tessera %h %s" 2> /dev/null
} 2>&1 | tee -a "$report"

sec_info() {
section "tessera info on 2 ranks"
run $mpi -n 2 "$tessera" info
}

sec_tests() {
if [ -n "$tests" ]; then
  section "the gpu tests (the programs of $tests)"
  while read -r name ranks prog args <&3; do # (fd 3: mpirun reads stdin)
    echo "-- $name" | tee -a "$report"
    # shellcheck disable=SC2086 # the arguments are words
    if [ "$ranks" -gt 0 ]; then run $mpi -n "$ranks" "$(dirname "$tests")/$prog" $args
    else run "$(dirname "$tests")/$prog" $args; fi
  done 3< "$tests"
elif [ -f "$build/CTestTestfile.cmake" ]; then
  section "the gpu tests"
  run ctest --test-dir "$build" -L gpu --output-on-failure
fi
}

sec_bench() {
section "bench on the GPU: ${gcells}^3 cells per process, 1/8/64/512 blocks"
run "$tessera" bench --lattice d3q19 --layout soa --collision srt --precision sp,dp \
    --blocks 1,8,64,512 --cells 64 --gpu-cells "$gcells" --repeat 5 --seconds 0.5 \
    --json "${report%.txt}-bench.json"
section "bench on the GPU: 16-bit storage (fp16s, fp16c) beside SP, 1 block"
run "$tessera" bench --lattice d3q19 --layout soa --collision srt --precision sp,fp16s,fp16c \
    --blocks 1 --cells 64 --gpu-cells "$gcells" --repeat 5 --seconds 0.5 \
    --json "${report%.txt}-bench16.json"
}

sec_fluidx3d() {
section "FluidX3D interleaved with tessera bench (D3Q19 SRT, ${gcells}^3 as built)"
if [ -z "$fluidx3d$fluidx3d16" ]; then
  echo "no --fluidx3d DIR (a FluidX3D benchmark built with scripts/peer-bench/fluidx3d.sh --build-only): skipped" | tee -a "$report"
  return
fi
local st dir
for st in fp32 fp16s; do
  dir=$fluidx3d
  [ "$st" = fp16s ] && dir=$fluidx3d16
  [ -n "$dir" ] || continue
  run scripts/peer-bench/fluidx3d.sh --no-build --build-dir "$dir" --tessera "$tessera" \
      --storage "$st" --runs 3 --seconds 0.5 --out "${report%.txt}-fluidx3d-$st"
done
}

sec_groups() {
section "bench on the GPU: work-group shapes (lbm.work_group), SP, 1 and 512 blocks"
for shape in rule 32,1 32,8 64,2 128,1 256,1; do
  group=()
  [ "$shape" = rule ] || group=(--gpu-group "$shape")
  echo "-- work-group $shape" | tee -a "$report"
  run "$tessera" bench --lattice d3q19 --layout soa --collision srt --precision sp \
      --blocks 1,512 --streaming two_grid --cells 16 --gpu-cells "$gcells" --repeat 3 \
      --seconds 0.3 "${group[@]}"
done
}

sec_hetero() {
section "bench --hetero: 1 GPU process and $cpus CPU processes"
hetero=$(mktemp --suffix=.json)
cat > "$hetero" <<JSON
{
  "domain": { "cells": [192, 192, 192], "blocks": [8, 8, 8], "periodic": [true, true, true] },
  "lbm": { "collision": "srt", "precision": "dp", "viscosity": 0.02 },
  "hardware": {
    "configurations": [
      { "name": "node", "processes": [ { "hs": "gpu" }, { "hs": "cpu", "threads": 1, "count": $cpus } ] }
    ],
    "nodes": [ { "match": "*", "configuration": "node" } ],
    "balance": { "calibrate": true }
  }
}
JSON
run $mpi -n $((cpus + 1)) "$tessera" bench --hetero "$hetero" --steps 50 \
    --json "${report%.txt}-hetero.json"
rm -f "$hetero"
}

sec_cylinder() {
section "flows past bodies: the DFG cylinder on one GPU process, one block"
cylinder=$(mktemp -d)
run "$tessera" run configs/cylinder_2d.json --steps 20000 --set 'domain.blocks=[1,1,1]' \
    --set 'hardware.hs="gpu"' --set output.vtk_every=0 --set 'output.slices=[]' \
    --set output.progress_every=0 --output "$cylinder/out"
rm -rf "$cylinder"
}

sec_d2q37() {
section "d2q37 on the GPU: the FMA peak, 2048^2 periodic DP and SP, the 2048 x 4096 showcase"
run "$tessera" bench --fma --repeat 2
box=$(mktemp --suffix=.json)
cat > "$box" <<JSON
{ "modules": ["d2q37"],
  "domain": { "cells": [2048, 2048, 1], "blocks": [1, 1, 1], "periodic": [true, true, true] },
  "steps": 100, "d2q37": { "tau": 0.8, "initial": { "kind": "taylor_green", "amplitude": 0.01 } },
  "hardware": { "hs": "gpu" } }
JSON
for p in dp sp; do
  for kernel in fused split; do
    echo "(GFLOPS = MLUPS x 952 / 1000; $p, $kernel)" | tee -a "$report"
    run "$tessera" bench --config "$box" --set "d2q37.precision=\"$p\"" \
        --set "d2q37.kernel=\"$kernel\"" --steps 50 --repeat 3
  done
done
run "$tessera" bench --config configs/rayleigh_taylor.json --set 'domain.cells=[2048,4096,1]' \
    --set 'domain.blocks=[1,4,1]' --set 'd2q37.gravity=[0,-6.25e-5,0]' \
    --set 'd2q37.initial.interface=2048' --set 'd2q37.initial.amplitude=16' \
    --set 'd2q37.initial.width=16' --set 'hardware.hs="gpu"' --steps 50 --repeat 3
rm -f "$box"
}

sec_overlap() {
section "the overlapped step on the GPU: 2 processes on the device, ${gcells}^3, 128 blocks"
run $mpi -n 2 "$tessera" bench --config configs/bench_box.json \
    --set "domain.cells=[$gcells,$gcells,$gcells]" --set 'domain.blocks=[4,4,8]' \
    --set 'hardware.hs="gpu"' --overlap both --steps 50 --repeat 3
echo "(d2q37: the Rayleigh-Taylor showcase on 2 processes, 8 blocks, walls at y)" | tee -a "$report"
run $mpi -n 2 "$tessera" bench --config configs/rayleigh_taylor.json \
    --set 'domain.cells=[2048,4096,1]' --set 'domain.blocks=[1,8,1]' \
    --set 'd2q37.gravity=[0,-6.25e-5,0]' --set 'd2q37.initial.interface=2048' \
    --set 'd2q37.initial.amplitude=16' --set 'd2q37.initial.width=16' \
    --set 'hardware.hs="gpu"' --overlap both --steps 50 --repeat 3
}

sec_model() {
section "the plan's model on the GPU: ${gcells}^3 on one process, 1, 8 and 64 blocks"
for b in '[1,1,1]' '[2,2,2]' '[4,4,4]'; do
  run "$tessera" bench --config configs/bench_box.json \
      --set "domain.cells=[$gcells,$gcells,$gcells]" --set "domain.blocks=$b" \
      --set 'hardware.hs="gpu"' --set hardware.balance.calibrate=true --steps 50 --repeat 3
done
}

sec_outputs() {
local n=$((gcells / 2))
section "outputs on the GPU: configs/cavity.json at ${n}^3, one block, 2000 steps: plain, derived, statistics"
local out t0 t1 common=(--set "domain.cells=[$n,$n,$n]" --set 'domain.blocks=[1,1,1]'
  --set "output.slices[0].position=$((n / 2))" --set 'hardware.hs="gpu"'
  --set output.progress_every=0 --overwrite)
out=$(mktemp -d)
for round in 1 2 3; do
  for c in plain derived statistics; do
    local extra=()
    case $c in
      derived) extra=(--set 'output.quantities=["density","velocity","flags","pressure","vorticity","vorticity_magnitude","q_criterion","strain_rate"]'
                      --set 'output.slices[0].quantity="vorticity_magnitude"') ;;
      statistics) extra=(--set 'modules=["lbm","statistics"]'
                         --set 'statistics={"quantities":["velocity","pressure"]}') ;;
    esac
    t0=$(date +%s.%N)
    run "$tessera" run configs/cavity.json "${common[@]}" --output "$out/$c" "${extra[@]}"
    t1=$(date +%s.%N)
    echo "(round $round, $c: $(echo "$t1 - $t0" | bc -l) s)" | tee -a "$report"
  done
done
rm -rf "$out"
}

for name in ${sections//,/ }; do
  if declare -F "sec_$name" > /dev/null; then "sec_$name"
  else echo "gpu-check.sh: no section $name (info, tests, bench, fluidx3d, groups, hetero, cylinder, d2q37, overlap, model, outputs)" | tee -a "$report"; status=1; fi
done

section "done: report $report"
exit $status
