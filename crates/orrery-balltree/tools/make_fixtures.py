#!/usr/bin/env python3
"""Golden fixtures for orrery-balltree from Erwin's reference (`balltree-erwin` 0.1.0).

Writes tests/fixtures/manifest.json and one little-endian binary per case. Every case
stores its points as float32 (the reference gets the same values widened to float64,
exactly) and the reference's answers:

- `tree_idx` (u32) and `tree_mask` (u8) from `build_balltree_with_offsets`;
- `partition_<t>` (u32) from `partition_balltree_with_offsets` for a few target levels;
- for the rotation cases, `rot_<i>` (u32) from `build_balltree_with_rotations` (torch,
  float32 as in Erwin) with the reference's own `rot_tree_idx` (u32), since the rotated
  partitions index into *its* tree order.

Coordinates are drawn without ties inside a batch on every axis, so the reference's
`std::nth_element` (which breaks ties arbitrarily) has one answer. Batches of one point
are not generated: the reference rejects them (`1 << (ceil(log2 1) - 1)` is `1 << -1`).

Usage (see the crate README for the environment):
    python tools/make_fixtures.py [--out tests/fixtures]
"""

import argparse
import json
import os

import numpy as np
import balltree

SEED = 20250219


def untied(rng, make, n, dim):
    """Draws n points with make(k) and redraws any coordinate that repeats on its axis."""
    x = make(n).astype(np.float32)
    for _ in range(100):
        bad = np.zeros(n, dtype=bool)
        for d in range(dim):
            _, first = np.unique(x[:, d], return_index=True)
            dup = np.ones(n, dtype=bool)
            dup[first] = False
            bad |= dup
        if not bad.any():
            return x
        x[bad] = make(int(bad.sum())).astype(np.float32)
    raise RuntimeError("could not draw untied points")


def uniform(rng, dim):
    return lambda k: rng.random((k, dim))


def blobs(rng, dim, centres=8, sigma=0.02):
    mu = rng.random((centres, dim))

    def make(k):
        c = rng.integers(0, centres, size=k)
        return mu[c] + sigma * rng.standard_normal((k, dim))

    return make


def cloud(rng, sizes, dim, kind="uniform"):
    parts = []
    for n in sizes:
        make = uniform(rng, dim) if kind == "uniform" else blobs(rng, dim)
        parts.append(untied(rng, make, n, dim))
    return np.concatenate(parts, axis=0)


class Writer:
    def __init__(self, out):
        self.out = out
        self.cases = []
        os.makedirs(out, exist_ok=True)

    def case(self, name, points, sizes, partitions=(), rotation=None):
        points = np.ascontiguousarray(points, dtype=np.float32)
        dim = points.shape[1]
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        data64 = points.astype(np.float64)
        idx, mask = balltree.build_balltree_with_offsets(data64, offsets)
        blob = bytearray()
        sections = {}

        def put(key, arr, dtype):
            arr = np.ascontiguousarray(arr).astype(dtype)
            sections[key] = {"dtype": np.dtype(dtype).name, "offset": len(blob), "len": int(arr.size)}
            blob.extend(arr.astype(np.dtype(dtype).newbyteorder("<")).tobytes())

        put("points", points, np.float32)
        put("tree_idx", idx, np.uint32)
        put("tree_mask", mask, np.uint8)
        for t in partitions:
            put(f"partition_{t}", balltree.partition_balltree_with_offsets(data64, offsets, t), np.uint32)
        entry = {
            "name": name,
            "dim": int(dim),
            "offsets": [int(o) for o in offsets],
            "partitions": list(partitions),
            "file": f"{name}.bin",
            "sections": sections,
        }
        if rotation is not None:
            import torch

            angle, ball_sizes, strides = rotation
            data = torch.from_numpy(points)  # float32, as in Erwin
            batch_idx = torch.from_numpy(np.repeat(np.arange(len(sizes)), sizes))
            ridx, _, rots = balltree.build_balltree_with_rotations(data, batch_idx, strides, ball_sizes, angle)
            put("rot_tree_idx", ridx.numpy(), np.uint32)
            for i, r in enumerate(rots):
                put(f"rot_{i}", r.numpy(), np.uint32)
            matrix = balltree.generate_rotation_matrix(angle, dim, torch.device("cpu"))
            entry["rotation"] = {
                "angle": angle,
                "ball_sizes": list(ball_sizes),
                "strides": list(strides),
                # the float32 matrix the reference multiplies by, widened exactly
                "matrix": [float(v) for v in matrix.numpy().astype(np.float64).ravel()],
            }
        with open(os.path.join(self.out, entry["file"]), "wb") as f:
            f.write(bytes(blob))
        self.cases.append(entry)

    def finish(self):
        manifest = {
            "generator": "tools/make_fixtures.py",
            "reference": "balltree-erwin 0.1.0 (sdist, built with g++ -O3 -fopenmp)",
            "seed": SEED,
            "cases": self.cases,
        }
        with open(os.path.join(self.out, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)
            f.write("\n")


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "fixtures"))
    args = ap.parse_args()
    rng = np.random.default_rng(SEED)
    w = Writer(args.out)
    levels = (0, 1, 2, 4, 7)
    # Sizes that are and are not powers of two, one batch, 3D uniform.
    for n in (2, 3, 5, 8, 100, 1000, 4096, 5000):
        w.case(f"uniform3d_n{n}", cloud(rng, [n], 3), [n], levels)
    # Other dimensions.
    w.case("uniform1d_n300", cloud(rng, [300], 1), [300], levels)
    w.case("uniform2d_n777", cloud(rng, [777], 2), [777], levels)
    w.case("uniform8d_n1000", cloud(rng, [1000], 8), [1000], levels)
    w.case("uniform16d_n1000", cloud(rng, [1000], 16), [1000], levels)
    # Several batches in one call, ragged sizes.
    sizes = [100, 5, 1000, 3, 8, 64, 2, 517]
    w.case("batches3d_ragged", cloud(rng, sizes, 3), sizes, levels)
    sizes = [256, 256, 256, 256]
    w.case("batches8d_equal", cloud(rng, sizes, 8), sizes, levels)
    # Clustered data: Gaussian blobs.
    w.case("blobs3d_n5000", cloud(rng, [5000], 3, "blobs"), [5000], levels)
    sizes = [3000, 1500]
    w.case("blobs2d_two_batches", cloud(rng, sizes, 2, "blobs"), sizes, levels)
    # Rotated re-partitions (Erwin's build_balltree_with_rotations, float32 torch).
    sizes = [1000, 1000, 1000, 1000]
    w.case("rotations3d_equal", cloud(rng, sizes, 3), sizes, (), (45.0, [64, 32, 16], [2, 2]))
    sizes = [1000, 700, 300]
    w.case("rotations2d_ragged", cloud(rng, sizes, 2, "blobs"), sizes, (), (45.0, [32, 16], [2]))
    w.finish()


if __name__ == "__main__":
    main()
