#!/usr/bin/env bash
# Laplace's law for the shan_chen module, the long version of the suite's
# shan_chen_laplace test: 2-D droplets of radius 8 to 18 on 80 x 80 cells (periodic,
# 4 blocks, G = -5, psi = 1 - exp(-rho), SRT tau = 1), 8000 steps each; then
# tests/validation/check_shan_chen.py fits dp = sigma / R + c and reports sigma, the fit's
# residual and the spurious currents. Usage: scripts/shan-chen-laplace.sh [BUILD_DIR]
# (default build/). Takes about a minute on 2 cores. Longer runs of the larger droplets
# develop a slowly growing flow (docs/physics.md, "Multiphase flow": the flow's
# incompressible equilibrium), so the study stops at 8000 steps.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
outs=()
for r in 8 10 12 14 16 18; do
  cat > "$work/r$r.json" <<JSON
{ "modules": ["lbm", "shan_chen"],
  "domain": { "cells": [80, 80, 1], "blocks": [2, 2, 1], "periodic": [true, true, true] },
  "steps": 8000,
  "lbm": { "lattice": "d2q9", "collision": "srt", "viscosity": 0.16666666666666666,
           "initial": { "kind": "uniform", "density": 0.125,
                        "regions": [ { "shape": "cylinder", "center": [40, 40, 0.5], "radius": $r,
                                       "axis": "z", "density": 1.91 } ] } },
  "shan_chen": { "g": -5.0, "rho_psi": 1.0 },
  "output": { "vtk_every": 8000, "quantities": ["density", "velocity"], "series_every": 2000,
              "progress_every": 8000 } }
JSON
  "$build/apps/tessera" run "$work/r$r.json" --output "$work/out_r$r" >/dev/null
  outs+=("$work/out_r$r")
done
/usr/bin/python3 tests/validation/check_shan_chen.py laplace -5 1 0.02 "${outs[@]}"
