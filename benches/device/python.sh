#!/usr/bin/env bash
# One device call for the Python package (issue 17): the CUDA executor's external-memory
# tests (plain and under compute-sanitizer), the pytest suite with the machine's real torch
# and CUDA, the CUDA-tensor tests under compute-sanitizer, and the Python benchmark
# (benches/python/python_bench.py: orrery.balltree against balltree-erwin through the
# same calls, and the Python path against the Rust-side timing of the same GPU build).
# Carries [".device", ".whl"]: .device/wheels/orrery-*.whl (maturin build --release),
# .device/cuda-tests (cargo test --release -p orrery-backend-cuda --no-run), .device/COMMIT,
# and .whl/balltree_erwin-*.whl (built as benches/python/balltree_peer.py says).
#   bash benches/device/python.sh   (on the device machine, from the repository root, $OUT set)
# --report-api-errors no: the executor probes cuFuncGetParamInfo until it fails (how it
# counts a kernel's parameters): an API error by design, not a memory error.
set -u
R=$OUT; OUT=/tmp/results; mkdir -p $OUT   # the device returns at most 8 files: pack the logs
export PYTHONUNBUFFERED=1 XDG_RUNTIME_DIR=$(mktemp -d) ORRERY_KERNEL_CACHE=/tmp/orrery-kernels
export ORRERY_COMMIT=$(cat .device/COMMIT) PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/env.txt" 2>&1
echo "nproc=$(nproc) commit=$ORRERY_COMMIT $(python3 --version 2>&1)" >> "$OUT/env.txt"
. "$(dirname "${BASH_SOURCE[0]}")/reference.sh"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  .device/wheels/orrery-*.whl >> "$OUT/env.txt" 2>&1
python3 -c "import orrery; print('orrery', orrery.__version__, orrery.__file__, orrery.executors_available())" >> "$OUT/env.txt" 2>&1
{
  echo "== cuda tests: external"
  ORRERY_REQUIRE_CUDA=1 timeout 60 .device/cuda-tests external 2>&1; echo "rc=$?"
  echo "== compute-sanitizer memcheck: external"
  ORRERY_REQUIRE_CUDA=1 timeout 90 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 .device/cuda-tests external 2>&1 | tail -15; echo "rc=${PIPESTATUS[0]}"
} > "$OUT/cuda.txt" 2>&1
echo "== pytest" > "$OUT/pytest.txt"
timeout 150 python3 -m pytest -q -rs crates/orrery-python/tests >> "$OUT/pytest.txt" 2>&1; echo "pytest rc=$?" >> "$OUT/pytest.txt"
timeout 200 python3 benches/python/python_bench.py --out "$OUT" --threads "$(nproc)" > "$OUT/bench.txt" 2>&1
echo "bench rc=$?" >> "$OUT/bench.txt"
timeout 60 python3 benches/python/python_profile.py > "$OUT/profile.txt" 2>&1; echo "profile rc=$?" >> "$OUT/profile.txt"
for tool in memcheck racecheck; do
  echo "== compute-sanitizer $tool: CUDA-tensor tests" >> "$OUT/pytest.txt"
  timeout 100 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 --target-processes all \
    python3 -m pytest -q -x crates/orrery-python/tests/test_torch.py -k "cuda and not bad" >> "$OUT/pytest.txt" 2>&1
  echo "sanitizer $tool rc=$?" >> "$OUT/pytest.txt"
done
tar czf "$R/logs.tar.gz" -C /tmp results
cp "$OUT/env.txt" "$OUT/cuda.txt" "$OUT/pytest.txt" "$OUT/bench.txt" "$OUT/profile.txt" "$R/"; cp "$OUT/python.json" "$R/" 2>/dev/null
cat "$OUT/env.txt" "$OUT/cuda.txt"; tail -25 "$OUT/pytest.txt"; cat "$OUT/bench.txt" "$OUT/profile.txt"
