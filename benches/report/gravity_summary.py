#!/usr/bin/env python3
"""The Current tables of docs/performance/gravity.md and docs/performance/gravity.json,
generated from the raw files of device runs (orrery-bench gravity JSON for the GPUs and the
CPU, and Ryoanji's driver output), so that no number is transcribed by hand.

    python3 benches/report/gravity_summary.py COMMIT DATE GPU.json CPU.json PEER.txt [PEER2.txt ...] > tables.md
"""
import json
import re
import sys

commit, date, gpu_path, cpu_path, *peer_paths = sys.argv[1:]
gpu = json.load(open(gpu_path))
cpu = json.load(open(cpu_path))
info_re = re.compile(r"err p50 (\S+) p90 (\S+) p99 (\S+) max (\S+); pp mean (\d+) max (\d+); pc mean (\d+) max (\d+); (\S+) interactions/s; (\S+) TFlop/s")


def parse(rec):
    m = info_re.search(rec.get("info", ""))
    return {} if m is None else {
        "p50": float(m[1]), "p90": float(m[2]), "p99": float(m[3]), "max": float(m[4]),
        "pp": int(m[5]), "pc": int(m[7]), "rate": float(m[9]), "tflops": float(m[10]),
    }


def executor(rec):
    e = rec["executor"]
    return "CUDA" if "cuda:" in e else "wgpu" if "wgpu:" in e else "CPU"


rows = []
for rec in gpu["records"] + cpu["records"]:
    what = rec["executor"].split(", cuda:")[0].split(", wgpu:")[0]
    rows.append({"workload": rec["workload"], "executor": executor(rec), "what": what,
                 "median_ms": rec["stats"]["median_ms"], "info": rec.get("info", ""), **parse(rec)})

peer = []
for path in peer_paths:
    for block in open(path).read().split("== ")[1:]:
        head = block.splitlines()[0].split()
        total = re.search(r"TIME all phases\s+sum of medians\s+(\S+)", block)
        err = re.search(r"median (\S+)\s+90% (\S+)\s+99% (\S+)\s+max (\S+)", block)
        pp = re.search(r"P2P mean list length : (\S+)", block)
        pc = re.search(r"M2P mean list length : (\S+)", block)
        peer.append({"file": head[0], "theta": float(head[2]), "all_phases_ms": float(total[1]),
                     "pp": float(pp[1]), "pc": float(pc[1]),
                     "p50": float(err[1]) if err else None, "p99": float(err[3]) if err else None,
                     "max": float(err[4]) if err else None})


def find(workload, what, ex="CUDA"):
    for r in rows:
        if r["workload"] == workload and r["what"] == what and r["executor"] == ex:
            return r
    return None


print("### Whole step on the H200: ours (tree phase + walk, CUDA) and Ryoanji (all phases), same bodies\n")
print("| workload | code, theta, mode | time ms | err p50 | p99 | max | P2P / M2P per target |")
print("|---|---|---|---|---|---|---|")
for set_name, pfile in [("plummer 1M", "plummer-1M"), ("plummer 4M", "plummer-4M"), ("uniform 4M", "uniform-4M")]:
    for p in [p for p in peer if p["file"] == pfile and p["p99"] is not None]:
        print(f"| {set_name} | Ryoanji, theta {p['theta']} (groups of 64, quadrupoles) | {p['all_phases_ms']:.2f} | {p['p50']:.2e} | {p['p99']:.2e} | {p['max']:.1e} | {p['pp']:.0f} / {p['pc']:.0f} |")
    for theta in ["0.5", "0.6", "0.75"]:
        for walk in ["Coherent", "Group", "Group64"]:
            r = find(f"{set_name} theta {theta} quadrupole", f"whole step, {walk} walk")
            if r:
                print(f"| {set_name} | orrery, theta {theta}, {walk} | {r['median_ms']:.2f} | {r['p50']:.2e} | {r['p99']:.2e} | {r['max']:.1e} | {r['pp']} / {r['pc']} |")

print("\n### Walks alone (quadrupole, theta 0.5; node data prepared by the CPU), CUDA and wgpu\n")
print("| workload | walk | CUDA ms | CUDA TFlop/s | wgpu ms | err p99 | P2P / M2P |")
print("|---|---|---|---|---|---|---|")
for set_name in ["plummer 1M", "plummer 4M", "uniform 4M"]:
    for walk in ["Independent", "Coherent", "Group", "Group64"]:
        c = find(f"{set_name} theta 0.5 quadrupole", f"{walk} walk")
        w = find(f"{set_name} theta 0.5 quadrupole", f"{walk} walk", "wgpu")
        if c:
            print(f"| {set_name} | {walk} | {c['median_ms']:.2f} | {c['tflops']:.1f} | {w['median_ms'] if w else float('nan'):.2f} | {c['p99']:.2e} | {c['pp']} / {c['pc']} |")

print("\n### Accuracy report: p50 / p99 / max relative acceleration error per setting (CUDA; every executor gives the same counts, and errors within rounding)\n")
print("| workload | expansion | walk | theta 0.3 | 0.5 | 0.6 | 0.75 | 1.0 |")
print("|---|---|---|---|---|---|---|---|")
for set_name in ["plummer 1M", "plummer 4M", "uniform 4M"]:
    for exp in ["monopole", "quadrupole"]:
        for walk in ["Independent", "Group", "Group64"]:
            cells = []
            for theta in ["0.3", "0.5", "0.6", "0.75", "1"]:
                r = find(f"{set_name} theta {theta} {exp}", f"{walk} walk")
                cells.append(f"{r['p50']:.1e} / {r['p99']:.1e} / {r['max']:.1e}" if r else "—")
            name = "Independent = Coherent" if walk == "Independent" else walk
            print(f"| {set_name} | {exp} | {name} | " + " | ".join(cells) + " |")

print("\n### Coherent over independent (CUDA, walk alone)\n")
print("| workload | theta 0.3 | 0.5 | 0.6 | 0.75 | 1.0 |")
print("|---|---|---|---|---|---|")
for set_name in ["plummer 1M", "plummer 4M", "uniform 4M"]:
    for exp in ["monopole", "quadrupole"]:
        cells = []
        for theta in ["0.3", "0.5", "0.6", "0.75", "1"]:
            i = find(f"{set_name} theta {theta} {exp}", "Independent walk")
            c = find(f"{set_name} theta {theta} {exp}", "Coherent walk")
            cells.append(f"{i['median_ms'] / c['median_ms']:.2f}x" if i and c else "—")
        print(f"| {set_name} {exp} | " + " | ".join(cells) + " |")

print("\n### Tree phase, direct summation, CPU\n")
print("| what | workload | executor | median ms | detail |")
print("|---|---|---|---|---|")
for r in rows:
    if "tree phase" in r["what"] and "theta 0.5" in r["workload"]:
        print(f"| tree phase (box, keys, sort, update, view, upward) | {r['workload'].split(' theta')[0]} | {r['executor']} | {r['median_ms']:.3f} | {r['info']} |")
for r in rows:
    if r["what"].startswith("direct sum"):
        print(f"| direct sum f32 | {r['workload']} | {r['executor']} | {r['median_ms']:.1f} | {r['info']} |")
for r in rows:
    if r["executor"] == "CPU":
        print(f"| CPU whole evaluation, {r['what'].split('(16 threads) ')[-1]} | {r['workload']} | 16 cores | {r['median_ms']:.0f} | p99 {r['p99']:.2e}, P2P / M2P {r['pp']} / {r['pc']} |")

json.dump({"page": "docs/performance/gravity.md", "commit": commit, "date": date,
           "gpu": "NVIDIA H200 (driver 580.159.04, SM clock 1980 MHz)",
           "sources": [p.split("/")[-1] for p in [gpu_path, cpu_path, *peer_paths]],
           "orrery": rows, "ryoanji": peer}, open("docs/performance/gravity.json", "w"), indent=1)
