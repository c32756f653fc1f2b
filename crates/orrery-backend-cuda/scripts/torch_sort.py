"""Side-by-side anchor for the radix-sort benchmark: torch.sort (CUB radix sort) of
int64 keys plus a gather of an int32 payload by the returned indices, in one call, and
a 1 GiB device-to-device copy. Events around each run after warm-up, median of 10.

Usage: python3 torch_sort.py
"""
import statistics

import torch


def timed(fn, repeats=10, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ms = []
    for _ in range(repeats):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ms.append(a.elapsed_time(b))
    ms.sort()
    return statistics.median(ms), ms[0], ms[-1]


def main():
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    n = 1 << 28
    src = torch.ones(n, dtype=torch.int32, device="cuda")
    dst = torch.empty_like(src)
    med, lo, hi = timed(lambda: dst.copy_(src))
    print(f"torch copy_1GiB n={n} median_ms={med:.4f} spread_ms={lo:.4f}..{hi:.4f} {2 * n * 4 / med / 1e6:.0f} GB/s")
    del src, dst
    for n in (1 << 24, 1 << 26):
        g = torch.Generator(device="cuda").manual_seed(1)
        keys = torch.randint(-(2**63), 2**63 - 1, (n,), dtype=torch.int64, device="cuda", generator=g)
        payload = torch.arange(n, dtype=torch.int32, device="cuda")
        for stable in (False, True):

            def run():
                _, idx = torch.sort(keys, stable=stable)
                return payload[idx]

            med, lo, hi = timed(run)
            print(
                f"torch sort_int64+gather_int32 stable={stable} n={n} median_ms={med:.4f} "
                f"spread_ms={lo:.4f}..{hi:.4f} {n / med / 1e6:.2f} Gkeys/s"
            )


if __name__ == "__main__":
    main()
