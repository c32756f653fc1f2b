"""Seeded test inputs: uniform and clustered point clouds in batches."""

import numpy as np


def uniform(sizes, dim, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    n = int(sum(sizes))
    points = rng.random((n, dim)).astype(dtype)
    return points, offsets_of(sizes)


def clustered(sizes, dim, seed, dtype=np.float64, clusters=5):
    """Gaussian blobs of different widths around random centres (no ties)."""
    rng = np.random.default_rng(seed)
    parts = []
    for s in sizes:
        centres = rng.normal(0.0, 10.0, (clusters, dim))
        widths = rng.uniform(0.05, 2.0, clusters)
        pick = rng.integers(0, clusters, s)
        parts.append(centres[pick] + rng.normal(0.0, 1.0, (s, dim)) * widths[pick, None])
    return np.concatenate(parts).astype(dtype), offsets_of(sizes)


def offsets_of(sizes):
    return np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)


def batch_index(offsets):
    sizes = np.diff(offsets)
    return np.repeat(np.arange(len(sizes)), sizes).astype(np.int64)


def tree_depth(n):
    """The reference's L = ceil(log2 n) - 1, and 0 for one point (orrery's answer)."""
    return max(int(np.ceil(np.log2(n))) - 1, 0) if n > 1 else 0


def ball_sets(indices, offsets):
    """Per batch and height h >= 1: the set of point indices of every ball of 2^h slots."""
    sizes = np.diff(offsets)
    slots = [2 ** (tree_depth(int(n)) + 1) for n in sizes]
    out = []
    start = 0
    for s in slots:
        batch = indices[start : start + s]
        levels = []
        h = 1
        while 2**h <= s:
            w = 2**h
            levels.append([frozenset(batch[i : i + w].tolist()) for i in range(0, s, w)])
            h += 1
        out.append(levels)
        start += s
    return out


def partition_groups(order, offsets, target_level):
    """The groups of a partition: the reference's recursion (mid = (start + end) // 2)."""
    groups = []
    for b in range(len(offsets) - 1):
        lo, hi = int(offsets[b]), int(offsets[b + 1])

        def rec(s, e, level):
            if level == target_level or e - s <= 1:
                groups.append(frozenset(order[lo + s : lo + e].tolist()))
                return
            m = (s + e) // 2
            rec(s, m, level + 1)
            rec(m, e, level + 1)

        rec(0, hi - lo, 0)
    return groups
