#!/usr/bin/env python3
"""Mass, momentum and energy of a d2q37 run in a periodic box without force stay what they
were at the first sample of series.csv, to round-off; with `mass`, the mass alone (a box
closed by walls, which take momentum and energy).

Usage: check_d2q37_conserved.py OUT BOUND [mass]
BOUND: the largest change allowed, relative to the total's scale (the mass for mass and
momentum, the energy for energy). The totals are sums of 37 populations over every cell
in double precision: with N cells round-off is of the order N x 1e-16 relative per sum,
so a bound of 1e-12 leaves a factor of ~20 for a few hundred cells; a lost population
(one value in a ghost layer, a wrong crossing component) changes them by 1e-3 or more.
"""
import csv
import os
import sys


def main():
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] != "mass"):
        sys.exit(__doc__)
    out, bound = sys.argv[1], float(sys.argv[2])
    mass_only = len(sys.argv) == 4
    with open(os.path.join(out, "series.csv")) as f:
        rows = list(csv.DictReader(f))
    if len(rows) < 3:
        sys.exit("series.csv has %d rows" % len(rows))
    first = rows[0]
    scale = {"mass": float(first["mass"]), "momentum_x": float(first["mass"]),
             "momentum_y": float(first["mass"]), "energy": float(first["energy"])}
    if mass_only:
        scale = {"mass": scale["mass"]}
    worst = {k: 0.0 for k in scale}
    for r in rows:
        for k in scale:
            worst[k] = max(worst[k], abs(float(r[k]) - float(first[k])) / scale[k])
    for k in scale:
        print("%s: largest change %.3e of %s over %d samples to step %s" %
              (k, worst[k], first[k], len(rows), rows[-1]["step"]))
    if max(worst.values()) > bound or (not mass_only and
                                       abs(float(first["momentum_x"])) < 1e-3 * scale["mass"]):
        sys.exit("FAILED: a total changed by more than %g (or the run has no momentum to keep)" % bound)
    print("ok")


if __name__ == "__main__":
    main()
