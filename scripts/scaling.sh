#!/usr/bin/env bash
# Weak and strong scaling of the periodic D3Q19 box (configs/bench_box.json: TRT, DP, SoA)
# over the processes, threads and blocks per process given, measured by `tessera bench
# --config` (the median of the repetitions) beside the plan's prediction for the same run
# (its throughputs and exchange rate calibrated by each process: hardware.balance.
# calibrate), written to DIR/scaling.csv, and plotted to DIR/scaling.png (MLUPS and
# parallel efficiency, measured and predicted) where python3-matplotlib is installed.
#   weak:   N^3 cells per core (the box N x N x N*C for C cores: processes x threads)
#   strong: the N^3 box whatever the cores
# in blocks of N/b cells along x and y (weak: N/b along z too), b^3 blocks per core, the
# box cut along z among the processes. The efficiency of a row is its MLUPS over C times
# the MLUPS of the row with 1 process of 1 thread and the same blocks per core.
# Usage: scripts/scaling.sh [--build DIR] [--out DIR] [--cells N] [--procs "1 2"]
#          [--threads "1 2"] [--blocks "1 2 4"] [--steps S] [--repeat R] [--max-cores C]
#   --blocks: b, blocks per core along each axis (1 2 4: 1, 8, 64 blocks per core);
#   runs with more cores than --max-cores (default: the machine's) are left out.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build out=$here/scaling cells=128 procs="1 2" threads="1 2" blocks="1 2 4"
steps=20 repeat=3 max_cores=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --cells) cells=$2; shift 2 ;;
    --procs) procs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --blocks) blocks=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --max-cores) max_cores=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scaling.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
tessera=$build/apps/tessera
[ -x "$tessera" ] || { echo "scaling.sh: $tessera is missing: build first" >&2; exit 2; }
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$here"
csv=$out/scaling.csv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "study,processes,threads,cores,cells,blocks_per_core,mlups_measured,mlups_predicted,efficiency_measured,efficiency_predicted" > "$tmp/rows"
for study in weak strong; do
  for b in $blocks; do
    base_m="" base_p=""
    for p in $procs; do
      for t in $threads; do
        cores=$((p * t))
        [ "$cores" -le "$max_cores" ] || continue
        if [ "$study" = weak ]; then nz=$((cells * cores)); else nz=$cells; fi
        if [ "$study" = strong ] && [ $((cells % (b * cores))) -ne 0 ]; then continue; fi
        json=$tmp/run.json
        OMP_NUM_THREADS=$t mpirun --oversubscribe --bind-to none -np "$p" "$tessera" bench \
          --config configs/bench_box.json --set "domain.cells=[$cells,$cells,$nz]" \
          --set "domain.blocks=[$b,$b,$((b * cores))]" --set hardware.balance.calibrate=true \
          --steps "$steps" --repeat "$repeat" --json "$json" > "$tmp/log" 2>&1 || {
            echo "scaling.sh: the run of $p process(es) x $t thread(s), $b^3 blocks per core failed:" >&2
            cat "$tmp/log" >&2; exit 1; }
        read -r m pred < <(/usr/bin/python3 - "$json" "$cells" "$nz" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = int(sys.argv[2]) ** 2 * int(sys.argv[3])
print(r["mlups_median"], n / r["predicted_step_s"] / 1e6)
PY
)
        if [ "$p" -eq 1 ] && [ "$t" -eq 1 ]; then base_m=$m base_p=$pred; fi
        echo "$study $p $t $cores $((cells * cells * nz)) $((b * b * b)) $m $pred ${base_m:-} ${base_p:-}" >> "$tmp/raw"
      done
    done
  done
done
/usr/bin/python3 - "$tmp/raw" >> "$tmp/rows" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
for r in rows:
    study, p, t, cores, cells, bpp, m, pred = r[:8]
    base = r[8:10]
    def eff(v, b):
        return "%.4f" % (float(v) / (int(cores) * float(b))) if b else ""
    print(",".join([study, p, t, cores, cells, bpp, "%.3f" % float(m), "%.3f" % float(pred),
                    eff(m, base[0] if base else ""), eff(pred, base[1] if len(base) > 1 else "")]))
PY
mv "$tmp/rows" "$csv"
echo "scaling.sh: $csv"
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  /usr/bin/python3 "$here/scripts/scaling_plot.py" "$csv" "$out/scaling.png"
  echo "scaling.sh: $out/scaling.png"
else
  echo "scaling.sh: python3-matplotlib is not installed: no plot (apt-get install python3-matplotlib)"
fi
