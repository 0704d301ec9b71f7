#!/usr/bin/env python3
"""Writes raw voxel images (obstacles of "shape": "image") for tessera's tests and examples,
x fastest, nothing but an optional header before the voxels.
usage: make-voxels.py sphere NX NY NZ CX CY CZ R TYPE OUT [HEADER]
           a ball of radius R centred at (CX, CY, CZ) (voxel coordinates: voxel i spans
           [i, i + 1)): 200 at voxels whose centre lies in it (|c - centre| <= R, as
           tessera's analytic sphere decides cells), 10 elsewhere; TYPE uint8, uint16le or
           uint16be (the values times 300 for uint16); HEADER bytes of 0xAB first
       make-voxels.py porous NX NY NZ SEED POROSITY TYPE OUT
           a random porous medium: overlapping balls of radius 1.5 to 4 placed at random
           (SEED) until the solid fraction reaches 1 - POROSITY, repeated across the faces
           (periodic); values as for sphere"""
import random
import struct
import sys


def write(path, n, solid, kind, header=0):
    scale = 1 if kind == "uint8" else 300
    fmt = {"uint8": "B", "uint16le": "<H", "uint16be": ">H"}[kind]
    out = bytearray(b"\xab" * header)
    for z in range(n[2]):
        for y in range(n[1]):
            for x in range(n[0]):
                out += struct.pack(fmt, (200 if solid(x, y, z) else 10) * scale)
    with open(path, "wb") as f:
        f.write(out)


def main(argv):
    if len(argv) >= 10 and argv[1] == "sphere":
        n = [int(v) for v in argv[2:5]]
        c = [float(v) for v in argv[5:8]]
        r = float(argv[8])
        header = int(argv[11]) if len(argv) > 11 else 0

        def solid(x, y, z):
            p = (x + 0.5, y + 0.5, z + 0.5)
            return sum((p[a] - c[a]) ** 2 for a in range(3)) <= r * r

        write(argv[10], n, solid, argv[9], header)
    elif len(argv) == 9 and argv[1] == "porous":
        n = [int(v) for v in argv[2:5]]
        rng = random.Random(int(argv[5]))
        target = 1.0 - float(argv[6])
        cells = n[0] * n[1] * n[2]
        grid = bytearray(cells)
        filled = 0
        while filled < target * cells:
            c = [rng.uniform(0, n[a]) for a in range(3)]
            r = rng.uniform(1.5, 4.0)
            lo = [int(c[a] - r) - 1 for a in range(3)]
            hi = [int(c[a] + r) + 1 for a in range(3)]
            for z in range(lo[2], hi[2] + 1):
                for y in range(lo[1], hi[1] + 1):
                    for x in range(lo[0], hi[0] + 1):
                        p = (x + 0.5, y + 0.5, z + 0.5)
                        if sum((p[a] - c[a]) ** 2 for a in range(3)) > r * r:
                            continue
                        k = ((z % n[2]) * n[1] + y % n[1]) * n[0] + x % n[0]
                        if not grid[k]:
                            grid[k] = 1
                            filled += 1
        write(argv[8], n, lambda x, y, z: grid[(z * n[1] + y) * n[0] + x], argv[7])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
