#!/usr/bin/env bash
# The Python package's tests, as CI runs them (.ci/run calls this after the Rust tests):
# a virtual environment in target/python-venv with maturin, pytest, numpy and Erwin's
# reference balltree-erwin (from PyPI; its sdist builds with g++ and OpenMP), the wheel
# of this crate built by maturin into it (the dev profile, which reuses the Rust test
# build's artefacts), then pytest.
#
# The reference imports torch at module level but its numpy functions, the ones the
# parity tests call, never use it; PyPI has only the multi-gigabyte CUDA build of torch,
# so where no torch is installed tests/conftest.py puts a stub on the path for that
# import (tests/torch_stub) and the torch tests skip, saying so. Where torch is installed
# (the H200 machine) they run.
#   bash crates/orrery-python/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=target/python-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "maturin>=1.9.4,<2" pytest numpy
"$venv/bin/python" -c "import balltree" 2>/dev/null || \
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps balltree-erwin==0.1.0
rm -rf target/python-wheels
(cd crates/orrery-python && "../../$venv/bin/maturin" build --profile dev -o ../../target/python-wheels)
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps target/python-wheels/orrery-*.whl
"$venv/bin/python" -m pytest -q -rs crates/orrery-python/tests "$@"
