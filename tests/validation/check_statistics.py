#!/usr/bin/env python3
"""Time statistics (module "statistics") against the samples themselves, against the
decaying 2-D Taylor-Green vortex and against a standing sound wave over whole periods:
usage
check_statistics.py taylor_green FOLDER FROM TO EVERY NU U0 [OTHER_FOLDER...]
check_statistics.py sound_wave FOLDER LAST NU A

sound_wave: FOLDER holds a run of tests/configs/statistics/sound_wave.json (64 x 2 cells,
periodic, D2Q9 TRT, nu = NU), a standing wave rho = rho0 (1 + A cos kx) at rest at the
start, k = 2 pi / 64, sampled at every step 0..LAST (LAST + 1 = 776 steps: 7 periods
64 sqrt(3) to 0.04 steps). Linear acoustics: u = A c_s sin kx sin wt e^{-g t},
p - p_ref = c_s^2 rho0 A cos kx cos wt e^{-g t}, w = c_s k, g = nu k^2 (the lattice's
bulk viscosity 2 nu / d with d = 2: the amplitude decays at (nu + nu_bulk) k^2 / 2). The
mean and RMS of velocity (x) and pressure in fields_LAST.vti must equal those of these
fields over the same steps to 0.2% of the amplitude (A c_s, c_s^2 A; measured 2.1e-5
(mean u), 5.2e-4 (RMS u), 6.3e-4 (mean p), 4.8e-4 (RMS p): the lattice's sound speed
differs from c_s at O(k^2)). Over whole periods the means nearly vanish: 3.4e-4 and
6.2e-5 of the amplitudes, from the decay alone.

taylor_green: FOLDER holds a run of tests/configs/statistics/taylor_green.json (64 x 64 cells,
periodic) with the statistics of velocity, pressure and vorticity over the steps
FROM, FROM + EVERY, ..., TO, and a VTK file at every one of those steps.

1. The samples: the mean, RMS (root mean square of the fluctuation, divisor n) and,
   for the vectors, the covariances (xy, xz, yz) that fields_TO.vti holds must equal the
   ones computed here from the VTK files of the sampled steps by two passes (the sum,
   then the squares of the differences), to 1e-12 of each array's largest value (mean,
   covariance) and 1e-9 (RMS): the run's recurrence (Welford) and the two passes round
   differently; with 16 samples in double both stay within a few 1e-16 of the peak, and
   the square root of the RMS turns an absolute rounding e of a variance near zero into
   sqrt(e), about 1e-8 of a peak of 1e-3 (no cell of this flow is at rest).
2. The physics: u = U(x) f(t), f = e^{-2 nu k^2 t}, k = 2 pi / 64, so the mean is
   U(x) <f>, the RMS |U(x)| sqrt(<f^2> - <f>^2) and the velocity covariance
   U_x U_y (<f^2> - <f>^2), <.> over the sampled steps; the vorticity's mean and RMS the
   same with 2 U0 k sin kx sin ky. Held to 0.5% of each array's largest value (rms over
   the cells; measured 0.06-0.15%). The RMS is a difference of two nearly equal numbers:
   a decay rate off by d moves it by about d, and the lattice's viscosity error at 64
   cells a mode is of the order of 0.1%; the derived vorticity carries its central
   differences' 0.16%.
3. Every OTHER_FOLDER (the same case on other blocks, hardware, or restarted in the
   window) must give the same statistics arrays at TO, bit for bit."""
import math
import sys

from vtk_cells import cell_tuples as arrays, first_difference

STATS = ["velocity_mean", "velocity_rms", "velocity_covariance", "pressure_mean",
         "pressure_rms", "vorticity_mean", "vorticity_rms", "vorticity_covariance"]


def fail(msg):
    print("check_statistics: FAILED: " + msg)
    sys.exit(1)


def two_pass(samples):
    """Per cell and component: mean, rms, and the covariances of a 3-vector."""
    n = len(samples)
    cells, comps = len(samples[0]), len(samples[0][0])
    mean = [[sum(s[i][a] for s in samples) / n for a in range(comps)] for i in range(cells)]
    rms = [[math.sqrt(sum((s[i][a] - mean[i][a]) ** 2 for s in samples) / n)
            for a in range(comps)] for i in range(cells)]
    cov = None
    if comps == 3:
        cov = [[sum((s[i][a] - mean[i][a]) * (s[i][b] - mean[i][b]) for s in samples) / n
                for a, b in ((0, 1), (0, 2), (1, 2))] for i in range(cells)]
    return mean, rms, cov


def compare(name, got, want, bound, analytic=False):
    peak = max(abs(v) for t in want for v in t)
    if analytic:
        diff = math.sqrt(sum((g - w) ** 2 for tg, tw in zip(got, want) for g, w in zip(tg, tw))
                         / sum(len(t) for t in want))
    else:
        diff = max(abs(g - w) for tg, tw in zip(got, want) for g, w in zip(tg, tw))
    what = "analytic, rms error" if analytic else "two passes, largest difference"
    if peak == 0:  # a component a 2-D flow does not have: zero in both
        print("%-21s %-31s %.3e (zero in both)" % (name, what, diff))
        if diff != 0:
            fail("%s: %.3e where both should be zero" % (name, diff))
        return
    print("%-21s %-31s %.3e of its peak %.3e (%.2e; bound %.0e)"
          % (name, what, diff, peak, diff / peak, bound))
    if not diff <= bound * peak:
        fail("%s: %s %.3e, more than %.0e of %.3e" % (name, what, diff, bound, peak))


def sound_wave(folder, last, nu, amp):
    got = arrays(folder, last)
    cs, k = 1 / math.sqrt(3), 2 * math.pi / 64
    g, w = nu * k * k, cs * k
    sin = [math.sin(w * t) * math.exp(-g * t) for t in range(last + 1)]
    cos = [math.cos(w * t) * math.exp(-g * t) for t in range(last + 1)]
    ms, mc = sum(sin) / len(sin), sum(cos) / len(cos)
    ss = math.sqrt(sum(v * v for v in sin) / len(sin) - ms * ms)
    sc = math.sqrt(sum(v * v for v in cos) / len(cos) - mc * mc)
    ua, pa = amp * cs, cs * cs * amp
    want = {"velocity_mean": [], "velocity_rms": [], "pressure_mean": [], "pressure_rms": []}
    for j in range(2):
        for i in range(64):
            x = k * (i + 0.5)
            want["velocity_mean"].append(ua * math.sin(x) * ms)
            want["velocity_rms"].append(ua * abs(math.sin(x)) * ss)
            want["pressure_mean"].append(pa * math.cos(x) * mc)
            want["pressure_rms"].append(pa * abs(math.cos(x)) * sc)
    for name, values in want.items():
        scale = ua if name.startswith("velocity") else pa
        diff = max(abs(t[0] - v) for t, v in zip(got[name], values))
        print("%-14s largest difference %.3e of the amplitude %.3e (%.2e; bound 2e-3)"
              % (name, diff, scale, diff / scale))
        if not diff <= 2e-3 * scale:
            fail("%s: off by %.3e, more than 0.2%% of %.3e" % (name, diff, scale))
    print("over whole periods the means are %.2e (velocity) and %.2e (pressure) of the "
          "amplitudes" % (ms, mc))
    print("check_statistics: ok")


def main():
    if sys.argv[1] == "sound_wave":
        sound_wave(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]))
        return
    folder = sys.argv[2]
    first, last, every = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    nu, u0 = float(sys.argv[6]), float(sys.argv[7])
    steps = list(range(first, last + 1, every))
    got = arrays(folder, last)
    samples = [arrays(folder, s) for s in steps]
    for q in ("velocity", "pressure", "vorticity"):
        mean, rms, cov = two_pass([s[q] for s in samples])
        compare(q + "_mean", got[q + "_mean"], mean, 1e-12)
        compare(q + "_rms", got[q + "_rms"], rms, 1e-9)
        if cov is not None:
            compare(q + "_covariance", got[q + "_covariance"], cov, 1e-12)
    n, k = 64, 2 * math.pi / 64
    f = [math.exp(-2 * nu * k * k * s) for s in steps]
    m1 = sum(f) / len(f)
    var = sum(v * v for v in f) / len(f) - m1 * m1
    want = {"velocity_mean": [], "velocity_rms": [], "velocity_covariance": [],
            "vorticity_mean": [], "vorticity_rms": []}
    for j in range(n):
        for i in range(n):
            x, y = k * (i + 0.5), k * (j + 0.5)
            ux, uy = u0 * math.sin(x) * math.cos(y), -u0 * math.cos(x) * math.sin(y)
            w = 2 * u0 * k * math.sin(x) * math.sin(y)
            want["velocity_mean"].append((ux * m1, uy * m1, 0.0))
            want["velocity_rms"].append((abs(ux) * math.sqrt(var), abs(uy) * math.sqrt(var), 0.0))
            want["velocity_covariance"].append((ux * uy * var, 0.0, 0.0))
            want["vorticity_mean"].append((0.0, 0.0, w * m1))
            want["vorticity_rms"].append((0.0, 0.0, abs(w) * math.sqrt(var)))
    for name, values in want.items():
        compare(name, got[name], values, 0.005, analytic=True)
    differs = first_difference(got, sys.argv[8:], last, STATS)
    if differs:
        fail("%s's %s differs from %s's" % (differs[0], differs[1], folder))
    for other in sys.argv[8:]:
        print("%s: the same statistics, bit for bit" % other)
    print("check_statistics: ok")


main()
