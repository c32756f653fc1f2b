"""Type stubs of orrery.balltree (the API of balltree-erwin, plus ``executor=``)."""

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

from ._orrery import BallTree as BallTree

def build_balltree_with_offsets(
    data: npt.NDArray[Any], batch_offsets: npt.NDArray[np.integer], *, executor: str = "auto"
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]: ...
def build_balltree_with_idx(
    data: npt.NDArray[Any], batch_idx: npt.NDArray[np.integer], *, executor: str = "auto"
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]: ...
def partition_balltree_with_offsets(
    data: npt.NDArray[Any], batch_offsets: npt.NDArray[np.integer], target_level: int, *, executor: str = "auto"
) -> npt.NDArray[np.int64]: ...
def partition_balltree_with_idx(
    data: npt.NDArray[Any], batch_idx: npt.NDArray[np.integer], target_level: int, *, executor: str = "auto"
) -> npt.NDArray[np.int64]: ...
def build_balltree(data: Any, batch_idx: Any, *, executor: str = "auto") -> Tuple[Any, Any]: ...
def partition_balltree(data: Any, batch_idx: Any, target_level: int, *, executor: str = "auto") -> Any: ...
def generate_rotation_matrix(angle: float, dim: int, device: Any) -> Any: ...
def build_balltree_with_rotations(
    data: Any,
    batch_idx: Any,
    strides: Sequence[int],
    ball_sizes: Sequence[int],
    angle: float = 45.0,
    *,
    executor: str = "auto",
) -> Tuple[Any, Any, List[Optional[Any]]]: ...
