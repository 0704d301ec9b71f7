#!/usr/bin/env python3
"""Linear waves of the d2q37 module against the model's transport coefficients.

Usage: check_d2q37_waves.py KIND BOUND OUT [OUT ...]
  KIND   shear (the decay of a shear wave: the kinematic viscosity nu),
         temperature (an isobaric temperature wave: the thermal diffusivity kappa),
         sound (a standing sound wave: its speed c and its damping rate)
  BOUND  the largest relative error allowed for each coefficient (0.01: 1%)
  OUT    output folders of runs with a line probe "line" along the wave's axis written
         every step or every few steps ("series": true); two or more folders at
         resolutions N, 2N, ...: the errors must fall at second order (the order of the
         last two at least 1.8).
The model (docs/physics.md, "Thermal compressible flow"): nu = kappa = (tau - 1/2) T c_s^2,
c = sqrt(2 T c_s^2) (gamma = 2), and a sound wave's amplitude decays at
Gamma = k^2 [nu (2 (D - 1) / D) + (gamma - 1) kappa] / 2 = nu k^2 (D = 2, zero bulk
viscosity, Prandtl number 1); omega = sqrt(c^2 k^2 - Gamma^2).
The theory uses the mean temperature of the run (the waves' dissipation heats the gas by
a few 1e-6 of T0).
"""
import csv
import json
import math
import os
import sys

CS2 = 1.0 / 1.19697977039307435897239 ** 2


def load(out):
    with open(os.path.join(out, "config.json")) as f:
        cfg = json.load(f)
    d = cfg["d2q37"]
    ini = d["initial"]
    axis = 0 if ini.get("axis", "x") == "x" else 1
    n = cfg["domain"]["cells"][axis]
    tau = d.get("tau")
    if tau is None:
        tau = 0.5 + d["viscosity"] / CS2
    rows = []
    with open(os.path.join(out, "probe_line.csv")) as f:
        for r in csv.DictReader(f):
            rows.append(r)
    return {"tau": tau, "n": n, "axis": axis, "periods": ini.get("periods", 1),
            "t0": ini.get("temperature", 1.0), "rows": rows}


def mode(run, row, column, basis):
    """The amplitude of cos or sin (k x) of a column over the line's cells."""
    n, k = run["n"], 2 * math.pi * run["periods"] / run["n"]
    s = 0.0
    for i in range(n):
        key = [k_ for k_ in row if k_.startswith(column + "_")][i]
        x = float(key.split("_")[1 + run["axis"]]) + 0.5
        f = math.cos(k * x) if basis == "cos" else math.sin(k * x)
        s += float(row[key]) * f
    return 2.0 * s / n


def slope(ts, ys):
    n = len(ts)
    mt, my = sum(ts) / n, sum(ys) / n
    return sum((t - mt) * (y - my) for t, y in zip(ts, ys)) / sum((t - mt) ** 2 for t in ts)


def mean_temperature(run):
    keys = [k for k in run["rows"][-1] if k.startswith("T_")]
    return sum(float(run["rows"][-1][k]) for k in keys) / len(keys) if keys else run["t0"]


def decay(run, column, basis):
    ts, ys = [], []
    for r in run["rows"]:
        a = mode(run, r, column, basis)
        ts.append(float(r["step"]))
        ys.append(math.log(abs(a)))
    return -slope(ts, ys)


def extrema(ts, ys):
    """Times and values of the local extrema of a sampled curve (parabolas through three
    samples)."""
    out = []
    for i in range(1, len(ys) - 1):
        if (ys[i] - ys[i - 1]) * (ys[i + 1] - ys[i]) < 0 and abs(ys[i]) >= abs(ys[i - 1]):
            h = ts[i + 1] - ts[i]
            a = (ys[i + 1] - 2 * ys[i] + ys[i - 1]) / (2 * h * h)
            b = (ys[i + 1] - ys[i - 1]) / (2 * h)
            dt = -b / (2 * a)
            out.append((ts[i] + dt, ys[i] + b * dt + a * dt * dt))
    return out


def measure(kind, run):
    k = 2 * math.pi * run["periods"] / run["n"]
    t = mean_temperature(run)
    nu = (run["tau"] - 0.5) * t * CS2
    if kind == "shear":
        col = "uy" if run["axis"] == 0 else "ux"
        return [("nu", decay(run, col, "sin") / k ** 2, nu)]
    if kind == "temperature":
        return [("kappa", decay(run, "T", "cos") / k ** 2, nu)]
    ts = [float(r["step"]) for r in run["rows"]]
    ys = [mode(run, r, "rho", "cos") for r in run["rows"]]
    ex = extrema(ts, ys)
    if len(ex) < 4:
        sys.exit("sound: %d extrema of the density mode; run longer" % len(ex))
    ex = ex[:]
    half = (ex[-1][0] - ex[0][0]) / (len(ex) - 1)
    gam = slope([e[0] for e in ex], [math.log(abs(e[1])) for e in ex])
    c = math.sqrt(2 * t * CS2)
    g_theory = nu * k * k
    omega_theory = math.sqrt(c * c * k * k - g_theory ** 2)
    return [("c", (math.pi / half) / k, omega_theory / k), ("damping", -gam, g_theory)]


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("shear", "temperature", "sound"):
        sys.exit(__doc__)
    kind, bound, outs = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    errors = {}
    ok = True
    for out in outs:
        run = load(out)
        for name, got, want in measure(kind, run):
            err = got / want - 1
            errors.setdefault(name, []).append(err)
            print("%s N = %d: %s = %.8g, the model's %.8g, error %+.3e" % (kind, run["n"], name,
                                                                        got, want, err))
            if abs(err) > bound:
                ok = False
    if len(outs) >= 2:
        for name, errs in errors.items():
            order = math.log(abs(errs[-2] / errs[-1])) / math.log(2) if errs[-1] != 0 else 99
            print("%s: order %.2f from the last two resolutions" % (name, order))
            if order < 1.8:
                ok = False
    if not ok:
        sys.exit("FAILED: an error beyond %g or an order below 1.8" % bound)
    print("ok")


if __name__ == "__main__":
    main()
