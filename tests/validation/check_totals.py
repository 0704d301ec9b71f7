#!/usr/bin/env python3
"""The totals of series.csv are those of the fields the outputs show: usage:
check_totals.py TESSERA MPIEXEC WORK [--diverge PATH=VALUE A B] CONFIG...

Runs each configuration on 2 processes (each with a force per cell, so that the moments
of the stored populations differ from the velocity the collision used by half that
force) for its steps, writing VTK (float64) and series.csv rows every half of them.
For every VTK step, the series row's mass and kinetic_energy must equal the sums over
the fluid cells of the VTK file's rho and rho |u|^2 / 2, to a relative 1e-11: the run
sums block by block and adds the blocks' sums, this script sums in file order, and
the orders' round-off on a few thousand terms of one sign stays below 1e-12 (measured
about 1e-15). Before the fix this tests, the Shan-Chen droplet's kinetic energy was
28 times the VTK's.
With --diverge, configurations A and B (one case on other hardware) run with that
setting, which makes them diverge: the stability check, on CPU blocks and on the device
alike, judges the velocity the outputs show, so both name the same step, block, cell and
values.
Exits non-zero with a message on the first failed check."""
import csv
import json
import os
import subprocess
import sys

from vtkmodules.vtkIOXML import vtkXMLImageDataReader

FLUID = 0  # geometry's flags value of a fluid cell
TOLERANCE = 1e-11


def fail(msg):
    print("check_totals: FAILED: " + msg)
    sys.exit(1)


def vtk_sums(path):
    r = vtkXMLImageDataReader()
    r.SetFileName(path)
    r.Update()
    cd = r.GetOutput().GetCellData()
    rho, u, flags = (cd.GetArray(n) for n in ("density", "velocity", "flags"))
    if rho is None or u is None or flags is None:
        fail("%s lacks density, velocity or flags" % path)
    mass = energy = 0.0
    for k in range(rho.GetNumberOfTuples()):
        if int(flags.GetValue(k)) != FLUID:
            continue
        r_ = rho.GetValue(k)
        ux, uy, uz = u.GetTuple3(k)
        mass += r_
        energy += 0.5 * r_ * (ux * ux + uy * uy + uz * uz)
    return mass, energy


def check(tessera, mpiexec, work, config):
    steps = json.load(open(config))["steps"]
    every = steps // 2
    folder = os.path.join(work, os.path.splitext(os.path.basename(config))[0])
    cmd = [mpiexec, "--oversubscribe", "-np", "2", tessera, "run", config, "--output", folder,
           "--overwrite", "--set", "output.vtk_every=%d" % every,
           "--set", "output.series_every=%d" % every,
           "--set", 'output.vtk_precision="float64"', "--set", 'output.vtk_files="one"',
           "--set", 'output.quantities=["density","velocity","flags"]']
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail("%s exited %d:\n%s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    rows = {int(row["step"]): row for row in csv.DictReader(open(os.path.join(folder, "series.csv")))}
    for step in (every, steps):
        if step not in rows:
            fail("%s: series.csv has no row of step %d" % (config, step))
        mass, energy = vtk_sums(os.path.join(folder, "fields_%06d.vti" % step))
        for name, want in (("mass", mass), ("kinetic_energy", energy)):
            got = float(rows[step][name])
            rel = abs(got - want) / abs(want)
            print("%s step %d %s: series %.17g, VTK %.17g, relative difference %.2e"
                  % (os.path.basename(config), step, name, got, want, rel))
            if not rel <= TOLERANCE:
                fail("%s step %d: series.csv's %s is %.17g, the VTK file's fields give %.17g"
                     % (config, step, name, got, want))


def diverged(tessera, mpiexec, work, config, setting):
    folder = os.path.join(work, "diverged_" + os.path.splitext(os.path.basename(config))[0])
    cmd = [mpiexec, "--oversubscribe", "-np", "2", tessera, "run", config, "--output", folder,
           "--overwrite", "--set", setting, "--set", "check_every=10"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    summary = os.path.join(folder, "summary.json")
    if r.returncode == 0 or not os.path.exists(summary):
        fail("%s: expected a run that diverged, got exit %d:\n%s%s"
             % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    d = json.load(open(summary)).get("diverged")
    print("%s with %s: diverged %s" % (os.path.basename(config), setting, d))
    return d


def main():
    args = sys.argv[1:]
    if len(args) < 4:
        fail("usage: check_totals.py TESSERA MPIEXEC WORK [--diverge PATH=VALUE A B] CONFIG...")
    tessera, mpiexec, work = args[:3]
    args = args[3:]
    setting, pair = None, []
    if args[0] == "--diverge":
        setting, pair, args = args[1], args[2:4], args[4:]
    os.makedirs(work, exist_ok=True)
    for config in pair + args:
        check(tessera, mpiexec, work, config)
    if setting:
        seen = [diverged(tessera, mpiexec, work, c, setting) for c in pair]
        if not seen[0] or any(d != seen[0] for d in seen):
            fail("the runs with %s do not name the same divergence: %s" % (setting, seen))
    print("check_totals: ok")


main()
