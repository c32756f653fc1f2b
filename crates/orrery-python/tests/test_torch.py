"""torch tensors: CPU tensors stay on the CPU, CUDA tensors are built in place on their
own device (DLPack), results come back as the reference's dtypes on the input's device.
These need the real torch (the H200 machine); they skip elsewhere and say so."""

import numpy as np
import pytest

from conftest import real_torch
from inputs import ball_sets, batch_index, clustered
from orrery import balltree


def tensors(torch, sizes, dim, seed, dtype, device):
    points, offsets = clustered(sizes, dim, seed, np.float64)
    data = torch.from_numpy(points).to(dtype).to(device)
    bi = torch.from_numpy(batch_index(offsets)).to(device)
    return data, bi, offsets


def test_cpu_tensors_match_numpy_and_the_reference(reference):
    torch = real_torch()
    data, bi, offsets = tensors(torch, [1000, 24, 513], 3, 1, torch.float32, "cpu")
    idx, mask = balltree.build_balltree(data, bi)
    assert idx.dtype == torch.int64 and mask.dtype == torch.bool and idx.device.type == "cpu"
    np_idx, np_mask = balltree.build_balltree_with_offsets(data.numpy(), offsets)
    assert np.array_equal(idx.numpy(), np_idx) and np.array_equal(mask.numpy(), np_mask)
    ref_idx, ref_mask = reference.build_balltree(data, bi)
    assert ball_sets(idx.numpy(), offsets) == ball_sets(ref_idx.numpy(), offsets)
    part = balltree.partition_balltree(data, bi, 3)
    assert part.dtype == torch.int64


def cuda_or_skip(torch):
    if not torch.cuda.is_available():
        pytest.skip("skipped: torch sees no CUDA device here")


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
def test_cuda_tensors_are_built_in_place(dtype_name):
    torch = real_torch()
    cuda_or_skip(torch)
    dtype = getattr(torch, dtype_name)
    data, bi, offsets = tensors(torch, [4096, 1, 300, 2048], 3, 2, dtype, "cuda")
    idx, mask = balltree.build_balltree(data, bi)
    assert idx.device == data.device and mask.device == data.device
    assert idx.dtype == torch.int64 and mask.dtype == torch.bool
    cpu_idx, cpu_mask = balltree.build_balltree_with_offsets(data.cpu().numpy(), offsets)
    assert np.array_equal(idx.cpu().numpy(), cpu_idx) and np.array_equal(mask.cpu().numpy(), cpu_mask)


def test_cuda_build_follows_pending_torch_work():
    # The points are produced by a torch kernel just before the call: the build must see
    # them (DLPack's stream argument orders torch's work before orrery's stream).
    torch = real_torch()
    cuda_or_skip(torch)
    data, bi, offsets = tensors(torch, [1 << 16], 3, 3, torch.float32, "cuda")
    for scale in (1.0, -1.0, 3.0):
        moved = data * scale + 1.0
        idx, _ = balltree.build_balltree(moved, bi)
        expect, _ = balltree.build_balltree_with_offsets(moved.cpu().numpy(), offsets)
        assert np.array_equal(idx.cpu().numpy(), expect)


def test_cuda_bad_input():
    torch = real_torch()
    cuda_or_skip(torch)
    data, bi, _ = tensors(torch, [32, 32], 3, 4, torch.float32, "cuda")
    with pytest.raises(ValueError):
        balltree.build_balltree(data, bi.cpu())
    nan = data.clone()
    nan[5, 1] = float("nan")
    # The coordinates are on the device and not scanned; orrery's contract is a defined
    # but unspecified tree, never a fault: the call must return normally.
    idx, mask = balltree.build_balltree(nan, bi)
    assert idx.shape == mask.shape == (64,)
    unsorted = bi.clone()
    unsorted[10] = 1
    with pytest.raises(ValueError, match="sorted"):
        balltree.build_balltree(data, unsorted)
    with pytest.raises(ValueError, match="start from 0"):
        balltree.build_balltree(data, bi + 1)


def test_rotations_match_the_reference(reference):
    torch = real_torch()
    data, bi, offsets = tensors(torch, [1024, 1024], 3, 5, torch.float32, "cpu")
    ours = balltree.build_balltree_with_rotations(data, bi, [2, 2], [64, 32, 16], 45.0)
    ref = reference.build_balltree_with_rotations(data, bi, [2, 2], [64, 32, 16], 45.0)
    assert ball_sets(ours[0].numpy(), offsets) == ball_sets(ref[0].numpy(), offsets)
    assert len(ours[2]) == len(ref[2]) == 3
    # The rotated partitions index the layer's entries, which are slots (layer 0) or
    # means of `span` consecutive slots; within a leaf the two libraries order the slots
    # differently, so compare what each entry is (the set of points under it).
    span = 1
    for layer, (o, r, bs) in enumerate(zip(ours[2], ref[2], [64, 32, 16])):
        assert o.shape == r.shape and o.dtype == r.dtype
        balls = []
        for perm, tree in ((o, ours[0]), (r, ref[0])):
            t = tree.numpy()
            entry = [frozenset(t[e * span : (e + 1) * span].tolist()) for e in range(len(t) // span)]
            balls.append([frozenset(entry[j] for j in ball) for ball in perm.numpy().reshape(-1, bs).tolist()])
        assert balls[0] == balls[1], f"layer {layer}"
        if layer < 2:
            span *= 2
    none = balltree.build_balltree_with_rotations(data, bi, [2, 2], [64, 32, 16], 0.0)
    assert none[2] == [None, None, None]
