#!/usr/bin/env python3
"""The Current tables of docs/performance/gravity.md and gravity.json, generated from the
raw files of one device run (orrery-bench gravity JSON for the GPUs and the CPU, and
Ryoanji's driver output), so that no number is transcribed by hand.

    python3 benches/report/gravity_summary.py GPU.json CPU.json PEER.txt COMMIT DATE > table.md
(writes docs/performance/gravity.json beside it)."""
import json
import re
import sys

gpu_path, cpu_path, peer_path, commit, date = sys.argv[1:6]
gpu = json.load(open(gpu_path))
cpu = json.load(open(cpu_path))
info_re = re.compile(r"err p50 (\S+) p90 (\S+) p99 (\S+) max (\S+); pp mean (\d+) max (\d+); pc mean (\d+) max (\d+); (\S+) interactions/s; (\S+) TFlop/s")


def parse(rec):
    m = info_re.search(rec.get("info", ""))
    return None if m is None else {
        "p50": float(m[1]), "p90": float(m[2]), "p99": float(m[3]), "max": float(m[4]),
        "pp": int(m[5]), "pc": int(m[7]), "rate": float(m[9]), "tflops": float(m[10]),
    }


def executor(rec):
    e = rec["executor"]
    return "CUDA" if "cuda:" in e else "wgpu" if "wgpu:" in e else "CPU"


rows = []
for rec in gpu["records"] + cpu["records"]:
    p = parse(rec)
    rows.append({"workload": rec["workload"], "executor": executor(rec), "what": rec["executor"].split(", cuda:")[0].split(", wgpu:")[0],
                 "median_ms": rec["stats"]["median_ms"], **(p or {}), "info": rec.get("info", "")})

# Ryoanji: per file and theta, the sum of all phases and its own error check.
peer = []
for block in open(peer_path).read().split("== ")[1:]:
    head = block.splitlines()[0].split()
    total = re.search(r"TIME all phases\s+sum of medians\s+(\S+)", block)
    trav = re.search(r"TIME force: traverse\s+median\s+(\S+)", block)
    err = re.search(r"median (\S+)\s+90% (\S+)\s+99% (\S+)\s+max (\S+)", block)
    pp = re.search(r"P2P mean list length : (\S+)", block)
    pc = re.search(r"M2P mean list length : (\S+)", block)
    peer.append({"file": head[0], "theta": float(head[2]), "all_phases_ms": float(total[1]) if total else None,
                 "traverse_ms": float(trav[1]) if trav else None, "pp": float(pp[1]) if pp else None,
                 "pc": float(pc[1]) if pc else None,
                 "p50": float(err[1]) if err else None, "p99": float(err[3]) if err else None})

print("| workload (quadrupole, safe MAC) | code, mode | time ms | p50 | p99 | max | P2P / M2P per target |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    if "whole step" in r["what"] and r["executor"] == "CUDA":
        print(f"| {r['workload']} | orrery CUDA, {r['what']} | "
              f"{r['median_ms']:.2f} | {r['p50']:.1e} | {r['p99']:.1e} | {r['max']:.1e} | {r['pp']} / {r['pc']} |")
for p in peer:
    name = {"plummer-1M": "plummer 1M", "plummer-4M": "plummer 4M", "uniform-4M": "uniform 4M"}.get(p["file"], p["file"])
    err = f"{p['p50']:.1e} | {p['p99']:.1e}" if p["p99"] is not None else "— | —"
    print(f"| {name} theta {p['theta']} | Ryoanji (all phases) | {p['all_phases_ms']:.2f} | {err} | — | {p['pp']:.0f} / {p['pc']:.0f} |")

json.dump({"page": "docs/performance/gravity.md", "commit": commit, "date": date,
           "gpu": "NVIDIA H200 (driver 580.159.04)", "sources": [gpu_path.split("/")[-1], cpu_path.split("/")[-1], peer_path.split("/")[-1]],
           "orrery": rows, "ryoanji": peer}, open("docs/performance/gravity.json", "w"), indent=1)
