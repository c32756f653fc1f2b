#!/usr/bin/env bash
# One device call that verifies orrery-traverse's GPU code: its test binary's gpu*
# modules (CUDA and wgpu required, one test at a time: the executors are shared), then
# compute-sanitizer memcheck and racecheck on the CUDA cases.
#   bash benches/device/gravity_verify.sh   (device machine, repository root, $OUT set; carry .device, .gl)
set -u
R=$OUT; OUT=/tmp/results; mkdir -p $OUT
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/tests.txt" 2>&1
echo "commit=$ORRERY_COMMIT" >> "$OUT/tests.txt"
t=$(ls .device/bin/traverse-* | head -1)
ORRERY_REQUIRE_CUDA=1 ORRERY_REQUIRE_WGPU=1 timeout 300 "$t" --test-threads=1 gpu > "$OUT/test-traverse.log" 2>&1
echo "traverse gpu tests rc=$? $(grep -E '^test result' "$OUT/test-traverse.log" | tail -1)" >> "$OUT/tests.txt"
grep -E "FAILED|panicked|SKIPPED" "$OUT/test-traverse.log" | head -20 >> "$OUT/tests.txt"
# --report-api-errors no: the executor probes cuFuncGetParamInfo until it fails (an
# expected API error); memory errors and shared-memory hazards are what this checks.
for tool in memcheck racecheck; do
  ORRERY_REQUIRE_CUDA=1 ORRERY_REQUIRE_WGPU=0 timeout ${SAN_TIMEOUT:-240} compute-sanitizer --tool $tool --report-api-errors no \
    --error-exitcode 9 "$t" --test-threads=1 ${SAN_FILTER:-cuda} --skip wgpu > "$OUT/$tool-traverse.log" 2>&1
  echo "$tool traverse rc=$? $(grep -E '^test result' "$OUT/$tool-traverse.log" | tail -1)" >> "$OUT/tests.txt"
  grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|^test .*ok$" "$OUT/$tool-traverse.log" | sort | uniq -c | head -30 >> "$OUT/tests.txt"
done
tar czf "$R/logs.tar.gz" -C /tmp results; cp "$OUT/tests.txt" "$R/"
cat "$OUT/tests.txt"
