#!/usr/bin/env python3
"""The onset of Rayleigh-Benard convection between rigid walls: the critical Rayleigh
number from growth rates. Two runs just below and just above onset (Ra 1650 and 1800,
2-D, H = 16 cells, L = 2H: wavenumber pi, where the neutral curve is within 0.1 of its
minimum Ra_c = 1707.76 at 3.117), started from the conduction profile with a small
perturbation. The perturbation's amplitude A grows or decays as exp(sigma t), and
Nu - 1 is proportional to A^2; sigma is fitted to log |Nu - 1| of series.csv over the
steps where the mode is clean (after the start-up transient, before saturation), and
sigma(Ra), linear near onset, is zero at Ra_c.

usage: check_onset.py CONFIG_1 FOLDER_1 CONFIG_2 FOLDER_2 [FIRST_STEP LAST_STEP]
Bounds: Ra_c within 2% of 1707.76 (Reid and Harris 1958; the usual figure for rigid-rigid
walls); the log of |Nu - 1| within 0.15 of its straight line over the window (an
exponential, not a transient), and the two growth rates of opposite signs."""
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fits  # noqa: E402

RA_C = 1707.76


def fail(msg):
    print("check_onset: FAILED: " + msg)
    sys.exit(1)


first = float(sys.argv[5]) if len(sys.argv) > 5 else 4000
last = float(sys.argv[6]) if len(sys.argv) > 6 else 12000


def growth(config, folder):
    with open(config) as f:
        ra = json.load(f)["thermal"]["rayleigh"]
    with open(os.path.join(folder, "series.csv")) as f:
        rows = list(csv.DictReader(f))
    pts = [(float(r["step"]), math.log(abs(float(r["nusselt"]) - 1.0)))
           for r in rows if first <= float(r["step"]) <= last and float(r["nusselt"]) != 1.0]
    if len(pts) < 10:
        fail("%d points of series.csv between steps %g and %g in %s" % (len(pts), first, last, folder))
    _, _, slope, resid = fits.line(pts)
    if resid > 0.15:
        fail("Ra %g: log |Nu - 1| is %.3f off a straight line: not a clean exponential" % (ra, resid))
    return ra, slope / 2.0


ra1, s1 = growth(sys.argv[1], sys.argv[2])
ra2, s2 = growth(sys.argv[3], sys.argv[4])
if not s1 * s2 < 0:
    fail("growth rates %.3e (Ra %g) and %.3e (Ra %g) do not bracket the onset" % (s1, ra1, s2, ra2))
rac = ra1 - s1 * (ra2 - ra1) / (s2 - s1)
print("check_onset: sigma %.4e per step at Ra %g, %.4e at Ra %g: Ra_c = %.1f (%+.2f%% from %.2f)"
      % (s1, ra1, s2, ra2, rac, 100.0 * (rac / RA_C - 1.0), RA_C))
if abs(rac / RA_C - 1.0) > 0.02:
    fail("Ra_c = %.1f, more than 2%% from %.2f" % (rac, RA_C))
