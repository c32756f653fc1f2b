"""orrery.balltree against balltree-erwin on the same inputs: every ball at every level
holds the same points (tie-free inputs; within a ball the order may differ, as the
reference leaves it to std::nth_element)."""

import numpy as np
import pytest

from inputs import ball_sets, batch_index, clustered, partition_groups, uniform
from orrery import balltree

CASES = [
    ("uniform", [1024], 3, 1),
    ("uniform", [1000, 77, 513, 2], 3, 2),
    ("uniform", [300, 301], 2, 3),
    ("uniform", [129] * 5, 5, 4),
    ("clustered", [4096], 3, 5),
    ("clustered", [700, 1500, 33], 3, 6),
    ("clustered", [256, 255], 2, 7),
]


def make(kind, sizes, dim, seed, dtype=np.float64):
    return (uniform if kind == "uniform" else clustered)(sizes, dim, seed, dtype)


@pytest.mark.parametrize("kind,sizes,dim,seed", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_build_ball_sets_equal_the_reference(reference, kind, sizes, dim, seed, dtype):
    points, offsets = make(kind, sizes, dim, seed, dtype)
    ref_idx, ref_mask = reference.build_balltree_with_offsets(points.astype(np.float64), offsets)
    idx, mask = balltree.build_balltree_with_offsets(points, offsets)
    assert idx.dtype == ref_idx.dtype and idx.shape == ref_idx.shape
    assert mask.dtype == ref_mask.dtype and mask.shape == ref_mask.shape
    assert ball_sets(idx, offsets) == ball_sets(ref_idx, offsets)
    # Padding is where the reference has it: the mask is a function of the batch sizes.
    assert np.array_equal(mask, ref_mask)
    # Every point appears exactly once among the masked slots.
    assert np.array_equal(np.sort(idx[mask]), np.arange(len(points)))


@pytest.mark.parametrize("kind,sizes,dim,seed", CASES)
def test_build_with_idx_equals_the_reference(reference, kind, sizes, dim, seed):
    points, offsets = make(kind, sizes, dim, seed)
    bi = batch_index(offsets)
    ref_idx, _ = reference.build_balltree_with_idx(points, bi)
    idx, _ = balltree.build_balltree_with_idx(points, bi)
    assert ball_sets(idx, offsets) == ball_sets(ref_idx, offsets)


@pytest.mark.parametrize("kind,sizes,dim,seed", CASES)
@pytest.mark.parametrize("target_level", [0, 1, 3, 6])
def test_partition_groups_equal_the_reference(reference, kind, sizes, dim, seed, target_level):
    points, offsets = make(kind, sizes, dim, seed)
    ref = reference.partition_balltree_with_offsets(points, offsets, target_level)
    ours = balltree.partition_balltree_with_offsets(points, offsets, target_level)
    assert ours.dtype == ref.dtype and ours.shape == ref.shape
    assert partition_groups(ours, offsets, target_level) == partition_groups(ref, offsets, target_level)
    bi = batch_index(offsets)
    ours_idx = balltree.partition_balltree_with_idx(points, bi, target_level)
    assert np.array_equal(ours_idx, ours)


@pytest.mark.parametrize("executor", ["cpu", "wgpu", "cuda"])
def test_every_executor_builds_the_same_tree(executor):
    import orrery

    if executor not in orrery.executors_available():
        pytest.skip(f"skipped: no {executor} executor here")
    points, offsets = clustered([3000, 17, 1024], 3, 11, np.float32)
    cpu = balltree.build_balltree_with_offsets(points, offsets, executor="cpu")
    other = balltree.build_balltree_with_offsets(points, offsets, executor=executor)
    assert np.array_equal(cpu[0], other[0]) and np.array_equal(cpu[1], other[1])
