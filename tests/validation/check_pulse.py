#!/usr/bin/env python3
"""A Gaussian temperature pulse advected by a uniform flow in a periodic box, against the
analytic solution of the advection-diffusion equation, at two resolutions in diffusive
scaling (cells and width x 2, velocity / 2, steps x 4: the same physical problem).

The exact solution in 2-D is, summed over the periodic images,
  T = cold + (hot - cold) s0^2 / s^2 exp(-|x - c0 - u t|^2 / (2 s^2)),  s^2 = s0^2 + 2 kappa t,
with kappa = nu / Pr. usage: check_pulse.py CONFIG_1 FOLDER_1 CONFIG_2 FOLDER_2
(the second twice as fine), reading every parameter from the configurations and the
probes (row and column through the pulse's final centre) from the folders.

What is checked, and why these bounds: the D3Q7 scheme with its linear equilibrium is
second order, its leading error a diffusion error of order u^2 (kappa_ij - u_i u_j
terms) and the truncation of the initial Gaussian on the grid; in diffusive scaling
both shrink 4 times per halving of the cell. So the relative L2 error of the finer run
must be at least 3 times smaller than the coarser one's (4 for second order; first
order would give 2), and the finer run within 1% of the pulse's height (measured:
see the printed figures)."""
import csv
import json
import math
import os
import sys


def fail(msg):
    print("check_pulse: FAILED: " + msg)
    sys.exit(1)


def error(config, folder):
    with open(config) as f:
        c = json.load(f)
    n = c["domain"]["cells"]
    steps = c["steps"]
    u = c["lbm"]["initial"]["velocity"]
    kappa = c["lbm"]["viscosity"] / c["thermal"]["prandtl"]
    ini = c["thermal"]["initial"]
    hot, cold = c["thermal"]["hot"], c["thermal"]["cold"]
    s0, c0 = ini["width"], ini["center"]
    s2 = s0 * s0 + 2.0 * kappa * steps
    centre = [c0[a] + u[a] * steps for a in range(2)]
    num = den = 0.0
    cells = 0
    for name in ("row", "column"):
        path = os.path.join(folder, "probe_%s_%06d.csv" % (name, steps))
        with open(path) as f:
            for r in csv.DictReader(f):
                x, y = int(r["x"]) + 0.5, int(r["y"]) + 0.5
                exact = 0.0
                for ix in (-1, 0, 1):
                    for iy in (-1, 0, 1):
                        dx = x - centre[0] + ix * n[0]
                        dy = y - centre[1] + iy * n[1]
                        exact += math.exp(-(dx * dx + dy * dy) / (2.0 * s2))
                exact = cold + (hot - cold) * s0 * s0 / s2 * exact
                num += (float(r["T"]) - exact) ** 2
                den += (exact - cold) ** 2
                cells += 1
    if cells == 0:
        fail("no probe values in " + folder)
    return math.sqrt(num / den), (hot - cold) * s0 * s0 / s2


e1, h1 = error(sys.argv[1], sys.argv[2])
e2, h2 = error(sys.argv[3], sys.argv[4])
print("check_pulse: relative L2 error %.3e (coarse), %.3e (fine), ratio %.2f; pulse height %.4f"
      % (e1, e2, e1 / e2, h2))
if not e1 / e2 >= 3.0:
    fail("the error shrank %.2f times when the cell was halved; second order gives 4" % (e1 / e2))
if not e2 <= 0.01:
    fail("relative L2 error %.3e of the fine run, more than 1%%" % e2)
