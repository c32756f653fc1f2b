#!/usr/bin/env bash
# GPU ball-tree tests on CUDA and Vulkan (every strategy), then the side-by-side benchmark
# (balltree.sh), in one device call: bash benches/device/balltree_check.sh
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=$(mktemp -d)
export ORRERY_REQUIRE_CUDA=1 ORRERY_REQUIRE_WGPU=1 ORRERY_KERNEL_CACHE=/tmp/orrery-kernels
for t in .device/bin/gpu_wgpu-* .device/bin/gpu_cuda-*; do
  timeout 200 "$t" --test-threads=2 2>&1 | grep -E "test result|FAILED|panicked" | sed "s|^|$(basename $t): |"
done > "$OUT/gpu_tests.txt"
cat "$OUT/gpu_tests.txt"
bash benches/device/balltree.sh
