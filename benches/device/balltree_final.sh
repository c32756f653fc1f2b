#!/usr/bin/env bash
# One device call closing a CPU change to the ball tree: the keep-warm probe (builds with
# the caller busy between them, spin 0 / 1000 us), the GPU ball-tree tests (they compare
# with the CPU build), the full side-by-side benchmark (balltree.sh), then two more
# CPU-only rounds beside the reference (cpu_rounds.sh). Carry [".device", ".gl", ".whl"]; the probe is
# crates/orrery-balltree/examples/caller_gap.rs, built into .device/probe2/probe2.
#   bash benches/device/balltree_final.sh   (on the device machine, repository root, $OUT set)
set -u
R=$OUT
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
{ .device/probe2/probe2 16; } > "$R/caller_gap.txt" 2>&1
cat "$R/caller_gap.txt"
# orrery-balltree's tests are one binary (balltree-<hash>); its GPU modules run by filter.
f=$(ls .device/bin/balltree-* 2>/dev/null | head -1)
for t in gpu_cuda gpu_wgpu; do
  [ -n "$f" ] && ORRERY_REQUIRE_CUDA=1 ORRERY_REQUIRE_WGPU=1 "$f" $t:: 2>&1 | grep -E "test result|FAILED|panicked" | sed "s/^/$t: /" | tee -a "$R/gpu_tests.txt"
done
OUT=$R bash benches/device/balltree.sh > /tmp/balltree_sh.txt 2>&1
# Two more CPU rounds beside the reference (cpu_rounds.sh, in a scratch folder: it writes
# env.txt too); only its table comes back, as extra.md.
mkdir -p /tmp/rounds; OUT=/tmp/rounds SPINS="1000" bash benches/device/cpu_rounds.sh 2 > /dev/null 2>&1
cp /tmp/rounds/rounds.md "$R/extra.md"
cat "$R/balltree.md" 2>/dev/null
