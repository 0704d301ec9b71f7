#!/usr/bin/env bash
# tessera against FluidX3D on the same OpenCL device: builds FluidX3D's benchmark (its
# BENCHMARK setup: a periodic D3Q19 SRT box at rest) from a FluidX3D source tree you
# provide, then runs it and `tessera bench` (the same box: D3Q19, SRT, one block, single
# precision or the same 16-bit storage, two grids and in place) alternately, and prints
# the median MLUPS of each and their ratio.
#
# Usage: scripts/peer-bench/fluidx3d.sh [options] FLUIDX3D_SRC
# See scripts/peer-bench/README.md for what is compared and how.
#
# Nothing is downloaded and nothing of FluidX3D is copied into this tree: its src/ and
# makefile are copied to --build-dir (by default FLUIDX3D_SRC-build, beside it), where
# defines.hpp and the benchmark's box size and length are set (sed) and it is built;
# only logs and results go to --out (by default out/peer-bench/fluidx3d).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=common.sh
. "$here/common.sh"

usage() {
  cat <<EOF
usage: scripts/peer-bench/fluidx3d.sh [options] FLUIDX3D_SRC
       scripts/peer-bench/fluidx3d.sh --no-build --build-dir DIR [options]

  FLUIDX3D_SRC          a FluidX3D source tree (github ProjectPhysX/FluidX3D)

options (defaults in brackets):
  --build-dir DIR       where FluidX3D is copied, configured and built [FLUIDX3D_SRC-build]
  --tessera PATH        the tessera binary [$root/build/apps/tessera]
  --build-only          build FluidX3D's benchmark and stop
  --no-build            run the benchmark already built in --build-dir (built here with
                        --build-only and copied to a node without a compiler; --cells
                        and --rounds are then those it was built with)
  --cells N             edge of the cubic box [256]
  --rounds K            FluidX3D: rounds of 10 steps (it reports the best round's
                        smoothed MLUPS) [100]
  --seconds T           tessera: at least T seconds per repetition (5 repetitions;
                        the median and the best are printed) [1]
  --runs R              runs of each code [3]
  --storage S           the storage of the populations, both codes: fp32 (tessera's sp),
                        fp16s or fp16c (half the bytes; tessera's lbm.precision of the
                        same name, the same formats) [fp32]
  --device I            the OpenCL device: FluidX3D's device ID (its numbering of every
                        platform's devices) and tessera's index on the default platform
                        (tessera bench --device); give both the same device [both: default]
  --out DIR             logs and results.csv [$root/out/peer-bench/fluidx3d]
  -h, --help            this text
EOF
}


src="" build_dir="" tessera="$root/build/apps/tessera" build_only=0 no_build=0 cells=256 rounds=100
seconds=1 runs=3 storage=fp32 device="" out="$root/out/peer-bench/fluidx3d"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) need_arg "$@"; build_dir=$2; shift 2 ;;
    --tessera)   need_arg "$@"; tessera=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    --no-build)  no_build=1; shift ;;
    --cells)     need_arg "$@"; cells=$2; shift 2 ;;
    --rounds)    need_arg "$@"; rounds=$2; shift 2 ;;
    --seconds)   need_arg "$@"; seconds=$2; shift 2 ;;
    --runs)      need_arg "$@"; runs=$2; shift 2 ;;
    --storage)   need_arg "$@"; storage=$2; shift 2 ;;
    --device)    need_arg "$@"; device=$2; shift 2 ;;
    --out)       need_arg "$@"; out=$2; shift 2 ;;
    -h|--help)   usage; exit 0 ;;
    -*)          die "unknown option $1 (see --help)" ;;
    *)           [[ -z "$src" ]] || die "one source tree, not '$src' and '$1'"; src=$1; shift ;;
  esac
done
[[ -n "$src" || ( "$no_build" -eq 1 && -n "$build_dir" ) ]] || { usage >&2; exit 2; }
[[ "$no_build" -eq 1 || ( -f "$src/src/setup.cpp" && -f "$src/src/defines.hpp" ) ]] ||
  die "$src is not a FluidX3D source tree (no src/setup.cpp, src/defines.hpp)"
for v in cells rounds runs; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "--$v ${!v}: a positive integer is needed"
done
[[ -z "$device" || "$device" =~ ^[0-9]+$ ]] || die "--device $device: an index is needed"
case "$storage" in fp32|fp16s|fp16c) ;; *) die "--storage $storage: fp32, fp16s or fp16c" ;; esac
tprec=$storage # tessera's lbm.precision of the same storage
[[ $storage == fp32 ]] && tprec=sp
[[ -n "$build_dir" ]] || build_dir="$src-build"
[[ -x "$tessera" ]] || die "no tessera at $tessera (build it first: scripts/build.sh)"
mkdir -p "$build_dir" "$out"
if [[ "$no_build" -eq 1 ]]; then
  [[ -x "$build_dir/bin/FluidX3D" ]] || die "--no-build: no $build_dir/bin/FluidX3D"
else
src=$(cd "$src" && pwd)
command -v g++ > /dev/null || die "g++ is needed to build FluidX3D (apt-get install g++)"

# ---- FluidX3D: copy, configure, build ----
rm -rf "$build_dir/src"
cp -r "$src/src" "$build_dir/src"
def="$build_dir/src/defines.hpp" setup="$build_dir/src/setup.cpp"
# D3Q19, SRT, the benchmark, the chosen storage, no graphics
sed -i -E 's@^[/]*#define (D2Q9|D3Q15|D3Q27|TRT|FP16S|FP16C|INTERACTIVE_GRAPHICS|INTERACTIVE_GRAPHICS_ASCII|GRAPHICS)( |$)@//#define \1\2@' "$def"
sed -i -E 's@^[/]*#define (D3Q19|SRT|BENCHMARK)( |$)@#define \1\2@' "$def"
case "$storage" in
  fp16s) sed -i -E 's@^//#define FP16S( |$)@#define FP16S\1@' "$def" ;;
  fp16c) sed -i -E 's@^//#define FP16C( |$)@#define FP16C\1@' "$def" ;;
esac
# the benchmark's box (its default line) and number of rounds of 10 steps
grep -q 'LBM lbm(256u, 256u, 256u, 1.0f); // default' "$setup" &&
  grep -q 'for(uint i=0u; i<1000u; i++) {' "$setup" ||
  die "$src/src/setup.cpp: the benchmark setup is not the one this script knows (its box" \
      "line 'LBM lbm(256u, 256u, 256u, 1.0f); // default' and loop 'i<1000u')"
sed -i "s|LBM lbm(256u, 256u, 256u, 1.0f); // default|LBM lbm(${cells}u, ${cells}u, ${cells}u, 1.0f);|" "$setup"
sed -i "s|for(uint i=0u; i<1000u; i++) {|for(uint i=0u; i<${rounds}u; i++) {|" "$setup"
grep -E '^#define (D3Q19|SRT|BENCHMARK|FP16S|FP16C)' "$def" | sed 's/^/peer-bench: FluidX3D /' | cut -c1-60
note "building FluidX3D in $build_dir (g++ -O3, the system's OpenCL loader)"
mkdir -p "$build_dir/bin"
(cd "$build_dir" && nice -n 19 g++ src/*.cpp -o bin/FluidX3D -std=c++17 -pthread -O3 \
   -Wno-comment -I./src/OpenCL/include -lOpenCL) > "$out/build.log" 2>&1 ||
  die "FluidX3D did not build; see $out/build.log"
[[ "$build_only" -eq 0 ]] || { note "built $build_dir/bin/FluidX3D"; exit 0; }
fi

# ---- the runs, alternately ----
fx_run() { # log -> MLUPS
  (cd "$build_dir" && ./bin/FluidX3D ${device:+"$device"}) > "$1" 2>&1 ||
    die "FluidX3D failed; see $1"
  grep -o 'Peak MLUPs/s = [0-9]*' "$1" | tail -1 | awk '{print $NF}'
}
ts_run() { # log json -> "two_grid_median two_grid_best in_place_median in_place_best"
  "$tessera" bench --lattice d3q19 --layout soa --collision srt --precision "$tprec" --blocks 1 \
    --cells 16 --gpu-cells "$cells" --repeat 5 --seconds "$seconds" ${device:+--device "$device"} \
    --json "$2" > "$1" 2>&1 || die "tessera bench failed; see $1"
  python3 - "$2" "$tprec" <<'PY'
import json, sys
rows = {r["row"]: r for r in json.load(open(sys.argv[1]))["rows"] if r["hs"] == "gpu"}
k = "d3q19,srt," + sys.argv[2] + ","
print(" ".join("%.1f %.1f" % (rows[k + s]["mlups"], rows[k + s]["mlups_max"])
               for s in ("two_grid", "in_place")))
PY
}

results="$out/results.csv"
echo "run,fluidx3d_peak_mlups,tessera_two_grid_median,tessera_two_grid_best,tessera_in_place_median,tessera_in_place_best" > "$results"
fx=() tg=() tgb=() ip=() ipb=()
for r in $(seq 1 "$runs"); do
  f=$(fx_run "$out/fluidx3d-$r.log")
  read -r a b c d < <(ts_run "$out/tessera-$r.log" "$out/tessera-$r.json")
  [[ -n "$f" ]] || die "no 'Peak MLUPs/s' in $out/fluidx3d-$r.log"
  note "run $r: FluidX3D $f MLUPS (best round); tessera two grids $a (best $b), in place $c (best $d)"
  echo "$r,$f,$a,$b,$c,$d" >> "$results"
  fx+=("$f") tg+=("$a") tgb+=("$b") ip+=("$c") ipb+=("$d")
done
mf=$(median "${fx[@]}")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "D3Q19 SRT, ${cells}^3 cells, FluidX3D $storage vs tessera $tprec, medians of $runs runs ($results)"
printf '  %-28s %10s %10s\n' "" "MLUPS" "/ FluidX3D"
printf '  %-28s %10s\n' "FluidX3D (best round)" "$mf"
for x in "two grids:tg" "two grids, best:tgb" "in place:ip" "in place, best:ipb"; do
  name=${x%%:*} arr="${x##*:}[@]"; m=$(median "${!arr}")
  printf '  %-28s %10s %10s\n' "tessera $name" "$m" "$(ratio "$m" "$mf")"
done
