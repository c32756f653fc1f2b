#!/usr/bin/env bash
# One device call that verifies a release bundle (`cargo xtask device-bundle`): every
# test binary with GPUs required, compute-sanitizer on the CUDA conformance suite and on
# the ball-tree GPU build, the primitives suite on CUDA (torch beside it; SKIP_PRIMITIVES=1
# skips it), and the ball tree timings.   bash benches/device/verify.sh   (on the device machine, $OUT set)
set -u
R=$OUT; OUT=/tmp/results; mkdir -p $OUT   # the device returns at most 8 files: pack the logs
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
OUT=$OUT bash .device/run.sh > "$OUT/tests.txt" 2>&1
b=.device/bin
# Timings first: in a call that had just run compute-sanitizer every timing (launch-bound
# ones most) came out 1.4-2.5x slower than on the same machine a minute later.
# orrery-balltree's tests are one binary (balltree-<hash>): tests are named module::case.
conf=$(ls $b/cuda-* | head -1); bt=$(ls $b/balltree-* | head -1)
ORRERY_BENCH_OUT=$OUT timeout 180 "$bt" --ignored --exact gpu_bench::bench_gpu_build --nocapture > "$OUT/balltree.txt" 2>&1
ORRERY_TEST_MAX_N=5000 timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 "$conf" --test-threads=4 \
  --skip user_kernels_launch_through_gpu_executor > "$OUT/memcheck.log" 2>&1; echo "memcheck conformance rc=$?" >> "$OUT/tests.txt"
ORRERY_TEST_MAX_N=4097 timeout 240 compute-sanitizer --tool racecheck --error-exitcode 9 "$conf" --test-threads=1 \
  sort_pairs_matches sort_pairs_is_stable exclusive_scan compaction_matches integer_reductions float_reductions \
  sfc_keys_match fill_iota > "$OUT/racecheck.log" 2>&1; echo "racecheck conformance rc=$?" >> "$OUT/tests.txt"
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 "$bt" --exact gpu_cuda::sanitizer_small_case --test-threads=1 \
    > "$OUT/$tool-balltree.log" 2>&1; echo "$tool balltree rc=$?" >> "$OUT/tests.txt"
done
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT"/memcheck*.log "$OUT"/racecheck*.log >> "$OUT/tests.txt"
[ "${SKIP_PRIMITIVES:-0}" = 1 ] || $b/orrery-bench primitives --executors cuda --peer benches/python/peers.py --out "$OUT" > "$OUT/primitives.txt" 2>&1
tar czf "$R/logs.tar.gz" -C /tmp results; cp "$OUT/tests.txt" "$OUT/balltree.txt" "$R/"; cp "$OUT/primitives.txt" "$R/" 2>/dev/null
cat "$OUT/tests.txt"; grep -E "exclusive|copy|sort|keys" "$OUT/primitives.txt"; grep "^|" "$OUT/balltree.txt"
