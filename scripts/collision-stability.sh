#!/usr/bin/env bash
# How far down tau each collision model goes: the lid-driven cavity of
# tests/configs/collision/cavity_re10000.json (D2Q9, 128^2 cells, lid 0.1) for STEPS steps
# (default 20000, 15 lid passes), the viscosity bisected in log space between 1e-5 and
# 1e-1 for SRT, TRT, MRT, the cumulant and each with the Smagorinsky model (C_s 0.1), or
# the models MODELS names (e.g. "cumulant cumulant+les"): a run is stable
# where it ends without diverging. Prints, per model, the smallest stable viscosity found,
# its tau - 1/2 and the Reynolds number lid * 128 / nu, with the largest unstable one
# ("<= 1e-05": stable over the whole range).
# Usage: scripts/collision-stability.sh [STEPS [ITERATIONS [BUILD_DIR [MODELS]]]]
# (defaults 20000, 8, build/, every model). About 4 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-20000}
iterations=${2:-8}
build=$(realpath "${3:-build}")
models=${4:-"srt trt mrt cumulant srt+les trt+les mrt+les cumulant+les"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
config=tests/configs/collision/cavity_re10000.json
stable() { # collision, les, nu: exit 0 where the run ends without diverging
  "$build/apps/tessera" run "$config" --set "lbm.collision=\"$1\"" --set "lbm.les=\"$2\"" \
    --set "lbm.viscosity=$3" --set "steps=$steps" --set "output.folder=\"$work/run\"" \
    --set output.progress_every=0 --overwrite >/dev/null 2>&1
}
printf '%-16s %12s %12s %10s %14s\n' model "smallest nu" "tau - 1/2" "Re" "unstable nu"
for model in $models; do
  coll=${model%+les}
  les=none
  [[ $model == *+les ]] && les=smagorinsky
  lo=-5 hi=-1 # log10 nu: lo unstable (assumed), hi stable (checked)
  if ! stable "$coll" "$les" 1e-1; then
    printf '%-16s unstable even at nu = 0.1\n' "$model"
    continue
  fi
  if stable "$coll" "$les" 1e-5; then
    printf '%-16s %12s %12.4g %10.0f %14s\n' "$model" "<= 1e-05" 3e-5 1280000 "none found"
    continue
  fi
  for ((i = 0; i < iterations; ++i)); do
    mid=$(awk -v a="$lo" -v b="$hi" 'BEGIN { printf "%.6f", (a + b) / 2 }')
    nu=$(awk -v m="$mid" 'BEGIN { printf "%.6g", 10 ^ m }')
    if stable "$coll" "$les" "$nu"; then hi=$mid; else lo=$mid; fi
  done
  awk -v m="$model" -v a="$lo" -v b="$hi" 'BEGIN {
    nu = 10 ^ b; printf "%-16s %12.4g %12.4g %10.0f %14.4g\n", m, nu, 3 * nu, 0.1 * 128 / nu, 10 ^ a }'
done
