#!/usr/bin/env python3
"""The early growth of a single-mode Rayleigh-Taylor instability in the d2q37 gas against
linear theory.

The run (tests/configs/d2q37/rt_growth.json): a cold heavy layer above a hot light one
between walls at their temperatures, the interface a tanh profile perturbed by one mode
of wavenumber k. The probe `interface` gives u_y along x at the interface's height; the
amplitude of its Fourier mode grows as exp(sigma t) once the start-up (cosh) has passed;
sigma is fitted to its log over the steps FIRST..LAST, while k times the displacement
stays below 0.1 (linear).

Theory: the interface is no step. Its density profile rho(y), the mean of the probe
columns `left` and `right` (a quarter wavelength apart: the mode's mean) at the middle of
the window, gives the inviscid growth rate sigma_i of an incompressible fluid of that
stratification from Rayleigh's equation (Chandrasekhar 1961, sec. 92),
  (rho w')' - k^2 rho w = -(g k^2 / sigma^2) rho' w,  w = 0 at both walls,
its largest sigma found by shooting (RK4, half a cell) and bisection. Viscosity and the
diffusion that keeps widening the interface take (nu + kappa) k^2 off it (Duff, Harlow and
Hirt 1962: sigma = sqrt(A g k / psi) - (nu + D) k^2, whose psi, the finite interface, is
what Rayleigh's equation computes here exactly), nu = kappa = (tau - 1/2) c_s^2 T_m at the
mean temperature. The sharp-interface value sqrt(A g k), A = (T_hot - T_cold) /
(T_hot + T_cold), is printed beside it. What is left out: the gas's compressibility
(sigma / (c_s k) ~ 0.04 here) and the stable stratification of each layer beyond the
incompressible one, of order g / (A k c_s^2) ~ 2% of sigma^2.

usage: check_d2q37_rt.py TOL FIRST LAST FOLDER    (|sigma / theory - 1| <= TOL)"""
import csv
import glob
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fits  # noqa: E402

CS2 = 1.0 / 1.19697977039307435897239 ** 2


def fail(msg):
    print("check_d2q37_rt: FAILED: " + msg)
    sys.exit(1)


def measured(folder, k_index, first, last):
    pts = fits.log_mode_series(os.path.join(folder, "probe_interface.csv"), first, last, k_index)
    if len(pts) < 5:
        fail("%d samples between steps %g and %g" % (len(pts), first, last))
    _, _, s, resid = fits.line(pts)
    return s, resid


def profile(folder, step):
    cols = []
    for name in ("left", "right"):
        files = glob.glob(os.path.join(folder, "probe_%s_*.csv" % name))
        if not files:
            fail("no probe_%s_*.csv in %s" % (name, folder))
        best = min(files, key=lambda p: abs(int(re.findall(r"_(\d+)\.csv$", p)[0]) - step))
        with open(best) as f:
            cols.append([float(r["rho"]) for r in csv.DictReader(f)])
        taken = int(re.findall(r"_(\d+)\.csv$", best)[0])
    return [0.5 * (a + b) for a, b in zip(*cols)], taken


def rayleigh_rate(rho, g, k):
    """The largest growth rate of Rayleigh's equation for the density rho[j] at cell
    centres j + 1/2 between walls at 0 and len(rho)."""
    ny = len(rho)

    def dens(y):  # piecewise linear through the centres, constant beyond the outer ones
        x = min(max(y - 0.5, 0.0), ny - 1.0)
        j = min(int(x), ny - 2)
        f = x - j
        slope = rho[j + 1] - rho[j] if 0.5 < y < ny - 0.5 else 0.0
        return rho[j] + f * (rho[j + 1] - rho[j]), slope

    def w_end(mu):
        h = 0.5
        w, p, y = 0.0, 1.0, 0.0

        def rhs(y, w, p):
            r, dr = dens(y)
            return p / r, (k * k * r - mu * dr) * w

        for _ in range(int(ny / h)):
            k1 = rhs(y, w, p)
            k2 = rhs(y + h / 2, w + h / 2 * k1[0], p + h / 2 * k1[1])
            k3 = rhs(y + h / 2, w + h / 2 * k2[0], p + h / 2 * k2[1])
            k4 = rhs(y + h, w + h * k3[0], p + h * k3[1])
            w += h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            p += h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
            y += h
            if w < 0:  # the first zero inside: mu is beyond the first eigenvalue
                return -1.0
        return w

    lo = 1e-6 * k
    if w_end(lo) <= 0:
        fail("Rayleigh's equation: no growing mode")
    hi = lo
    while w_end(hi) > 0:
        lo, hi = hi, hi * 1.5
        if hi > 1e6:
            fail("Rayleigh's equation: no eigenvalue found")
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        if w_end(mid) > 0:
            lo = mid
        else:
            hi = mid
    mu = math.sqrt(lo * hi)
    return math.sqrt(g * k * k / mu)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    tol, first, last, folder = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    d = cfg["d2q37"]
    lx = cfg["domain"]["cells"][0]
    periods = d["initial"].get("periods", 1)
    k = 2 * math.pi * periods / lx
    g = -d["gravity"][1]
    th, tc = d["walls"]["y-"]["temperature"], d["walls"]["y+"]["temperature"]
    tm = 0.5 * (th + tc)
    nu = (d["tau"] - 0.5) * CS2 * tm
    sigma, resid = measured(folder, periods, first, last)
    rho, taken = profile(folder, 0.5 * (first + last))
    sigma_i = rayleigh_rate(rho, g, k)
    theory = sigma_i - 2 * nu * k * k
    sharp = math.sqrt((th - tc) / (th + tc) * g * k)
    print("check_d2q37_rt: sigma %.4e per step (log amplitude within %.4f of its line, steps %g-%g); "
          "theory %.4e = Rayleigh %.4e for the profile at step %d - (nu + kappa) k^2 %.3e "
          "(sharp interface: %.4e): %+.2f%%"
          % (sigma, resid, first, last, theory, sigma_i, taken, 2 * nu * k * k, sharp,
             100 * (sigma / theory - 1)))
    if resid > 0.05:
        fail("the amplitude is %.3f off an exponential over the window" % resid)
    if abs(sigma / theory - 1) > tol:
        fail("sigma %.4e is more than %g%% from the theory's %.4e" % (sigma, 100 * tol, theory))
    print("ok")


if __name__ == "__main__":
    main()
