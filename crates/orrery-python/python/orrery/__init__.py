"""orrery: spatial trees for particles on GPUs.

``orrery.balltree`` is a drop-in for the ``balltree-erwin`` package that the Erwin
transformer calls: replace ``import balltree`` by ``from orrery import balltree``.
It builds on the CPU (rayon, every core, also inside one batch), on CUDA (a torch CUDA
tensor is built on its own device, taken through DLPack with no host round trip) and on
wgpu, from float32 or float64 input.
"""

from . import balltree
from ._orrery import __version__, executors_available

__all__ = ["balltree", "executors_available", "__version__"]
