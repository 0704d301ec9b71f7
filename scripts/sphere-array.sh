#!/usr/bin/env bash
# Stokes flow through a simple cubic array of spheres against Sangani & Acrivos (1982):
# one sphere of radius a in a periodic cube of L cells (volume fraction 0.0276 for both
# cases: a = 6, L = 32 and a = 9, L = 48), D3Q19 TRT nu = 1/6, interpolated walls, driven
# by a body force F on the fluid. The drag per sphere is the mean pressure gradient times
# the cell volume, F L^3 (the momentum exchange on the sphere, ball.fx, is F times the
# fluid volume: checked); K = F L^3 / (6 pi rho nu a U) with U the mean velocity over the
# whole cell (from the last VTK output), against 1 / K = 1 - 1.7601 chi + chi^3 -
# 1.5593 chi^6 + 3.9799 chi^8 - 3.0734 chi^10, chi = (4 pi / 3)^(1/3) a / L.
# Usage: scripts/sphere-array.sh [BUILD_DIR [RANKS [stl]]] (defaults build/, 2). About 2 min
# here (2 cores). Needs python3-vtk9 (/usr/bin/python3).
# With stl: the a = 6 case twice, the analytic sphere and the same sphere from an STL file
# (scripts/make-stl.py sphere 4: 5120 triangles inscribed in it), and their K compared.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
ranks=${2:-2}
work=$build/sphere-array
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cases=("32 6 30000 sphere" "48 9 60000 sphere")
if [[ ${3:-} == stl ]]; then
  python3 scripts/make-stl.py sphere 4 "$work/sphere4.stl"
  cases=("32 6 30000 sphere" "32 6 30000 stl")
fi
for case in "${cases[@]}"; do
  set -- $case
  L=$1 a=$2 steps=$3 shape=$4
  if [[ $shape == stl ]]; then
    ball="\"shape\": \"stl\", \"file\": \"sphere4.stl\", \"scale\": $a, \"offset\": [$((L / 2)), $((L / 2)), $((L / 2))]"
  else
    ball="\"shape\": \"sphere\", \"center\": [$((L / 2)), $((L / 2)), $((L / 2))], \"radius\": $a"
  fi
  force=$(python3 -c "print(1e-6 * (32 / $L) ** 3)")
  cat > "$work/c$L.json" <<JSON
{ "domain": { "cells": [$L, $L, $L], "blocks": [2, 1, 1], "periodic": [true, true, true] },
  "steps": $steps,
  "lbm": { "lattice": "d3q19", "collision": "trt", "viscosity": 0.16666666666666666,
           "force": [$force, 0, 0] },
  "obstacles": [ { $ball, "name": "ball", "wall": "interpolated" } ],
  "output": { "progress_every": 0, "series_every": $((steps / 10)), "vtk_every": $steps,
              "quantities": ["velocity", "flags"] } }
JSON
  mpirun --oversubscribe -np "$ranks" "$build/apps/tessera" run "$work/c$L.json" \
    --output "$work/o$L$shape" --overwrite | grep summary
  /usr/bin/python3 - "$work/o$L$shape" "$L" "$a" "$steps" "$force" "$shape" <<'PY'
import csv, math, sys
from vtkmodules.vtkIOXML import vtkXMLImageDataReader
folder, L, a, steps, F = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
nu = 1.0 / 6.0
r = vtkXMLImageDataReader()
r.SetFileName("%s/fields_%06d.vti" % (folder, steps))
r.Update()
d = r.GetOutput().GetCellData()
u, flags = d.GetArray("velocity"), d.GetArray("flags")
U, fluid = 0.0, 0
for k in range(u.GetNumberOfTuples()):
    if flags.GetValue(k) == 0:
        U += u.GetComponent(k, 0)
        fluid += 1
U /= L ** 3
with open(folder + "/series.csv") as f:
    fx = float(list(csv.DictReader(f))[-1]["ball.fx"])
K = F * L ** 3 / (6 * math.pi * nu * a * U)
chi = (4 * math.pi / 3) ** (1 / 3) * a / L
ref = 1 / (1 - 1.7601 * chi + chi ** 3 - 1.5593 * chi ** 6 + 3.9799 * chi ** 8 - 3.0734 * chi ** 10)
print("%s, a = %g, L = %d: ball.fx / (F x fluid cells) - 1 = %.2g; U = %.6g; K = %.5f, Sangani-Acrivos "
      "%.5f: %+.2f%%" % (sys.argv[6], a, L, fx / (F * fluid) - 1, U, K, ref, 100 * (K - ref) / ref))
PY
done
