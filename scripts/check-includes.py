#!/usr/bin/env python3
"""Checks how the library's files include each other and how its targets link.

The rules (DESIGN.md "Layout", docs/architecture.md, CONVENTIONS.md items 1 and 2):
  circle     no include circle between modules. A module is a file stem of blocks/,
             framework/, kernels_cpu/, kernels_gpu/ and sweeps/ (x.h, x.c and x_impl.h
             are module x); module A depends on module B when a file of A includes
             B's header.
  private    x_impl.h is included only by the files of module x in its own folder
             (x.c, x.h, x_impl.h) and by the templates *.c.in of that folder (they are
             compiled as parts of the module whose internals they include, e.g.
             lbm_kernels_lattice.c.in of lbm_kernels). A private header that another
             module includes makes a circle the graph above cannot see: the header
             declares the owner's functions, the includer calls them, and the owner calls
             the includer back through a declaration of its own (say lbm.c and lbm_gpu.c
             sharing lbm_impl.h). Calls are not visible to this script, so the private
             rule itself is the check; the include still adds the edge includer -> x.
  layer      the top-level layers go blocks < kernels_cpu < kernels_gpu < framework <
             sweeps < apps: a file includes no header of a layer after its own.
  framework  framework/'s folders go FRAMEWORK_ORDER (registry < comm < config <
             hardware, field < assembly < output < run; hardware and field side by side,
             free to include each other): a file includes no header of a folder after
             its own, and no include crosses into or out of a folder missing from the list.
  model      blocks/, framework/ and the roots of kernels_cpu/ and kernels_gpu/ include no
             header of a model folder (kernels_*/<model>/); a model's folders
             (sweeps/<m>/, kernels_*/<m>/) include no header of another model's folders,
             except the flow's public face (FLOW_PUBLIC) and, for now, the kernels listed
             in CLIENTS. apps/ may include everything.
  link       CMake (CMakeLists.txt and *.cmake at the top and in the layers' folders and
             cmake/): no target_link_libraries of a layer's target names a target of a
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
# framework/'s folders, lowest first; folders in one entry share a rank
FRAMEWORK_ORDER = [("registry",), ("comm",), ("config",), ("hardware", "field"),
                   ("assembly",), ("output",), ("run",)]
FRAMEWORK = {f: rank for rank, folders in enumerate(FRAMEWORK_ORDER) for f in folders}
# the layers' CMake targets (tessera_opencl, while it exists, is part of kernels_gpu)
TARGETS = {"tessera_blocks": "blocks", "tessera_kernels_cpu": "kernels_cpu",
           "tessera_kernels_gpu": "kernels_gpu", "tessera_opencl": "kernels_gpu",
           "tessera_framework": "framework", "tessera_sweeps": "sweeps"}
MODEL_LAYERS = ("kernels_cpu", "kernels_gpu", "sweeps")
# the flow's public face: what other models may include of the flow's folders
FLOW_PUBLIC = {"lbm.h"}
# models that still run on another model's kernels, and the headers they take: the
# thermal populations go through the flow's collision and launches (the next step of
# the module contract gives thermal kernels of its own, and this list goes)
CLIENTS = {"thermal": {"gpu_lbm.h", "lbm_collide.h", "lbm_kernels.h"}}
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.M)
LINK = re.compile(r"\btarget_link_libraries\s*\(\s*([\w.+-]+)([^)]*)\)", re.S | re.I)
CMAKE_COMMENT = re.compile(r"(^|\s)#[^\n]*")


def module_of(name):
    stem = os.path.basename(name)
    for ext in (".c.in", ".h.in", ".h", ".c", ".cl"):
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
        # a layer below the models, or a kernel layer's root: names no model
        self.generic = self.layer in ("blocks", "framework") or (
            self.layer in ("kernels_cpu", "kernels_gpu") and len(parts) == 2)


def sources(root):
    for layer in LAYERS:
        for d, dirs, names in os.walk(os.path.join(root, layer)):
            dirs.sort()
            for n in sorted(names):
                if n.endswith((".h", ".c", ".c.in", ".h.in")):
                    yield os.path.join(d, n)


def check(root):
    files = list(sources(root))
    # x.h.in: the template the build turns into x.h
    headers = {os.path.basename(p).removesuffix(".in"): p for p in files
               if p.endswith((".h", ".h.in"))}
    edges, found = {}, []
    for path in files:
        rel = os.path.relpath(path, root)
        me, here = module_of(path), Place(root, path)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:  # moved away while we looked
            continue
        for m in INCLUDE.finditer(text):
            inc = os.path.basename(m.group(1))
            target = headers.get(inc)
            if not target:
                continue
            line = text.count("\n", 0, m.start(1)) + 1
            where = f"{rel}:{line}: #include \"{inc}\""
            there, other = Place(root, target), module_of(inc)
            if here.layer in LAYERS[:5] and other != me:
                edges.setdefault(me, set()).add(other)
            if inc.endswith("_impl.h"):
                same_folder = os.path.dirname(path) == os.path.dirname(target)
                if not (same_folder and (other == me or path.endswith(".c.in"))):
                    found.append(f"private: {where}: a private header of module {other}")
            if LAYERS.index(there.layer) > LAYERS.index(here.layer):
                found.append(f"layer: {where}: {there.layer}/ is above {here.layer}/")
            elif here.folder and there.folder and here.folder != there.folder:
                unplaced = [f for f in (here.folder, there.folder) if f not in FRAMEWORK]
                if unplaced:
                    found.append(f"framework: {where}: framework/{unplaced[0]}/ has no "
                                 f"place in FRAMEWORK_ORDER")
                elif FRAMEWORK[there.folder] > FRAMEWORK[here.folder]:
                    found.append(f"framework: {where}: framework/{there.folder}/ is above "
                                 f"framework/{here.folder}/")
            if here.generic and there.model and there.layer in ("kernels_cpu", "kernels_gpu"):
                found.append(f"model: {where}: {os.path.dirname(rel)}/ names the model "
                             f"{there.model}")
            elif here.model and there.model and here.model != there.model and \
                    inc not in FLOW_PUBLIC and inc not in CLIENTS.get(here.model, ()):
                found.append(f"model: {where}: a header of the model {there.model} in a "
                             f"folder of {here.model}")
    found += circles(edges)
    found += links(root)
    return found


def cmake_files(root):
    """CMakeLists.txt and *.cmake at the top, in cmake/ and in the layers' folders."""
    for name in sorted(os.listdir(root)):
        if name == "CMakeLists.txt" or name.endswith(".cmake"):
            yield os.path.join(root, name)
    for top in ("cmake",) + LAYERS:
        for d, dirs, names in os.walk(os.path.join(root, top)):
            dirs.sort()
            for n in sorted(names):
                if n == "CMakeLists.txt" or n.endswith(".cmake"):
                    yield os.path.join(d, n)


def links(root):
    found = []
    for path in cmake_files(root):
        with open(path, encoding="utf-8") as f:
            # comments blanked, line numbers kept
            text = CMAKE_COMMENT.sub(lambda m: m.group(1), f.read())
        for m in LINK.finditer(text):
            if m.group(1) not in TARGETS:
                continue
            mine = LAYERS.index(TARGETS[m.group(1)])
            # words, so that generator expressions ($<...:tessera_x>) are seen too
            for t in re.finditer(r"[\w.+-]+", m.group(2)):
                if t.group() in TARGETS and LAYERS.index(TARGETS[t.group()]) > mine:
                    line = text.count("\n", 0, m.start(2) + t.start()) + 1
                    found.append(f"link: {os.path.relpath(path, root)}:{line}: {m.group(1)} "
                                 f"links {t.group()}, a layer above it")
    return found


def circles(edges):
    """One line per knot of modules that include each other (a strongly connected
    component, Tarjan): a shortest circle through its first module, and the knot's other
    modules. Listing every elementary circle would grow exponentially with the knot."""
    index, low, stack, knots = {}, {}, [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            knot = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(knot) > 1:
                knots.append(sorted(knot))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    found = []
    for knot in sorted(knots):
        start, parent, queue, last = knot[0], {knot[0]: None}, [knot[0]], None
        for v in queue:  # breadth first: the shortest way back to start
            if start in edges.get(v, ()):
                last = v
                break
            for w in sorted(edges.get(v, ())):
                if w in knot and w not in parent:
                    parent[w] = v
                    queue.append(w)
        path = [last]
        while parent[path[-1]] is not None:
            path.append(parent[path[-1]])
        line = "circle: " + " -> ".join(path[::-1] + [start])
        rest = sorted(set(knot) - set(path))
        found.append(line + (f" (knot with {', '.join(rest)})" if rest else ""))
    return found


# The self-test's trees: files, and the rule each must break (None: clean).
CASES = {
    "clean": ({"framework/registry/reg.h": "", "framework/run/run.c": '#include "reg.h"\n',
               "framework/hardware/node.h": '#include "fld.h"\n',
               "framework/field/fld.h": "",
               "kernels_cpu/lbm/k.h": "", "sweeps/lbm/lbm.h": '#include "k.h"\n',
               "kernels_cpu/lbm/k_impl.h": "",
               "kernels_cpu/lbm/k_lattice.c.in": '#include "k_impl.h"\n',
               "sweeps/thermal/t.c": '#include "lbm.h"\n',
               "sweeps/a/a.c": '#include "a_impl.h"\n', "sweeps/a/a_impl.h": "",
               "apps/app.c": '#include "k.h"\n#include "run.h"\n', "framework/run/run.h": "",
               "kernels_cpu/CMakeLists.txt": "target_link_libraries(tessera_kernels_cpu PUBLIC m\n"
               "  # not tessera_sweeps (a comment)\n)\n"},
              []),
    "circle": ({"sweeps/a/a.h": "", "sweeps/a/b.h": "", "sweeps/a/a.c": '#include "b.h"\n',
                "sweeps/a/b.c": '#include "a.h"\n'}, ["circle: a -> b -> a"]),
    "knot": ({"sweeps/a/a.h": "", "sweeps/a/b.h": "", "sweeps/a/c.h": "",
              "sweeps/a/a.c": '#include "b.h"\n', "sweeps/a/b.c": '#include "c.h"\n',
              "sweeps/a/c.c": '#include "a.h"\n#include "b.h"\n',
              "sweeps/a/d.c": '#include "a.h"\n'}, ["circle: a -> b -> c -> a\n"]),
    # a.c includes b.h, b.c includes a_impl.h: the circle through a private header
    "private": ({"sweeps/m/a.c": '#include "b.h"\n', "sweeps/m/a_impl.h": "",
                 "sweeps/m/b.h": "", "sweeps/m/b.c": '#include "a_impl.h"\n'},
                ["private: sweeps/m/b.c:1", "circle: a -> b -> a"]),
    "private_lbm": ({"sweeps/lbm/lbm.h": "", "sweeps/lbm/lbm_impl.h": '#include "lbm.h"\n',
                     "sweeps/lbm/lbm.c": '#include "lbm_impl.h"\n', "sweeps/lbm/lbm_gpu.h": "",
                     "sweeps/lbm/lbm_gpu.c": '#include "lbm_impl.h"\n'},
                    ["private: sweeps/lbm/lbm_gpu.c:1"]),
    "upward": ({"framework/registry/x.c": '#include "stop.h"\n', "framework/run/stop.h": ""},
               ["framework: framework/registry/x.c:1"]),
    "unplaced": ({"framework/extra/e.c": '#include "reg.h"\n', "framework/registry/reg.h": ""},
                 ["framework: framework/extra/e.c:1"]),
    "layer": ({"kernels_cpu/k.c": '#include "sim.h"\n', "framework/assembly/sim.h": "",
               "kernels_gpu/g.c": '\n#include "lbm.h"\n', "sweeps/lbm/lbm.h": ""},
              ["layer: kernels_cpu/k.c:1", "layer: kernels_gpu/g.c:2"]),
    "model": ({"kernels_cpu/grid.c": '#include "lbm_kernels.h"\n',
               "kernels_cpu/lbm/lbm_kernels.h": ""}, ["model: kernels_cpu/grid.c:1"]),
    "model_other": ({"kernels_gpu/lbm/gpu_lbm.h": "",
                     "kernels_gpu/shan_chen/s.c": '#include "gpu_lbm.h"\n',
                     "framework/field/f.c": '#include "gpu_lbm.h"\n'},
                    ["model: kernels_gpu/shan_chen/s.c:1", "model: framework/field/f.c:1"]),
    "link": ({"framework/f.c": "", "kernels_gpu/CMakeLists.txt":
              "target_link_libraries(tessera_kernels_gpu PUBLIC tessera_blocks\n"
              "  tessera_framework)\n"
              "target_link_libraries(tessera_opencl PRIVATE $<$<BOOL:X>:tessera_sweeps>)\n"},
             ["link: kernels_gpu/CMakeLists.txt:2: tessera_kernels_gpu links tessera_framework",
              "link: kernels_gpu/CMakeLists.txt:3: tessera_opencl links tessera_sweeps"]),
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
        ok = len(found) == len(want) and all(
            f + "\n" == w if w.endswith("\n") else f.startswith(w) for f, w in zip(found, want))
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
