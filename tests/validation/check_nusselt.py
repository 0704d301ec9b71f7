#!/usr/bin/env python3
"""Steady 2-D Rayleigh-Benard convection (Pr = 0.71) against a published Nusselt number.
usage: check_nusselt.py OUTPUT_FOLDER REFERENCE BOUND WHAT [steady]

The run's series.csv must have settled (Nu of the last row and of the row at 4/5 of the
run within 1e-4 of each other: the rolls are steady, so a passing value is not a
transient crossing the band by chance), and its last Nu must lie within BOUND (relative)
of REFERENCE. The bounds are set in tests/cli/CMakeLists.txt from the discretisation
error measured on the test's grid (second order: it shrinks 4x per doubling towards the
published value, see physics.md).

With "steady" the run must have ended at its steady-state stop (stop.when_steady):
summary.json's status "steady", at a step before the configured end and no earlier than
one window after step 0, its steps equal to series.csv's last row."""
import csv
import json
import os
import sys


def fail(msg):
    print("check_nusselt: FAILED: " + msg)
    sys.exit(1)


folder, ref, bound, what = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
if len(sys.argv) > 5 and sys.argv[5] == "steady":
    with open(os.path.join(folder, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    window, steps = config["stop"]["when_steady"]["window"], config["steps"]
    if summary["status"] != "steady":
        fail("%s: status %s; the run should have stopped at its steady state" %
             (what, summary["status"]))
    if not window <= summary["steady_step"] == summary["steps"] < steps:
        fail("%s: steady at step %d after %d steps (window %d, steps %d)" %
             (what, summary["steady_step"], summary["steps"], window, steps))
    print("check_nusselt: %s: steady at step %d of %d (Nu changed by %.2g over %d steps)" %
          (what, summary["steady_step"], steps, summary["steady_change"], window))
with open(os.path.join(folder, "series.csv")) as f:
    rows = list(csv.DictReader(f))
if len(rows) < 5:
    fail("%d rows in series.csv; at least 5 are needed" % len(rows))
last = rows[-1]
earlier = rows[(4 * len(rows)) // 5 - 1]
nu, nu_before = float(last["nusselt"]), float(earlier["nusselt"])
if abs(nu - nu_before) > 1e-4 * abs(nu):
    fail("%s: Nu = %.6f at step %s but %.6f at step %s: not steady yet" %
         (what, nu, last["step"], nu_before, earlier["step"]))
dev = (nu - ref) / ref
if abs(dev) > bound:
    fail("%s: Nu = %.6f, published %.4f: %+.2f%% (bound %.1f%%)" %
         (what, nu, ref, 100 * dev, 100 * bound))
print("check_nusselt: %s: Nu = %.6f, published %.4f: %+.2f%% (bound %.1f%%)" %
      (what, nu, ref, 100 * dev, 100 * bound))
