#!/usr/bin/env bash
# What an output costs a run: configs/cavity.json (64^3, D3Q19 TRT DP, 8 blocks, 2000
# steps; VTK every 1000 steps, a slice every 500) on 2 processes, as it is ("plain") and
# with CASE's output, interleaved round by round:
#   derived     every derived quantity in its VTK files (pressure, vorticity,
#               vorticity_magnitude, q_criterion, strain_rate beside density, velocity
#               and flags) and its slice showing vorticity_magnitude;
#   statistics  the module statistics sampling velocity and pressure from step 0, every
#               EVERY steps (default: the module's default, statistics.every) (their mean,
#               RMS and covariances in the VTK files).
# A run's time is its whole wall time (mpirun's start to its end, output included).
# Prints each round and the median of the per-round ratios CASE / plain, and for
# statistics the cost of one sample in steps of the plain run.
# Usage: scripts/output-bench.sh derived|statistics [ROUNDS [BUILD_DIR [EVERY]]] (defaults
# 5, build/, the module's). About 20 s a round here. Don't run it beside other work.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
case=${1:?usage: scripts/output-bench.sh derived|statistics [ROUNDS [BUILD_DIR [EVERY]]]}
rounds=${2:-5}
build=$(realpath "${3:-build}")
every=${4:-}
work=$build/output-bench
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
steps=2000
case $case in
  derived)
    with=(--set 'output.quantities=["density","velocity","flags","pressure","vorticity","vorticity_magnitude","q_criterion","strain_rate"]'
          --set 'output.slices[0].quantity="vorticity_magnitude"') ;;
  statistics)
    with=(--set 'modules=["lbm","statistics"]'
          --set 'statistics={"quantities":["velocity","pressure"]}')
    [ -n "$every" ] && with+=(--set "statistics.every=$every") ;;
  *) echo "output-bench.sh: CASE = '$case': allowed are derived and statistics" >&2; exit 1 ;;
esac
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
  other=$(seconds "$case" "${with[@]}")
  ratio=$(echo "$other / $plain" | bc -l)
  ratios+=("$ratio")
  printf 'round %d: plain %.2f s, %s %.2f s, ratio %.3f\n' "$r" "$plain" "$case" "$other" "$ratio"
done
m=$(median "${ratios[@]}")
printf 'median %s / plain: %.3f over %d rounds\n' "$case" "$m" "$rounds"
if [ "$case" = statistics ]; then
  # the run's first line names its samples: "statistics of velocity, pressure, steps 0.. every N"
  every=$(grep -o 'steps [0-9]*\.\.[0-9]* every [0-9]*' "$work/statistics.log" | head -1 | awk '{print $NF}')
  samples=$((steps / every + 1))
  printf 'one sample (%d of them) costs %.2f steps of the plain run (whole-run time per step)\n' \
    "$samples" "$(echo "($m - 1) * $steps / $samples" | bc -l)"
fi
