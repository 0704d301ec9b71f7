#!/usr/bin/env python3
"""Reads the VTK output of `tessera run` with VTK's own XML readers (Debian's python3-vtk9)
and checks it against the run: usage: check_vtk.py OUTPUT_FOLDER NX NY NZ PROBE_CSV

- fields.pvd lists every output step; each step's .pvti names one .vti per block;
- the blocks' extents tile the domain exactly (no ghost cells, no overlap, no gap);
- the .pvti reads as one image of the whole domain (vtkXMLPImageDataReader) whose cells
  equal the blocks' files, and cell-to-point interpolation at a point on a block seam
  averages the cells of both blocks (no seams in interpolated pictures);
- density, velocity and flags are there, finite, with the right component counts;
- the values at the probe's cells equal the probe CSV of the last step exactly;
- the fluid mass of the last step equals summary.json's mass (up to summation order);
- a probe that names its quantities ("velocity" beside PROBE_CSV) has only their columns,
  with the same values; series.csv has a row per series step, the last one's mass
  summary.json's.
Exits non-zero with a message on the first failed check."""
import csv
import json
import math
import os
import sys
import xml.etree.ElementTree as ET

from vtkmodules.vtkFiltersCore import vtkCellDataToPointData
from vtkmodules.vtkIOXML import vtkXMLImageDataReader, vtkXMLPImageDataReader


def fail(msg):
    print("check_vtk: FAILED: " + msg)
    sys.exit(1)


def check_whole(path, pieces, covered, nx, ny, nz):
    """The step's .pvti as one image: every cell as in the blocks' files, and the point
    data interpolated from the cells: at a point on a seam between blocks, the mean of the
    cells around it in both blocks."""
    reader = vtkXMLPImageDataReader()
    reader.SetFileName(path)
    reader.Update()
    img = reader.GetOutput()
    if tuple(img.GetExtent()) != (0, nx, 0, ny, 0, nz):
        fail("%s: extent %s, expected the domain (0 %d 0 %d 0 %d)" % (path, img.GetExtent(), nx, ny, nz))
    rho = img.GetCellData().GetArray("density")
    if rho is None or rho.GetNumberOfTuples() != nx * ny * nz:
        fail("%s: no density over the whole domain" % path)
    for (x, y, z), (r, _) in covered.items():
        if rho.GetValue((z * ny + y) * nx + x) != r:
            fail("%s: cell (%d,%d,%d) differs from its block's file" % (path, x, y, z))
    # a seam: the low x face of a block that does not start at x = 0
    seam = next((p for p in pieces if int(p.get("Extent").split()[0]) > 0), None)
    if seam is None:
        return
    e = [int(v) for v in seam.get("Extent").split()]
    px, py, pz = e[0], (e[2] + e[3]) // 2, (e[4] + e[5]) // 2
    c2p = vtkCellDataToPointData()
    c2p.SetInputData(img)
    c2p.Update()
    got = c2p.GetOutput().GetPointData().GetArray("density").GetValue((pz * (ny + 1) + py) * (nx + 1) + px)
    cells = [(x, y, z) for x in (px - 1, px) for y in (py - 1, py) for z in (pz - 1, pz)
             if 0 <= x < nx and 0 <= y < ny and 0 <= z < nz]
    want = sum(covered[c][0] for c in cells) / len(cells)
    # the mean of at most 8 values of order 1: summation order differs by a few ulps
    if abs(got - want) > 1e-13:
        fail("%s: point (%d,%d,%d) on a block seam interpolates to %.17g, the mean of the cells "
             "of both blocks around it is %.17g" % (path, px, py, pz, got, want))


def main():
    folder, nx, ny, nz, probe_csv = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    pvd = ET.parse(os.path.join(folder, "fields.pvd")).getroot()
    steps = [(int(d.get("timestep")), d.get("file")) for d in pvd.iter("DataSet")]
    if len(steps) < 2:
        fail("fields.pvd lists %d steps, expected several" % len(steps))
    last_values = {}
    for step, pvti_name in steps:
        pvti = ET.parse(os.path.join(folder, pvti_name)).getroot()
        pieces = list(pvti.iter("Piece"))
        covered = {}
        mass = 0.0
        for ds in pieces:
            reader = vtkXMLImageDataReader()
            reader.SetFileName(os.path.join(folder, ds.get("Source")))
            reader.Update()
            img = reader.GetOutput()
            ext = img.GetExtent()
            cd = img.GetCellData()
            arrays = [cd.GetArray(name) for name in ("density", "velocity", "flags")]
            if any(a is None for a in arrays):
                fail("%s: density, velocity or flags missing" % ds.get("Source"))
            ncell = (ext[1] - ext[0]) * (ext[3] - ext[2]) * (ext[5] - ext[4])
            shapes = [(a.GetNumberOfTuples(), a.GetNumberOfComponents()) for a in arrays]
            if shapes != [(ncell, 1), (ncell, 3), (ncell, 1)]:
                fail("%s: array shapes %s for %d cells" % (ds.get("Source"), shapes, ncell))
            rho = [arrays[0].GetValue(i) for i in range(ncell)]
            vel = [arrays[1].GetTuple3(i) for i in range(ncell)]
            flags = [int(arrays[2].GetValue(i)) for i in range(ncell)]
            if not all(math.isfinite(v) for v in rho) or not all(math.isfinite(c) for v in vel for c in v):
                fail("%s: non-finite values" % ds.get("Source"))
            k = 0
            for z in range(ext[4], ext[5]):
                for y in range(ext[2], ext[3]):
                    for x in range(ext[0], ext[1]):
                        if not (0 <= x < nx and 0 <= y < ny and 0 <= z < nz):
                            fail("%s: cell (%d,%d,%d) outside the domain (a ghost cell?)" % (ds.get("Source"), x, y, z))
                        if (x, y, z) in covered:
                            fail("cell (%d,%d,%d) in two blocks" % (x, y, z))
                        covered[(x, y, z)] = (rho[k], tuple(vel[k]))
                        if flags[k] == 0:
                            mass += rho[k]
                        k += 1
        if len(covered) != nx * ny * nz:
            fail("step %d: blocks cover %d cells, the domain has %d" % (step, len(covered), nx * ny * nz))
        check_whole(os.path.join(folder, pvti_name), pieces, covered, nx, ny, nz)
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
    narrow = os.path.join(os.path.dirname(probe_csv), os.path.basename(probe_csv).replace("vertical", "velocity"))
    with open(narrow) as f:
        nrows = list(csv.DictReader(f))
        header = list(nrows[0].keys()) if nrows else []
    if header != ["x", "y", "z", "ux", "uy", "uz"]:
        fail("%s: columns %s, expected x,y,z,ux,uy,uz" % (narrow, header))
    if [(r["ux"], r["uy"], r["uz"]) for r in nrows] != [(r["ux"], r["uy"], r["uz"]) for r in rows]:
        fail("%s: the velocity differs from the full probe's" % narrow)
    with open(os.path.join(folder, "series.csv")) as f:
        series = list(csv.DictReader(f))
    if [int(r["step"]) for r in series] != [20, 40, 60] or float(series[-1]["mass"]) != summary["mass"]:
        fail("series.csv: rows %s, expected steps 20, 40, 60 ending with summary.json's mass %.17g"
             % ([(r["step"], r["mass"]) for r in series], summary["mass"]))
    print("check_vtk: %d steps, %d cells per step in %d blocks, probe of %d cells and mass agree"
          % (len(steps), nx * ny * nz, len(pieces), len(rows)))


main()
