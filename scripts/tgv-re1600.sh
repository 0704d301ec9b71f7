#!/usr/bin/env bash
# The three-dimensional Taylor-Green vortex at Re 1600 (tests/configs/collision/
# tgv_re1600.json: a periodic box of N^3 cells, one period along each axis, u0 = 0.05,
# Re = u0 L / nu with L = N / (2 pi)) up to t* = t u0 / L = 20: the kinetic energy
# K = <|u|^2/2> / u0^2 and its dissipation rate eps = -dK/dt* (central differences of the
# series) against the pseudo-spectral DNS on 512^3 of the 1st International Workshop on
# High-Order CFD Methods (2012), case C3.5 (file spectral_Re1600_512.gdiag of its data):
# the dissipation's peak 0.012857528 at t* = 8.97, and K and eps at t* = 5, 8, 10 and
# 19.99 (its last sample). With TGV_CURVE=FILE the whole curve (t*, K, eps) is written to
# FILE as CSV. The start has the non-equilibrium part of the initial strain rate
# (lbm.initial.nonequilibrium; TGV_NONEQ=false: equilibrium populations alone, which leave
# K an oscillation of period two steps, about 4% peak to peak at the start at 32^3 and
# decaying slowly as tau nears 1/2). The series is sampled every even number of steps
# either way, so that such an oscillation cannot alias.
# Usage: scripts/tgv-re1600.sh [N [COLLISION [LES [PRECISION [BUILD_DIR]]]]]
# (defaults 64, cumulant, none, dp, build/). N = 64: about a minute on 2 cores (DP).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-64}
collision=${2:-cumulant}
les=${3:-none}
precision=${4:-dp}
build=$(realpath "${5:-build}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r nu steps every < <(awk -v n="$n" 'BEGIN {
  l = n / (2 * 3.141592653589793); printf "%.9g %d %d\n", 0.05 * l / 1600, int(20 * l / 0.05 + 1),
  (l / 0.05 / 80 > 1 ? 2 * int(l / 0.05 / 80) : 2) }')
lattice=d3q27
[[ $collision == cumulant ]] || lattice=${TGV_LATTICE:-d3q19}
"$build/apps/tessera" run tests/configs/collision/tgv_re1600.json \
  --set "domain.cells=[$n,$n,$n]" --set "steps=$steps" --set "lbm.viscosity=$nu" \
  --set "lbm.lattice=\"$lattice\"" --set "lbm.collision=\"$collision\"" --set "lbm.les=\"$les\"" \
  --set "lbm.precision=\"$precision\"" --set "output.series_every=$every" \
  --set "lbm.initial.nonequilibrium=${TGV_NONEQ:-true}" \
  --set "output.folder=\"$work/run\"" --set output.progress_every=0 >/dev/null
python3 - "$work/run/series.csv" "$n" "$collision" "$les" "$precision" "$lattice" \
  "${TGV_CURVE:-}" "${TGV_NONEQ:-true}" "$(pwd)/scripts" <<'PY'
import csv, math, os, sys
path, n, coll, les, prec, lat, curve, noneq, here = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
sys.path.insert(0, here)
from tgv_dns import POINTS, PEAK_EPS as ref_peak, PEAK_TIME as ref_time
u0, l = 0.05, n / (2 * math.pi)
rows = list(csv.DictReader(open(path)))
t = [float(r["step"]) * u0 / l for r in rows]
k = [float(r["kinetic_energy"]) / (n ** 3 * u0 * u0) for r in rows]
eps = [None] + [-(k[i + 1] - k[i - 1]) / (t[i + 1] - t[i - 1]) for i in range(1, len(k) - 1)] + [None]
def at(x, ys):
    i = min(range(1, len(t) - 1), key=lambda j: abs(t[j] - x))
    return ys[i]
ip = max(range(1, len(t) - 1), key=lambda j: eps[j])
ref = {x: v for x, v in POINTS.items() if x > 0}
print(f"TGV Re 1600, {n}^3, {lat} {coll} les={les} {prec} nonequilibrium={noneq}: dissipation peak {eps[ip]:.6f} at t* = {t[ip]:.2f} "
      f"(DNS {ref_peak} at {ref_time}: {100 * (eps[ip] / ref_peak - 1):+.1f}%, {t[ip] - ref_time:+.2f})")
for x, (kr, er) in ref.items():
    print(f"  t* = {x:5.2f}: K {at(x, k):.5f} (DNS {kr:.5f}, {100 * (at(x, k) / kr - 1):+.1f}%), "
          f"eps {at(x, eps):.5f} (DNS {er:.5f}, {100 * (at(x, eps) / er - 1):+.1f}%)")
if curve:
    with open(curve, "w") as f:
        f.write("t,K,eps\n")
        for i in range(1, len(t) - 1):
            f.write(f"{t[i]:.4f},{k[i]:.8f},{eps[i]:.8f}\n")
PY
