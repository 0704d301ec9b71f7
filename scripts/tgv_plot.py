#!/usr/bin/env python3
"""Plots curves of scripts/tgv-re1600.sh (TGV_CURVE=FILE: t*, K, eps) against the DNS
points of scripts/tgv_dns.py: K and eps against t*, one line per curve.
Needs matplotlib (Debian: python3-matplotlib).

Usage: tgv_plot.py OUT.png LABEL=CURVE.csv [LABEL=CURVE.csv ...]"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tgv_dns import POINTS  # noqa: E402


def main():
    if len(sys.argv) < 3 or any("=" not in a for a in sys.argv[2:]):
        sys.exit(__doc__)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for arg in sys.argv[2:]:
        label, path = arg.split("=", 1)
        rows = list(csv.DictReader(open(path)))
        if not rows:
            sys.exit("tgv_plot.py: %s holds no rows" % path)
        t = [float(r["t"]) for r in rows]
        for ax, key in zip(axes, ("K", "eps")):
            ax.plot(t, [float(r[key]) for r in rows], lw=1.2, label=label)
    ts = sorted(POINTS)
    for ax, col, name in ((axes[0], 0, "K"), (axes[1], 1, "dissipation rate eps = -dK/dt*")):
        ax.plot(ts, [POINTS[x][col] for x in ts], "ko", ms=5, label="DNS 512^3 (spectral)")
        ax.set_xlabel("t* = t u0 / L")
        ax.set_title(name)
        ax.grid(True, alpha=0.3)
    axes[1].legend(fontsize=8)
    fig.suptitle("3-D Taylor-Green vortex, Re 1600: tessera against the DNS")
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=110)


if __name__ == "__main__":
    main()
