#!/usr/bin/env python3
"""c_D, c_L and the pressure difference of the DFG benchmark 2D-1 from tessera's output.
usage: dfg_cylinder.py FOLDER D [FOLDER D ...]

Each FOLDER is a run of configs/cylinder_2d.json at D cells across the cylinder (its
centre 2 D from the inlet and from the lower wall, the channel 4.1 D high, the inflow's
peak 0.05 so that U_mean = 2/3 of it). From the last row of series.csv: tessera's
cylinder.cd and cylinder.cl (the config's "forces": 2 F / (rho0 U_mean^2 D), per cell of
depth), checked against the same from cylinder.fx and cylinder.fy. The pressure
difference between the front and the back point of the cylinder, in the benchmark's units
(rho = 1, U_mean = 0.2, D = 0.1: times 0.04 / U_mean^2 of the lattice's), from point
probes 1/2, 3/2 and 5/2 cells from each point along the centre line, extrapolated to the
surface by the parabola through them, (15 p1 - 10 p2 + 3 p3) / 8 (p = c_s^2 rho; linear
extrapolation from the first two gives 0.2% less at D = 40). A FOLDER whose probes show the
pressure quantity (column p: configs/cylinder_2d_si.json with "quantities": ["pressure"])
gives it in Pa in the benchmark's units already.

Where the FOLDER holds surface files (output.surface_every; lattice units), the last one
gives c_D from the surface, 2 sum(area (-p n + tau))_x / (U_mean^2 D), against the
momentum exchange's, and the front-back pressure difference of the surface's points
nearest the centre line (at the cells' centres, about half a cell off the wall, not
extrapolated)."""
import csv
import glob
import os
import sys

# Schaefer & Turek (1996): the ranges; John (2004) and Nabh: the reference values
RANGES = {"cD": (5.57, 5.59), "cL": (0.0104, 0.0110), "dp": (0.1172, 0.1176)}
REF = {"cD": 5.57953523384, "cL": 0.010618948146, "dp": 0.11752016697}
U_MEAN = 2.0 / 3.0 * 0.05


def last(folder, name, column):
    with open(os.path.join(folder, name)) as f:
        rows = list(csv.DictReader(f))
    return float(rows[-1][column]), rows[-1]["step"]


args = sys.argv[1:]
for folder, d in zip(args[0::2], args[1::2]):
    d = float(d)
    fx, step = last(folder, "series.csv", "cylinder.fx")
    fy, _ = last(folder, "series.csv", "cylinder.fy")
    with open(os.path.join(folder, "probe_front_1.csv")) as f:
        si = "p" in next(csv.reader(f))  # the pressure quantity, in Pa
    p = {"%s_%d" % (s, k): last(folder, "probe_%s_%d.csv" % (s, k), "p" if si else "rho")[0]
         / (1.0 if si else 3.0) for s in ("front", "back") for k in (1, 2, 3)}
    front = (15 * p["front_1"] - 10 * p["front_2"] + 3 * p["front_3"]) / 8
    back = (15 * p["back_1"] - 10 * p["back_2"] + 3 * p["back_3"]) / 8
    got = {"cD": last(folder, "series.csv", "cylinder.cd")[0],
           "cL": last(folder, "series.csv", "cylinder.cl")[0],
           "dp": (front - back) * (1.0 if si else 0.04 / U_MEAN ** 2)}
    for k, f in (("cD", fx), ("cL", fy)):
        # in SI runs F is in N per metre of depth times the cell's depth: its coefficient
        # is checked in lattice runs
        if not si and abs(got[k] - 2 * f / (U_MEAN ** 2 * d)) > 1e-12 * abs(got[k]):
            sys.exit("dfg_cylinder: %s in series.csv is not 2 F / (rho0 U^2 D)" % k)
    surf = sorted(glob.glob(os.path.join(folder, "surface_cylinder_*.csv")))
    if surf and not si:
        with open(surf[-1]) as f:
            pts = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
        sx = sum(r["area"] * (-r["pressure"] * r["normal_x"] + r["wall_shear_stress_x"])
                 for r in pts)
        by = sorted(pts, key=lambda r: abs(r["angle"]))
        back = (by[0]["pressure"] + by[1]["pressure"]) / 2
        by = sorted(pts, key=lambda r: 180 - abs(r["angle"]))
        front = (by[0]["pressure"] + by[1]["pressure"]) / 2
        cd = 2 * sx / (U_MEAN ** 2 * d)
        dp = (front - back) * 0.04 / U_MEAN ** 2
        print("D = %2d surface (%s): cD %.5f (%+.2f%% of the momentum exchange's), dp at the "
              "cells %.5f (%+.2f%% against %.5f)"
              % (d, os.path.basename(surf[-1]), cd, 100 * (cd - got["cD"]) / got["cD"], dp,
                 100 * (dp - REF["dp"]) / REF["dp"], REF["dp"]))
    for k in ("cD", "cL", "dp"):
        lo, hi = RANGES[k]
        print("D = %2d (step %s): %-2s %.5f  published %.4f-%.4f %s  error against %.5f: %+.2f%%"
              % (d, step, k, got[k], lo, hi, "inside" if lo <= got[k] <= hi else "OUTSIDE",
                 REF[k], 100 * (got[k] - REF[k]) / REF[k]))
