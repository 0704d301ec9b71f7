#!/usr/bin/env bash
# The d2q37 kernel's performance on this machine's CPU (docs/performance.md, "d2q37"):
#  1. the floating-point operations per cell update, counted from the compiled kernel:
#     d37_collide compiled alone (x86-64-v3, scalar: one instruction per operation), its
#     arithmetic instructions counted (an FMA counts 2, a negation 0);
#  2. three rounds of: the FMA peak of the process's threads (tessera bench --fma), then
#     a periodic 512^2 box in double and in single precision (tessera bench --config):
#     MLUPS, GFLOPS = MLUPS x operations, and their share of the peak measured just before;
#     and in double precision with propagation and collision split (d2q37.kernel);
#  3. the decomposition question of Calore et al. (2016), 1-D slabs against 2-D tiles: a
#     1024^2 box on 2 ranks split along x and along y, and on 4 ranks along x, along y and
#     2 x 2 (one thread each; blocks of one rank per rank).
# Usage: scripts/d2q37-bench.sh [BUILD_DIR] (default build/). About 2 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
tessera="$build/apps/tessera"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# 1. operations per cell update
cat > "$work/count.c" <<'C'
#include "d2q37_kernels.h"
void one_collide(const d37_consts_t_d *k, double *f);
__attribute__((noinline)) void one_collide(const d37_consts_t_d *k, double *f) { d37_collide_d(k, f); }
C
cc -O2 -std=c17 -ffp-contract=off -march=x86-64-v3 -fno-tree-vectorize -Ikernels_cpu -Ikernels_cpu/d2q37 \
   -I"$build/kernels_cpu" -c "$work/count.c" -o "$work/count.o"
flops=$(objdump -d --no-show-raw-insn "$work/count.o" |
        awk '/<one_collide>:/,/^$/ { op = $2
               if (op ~ /^v?f?n?m(add|sub)[0-9]*sd$/ && op ~ /fn?m/) n += 2
               else if (op ~ /^v(add|sub|mul|div)sd$/) n += 1 }
             END { print n }')
echo "operations per cell update (d37_collide, counted from its instructions): $flops"

# 2. the peak and the kernel, interleaved (medians of three repetitions)
cat > "$work/box.json" <<'J'
{ "modules": ["d2q37"],
  "domain": { "cells": [512, 512, 1], "blocks": [1, 1, 1], "periodic": [true, true, true] },
  "steps": 100, "d2q37": { "tau": 0.8, "initial": { "kind": "taylor_green", "amplitude": 0.01 } } }
J
for round in 1 2 3; do
  peak=$("$tessera" bench --fma --repeat 1 | awk '/repetition/ { print $4, $7 }')
  set -- $peak
  for p in dp sp split; do
    set_kernel=$([[ $p == split ]] && echo 'd2q37.kernel="split"' || echo "d2q37.precision=\"$p\"")
    mlups=$("$tessera" bench --config "$work/box.json" --set "$set_kernel" --steps 30 \
              --repeat 3 | awk '/repetition/ { print $3 }' | sort -g | sed -n 2p)
    pk=$([[ $p == sp ]] && echo "$2" || echo "$1")
    awk -v r="$round" -v p="$p" -v m="$mlups" -v f="$flops" -v pk="$pk" 'BEGIN {
      printf "round %d %s: %.2f MLUPS, %.1f GFLOPS, %.0f%% of the FMA peak %.1f GFLOPS\n",
             r, p, m, m * f / 1000, 100 * m * f / 1000 / pk, pk }'
  done
done

# 3. 1-D against 2-D decomposition
sed 's/\[512, 512, 1\]/[1024, 1024, 1]/' "$work/box.json" > "$work/big.json"
for split in "2 2 1" "2 1 2" "4 4 1" "4 1 4" "4 2 2"; do
  set -- $split
  mlups=$(OMP_NUM_THREADS=1 mpirun -n "$1" --oversubscribe "$tessera" bench --config "$work/big.json" \
            --set "domain.blocks=[$2,$3,1]" --steps 20 --repeat 3 |
          awk '/repetition/ { print $3 }' | sort -g | sed -n 2p)
  echo "1024^2 DP on $1 ranks, blocks $2 x $3: $mlups MLUPS"
done
