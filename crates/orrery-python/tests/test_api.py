"""orrery's own answers: the one-point batch, ties, dtypes, the extras and the errors."""

import numpy as np
import pytest

import orrery
from inputs import uniform
from orrery import balltree


def test_one_point_batch_has_the_defined_answer():
    points = np.array([[0.0, 0.0], [1.0, 1.0], [5.0, 5.0]])
    idx, mask = balltree.build_balltree_with_offsets(points, np.array([0, 2, 3]))
    assert idx.tolist() == [0, 1, 2, 2]
    assert mask.tolist() == [True, True, True, False]
    idx, mask = balltree.build_balltree_with_idx(points[:1], np.array([0]))
    assert idx.tolist() == [0, 0] and mask.tolist() == [True, False]


def test_ties_break_by_point_index():
    points = np.zeros((8, 2))
    idx, mask = balltree.build_balltree_with_offsets(points, np.array([0, 8]))
    assert idx.tolist() == list(range(8)) and mask.all()
    order = balltree.partition_balltree_with_offsets(points, np.array([0, 8]), 2)
    assert order.tolist() == list(range(8))


def test_dtypes_and_shapes():
    points, offsets = uniform([100, 28], 3, 1)
    f64 = balltree.build_balltree_with_offsets(points, offsets)
    f32 = balltree.build_balltree_with_offsets(points.astype(np.float32), offsets)
    ints = balltree.build_balltree_with_offsets((points * 1000).astype(np.int32), offsets)
    for idx, mask in (f64, f32, ints):
        assert idx.dtype == np.intp and mask.dtype == np.bool_
        assert idx.shape == mask.shape == (128 + 32,)
    # Non-contiguous input is accepted (copied once), as the reference's np.asarray does.
    strided = np.asfortranarray(points)
    assert np.array_equal(balltree.build_balltree_with_offsets(strided, offsets)[0], f64[0])


def test_ball_tree_extras():
    points, offsets = uniform([100, 28], 3, 2)
    tree = balltree.BallTree(points, offsets)
    idx, mask = balltree.build_balltree_with_offsets(points, offsets)
    assert np.array_equal(tree.indices, idx) and np.array_equal(tree.mask, mask)
    assert len(tree) == 160 and tree.slot_offsets.tolist() == [0, 128, 160]
    perm, inv = tree.permutation(), tree.inverse_permutation()
    assert np.array_equal(perm, idx[mask])
    assert np.array_equal(points[perm][inv], points)
    # Erwin's first pooling: leaf means over the slots, padding counted.
    leaves = tree.pool_mean(points, 1)
    assert leaves.shape == (80, 3)
    assert np.allclose(leaves, points[idx].reshape(80, 2, 3).mean(axis=1))
    centres, radii = tree.ball_stats(points, 3, "points")
    assert centres.shape == (20, 3) and radii.shape == (20,)
    for b in range(20):
        members = np.unique(idx[b * 8 : (b + 1) * 8])
        assert np.allclose(centres[b], points[members].mean(axis=0))
        assert np.isclose(radii[b], np.linalg.norm(points[members] - centres[b], axis=1).max())
    layers = tree.rotated_partitions(points, 45.0, [16, 8], [2])
    assert len(layers) == 2
    for (p, i), entries in zip(layers, (160, 80)):
        assert sorted(p.tolist()) == list(range(entries)) and np.array_equal(p[i], np.arange(entries))
    assert "BallTree(points=128" in repr(tree)


BAD = [
    (lambda: balltree.build_balltree_with_offsets([[0.0, 1.0]], np.array([0, 1])), "numpy array"),
    (lambda: balltree.build_balltree_with_offsets(np.zeros(4), np.array([0, 4])), "2D"),
    (lambda: balltree.build_balltree_with_offsets(np.zeros((4, 2)), np.array([[0, 4]])), "1D"),
    (lambda: balltree.build_balltree_with_offsets(np.zeros((4, 2)), np.array([0])), "offsets"),
    (lambda: balltree.build_balltree_with_offsets(np.zeros((4, 2)), np.array([0, 2, 2, 4])), "offsets"),
    (lambda: balltree.build_balltree_with_offsets(np.zeros((4, 2)), np.array([0, 3, 2])), "offsets"),
    (lambda: balltree.build_balltree_with_offsets(np.zeros((4, 2)), np.array([0, 5])), "length mismatch"),
    (lambda: balltree.build_balltree_with_offsets(np.zeros((4, 2)), np.array([0.0, 4.0])), "integers"),
    (lambda: balltree.build_balltree_with_offsets(np.array([[0.0, np.nan]]), np.array([0, 1])), "NaN"),
    (lambda: balltree.build_balltree_with_offsets(np.array([[0.0, np.inf]]), np.array([0, 1])), "inf"),
    (lambda: balltree.build_balltree_with_offsets(np.zeros((4, 0)), np.array([0, 4])), "dim"),
    (lambda: balltree.build_balltree_with_offsets(np.zeros((4, 17)), np.array([0, 4])), "dim"),
    (lambda: balltree.build_balltree_with_offsets(np.zeros((4, 2)), np.array([0, 4]), executor="tpu"), "executor"),
    (lambda: balltree.build_balltree_with_idx(np.zeros((4, 2)), np.array([1, 1, 2, 2])), "start from 0"),
    (lambda: balltree.build_balltree_with_idx(np.zeros((4, 2)), np.array([0, 1, 0, 1])), "sorted"),
    (lambda: balltree.build_balltree_with_idx(np.zeros((4, 2)), np.array([0, 0, 2, 2])), "gaps"),
    (lambda: balltree.build_balltree_with_idx(np.zeros((4, 2)), np.array([0, 0, 0])), "length"),
    (lambda: balltree.build_balltree_with_idx(np.zeros((0, 2)), np.array([], dtype=int)), "empty"),
    (lambda: balltree.partition_balltree_with_offsets(np.zeros((4, 2)), np.array([0, 4]), -1), "non-negative"),
    (lambda: balltree.partition_balltree_with_offsets(np.zeros((4, 2)), np.array([0, 4]), 1.5), "integer"),
    (lambda: balltree.BallTree(np.zeros((4, 2)), np.array([0, 4])).pool_mean(np.zeros((3, 2)), 1), "length mismatch"),
    (lambda: balltree.BallTree(np.zeros((4, 2)), np.array([0, 4])).pool_mean(np.zeros((4, 2)), 9), "out of range"),
    (lambda: balltree.BallTree(np.zeros((4, 2)), np.array([0, 4])).pool_mean(np.zeros((4, 2)), 1, "x"), "weighting"),
]


@pytest.mark.parametrize("call,message", BAD, ids=range(len(BAD)))
def test_bad_input_is_a_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_missing_executor_is_a_runtime_error():
    if "cuda" in orrery.executors_available():
        pytest.skip("skipped: CUDA is available here, so it cannot be missing")
    with pytest.raises(RuntimeError, match="(?i)cuda|driver|device"):
        balltree.build_balltree_with_offsets(np.zeros((4, 2)), np.array([0, 4]), executor="cuda")


def test_the_gil_is_released_during_builds():
    import threading
    import time

    points, offsets = uniform([1 << 17], 3, 9, np.float32)
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=tick)
    t.start()
    start = time.perf_counter()
    for _ in range(3):
        balltree.build_balltree_with_offsets(points, offsets)
    end = time.perf_counter()
    done.set()
    t.join()
    during = [x for x in ticks if start < x < end]
    # A build holding the GIL would starve the ticker for its whole duration.
    assert len(during) >= 3, f"{len(during)} ticks in {end - start:.3f} s"
