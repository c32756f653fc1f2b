#!/usr/bin/env python3
"""Builds docs/performance/tree.json (the Current side-by-side table of tree.md) from the
raw files of one device call: our `orrery-bench tree` JSON and Cornerstone's
`cstone_octree_driver` output (benches/device/tree.sh's peer.txt).

    python3 benches/report/tree_summary.py COMMIT [DATE]

reads docs/performance/tree-COMMIT-h200.json, tree-COMMIT-peer.txt and names
tree-COMMIT-verification.txt as a source; writes docs/performance/tree.json.
"""

import json
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs" / "performance"
SETS = [("uniform", "2M"), ("plummer", "2M"), ("disk", "2M"), ("clusters", "2M"), ("uniform", "25.6M"), ("plummer", "25.6M")]
OURS = {"keys": "keys", "sort": "sort", "from_scratch": "scratch", "update_unchanged": "update unchanged",
        "view": "step view", "whole_step": "step whole"}
PEER = {"keys": "sfc keys", "sort": "sort keys", "from_scratch": "octree build (scratch)",
        "update_unchanged": "octree update (1 call)", "linked_octree": "linked octree build"}


def peer_times(path):
    """{set-name: {phase: {median_ms, min_ms, max_ms}}, leaves identical?}."""
    out, same, cur = {}, {}, None
    for line in path.read_text().splitlines():
        if line.startswith("== "):
            cur = line[3:].strip()
            out[cur] = {}
        m = re.match(r"TIME (.+?)\s+median\s+([\d.]+) ms\s+min\s+([\d.]+) ms\s+max\s+([\d.]+) ms", line)
        if m and cur:
            out[cur][m.group(1).strip()] = {"median_ms": float(m.group(2)), "min_ms": float(m.group(3)),
                                            "max_ms": float(m.group(4))}
        m = re.match(r"LEAVES (\S+) (identical|DIFFER)", line)
        if m:
            same[m.group(1)] = m.group(2) == "identical"
    return out, same


def main():
    commit = sys.argv[1]
    date = sys.argv[2] if len(sys.argv) > 2 else ""
    bench = json.loads((DOCS / f"tree-{commit}-h200.json").read_text())
    peer, same = peer_times(DOCS / f"tree-{commit}-peer.txt")
    recs = {(r["workload"], r["executor"]): r for r in bench["records"]}
    cuda = next(e for (_, e) in recs if e.startswith("cuda"))
    rows = []
    for s, n in SETS:
        base = f"{s} {n} octree hilbert LC"
        ours = {}
        for key, suffix in OURS.items():
            r = recs[(f"{base} {suffix}", cuda)]
            st = r["stats"]
            ours[key] = {"median_ms": st["median_ms"], "p10_ms": st["p10_ms"], "p90_ms": st["p90_ms"],
                         "info": r.get("info", "")}
        cs = {key: peer[f"{s}-{n}"][phase] for key, phase in PEER.items()}
        cs["whole_step_sum_ms"] = round(sum(cs[k]["median_ms"] for k in
                                            ("keys", "sort", "update_unchanged", "linked_octree")), 4)
        rows.append({"set": s, "n": n, "orrery_cuda": ours, "cornerstone": cs,
                     "leaves_identical_to_cornerstone": same.get(f"{s}-{n}", False)})
    doc = {
        "page": "docs/performance/tree.md",
        "table": "Current: ours (CUDA) and Cornerstone side by side",
        "gpu": "NVIDIA H200 (driver 580.159.04)",
        "commit": commit,
        "date": date,
        "method": "medians of 5 after 1 warm-up; CUDA events; f64 positions; Hilbert octree, LeafCount bucket 16, "
                  "box [-1,1]^3",
        "sources": [f"tree-{commit}-h200.json", f"tree-{commit}-peer.txt", f"tree-{commit}-verification.txt"],
        "environment": bench.get("environment", {}),
        "rows": rows,
    }
    (DOCS / "tree.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
