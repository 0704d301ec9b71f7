#!/usr/bin/env bash
# SIGKILL at random moments while a run writes checkpoints: the newest complete
# checkpoint always loads, and a half-written one is never taken.
#
# Usage: tests/checkpoint_kill.sh TESSERA [TRIALS [CELLS]]
#   TESSERA  the tessera executable; TRIALS (default 50); CELLS per axis (default 64)
#
# Each trial starts a 2-rank run (D3Q19 DP, CELLS^3 cells in 8 blocks, a checkpoint every
# 4 steps, the newest 2 kept) in a fresh folder, kills every rank with SIGKILL after a
# random 0.3-2.5 s, then restarts from every checkpoint the folder holds under its final
# name (checkpoint_*.tsrc), newest first, for one step each: every one must load.
# Temporary files (.checkpoint_*.tmp-*) a kill left mid-write are counted, never loaded.
# Prints one line per trial and a summary; exits 1 at the first failure.
set -euo pipefail
tessera=${1:?usage: tests/checkpoint_kill.sh TESSERA [TRIALS [CELLS]]}
trials=${2:-50}
cells=${3:-64}
mpiexec=${MPIEXEC:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-kill.XXXXXX")
trap 'pkill -KILL -f "$work/run.json" 2>/dev/null || true; rm -rf "$work"' EXIT
cat >"$work/run.json" <<JSON
{ "domain": { "cells": [$cells, $cells, $cells], "blocks": [2, 2, 2] },
  "steps": 1000000,
  "lbm": { "viscosity": 0.02 },
  "boundaries": { "y+": { "kind": "moving", "velocity": [0.05, 0, 0] } },
  "output": { "checkpoint_every": 4, "checkpoint_keep": 2, "progress_every": 0 } }
JSON
mid_write=0
loaded=0
none=0
for ((t = 1; t <= trials; ++t)); do
  out="$work/out"
  rm -rf "$out" "$work/again"
  "$mpiexec" -n 2 --oversubscribe "$tessera" run "$work/run.json" --output "$out" \
    >"$work/run.log" 2>&1 &
  runner=$!
  sleep "$(awk -v s="$RANDOM" 'BEGIN { srand(s); printf "%.2f", 0.3 + 2.2 * rand() }')"
  pkill -KILL -f "tessera run $work/run.json" || true
  wait "$runner" 2>/dev/null || true
  if [[ ! -d $out ]]; then
    echo "trial $t: killed before the run made its folder"
    continue
  fi
  temporary=$(find "$out" -maxdepth 1 -name '.checkpoint_*.tmp-*' | wc -l)
  mid_write=$((mid_write + (temporary > 0 ? 1 : 0)))
  mapfile -t found < <(find "$out" -maxdepth 1 -name 'checkpoint_*.tsrc' -printf '%f\n' | sort -r)
  none=$((none + (${#found[@]} == 0 ? 1 : 0)))
  for name in "${found[@]}"; do
    step=$((10#${name//[!0-9]/}))
    if ! "$tessera" run "$work/run.json" --restart "$out/$name" --steps $((step + 1)) \
         --output "$work/again" >"$work/again.log" 2>&1; then
      echo "trial $t: $name does not load:" >&2
      cat "$work/again.log" >&2
      exit 1
    fi
    rm -rf "$work/again"
    loaded=$((loaded + 1))
  done
  echo "trial $t: ${#found[@]} checkpoint(s) under their names, all loaded (newest: ${found[0]:-none}); $temporary half-written left as temporary"
done
echo "checkpoint_kill: $trials trials, $loaded checkpoints loaded, $mid_write trials killed mid-write, $none before the first checkpoint; no half-written checkpoint under a final name"
