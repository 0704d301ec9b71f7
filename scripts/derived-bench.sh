#!/usr/bin/env bash
# The cost of the derived quantities at the default output intervals: configs/cavity.json
# (64^3, D3Q19 TRT DP, 8 blocks, 2000 steps; VTK every 1000 steps, a slice every 500) on
# 2 processes, as it is ("plain") and with every derived quantity in its VTK files
# (pressure, vorticity, vorticity_magnitude, q_criterion, strain_rate beside density,
# velocity and flags) and its slice showing vorticity_magnitude ("derived"), interleaved
# round by round. A run's time is its whole wall time (mpirun's start to its end, output
# included). Prints each round and the median of the per-round ratios derived / plain.
# Usage: scripts/derived-bench.sh [ROUNDS [BUILD_DIR]] (defaults 5, build/). About 20 s a
# round here. Don't run it beside other work.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
rounds=${1:-5}
build=$(realpath "${2:-build}")
work=$build/derived-bench
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
derived=(--set 'output.quantities=["density","velocity","flags","pressure","vorticity","vorticity_magnitude","q_criterion","strain_rate"]'
         --set 'output.slices[0].quantity="vorticity_magnitude"')
seconds() { # LABEL ARGS...: the run's wall time in s
  local t0 t1
  t0=$(date +%s.%N)
  mpirun -np 2 --oversubscribe "$build/apps/tessera" run configs/cavity.json \
    --output "$work/$1" --overwrite "${@:2}" >"$work/$1.log" 2>&1
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
ratios=()
for ((r = 1; r <= rounds; ++r)); do
  plain=$(seconds plain)
  with=$(seconds derived "${derived[@]}")
  ratio=$(echo "$with / $plain" | bc -l)
  ratios+=("$ratio")
  printf 'round %d: plain %.2f s, derived %.2f s, ratio %.3f\n' "$r" "$plain" "$with" "$ratio"
done
printf 'median derived / plain: %.3f over %d rounds\n' "$(median "${ratios[@]}")" "$rounds"
