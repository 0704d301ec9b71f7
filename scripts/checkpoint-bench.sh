#!/usr/bin/env bash
# The cost of a checkpoint against the disk (docs/checkpoints.md, "Cost"): a 256^3 D3Q19
# DP cavity in 1 block (a 2.55 GB checkpoint) writes a checkpoint and restarts from it,
# interleaved, round by round, with dd moving the same bytes to and from the same folder
# (O_DIRECT, 16 MB requests: the disk's sequential bandwidth; the page cache dropped before
# each read). Prints each round and the medians of the times and of the per-round ratios.
# Usage: scripts/checkpoint-bench.sh [ROUNDS [BUILD_DIR [FOLDER [CELLS]]]] (defaults 5,
# build/, a folder under build/, 256). Root (to drop the page cache); 2.55 GB x 3 free on
# FOLDER's disk and ~6 GB of memory; about 30 s a round here. Don't run it beside other work.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
build=$(realpath "${2:-build}")
work=${3:-$build/checkpoint-bench}
n=${4:-256}
mkdir -p "$work"
work=$(realpath "$work")
trap 'rm -rf "$work"/o1 "$work"/o2 "$work"/dd.bin' EXIT
cat > "$work/cavity.json" <<JSON
{ "domain": { "cells": [$n, $n, $n], "blocks": [1, 1, 1] },
  "boundaries": { "y+": { "kind": "moving", "velocity": [0.05, 0, 0] } },
  "steps": 2, "lbm": { "lattice": "d3q19", "precision": "dp", "viscosity": 0.05 },
  "output": { "checkpoint_every": 2, "progress_every": 0 } }
JSON
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
. scripts/bench-common.sh
echo "round, dd write s, checkpoint write s, write ratio, dd read s, restart read s, read ratio"
rows=()
for r in $(seq "$rounds"); do
  rm -rf "$work"/o1 "$work"/o2
  "$build/apps/tessera" run "$work/cavity.json" --output "$work/o1" > "$work/w.txt"
  bytes=$(stat -c %s "$work/o1/checkpoint_000002.tsrc")
  count=$(( (bytes + 16777215) / 16777216 ))
  ddw=$(dd if=/dev/zero of="$work/dd.bin" bs=16M count="$count" oflag=direct 2>&1 | awk 'END { print $(NF-3) }')
  cw=$(sed -n 's/.*written in \([0-9.]*\) s.*/\1/p' "$work/w.txt")
  drop
  ddr=$(dd if="$work/dd.bin" of=/dev/null bs=16M iflag=direct 2>&1 | awk 'END { print $(NF-3) }')
  rm -f "$work/dd.bin"
  drop
  cr=$("$build/apps/tessera" run "$work/cavity.json" --output "$work/o2" \
        --restart "$work/o1/checkpoint_000002.tsrc" --steps 3 | sed -n 's/.*(read in \([0-9.]*\) s).*/\1/p')
  row=$(awk -v r="$r" -v a="$ddw" -v b="$cw" -v c="$ddr" -v d="$cr" \
        'BEGIN { printf "%d, %.2f, %.2f, %.2f, %.2f, %.2f, %.2f", r, a, b, b / a, c, d, d / c }')
  echo "$row"
  rows+=("$row")
done
col() { printf '%s\n' "${rows[@]}" | cut -d, -f"$1" | median_of_lines; }
echo "median, $(col 2), $(col 3), $(col 4), $(col 5), $(col 6), $(col 7)   ($bytes bytes; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
