#!/usr/bin/env python3
"""Checks how the library's files include each other and how its targets link.

The rules (docs/architecture.md, CONVENTIONS.md items 1 and 2):
  circle     no include circle between modules. A module is a file stem of blocks/,
             framework/, kernels_cpu/, kernels_gpu/ and sweeps/ (x.h, x.c and x_impl.h
             are module x); module A depends on module B when a file of A includes
             B's header.
  private    x_impl.h is included only by the files of module x (x.c, x.h, and the
             templates x*.c.in of its own folder). A private header that another module
             includes makes a circle the graph above cannot see: the header declares the
             other module's functions, and both modules call each other through it.
  layer      the top-level layers go blocks < kernels_cpu < kernels_gpu < framework <
             sweeps < apps: a file includes no header of a layer after its own.
  framework  framework/'s folders go registry < comm < config < hardware, field <
             assembly < output < run (hardware and field side by side): a file includes
             no header of a folder after its own.
  model      the roots of kernels_cpu/ and kernels_gpu/ include no header of a model
             folder (kernels_*/<model>/); a model's folders (sweeps/<m>/, kernels_*/<m>/)
             include no header of another model's folders, except the flow's public
             face (FLOW_PUBLIC) and, for now, the kernels listed in CLIENTS.
  link       CMake: no target_link_libraries of a layer's target names a target of a
             layer after it.
Headers are found by file name, as the build finds them (every folder is on the include
path). Each violation is printed on one line; the exit status is 1 if there is any.
Usage: check-includes.py [SOURCE_ROOT]; --self-test checks the checker on small trees,
one per rule broken and one clean, and fails unless each finds exactly what it should."""
import os
import re
import sys
import tempfile

LAYERS = ("blocks", "kernels_cpu", "kernels_gpu", "framework", "sweeps", "apps")
FRAMEWORK = {"registry": 0, "comm": 1, "config": 2, "hardware": 3, "field": 3,
             "assembly": 4, "output": 5, "run": 6}
TARGETS = {"tessera_blocks": "blocks", "tessera_kernels_cpu": "kernels_cpu",
           "tessera_kernels_gpu": "kernels_gpu", "tessera_framework": "framework",
           "tessera_sweeps": "sweeps"}
MODEL_LAYERS = ("kernels_cpu", "kernels_gpu", "sweeps")
# the flow's public face: what other models may include of the flow's folders
FLOW_PUBLIC = {"lbm.h"}
# models that still run on another model's kernels, and the headers they take: the
# thermal populations go through the flow's collision and launches (the next step of
# the module contract gives thermal kernels of its own, and this list goes)
CLIENTS = {"thermal": {"gpu_lbm.h", "lbm_collide.h", "lbm_kernels.h"}}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
LINK = re.compile(r"target_link_libraries\(\s*(\w+)([^)]*)\)", re.S)


def module_of(name):
    stem = os.path.basename(name)
    for ext in (".c.in", ".h", ".c", ".cl"):
        if stem.endswith(ext):
            stem = stem[: -len(ext)]
            break
    return stem[:-5] if stem.endswith("_impl") else stem


class Place:
    """Where a file lies: its layer, framework folder, model (or None)."""

    def __init__(self, root, path):
        parts = os.path.relpath(path, root).split(os.sep)
        self.layer = parts[0]
        self.folder = parts[1] if self.layer == "framework" and len(parts) > 2 else None
        self.model = None
        if self.layer in MODEL_LAYERS and len(parts) > 2:
            self.model = parts[1]
        self.root_of_kernels = self.layer in ("kernels_cpu", "kernels_gpu") and len(parts) == 2


def sources(root):
    for layer in LAYERS:
        for d, dirs, names in os.walk(os.path.join(root, layer)):
            dirs.sort()
            for n in sorted(names):
                if n.endswith((".h", ".c", ".c.in")):
                    yield os.path.join(d, n)


def check(root):
    files = list(sources(root))
    headers = {os.path.basename(p): p for p in files if p.endswith(".h")}
    edges, found = {}, []
    for path in files:
        rel = os.path.relpath(path, root)
        me, here = module_of(path), Place(root, path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for m in INCLUDE.finditer(text):
            inc = os.path.basename(m.group(1))
            target = headers.get(inc)
            if not target:
                continue
            line = text.count("\n", 0, m.start()) + 1
            where = f"{rel}:{line}: #include \"{inc}\""
            there, other = Place(root, target), module_of(inc)
            if here.layer in LAYERS[:5] and other != me:
                edges.setdefault(me, set()).add(other)
            if inc.endswith("_impl.h"):
                own = other == me or (path.endswith(".c.in") and
                                      os.path.dirname(path) == os.path.dirname(target))
                if not own:
                    found.append(f"private: {where}: a private header of module {other}")
            if LAYERS.index(there.layer) > LAYERS.index(here.layer):
                found.append(f"layer: {where}: {there.layer}/ is above {here.layer}/")
            elif here.folder and there.folder and FRAMEWORK.get(there.folder, -1) > \
                    FRAMEWORK.get(here.folder, 99):
                found.append(f"framework: {where}: framework/{there.folder}/ is above "
                             f"framework/{here.folder}/")
            if here.root_of_kernels and there.model and there.layer in ("kernels_cpu",
                                                                         "kernels_gpu"):
                found.append(f"model: {where}: the root of {here.layer}/ names the model "
                             f"{there.model}")
            elif here.model and there.model and here.model != there.model and \
                    inc not in FLOW_PUBLIC and inc not in CLIENTS.get(here.model, ()):
                found.append(f"model: {where}: a header of the model {there.model} in a "
                             f"folder of {here.model}")
    for c in cycles(edges):
        found.append("circle: " + " -> ".join(c))
    found += links(root)
    return found


def links(root):
    found = []
    for d, _, names in os.walk(root):
        if "CMakeLists.txt" not in names or os.path.relpath(d, root).split(os.sep)[0] not in \
                LAYERS + (".",):
            continue
        path = os.path.join(d, "CMakeLists.txt")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for m in LINK.finditer(text):
            if m.group(1) not in TARGETS:
                continue
            mine = LAYERS.index(TARGETS[m.group(1)])
            for t in m.group(2).split():
                if t in TARGETS and LAYERS.index(TARGETS[t]) > mine:
                    line = text.count("\n", 0, m.start()) + 1
                    found.append(f"link: {os.path.relpath(path, root)}:{line}: {m.group(1)} "
                                 f"links {t}, a layer above it")
    return found


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


# The self-test's trees: files, and the rule each must break (None: clean).
CASES = {
    "clean": ({"framework/registry/reg.h": "", "framework/run/run.c": '#include "reg.h"\n',
               "kernels_cpu/lbm/k.h": "", "sweeps/lbm/lbm.h": '#include "k.h"\n',
               "sweeps/thermal/t.c": '#include "lbm.h"\n',
               "sweeps/a/a.c": '#include "a_impl.h"\n', "sweeps/a/a_impl.h": "",
               "kernels_cpu/CMakeLists.txt": "target_link_libraries(tessera_kernels_cpu PUBLIC m)\n"},
              []),
    "circle": ({"sweeps/a/a.h": "", "sweeps/a/b.h": "", "sweeps/a/a.c": '#include "b.h"\n',
                "sweeps/a/b.c": '#include "a.h"\n'}, ["circle: a -> b -> a"]),
    "private": ({"sweeps/lbm/lbm.h": "", "sweeps/lbm/lbm_impl.h": '#include "lbm.h"\n',
                 "sweeps/lbm/lbm.c": '#include "lbm_impl.h"\n',
                 "sweeps/lbm/lbm_gpu.h": "", "sweeps/lbm/lbm_gpu.c": '#include "lbm_impl.h"\n'},
                ["private: sweeps/lbm/lbm_gpu.c:1"]),
    "upward": ({"framework/registry/x.c": '#include "stop.h"\n', "framework/run/stop.h": ""},
               ["framework: framework/registry/x.c:1"]),
    "layer": ({"kernels_cpu/k.c": '#include "sim.h"\n', "framework/assembly/sim.h": ""},
              ["layer: kernels_cpu/k.c:1"]),
    "model": ({"kernels_cpu/grid.c": '#include "lbm_kernels.h"\n',
               "kernels_cpu/lbm/lbm_kernels.h": ""}, ["model: kernels_cpu/grid.c:1"]),
    "link": ({"framework/f.c": "", "kernels_gpu/CMakeLists.txt":
              "target_link_libraries(tessera_kernels_gpu PUBLIC tessera_blocks\n"
              "  tessera_framework)\n"}, ["link: kernels_gpu/CMakeLists.txt:1"]),
}


def self_test():
    bad = 0
    for name, (files, want) in CASES.items():
        with tempfile.TemporaryDirectory() as root:
            for rel, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
                with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                    f.write(text)
            found = check(root)
        ok = len(found) == len(want) and all(f.startswith(w) for f, w in zip(found, want))
        print(f"self-test {name}: {'ok' if ok else 'FAILED'}: found {found or 'nothing'}")
        bad += not ok
    return 1 if bad else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    found = check(os.path.abspath(root))
    for f in found:
        print(f)
    if found:
        print(f"{len(found)} violation(s) of the library's include and link order")
        return 1
    print("no include circle, private header, upward include or upward link in the library")
    return 0


if __name__ == "__main__":
    sys.exit(main())
