#!/usr/bin/env python3
"""Peer measurements for orrery's benchmark suites, run in the same process tree as ours.

    python3 benches/python/peers.py SUITE [--quick]

Prints one JSON record per line (the fields of orrery-bench's Record). Needs torch with
CUDA for the GPU peers; prints nothing for what it cannot run and explains on stderr.
Timing: CUDA events around each run after warm-up, median and 10/90th percentiles.
"""
import json
import sys


def stats(samples):
    s = sorted(samples)
    at = lambda q: s[round((len(s) - 1) * q)]
    return {"median_ms": at(0.5), "p10_ms": at(0.1), "p90_ms": at(0.9), "repeats": len(s)}


def timed(torch, fn, setup=None, warmup=3, repeats=10):
    samples = []
    for i in range(warmup + repeats):
        if setup:
            setup()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        if i >= warmup:
            samples.append(start.elapsed_time(end))
    return stats(samples)


def emit(suite, workload, elements, nbytes, st):
    rec = {"suite": suite, "workload": workload, "executor": "torch " + TORCH_VERSION + " (CUB)",
           "elements": elements, "bytes": nbytes}
    rec.update(st)
    print(json.dumps(rec), flush=True)


def primitives(torch, quick):
    scale = 16 if quick else 1
    label = lambda n: f"{n >> 20}M"
    n = (256 << 20) // scale
    src = torch.randint(0, 2**31 - 1, (n,), dtype=torch.int32, device="cuda")
    dst = torch.empty_like(src)
    emit("primitives", f"copy u32 {label(n)}", n, n * 8, timed(torch, lambda: dst.copy_(src)))
    out = torch.empty(n, dtype=torch.int64, device="cuda")
    emit("primitives", f"cumsum i32->i64 {label(n)}", n, n * 12,
         timed(torch, lambda: torch.cumsum(src, 0, out=out)))
    del src, dst, out
    for n in ((16 << 20) // scale, (64 << 20) // scale):
        keys = torch.randint(-2**63, 2**63 - 1, (n,), dtype=torch.int64, device="cuda")
        payload = torch.arange(n, dtype=torch.int32, device="cuda")

        def sort_and_gather():
            sorted_keys, perm = torch.sort(keys)
            return sorted_keys, payload[perm]

        emit("primitives", f"sort+gather i64,i32 {label(n)}", n, n * 24, timed(torch, sort_and_gather))


def main():
    global TORCH_VERSION
    suite = sys.argv[1] if len(sys.argv) > 1 else "primitives"
    quick = "--quick" in sys.argv
    try:
        import torch
    except ImportError as e:
        print(f"peers: torch not importable: {e}", file=sys.stderr)
        return
    if not torch.cuda.is_available():
        print("peers: torch has no CUDA device", file=sys.stderr)
        return
    TORCH_VERSION = torch.__version__
    if suite == "primitives":
        primitives(torch, quick)
    else:
        print(f"peers: no peer for suite {suite}", file=sys.stderr)


TORCH_VERSION = "?"
if __name__ == "__main__":
    main()
