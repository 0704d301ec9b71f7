#!/usr/bin/env python3
"""Open faces: the pressure outlet and the outflow (tests/configs/outlet/).
usage: check_outlet.py H8_FOLDER H16_FOLDER DRIVEN_FOLDER PLUG_FOLDER

1. Poiseuille flow from a parabolic velocity inlet (x-, peak U) to a pressure outlet
   (x+, rho_w = 1), H = 8 and 16 cells across, 4 H long, nu = 1/6, TRT, U H fixed (the
   same Reynolds number, 2.56). The exact solution is the parabola of peak U in every
   cross-section and dp/dx = -8 rho0 nu U / H^2, with the outlet's density rho_w at the
   face. Printed: the largest error of u_x across x = 5/8 of the length, relative to U,
   and of the pressure gradient, at both resolutions, and the order of convergence.
   Checked: the order is 2 (1.9 to 2.1); at H = 16 both errors are below 3e-3; the
   density extrapolated to the outlet face is rho_w within 1e-4 of the pressure drop.
   The errors are those of the inlet (the flux its links carry is the profile's
   integral, 1/(2 H^2) more than the lattice's Poiseuille flow of the same peak, see
   check_inlet.py): the outlet adds nothing measurable, checked as the error being
   1/(2 H^2) within 5%. Steady: the change over the last quarter of the run is below
   1/20 of the error.
2. Pressure-driven Poiseuille flow between two pressure faces (rho 1.01 at x-, 0.99 at
   x+, H = 8, single precision, AoS): the parabola of the pressure gradient
   (rho_in - rho_out) c_s^2 / (4 H) exactly (the scheme is exact for it), within 2e-5 of
   the peak (single precision: the populations' rounding, about 6e-8 of rho0, against a
   peak of 1e-2 of the speed of sound; measured 1e-5, 2e-9 in double precision); the
   density linear from rho_in to rho_out at the faces, within 1e-6.
3. Outflow: a uniform inflow U = 0.05 through a periodic channel to a zero-gradient
   outflow reaches the uniform flow U everywhere, within 1e-9 of U (measured 4e-13), its
   density steady within 1e-9."""
import csv
import math
import os
import sys

NU, RHO0, CS2 = 1.0 / 6.0, 1.0, 1.0 / 3.0


def fail(msg):
    print("check_outlet: FAILED: " + msg)
    sys.exit(1)


def rows(folder, name):
    with open(os.path.join(folder, "probe_%s.csv" % name)) as f:
        return list(csv.DictReader(f))


def slope(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    s = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return s, my - s * mx


def poiseuille(folder, H, U):
    L = 4 * H
    x = L * 5 // 8
    r = rows(folder, "across")
    last, before = r[-1], r[-2]
    want = [4.0 * U * (y + 0.5) * (H - y - 0.5) / (H * H) for y in range(H)]
    got = [float(last["ux_%d_%d_0" % (x, y)]) for y in range(H)]
    err = max(abs(g - w) for g, w in zip(got, want)) / U
    drift = max(abs(g - float(before["ux_%d_%d_0" % (x, y)])) for y, g in enumerate(got)) / U
    a = rows(folder, "along")[-1]
    xs = list(range(L // 4, 3 * L // 4))
    s, c = slope(xs, [float(a["rho_%d_%d_0" % (i, H // 2)]) for i in xs])
    grad = -8.0 * RHO0 * NU * U / (H * H) / CS2
    face = s * (L - 0.5) + c  # the face lies at x = L - 1/2 in cell indices
    print("check_outlet: H = %d: u_x error %.4g of U, pressure gradient error %.4g, "
          "outlet density off by %.3g of the drop (change over the last quarter %.2g of U)"
          % (H, err, (s - grad) / grad, (face - 1.0) / (-grad * L), drift))
    if drift > err / 20:
        fail("H = %d is not steady: u_x changed by %.3g of U over the last quarter" % (H, drift))
    if abs(face - 1.0) > 1e-4 * abs(grad) * L:
        fail("H = %d: the density at the outlet face is %.9g, not 1" % (H, face))
    return err, abs((s - grad) / grad)


e8, g8 = poiseuille(sys.argv[1], 8, 0.04)
e16, g16 = poiseuille(sys.argv[2], 16, 0.02)
order_u, order_g = math.log2(e8 / e16), math.log2(g8 / g16)
print("check_outlet: order of convergence: velocity %.3f, pressure gradient %.3f" % (order_u, order_g))
if not (1.9 <= order_u <= 2.1 and 1.9 <= order_g <= 2.1):
    fail("the order of convergence is not 2")
if e16 > 3e-3 or g16 > 3e-3:
    fail("H = 16: errors %.3g, %.3g exceed 3e-3" % (e16, g16))
for H, e in ((8, e8), (16, e16)):
    if abs(e / (1.0 / (2 * H * H)) - 1.0) > 0.05:
        fail("H = %d: the error %.4g is not the inlet's 1/(2 H^2) = %.4g" % (H, e, 1.0 / (2 * H * H)))

# 2. pressure-driven
H, L, rin, rout = 8, 32, 1.01, 0.99
G = (rin - rout) * CS2 / L
peak = G * H * H / (8.0 * RHO0 * NU)
last = rows(sys.argv[3], "across")[-1]
x = L * 5 // 8
err = max(abs(float(last["ux_%d_%d_0" % (x, y)]) - G / (2 * RHO0 * NU) * (y + 0.5) * (H - y - 0.5))
          for y in range(H)) / peak
a = rows(sys.argv[3], "along")[-1]
s, c = slope(list(range(L)), [float(a["rho_%d_4_0" % i]) for i in range(L)])
print("check_outlet: pressure-driven: u_x error %.3g of the peak; density at the faces %.7f, %.7f"
      % (err, c - 0.5 * s, c + (L - 0.5) * s))
if err > 2e-5:
    fail("the pressure-driven profile is off by %.3g of its peak (bound 2e-5)" % err)
if abs(c - 0.5 * s - rin) > 1e-6 or abs(c + (L - 0.5) * s - rout) > 1e-6:
    fail("the densities at the faces are not 1.01 and 0.99")

# 3. outflow
r = rows(sys.argv[4], "along")
last, before = r[-1], r[-2]
U = 0.05
err = max(abs(float(last["ux_%d_4_0" % i]) - U) for i in range(64)) / U
change = max(abs(float(last["rho_%d_4_0" % i]) - float(before["rho_%d_4_0" % i])) for i in range(64))
print("check_outlet: outflow: u_x within %.3g of U everywhere; density %.6f, changed by %.3g "
      "over the last 1000 steps" % (err, float(last["rho_63_4_0"]), change))
if err > 1e-9 or change > 1e-9:
    fail("the uniform flow through the outflow is off")
print("check_outlet: passed")
