#!/usr/bin/env python3
"""Derived quantities against analytic flows: usage:
check_derived.py taylor_green FOLDER STEP NU U0 [OTHER_FOLDER...]
check_derived.py poiseuille FOLDER STEP NU G H

poiseuille: FOLDER holds a run of tests/configs/derived/poiseuille.json, the channel
between no-slip walls at y = 0 and y = H (half-way bounce-back) driven by a body force G
along x, steady at STEP: u = G / (2 NU) y (H - y) at cell centres y = j + 1/2, which TRT
(magic 3/16) gives to round-off. Its vorticity -du/dy = -G / (2 NU) (H - 2y) and strain
rate |du/dy| must hold to 1e-6 of the wall's value in every cell, the cells next to the
walls included: there the derivative is the parabola through the wall (half a cell
away) and the two cells, exact for this profile (measured 1.7e-12 after 16000 steps;
the bound leaves room for the run's distance from the steady state,
e^{-pi^2 NU STEP / H^2} = 1e-12).

taylor_green:
FOLDER holds a run of tests/configs/derived/taylor_green.json (64 x 64 cells, periodic):
u = U0 (sin kx cos ky, -cos kx sin ky) e^{-2 nu k^2 t} at cell centres, k = 2 pi / 64.
At step STEP its VTK file must give, against the analytic fields at that time:
  vorticity (z)   2 U0 k sin kx sin ky e^{-2 nu k^2 t}
  strain_rate     2 U0 k |cos kx cos ky| e^{-2 nu k^2 t}
  q_criterion     U0^2 k^2 (sin^2 kx sin^2 ky - cos^2 kx cos^2 ky) e^{-4 nu k^2 t}
  vorticity_magnitude  |vorticity|
each to 0.5% of its largest value (rms over the cells): central differences of a mode
of 64 cells carry (k^2 / 6) = 0.16% and the lattice's velocity itself about 0.1%.
The pressure p - p_ref = c_s^2 (rho - rho0) is held to the analytic
rho0 U0^2 / 4 (cos 2kx + cos 2ky) e^{-4 nu k^2 t} (for this phase of the vortex) to 1%
of its largest value (rms; measured 0.24%): the run starts from a uniform density, and
the sound waves that sets off ride on the pressure.
Every OTHER_FOLDER (the same case on other blocks or hardware) must give the same
arrays, bit for bit."""
import math
import sys

from vtk_cells import cell_tuples as arrays, first_difference


def fail(msg):
    print("check_derived: FAILED: " + msg)
    sys.exit(1)


def poiseuille(folder, step, nu, g, h):
    got = arrays(folder, step)
    wall = g / (2 * nu) * h
    cells = len(got["strain_rate"])
    nx = cells // h
    worst = 0.0
    for j in range(h):
        y = j + 0.5
        dudy = g / (2 * nu) * (h - 2 * y)
        for i in range(nx):
            k = j * nx + i
            worst = max(worst, abs(got["strain_rate"][k][0] - abs(dudy)),
                        abs(got["vorticity"][k][2] + dudy))
    print("poiseuille: largest error %.3e of the wall's shear rate %.3e (%.2e)"
          % (worst, wall, worst / wall))
    if not worst <= 1e-6 * wall:
        fail("the strain rate or vorticity is off by %.3e (wall shear rate %.3e)" % (worst, wall))
    print("check_derived: ok")


def main():
    if sys.argv[1] == "poiseuille":
        poiseuille(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]),
                   int(sys.argv[6]))
        return
    folder, step, nu, u0 = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    got = arrays(folder, step)
    n = 64
    k = 2 * math.pi / n
    decay = math.exp(-2 * nu * k * k * step)
    want = {"vorticity": [], "strain_rate": [], "q_criterion": [], "vorticity_magnitude": [],
            "pressure": []}
    for j in range(n):
        for i in range(n):
            x, y = k * (i + 0.5), k * (j + 0.5)
            w = 2 * u0 * k * math.sin(x) * math.sin(y) * decay
            want["vorticity"].append(w)
            want["vorticity_magnitude"].append(abs(w))
            want["strain_rate"].append(2 * u0 * k * abs(math.cos(x) * math.cos(y)) * decay)
            want["q_criterion"].append(u0 * u0 * k * k * (math.sin(x) ** 2 * math.sin(y) ** 2 -
                                                           math.cos(x) ** 2 * math.cos(y) ** 2) * decay ** 2)
            want["pressure"].append(0.25 * u0 * u0 * (math.cos(2 * x) + math.cos(2 * y)) * decay ** 2)
    for name, values in want.items():
        column = [t[2] if name == "vorticity" else t[0] for t in got[name]]
        if name == "vorticity" and max(abs(t[0]) + abs(t[1]) for t in got[name]) != 0:
            fail("vorticity has x or y components in a 2-D flow")
        peak = max(abs(v) for v in values)
        rms = math.sqrt(sum((a - b) ** 2 for a, b in zip(column, values)) / len(values))
        bound = 0.01 if name == "pressure" else 0.005
        print("%-20s rms error %.3e of its peak %.3e (%.3f%%; bound %.1f%%)"
              % (name, rms, peak, 100 * rms / peak, 100 * bound))
        if not rms <= bound * peak:
            fail("%s: rms error %.3e, more than %.1f%% of %.3e" % (name, rms, 100 * bound, peak))
    differs = first_difference(got, sys.argv[6:], step, list(want))
    if differs:
        fail("%s's %s differs from %s's" % (differs[0], differs[1], folder))
    for other in sys.argv[6:]:
        print("%s: the same arrays, bit for bit" % other)
    print("check_derived: ok")


main()
