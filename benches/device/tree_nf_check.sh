#!/usr/bin/env bash
# One device call that verifies and times the NFCount evaluation with lanes per leaf
# (d098555, a9f88ea; docs/performance/tree.md, "NFCount's evaluation spread over a warp"):
# the tree crate's GPU tests (CUDA and wgpu required), memcheck on every CUDA case,
# racecheck on the NFCount single-kernel case, then `orrery-bench tree` on CUDA at 2M and
# 25.6M (every set and variant; the NF rows are the ones to compare with 7b03e91's and
# 4362bbc's JSON).
#   bash benches/device/tree_nf_check.sh   (device machine, repository root, $OUT set;
#   carry .device with bin/tree-tests and bin/orrery-bench, and .gl)
# Returns: verify/tests.txt, the sanitizer logs, cuda/tree.json, cuda.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
T=.device/bin/tree-tests; R=$OUT/verify; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$R/tests.txt" 2>&1
echo "commit=$ORRERY_COMMIT" >> "$R/tests.txt"
ORRERY_REQUIRE_CUDA=1 ORRERY_REQUIRE_WGPU=1 timeout 200 "$T" --test-threads=1 gpu > /tmp/test-tree.log 2>&1
echo "tree gpu tests rc=$? $(grep -E '^test result' /tmp/test-tree.log | tail -1)" >> "$R/tests.txt"
grep -E "FAILED|panicked" /tmp/test-tree.log | head -20 >> "$R/tests.txt"
ORRERY_REQUIRE_CUDA=1 timeout 200 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
  "$T" --test-threads=1 cuda --skip wgpu > "$R/memcheck-tree.log" 2>&1
echo "memcheck rc=$? $(grep -E '^test result' "$R/memcheck-tree.log" | tail -1) $(grep 'ERROR SUMMARY' "$R/memcheck-tree.log" | tail -1)" >> "$R/tests.txt"
ORRERY_REQUIRE_CUDA=1 timeout 120 compute-sanitizer --tool racecheck --report-api-errors no --error-exitcode 9 \
  "$T" --test-threads=1 gpu_nf::cuda::single_kernels > "$R/racecheck-tree.log" 2>&1
echo "racecheck rc=$? $(grep -E '^test result' "$R/racecheck-tree.log" | tail -1) $(grep 'RACECHECK SUMMARY' "$R/racecheck-tree.log" | tail -1)" >> "$R/tests.txt"
cat "$R/tests.txt"
ORRERY_TREE_SIZES=2000000,25600000 timeout 240 .device/bin/orrery-bench tree --executors cuda --repeats 5 --warmup 1 \
  --out "$OUT/cuda" > "$OUT/cuda.txt" 2>&1
echo "orrery-bench rc=$?"
grep -E "octree hilbert NF (scratch|update unchanged|step whole)" "$OUT/cuda.txt"
