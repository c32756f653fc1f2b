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
for tool in memcheck racecheck; do
  ORRERY_REQUIRE_CUDA=1 timeout ${SAN_TIMEOUT:-150} compute-sanitizer --tool $tool --error-exitcode 9 "$t" --test-threads=1 \
    ${SAN_FILTER:-cuda} > "$OUT/$tool-tree.log" 2>&1
  echo "$tool tree rc=$? $(grep -E '^test result' "$OUT/$tool-tree.log" | tail -1)" >> "$OUT/tests.txt"
  grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|^test .*ok$" "$OUT/$tool-tree.log" | sort | uniq -c | head -30 >> "$OUT/tests.txt"
done
tar czf "$R/logs.tar.gz" -C /tmp results; cp "$OUT/tests.txt" "$R/"
cat "$OUT/tests.txt"
