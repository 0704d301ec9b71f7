#!/usr/bin/env python3
"""A ramped velocity inlet fills a closed box by exactly the flux it is asked for.

usage: check_ramp.py FOLDER U N T

The box (tests/configs/inlet/ramp.json) is periodic across the inlet face, closed by a
no-slip wall opposite it, so mass changes only through the inlet. A uniform inlet of
velocity U on a face of N cells adds rho0 U per cell and step (D2Q9: its three links into
the domain carry 2 w_i rho0 c_i.u / c_s^2, summing to rho0 U), times the ramp's factor
s(k) = (1 - cos(pi k / T)) / 2 of step k (k steps done; 1 from k = T on). So the mass
after n steps is mass(0) + N rho0 U sum_{k<n} s(k), rho0 = 1. series.csv's rows must
follow it to 1e-11 absolute: the mass is a sum of ~128 cell densities near 1 in double
precision, whose rounding (about 1e-13 here) is far below that, while a ramp of another
shape or length (linear, or one step off) is off by more than 1e-3."""
import csv
import math
import os
import sys


def fail(msg):
    print("check_ramp: FAILED: " + msg)
    sys.exit(1)


folder, U, N, T = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
with open(os.path.join(folder, "series.csv")) as f:
    rows = list(csv.DictReader(f))
if len(rows) < 3:
    fail("%d rows in series.csv" % len(rows))
steps = [int(r["step"]) for r in rows]
mass = [float(r["mass"]) for r in rows]
if steps[-1] <= T:
    fail("the run ends at step %d, within the ramp of %g steps" % (steps[-1], T))
cells = None
worst = 0.0
for n, m in zip(steps, mass):
    s = sum(0.5 * (1 - math.cos(math.pi * k / T)) if k < T else 1.0 for k in range(n))
    if cells is None:  # the box's cells from the first row: mass(0) = cells
        cells = round(m - N * U * s)
    want = cells + N * U * s
    worst = max(worst, abs(m - want))
    if abs(m - want) > 1e-11:
        fail("step %d: mass %.17g, expected %.17g (the ramp's flux)" % (n, m, want))
print("check_ramp: %d rows follow the ramp's flux within %.2g (U = %g, %d cells, T = %g)"
      % (len(rows), worst, U, N, T))
