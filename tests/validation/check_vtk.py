#!/usr/bin/env python3
"""Reads the VTK output of `tessera run` with VTK's own XML readers (Debian's python3-vtk9)
and checks it against the run: usage: check_vtk.py OUTPUT_FOLDER NX NY NZ PROBE_CSV

- fields.pvd lists every output step; each step's .vtm names one .vti per block;
- the blocks' extents tile the domain exactly (no ghost cells, no overlap, no gap);
- density, velocity and flags are there, finite, with the right component counts;
- the values at the probe's cells equal the probe CSV of the last step exactly;
- the fluid mass of the last step equals summary.json's mass (up to summation order).
Exits non-zero with a message on the first failed check."""
import csv
import json
import math
import os
import sys
import xml.etree.ElementTree as ET

from vtkmodules.vtkIOXML import vtkXMLImageDataReader


def fail(msg):
    print("check_vtk: FAILED: " + msg)
    sys.exit(1)


def main():
    folder, nx, ny, nz, probe_csv = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    pvd = ET.parse(os.path.join(folder, "fields.pvd")).getroot()
    steps = [(int(d.get("timestep")), d.get("file")) for d in pvd.iter("DataSet")]
    if len(steps) < 2:
        fail("fields.pvd lists %d steps, expected several" % len(steps))
    last_values = {}
    for step, vtm_name in steps:
        vtm = ET.parse(os.path.join(folder, vtm_name)).getroot()
        covered = {}
        mass = 0.0
        for ds in vtm.iter("DataSet"):
            reader = vtkXMLImageDataReader()
            reader.SetFileName(os.path.join(folder, ds.get("file")))
            reader.Update()
            img = reader.GetOutput()
            ext = img.GetExtent()
            cd = img.GetCellData()
            arrays = [cd.GetArray(name) for name in ("density", "velocity", "flags")]
            if any(a is None for a in arrays):
                fail("%s: density, velocity or flags missing" % ds.get("file"))
            ncell = (ext[1] - ext[0]) * (ext[3] - ext[2]) * (ext[5] - ext[4])
            shapes = [(a.GetNumberOfTuples(), a.GetNumberOfComponents()) for a in arrays]
            if shapes != [(ncell, 1), (ncell, 3), (ncell, 1)]:
                fail("%s: array shapes %s for %d cells" % (ds.get("file"), shapes, ncell))
            rho = [arrays[0].GetValue(i) for i in range(ncell)]
            vel = [arrays[1].GetTuple3(i) for i in range(ncell)]
            flags = [int(arrays[2].GetValue(i)) for i in range(ncell)]
            if not all(math.isfinite(v) for v in rho) or not all(math.isfinite(c) for v in vel for c in v):
                fail("%s: non-finite values" % ds.get("file"))
            k = 0
            for z in range(ext[4], ext[5]):
                for y in range(ext[2], ext[3]):
                    for x in range(ext[0], ext[1]):
                        if not (0 <= x < nx and 0 <= y < ny and 0 <= z < nz):
                            fail("%s: cell (%d,%d,%d) outside the domain (a ghost cell?)" % (ds.get("file"), x, y, z))
                        if (x, y, z) in covered:
                            fail("cell (%d,%d,%d) in two blocks" % (x, y, z))
                        covered[(x, y, z)] = (rho[k], tuple(vel[k]))
                        if flags[k] == 0:
                            mass += rho[k]
                        k += 1
        if len(covered) != nx * ny * nz:
            fail("step %d: blocks cover %d cells, the domain has %d" % (step, len(covered), nx * ny * nz))
        last_values, last_mass = covered, mass
    with open(probe_csv) as f:
        rows = list(csv.DictReader(f))
    if not rows:
        fail("probe CSV is empty")
    for r in rows:
        cell = (int(r["x"]), int(r["y"]), int(r["z"]))
        rho, vel = last_values[cell]
        want = (float(r["rho"]), float(r["ux"]), float(r["uy"]), float(r["uz"]))
        if (rho,) + vel != want:
            fail("probe cell %s: VTK has %s, CSV has %s" % (cell, (rho,) + vel, want))
    with open(os.path.join(folder, "summary.json")) as f:
        summary = json.load(f)
    if abs(summary["mass"] - last_mass) > 1e-12 * last_mass:
        fail("fluid mass of the last VTK step %.17g differs from summary.json's %.17g" % (last_mass, summary["mass"]))
    print("check_vtk: %d steps, %d cells per step in %d blocks, probe of %d cells and mass agree"
          % (len(steps), nx * ny * nz, len(list(vtm.iter("DataSet"))), len(rows)))


main()
