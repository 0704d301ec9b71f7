#!/usr/bin/env bash
# The Rayleigh-Benard onset of the d2q37 gas, the long version of the suite's
# d2q37_onset test (two runs at H = 32): growth rates at four Rayleigh numbers around
# the onset for H = 16, 32 and 48 cells, Ra_c from a line through each set
# (tests/validation/check_d2q37_onset.py; configurations from scripts/d2q37_onset.py).
# The bound, 3% of 1707.76, is checked at H = 32 and 48; H = 16, whose onset lies near
# 1950, is printed to show the convergence. Usage: scripts/d2q37-onset.sh [BUILD_DIR]
# (default build/). About 4 minutes on 2 cores (Release build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
# H, steps, the window of the fit (the rates scale as 1 / H^2), the Rayleigh numbers
for set in "16 10000 3000 10000 1850 1900 1950 2000" "32 40000 12000 40000 1650 1700 1750 1800" \
           "48 90000 27000 90000 1650 1700 1750 1800"; do
  set -- $set
  folders=()
  for ra in "${@:5}"; do
    dir="$work/h$1_ra$ra"
    mkdir -p "$dir"
    /usr/bin/python3 scripts/d2q37_onset.py "$ra" "$1" "$2" > "$dir.json"
    "$build/apps/tessera" run "$dir.json" --output "$dir" --overwrite >/dev/null
    folders+=("$dir")
  done
  echo "== H = $1"
  if [[ $1 == 16 ]]; then
    /usr/bin/python3 tests/validation/check_d2q37_onset.py 1 "$3" "$4" "${folders[@]}" || status=1
  else
    /usr/bin/python3 tests/validation/check_d2q37_onset.py 0.03 "$3" "$4" "${folders[@]}" || status=1
  fi
done
exit $status
