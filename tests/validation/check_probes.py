#!/usr/bin/env python3
"""Time-series probes of tests/configs/output/probe_series.json against plane Couette flow.
usage: check_probes.py OUTPUT_FOLDER

A channel of 16 cells between a wall at rest (y-) and a lid moving at U = 0.05 (y+), with
half-way bounce-back: the steady profile u_x(y) = U y / 16 is exact on the lattice, and
after 3000 steps the slowest transient (exp(-nu (pi/16)^2 t) = 4e-9) is gone. Trilinear
interpolation is exact on a linear field, so:
 - probe "seam" at (1.3, 8.3, 0.5), between cells of the two blocks (and ranks): U 8.3/16;
 - probe "near_wall" at y = 0.2, within half a cell of the wall: the nearest centre's
   value, U 0.5/16 (no extrapolation);
 - line probe "across" with series: cells y = 6..9, U (y + 0.5)/16, columns named
   <quantity column>_<x>_<y>_<z>;
each within 1e-7 relative (the transient and round-off), u_y within 1e-12, one row per
sample at steps 1000, 2000, 3000 (near_wall: 1500, 3000), and every file in the manifest."""
import csv
import json
import os
import sys

U, H = 0.05, 16.0


def fail(msg):
    print("check_probes: FAILED: " + msg)
    sys.exit(1)


def rows(folder, name, steps):
    with open(os.path.join(folder, "probe_%s.csv" % name)) as f:
        r = list(csv.DictReader(f))
    if [int(x["step"]) for x in r] != steps:
        fail("%s: steps %s, expected %s" % (name, [x["step"] for x in r], steps))
    return r


def close(what, got, want, rel=1e-7):
    if abs(got - want) > rel * abs(want):
        fail("%s = %.17g, expected %.17g (relative %.2g)" % (what, got, want, (got - want) / want))


folder = sys.argv[1]
seam = rows(folder, "seam", [1000, 2000, 3000])
if list(seam[0].keys()) != ["step", "ux", "uy", "uz"]:
    fail("seam: columns %s" % list(seam[0].keys()))
close("seam ux", float(seam[-1]["ux"]), U * 8.3 / H)
if abs(float(seam[-1]["uy"])) > 1e-12:
    fail("seam uy = %s" % seam[-1]["uy"])
wall = rows(folder, "near_wall", [1500, 3000])
close("near_wall ux", float(wall[-1]["ux"]), U * 0.5 / H)
across = rows(folder, "across", [1000, 2000, 3000])
want_cols = ["step"] + ["%s_2_%d_0" % (c, y) for y in range(6, 10) for c in ("ux", "uy", "uz", "rho")]
if list(across[0].keys()) != want_cols:
    fail("across: columns %s" % list(across[0].keys()))
for y in range(6, 10):
    close("across ux at y=%d" % y, float(across[-1]["ux_2_%d_0" % y]), U * (y + 0.5) / H)
with open(os.path.join(folder, "manifest.json")) as f:
    listed = json.load(f)["files"]
for name in ("probe_seam.csv", "probe_near_wall.csv", "probe_across.csv"):
    if name not in listed:
        fail("%s is not in the manifest" % name)
print("check_probes: seam %.10g (exact %.10g), near_wall %.10g, across 4 cells x 3 rows: OK" %
      (float(seam[-1]["ux"]), U * 8.3 / H, float(wall[-1]["ux"])))
