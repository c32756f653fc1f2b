#!/usr/bin/env bash
# One device call closing a CPU change to the ball tree: the keep-warm probe (builds with
# the caller busy between them, spin 0 / 1000 us), the GPU ball-tree tests (they compare
# with the CPU build), the full side-by-side benchmark (balltree.sh), then two more
# CPU-only rounds beside the reference. Carry [".device", ".gl", ".whl"]; the probe is
# crates/orrery-balltree/examples/caller_gap.rs, built into .device/probe2/probe2.
#   bash benches/device/balltree_final.sh   (on the device machine, repository root, $OUT set)
set -u
R=$OUT
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
{ .device/probe2/probe2 16; } > "$R/caller_gap.txt" 2>&1
cat "$R/caller_gap.txt"
for t in gpu_cuda gpu_wgpu; do
  f=$(ls .device/bin/$t-* 2>/dev/null | head -1)
  [ -n "$f" ] && ORRERY_REQUIRE_CUDA=1 ORRERY_REQUIRE_WGPU=1 "$f" 2>&1 | grep -E "test result|FAILED|panicked" | sed "s/^/$t: /" | tee -a "$R/gpu_tests.txt"
done
OUT=$R bash benches/device/balltree.sh > /tmp/balltree_sh.txt 2>&1
mkdir -p /tmp/extra
for r in 1 2; do
  for us in 0 1000; do
    timeout 200 .device/bin/orrery-bench balltree --executors cpu --threads 16 --cpu-spin-us $us --repeats 20 \
      --out /tmp/extra/r$r-spin$us > /tmp/extra/r$r-spin$us.txt 2>&1
    { echo "## r$r spin $us"; cat /tmp/extra/r$r-spin$us/balltree.md; } >> "$R/extra.md"
  done
  timeout 200 .device/bin/orrery-bench balltree --executors none --threads 16 --repeats 20 \
    --peer benches/python/balltree_peer.py --out /tmp/extra/r$r-peer > /tmp/extra/r$r-peer.txt 2>&1
  { echo "## r$r peer"; cat /tmp/extra/r$r-peer/balltree.md; } >> "$R/extra.md"
done
cat "$R/balltree.md" 2>/dev/null
