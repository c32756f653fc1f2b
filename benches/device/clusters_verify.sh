#!/usr/bin/env bash
# orrery-clusters' GPU kernels on the device: the crate's test binary (GPU against the CPU
# reference, ORRERY_REQUIRE_CUDA=1) plain and under compute-sanitizer memcheck and
# racecheck. Carries .device/clusters-tests (cargo test --release -p orrery-clusters --no-run).
#   bash benches/device/clusters_verify.sh   (on the device machine, from the repository root, $OUT set)
# --report-api-errors no: the executor probes cuFuncGetParamInfo until it fails (how it
# counts a kernel's parameters): an API error by design, not a memory error.
set -u
export XDG_RUNTIME_DIR=$(mktemp -d) ORRERY_KERNEL_CACHE=/tmp/orrery-kernels PATH=$PATH:/usr/local/cuda/bin
{
  echo "== clusters tests (commit $(cat .device/COMMIT))"
  ORRERY_REQUIRE_CUDA=1 timeout 150 .device/clusters-tests gpu:: 2>&1; echo "rc=$?"
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer $tool"
    ORRERY_REQUIRE_CUDA=1 timeout 150 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 \
      .device/clusters-tests gpu::cuda 2>&1 | tail -25; echo "rc=${PIPESTATUS[0]}"
  done
} > "$OUT/clusters.txt" 2>&1
cat "$OUT/clusters.txt"
