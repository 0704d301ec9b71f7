#!/usr/bin/env python3
"""Plots scripts/scaling.sh's CSV: MLUPS and parallel efficiency against cores, weak and
strong scaling side by side, one line per blocks per core, measured (solid, dots)
and predicted by the plan's model (dashed, crosses).

Usage: scaling_plot.py SCALING.csv OUT.png"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1])))
    if not rows:
        sys.exit("scaling_plot.py: %s holds no rows" % sys.argv[1])
    fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
    for col, study in enumerate(("weak", "strong")):
        mine = [r for r in rows if r["study"] == study]
        for i, bpp in enumerate(sorted({int(r["blocks_per_core"]) for r in mine})):
            color = "C%d" % i
            # one point per core count: the runs with the most processes there
            pts = {}
            for r in mine:
                if int(r["blocks_per_core"]) != bpp:
                    continue
                c = int(r["cores"])
                if c not in pts or int(r["processes"]) > int(pts[c]["processes"]):
                    pts[c] = r
            cores = sorted(pts)
            label = "%d block%s per core" % (bpp, "" if bpp == 1 else "s")
            for row, key, unit in ((0, "mlups", 1.0), (1, "efficiency", 100.0)):
                ax = axes[row][col]
                for kind, style in (("measured", "o-"), ("predicted", "x--")):
                    vals = [pts[c]["%s_%s" % (key, kind)] for c in cores]
                    xs = [c for c, v in zip(cores, vals) if v != ""]
                    ys = [float(v) * unit for v in vals if v != ""]
                    if xs:
                        ax.plot(xs, ys, style, color=color, label="%s, %s" % (label, kind))
        axes[0][col].set_title("%s scaling" % study)
        axes[0][col].set_ylabel("MLUPS")
        axes[1][col].set_ylabel("parallel efficiency (%)")
        axes[1][col].set_xlabel("cores (processes x threads)")
        for row in (0, 1):
            axes[row][col].grid(True, alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle("tessera: periodic D3Q19 box, measured and predicted")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
