#!/usr/bin/env bash
# The DFG benchmark 2D-1 (Schaefer & Turek 1996: a cylinder in a channel, Re 20, parabolic
# inflow) at D = 20 cells (configs/cylinder_2d.json as shipped), the same with the
# cylinder from an STL file (configs/meshes/cylinder.stl: a prism on a 256-gon, extruded
# in z), at D = 40 (the same case scaled with --set: the lattice velocity kept, the
# viscosity doubled), and configs/cylinder_2d_si.json (D = 20 in SI units, the pressure
# difference read from the pressure quantity in Pa), each run to its steady state (stop.when_steady on the drag); prints
# c_D, c_L and the pressure difference of each against the published ranges and the
# reference values, and their errors (docs/physics.md, "Curved walls and forces"); the
# lattice runs also write their surfaces at the last step (c_D from the surface's
# pressure and wall shear stress, the front-back pressure difference at its cells).
# Usage: scripts/dfg-cylinder.sh [BUILD_DIR [RANKS]] (defaults build/, 2). About 15 s,
# 15 s and 2 min here (2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
ranks=${2:-2}
out=$build/dfg-cylinder
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() { mpirun --oversubscribe -np "$ranks" "$build/apps/tessera" run configs/cylinder_2d.json \
          --overwrite --set output.surface_every=1000000 "$@" | grep -E "summary|steady" || true; }
run --output "$out/d20"
run --output "$out/d20_stl" --set 'output.vtk_every=0' --set 'output.slices=[]' \
    --set 'obstacles[0]={"shape": "stl", "file": "meshes/cylinder.stl", "scale": 10, "offset": [40, 40, 0], "name": "cylinder", "wall": "interpolated"}'
run --output "$out/d40" --set 'domain.cells=[880,164,1]' --set 'lbm.viscosity=0.06666666666666667' \
    --set 'obstacles[0].center=[80,80,0.5]' --set 'obstacles[0].radius=20' --set 'forces.length=40' \
    --set 'steps=300000' --set 'stop.when_steady.window=20000' \
    --set 'output.progress_every=0' --set 'output.vtk_every=0' --set 'output.slices=[]' \
    --set 'output.probes[0].at=[59.5,80,0.5]' --set 'output.probes[1].at=[58.5,80,0.5]' \
    --set 'output.probes[2].at=[57.5,80,0.5]' --set 'output.probes[3].at=[100.5,80,0.5]' \
    --set 'output.probes[4].at=[101.5,80,0.5]' --set 'output.probes[5].at=[102.5,80,0.5]'
# the SI case, its pressure difference from the pressure quantity (Pa) at its probes
si=()
for k in 0 1 2 3 4 5; do si+=(--set "output.probes[$k].quantities=[\"pressure\"]"); done
mpirun --oversubscribe -np "$ranks" "$build/apps/tessera" run configs/cylinder_2d_si.json \
  --overwrite --output "$out/d20_si" "${si[@]}" | grep -E "summary|steady" || true
python3 scripts/dfg_cylinder.py "$out/d20" 20 "$out/d20_stl" 20 "$out/d40" 40 "$out/d20_si" 20
