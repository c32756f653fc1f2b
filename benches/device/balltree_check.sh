#!/usr/bin/env bash
# GPU ball-tree tests on CUDA and Vulkan (every strategy), then the side-by-side benchmark
# (balltree.sh), in one device call: bash benches/device/balltree_check.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
export ORRERY_REQUIRE_CUDA=1 ORRERY_REQUIRE_WGPU=1
# orrery-balltree's tests are one binary (balltree-<hash>); its GPU modules run by filter.
bt=$(ls .device/bin/balltree-* | head -1)
for m in gpu_wgpu gpu_cuda; do
  timeout 200 "$bt" --test-threads=2 $m:: 2>&1 | grep -E "test result|FAILED|panicked" | sed "s|^|$m: |"
done > "$OUT/gpu_tests.txt"
cat "$OUT/gpu_tests.txt"
bash benches/device/balltree.sh
