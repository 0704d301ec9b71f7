#!/usr/bin/env python3
"""A configuration of the d2q37 Rayleigh-Benard onset runs on stdout: RA H STEPS [NU]
(tests/validation/check_d2q37_onset.py tells the physics). The layer is H cells between
walls at 1.1 and 0.9 T0 (dT = 0.2), 2 H wide (one wavelength of wavenumber pi / H),
nu = kappa = NU (default 0.0209: tau 0.53) at the mean temperature; g follows from Ra with
the adiabatic gradient taken off: g (dT - g H / (2 c_s^2)) H^3 / (nu kappa) = Ra. The
start is the conduction profile with a temperature perturbation of 1e-3 T0 of that
wavelength; the probe `mid` samples the velocity along x at mid-height every 500 steps."""
import json
import math
import sys

CS2 = 1.0 / 1.19697977039307435897239 ** 2


def config(ra, h, steps, nu=0.0209, dt=0.2):
    r = ra * nu * nu / h ** 3
    c = h / (2.0 * CS2)
    g = (dt - math.sqrt(dt * dt - 4.0 * c * r)) / (2.0 * c)
    return {"modules": ["d2q37"],
            "domain": {"cells": [2 * h, h, 1], "blocks": [1, 1, 1], "periodic": [True, False, True]},
            "steps": steps,
            "d2q37": {"tau": 0.5 + nu / CS2, "gravity": [0, -g, 0],
                      "walls": {"y-": {"temperature": 1 + dt / 2}, "y+": {"temperature": 1 - dt / 2}},
                      "initial": {"kind": "conduction", "amplitude": 1e-3, "periods": 1}},
            "output": {"progress_every": 0, "series_every": 500,
                       "probes": [{"name": "mid", "from": [0, h // 2, 0], "to": [2 * h - 1, h // 2, 0],
                                   "series": True, "every": 500, "quantities": ["velocity"]}]}}


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    nu = float(sys.argv[4]) if len(sys.argv) == 5 else 0.0209
    json.dump(config(float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), nu), sys.stdout, indent=1)
    print()
