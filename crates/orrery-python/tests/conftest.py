"""pytest setup: the reference package's import, and what each test may use.

- ``reference``: the ``balltree`` module of balltree-erwin (installed from PyPI by
  .ci/run); without it the parity tests fail, unless ORRERY_ALLOW_NO_REFERENCE=1.
- ``torch``: the real torch where installed (the H200 machine); otherwise a stub is
  put on the path so the reference imports (see torch_stub/), and the torch tests skip.
"""

import os
import sys

import pytest

HERE = os.path.dirname(__file__)

try:
    import torch  # noqa: F401

    REAL_TORCH = not getattr(torch, "__orrery_stub__", False)
except ImportError:
    sys.path.insert(0, os.path.join(HERE, "torch_stub"))
    REAL_TORCH = False


def real_torch():
    """The real torch module, or a pytest skip that says why."""
    if not REAL_TORCH:
        pytest.skip("skipped: torch is not installed here (CI has only the stub); the H200 run covers it")
    import torch

    return torch


@pytest.fixture(scope="session")
def reference():
    try:
        import balltree
    except ImportError as e:
        if os.environ.get("ORRERY_ALLOW_NO_REFERENCE") == "1":
            pytest.skip(f"skipped: balltree-erwin is not installed ({e})")
        raise
    return balltree
