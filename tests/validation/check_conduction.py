#!/usr/bin/env python3
"""Pure conduction between a hot (T = 1, y = 0) and a cold wall (T = 0, y = H), below the
onset of convection and without a perturbation, after some diffusion times H^2/kappa
(4000 steps, about 2.8 diffusion times H^2 / kappa on 10 cells; the run starts from the
exact profile, so they test that it stays): the temperature is the linear profile
T = 1 - (y + 1/2) / H in every cell (the walls lie half a cell beyond the first and last
cells), the flow stays at rest and Nu = 1. usage: check_conduction.py OUTPUT_FOLDER H T_TOLERANCE NU_TOLERANCE

Tolerances. T and u to 1e-12: round-off of 4000 steps (measured 4e-14 and 5e-14 coupled at
Ra = 1000; 2e-15 and 3e-16 after 40000 steps, the rest of a smooth start-up transient).
Nu - 1 = <u_y T> H / (kappa dT) multiplies the velocity's round-off by H / kappa (142
here), hence 1e-10 for Nu (2.5e-12 measured). Uncoupled (Ra = 0, conduction_ra0) the same
tolerances hold. The flow starts at rest with the buoyancy of the initial temperature
counting half on its first step (lbm_coupling_t.start); without that, a staggered
momentum mode of amplitude 9.2e-5 stayed for ever (Nu - 1 = 6.5e-4)."""
import csv
import json
import os
import sys


def fail(msg):
    print("check_conduction: FAILED: " + msg)
    sys.exit(1)


folder, h = sys.argv[1], int(sys.argv[2])
tol = float(sys.argv[3])
nu_tol = float(sys.argv[4])
with open(os.path.join(folder, "probe_column_004000.csv")) as f:
    rows = list(csv.DictReader(f))
if len(rows) != h:
    fail("%d probe rows, expected %d" % (len(rows), h))
for r in rows:
    y = int(r["y"])
    want = 1.0 - (y + 0.5) / h
    if abs(float(r["T"]) - want) > tol:
        fail("T(y = %d) = %.17g, the linear profile has %.17g" % (y, float(r["T"]), want))
    for c in ("ux", "uy", "uz"):
        if abs(float(r[c])) > tol:
            fail("%s(y = %d) = %g: the fluid should stay at rest" % (c, y, float(r[c])))
with open(os.path.join(folder, "summary.json")) as f:
    s = json.load(f)
if abs(s["nusselt"] - 1.0) > nu_tol:
    fail("Nu = %.17g, expected 1" % s["nusselt"])
print("check_conduction: linear profile, fluid at rest and Nu - 1 = %.3g over %d cells" % (s["nusselt"] - 1, h))
