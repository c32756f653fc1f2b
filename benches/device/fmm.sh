#!/usr/bin/env bash
# One device call for the GPU FMM (issue 14, ADR 0020): orrery-traverse's test binary on
# the FMM modules (gpu_fmm: every stage against the CPU, end to end, replay;
# ORRERY_REQUIRE_CUDA=1 and ORRERY_REQUIRE_WGPU=1, so a missing device fails), the same
# tests under compute-sanitizer memcheck and racecheck (the CUDA ones), the NVRTC compile
# of every module (gpu_direct's compile test covers traverse/fmm and traverse/fmm_p2p),
# then `orrery-bench fmm` on CUDA and wgpu (and the CPU at 100K).
# Bundle here (release, stripped), then carry [".device", ".gl"]:
#   cargo xtask device-bundle --only traverse      # -> .device/bin/traverse-<hash>, orrery-bench
#   bash benches/device/fmm.sh                     # on the device machine, repository root, $OUT set
# --report-api-errors no: the executor probes cuFuncGetParamInfo until it fails (how it
# counts a kernel's parameters): an API error by design, not a memory error.
# Env: BENCH=0 skips the benchmark; BENCH_ARGS (extra orrery-bench arguments, e.g.
# "--quick" or "--repeats 3 --warmup 1"); BENCH_TIMEOUT (default 420 s); CPU=0 skips the
# CPU bench run.
# Returns: fmm-tests.txt (tests and sanitizers), fmm.txt / fmm.json (GPU bench),
# fmm-cpu.txt / fmm-cpu.json, env.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/env.txt" 2>&1
echo "nproc=$(nproc) commit=$ORRERY_COMMIT" >> "$OUT/env.txt"
t=$(ls .device/bin/traverse-* | head -1)
{
  echo "== traverse gpu_fmm tests (commit $ORRERY_COMMIT, $t)"
  ORRERY_REQUIRE_CUDA=1 ORRERY_REQUIRE_WGPU=1 timeout 200 $t gpu_fmm 2>&1 | tail -40; echo "rc=${PIPESTATUS[0]}"
  echo "== NVRTC compiles of every traverse module"
  ORRERY_REQUIRE_CUDA=1 timeout 100 $t compile 2>&1 | tail -8; echo "rc=${PIPESTATUS[0]}"
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer $tool (gpu_fmm::cuda)"
    ORRERY_REQUIRE_CUDA=1 timeout 400 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 \
      $t gpu_fmm::cuda 2>&1 | tail -30; echo "rc=${PIPESTATUS[0]}"
  done
} > "$OUT/fmm-tests.txt" 2>&1
cat "$OUT/fmm-tests.txt"
if [ "${BENCH:-1}" = 1 ]; then
  timeout ${BENCH_TIMEOUT:-420} .device/bin/orrery-bench fmm --executors cuda,wgpu --threads "$(nproc)" \
    --warmup 1 --repeats 3 --out "$OUT" ${BENCH_ARGS:-} > "$OUT/fmm.txt" 2>&1
  echo "orrery-bench fmm gpu rc=$?" >> "$OUT/env.txt"
  if [ "${CPU:-1}" = 1 ]; then
    mkdir -p /tmp/fmm-cpu
    timeout ${CPU_TIMEOUT:-300} .device/bin/orrery-bench fmm --executors cpu --threads "$(nproc)" --warmup 1 --repeats 3 \
      --out /tmp/fmm-cpu > "$OUT/fmm-cpu.txt" 2>&1
    echo "orrery-bench fmm cpu rc=$?" >> "$OUT/env.txt"
    cp /tmp/fmm-cpu/fmm.json "$OUT/fmm-cpu.json" 2>/dev/null
  fi
  tail -60 "$OUT/fmm.txt"
fi
cat "$OUT/env.txt"
