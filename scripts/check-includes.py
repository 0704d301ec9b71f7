#!/usr/bin/env python3
"""Fails on an include circle between the modules of the library.

A module is a file stem of blocks/, framework/, kernels_cpu/, kernels_gpu/ and sweeps/
(x.h, x.c and x_impl.h are module x, CONVENTIONS.md item 2); module A depends on module B
when a file of A includes B's header. Any cycle in that graph (A -> B -> ... -> A) is
printed and the script exits 1. Usage: check-includes.py [SOURCE_ROOT]; with --self-test it
checks itself on a small tree with one circle (sweeps/a.c includes b.h, sweeps/b.c a.h)
and one without, and fails unless it finds exactly that circle."""
import os
import re
import sys

LAYERS = ("blocks", "framework", "kernels_cpu", "kernels_gpu", "sweeps")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module_of(name):
    stem = os.path.basename(name)
    for ext in (".h", ".c", ".cl", ".c.in"):
        if stem.endswith(ext):
            stem = stem[: -len(ext)]
            break
    return stem[:-5] if stem.endswith("_impl") else stem


def graph(root):
    headers, files = {}, []
    for layer in LAYERS:
        for d, _, names in os.walk(os.path.join(root, layer)):
            for n in names:
                if n.endswith((".h", ".c", ".c.in")):
                    path = os.path.join(d, n)
                    files.append(path)
                    if n.endswith(".h"):
                        headers[n] = module_of(n)
    edges = {}
    for path in files:
        a = module_of(path)
        with open(path, encoding="utf-8") as f:
            for inc in INCLUDE.findall(f.read()):
                b = headers.get(os.path.basename(inc))
                if b and b != a:
                    edges.setdefault(a, set()).add(b)
    return edges


def cycles(edges):
    """Every elementary cycle found by a depth-first search from each module, each once."""
    found, seen = [], set()
    for start in sorted(edges):
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in sorted(edges.get(node, ())):
                if nxt == start:
                    key = frozenset(path)
                    if key not in seen:
                        seen.add(key)
                        found.append(path + [start])
                elif nxt not in path and nxt > start:
                    stack.append((nxt, path + [nxt]))
    return found


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "sweeps"))
        files = {"a.h": "", "b.h": "", "c.h": "", "a.c": '#include "b.h"\n',
                 "b.c": '#include "a.h"\n#include "c.h"\n', "c.c": '#include "c.h"\n'}
        for name, text in files.items():
            with open(os.path.join(root, "sweeps", name), "w") as f:
                f.write(text)
        found = cycles(graph(root))
        if found != [["a", "b", "a"]]:
            print(f"self-test FAILED: expected the circle a -> b -> a, found {found}")
            return 1
    print("self-test: the circle a -> b -> a found, nothing else")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    found = cycles(graph(root))
    for c in found:
        print("include circle: " + " -> ".join(c))
    if found:
        print(f"{len(found)} include circle(s) between modules of the library")
        return 1
    print("no include circle between the modules of the library")
    return 0


if __name__ == "__main__":
    sys.exit(main())
