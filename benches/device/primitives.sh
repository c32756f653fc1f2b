#!/usr/bin/env bash
# One device call for the GPU executors issue: every test binary of the bundle
# (ORRERY_REQUIRE_CUDA=1, ORRERY_REQUIRE_WGPU=1 on the H200's Vulkan driver), the CUDA
# conformance suite under compute-sanitizer memcheck and racecheck, the primitives and
# keys suites on every executor with torch (CUB) beside them, and a sweep of scan shapes.
#   bash benches/device/primitives.sh   (on the device machine, $OUT set; bundle in .device)
set -u
R=$OUT; OUT=/tmp/results; mkdir -p $OUT   # the device returns at most 8 files: pack the logs
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
OUT=$OUT bash .device/run.sh > "$OUT/tests.txt" 2>&1
b=.device/bin
conf=$(ls $b/cuda-* | head -1)
ORRERY_TEST_MAX_N=5000 timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 "$conf" --test-threads=4 \
  --skip user_kernels_launch_through_gpu_executor > "$OUT/memcheck.log" 2>&1; echo "memcheck rc=$?" >> "$OUT/tests.txt"
ORRERY_TEST_MAX_N=4097 timeout 240 compute-sanitizer --tool racecheck --error-exitcode 9 "$conf" --test-threads=1 \
  sort_pairs_matches sort_pairs_is_stable exclusive_scan compaction_matches integer_reductions float_reductions \
  sfc_keys_match fill_iota > "$OUT/racecheck.log" 2>&1; echo "racecheck rc=$?" >> "$OUT/tests.txt"
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/memcheck.log" "$OUT/racecheck.log" >> "$OUT/tests.txt"
$b/orrery-bench primitives --executors cuda,wgpu --peer benches/python/peers.py --out "$OUT" > "$OUT/primitives.txt" 2>&1
$b/orrery-bench keys --executors cpu,cuda,wgpu --out "$OUT" > "$OUT/keys.txt" 2>&1
for p in scan_min_blocks=4 scan_vecs=6,scan_min_blocks=4 scan_threads=512,scan_vecs=4,scan_min_blocks=2 scan_vecs=12; do
  ORRERY_CUDA_POLICY=$p $b/orrery-bench primitives --executors cuda --out /tmp/sweep 2>&1 | grep -E "exclusive_scan|copy" | sed "s/^/$p /" >> "$OUT/scan_sweep.txt"
done
tar czf "$R/logs.tar.gz" -C /tmp results; cp "$OUT/tests.txt" "$OUT/primitives.json" "$OUT/keys.json" "$OUT/scan_sweep.txt" "$R/"
cat "$OUT/tests.txt"; grep -v "^$" "$OUT/primitives.txt" | tail -30; tail -8 "$OUT/keys.txt"; cat "$OUT/scan_sweep.txt"
