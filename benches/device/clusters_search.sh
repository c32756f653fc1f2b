#!/usr/bin/env bash
# The inverted file, the lattice and the fused search on the device (issue 16,
# kernels/clusters/probe.cu): the clusters test binary's GPU cases (ORRERY_REQUIRE_CUDA=1:
# a missing device fails), compute-sanitizer memcheck over gpu_search::cuda and racecheck
# over its small case, then `orrery-bench clusters` on CUDA (exact k-NN, IVF and lattice
# rows of the same run). Bundle: .device/bin/clusters-tests and .device/bin/orrery-bench
# (release, stripped), .device/COMMIT; carry [".device", ".gl"].
#   STAGE="tests sanitizers bench" bash benches/device/clusters_search.sh   ($OUT set)
# --report-api-errors no: the executor probes cuFuncGetParamInfo until it fails (how it
# counts a kernel's parameters): an API error by design, not a memory error.
# Returns: clusters-search-tests.txt, clusters-search-sanitizers.txt, clusters.txt +
# clusters.json, env.txt.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
stage=${STAGE:-tests sanitizers bench}
want() { case " $stage " in *" $1 "*) return 0;; esac; return 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/env.txt" 2>&1
echo "nproc=$(nproc) commit=$ORRERY_COMMIT stage=$stage" >> "$OUT/env.txt"
k=.device/bin/clusters-tests
S="compute-sanitizer --report-api-errors no --error-exitcode 9 --print-limit 20"
if want tests; then
  {
    echo "== clusters GPU tests (commit $ORRERY_COMMIT)"
    ORRERY_REQUIRE_CUDA=1 timeout 240 $k gpu 2>&1 | grep -E -A3 "^test |test result|panicked|SKIP" | tail -120
    echo "rc=${PIPESTATUS[0]}"
    c=$(ls .device/bin/cuda-* 2>/dev/null | head -1)
    if [ -n "$c" ]; then
      echo "== cuda backend: shared memory opt-in"
      ORRERY_REQUIRE_CUDA=1 timeout 60 $c shared_memory 2>&1 | grep -E -A3 "^test |test result|panicked"; echo "rc=${PIPESTATUS[0]}"
    fi
  } > "$OUT/clusters-search-tests.txt" 2>&1
  cat "$OUT/clusters-search-tests.txt" | tail -45
fi
if want sanitizers; then
  {
    echo "== memcheck gpu_search::cuda (commit $ORRERY_COMMIT)"
    ORRERY_REQUIRE_CUDA=1 ORRERY_CUDA_LINEINFO=1 timeout 240 $S --tool memcheck $k gpu_search::cuda --test-threads=1 2>&1 | tail -12
    echo "rc=${PIPESTATUS[0]}"
    echo "== racecheck gpu_search::cuda::small_searches_for_the_sanitizers"
    ORRERY_REQUIRE_CUDA=1 ORRERY_CUDA_LINEINFO=1 timeout 200 $S --tool racecheck $k gpu_search::cuda::small --test-threads=1 2>&1 | tail -12
    echo "rc=${PIPESTATUS[0]}"
  } > "$OUT/clusters-search-sanitizers.txt" 2>&1
  cat "$OUT/clusters-search-sanitizers.txt"
fi
if want bench; then
  timeout ${BENCH_TIMEOUT:-400} .device/bin/orrery-bench clusters --executors ${EXECUTORS:-cpu,cuda} --peer benches/python/clusters_peer.py --threads "$(nproc)" \
    ${BENCH_ARGS:---warmup 1 --repeats 5} --out "$OUT" > "$OUT/clusters.txt" 2>&1
  echo "orrery-bench clusters rc=$?" >> "$OUT/env.txt"
  grep -E "ivf|lattice|knn" "$OUT/clusters.txt" | tail -40
fi
cat "$OUT/env.txt"
