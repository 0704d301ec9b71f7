#!/usr/bin/env python3
"""Checks Shan-Chen runs (sweeps/shan_chen) against the model's theory.

  check_shan_chen.py coexistence OUT G RHO_PSI TOL
      OUT: a flat interface (the probe probe_across_*.csv of its last step crosses both
      phases). The bulk densities (the probe's largest and smallest) against the
      mechanical-stability values of psi = rho_psi (1 - exp(-rho/rho_psi)) with
      p = rho/3 + G psi^2 / 6: p(rho_g) = p(rho_l) = p0 and
      int_{rho_g}^{rho_l} (p0 - p) psi' / psi^(1+eps) drho = 0, eps = 0 for Guo's forcing
      scheme (Li, Luo & Li, Phys. Rev. E 86, 016709 (2012); eps = 1 is the continuum
      condition of Shan & Chen, Phys. Rev. E 49, 2941 (1994), printed for comparison);
      each within TOL (relative). The mass (series.csv) stays to 1e-11 relative.
  check_shan_chen.py still OUT MAX_SPEED
      OUT: a droplet left long; its last VTK step's largest speed stays below MAX_SPEED
      (a droplet that starts to translate, as with a force that lags the density by a
      step, fails).
  check_shan_chen.py laplace G RHO_PSI TOL OUT...
      OUT: droplets (the last VTK step of each). Their radius from the area of the liquid
      R = sqrt(A / pi), A = sum (rho - rho_g) / (rho_l - rho_g); the pressure difference
      p(centre) - p(corner); a least-squares line dp = sigma / R + c through them, whose
      relative rms residual must stay below TOL; sigma, c and the largest speed anywhere
      (the spurious currents) are printed."""
import csv
import glob
import math
import os
import sys


def psi(r, r0):
    return r0 * (1.0 - math.exp(-r / r0))


def pressure(r, g, r0):
    return r / 3.0 + g / 6.0 * psi(r, r0) ** 2


def coexistence(g, r0, eps):
    """(rho_gas, rho_liquid) of the mechanical-stability condition with psi^(1+eps)."""
    p = lambda r: pressure(r, g, r0)
    dp = lambda r: 1.0 / 3.0 + g / 3.0 * psi(r, r0) * math.exp(-r / r0)
    xs = [k * 1e-3 for k in range(1, 100000)]
    spin = [x for x, y in zip(xs, xs[1:]) if dp(x) * dp(y) < 0]
    if len(spin) < 2:
        raise SystemExit(f"G = {g}: no phase separation (|G| below the critical value)")
    lo, hi = spin[0], spin[1]

    def bisect(f, a, b):
        fa = f(a)
        for _ in range(200):
            m = 0.5 * (a + b)
            fm = f(m)
            if (fm < 0) == (fa < 0):
                a, fa = m, fm
            else:
                b = m
        return 0.5 * (a + b)

    def integral(a, b, p0, n=4000):  # Simpson
        h = (b - a) / n
        s = 0.0
        for k in range(n + 1):
            r = a + k * h
            w = 1 if k in (0, n) else (4 if k % 2 else 2)
            s += w * (p0 - p(r)) * math.exp(-r / r0) / psi(r, r0) ** (1 + eps)
        return s * h / 3.0

    def phases(p0):
        rg = bisect(lambda r: p(r) - p0, 1e-12, lo)
        rl = bisect(lambda r: p(r) - p0, hi, 1e3)
        return rg, rl

    # p0 lies between the pressures of the two spinodal points, and above that of the
    # smallest density the gas branch reaches (the liquid spinodal's may be negative)
    floor = max(p(hi), p(1e-12))
    p0 = bisect(lambda q: integral(*phases(q), q), floor + 1e-13, p(lo) - 1e-13)
    return phases(p0)


def check_coexistence(out, g, r0, tol):
    probe = sorted(glob.glob(os.path.join(out, "probe_across_*.csv")))[-1]
    with open(probe) as f:
        rho = [float(row["rho"]) for row in csv.DictReader(f)]
    gas, liquid = min(rho), max(rho)
    ok = True
    for eps in (0, 1):
        tg, tl = coexistence(g, r0, eps)
        eg, el = abs(gas - tg) / tg, abs(liquid - tl) / tl
        print(f"eps = {eps}: theory rho_g = {tg:.6f}, rho_l = {tl:.6f}; measured {gas:.6f}, "
              f"{liquid:.6f}; relative errors {eg:.2e}, {el:.2e}")
        if eps == 0 and (eg > tol or el > tol):
            print(f"FAIL: coexistence densities off by more than {tol}")
            ok = False
    with open(os.path.join(out, "series.csv")) as f:
        mass = [float(row["mass"]) for row in csv.DictReader(f)]
    drift = abs(mass[-1] - mass[0]) / mass[0]
    print(f"mass {mass[0]!r} -> {mass[-1]!r}: relative drift {drift:.2e}")
    if drift > 1e-11:
        print("FAIL: the mass is not kept to round-off (1e-11)")
        ok = False
    return ok


def read_last_vtk(out):
    import vtk  # python3-vtk9

    # the last output step: its one image, or the index of its block files
    index = sorted(glob.glob(os.path.join(out, "fields_*.vti")) + glob.glob(os.path.join(out, "fields_*.pvti")))[-1]
    reader = vtk.vtkXMLImageDataReader() if index.endswith(".vti") else vtk.vtkXMLPImageDataReader()
    reader.SetFileName(index)
    reader.Update()
    img = reader.GetOutput()
    nx, ny, nz = img.GetDimensions()
    cd = img.GetCellData()
    a, b = cd.GetArray("density"), cd.GetArray("velocity")
    rho = [a.GetTuple1(k) for k in range(a.GetNumberOfTuples())]
    u = [b.GetTuple3(k) for k in range(b.GetNumberOfTuples())]
    # point dimensions: cells are one less along each axis with more than one point
    cells = [max(1, d - 1) for d in (nx, ny, nz)]
    return cells, rho, u


def check_laplace(g, r0, tol, outs):
    gas, liquid = coexistence(g, r0, 0)
    rows = []
    for out in outs:
        (nx, ny, nz), rho, u = read_last_vtk(out)
        area = sum((r - gas) / (liquid - gas) for r in rho)
        radius = math.sqrt(area / math.pi) if nz == 1 else (3 * area / (4 * math.pi)) ** (1 / 3)
        centre = rho[(nz // 2 * ny + ny // 2) * nx + nx // 2]
        corner = rho[0]
        dp = pressure(centre, g, r0) - pressure(corner, g, r0)
        umax = max(math.sqrt(a * a + b * b + c * c) for a, b, c in u)
        rows.append((radius, dp, umax, centre, corner))
        print(f"{out}: R = {radius:.4f}, rho in {centre:.6f}, out {corner:.6f}, dp = {dp:.6e}, "
              f"largest speed {umax:.3e}")
    n = len(rows)
    xs = [1.0 / r[0] for r in rows]
    ys = [r[1] for r in rows]
    mx, my = sum(xs) / n, sum(ys) / n
    sigma = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    c = my - sigma * mx
    rms = math.sqrt(sum((y - (sigma * x + c)) ** 2 for x, y in zip(xs, ys)) / n)
    rel = rms / (sum(abs(y) for y in ys) / n)
    print(f"dp = sigma / R + c: sigma = {sigma:.6e}, c = {c:.3e}; relative rms residual "
          f"{rel:.2e}; largest spurious speed {max(r[2] for r in rows):.3e}")
    if rel > tol:
        print(f"FAIL: the pressure differences are not linear in 1/R within {tol}")
        return False
    return True


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "coexistence":
        ok = check_coexistence(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]),
                               float(sys.argv[5]))
    elif len(sys.argv) == 4 and sys.argv[1] == "still":
        _, _, u = read_last_vtk(sys.argv[2])
        umax = max(math.sqrt(a * a + b * b + c * c) for a, b, c in u)
        ok = umax < float(sys.argv[3])
        print(f"largest speed {umax:.3e} (bound {sys.argv[3]})" + ("" if ok else ": FAIL"))
    elif len(sys.argv) >= 7 and sys.argv[1] == "laplace":
        ok = check_laplace(float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]),
                           sys.argv[5:])
    else:
        print(__doc__)
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
