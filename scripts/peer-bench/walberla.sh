#!/usr/bin/env bash
# tessera against waLBerla on the same lid-driven cavity: builds waLBerla's UniformGrid
# benchmark (apps/benchmarks/UniformGrid) from a waLBerla source tree you provide, then
# runs it and tessera alternately and prints the median MLUPS of each and their ratio.
#
# Usage: scripts/peer-bench/walberla.sh [options] WALBERLA_SRC
# See scripts/peer-bench/README.md for what is compared and how.
#
# Nothing is downloaded and nothing of waLBerla is copied into this tree: waLBerla is
# built out of its own source tree into --build-dir (by default WALBERLA_SRC-build, beside
# it), and only configurations and logs go to --out (by default out/peer-bench/walberla).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=common.sh
. "$here/common.sh"

usage() {
  cat <<EOF
usage: scripts/peer-bench/walberla.sh [options] WALBERLA_SRC

  WALBERLA_SRC          a waLBerla source tree (github lssfau/walberla)

options (defaults in brackets):
  --build-dir DIR       waLBerla build folder; dp/ and sp/ below it [WALBERLA_SRC-build]
  --tessera PATH        the tessera binary [$root/build/apps/tessera]
  --cmake PATH          the cmake to configure waLBerla with; it must be at least the
                        version WALBERLA_SRC's CMakeLists.txt asks for [cmake]
  --jobs N              parallel build jobs; the build runs under nice -n 19 [2]
  --build-only          build waLBerla's benchmark and stop
  --cells N             edge of the cubic cavity in fluid cells [128]
  --steps S             time steps per run [300]
  --warmup W            untimed steps at the start; steps W+1..S are timed [100]
  --runs R              runs of each code per case [3]
  --configs LIST        PxT: P MPI processes of T OpenMP threads [1x1,2x1,1x2]
                        (waLBerla is built without OpenMP: for T > 1 it runs P*T
                        processes of one thread)
  --collisions LIST     srt,trt [srt,trt]
  --precisions LIST     dp,sp [dp,sp]
  --lid FACE            tessera's moving wall, y+ or z+ (waLBerla's is z+) [y+]
  --out DIR             configurations, logs and results.csv [$root/out/peer-bench/walberla]
  -h, --help            this text
EOF
}


# ---------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------
src="" build_dir="" tessera="$root/build/apps/tessera" cmake_bin="cmake" jobs=2
build_only=0 cells=128 steps=300 warmup=100 runs=3
configs="1x1,2x1,1x2" collisions="srt,trt" precisions="dp,sp" lid="y+"
out="$root/out/peer-bench/walberla"

while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir)  need_arg "$@"; build_dir=$2; shift 2 ;;
    --tessera)    need_arg "$@"; tessera=$2; shift 2 ;;
    --cmake)      need_arg "$@"; cmake_bin=$2; shift 2 ;;
    --jobs)       need_arg "$@"; jobs=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    --cells)      need_arg "$@"; cells=$2; shift 2 ;;
    --steps)      need_arg "$@"; steps=$2; shift 2 ;;
    --warmup)     need_arg "$@"; warmup=$2; shift 2 ;;
    --runs)       need_arg "$@"; runs=$2; shift 2 ;;
    --configs)    need_arg "$@"; configs=$2; shift 2 ;;
    --collisions) need_arg "$@"; collisions=$2; shift 2 ;;
    --precisions) need_arg "$@"; precisions=$2; shift 2 ;;
    --lid)        need_arg "$@"; lid=$2; shift 2 ;;
    --out)        need_arg "$@"; out=$2; shift 2 ;;
    -h|--help)    usage; exit 0 ;;
    -*)           die "unknown option '$1' (see --help)" ;;
    *)            [[ -z "$src" ]] || die "one WALBERLA_SRC only, got '$src' and '$1'"
                  src=$1; shift ;;
  esac
done
[[ -n "$src" ]] || { usage >&2; exit 2; }

is_uint() { [[ "$1" =~ ^[0-9]+$ ]]; }
for v in jobs cells steps warmup runs; do
  is_uint "${!v}" || die "--$v must be a non-negative integer, got '${!v}'"
done
(( jobs >= 1 && cells >= 2 && runs >= 1 )) || die "--jobs, --runs must be >= 1 and --cells >= 2"
(( steps > warmup )) || die "--steps ($steps) must exceed --warmup ($warmup)"
[[ "$lid" == "y+" || "$lid" == "z+" ]] || die "--lid must be y+ or z+, got '$lid'"
IFS=, read -r -a config_list <<<"$configs"
IFS=, read -r -a collision_list <<<"$collisions"
IFS=, read -r -a precision_list <<<"$precisions"
for c in "${config_list[@]}"; do
  [[ "$c" =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || die "--configs: '$c' is not PxT (e.g. 2x1)"
done
for c in "${collision_list[@]}"; do
  [[ "$c" == srt || "$c" == trt ]] || die "--collisions: '$c' is neither srt nor trt"
done
for p in "${precision_list[@]}"; do
  [[ "$p" == dp || "$p" == sp ]] || die "--precisions: '$p' is neither dp nor sp"
done

[[ -f "$src/CMakeLists.txt" && -f "$src/apps/benchmarks/UniformGrid/UniformGrid.cpp" ]] ||
  die "'$src' is not a waLBerla source tree (no apps/benchmarks/UniformGrid/UniformGrid.cpp)"
src=$(cd "$src" && pwd)
[[ -n "$build_dir" ]] || build_dir="${src%/}-build"
case "$(realpath -m "$build_dir")/" in
  "$root"/*) die "--build-dir must lie outside the tessera tree ($root)" ;;
esac
# One copy of the script per build folder at a time: two builds in one folder spoil each
# other (and two benchmarks on one machine time each other). The lock goes with the
# process.
mkdir -p "$build_dir"
command -v flock >/dev/null || die "flock not found (Debian: util-linux)"
exec 9>"$build_dir/.peer-bench.lock"
flock -n 9 || die "another copy of this script is using $build_dir (lock file $build_dir/.peer-bench.lock); wait for it to end, or pass another --build-dir"

# ---------------------------------------------------------------------------------------
# Dependencies: check all, then fail once, naming the Debian packages
# ---------------------------------------------------------------------------------------
missing=()   # lines of the error message
cxx=${CXX:-c++}
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT

# a C++20 compiler (waLBerla uses concepts and ranges)
if ! command -v "$cxx" >/dev/null; then
  missing+=("no C++ compiler '$cxx' (Debian: build-essential)")
elif ! printf 'template<class T> requires(sizeof(T) > 0) struct A {};\nint main() { A<int> a; (void)a; }\n' |
       "$cxx" -std=c++20 -x c++ - -o "$probe_dir/cxx20" 2>/dev/null; then
  missing+=("'$cxx' cannot compile C++20 (waLBerla needs g++ >= 10 or clang++ >= 12)")
fi
command -v make >/dev/null || missing+=("no make (Debian: build-essential)")
command -v mpicxx >/dev/null || missing+=("no MPI compiler wrapper mpicxx (Debian: libopenmpi-dev)")
command -v mpirun >/dev/null || missing+=("no mpirun (Debian: openmpi-bin)")

# cmake, at least the version waLBerla asks for
cmake_need=$(sed -n 's/^[[:space:]]*cmake_minimum_required[[:space:]]*([[:space:]]*VERSION[[:space:]]*\([0-9.]*\).*/\1/Ip' \
             "$src/CMakeLists.txt" | head -n 1)
if ! command -v "$cmake_bin" >/dev/null; then
  missing+=("no cmake '$cmake_bin' (Debian: cmake)")
else
  cmake_have=$("$cmake_bin" --version | sed -n '1s/^cmake version \([0-9.]*\).*/\1/p')
  if [[ -n "$cmake_need" && "$(printf '%s\n%s\n' "$cmake_need" "$cmake_have" | sort -V | head -n 1)" != "$cmake_need" ]]; then
    missing+=("waLBerla needs CMake >= $cmake_need; '$cmake_bin' is $cmake_have. On Debian 12 take the
    one from bookworm-backports into a folder of its own, leaving the system's alone, and pass it
    with --cmake (see scripts/peer-bench/README.md):
      apt-get download cmake/bookworm-backports cmake-data/bookworm-backports   # backports in apt's sources
      for d in cmake*.deb; do dpkg-deb -x \"\$d\" \$HOME/cmake-bpo; done
      ... --cmake \$HOME/cmake-bpo/usr/bin/cmake")
  fi
fi

# SQLite: the benchmark links waLBerla's sqlite module, which compiles the amalgamation
# extern/sqlite3/sqlite3.c. Some snapshots of the tree lack that 9 MB file; then the
# module is linked against the system's libsqlite3 instead (the benchmark is run with
# logToSqlDB false, so SQLite is linked but not used).
system_sqlite=0
if [[ ! -f "$src/extern/sqlite3/sqlite3.c" ]]; then
  system_sqlite=1
  printf '#include <sqlite3.h>\nint main(void) { return sqlite3_libversion_number() > 0 ? 0 : 1; }\n' >"$probe_dir/sq.c"
  if ! "${CC:-cc}" "$probe_dir/sq.c" -lsqlite3 -o "$probe_dir/sq" 2>/dev/null; then
    missing+=("$src/extern/sqlite3/sqlite3.c is missing and there is no system SQLite to link instead (Debian: libsqlite3-dev)")
  fi
fi

# One process: UniformGrid.cpp hands CartesianDistribution a null process map when it
# runs on one process, and CartesianDistribution (src/blockforest/loadbalancing/
# Cartesian.cpp) has dereferenced that map without a null check since 2019, so the
# benchmark crashes on one process. Where the tree still has that code, the build
# compiles a copy of that one file with the null check, in the build folder. It is
# set-up code (block to process assignment), not part of what is timed.
cartesian_cpp="$src/src/blockforest/loadbalancing/Cartesian.cpp"
cartesian_fix=0
if [[ -f "$cartesian_cpp" ]] && grep -q '!processIdMap_->empty()' "$cartesian_cpp" &&
   ! grep -q 'processIdMap_ != nullptr' "$cartesian_cpp"; then
  cartesian_fix=1
fi

# tessera itself (built by scripts/build.sh, not here)
if (( ! build_only )); then
  [[ -x "$tessera" ]] || missing+=("no tessera binary at '$tessera' (build it: scripts/build.sh, or pass --tessera)")
fi

if (( ${#missing[@]} > 0 )); then
  {
    echo "peer-bench: error: missing what the waLBerla comparison needs:"
    printf '  - %s\n' "${missing[@]}"
    echo "  (Debian packages: apt-get update && apt-get install --no-install-recommends PACKAGES)"
  } >&2
  exit 1
fi

# ---------------------------------------------------------------------------------------
# Build waLBerla's UniformGridBenchmark, once per precision (real_t is a build option)
# ---------------------------------------------------------------------------------------
# CMake settings: Release, MPI on; OpenMP, Python, code generation, GPUs, documentation,
# tests, tools, tutorials, examples, showcases and the v8 core all off; -march=native as
# tessera's kernels (TESSERA_NATIVE); no download whatsoever (FetchContent disconnected,
# submodules not touched). Only the benchmark target is built.
#
# Subnormal numbers: tessera turns on flush-to-zero / denormals-are-zero on its threads
# (docs/physics.md); waLBerla's benchmark does not. Subnormals can appear in SP where
# the disturbance from the lid has not yet arrived or has decayed, and slow a kernel
# severalfold, so the benchmark is linked with the compiler's crtfastmath.o, which sets
# the same two bits at start-up (each process has one thread) and changes no code.
# Floating-point contraction is left as each code has it: tessera's kernels are built
# with -ffp-contract=off, waLBerla with GCC's default for C++ (FMA contraction on).
walberla_bin() { echo "$build_dir/$1/apps/benchmarks/UniformGrid/UniformGridBenchmark"; }

build_walberla() {
  local prec=$1 dir="$build_dir/$1" double=ON
  [[ "$prec" == sp ]] && double=OFF
  mkdir -p "$dir"
  local crtfast
  crtfast=$("$cxx" -print-file-name=crtfastmath.o)
  local args=(
    -S "$src" -B "$dir"
    -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER="$cxx"
    -DWALBERLA_DOUBLE_ACCURACY="$double"
    -DWALBERLA_BUILD_WITH_MPI=ON
    -DWALBERLA_BUILD_WITH_OPENMP=OFF
    -DWALBERLA_BUILD_WITH_PYTHON=OFF
    -DWALBERLA_BUILD_WITH_CODEGEN=OFF
    -DWALBERLA_BUILD_WITH_CUDA=OFF
    -DWALBERLA_BUILD_WITH_HIP=OFF
    -DWALBERLA_BUILD_WITH_METIS=OFF
    -DWALBERLA_BUILD_WITH_PARMETIS=OFF
    -DWALBERLA_BUILD_WITH_FFTW=OFF
    -DWALBERLA_BUILD_WITH_OPENMESH=OFF
    -DWALBERLA_BUILD_WITH_LIKWID_MARKERS=OFF
    -DWALBERLA_BUILD_WITH_LTO=OFF
    -DWALBERLA_BUILD_WITH_FASTMATH=OFF
    -DWALBERLA_OPTIMIZE_FOR_LOCALHOST=ON
    -DWALBERLA_BUILD_TESTS=OFF
    -DWALBERLA_BUILD_BENCHMARKS=ON
    -DWALBERLA_BUILD_TOOLS=OFF
    -DWALBERLA_BUILD_TUTORIALS=OFF
    -DWALBERLA_BUILD_EXAMPLES=OFF
    -DWALBERLA_BUILD_SHOWCASES=OFF
    -DWALBERLA_BUILD_DOC=OFF
    -DWALBERLA_BUILD_LEGACY_LBM=ON
    -DWALBERLA_ENABLE_V8CORE=OFF
    -DWALBERLA_ENABLE_SWEEPGEN=OFF
    -DWALBERLA_GIT_SUBMODULE_AUTO=OFF
    -DWALBERLA_LOG_SKIPPED=OFF
    -DFETCHCONTENT_FULLY_DISCONNECTED=ON
    -DBUILD_TESTING=OFF
    -DCMAKE_EXE_LINKER_FLAGS="$crtfast"
  )
  # Adjustments to waLBerla's targets, made by a CMake file that runs after waLBerla's
  # top-level CMakeLists.txt (CMAKE_PROJECT_walberla_INCLUDE); the source tree is left
  # untouched, and what the adjustments compile lies in the build folder.
  local hook="$dir/peer_bench_hook.cmake"
  echo "# written by tessera's scripts/peer-bench/walberla.sh; see its comments" >"$hook"
  if (( system_sqlite )); then
    # the sqlite3 target gets an empty source and links the system's libsqlite3
    : >"$dir/peer_bench_sqlite_stub.c"
    cat >>"$hook" <<EOF
function(peer_bench_use_system_sqlite)
  find_package(SQLite3 REQUIRED)
  set_property(TARGET sqlite3 PROPERTY SOURCES "$dir/peer_bench_sqlite_stub.c")
  target_link_libraries(sqlite3 PUBLIC SQLite::SQLite3)
endfunction()
cmake_language(DEFER DIRECTORY "\${CMAKE_SOURCE_DIR}" CALL peer_bench_use_system_sqlite)
EOF
  fi
  if (( cartesian_fix )); then
    # blockforest's CartesianDistribution with the null-map check restored (see above)
    sed -e 's|!processIdMap_->empty()|( processIdMap_ != nullptr \&\& !processIdMap_->empty() )|g' \
        -e 's|#include "Cartesian.h"|#include "blockforest/loadbalancing/Cartesian.h"|' \
        "$cartesian_cpp" >"$dir/peer_bench_Cartesian.cpp"
    cat >>"$hook" <<EOF
function(peer_bench_fix_cartesian)
  get_target_property(sources walberla_blockforest SOURCES)
  set(fixed "")
  set(replaced 0)
  foreach(s IN LISTS sources)
    if(s MATCHES "loadbalancing/Cartesian\\.cpp\$")
      set(s "$dir/peer_bench_Cartesian.cpp")
      math(EXPR replaced "\${replaced} + 1")
    endif()
    list(APPEND fixed "\${s}")
  endforeach()
  if(NOT replaced EQUAL 1)
    message(FATAL_ERROR "peer-bench: did not find loadbalancing/Cartesian.cpp in walberla_blockforest")
  endif()
  set_property(TARGET walberla_blockforest PROPERTY SOURCES "\${fixed}")
endfunction()
cmake_language(DEFER DIRECTORY "\${CMAKE_SOURCE_DIR}" CALL peer_bench_fix_cartesian)
EOF
  fi
  args+=(-DCMAKE_PROJECT_walberla_INCLUDE="$hook")

  note "configuring waLBerla ($prec) in $dir (log: $dir/peer-bench-configure.log)"
  if ! nice -n 19 "$cmake_bin" "${args[@]}" >"$dir/peer-bench-configure.log" 2>&1; then
    tail -n 30 "$dir/peer-bench-configure.log" >&2
    die "configuring waLBerla ($prec) failed; the whole log is $dir/peer-bench-configure.log"
  fi
  note "building UniformGridBenchmark ($prec) with -j$jobs under nice -n 19 (log: $dir/peer-bench-build.log)"
  local t0=$SECONDS
  if ! nice -n 19 "$cmake_bin" --build "$dir" --target UniformGridBenchmark -j "$jobs" \
       >"$dir/peer-bench-build.log" 2>&1; then
    grep -m 20 -E 'error|Error' "$dir/peer-bench-build.log" >&2 || tail -n 30 "$dir/peer-bench-build.log" >&2
    die "building waLBerla's UniformGridBenchmark ($prec) failed; the whole log is $dir/peer-bench-build.log"
  fi
  note "built $(walberla_bin "$prec") in $(( SECONDS - t0 )) s"
}

for p in "${precision_list[@]}"; do build_walberla "$p"; done
if (( build_only )); then exit 0; fi

# ---------------------------------------------------------------------------------------
# The case
# ---------------------------------------------------------------------------------------
# A cubic lid-driven cavity of N^3 fluid cells, nu = 0.0128, lid speed 0.05 along x,
# D3Q19, incompressible equilibrium with the PDFs stored as f - w_i (waLBerla's
# incompressible model; tessera with lbm.shifted), half-way bounce-back walls, TRT with
# magic parameter 3/16 (both codes' default), at rest with rho = 1 at the start.
#
# tessera: N^3 cells, the walls lie in the ghost layers; blocks [P,1,1] (one per process).
# waLBerla: the outermost layer of cells is the wall (UniformGrid.cpp forces NoSlip on
# five faces and the velocity bounce-back UBB on z+), so its domain has (N+2)^3 cells, of
# which N^3 are fluid; split along x into P blocks of (N+2)/P x (N+2) x (N+2) cells (its
# factorisation gives every factor to x when x has the fewest cells per block). Its
# "pure" split kernel also updates the wall layer, so it is compared by fluid-cell
# updates (MFLUPS), tessera by its cell updates, which are all fluid.
nu=0.0128
lid_speed=0.05
omega=$(awk -v nu="$nu" 'BEGIN { printf "%.17g", 1 / (3 * nu + 0.5) }')
# waLBerla logs its time per outer loop of `inner` steps; tessera prints a progress line
# every `inner` steps. inner = gcd(W, S - W) so that W falls on a boundary.
gcd() { local a=$1 b=$2 t; while (( b )); do t=$(( a % b )); a=$b; b=$t; done; echo "$a"; }
inner=$(gcd "$warmup" $(( steps - warmup )))
outer=$(( steps / inner ))
skip=$(( warmup / inner ))

mkdir -p "$out/configs" "$out/logs"
out=$(cd "$out" && pwd)

tessera_config() {   # P collision precision -> path of the JSON configuration
  local procs=$1 coll=$2 prec=$3 f="$out/configs/tessera-${1}p-$2-$3.json"
  cat >"$f" <<EOF
{
  "domain": { "cells": [$cells, $cells, $cells], "blocks": [$procs, 1, 1], "periodic": [false, false, false] },
  "steps": $steps,
  "lbm": { "lattice": "d3q19", "cpu_layout": "soa", "collision": "$coll", "precision": "$prec",
           "viscosity": $nu, "shifted": true },
  "boundaries": { "$lid": { "kind": "moving", "velocity": [$lid_speed, 0, 0] } },
  "output": { "folder": "$out/tessera-run", "progress_every": $inner }
}
EOF
  echo "$f"
}

walberla_config() {  # P -> path of the parameter file
  local procs=$1 edge=$(( cells + 2 )) f="$out/configs/walberla-${1}p.prm"
  (( edge % procs == 0 )) ||
    die "waLBerla needs equal blocks: $edge cells (N + 2 wall layers) do not split into $procs along x"
  cat >"$f" <<EOF
UniformGrid
{
   // (N+2)^3 cells including the wall layer, split along x into one block per process
   xCells $(( edge / procs ));
   yCells $edge;
   zCells $edge;
   xWeight 1; yWeight 1; zWeight 1;
   blocksPerProcess 1;

   outerTimeSteps $outer;   // $outer x $inner = $steps steps; the first $skip loops are not timed
   innerTimeSteps $inner;
   logToSqlDB false;

   omega $omega;            // nu = $nu
   velocity $lid_speed;     // UBB on the z+ face, along x
}
EOF
  echo "$f"
}

# mpirun as this project runs it; Open MPI refuses root unless told, and more ranks than
# cores need --oversubscribe.
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
mpirun_for() {  # ranks -> mpirun arguments
  local a=(-np "$1" --bind-to none)
  (( $1 <= $(nproc) )) || a+=(--oversubscribe)
  echo "${a[@]}"
}

# ---------------------------------------------------------------------------------------
# Measurements: one run -> MLUPS of steps W+1..S on stdout
# ---------------------------------------------------------------------------------------
# tessera: `tessera run` prints "step K/S  M MLUPS ..." every `inner` steps, M over those
# steps (rank 0's wall clock, the ranks are kept in step by the ghost exchange);
# summary.json only has the MLUPS of the whole run. The timed figure combines the
# intervals after W: sum(n_i) / sum(n_i / M_i), i.e. cells * steps / time.
run_tessera() {  # P T collision precision log
  local procs=$1 threads=$2 cfg
  cfg=$(tessera_config "$1" "$3" "$4")
  # shellcheck disable=SC2046
  if ! OMP_NUM_THREADS=$threads mpirun $(mpirun_for "$procs") "$tessera" run "$cfg" --overwrite >"$5" 2>&1; then
    tail -n 20 "$5" >&2; die "tessera failed; log: $5"
  fi
  awk -v w="$warmup" -v s="$steps" '
    /^step [0-9]+\/[0-9]+ +[0-9.]+ MLUPS/ {
      split($2, k, "/"); if (k[1] + 0 > w) { n = k[1] - last; sn += n; st += n / $3 } last = k[1]
    }
    END { if (sn != s - w || st <= 0) exit 1; printf "%.3f\n", sn / st }' "$5" ||
    die "no progress lines for steps $((warmup + 1))..$steps in $5"
}

# waLBerla: each outer loop of `inner` steps logs "[0]  - time: T sec" (the slowest
# process, after a barrier), then "- cells: C" and "- fluid cells: F (...)". MFLUPS of the timed loops:
# fluid cells * steps / sum(T). The counts are checked against (N+2)^3 and N^3.
run_walberla() {  # P collision precision log
  local procs=$1 prm flag=()
  prm=$(walberla_config "$procs")
  [[ "$2" == trt ]] && flag=(--trt)
  # shellcheck disable=SC2046
  if ! (cd "$out/logs" && OMP_NUM_THREADS=1 mpirun $(mpirun_for "$procs") "$(walberla_bin "$3")" "$prm" "${flag[@]}") \
       >"$4" 2>&1; then
    tail -n 20 "$4" >&2; die "waLBerla failed; log: $4"
  fi
  awk -v skip="$skip" -v inner="$inner" -v w="$warmup" -v s="$steps" -v n="$cells" '
    / - time: /        { sub(/.*- time: */, "");        t[++loops] = $1 + 0 }
    / - cells: /       { sub(/.*- cells: */, "");       all = $1 + 0 }
    / - fluid cells: / { sub(/.*- fluid cells: */, ""); fluid = $1 + 0 }
    END {
      if (all != (n + 2) ^ 3 || fluid != n ^ 3) { print "cells " all ", fluid cells " fluid > "/dev/stderr"; exit 1 }
      for (i = skip + 1; i <= loops; ++i) { st += t[i]; sn += inner }
      if (sn != s - w || st <= 0) exit 1
      printf "%.3f\n", fluid * sn / st / 1e6 }' "$4" ||
    die "cannot read the timed loops, or the cell counts differ from the case, in $4"
}


# ---------------------------------------------------------------------------------------
# Interleaved runs
# ---------------------------------------------------------------------------------------
note "case: ${cells}^3 fluid cells, nu = $nu (omega = $omega), lid $lid_speed along x" \
     "(tessera: $lid, waLBerla: z+), D3Q19, $steps steps, steps $((warmup + 1))-$steps timed," \
     "$runs runs each, alternating"
note "tessera: $tessera"
note "waLBerla: $src ($(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo 'no git'))," \
     "UniformGridBenchmark, split pure SoA (fzyx) kernel, incompressible, no OpenMP"
note "logs: $out/logs"
echo
results="$out/results.csv"
echo "config,collision,precision,walberla_config,tessera_mlups,walberla_mflups,tessera_median,walberla_median,ratio" >"$results"
rows=()
for cfg in "${config_list[@]}"; do
  P=${cfg%x*} T=${cfg#*x}
  WP=$(( P * T ))   # waLBerla has no threads: the same cores as processes
  for coll in "${collision_list[@]}"; do
    for prec in "${precision_list[@]}"; do
      label="${cfg} ${coll} ${prec}"
      ts=() ws=()
      for (( r = 1; r <= runs; ++r )); do
        tag="${P}x${T}-${coll}-${prec}-run$r"
        ts+=("$(run_tessera "$P" "$T" "$coll" "$prec" "$out/logs/tessera-$tag.log")")
        ws+=("$(run_walberla "$WP" "$coll" "$prec" "$out/logs/walberla-${WP}x1-${coll}-${prec}-run$r.log")")
        note "$label run $r/$runs: tessera ${ts[-1]} MLUPS, waLBerla ${WP}x1 ${ws[-1]} MFLUPS"
      done
      tm=$(median "${ts[@]}") wm=$(median "${ws[@]}")
      ratio=$(awk -v a="$tm" -v b="$wm" 'BEGIN { printf "%.3f", a / b }')
      rows+=("$(printf '%-4s %-4s %-3s  %-8s  %9.2f  %-24s  %9.2f  %-24s  %6s' \
        "$cfg" "$coll" "$prec" "${WP}x1" "$tm" "${ts[*]}" "$wm" "${ws[*]}" "$ratio")")
      echo "$cfg,$coll,$prec,${WP}x1,${ts[*]},${ws[*]},$tm,$wm,$ratio" >>"$results"
    done
  done
done

echo
echo "tessera MLUPS (= fluid cell updates) vs waLBerla MFLUPS, medians of $runs runs, steps $((warmup + 1))-$steps"
printf '%-4s %-4s %-3s  %-8s  %9s  %-24s  %9s  %-24s  %6s\n' \
  "PxT" "coll" "fp" "waLBerla" "tessera" "(runs)" "waLBerla" "(runs)" "ratio"
printf '%s\n' "${rows[@]}"
echo "ratio = tessera / waLBerla; waLBerla runs P*T processes of 1 thread (built without OpenMP)"
echo "results: $results"
