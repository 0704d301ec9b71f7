#!/usr/bin/env bash
# The lid-driven cavity at high Reynolds numbers against Ghia, Ghia & Shin, J. Comput.
# Phys. 48 (1982) 387-411, Tables I and II (u on the vertical, v on the horizontal centre
# line; Re 3200, 5000, 7500, 10000): tests/configs/collision/cavity_ghia.json, D2Q9, N^2
# cells (N odd, so a column and a row of cells lie on the centre lines), lid U = 0.1 along
# x (LID=U: another; the compressibility error falls as U^2), nu = U N / Re (halfway
# bounce-back: the walls on the domain's faces, L = N cells).
# Each run lasts PASSES lid passes (t U / L); the centre lines are sampled every 10; the
# result is the mean of the samples of the last fifth of the run, and "change" the largest
# deviation of one of those samples from that mean (of the lid velocity): near zero for a
# steady flow, the amplitude of the oscillation for an unsteady one: the cavity's steady
# branch loses stability at a first Hopf bifurcation, placed between about Re 7300 and
# 8050 by published studies (e.g. Bruneau & Saad, Comput. Fluids 35, 2006, who stress how
# much it depends on the method); on 257^2 cells Re 7500 and 10000 oscillate here, and
# their time average is compared with Ghia's steady solutions.
# Prints per Re: the largest and the rms deviation |u/U - Ghia| and |v/U - Ghia| over the
# 15 interior points of each table.
# Copies of Ghia's Table I differ in the sign of u at y = 0.5 for Re 10000 (0.03111); the
# neighbouring Reynolds numbers give -0.030 to -0.043 there: -0.03111 is used.
# Usage: scripts/cavity-ghia.sh [RE_LIST [N [PASSES [COLLISION [PRECISION [BUILD_DIR]]]]]]
# (defaults "3200 5000 7500 10000", 257, 300, cumulant, dp, build/). 257^2 cells: about
# 0.8 s per lid pass (4 min per Re at 300 passes) on 2 cores of an AMD EPYC (Zen 4); Re
# 3200 and 5000 are steady (to 2e-4 and 1e-3) after 300 passes, Re 7500 and 10000 want
# 1000 for their mean.
set -euo pipefail
cd "$(dirname "$0")/.."
res=${1:-"3200 5000 7500 10000"}
n=${2:-257}
passes=${3:-300}
collision=${4:-cumulant}
precision=${5:-dp}
build=$(realpath "${6:-build}")
if ((n % 2 == 0)); then
  echo "cavity-ghia.sh: N must be odd (given $n): a column of cells on each centre line" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lid=${LID:-0.1}
m=$((n / 2))
every=$(awk -v n="$n" -v u="$lid" 'BEGIN { printf "%d", 10 * n / u + 0.5 }') # 10 lid passes
for re in $res; do
  nu=$(awk -v n="$n" -v re="$re" -v u="$lid" 'BEGIN { printf "%.9g", u * n / re }')
  start=$(date +%s)
  "$build/apps/tessera" run tests/configs/collision/cavity_ghia.json \
    --set "domain.cells=[$n,$n,1]" --set "steps=$((passes * every / 10))" \
    --set "lbm.viscosity=$nu" --set "boundaries.y+.velocity=[$lid,0,0]" \
    --set "lbm.collision=\"$collision\"" --set "lbm.precision=\"$precision\"" \
    --set "output.probes[0].from=[$m,0,0]" --set "output.probes[0].to=[$m,$((n - 1)),0]" \
    --set "output.probes[1].from=[0,$m,0]" --set "output.probes[1].to=[$((n - 1)),$m,0]" \
    --set "output.probes[0].every=$every" --set "output.probes[1].every=$every" \
    --set "output.folder=\"$work/re$re\"" --set output.progress_every=0 >/dev/null
  python3 - "$work/re$re" "$n" "$re" "$collision" "$precision" "$(($(date +%s) - start))" \
    "$lid" <<'PY'
import csv, glob, math, sys
folder, n, re, coll, prec, secs, lid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:]
lid = float(lid)
pos = [0.0547, 0.0625, 0.0703, 0.1016, 0.1719, 0.2813, 0.4531, 0.5, 0.6172, 0.7344, 0.8516,
       0.9531, 0.9609, 0.9688, 0.9766]
ghia_u = {
    3200: [-0.32407, -0.35344, -0.37827, -0.41933, -0.34323, -0.24427, -0.08636, -0.04272,
           0.07156, 0.19791, 0.34682, 0.46101, 0.46547, 0.48296, 0.53236],
    5000: [-0.41165, -0.42901, -0.43643, -0.40435, -0.33050, -0.22855, -0.07404, -0.03039,
           0.08183, 0.20087, 0.33556, 0.46036, 0.45992, 0.46120, 0.48223],
    7500: [-0.43154, -0.43590, -0.43025, -0.38324, -0.32393, -0.23176, -0.07503, -0.03800,
           0.08342, 0.20591, 0.34228, 0.47167, 0.47323, 0.47048, 0.47244],
    10000: [-0.42735, -0.42537, -0.41657, -0.38000, -0.32709, -0.23186, -0.07540, -0.03111,
            0.08344, 0.20673, 0.34635, 0.47804, 0.48070, 0.47783, 0.47221]}
posx = [0.0625, 0.0703, 0.0781, 0.0938, 0.1563, 0.2266, 0.2344, 0.5, 0.8047, 0.8594, 0.9063,
        0.9453, 0.9531, 0.9609, 0.9688]
ghia_v = {
    3200: [0.39560, 0.40917, 0.41906, 0.42768, 0.37119, 0.29030, 0.28188, 0.00999, -0.31184,
           -0.37401, -0.44307, -0.54053, -0.52357, -0.47425, -0.39017],
    5000: [0.42447, 0.43329, 0.43648, 0.42951, 0.35368, 0.28066, 0.27280, 0.00945, -0.30018,
           -0.36214, -0.41442, -0.52876, -0.55408, -0.55069, -0.49774],
    7500: [0.43979, 0.44030, 0.43564, 0.41824, 0.35060, 0.28117, 0.27348, 0.00824, -0.30448,
           -0.36213, -0.41050, -0.48590, -0.52347, -0.55216, -0.53858],
    10000: [0.43983, 0.43733, 0.43124, 0.41487, 0.35070, 0.28003, 0.27224, 0.00831, -0.30719,
            -0.36737, -0.41496, -0.45863, -0.49099, -0.52987, -0.54302]}
def samples(name, comp):
    files = sorted(glob.glob(f"{folder}/probe_{name}_*.csv"))
    keep = files[len(files) - max(1, len(files) // 5):]
    return [[float(r[comp]) / lid for r in csv.DictReader(open(f))] for f in keep]
def at(line, x):  # cell i has its centre at (i + 1/2) / n
    c = min(max(x * n - 0.5, 0.0), n - 1.0)
    i = min(int(c), n - 2)
    return line[i] + (c - i) * (line[i + 1] - line[i])
out = [f"cavity Re {re}, {n}^2, lid {lid}, d2q9 {coll} {prec} ({secs} s):"]
for name, comp, xs, ref in (("u", "ux", pos, ghia_u), ("v", "uy", posx, ghia_v)):
    if re not in ref:
        sys.exit(f"cavity-ghia.sh: no Ghia data for Re {re} (3200, 5000, 7500, 10000)")
    s = samples(name, comp)
    mean = [sum(col) / len(s) for col in zip(*s)]
    change = max(abs(v - mv) for line in s for v, mv in zip(line, mean))
    err = [at(mean, x) - r for x, r in zip(xs, ref[re])]
    worst = max(range(len(err)), key=lambda k: abs(err[k]))
    out.append(f"{name}: largest |{name}/U - Ghia| {abs(err[worst]):.4f} (at {xs[worst]}), rms "
               f"{math.sqrt(sum(e * e for e in err) / len(err)):.4f}, change over the last fifth "
               f"{change:.1e} ({len(s)} samples)")
print("\n  ".join(out))
PY
done
