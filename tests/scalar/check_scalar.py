#!/usr/bin/env python3
"""Checks runs of the passive scalar (sweeps/scalar) against its discrete solution.

  check_scalar.py wave OUT STEPS UX D PERIODS AMPLITUDE VALUE
      OUT: a periodic domain, a uniform flow (UX along x) and the scalar's sine wave along
      x (PERIODS over the row, AMPLITUDE about VALUE), D its diffusivity. The row probe
      probe_row_<STEPS>.csv against the scheme's own solution: a Fourier mode
      exp(i theta j) of the finite-volume step (upwind donor cell, central diffusion) is
      multiplied by g = 1 - (1 - e^{-i theta}) (UX - D (e^{i theta} - 1)) per step, so
      c_j = VALUE + AMPLITUDE Im(g^STEPS e^{i theta (j + 1/2)}). Tolerance 1e-11: the
      values are O(1) and each step rounds a few operations per cell (2e-16 each), so a
      few hundred steps leave round-off near 1e-13; a wrong flux, sign or face velocity
      is off by more than 1e-4. The continuum's decay exp(-(D + UX (1 - UX) / 2) k^2 t) is
      printed beside it (the upwind scheme's numerical diffusion UX (1 - UX) / 2).
  check_scalar.py conserved OUT TOL
      OUT: series.csv's column scalar (the total) stays within TOL (relative) of its first
      row: the fluxes between cells cancel bit for bit, closed faces carry none."""
import cmath
import csv
import glob
import math
import os
import sys


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def wave(out, steps, ux, d, periods, amplitude, value):
    probe = rows(os.path.join(out, "probe_row_%06d.csv" % steps))
    n = len(probe)
    theta = 2 * math.pi * periods / n
    g = 1 - (1 - cmath.exp(-1j * theta)) * (ux - d * (cmath.exp(1j * theta) - 1))
    worst = 0.0
    for r in probe:
        j = int(float(r["x"]))
        want = value + amplitude * (g ** steps * cmath.exp(1j * theta * (j + 0.5))).imag
        worst = max(worst, abs(float(r["c"]) - want))
    continuum = math.exp(-(d + ux * (1 - ux) / 2) * theta * theta * steps)
    print(f"{n} cells, {steps} steps: |g|^n = {abs(g) ** steps:.12f} (continuum with the "
          f"numerical diffusion {continuum:.12f}); largest difference from the discrete "
          f"solution {worst:.3e}")
    if worst > 1e-11:
        raise SystemExit(f"the scalar differs from the scheme's solution by {worst:.3e} (> 1e-11)")


def conserved(out, tol):
    series = rows(os.path.join(out, "series.csv"))
    first = float(series[0]["scalar"])
    worst = max(abs(float(r["scalar"]) - first) for r in series) / abs(first)
    print(f"total {first!r} over {len(series)} rows: largest relative change {worst:.3e}")
    if worst > tol:
        raise SystemExit(f"the scalar's total changed by {worst:.3e} (> {tol:g}) relative")


def main(argv):
    if len(argv) >= 9 and argv[1] == "wave":
        wave(argv[2], int(argv[3]), *(float(a) for a in argv[4:9]))
    elif len(argv) == 4 and argv[1] == "conserved":
        conserved(argv[2], float(argv[3]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
