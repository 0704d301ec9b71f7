#!/usr/bin/env bash
# TESSERA_CL_BINARIES: a run on GPU processes writes every OpenCL program it builds into
# the folder as the device's binary (the flow's lbm.cl and the field kit's field.cl here),
# each listed in index.txt with the device and the build options, no temporary file left;
# a folder that does not exist is one error naming it, on every rank, exit status 1.
# Usage: cl_binaries.sh TESSERA WORKDIR, from the source tree.
set -euo pipefail
tessera=$1 work=$2
rm -rf "$work"
mkdir -p "$work/bins"
export OMP_NUM_THREADS=1
TESSERA_CL_BINARIES="$work/bins" mpirun -np 2 --oversubscribe "$tessera" run \
  tests/configs/run_small_cavity_gpu.json --output "$work/run" --set steps=2 > "$work/log" 2>&1
for prog in lbm.cl field.cl; do
  n=$(find "$work/bins" -name "$prog-*.bin" -size +0 | wc -l)
  [[ $n -ge 1 ]] || { echo "no binary of $prog in $work/bins"; exit 1; }
  grep -q "^$prog-[0-9a-f]*\.bin .* -D" "$work/bins/index.txt" || { echo "$prog not in index.txt"; exit 1; }
done
if find "$work/bins" -name '*.tmp' | grep -q .; then echo "a temporary file was left"; exit 1; fi
status=0
TESSERA_CL_BINARIES="$work/missing" mpirun -np 2 --oversubscribe "$tessera" run \
  tests/configs/run_small_cavity_gpu.json --output "$work/run2" --set steps=2 > "$work/log2" 2>&1 || status=$?
[[ $status -ne 0 ]] || { echo "a missing folder was accepted"; exit 1; }
grep -q "TESSERA_CL_BINARIES: cannot write $work/missing/.*(does the folder $work/missing exist?)" \
  "$work/log2" || { echo "the missing folder's message is not there:"; cat "$work/log2"; exit 1; }
echo "cl_binaries: $(wc -l < "$work/bins/index.txt") programs written and listed; a missing folder refused"
