#!/usr/bin/env python3
"""One VTK file per output step, whatever the number of blocks: usage:
check_vtk_files.py TESSERA MPIEXEC WORK

Runs a small D3Q19 cavity (the flow: flags, density, velocity) on 2 processes with 1, 64 and
4096 blocks, in both layouts of output.vtk_files, and in float32, writing VTK at steps 0
and 2. Checks, for every block count:
- "one": the folder holds exactly one file per output step (fields_<step>.vti) and the
  index fields.pvd, nothing else of VTK; fields.pvd names those files;
- VTK's own reader (vtkXMLImageDataReader) reads the image as the whole domain, and every
  array equals, bit for bit, what vtkXMLPImageDataReader reads from the "blocks" run's
  per-block files and their .pvti;
- float32: every real array is the float64 run's values rounded to float32 (exactly:
  the rounding is the same conversion), flags unchanged, and the file's values take
  half the bytes.
Exits non-zero with a message on the first failed check."""
import glob
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

from array import array

from vtkmodules.vtkIOXML import vtkXMLImageDataReader, vtkXMLPImageDataReader

CASES = [([32, 32, 32], [1, 1, 1]), ([32, 32, 32], [4, 4, 4]), ([64, 64, 64], [16, 16, 16])]


def fail(msg):
    print("check_vtk_files: FAILED: " + msg)
    sys.exit(1)


def run(tessera, mpiexec, folder, cells, blocks, files, precision):
    cmd = [mpiexec, "--oversubscribe", "-np", "2", tessera, "run", "tests/configs/run_small_cavity.json",
           "--output", folder, "--overwrite", "--steps", "2",
           "--set", "domain.cells=%s" % cells, "--set", "domain.blocks=%s" % blocks,
           "--set", "output.vtk_every=2", "--set", "output.probes=[]", "--set", "output.slices=[]",
           "--set", 'output.vtk_files="%s"' % files, "--set", 'output.vtk_precision="%s"' % precision]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail("%s exited %d:\n%s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))


def arrays(reader_class, path):
    r = reader_class()
    r.SetFileName(path)
    r.Update()
    img = r.GetOutput()
    cd = img.GetCellData()
    # each array as (its values' type code, their bytes), through VTK's buffer protocol
    got = {}
    for i in range(cd.GetNumberOfArrays()):
        m = memoryview(cd.GetArray(i))
        got[cd.GetArrayName(i)] = (m.format, bytes(m))
    return tuple(img.GetExtent()), got


def check_case(tessera, mpiexec, work, cells, blocks):
    nb = blocks[0] * blocks[1] * blocks[2]
    one, per_block, f32 = ("%s/%d_%s" % (work, nb, k) for k in ("one", "blocks", "float32"))
    run(tessera, mpiexec, one, cells, blocks, "one", "float64")
    run(tessera, mpiexec, per_block, cells, blocks, "blocks", "float64")
    run(tessera, mpiexec, f32, cells, blocks, "one", "float32")
    vtk = sorted(os.path.basename(p) for p in glob.glob(one + "/fields*"))
    if vtk != ["fields.pvd", "fields_000000.vti", "fields_000002.vti"]:
        fail("%d blocks: the folder holds %s, expected one .vti per output step and fields.pvd" % (nb, vtk))
    named = [d.get("file") for d in ET.parse(one + "/fields.pvd").getroot().iter("DataSet")]
    if named != ["fields_000000.vti", "fields_000002.vti"]:
        fail("%d blocks: fields.pvd names %s" % (nb, named))
    whole = (0, cells[0], 0, cells[1], 0, cells[2])
    for step in ("000000", "000002"):
        e1, a1 = arrays(vtkXMLImageDataReader, "%s/fields_%s.vti" % (one, step))
        e2, a2 = arrays(vtkXMLPImageDataReader, "%s/fields_%s.pvti" % (per_block, step))
        e3, a3 = arrays(vtkXMLImageDataReader, "%s/fields_%s.vti" % (f32, step))
        if e1 != whole or e2 != whole or e3 != whole:
            fail("%d blocks, step %s: extents %s, %s, %s, expected %s" % (nb, step, e1, e2, e3, whole))
        if sorted(a1) != ["density", "flags", "velocity"] or sorted(a2) != sorted(a1) or sorted(a3) != sorted(a1):
            fail("%d blocks, step %s: arrays %s, %s, %s" % (nb, step, sorted(a1), sorted(a2), sorted(a3)))
        for name in a1:
            if a1[name] != a2[name]:
                fail("%d blocks, step %s: %s of the one file differs from the block files'" % (nb, step, name))
            want = a1[name] if name == "flags" else ("f", array("f", array("d", a1[name][1])).tobytes())
            if a3[name] != want:
                fail("%d blocks, step %s: float32 %s is not the float64 values rounded" % (nb, step, name))
    s64 = os.path.getsize(one + "/fields_000002.vti")
    s32 = os.path.getsize(f32 + "/fields_000002.vti")
    n = cells[0] * cells[1] * cells[2]
    if s64 - s32 < 4 * n * 4 * 0.999:
        fail("%d blocks: float32 file %d bytes, float64 %d: not half the real values' bytes" % (nb, s32, s64))
    print("%d blocks: one .vti per output step (%d bytes, float32 %d), equal to the block files" % (nb, s64, s32))


def main():
    if len(sys.argv) != 4:
        fail("usage: check_vtk_files.py TESSERA MPIEXEC WORK")
    tessera, mpiexec, work = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    for cells, blocks in CASES:
        check_case(tessera, mpiexec, work, cells, blocks)


main()
