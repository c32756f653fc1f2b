#!/usr/bin/env bash
# One device call that verifies orrery-tree-build's GPU code: its test binary's gpu*
# modules (CUDA and wgpu required, one test at a time: the cases record and replay on
# shared executors), then compute-sanitizer memcheck and racecheck on the CUDA cases.
#   bash benches/device/tree_verify.sh   (device machine, repository root, $OUT set; carry .device, .gl)
set -u
R=$OUT; OUT=/tmp/results; mkdir -p $OUT
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/tests.txt" 2>&1
echo "commit=$ORRERY_COMMIT" >> "$OUT/tests.txt"
t=$(ls .device/bin/tree-* | head -1)
ORRERY_REQUIRE_CUDA=1 ORRERY_REQUIRE_WGPU=1 timeout 300 "$t" --test-threads=1 gpu > "$OUT/test-tree.log" 2>&1
echo "tree gpu tests rc=$? $(grep -E '^test result' "$OUT/test-tree.log" | tail -1)" >> "$OUT/tests.txt"
grep -E "FAILED|panicked|SKIPPED" "$OUT/test-tree.log" | head -20 >> "$OUT/tests.txt"
# --report-api-errors no: the executor learns a kernel's parameter count by asking
# cuFuncGetParamInfo for index 0, 1, ... until CUDA_ERROR_INVALID_VALUE, an expected API
# error memcheck would count; memory errors are what this checks. racecheck (shared-memory
# hazards, slow) runs on the cases that launch every kernel once on small inputs.
for tool in memcheck racecheck; do
  if [ $tool = memcheck ]; then filter=${SAN_FILTER:-cuda}; else
    filter=${RACE_FILTER:-"single_kernels hand_made_trees a_device_leaf_count replay_equals_direct"}; fi
  ORRERY_REQUIRE_CUDA=1 ORRERY_REQUIRE_WGPU=0 timeout ${SAN_TIMEOUT:-240} compute-sanitizer --tool $tool --report-api-errors no \
    --error-exitcode 9 "$t" --test-threads=1 $filter --skip wgpu > "$OUT/$tool-tree.log" 2>&1
  echo "$tool tree rc=$? $(grep -E '^test result' "$OUT/$tool-tree.log" | tail -1)" >> "$OUT/tests.txt"
  grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|^test .*ok$" "$OUT/$tool-tree.log" | sort | uniq -c | head -30 >> "$OUT/tests.txt"
done
tar czf "$R/logs.tar.gz" -C /tmp results; cp "$OUT/tests.txt" "$R/"
cat "$OUT/tests.txt"
