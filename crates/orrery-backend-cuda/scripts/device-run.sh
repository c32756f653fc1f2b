#!/bin/bash
# Runs the CUDA test and benchmark binaries on a GPU machine and writes logs to an
# output folder. Usage: device-run.sh <folder with the cuda test binary> <out>
# The binaries come from `cargo test --release -p orrery-backend-cuda --no-run`.
set -o pipefail
B=$(cd "$1" && pwd); O=$2; HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$O"
export PATH=$PATH:/usr/local/cuda/bin ORRERY_REQUIRE_CUDA=1 ORRERY_KERNEL_CACHE=/tmp/orrery-kernels
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$O/gpu.txt" 2>&1
echo "== compile" | tee "$O/tests.log"
timeout 120 "$B/cuda" compile:: 2>&1 | tee -a "$O/tests.log"
echo "== conformance" | tee -a "$O/tests.log"
timeout 240 "$B/cuda" conformance:: 2>&1 | tee -a "$O/tests.log"
echo "== bench" | tee "$O/bench.log"
timeout 240 "$B/cuda" bench:: --ignored --nocapture 2>&1 | tee -a "$O/bench.log"
echo "== torch" | tee "$O/torch.log"
[ -n "$SKIP_TORCH" ] || timeout 120 python3 "$HERE/torch_sort.py" 2>&1 | tee -a "$O/torch.log"
# The GPU-launch test asks for a missing entry point on purpose, and every function's
# parameter table is read by asking cuFuncGetParamInfo for one index past the last
# (CUDA_ERROR_INVALID_VALUE ends the walk): API errors by design, so memcheck reports
# device memory errors only (--report-api-errors no).
echo "== memcheck" | tee "$O/memcheck.log"
ORRERY_TEST_MAX_N=5000 timeout 300 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 "$B/cuda" conformance:: \
  --test-threads=4 --skip many_scans_in_a_row >> "$O/memcheck.log" 2>&1
echo "exit $?" >> "$O/memcheck.log"
echo "== racecheck" | tee "$O/racecheck.log"
ORRERY_TEST_MAX_N=4097 timeout 300 compute-sanitizer --tool racecheck --error-exitcode 9 "$B/cuda" conformance:: --test-threads=1 \
  sort_pairs_matches sort_pairs_is_stable exclusive_scan_matches compaction_matches integer_reductions float_reductions \
  sfc_keys_match_cpu_bit_for_bit_f32 other_launch_shapes counted_scans primitives_on_views a_recorded_sequence \
  twelve_and_forty epoch_wrap >> "$O/racecheck.log" 2>&1
echo "exit $?" >> "$O/racecheck.log"
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|^exit|^test result" "$O/memcheck.log" "$O/racecheck.log"
grep -h -E "^test result|FAILED|panicked" "$O/tests.log"
grep -h -E "^bench|^torch|^startup" "$O/bench.log" "$O/torch.log"
