#!/usr/bin/env bash
# The GPU FMM on the device (issue 14, ADR 0020), in stages that each fit one device call
# of at most ten minutes (STAGE=tests, sanitizers, bench, cpu; default: all, which may
# not fit):
#   tests       orrery-traverse's test binary on gpu_fmm (every stage against the CPU,
#               bit-equal expansions, end to end, replay, the wgpu near field;
#               ORRERY_REQUIRE_CUDA=1 ORRERY_REQUIRE_WGPU=1: a missing device fails) and the
#               NVRTC compile tests of every traverse module (~1 min)
#   sanitizers  compute-sanitizer memcheck on gpu_fmm::cuda (every CUDA test), racecheck on
#               gpu_fmm::cuda_fmm_small (the small trees, both translation shapes:
#               racecheck tracks every shared access between the block shape's ten
#               __syncthreads and the warp shape's nine __syncwarp per translation)
#   bench       orrery-bench fmm on CUDA and wgpu (ORRERY_FMM_SIZES, default
#               1000000,4000000: 10M needs its own call, ORRERY_FMM_SIZES=10000000)
#   cpu         orrery-bench fmm on the host CPU (100K)
# Bundle here (release, stripped), then carry [".device", ".gl"]:
#   cargo xtask device-bundle --only traverse      # -> .device/bin/traverse-<hash>, orrery-bench
#   STAGE=tests bash benches/device/fmm.sh         # on the device machine, repository root, $OUT set
# --report-api-errors no: the executor probes cuFuncGetParamInfo until it fails (how it
# counts a kernel's parameters): an API error by design, not a memory error.
# Env: STAGE (above), BENCH_ARGS (extra orrery-bench arguments; default --warmup 1
# --repeats 3), BENCH_TIMEOUT (default 540 s), ORRERY_FMM_SIZES.
# Returns: fmm-tests.txt, fmm-sanitizers.txt, fmm.txt + fmm.json (GPU), fmm-cpu.txt +
# fmm-cpu.json, env.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
stage=${STAGE:-tests sanitizers bench cpu}
want() { case " $stage " in *" $1 "*) return 0;; esac; return 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/env.txt" 2>&1
echo "nproc=$(nproc) commit=$ORRERY_COMMIT stage=$stage" >> "$OUT/env.txt"
t=$(ls .device/bin/traverse-* | head -1)
if want tests; then
  {
    echo "== traverse gpu_fmm tests (commit $ORRERY_COMMIT, $t)"
    ORRERY_REQUIRE_CUDA=1 ORRERY_REQUIRE_WGPU=1 timeout 300 $t gpu_fmm 2>&1 | tail -40; echo "rc=${PIPESTATUS[0]}"
    echo "== NVRTC compiles of every traverse module"
    ORRERY_REQUIRE_CUDA=1 timeout 120 $t compile 2>&1 | tail -8; echo "rc=${PIPESTATUS[0]}"
  } > "$OUT/fmm-tests.txt" 2>&1
  cat "$OUT/fmm-tests.txt"
fi
if want sanitizers; then
  {
    echo "== compute-sanitizer memcheck (gpu_fmm::cuda, commit $ORRERY_COMMIT)"
    ORRERY_REQUIRE_CUDA=1 timeout 300 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
      $t gpu_fmm::cuda 2>&1 | tail -30; echo "rc=${PIPESTATUS[0]}"
    echo "== compute-sanitizer racecheck (gpu_fmm::cuda_fmm_small)"
    ORRERY_REQUIRE_CUDA=1 timeout 240 compute-sanitizer --tool racecheck --report-api-errors no --error-exitcode 9 \
      $t gpu_fmm::cuda_fmm_small 2>&1 | tail -30; echo "rc=${PIPESTATUS[0]}"
  } > "$OUT/fmm-sanitizers.txt" 2>&1
  cat "$OUT/fmm-sanitizers.txt"
fi
if want bench; then
  ORRERY_FMM_SIZES=${ORRERY_FMM_SIZES:-1000000,4000000} timeout ${BENCH_TIMEOUT:-540} .device/bin/orrery-bench fmm \
    --executors cuda,wgpu --threads "$(nproc)" ${BENCH_ARGS:---warmup 1 --repeats 3} --out "$OUT" > "$OUT/fmm.txt" 2>&1
  echo "orrery-bench fmm gpu rc=$?" >> "$OUT/env.txt"
  tail -60 "$OUT/fmm.txt"
fi
if want cpu; then
  mkdir -p /tmp/fmm-cpu
  timeout ${BENCH_TIMEOUT:-540} .device/bin/orrery-bench fmm --executors cpu --threads "$(nproc)" --warmup 1 --repeats 3 \
    --out /tmp/fmm-cpu > "$OUT/fmm-cpu.txt" 2>&1
  echo "orrery-bench fmm cpu rc=$?" >> "$OUT/env.txt"
  cp /tmp/fmm-cpu/fmm.json "$OUT/fmm-cpu.json" 2>/dev/null
  tail -40 "$OUT/fmm-cpu.txt"
fi
cat "$OUT/env.txt"
