"""What the validation checks that fit growth rates share (check_onset.py,
check_d2q37_onset.py, check_d2q37_rt.py): a least-squares line, and the amplitude of one
Fourier mode of a row of values."""
import math


def line(pts):
    """(mean x, mean y, slope, largest |y - line|) of pts, a list of (x, y)."""
    n = len(pts)
    mx = sum(p[0] for p in pts) / n
    my = sum(p[1] for p in pts) / n
    slope = sum((p[0] - mx) * (p[1] - my) for p in pts) / sum((p[0] - mx) ** 2 for p in pts)
    resid = max(abs(p[1] - (my + slope * (p[0] - mx))) for p in pts)
    return mx, my, slope, resid


def mode_amplitude(values, periods=1):
    """The amplitude A of the mode A cos(2 pi periods j / n + phase) in values[j], j < n."""
    n = len(values)
    re = sum(v * math.cos(2 * math.pi * periods * j / n) for j, v in enumerate(values))
    im = sum(v * math.sin(2 * math.pi * periods * j / n) for j, v in enumerate(values))
    return 2.0 * math.hypot(re, im) / n


def log_mode_series(path, first, last, periods=1, column="uy_"):
    """(step, log A) of the mode of `periods` of the columns starting with `column` (a line
    probe's series CSV at path) at the steps first..last whose amplitude A is not 0."""
    import csv

    with open(path) as f:
        rows = list(csv.DictReader(f))
    keys = [c for c in rows[0] if c.startswith(column)]
    pts = []
    for r in rows:
        t = float(r["step"])
        if first <= t <= last:
            a = mode_amplitude([float(r[c]) for c in keys], periods)
            if a > 0:
                pts.append((t, math.log(a)))
    return pts
