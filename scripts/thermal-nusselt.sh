#!/usr/bin/env bash
# Steady convection against published Nusselt numbers, the long version of the suite's
# thermal_published_* tests (which run the two Ra 1e4 cases): periodic rolls at Ra 1e4
# (Clever & Busse 1974, 2.661, 1%) and the square cavity with adiabatic sides at Ra 1e4
# and 1e5 (Ouertatani et al. 2008, 2.158 and 3.910; 1% and 2%), Pr 0.71, with the
# configurations of tests/configs/thermal/published_*.json; each run's series must have
# settled before its Nu is compared (tests/validation/check_nusselt.py).
# Usage: scripts/thermal-nusselt.sh [BUILD_DIR] (default build/). About half a minute on
# 2 cores (Release build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for case_ref in "published_periodic_1e4 2.661 0.01" "published_cavity_1e4 2.158 0.01 steady" \
                "published_cavity_1e5 3.910 0.02"; do
  set -- $case_ref
  "$build/apps/tessera" run "tests/configs/thermal/$1.json" --output "$work/$1" >/dev/null
  /usr/bin/python3 tests/validation/check_nusselt.py "$work/$1" "$2" "$3" "$1" ${4:-} || status=1
done
exit $status
