#!/usr/bin/env python3
"""Output in physical units against the same run in lattice units.

usage: check_units.py LATTICE_FOLDER PHYSICAL_FOLDER

The two folders hold the same run (the DFG cylinder, configs/cylinder_2d.json and
configs/cylinder_2d_si.json with units.output "physical"); the physical one's
summary.json gives the scales (units: dx, dt, density). Every value written must be the
lattice value times its unit's factor, dx^l dt^t (rho dx^3)^k:
- series.csv and series_cylinder.csv: time = step dt; mass (kg), kinetic energy (J),
  forces (N) scaled, the coefficients c_D and c_L the same numbers;
- probe_front_1.csv: the density times rho;
- the VTK of the last step (VTK's own reader): Spacing dx, density times rho, velocity
  times dx / dt, flags (where written) the same; fields.pvd's times step dt;
- summary.json's totals scaled as series.csv's.
Tolerance: 1e-15 relative. tessera scales each value once by a factor computed in long
double; this script multiplies the lattice double by the factor rounded to a double, so
the two differ by at most about 1.5 units in the last place (3.3e-16 relative); 1e-15
leaves room for that and catches any wrong exponent (a factor of dx or dt is >= 5e-3
away from 1 here)."""
import csv
import json
import math
import os
import sys
import xml.etree.ElementTree as ET

from vtkmodules.vtkIOXML import vtkXMLImageDataReader, vtkXMLPImageDataReader

TOL = 1e-15


def fail(msg):
    print("check_units: FAILED: " + msg)
    sys.exit(1)


def close(a, b):
    return a == b or abs(a - b) <= TOL * max(abs(a), abs(b))


def rows(folder, name):
    with open(os.path.join(folder, name)) as f:
        return list(csv.DictReader(f))


lat, phys = sys.argv[1], sys.argv[2]
summary = json.load(open(os.path.join(phys, "summary.json")))
u = summary["units"]
if not isinstance(u, dict):  # configuration.md: an object of the scales
    fail("%s: summary.json's units is a %s, not an object" % (phys, type(u).__name__))
if u["output"] != "physical":
    fail("%s: units.output is %s" % (phys, u["output"]))
dx, dt, rho = u["dx"], u["dt"], u["density"]
mass = rho * dx ** 3
factor = {"time": dt, "mass": mass, "kinetic_energy": mass * dx * dx / (dt * dt),
          "fx": mass * dx / (dt * dt), "fy": mass * dx / (dt * dt), "fz": mass * dx / (dt * dt),
          "cd": 1.0, "cl": 1.0, "rho": rho, "step": 1.0}
for name in ("fx", "fy", "fz", "cd", "cl"):
    factor["cylinder." + name] = factor[name]

checked = 0
for name in ("series.csv", "series_cylinder.csv", "probe_front_1.csv"):
    a, b = rows(lat, name), rows(phys, name)
    if len(a) != len(b) or len(a) < 2:
        fail("%s: %d rows in lattice units, %d in physical units" % (name, len(a), len(b)))
    if list(a[0].keys()) != list(b[0].keys()):
        fail("%s: columns %s against %s" % (name, list(a[0]), list(b[0])))
    for ra, rb in zip(a, b):
        for col in ra:
            want = float(ra[col]) * (factor[col] if col != "time" else dt)
            if col == "time" and float(ra["time"]) != float(ra["step"]):
                fail("%s: lattice time %s at step %s" % (name, ra["time"], ra["step"]))
            if not close(want, float(rb[col])):
                fail("%s step %s: %s = %r, expected %r (lattice %s times its unit)" %
                     (name, ra["step"], col, float(rb[col]), want, ra[col]))
            checked += 1

slat = json.load(open(os.path.join(lat, "summary.json")))
for key in ("mass", "kinetic_energy", "cylinder.fx", "cylinder.fy", "cylinder.cd", "cylinder.cl"):
    if not close(slat[key] * factor[key], summary[key]):
        fail("summary.json: %s = %r, expected %r" % (key, summary[key], slat[key] * factor[key]))
    checked += 1


def image(folder):
    pvd = ET.parse(os.path.join(folder, "fields.pvd")).getroot()
    sets = pvd.findall("./Collection/DataSet")
    last = sets[-1].get("file")  # the step's one image, or the index of its block files
    reader = vtkXMLImageDataReader() if last.endswith(".vti") else vtkXMLPImageDataReader()
    reader.SetFileName(os.path.join(folder, last))
    reader.Update()
    return [float(s.get("timestep")) for s in sets], reader.GetOutput()


times_l, img_l = image(lat)
times_p, img_p = image(phys)
if len(times_l) != len(times_p) or not all(close(t * dt, p) for t, p in zip(times_l, times_p)):
    fail("fields.pvd: times %s, expected %s times dt = %r" % (times_p, times_l, dt))
if not all(close(s, dx) for s in img_p.GetSpacing()) or tuple(img_l.GetSpacing()) != (1, 1, 1):
    fail("VTK spacing %s (lattice %s), expected dx = %r" % (img_p.GetSpacing(), img_l.GetSpacing(), dx))
for name, f in (("density", rho), ("velocity", dx / dt), ("flags", 1.0)):
    al, ap = img_l.GetCellData().GetArray(name), img_p.GetCellData().GetArray(name)
    if name == "flags" and al is None and ap is None:
        continue  # not among the configuration's output.quantities
    if al is None or ap is None or al.GetNumberOfValues() != ap.GetNumberOfValues():
        fail("VTK: %s missing or of another size" % name)
    for i in range(al.GetNumberOfValues()):
        if not close(al.GetValue(i) * f, ap.GetValue(i)):
            fail("VTK %s[%d] = %r, expected %r" % (name, i, ap.GetValue(i), al.GetValue(i) * f))
    checked += al.GetNumberOfValues()
print("check_units: %d values in physical units are the lattice values times their units "
      "(dx = %g m, dt = %g s, rho = %g kg/m^3)" % (checked, dx, dt, rho))
