#!/usr/bin/env python3
"""The plan's memory prediction against the measured peak: usage:
check_plan_memory.py TESSERA WORK

For three runs of configs/cavity.json in one process (a CPU block of 80^3 in double
precision; 64 CPU blocks of 24^3 in single precision; a 64^3 block on the OpenCL device,
PoCL in CI, whose device memory is the process's), 20 steps with a VTK output at the last,
`tessera plan --json` predicts the process's bytes (host, and device: on PoCL the device
buffers are host memory too) and GNU time (/usr/bin/time -f %M) measures the peak
resident memory of the run. Each prediction must be within 15% of the peak: the model
counts every allocation of the fields, the modules and the VTK writer, and a fixed
hardware.balance.process_mb (90 MB) for the program and its libraries, which differs
from the measured 76 MB (CPU) and 108 MB (PoCL) of a run of 8^3 cells. The OpenCL run
goes twice, the second measured: a first run compiles the kernels PoCL has not cached,
with LLVM's memory in the process (not the program's). Also checks that --csv writes the
same table as --json. Exits non-zero with a message on the first
failed check."""
import csv
import json
import os
import subprocess
import sys

CASES = [("cpu_80_dp", ["domain.cells=[80,80,80]", "domain.blocks=[1,1,1]"]),
         ("cpu_96_sp_64_blocks", ["domain.cells=[96,96,96]", "domain.blocks=[4,4,4]", 'lbm.precision="sp"']),
         ("gpu_64_dp", ["domain.cells=[64,64,64]", "domain.blocks=[1,1,1]", 'hardware.hs="gpu"'])]
COMMON = ["steps=20", "output.vtk_every=20", "output.slices=[]"]


def fail(msg):
    print("check_plan_memory: FAILED: " + msg)
    sys.exit(1)


def sets(items):
    out = []
    for s in items + COMMON:
        out += ["--set", s]
    return out


def main():
    if len(sys.argv) != 3:
        fail("usage: check_plan_memory.py TESSERA WORK")
    tessera, work = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    for name, items in CASES:
        js, cs = os.path.join(work, name + ".json"), os.path.join(work, name + ".csv")
        r = subprocess.run([tessera, "plan", "configs/cavity.json", "--ranks", "1", "--json", js, "--csv", cs]
                           + sets(items), capture_output=True, text=True)
        if r.returncode != 0:
            fail("%s: tessera plan exited %d:\n%s%s" % (name, r.returncode, r.stdout, r.stderr))
        proc = json.load(open(js))["processes"][0]
        predicted = proc["predicted_host_bytes"] + proc["predicted_device_bytes"]
        rows = list(csv.DictReader(open(cs)))
        if len(rows) != 1 or float(rows[0]["predicted_host_bytes"]) != proc["predicted_host_bytes"]:
            fail("%s: --csv holds %s, --json %s" % (name, rows, proc))
        run = [tessera, "run", "configs/cavity.json", "--output", os.path.join(work, name), "--overwrite"] + sets(items)
        if "gpu" in name:  # PoCL compiles kernels it has not cached in the process (LLVM's memory): warm it
            subprocess.run(run, capture_output=True)
        r = subprocess.run(["/usr/bin/time", "-f", "peak %M"] + run, capture_output=True, text=True)
        peak = [l for l in r.stderr.splitlines() if l.startswith("peak ")]
        if r.returncode != 0 or not peak:
            fail("%s: tessera run exited %d:\n%s%s" % (name, r.returncode, r.stdout, r.stderr))
        measured = int(peak[-1].split()[1]) * 1024
        ratio = predicted / measured
        print("%s: predicted %.1f MB, peak %.1f MB, ratio %.3f" % (name, predicted / 1e6, measured / 1e6, ratio))
        if abs(ratio - 1) > 0.15:
            fail("%s: the prediction is %.1f%% off the peak" % (name, 100 * (ratio - 1)))


main()
