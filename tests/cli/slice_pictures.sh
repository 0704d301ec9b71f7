#!/usr/bin/env bash
# PNG slices that compare (docs/configuration.md, output.slices): on 2 ranks,
#  - range "first" (the default): the first picture whose values differ fixes the colour
#    range, the run says so once, and a restart from a checkpoint taken after that keeps
#    it: the restarted run's picture equals the uninterrupted run's, byte for byte;
#  - a fixed range [0, 1e-9]: every fluid cell lies above it and takes the colour map's
#    end colour (253, 231, 37), and nothing is said about the range;
#  - series plots: with series_every, series.png (a panel per total: mass and
#    kinetic_energy) is written at the end and listed in the manifest; none with
#    output.series_plots false.
# Usage: slice_pictures.sh TESSERA WORKDIR, from the source tree.
set -euo pipefail
tessera=$1 work=$2
mpi=(mpirun -np 2 --oversubscribe)
config=tests/configs/output/short_cavity.json # 20 steps, slice "mid" every 10
export OMP_NUM_THREADS=1
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"${mpi[@]}" "$tessera" run "$config" --output "$work/whole" --set output.checkpoint_every=10 \
  >"$work/whole.log" 2>&1 || fail "the run failed: $(cat "$work/whole.log")"
n=$(grep -c "^slice 'mid': colours span \[" "$work/whole.log" || true)
[[ $n -eq 1 ]] || fail "expected one statement of the range, got $n: $(cat "$work/whole.log")"
grep -q "the range of its picture of step 10," "$work/whole.log" || fail "$(grep slice "$work/whole.log")"
"${mpi[@]}" "$tessera" run "$config" --output "$work/restarted" \
  --restart "$work/whole/checkpoint_000010.tsrc" >"$work/restarted.log" 2>&1 ||
  fail "the restart failed: $(cat "$work/restarted.log")"
cmp "$work/whole/slice_mid_000020.png" "$work/restarted/slice_mid_000020.png" ||
  fail "the restarted run's picture of step 20 differs (its colour range was not kept)"

"${mpi[@]}" "$tessera" run "$config" --output "$work/fixed" --set 'output.slices[0].range=[0,1e-9]' \
  >"$work/fixed.log" 2>&1 || fail "the fixed-range run failed: $(cat "$work/fixed.log")"
grep -q "colours span" "$work/fixed.log" && fail "a fixed range was stated as found"
/usr/bin/python3 - "$work/fixed/slice_mid_000020.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
pos, idat, w, h = 8, b"", 0, 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, colour = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and colour == 2, "not 8-bit RGB"
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw, rows, prev = zlib.decompress(idat), [], bytearray(3 * w)
for y in range(h):  # undo the PNG row filters
    f, line = raw[y * (3 * w + 1)], bytearray(raw[y * (3 * w + 1) + 1:(y + 1) * (3 * w + 1)])
    for i in range(3 * w):
        a = line[i - 3] if i >= 3 else 0
        b, c = prev[i], prev[i - 3] if i >= 3 else 0
        p = a + b - c
        pred = [0, a, b, (a + b) // 2, a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) else (b if abs(p - b) <= abs(p - c) else c)][f]
        line[i] = (line[i] + pred) & 255
    rows.append(line)
    prev = line
end = sum(1 for line in rows for x in range(w) if tuple(line[3 * x:3 * x + 3]) == (253, 231, 37))
# the field: 16 x 16 cells drawn at 24 pixels each, every one of them above the range
if end < 16 * 16 * 24 * 24:
    sys.exit("FAIL: %d pixels of the end colour, expected the whole field's %d" % (end, 16 * 16 * 24 * 24))
PY
"${mpi[@]}" "$tessera" run "$config" --output "$work/plots" --set output.series_every=5 \
  >"$work/plots.log" 2>&1 || fail "the series run failed: $(cat "$work/plots.log")"
/usr/bin/python3 - "$work/plots" <<'PY'
import json, os, struct, sys
folder = sys.argv[1]
data = open(os.path.join(folder, "series.png"), "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("FAIL: series.png is not a PNG")
w, h = struct.unpack(">II", data[16:24])
# two panels of 120 pixels and their names, the time axis: wider than tall, over 300 high
if not (w > h > 300):
    sys.exit("FAIL: series.png is %d x %d pixels" % (w, h))
if "series.png" not in json.load(open(os.path.join(folder, "manifest.json")))["files"]:
    sys.exit("FAIL: the manifest does not list series.png")
PY
"${mpi[@]}" "$tessera" run "$config" --output "$work/no_plots" --set output.series_every=5 \
  --set output.series_plots=false >"$work/no_plots.log" 2>&1 || fail "$(cat "$work/no_plots.log")"
[[ ! -e $work/no_plots/series.png ]] || fail "series.png written with series_plots false"
echo "ok"
