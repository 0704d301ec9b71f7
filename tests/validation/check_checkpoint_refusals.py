#!/usr/bin/env python3
"""A checkpoint that is damaged or does not fit the run is refused with one message naming
what is wrong, exit status 1, before the output folder is touched; one the run may change
(another CPU layout, output folder) is taken.
usage: check_checkpoint_refusals.py TESSERA WORK_FOLDER

Writes a 2-block D2Q9 run's checkpoint at step 4, then restarts from copies of it:
one bit flipped in a block's data, one in the header, the file cut short, another format
version, a text file, a configuration with another viscosity, another block grid, and a
checkpoint already at the run's last step. Then it is taken in another CPU layout, and, in
the layout of format version 1 (blocks back to back), continues to the same bytes."""
import os
import shutil
import struct
import subprocess
import sys

tessera, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
config = os.path.join(work, "run.json")
with open(config, "w") as f:
    f.write('{"domain": {"cells": [8, 4, 1], "blocks": [2, 1, 1], "periodic": [true, true, true]},'
            ' "steps": 4, "lbm": {"lattice": "d2q9", "viscosity": 0.05,'
            ' "initial": {"kind": "taylor_green", "u0": 0.01}},'
            ' "output": {"checkpoint_every": 4, "progress_every": 0}}')


def fail(msg):
    print("check_checkpoint_refusals: FAILED: " + msg)
    sys.exit(1)


def run(*args, folder):
    p = subprocess.run([tessera, "run", config, "--output", folder] + list(args),
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


rc, out, err = run(folder=os.path.join(work, "first"))
if rc != 0:
    fail("the first run failed: " + err)
good = os.path.join(work, "first", "checkpoint_000004.tsrc")
data = open(good, "rb").read()


def variant(name, content):
    path = os.path.join(work, name + ".tsrc")
    with open(path, "wb") as f:
        f.write(content)
    return path


def flip(content, at):
    b = bytearray(content)
    b[at] ^= 0x10
    return bytes(b)


version = bytearray(data)
version[16] = 3
cases = [
    ("data_bit", variant("data_bit", flip(data, 4096 + 100)), [], "BlockID 0 does not match its checksum"),
    ("header_bit", variant("header_bit", flip(data, 200)), [], "the header's checksum does not match"),
    ("truncated", variant("truncated", data[:-200]), [], "(truncated?)"),
    ("version", variant("version", bytes(version)), [], "checkpoint format version 3; this tessera reads versions 1 to 2"),
    ("text", variant("text", b"{\"not\": \"a checkpoint\"}\n" * 4), [], "not a tessera checkpoint"),
    ("config", good, ["--set", "lbm.viscosity=0.06"], "written by a run of another configuration (lbm: trt,dp,soa,in_place): lbm.viscosity is 0.05 there, 0.06 here"),
    ("grid", good, ["--set", "domain.blocks=[1,1,1]"], "the block grid must be the same"),
    ("done", good, ["--steps", "4"], "is at step 4; steps = 4 leaves nothing to run"),
]
for name, path, extra, expected in cases:
    folder = os.path.join(work, "out_" + name)
    rc, out, err = run("--restart", path, *extra, folder=folder)
    if rc != 1 or expected not in err or err.count("tessera: error:") != 1:
        fail("%s: exit %d, stderr %r; expected one error with %r" % (name, rc, err, expected))
    if os.path.exists(folder):
        fail("%s: the output folder %s was made for a refused restart" % (name, folder))
    print("check_checkpoint_refusals: %s: refused: %s" % (name, err.strip().splitlines()[-1][:150]))
rc, out, err = run("--restart", good, "--steps", "8", "--set", 'lbm.cpu_layout="aos"',
                   folder=os.path.join(work, "taken"))
if rc != 0 or "restarted from" not in out:
    fail("a restart in AoS into another folder was refused: " + err)
print("check_checkpoint_refusals: another layout and folder: taken")


def crc32c(data):
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    crc = 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def as_version_1(content):
    """The checkpoint in format version 1: blocks and extras back to back from the data
    offset (docs/checkpoints.md), the header's records and checksum rewritten."""
    header_bytes, data_offset = struct.unpack_from("<QQ", content, 24)
    nf, nb, ne = struct.unpack_from("<III", content, 352)
    head = bytearray(content[:header_bytes])
    struct.pack_into("<I", head, 16, 1)
    body, at = bytearray(), data_offset
    records = [(368 + 72 * nf + 24 * i, 8) for i in range(nb)] + \
              [(368 + 72 * nf + 24 * nb + 88 * i, 72) for i in range(ne)]
    for rec, skip in records:
        offset, length = struct.unpack_from("<QQ", head, rec + skip)
        body += content[offset:offset + length]
        struct.pack_into("<Q", head, rec + skip, at)
        at += length
    struct.pack_into("<I", head, header_bytes - 8, crc32c(bytes(head[:header_bytes - 8])))
    return bytes(head) + bytes(data_offset - header_bytes) + bytes(body)


old = variant("version_1", as_version_1(data))
if len(open(old, "rb").read()) >= len(data):
    fail("the version 1 layout is not shorter: the blocks of version 2 have no gaps")
rc, out, err = run("--restart", old, "--steps", "8", "--set", 'lbm.cpu_layout="aos"',
                   folder=os.path.join(work, "version_1"))
if rc != 0:
    fail("a checkpoint of format version 1 was refused: " + err)
same = [open(os.path.join(work, f, "checkpoint_000008.tsrc"), "rb").read()
        for f in ("taken", "version_1")]
if same[0] != same[1]:
    fail("the run restarted from format version 1 wrote another checkpoint at step 8")
print("check_checkpoint_refusals: format version 1: taken, the same checkpoint at step 8")
