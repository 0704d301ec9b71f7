#!/usr/bin/env python3
"""Poiseuille flow between two velocity faces (tests/configs/inlet/poiseuille.json).
usage: check_inlet.py OUTPUT_FOLDER

A channel of H = 16 cells between resting walls (y- and y+, half-way bounce-back), 64
cells long, with the parabolic profile u_x = 4 U s (H - s) / H^2 (U = 0.02, s the distance
from the y- wall) imposed at x- and x+ by bounce-back with the wall-velocity term, each
link's velocity taken where it crosses the face; nu = 1/6, TRT with Lambda = 3/16.

The flux the face imposes is the profile's exact integral, 2/3 U H: the three links of a
cell carry (2/3) u(s) + (1/6) (u(s - 1/2) + u(s + 1/2)) = u(s) + u''/24, and the sum over
the cells is the midpoint sum minus its error. The lattice's Poiseuille flow (exact at
cell centres with this TRT) carries the midpoint sum, 2/3 U H + U / (3 H). So the steady
flow is the plane Poiseuille flow of the peak k U, k = 1 / (1 + 1 / (2 H^2)) = 0.99805:
k times the profile in every cross-section and dp/dx = -8 rho0 nu k U / H^2 (p = c_s^2
rho: the density falls by 24 nu k U / H^2 per cell). (Against the profile of U itself the
error is 1 - k = 0.2%, second order in H.) Checked at step 4000, where the acoustic
transient between the two faces has decayed (the change from step 3000 is checked too):
 - probe "across" (x = 40, cells y = 0..15): u_x against k times the profile, within
   1e-5 of U (measured 4e-7; what is left of the transient, below 1e-5 per 1000 steps);
 - probe "along" (y = 8): u_x the same from x = 10 to 54 within 1e-4 of U (measured
   5e-5); the first and last three cells, where the flow adjusts from the face's profile
   to k times it, within 2e-3 (measured 9.5e-4);
 - the density's slope over x = 16..47 against the gradient, within 1e-4 relative
   (measured 3e-7)."""
import csv
import os
import sys

U, H, NU, RHO0 = 0.02, 16.0, 1.0 / 6.0, 1.0
K = 1.0 / (1.0 + 1.0 / (2.0 * H * H))


def fail(msg):
    print("check_inlet: FAILED: " + msg)
    sys.exit(1)


def last_rows(folder, name):
    with open(os.path.join(folder, "probe_%s.csv" % name)) as f:
        r = list(csv.DictReader(f))
    if [int(x["step"]) for x in r][-2:] != [3000, 4000]:
        fail("%s: steps %s, expected ... 3000, 4000" % (name, [x["step"] for x in r]))
    return r[-2], r[-1]


def profile(y):
    s = y + 0.5
    return K * 4.0 * U * s * (H - s) / (H * H)


before, row = last_rows(sys.argv[1], "across")
worst = 0.0
for y in range(16):
    got, want = float(row["ux_40_%d_0" % y]), profile(y)
    worst = max(worst, abs(got - want) / U)
    drift = abs(got - float(before["ux_40_%d_0" % y])) / U
    if drift > 1e-5:
        fail("u_x(40, %d) still changes: %.3g of U from step 3000 to 4000" % (y, drift))
print("check_inlet: profile at x = 40: largest difference from k times the parabola %.3g of U"
      % worst)
if worst > 1e-5:
    fail("the profile at x = 40 is off by %.3g of U (bound 1e-5)" % worst)

before, row = last_rows(sys.argv[1], "along")
centre = profile(8)
inner = max(abs(float(row["ux_%d_8_0" % x]) - centre) for x in range(10, 55)) / U
ends = max(abs(float(row["ux_%d_8_0" % x]) - centre) for x in (0, 1, 2, 61, 62, 63)) / U
print("check_inlet: u_x(x, 8): largest difference %.3g of U for x = 10..54, %.3g in the "
      "three cells at each face" % (inner, ends))
if inner > 1e-4 or ends > 2e-3:
    fail("u_x along the channel is off (bounds 1e-4 inside, 2e-3 at the faces)")
xs = list(range(16, 48))
rho = [float(row["rho_%d_8_0" % x]) for x in xs]
n = len(xs)
mx, my = sum(xs) / n, sum(rho) / n
slope = sum((x - mx) * (r - my) for x, r in zip(xs, rho)) / sum((x - mx) ** 2 for x in xs)
want = -24.0 * NU * K * U * RHO0 / (H * H)
rel = (slope - want) / want
print("check_inlet: density slope %.7g per cell, Poiseuille %.7g: relative %.3g" % (slope, want, rel))
if abs(rel) > 1e-4:
    fail("the pressure gradient is off by %.3g (bound 1e-4)" % rel)
print("check_inlet: passed")
