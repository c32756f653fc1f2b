#!/usr/bin/env python3
"""Where the time of `orrery.balltree.build_balltree` on CUDA tensors goes: each step of
the Python path timed alone on the host clock (torch.cuda.synchronize() around it), beside
the Rust-side build (device markers, and host clock until the device is done).

    python3 benches/python/python_profile.py [--repeats R]

Prints one line per (workload, step): the median in milliseconds.
"""

import argparse
import statistics
import time

import numpy as np
import torch

from orrery import _orrery
from orrery import balltree as ours

p = argparse.ArgumentParser()
p.add_argument("--repeats", type=int, default=20)
args = p.parse_args()
sync = torch.cuda.synchronize


def med(f, repeats=args.repeats):
    for _ in range(3):
        f()
    sync()
    out = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        f()
        sync()
        out.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(out)


for batches, per in [(16, 1024), (64, 16384), (1, 1 << 20)]:
    n = batches * per
    host = np.random.default_rng(7).random((n, 3)).astype(np.float32)
    offsets = np.arange(batches + 1, dtype=np.int64) * per
    data = torch.from_numpy(host).cuda()
    bi = torch.repeat_interleave(torch.arange(batches, device="cuda"), per)
    offs = ours._device_offsets(torch, bi)
    slots = _orrery.slot_count(offs)
    stream = _orrery.cuda_stream(0)
    idx32 = torch.empty(slots, dtype=torch.int32, device="cuda")
    mask32 = torch.empty(slots, dtype=torch.int32, device="cuda")
    rows = {
        "total build_balltree": lambda: ours.build_balltree(data, bi),
        "offsets from batch_idx": lambda: ours._device_offsets(torch, bi),
        "slot_count + cuda_stream": lambda: (_orrery.slot_count(offs), _orrery.cuda_stream(0)),
        "2 x torch.empty": lambda: (torch.empty(slots, dtype=torch.int32, device="cuda"), torch.empty(slots, dtype=torch.int32, device="cuda")),
        "3 x __dlpack__": lambda: (data.__dlpack__(stream=stream), idx32.__dlpack__(stream=-1), mask32.__dlpack__(stream=-1)),
        "build_cuda (Rust call)": lambda: _orrery.build_cuda(data.__dlpack__(stream=stream), offs, idx32.__dlpack__(stream=-1), mask32.__dlpack__(stream=-1)),
        ".long() + .bool()": lambda: (idx32.long(), mask32.bool()),
    }
    for name, f in rows.items():
        print(f"{batches}x{per:<8} {name:<28} {med(f):8.4f} ms", flush=True)
    dev = statistics.median(_orrery.time_rust_build(host, offsets, "cuda", 3, args.repeats))
    wall = statistics.median(_orrery.time_rust_build(host, offsets, "cuda", 3, args.repeats, True))
    print(f"{batches}x{per:<8} {'rust build (device markers)':<28} {dev:8.4f} ms")
    print(f"{batches}x{per:<8} {'rust build + sync (host)':<28} {wall:8.4f} ms", flush=True)
