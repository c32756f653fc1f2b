#!/usr/bin/env python3
"""`python` suite: orrery.balltree from Python against balltree-erwin through the same
calls, and the Python path of the GPU build against the Rust-side timing of that build.

    python3 benches/python/python_bench.py --out DIR [--quick] [--warmup W] [--repeats R]

Needs `orrery` (the wheel of crates/orrery-python) and `balltree` (balltree-erwin)
importable, and torch with CUDA for the GPU rows. Writes DIR/python.json (orrery-bench's
report format: {"environment": ..., "records": [...]}) and prints a table.

Workloads: uniform 3D points in the unit cube, 16x1024, 16x4096, 16x16384, 64x16384
and 1x1M (batches x points per batch; --quick: 4x1024, 1x16384), seeded numpy draws,
three input sets rotated over the timed calls. Rows (executor names):

- `balltree-erwin 0.1.0 (N OpenMP threads) numpy f64`: `balltree.build_balltree_with_offsets`
  on a float64 array (the reference converts to float64 anyway);
- `orrery cpu (N threads) numpy f64` / `numpy f32`: `orrery.balltree.build_balltree_with_offsets`,
  the same call, on float64 and float32 arrays (rayon on N threads);
- `balltree-erwin ... torch cuda f32`: `balltree.build_balltree(data, batch_idx)` on CUDA
  tensors (the reference copies them to the host and back);
- `orrery cuda torch f32`: `orrery.balltree.build_balltree(data, batch_idx)` on CUDA
  tensors, built in place on the GPU (DLPack), int64/bool tensors returned on the device;
- `orrery cpu (N threads) rust-side f32`: `orrery._orrery.time_rust_build(..., "cpu")`: the
  CPU build of the validated float32 cloud timed in Rust (host clock), in this process;
- `orrery cuda rust-side f32`: `orrery._orrery.time_rust_build`: the same build timed in
  Rust between two device markers, points already on the device (what `orrery-bench
  balltree` times), in the same process on the same data.

Timing: W warm-up calls (default 2), then R timed calls (default 10) on the wall clock
(time.perf_counter; for CUDA tensors torch.cuda.synchronize() before the stop, so the
returned tensors are complete); median, 10th and 90th percentiles. Threads: both
libraries use all cores unless OMP_NUM_THREADS / RAYON_NUM_THREADS say otherwise
(this script sets both to --threads when given).
"""

import argparse
import json
import os
import platform
import sys
import time


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--threads", type=int, default=0)
    return p.parse_args()


args = parse()
if args.threads:
    os.environ["OMP_NUM_THREADS"] = os.environ["RAYON_NUM_THREADS"] = str(args.threads)

import numpy as np  # noqa: E402

import orrery  # noqa: E402
from orrery import _orrery  # noqa: E402
from orrery import balltree as ours  # noqa: E402

try:
    import balltree as reference
except ImportError as e:
    reference = None
    print(f"reference balltree-erwin not importable ({e}); its rows are skipped", file=sys.stderr)
try:
    import torch

    has_cuda = hasattr(torch, "cuda") and torch.cuda.is_available()  # (not the tests' import stub)
except ImportError:
    torch, has_cuda = None, False
    print("torch not importable; the CUDA-tensor rows are skipped", file=sys.stderr)

threads = args.threads or os.cpu_count()
SHAPES = [(4, 1024), (1, 16384)] if args.quick else [(16, 1024), (16, 4096), (16, 16384), (64, 16384), (1, 1 << 20)]


def stats(samples_s):
    ms = sorted(s * 1e3 for s in samples_s)
    at = lambda q: ms[round((len(ms) - 1) * q)]  # noqa: E731
    return {"median_ms": at(0.5), "p10_ms": at(0.1), "p90_ms": at(0.9), "repeats": len(ms)}


def time_calls(call, inputs, sync=None):
    for k in range(args.warmup):
        call(*inputs[k % len(inputs)])
        if sync:
            sync()
    samples = []
    for k in range(args.repeats):
        x = inputs[k % len(inputs)]
        t0 = time.perf_counter()
        call(*x)
        if sync:
            sync()
        samples.append(time.perf_counter() - t0)
    return stats(samples)


records = []


def add(executor, workload, n, st, info=""):
    rec = {"suite": "python", "workload": workload, "executor": executor, "elements": n, "bytes": 0, "stats": st}
    if info:
        rec["info"] = info
    records.append(rec)
    print(f"{workload:<22} {executor:<52} {st['median_ms']:10.4f} ms  [{st['p10_ms']:.4f}, {st['p90_ms']:.4f}]", flush=True)


for batches, per in SHAPES:
    n = batches * per
    workload = f"uniform 3D {batches}x{per}"
    offsets = np.arange(batches + 1, dtype=np.int64) * per
    sets64 = [np.random.default_rng(1000 + s + n).random((n, 3)) for s in range(3)]
    sets32 = [p.astype(np.float32) for p in sets64]
    # Same answer first: the ball sets of orrery's build equal the reference's (checked in
    # the tests at every level); here the masks and every point once, cheaply.
    idx, mask = ours.build_balltree_with_offsets(sets64[0], offsets)
    assert np.array_equal(np.sort(idx[mask]), np.arange(n))
    if reference is not None:
        ref_idx, ref_mask = reference.build_balltree_with_offsets(sets64[0], offsets)
        assert np.array_equal(ref_mask, mask) and ref_idx.shape == idx.shape
        st = time_calls(reference.build_balltree_with_offsets, [(p, offsets) for p in sets64])
        add(f"balltree-erwin 0.1.0 ({threads} OpenMP threads) numpy f64", workload, n, st)
    st = time_calls(ours.build_balltree_with_offsets, [(p, offsets) for p in sets64])
    add(f"orrery {orrery.__version__} cpu ({threads} threads) numpy f64", workload, n, st)
    st = time_calls(ours.build_balltree_with_offsets, [(p, offsets) for p in sets32])
    add(f"orrery {orrery.__version__} cpu ({threads} threads) numpy f32", workload, n, st)
    samples = _orrery.time_rust_build(sets32[0], offsets, "cpu", args.warmup, args.repeats)
    add(f"orrery {orrery.__version__} cpu ({threads} threads) rust-side f32", workload, n, stats([s / 1e3 for s in samples]), "host clock")
    if has_cuda:
        bi = torch.repeat_interleave(torch.arange(batches, device="cuda"), per)
        dev = [(torch.from_numpy(p).cuda(), bi) for p in sets32]
        sync = torch.cuda.synchronize
        got, _ = ours.build_balltree(*dev[0])
        assert np.array_equal(got.cpu().numpy(), ours.build_balltree_with_offsets(sets32[0], offsets)[0])
        if reference is not None:
            st = time_calls(reference.build_balltree, dev, sync)
            add(f"balltree-erwin 0.1.0 ({threads} OpenMP threads) torch cuda f32", workload, n, st, "host round trip")
        st = time_calls(ours.build_balltree, dev, sync)
        add(f"orrery {orrery.__version__} cuda torch f32", workload, n, st, "in place (DLPack)")
        samples = _orrery.time_rust_build(sets32[0], offsets, "cuda", args.warmup, args.repeats)
        add(f"orrery {orrery.__version__} cuda rust-side f32", workload, n, stats([s / 1e3 for s in samples]), "device markers")

env = {
    "host": platform.node(),
    "cpu": f"{platform.processor() or platform.machine()} ({os.cpu_count()} logical cores)",
    "gpus": [f"cuda:0 {torch.cuda.get_device_name(0)}"] if has_cuda else [],
    "commit": os.environ.get("ORRERY_COMMIT", "unknown"),
    "unix_time": int(time.time()),
    "python": sys.version.split()[0],
    "torch": getattr(torch, "__version__", None),
    "numpy": np.__version__,
}
os.makedirs(args.out, exist_ok=True)
with open(os.path.join(args.out, "python.json"), "w") as f:
    json.dump({"environment": env, "records": records}, f, indent=1)
print(f"wrote {len(records)} records to {os.path.join(args.out, 'python.json')}")
