#!/usr/bin/env python3
"""The onset of Rayleigh-Benard convection in the d2q37 gas between two walls at fixed
temperatures, in the Boussinesq limit (small temperature difference, small g H): the
critical Rayleigh number from growth rates on both sides of it.

Each run (tests/configs/d2q37/onset_*.json; scripts/d2q37-onset.sh writes more) starts
from the conduction profile with a temperature perturbation of one wavelength along x
(L = 2 H: wavenumber pi / H, where the neutral curve of rigid walls is within 0.1 of its
minimum Ra_c = 1707.76 at 3.117 / H; Reid and Harris 1958). The probe `mid` gives u_y
along x at mid-height; the amplitude of its Fourier mode grows or decays as
exp(sigma t), sigma fitted to its log over the steps FIRST..LAST (after the start-up
transient). sigma(Ra) is then interpolated linearly to its zero (two runs), or fitted by
a line (more).

The Rayleigh number of a run: Ra = g (dT - dT_ad) H^3 / (T_m nu kappa) with the
temperatures in units of T0 = c_s^2, T_m the mean of the walls', nu = kappa =
(tau - 1/2) c_s^2 T_m (BGK: Prandtl number 1) and H the cells between the walls, which lie
half-way between the last cell and the first ghost cell. A gas is stably stratified up to
the adiabatic gradient g / c_p (c_p = 2 R for the model's gas of two degrees of freedom,
R = 1 with temperatures c_s^2 T): in the Boussinesq limit of a compressible gas the
driving difference is the excess over it, dT_ad = g H / (2 c_s^2) (Jeffreys 1930; Spiegel
and Veronis 1960). The runs keep it at 1.3% of dT.

usage: check_d2q37_onset.py TOL FIRST LAST FOLDER...   (each folder holds config.json)
Bounds: Ra_c within TOL (relative) of 1707.76; log of the amplitude within 0.02 of its
straight line over the window (a clean exponential); the rates bracket zero."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fits  # noqa: E402

RA_C = 1707.76
CS2 = 1.0 / 1.19697977039307435897239 ** 2


def fail(msg):
    print("check_d2q37_onset: FAILED: " + msg)
    sys.exit(1)


def rayleigh(cfg):
    d = cfg["d2q37"]
    h = cfg["domain"]["cells"][1]
    tb, tt = d["walls"]["y-"]["temperature"], d["walls"]["y+"]["temperature"]
    g = -d["gravity"][1]
    tm = 0.5 * (tb + tt)
    nu = (d["tau"] - 0.5) * CS2 * tm
    dt_ad = g * h / (2.0 * CS2)
    return g * (tb - tt - dt_ad) * h ** 3 / (tm * nu * nu), dt_ad / (tb - tt)


def growth(folder, first, last):
    with open(os.path.join(folder, "config.json")) as f:
        ra, ad = rayleigh(json.load(f))
    pts = fits.log_mode_series(os.path.join(folder, "probe_mid.csv"), first, last)
    if len(pts) < 10:
        fail("%d samples of probe_mid.csv between steps %g and %g in %s" % (len(pts), first, last, folder))
    _, _, slope, resid = fits.line(pts)
    print("Ra %.1f (adiabatic part %.2f%% of dT): sigma %.4e per step, log amplitude within %.4f of "
          "its line (%s)" % (ra, 100 * ad, slope, resid, folder))
    if resid > 0.02:
        fail("Ra %.1f: the amplitude is %.3f off an exponential: not a clean mode" % (ra, resid))
    return ra, slope


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    tol, first, last = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    pts = sorted(growth(f, first, last) for f in sys.argv[4:])
    if not (pts[0][1] < 0 < pts[-1][1]):
        fail("the growth rates do not bracket the onset: %s" % pts)
    mx, my, slope, _ = fits.line(pts)
    rac = mx - my / slope
    print("check_d2q37_onset: Ra_c = %.1f (%+.2f%% from %.2f) from %d runs"
          % (rac, 100.0 * (rac / RA_C - 1.0), RA_C, len(pts)))
    if abs(rac / RA_C - 1.0) > tol:
        fail("Ra_c = %.1f, more than %g%% from %.2f" % (rac, 100 * tol, RA_C))
    print("ok")


if __name__ == "__main__":
    main()
