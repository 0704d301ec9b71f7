#!/usr/bin/env python3
"""Writes the STL meshes tessera's configurations and tests use (binary STL, closed,
counter-clockwise seen from outside), made here so that they carry no one else's licence.
usage: make-stl.py sphere LEVEL OUT.stl      a unit sphere: an icosahedron subdivided LEVEL
                                            times, its vertices on the sphere (20 * 4^LEVEL
                                            triangles, inscribed)
       make-stl.py cylinder N Z0 Z1 OUT.stl  a unit-radius cylinder along z from Z0 to Z1:
                                            a prism on a regular N-gon inscribed in the
                                            circle, closed by its two caps"""
import math
import struct
import sys


def write(path, tris):
    with open(path, "wb") as f:
        f.write(b"tessera scripts/make-stl.py".ljust(80, b" "))
        f.write(struct.pack("<I", len(tris)))
        for t in tris:
            a, b, c = t
            u = [b[i] - a[i] for i in range(3)]
            v = [c[i] - a[i] for i in range(3)]
            n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]
            ln = math.sqrt(sum(x * x for x in n)) or 1.0
            f.write(struct.pack("<3f", *[x / ln for x in n]))
            for p in t:
                f.write(struct.pack("<3f", *p))
            f.write(b"\0\0")


def sphere(level):
    g = (1 + math.sqrt(5)) / 2
    vs = [(-1, g, 0), (1, g, 0), (-1, -g, 0), (1, -g, 0), (0, -1, g), (0, 1, g), (0, -1, -g),
          (0, 1, -g), (g, 0, -1), (g, 0, 1), (-g, 0, -1), (-g, 0, 1)]
    fs = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4),
          (11, 10, 2), (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8),
          (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    vs = [tuple(x / math.sqrt(sum(y * y for y in v)) for x in v) for v in vs]
    for _ in range(level):
        mid, nf = {}, []

        def m(i, j):
            k = (min(i, j), max(i, j))
            if k not in mid:
                p = [(vs[i][a] + vs[j][a]) / 2 for a in range(3)]
                ln = math.sqrt(sum(x * x for x in p))
                vs.append(tuple(x / ln for x in p))
                mid[k] = len(vs) - 1
            return mid[k]
        for a, b, c in fs:
            ab, bc, ca = m(a, b), m(b, c), m(c, a)
            nf += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        fs = nf
    # float32 vertices: each vertex rounded once, so that shared edges stay shared
    vs = [struct.unpack("<3f", struct.pack("<3f", *v)) for v in vs]
    return [(vs[a], vs[b], vs[c]) for a, b, c in fs]


def cylinder(n, z0, z1):
    ring = [struct.unpack("<2f", struct.pack("<2f", math.cos(2 * math.pi * k / n),
                                             math.sin(2 * math.pi * k / n))) for k in range(n)]
    lo, hi = (0.0, 0.0, z0), (0.0, 0.0, z1)
    tris = []
    for k in range(n):
        a, b = ring[k], ring[(k + 1) % n]
        a0, b0, a1, b1 = (a[0], a[1], z0), (b[0], b[1], z0), (a[0], a[1], z1), (b[0], b[1], z1)
        tris += [(a0, b0, b1), (a0, b1, a1), (lo, b0, a0), (hi, a1, b1)]
    return tris


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "sphere":
        write(sys.argv[3], sphere(int(sys.argv[2])))
    elif len(sys.argv) == 6 and sys.argv[1] == "cylinder":
        write(sys.argv[5], cylinder(int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])))
    else:
        sys.exit(__doc__)
