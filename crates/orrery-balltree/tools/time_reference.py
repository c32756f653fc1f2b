#!/usr/bin/env python3
"""Wall-clock timing of Erwin's reference build (`balltree-erwin`,
build_balltree_with_offsets, float64, OpenMP across batches) on the shapes of
examples/build_timing.rs: 3D uniform points, median and minimum over the repeats after
two warm-up builds. OMP_NUM_THREADS sets the threads (default: all cores).

    python tools/time_reference.py [repeats]

For the full side-by-side (uniform and clustered points, 2D/3D/8D, every executor and
this reference in one run) use the `balltree` bench suite and its peer,
benches/python/balltree_peer.py (`cargo xtask bench balltree --peer
benches/python/balltree_peer.py`; on the H200: benches/device/balltree.sh).
"""

import os
import sys
import time

import numpy as np
import balltree

WORKLOADS = [(16, 1024), (16, 4096), (16, 16384), (64, 16384), (1, 1 << 20)]


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    threads = os.environ.get("OMP_NUM_THREADS", str(os.cpu_count()))
    print(f"balltree-erwin reference build, 3D uniform float64, {threads} OpenMP threads, {repeats} repeats")
    print(f"{'workload':>14} {'median':>12} {'min':>10}")
    rng = np.random.default_rng(7)
    for b, n in WORKLOADS:
        x = rng.random((b * n, 3))
        offsets = np.arange(b + 1, dtype=np.intp) * n
        for _ in range(2):
            balltree.build_balltree_with_offsets(x, offsets)
        ms = []
        for _ in range(repeats):
            t = time.perf_counter()
            balltree.build_balltree_with_offsets(x, offsets)
            ms.append((time.perf_counter() - t) * 1e3)
        ms.sort()
        print(f"{f'{b}x{n}':>14} {ms[len(ms) // 2]:>9.2f} ms {ms[0]:>7.2f} ms")


if __name__ == "__main__":
    main()
