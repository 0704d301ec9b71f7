#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (ASan + UBSan) in build-fuzz/ and
# fuzzes each for SECONDS (default 60): message, config, checkpoint and stl, or the TARGETs
# named.
#
# Usage: scripts/fuzz.sh [SECONDS [TARGET...]]
#
# Each target starts from a copy of its seed corpus tests/fuzz/corpus/<target>/ in
# build-fuzz/fuzz-corpus/<target>/ (kept between runs; delete it to start over); the
# seed corpus itself is never written. Crash, leak and timeout inputs go to
# build-fuzz/fuzz-artifacts/<target>/ and the output of each run to
# build-fuzz/fuzz-logs/<target>.log. Exits non-zero, naming the input files, when a
# target found a problem. Installs nothing: needs the Debian packages 'clang' and
# 'libclang-rt-14-dev' (libFuzzer and the sanitizer runtimes) besides the usual
# build dependencies (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-60}
if ! [[ $secs =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS [TARGET...]]   (SECONDS per target, a positive integer; default 60)" >&2
  exit 2
fi
all_targets=(message config checkpoint stl)
targets=("${all_targets[@]}")
if [[ $# -gt 1 ]]; then
  targets=("${@:2}")
  for t in "${targets[@]}"; do
    if ! [[ " ${all_targets[*]} " == *" $t "* ]]; then
      echo "fuzz.sh: no target '$t'; the targets are: ${all_targets[*]}" >&2
      exit 2
    fi
  done
fi

cc=${CC:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "fuzz.sh: '$cc' not found. The fuzz build needs clang with libFuzzer; on Debian:" >&2
  echo "  apt-get install clang libclang-rt-14-dev" >&2
  exit 1
fi
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
  >"$probe_dir/probe.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$probe_dir/probe.c" -o "$probe_dir/probe" \
     >"$probe_dir/probe.log" 2>&1; then
  cat "$probe_dir/probe.log" >&2
  echo "fuzz.sh: '$cc' cannot link a libFuzzer target; on Debian install the runtimes:" >&2
  echo "  apt-get install clang libclang-rt-14-dev" >&2
  exit 1
fi

build="build-fuzz"

echo "== configuring $build/ ($cc, TESSERA_FUZZ=ON, RelWithDebInfo)"
CC=$cc cmake -S . -B "$build" -DTESSERA_FUZZ=ON -DTESSERA_TESTS=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build.configure.log" 2>&1 || {
  cat "$build.configure.log" >&2
  exit 1
}
rm -f "$build.configure.log"
names=("${targets[@]/#/fuzz_}")
echo "== building ${names[*]}"
cmake --build "$build" -j "$(nproc)" --target "${names[@]}"

# UBSan findings stop the run like ASan's (libFuzzer then keeps the input); leaks count.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

failed=()
summary=()
for t in "${targets[@]}"; do
  bin=$build/tests/fuzz/fuzz_$t
  seeds=tests/fuzz/corpus/$t
  work=$build/fuzz-corpus/$t
  art=$build/fuzz-artifacts/$t
  log=$build/fuzz-logs/$t.log
  mkdir -p "$work" "$art" "$(dirname "$log")"
  cp -R "$seeds/." "$work/"
  args=(-max_total_time="$secs" -print_final_stats=1 -timeout=25 -rss_limit_mb=2048
        -artifact_prefix="$art/")
  if [[ -f tests/fuzz/$t.dict ]]; then args+=(-dict="tests/fuzz/$t.dict"); fi

  echo "== fuzzing fuzz_$t for ${secs}s (corpus $work, seeds from $seeds)"
  before=$(date +%s)
  touch "$art/.started"
  if "$bin" "${args[@]}" "$work" 2>&1 | tee "$log"; then rc=0; else rc=$?; fi
  ran=$(($(date +%s) - before))

  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -n 1 || true)
  line="fuzz_$t: ${ran}s, ${execs:-?} executions, ${cov:-no coverage line}"
  if [[ $rc -ne 0 ]]; then
    line+=", FAILED (exit $rc)"
    failed+=("fuzz_$t")
    echo "fuzz_$t failed (exit $rc); inputs kept by libFuzzer:" >&2
    grep -E 'Test unit written to|^artifact_prefix' "$log" >&2 || true
    find "$art" -maxdepth 1 -type f -name '[a-z]*-*' -newer "$art/.started" -print >&2 || true
    echo "reproduce: $bin <input file>" >&2
  fi
  summary+=("$line")
done

echo "== summary (logs in $build/fuzz-logs/)"
printf '%s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: problems found by: ${failed[*]}" >&2
  exit 1
fi
