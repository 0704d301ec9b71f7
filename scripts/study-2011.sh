#!/usr/bin/env bash
# The heterogeneous study of Feichtinger et al. 2011 (shared/seeds/002: waLBerla on
# TinyGPU and the NEC Nehalem cluster, Fig. 12 and Table 2) reproduced by tessera's plan
# model. Usage: scripts/study-2011.sh [BUILD_DIR] (default build/); about 5 s.
#
# The model's figures, each from the paper (SP, D3Q19; the 2011 code moved every face of
# every block every step, so the domains here are periodic: tessera's model then counts
# every face's ghost bytes as the paper's code moved them):
#   CPU process   9.75 MFLUPS: 78 SP MFLUPS on one 8-core Nehalem node (Sec. 3.2) / 8; Fig.
#                 12a's 6 processes: 58.5 MFLUPS
#   ghost work    exchange_gbs fitted to Fig. 7's block overheads: one GPU, a 200^3 domain,
#                 340 MFLUPS in 1 block, 25% less in 64 blocks (Sec. 5.1); checked against
#                 its 8 blocks (5% less)
#   GPU process   throughput fitted to Fig. 12b's homogeneous run at 90^3: 2 GPUs, one
#                 90x2250x90 block each, 495.3 MFLUPS on TinyGPU; the kernel's rate
#                 depends on the rows' length (one GPU block per row of cells, Sec. 3.2),
#                 so it is taken at the rows of the study (90 cells)
#   PCIe          6 GB/s with pinned memory (Sec. 2.3, Fig. 1); the NEC nodes' two GPUs
#                 share one 12.8 GB/s bus: 6.4 GB/s each
#   network       DDR InfiniBand 1.5 GB/s (Fig. 1, both clusters); latency 2 us (not
#                 stated in the paper; a DDR IB ping-pong's order; it changes nothing here)
#   within a node 16.5 GB/s: STREAM's copy of 33 GB/s (Sec. 3.1) moves each byte twice
# Prints each entry: published, predicted, predicted / published, and its note; exits 1
# where an entry misses by more than 15% without a reason the paper states.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
exec python3 - "$build/apps/tessera" <<'PY'
import atexit, json, os, shutil, subprocess, sys, tempfile

tessera = sys.argv[1]
work = tempfile.mkdtemp(prefix="study-2011-")
atexit.register(shutil.rmtree, work, True)


def plan(domain, blocks, nodes, balance, configurations=None, match=None):
    """tessera plan of a periodic SP D3Q19 domain: the plan's JSON."""
    hw = {"balance": balance}
    if configurations:
        hw["configurations"] = configurations
        hw["nodes"] = match
    else:
        hw["hs"] = "gpu"
    cfg = {"domain": {"cells": domain, "blocks": blocks, "periodic": [True, True, True]}, "steps": 100,
           "lbm": {"lattice": "d3q19", "collision": "srt", "precision": "sp", "viscosity": 0.05},
           "hardware": hw}
    path = os.path.join(work, "c.json")
    json.dump(cfg, open(path, "w"))
    args = [tessera, "plan", path, "--json", os.path.join(work, "p.json")]
    args += ["--nodes", nodes] if nodes else ["--ranks", "1"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("study-2011: tessera plan failed:\n" + r.stdout + r.stderr)
    return json.load(open(os.path.join(work, "p.json")))


def mflups(p):
    return p["predicted_mlups"]


base = {"throughput": {"cpu": 9.75, "gpu": 1e9}, "exchange_gbs": 1.0, "device_gbs": 6.0,
        "network_gbs": 1.5, "latency_us": 2.0, "intranode_gbs": 16.5, "intranode_latency_us": 1.0}

# ghost bytes of one GPU's 200^3 domain in 1, 8 and 64 blocks (compute ~0; 1 GB/s: ms = MB)
ghost = {b: plan([200] * 3, [b] * 3, None, base)["processes"][0]["predicted_exchange_s"] for b in (1, 2, 4)}
t1 = 8e6 / 340e6                 # Fig. 7: 340 MFLUPS in 1 block
t64 = t1 / 0.75                  # 25% less in 64 blocks
E = (ghost[4] - ghost[1]) / (t64 - t1)          # GB/s
kernel = 8e6 / (t1 - ghost[1] / E) / 1e6        # MFLUPS of the cells alone
t8 = 8e6 / (kernel * 1e6) + ghost[2] / E
print("fit: ghost work %.3f GB/s; 200^3 in 8 blocks %.0f MFLUPS, %.1f%% below 1 block (Fig. 7: about 5%%)"
      % (E, 8e6 / t8 / 1e6, 100 * (1 - t1 / t8)))

tiny = dict(base, exchange_gbs=E)
nec = dict(tiny, device_gbs=6.4)
GPU2 = [{"name": "gpu2", "processes": [{"hs": "gpu", "count": 2}]}]
HET = [{"name": "gpu_node", "processes": [{"hs": "gpu", "count": 2}, {"hs": "cpu", "count": 6}]},
       {"name": "cpu_node", "processes": [{"hs": "cpu", "count": 8}]}]
MATCH = [{"match": "g*", "configuration": "gpu_node"}, {"match": "c*", "configuration": "cpu_node"}]
M2 = [{"match": "g*", "configuration": "gpu2"}]

# the GPU's rate at rows of 90 cells, from Fig. 12b's homogeneous 2-GPU run (495.3)
p = plan([90, 4500, 90], [1, 2, 1], "g1", dict(tiny, throughput={"cpu": 9.75, "gpu": 1e9}), GPU2, M2)
rest = max(q["predicted_s"] - q["predicted_compute_s"] for q in p["processes"])
gpu = 18.225e6 / (90 * 4500 * 90 / 495.3e6 - rest) / 1e6
print("fit: a GPU process %.1f MFLUPS at rows of 90 cells (kernel and the per-cell costs)" % gpu)
tiny["throughput"] = nec["throughput"] = {"cpu": 9.75, "gpu": gpu}

rows = []


def entry(name, published, predicted, note=""):
    rows.append((name, published, predicted, predicted / published, note))


# Fig. 12 (TinyGPU, one node, blocks of 90^3)
p = plan([90, 540, 90], [1, 6, 1], "c1:6", tiny, HET, MATCH)
entry("Fig. 12b, 90^3: 6 CPU processes, 6 blocks", 58.1, mflups(p))
p = plan([90, 4500, 90], [1, 2, 1], "g1", tiny, GPU2, M2)
entry("Fig. 12b, 90^3: 2 GPUs, 1 block each (the GPU's fit)", 495.3, mflups(p))
p = plan([90, 4500, 90], [1, 50, 1], "g1", tiny, HET, MATCH)
gblocks = [q["blocks"] for q in p["processes"] if q["hs"] == "gpu"]
gcomp = max(q["predicted_compute_s"] for q in p["processes"] if q["hs"] == "gpu")
ccomp = max(q["predicted_compute_s"] for q in p["processes"] if q["hs"] == "cpu")
entry("Fig. 12a: blocks per GPU at balance, 50 blocks of 90^3", 22, sum(gblocks) / len(gblocks),
      "the model: %s" % "+".join(map(str, gblocks)))
entry("Fig. 12a: GPU kernel time / CPU kernel time at balance", 0.67, gcomp / ccomp,
      "a miss the paper explains: its GPU adds a larger communication overhead (Sec. 5.3: every "
      "step's whole halo through PCIe and the boundary handled on the CPU, Sec. 4.4), a cost per "
      "step the model's per-byte ghost work leaves out; so the model's balance leaves the GPU "
      "more kernel time")
het1 = mflups(p)
entry("Fig. 12b, 90^3: 2 GPUs + 6 CPUs, 50 blocks (5-12% below 2 GPUs x 1 block)", 495.3 * (1 - 0.085), het1,
      "published: 5-12% below 495.3, the middle taken")
# Table 2 (NEC Nehalem; GPU nodes 90x4500x90, CPU nodes 90x540x90)
p = plan([90, 4500, 90], [1, 2, 1], "g1", nec, GPU2, M2)
entry("Table 2: 1 node, 2 GPUs, 1 block each", 476, mflups(p))
p = plan([90, 4500 * 30, 90], [1, 60, 1], "g[1-30]", nec, GPU2, M2)
entry("Table 2: 30 nodes, 60 GPUs, 1 block each", 14480, mflups(p))
p = plan([90, 4500, 90], [1, 50, 1], "g1", nec, HET, MATCH)
entry("Table 2: 1 node, 2 GPUs + 6 CPUs", 459, mflups(p))
p = plan([90, 4500 * 30, 90], [1, 1500, 1], "g[1-30]", nec, HET, MATCH)
entry("Table 2: 30 nodes, 60 GPUs + 180 CPUs", 13267, mflups(p))
note = ("a CPU node's 90x540x90 is 6 blocks of 90^3 for its 8 processes: 2 wait in the model; "
        "the paper's 420 and 660 CPU processes count 8 per CPU node")
p = plan([90, 4500 * 30 + 540 * 30, 90], [1, 1500 + 180, 1], "g[1-30],c[1-30]", nec, HET, MATCH)
entry("Table 2: 60 nodes, 60 GPUs + 420 CPUs", 15684, mflups(p), note)
p = plan([90, 4500 * 30 + 540 * 60, 90], [1, 1500 + 360, 1], "g[1-30],c[1-60]", nec, HET, MATCH)
entry("Table 2: 90 nodes, 60 GPUs + 660 CPUs", 17846, mflups(p), note)

print("\n| entry | published | predicted | predicted / published | note |")
print("|---|---|---|---|---|")
for name, pub, pred, r, note in rows:
    print("| %s | %s | %s | %.3f | %s |" % (name, "%.2f" % pub if pub < 10 else "%.1f" % pub,
                                            "%.2f" % pred if pred < 10 else "%.1f" % pred, r, note))
miss = [r for r in rows if abs(r[3] - 1) > 0.15]
print("\n%d of %d entries within 15%%; %d beyond, each with the paper's reason" %
      (len(rows) - len(miss), len(rows), len(miss)))
# an entry beyond 15% without a reason is a failure of the model (exit status 1)
sys.exit(1 if any(not r[4] for r in miss) else 0)
PY
