"""Erwin's ball tree, with the API of ``balltree-erwin``.

``from orrery import balltree`` replaces ``import balltree``: the functions have the
reference's names, arguments, defaults, return types and shapes —

- ``build_balltree(data, batch_idx)`` on torch tensors -> ``(tree_idx int64, tree_mask bool)``
- ``build_balltree_with_idx(data, batch_idx)`` / ``build_balltree_with_offsets(data, batch_offsets)``
  on numpy arrays -> ``(tree_idx intp, tree_mask bool)``
- ``partition_balltree(data, batch_idx, target_level)`` and its ``_with_idx`` /
  ``_with_offsets`` numpy variants -> the point order, group after group
- ``build_balltree_with_rotations(data, batch_idx, strides, ball_sizes, angle=45.)``
- ``generate_rotation_matrix(angle, dim, device)``

Every function also takes ``executor=`` ("auto", "cpu", "cuda", "cuda:N", "wgpu"),
keyword-only. "auto" builds a CUDA tensor on its own device, in place (DLPack), and
returns tensors on that device; a numpy array or a CPU tensor stays on the CPU. An
explicit executor is always used: host data is uploaded to it and the result comes
back where the input lives.

Where the reference is undefined, orrery gives the defined answer of orrery-balltree:
a batch of one point (the reference crashes) gives the slots ``[i, i]`` with mask
``[True, False]``; ties in a coordinate break by point index, and the points of a
leaf are listed by ascending index. float32 input is built in float32, with no
float64 copy. Errors are ``ValueError`` for bad input (shapes, dtypes, offsets, NaN)
and ``RuntimeError`` when an executor is missing; never a crash.

The partitions (``partition_balltree`` and the rotated partitions) run on the CPU:
a CUDA tensor makes a host round trip there, as in the reference.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from . import _orrery
from ._orrery import BallTree

__all__ = [
    "BallTree",
    "build_balltree",
    "build_balltree_with_idx",
    "build_balltree_with_offsets",
    "build_balltree_with_rotations",
    "generate_rotation_matrix",
    "partition_balltree",
    "partition_balltree_with_idx",
    "partition_balltree_with_offsets",
]


def _host_points(data: Any) -> np.ndarray:
    """A C-contiguous float32/float64 2-D array (other dtypes become float64)."""
    if not isinstance(data, np.ndarray):
        raise ValueError("data must be a numpy array")
    if data.ndim != 2:
        raise ValueError(
            f"Data must be 2D array of shape (num_samples, num_features), got shape {data.shape}"
        )
    if data.dtype not in (np.float32, np.float64):
        if not (np.issubdtype(data.dtype, np.floating) or np.issubdtype(data.dtype, np.integer)):
            raise ValueError(f"data must hold numbers, got dtype {data.dtype}")
        data = data.astype(np.float64)
    return np.ascontiguousarray(data)


def _host_offsets(batch_offsets: Any) -> np.ndarray:
    if not isinstance(batch_offsets, np.ndarray):
        raise ValueError("batch_offsets must be a numpy array")
    if batch_offsets.ndim != 1:
        raise ValueError(
            f"Batch offsets must be 1D array of shape (num_batches + 1,), got shape {batch_offsets.shape}"
        )
    if not np.issubdtype(batch_offsets.dtype, np.integer):
        raise ValueError(f"batch_offsets must be integers, got dtype {batch_offsets.dtype}")
    return np.ascontiguousarray(batch_offsets, dtype=np.int64)


def _offsets_from_idx(data: np.ndarray, batch_idx: Any) -> np.ndarray:
    """CSR offsets of a sorted, gap-free batch index that starts at 0."""
    if not isinstance(batch_idx, np.ndarray):
        raise ValueError("batch_idx must be a numpy array")
    if batch_idx.ndim != 1:
        raise ValueError(f"batch_idx must be 1D array, got shape {batch_idx.shape}")
    if batch_idx.shape[0] != data.shape[0]:
        raise ValueError(
            f"batch_idx length ({batch_idx.shape[0]}) must match number of data points ({data.shape[0]})"
        )
    if len(batch_idx) == 0:
        raise ValueError("batch_idx is empty")
    if not np.issubdtype(batch_idx.dtype, np.integer):
        raise ValueError(f"batch_idx must be integers, got dtype {batch_idx.dtype}")
    if batch_idx[0] != 0:
        raise ValueError("Batch indices must start from 0")
    step = np.diff(batch_idx)
    if np.any(step < 0) or np.any(step > 1):
        raise ValueError("Batch indices must be sorted and without gaps (0, 0, 1, 1, 2, ...)")
    change = np.flatnonzero(step) + 1
    return np.concatenate(([0], change, [len(batch_idx)])).astype(np.int64)


def build_balltree_with_offsets(
    data: np.ndarray, batch_offsets: np.ndarray, *, executor: str = "auto"
) -> Tuple[np.ndarray, np.ndarray]:
    """Ball trees of the batches ``data[batch_offsets[i]:batch_offsets[i+1]]``.

    Returns ``(tree_idx, tree_mask)``: per batch ``2^(ceil(log2 n))`` slots (two for a
    batch of one point) of global point indices (intp) and a mask that is False on the
    padding slots, which repeat a point of their leaf.
    """
    return _orrery.build(_host_points(data), _host_offsets(batch_offsets), executor)


def build_balltree_with_idx(
    data: np.ndarray, batch_idx: np.ndarray, *, executor: str = "auto"
) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`build_balltree_with_offsets` with a batch index (sorted, from 0, no gaps)."""
    points = _host_points(data)
    return _orrery.build(points, _offsets_from_idx(points, batch_idx), executor)


def partition_balltree_with_offsets(
    data: np.ndarray, batch_offsets: np.ndarray, target_level: int, *, executor: str = "auto"
) -> np.ndarray:
    """Every batch split ``target_level`` times; the points group after group (intp)."""
    _check_level(target_level)
    _check_host_executor(executor)
    return _orrery.partition(_host_points(data), _host_offsets(batch_offsets), int(target_level))


def partition_balltree_with_idx(
    data: np.ndarray, batch_idx: np.ndarray, target_level: int, *, executor: str = "auto"
) -> np.ndarray:
    """:func:`partition_balltree_with_offsets` with a batch index."""
    _check_level(target_level)
    _check_host_executor(executor)
    points = _host_points(data)
    return _orrery.partition(points, _offsets_from_idx(points, batch_idx), int(target_level))


def _check_level(target_level: Any) -> None:
    if not isinstance(target_level, (int, np.integer)) or isinstance(target_level, bool):
        raise ValueError(f"target_level must be an integer, got {target_level!r}")
    if target_level < 0:
        raise ValueError("Target level must be non-negative")


def _check_host_executor(executor: str) -> None:
    # The partition has only a CPU implementation; any valid executor name is accepted
    # (the work runs on the CPU), an invalid one is an error as everywhere.
    if executor not in ("auto", "cpu", "cuda", "wgpu") and not str(executor).startswith("cuda:"):
        raise ValueError(
            f'executor: {executor!r}: expected "auto", "cpu", "cuda", "cuda:N" or "wgpu"'
        )


# ---- torch tensors -------------------------------------------------------------------


def _torch():
    try:
        import torch
    except ImportError as e:  # pragma: no cover - exercised where torch is missing
        raise RuntimeError("this function takes torch tensors: install torch") from e
    return torch


def _check_tensors(data: Any, batch_idx: Any) -> Any:
    torch = _torch()
    if not isinstance(data, torch.Tensor) or not isinstance(batch_idx, torch.Tensor):
        raise ValueError("Inputs must be PyTorch tensors")
    if data.dim() != 2:
        raise ValueError(f"Data must be 2D tensor, got shape {tuple(data.shape)}")
    if batch_idx.dim() != 1:
        raise ValueError(f"batch_idx must be 1D tensor, got shape {tuple(batch_idx.shape)}")
    if batch_idx.shape[0] != data.shape[0]:
        raise ValueError("batch_idx length must match number of data points")
    if data.device != batch_idx.device:
        raise ValueError(f"data is on {data.device}, batch_idx on {batch_idx.device}")
    return torch


def _tensor_points(data: Any) -> Any:
    torch = _torch()
    if data.dtype not in (torch.float32, torch.float64):
        data = data.double()
    return data.detach().contiguous()


def _device_offsets(torch: Any, batch_idx: Any) -> List[int]:
    """CSR offsets of a batch index on the GPU, with one small transfer (no copy of it):
    the runs of equal values and their lengths. The index is sorted, from 0 and without
    gaps exactly when the runs' values are 0, 1, 2, ..."""
    if batch_idx.numel() == 0:
        raise ValueError("batch_idx is empty")
    if batch_idx.dtype.is_floating_point or batch_idx.dtype == torch.bool:
        raise ValueError(f"batch_idx must be integers, got dtype {batch_idx.dtype}")
    values, counts = torch.unique_consecutive(batch_idx.detach(), return_counts=True)
    runs = torch.cat([values.long(), counts]).tolist()
    b = len(runs) // 2
    values, counts = runs[:b], runs[b:]
    if values[0] != 0:
        raise ValueError("Batch indices must start from 0")
    if values != list(range(b)):
        raise ValueError("Batch indices must be sorted and without gaps (0, 0, 1, 1, 2, ...)")
    return list(itertools.accumulate(counts, initial=0))


def _cuda_device(executor: str, data: Any) -> Optional[int]:
    """The CUDA ordinal the build runs on in place, or None for a host build."""
    if data.device.type != "cuda":
        return None
    if executor == "auto" or executor == "cuda":
        return data.device.index or 0
    if executor.startswith("cuda:"):
        ordinal = int(executor[5:])
        if ordinal != (data.device.index or 0):
            raise ValueError(f"executor {executor!r} but the tensor is on {data.device}")
        return ordinal
    return None


def build_balltree(data: Any, batch_idx: Any, *, executor: str = "auto") -> Tuple[Any, Any]:
    """Ball tree of torch tensors ``data [n, d]`` and ``batch_idx [n]``.

    Returns ``(tree_idx int64, tree_mask bool)`` on ``data``'s device. A CUDA tensor is
    built on its own GPU without leaving it (with ``executor`` "auto" or "cuda").
    """
    torch = _check_tensors(data, batch_idx)
    ordinal = _cuda_device(executor, data)
    points = _tensor_points(data)
    if ordinal is None:
        idx, mask = _orrery.build(
            points.cpu().numpy(),
            np.asarray(_host_idx_offsets(batch_idx), dtype=np.int64),
            "cpu" if executor == "auto" else executor,
        )
        return torch.from_numpy(idx).to(data.device), torch.from_numpy(mask).to(data.device)
    offsets = _device_offsets(torch, batch_idx)
    slots = _orrery.slot_count(offsets)
    stream = _orrery.cuda_stream(ordinal)
    out_idx = torch.empty(slots, dtype=torch.int32, device=data.device)
    out_mask = torch.empty(slots, dtype=torch.int32, device=data.device)
    # One ordering point covers all three tensors: torch's work so far, including any on
    # the memory the outputs reuse, is ordered before orrery's stream by the points'
    # export; the outputs' exports (stream=-1) add no second wait.
    points_capsule = points.__dlpack__(stream=stream)
    _orrery.build_cuda(points_capsule, offsets, out_idx.__dlpack__(stream=-1), out_mask.__dlpack__(stream=-1))
    return out_idx.long(), out_mask.bool()


def _host_idx_offsets(batch_idx: Any) -> np.ndarray:
    bi = batch_idx.detach().cpu().numpy()
    return _offsets_from_idx(bi, bi)


def partition_balltree(data: Any, batch_idx: Any, target_level: int, *, executor: str = "auto") -> Any:
    """Erwin's partition of torch tensors: the point order, group after group (int64,
    on ``data``'s device; computed on the CPU)."""
    torch = _check_tensors(data, batch_idx)
    _check_level(target_level)
    _check_host_executor(executor)
    points = _tensor_points(data).cpu().numpy()
    order = _orrery.partition(points, _host_idx_offsets(batch_idx), int(target_level))
    return torch.from_numpy(order).to(data.device)


def generate_rotation_matrix(angle: float, dim: int, device: Any) -> Any:
    """Erwin's rotation matrix for ``angle`` degrees in 2-D or 3-D (a float32 tensor)."""
    torch = _torch()
    if dim not in (2, 3):
        raise ValueError(f"Unsupported dimension: {dim}")
    m = _orrery.rotation_matrix(float(angle), int(dim))
    return torch.tensor(m, device=device).reshape(dim, dim)


def build_balltree_with_rotations(
    data: Any,
    batch_idx: Any,
    strides: Sequence[int],
    ball_sizes: Sequence[int],
    angle: float = 45.0,
    *,
    executor: str = "auto",
) -> Tuple[Any, Any, List[Optional[Any]]]:
    """The backbone of Erwin's layers, as the reference computes it.

    1. the ball tree of the points (:func:`build_balltree`);
    2. its slots rotated by ``angle`` degrees (``data[tree_idx] @ R``);
    3. per layer, the rotated entries partitioned down to ``ball_sizes[i]`` (the depth
       from the total number of entries, as the reference does);
    4. the entries coarsened by ``strides[i]`` (means) for the next layer.

    Returns ``(tree_idx, tree_mask, [rot_idx_0, ...])``; with ``angle <= 0`` the list
    holds ``None`` for every layer.
    """
    if len(strides) != len(ball_sizes) - 1:
        raise ValueError("Strides must be one less than ball sizes")
    torch = _check_tensors(data, batch_idx)
    dim = data.shape[1]
    num_layers = len(ball_sizes)
    tree_idx, tree_mask = build_balltree(data, batch_idx, executor=executor)
    if angle <= 0:
        return tree_idx, tree_mask, [None] * num_layers
    leaves = data[tree_idx]
    current_batch_idx = batch_idx[tree_idx]
    if any(bs <= 0 for bs in ball_sizes):
        raise ValueError(f"ball sizes must be positive, got {list(ball_sizes)}")
    targets = [max(0, int(math.log2(leaves.shape[0] / bs))) for bs in ball_sizes]
    rotation = generate_rotation_matrix(angle, dim, data.device).to(leaves.dtype)
    rotated = torch.matmul(leaves, rotation)
    rot_indices: List[Optional[Any]] = []
    for i in range(num_layers):
        rot_indices.append(partition_balltree(rotated, current_batch_idx, targets[i]))
        if i < num_layers - 1:
            if rotated.shape[0] % strides[i] != 0:
                raise ValueError(f"stride {strides[i]} does not divide {rotated.shape[0]} entries")
            rotated = rotated.view(-1, strides[i], dim).mean(axis=1)
            current_batch_idx = current_batch_idx[:: strides[i]]
    return tree_idx, tree_mask, rot_indices
