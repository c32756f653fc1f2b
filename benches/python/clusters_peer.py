#!/usr/bin/env python3
"""Peer for orrery's `clusters` suite: the same workloads in torch on the CUDA device, run
by orrery-bench in the same job:

    orrery-bench clusters --executors cpu,cuda --peer benches/python/clusters_peer.py
    python3 benches/python/clusters_peer.py clusters [--quick] [--warmup W] [--repeats R]

Prints one JSON record per line (the fields of orrery-bench's Record) with executor
"torch <version> (<device>)" plus a variant in parentheses; workload names equal the
suite's, so the tables line up. Without torch or a CUDA device it prints nothing on stdout
and says why on stderr.

Workloads (benches/src/suites/clusters.rs; drawn with torch.randn, so not bit-identical to
the Rust side's, the same shapes and distributions):
  - "centroid {1K,10K,100K} x 1024" (--quick: 1K and 10K x 256): clusters of 100 members,
    centres N(0, 1), members N(centre, 0.1^2), float32.
  - "knn {L2,IP} 4096q 1M x 128 k10" (--quick: "knn L2 256q 64K x 128 k10"): 1,000
    clusters of 1,000 rows (64 of 1,024 for --quick), queries N(random centre, 0.1^2).

What is timed (CUDA events around the region, after W warm-up calls; R timed calls, the
median and 10th/90th percentiles; the inputs are on the device already):
  - centroid: the whole family with segment reductions, the torch way (index_add_ /
    scatter_reduce_ over a per-row segment id, computed once outside the timing): member
    sums and counts, centroids, the global centroid; per member r = |x - mu[seg]| (torch
    materialises x - mu[seg], n x d), |x|; per cluster mean, M2, M3 (two-pass: centred
    sums after the mean), min, max, sum r^2, mean norm; thresholds, outlier and core
    counts, core and periphery sums; |mu|, |mu - G|, quality, offset, the global RMS radius
    by Huygens, novelty. float32 (orrery's GPU path is float32 too). Variant "segment".
  - knn: exact top-k with float32 scores (TF32 off: torch.backends.cuda.matmul.allow_tf32 =
    False, its default), queries in chunks of 1024 so the score block (1024 x 1M float32 =
    4 GB) stays bounded:
      "cdist+topk" (L2 only): torch.cdist(q, db) then topk(k, largest=False);
      "mm+topk": the matmul form, |x|^2 - 2 q.x^T (addmm, |x|^2 precomputed once outside
      the timing) or q.x^T for IP, then topk.
    A third variant with TF32 on ("mm+topk tf32") is printed for reference; its scores are
    approximate (orrery's are exact).
  Neither torch result is checked against orrery's: torch ranks by float32 scores, orrery
  by exact f64 ones, so near-ties may differ.
"""
import json
import sys

INPUT_SETS = 3
MEMBERS = 100
KNN_CHUNK = 1024


def stats(samples):
    s = sorted(samples)
    at = lambda q: s[round((len(s) - 1) * q)]
    return {"median_ms": at(0.5), "p10_ms": at(0.1), "p90_ms": at(0.9), "repeats": len(s)}


def label(n):
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}K"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024}K"
    return str(n)


def arg(name, default):
    if name in sys.argv:
        return int(sys.argv[sys.argv.index(name) + 1])
    return default


def time_cuda(torch, fn, warmup, repeats, rotate=1):
    for i in range(max(warmup, 1)):
        fn(i % rotate)
    torch.cuda.synchronize()
    samples = []
    for i in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn((i + 1) % rotate)
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return stats(samples)


def clustered(torch, clusters, per, dim, seed, dev):
    g = torch.Generator(device=dev).manual_seed(seed)
    centres = torch.randn(clusters, dim, generator=g, device=dev)
    x = centres.repeat_interleave(per, dim=0) + 0.1 * torch.randn(clusters * per, dim, generator=g, device=dev)
    return x.contiguous(), centres


def centroid_family(torch, x, seg, counts, k, outlier_sigmas=3.0, core_scale=1.0):
    """Every field of orrery's CentroidStats, with segment reductions (float32)."""
    n, d = x.shape
    nf = counts.to(x.dtype)
    sums = torch.zeros(k, d, device=x.device, dtype=x.dtype).index_add_(0, seg, x)
    mu = sums / nf[:, None]
    g = sums.sum(0) / n
    diff = x - mu[seg]
    r2 = (diff * diff).sum(1)
    r = r2.sqrt()
    xn = x.norm(dim=1)
    z = lambda: torch.zeros(k, device=x.device, dtype=x.dtype)
    mean = z().index_add_(0, seg, r) / nf
    dev_ = r - mean[seg]
    m2 = z().index_add_(0, seg, dev_ * dev_)
    m3 = z().index_add_(0, seg, dev_ * dev_ * dev_)
    spread = (m2 / nf).clamp_min(0).sqrt()
    skew = torch.where(m2 > 0, nf.sqrt() * m3 / (m2 * m2.sqrt()), torch.zeros_like(m2))
    rmin = z().scatter_reduce_(0, seg, r, reduce="amin", include_self=False)
    rmax = z().scatter_reduce_(0, seg, r, reduce="amax", include_self=False)
    inertia = z().index_add_(0, seg, r2)
    mean_norm = z().index_add_(0, seg, xn) / nf
    out_t = mean + outlier_sigmas * spread
    core_t = core_scale * mean
    is_out = r > out_t[seg]
    is_core = r <= core_t[seg]
    outliers = z().index_add_(0, seg, is_out.to(x.dtype))
    core = z().index_add_(0, seg, is_core.to(x.dtype))
    core_sum = z().index_add_(0, seg, torch.where(is_core, r, torch.zeros_like(r)))
    per_sum = z().index_add_(0, seg, torch.where(is_core, torch.zeros_like(r), r))
    periphery = nf - core
    cp = torch.where((core == 0) | (periphery == 0), torch.ones_like(core), (core_sum / core) / (per_sum / periphery))
    quality = torch.where(mean_norm > 0, (mu.norm(dim=1) / mean_norm).clamp_max(1.0), torch.zeros_like(mean_norm))
    offset = (mu - g).norm(dim=1)
    s_g = ((inertia + nf * offset * offset).sum() / n).sqrt()
    novelty = torch.where(s_g > 0, offset / s_g, torch.zeros_like(offset))
    return (mu, r, mean, inertia, (inertia / nf).sqrt(), spread, skew, rmin, rmax, mean_norm, quality, offset,
            novelty, outliers / nf, core / nf, cp, g, s_g)


def knn(torch, q, db, db_norm2, k, metric, variant):
    rows, scores = [], []
    for s in range(0, q.shape[0], KNN_CHUNK):
        qc = q[s:s + KNN_CHUNK]
        if variant == "cdist+topk":
            v, i = torch.cdist(qc, db).topk(k, dim=1, largest=False)
        elif metric == "L2":
            v, i = torch.addmm(db_norm2[None, :], qc, db.t(), beta=1.0, alpha=-2.0).topk(k, dim=1, largest=False)
        else:
            v, i = (qc @ db.t()).topk(k, dim=1, largest=True)
        rows.append(i)
        scores.append(v)
    return torch.cat(rows), torch.cat(scores)


def main():
    suite = sys.argv[1] if len(sys.argv) > 1 else "clusters"
    if suite != "clusters":
        print(f"clusters_peer: no peer for suite {suite}", file=sys.stderr)
        return
    quick = "--quick" in sys.argv
    warmup, repeats = arg("--warmup", 2), max(arg("--repeats", 10), 1)
    try:
        import torch
    except ImportError as e:
        print(f"clusters_peer: torch not importable ({e}). No peer records.", file=sys.stderr)
        return
    if not torch.cuda.is_available():
        print("clusters_peer: torch has no CUDA device. No peer records.", file=sys.stderr)
        return
    dev = torch.device("cuda")
    name = torch.cuda.get_device_name(dev)
    executor = f"torch {torch.__version__} ({name})"
    print(f"clusters_peer: {executor}", file=sys.stderr)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    dim = 256 if quick else 1024
    for members in ([1_000, 10_000] if quick else [1_000, 10_000, 100_000]):
        k = members // MEMBERS
        sets = [clustered(torch, k, MEMBERS, dim, 1600 + s + 7 * members, dev)[0] for s in range(INPUT_SETS)]
        counts = torch.full((k,), MEMBERS, device=dev, dtype=torch.int64)
        seg = torch.arange(k, device=dev).repeat_interleave(MEMBERS)
        st = time_cuda(torch, lambda s: centroid_family(torch, sets[s], seg, counts, k), warmup, repeats, INPUT_SETS)
        rec = {"suite": "clusters", "workload": f"centroid {label(members)} x {dim}",
               "executor": f"{executor} (segment)", "elements": members,
               "bytes": 2 * members * dim * 4 + members * 4, "info": f"{k} clusters"}
        rec.update(st)
        print(json.dumps(rec), flush=True)
        del sets

    shapes = [(64, 1024, 256, ["L2"])] if quick else [(1000, 1000, 4096, ["L2", "IP"])]
    for clusters, per, nq, metrics in shapes:
        kk, d = 10, 128
        db, centres = clustered(torch, clusters, per, d, 1616, dev)
        g = torch.Generator(device=dev).manual_seed(1617)
        pick = torch.randint(0, clusters, (nq,), generator=g, device=dev)
        q = (centres[pick] + 0.1 * torch.randn(nq, d, generator=g, device=dev)).contiguous()
        db_norm2 = (db * db).sum(1)
        rows = clusters * per
        for metric in metrics:
            variants = (["cdist+topk"] if metric == "L2" else []) + ["mm+topk", "mm+topk tf32"]
            for variant in variants:
                torch.backends.cuda.matmul.allow_tf32 = variant.endswith("tf32")
                st = time_cuda(torch, lambda s: knn(torch, q, db, db_norm2, kk, metric, variant.split()[0]),
                               warmup, repeats)
                rec = {"suite": "clusters", "workload": f"knn {metric} {nq}q {label(rows)} x {d} k{kk}",
                       "executor": f"{executor} ({variant})", "elements": nq * rows, "bytes": rows * d * 4,
                       "info": "float32 scores" + (", TF32 (approximate)" if variant.endswith("tf32") else "")}
                rec.update(st)
                print(json.dumps(rec), flush=True)
        torch.backends.cuda.matmul.allow_tf32 = False


if __name__ == "__main__":
    main()
