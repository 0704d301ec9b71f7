#!/usr/bin/env python3
"""A sphere from an STL file against the analytic sphere (tests/configs/curved/
sphere_stl_cells.json and sphere_analytic_cells.json: radius 5 at (12.3, 11.8, 12.1), the
mesh tests/configs/meshes/sphere_l3.stl, 1280 triangles inscribed in the unit sphere,
scaled by 5).
usage: check_stl_cells.py STL_FOLDER ANALYTIC_FOLDER MESH

The solid cells (VTK flags of step 0) are the same but where a cell centre lies between
the inscribed polyhedron and the sphere: every differing cell must be solid in the
analytic run only, at a distance from the centre between the polyhedron's inradius (the
nearest of its faces' planes) and the radius. The differing cells are listed."""
import math
import struct
import sys

from vtkmodules.vtkIOXML import vtkXMLImageDataReader

R, C = 5.0, (12.3, 11.8, 12.1)


def flags(folder):
    r = vtkXMLImageDataReader()
    r.SetFileName(folder + "/fields_000000.vti")
    r.Update()
    img = r.GetOutput()
    a = img.GetCellData().GetArray("flags")
    nx, ny, _ = [d - 1 for d in img.GetDimensions()]
    return [a.GetValue(k) for k in range(a.GetNumberOfTuples())], nx, ny


with open(sys.argv[3], "rb") as f:
    data = f.read()
n = struct.unpack("<I", data[80:84])[0]
inradius = 1.0
for k in range(n):
    v = [struct.unpack("<3f", data[84 + 50 * k + 12 + 12 * i: 84 + 50 * k + 24 + 12 * i]) for i in range(3)]
    u = [v[1][a] - v[0][a] for a in range(3)]
    w = [v[2][a] - v[0][a] for a in range(3)]
    nn = [u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]]
    ln = math.sqrt(sum(x * x for x in nn))
    inradius = min(inradius, abs(sum(nn[a] * v[0][a] for a in range(3))) / ln)
stl, nx, ny = flags(sys.argv[1])
ana, _, _ = flags(sys.argv[2])
differ = [k for k in range(len(stl)) if stl[k] != ana[k]]
solid = sum(1 for x in ana if x != 0)
print("check_stl_cells: %d solid cells analytic, %d from the mesh; %d differ (inradius %.5f R)"
      % (solid, sum(1 for x in stl if x != 0), len(differ), inradius))
for k in differ:
    x, y, z = k % nx, (k // nx) % ny, k // (nx * ny)
    d = math.sqrt((x + 0.5 - C[0]) ** 2 + (y + 0.5 - C[1]) ** 2 + (z + 0.5 - C[2]) ** 2)
    print("  cell (%d, %d, %d): analytic %d, mesh %d, centre at %.5f R" % (x, y, z, ana[k], stl[k], d / R))
    if not (ana[k] != 0 and stl[k] == 0 and inradius * R <= d <= R):
        print("check_stl_cells: FAILED: that cell is not between the polyhedron and the sphere")
        sys.exit(1)
if len(differ) > 0.02 * solid:
    print("check_stl_cells: FAILED: too many cells differ")
    sys.exit(1)
print("check_stl_cells: passed")
