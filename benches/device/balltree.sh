#!/usr/bin/env bash
# One device call for the ball-tree benchmarks: `orrery-bench balltree` on the CPU (all
# the host's cores), CUDA and wgpu (the H200's Vulkan driver), with Erwin's reference
# `balltree-erwin` (carried wheel, OpenMP on the same cores) as the peer, all in one run.
# Needs the release bundle (`cargo xtask device-bundle` -> .device), the GL/Vulkan loader
# debs in .gl and the wheel in .whl (built as benches/python/balltree_peer.py's header
# says); the call carries [".device", ".gl", ".whl"].
#   bash benches/device/balltree.sh   (on the device machine, from the repository root, $OUT set)
# Returns: balltree.md (side-by-side medians), balltree.json, balltree.txt (the full
# table and stderr), env.txt, logs.tar.gz (everything, with the SVG).
set -u
R=$OUT; OUT=/tmp/results; mkdir -p $OUT   # the device returns at most 8 files: pack the logs
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/env.txt" 2>&1
threads=$(nproc)
echo "nproc=$threads commit=$ORRERY_COMMIT $(python3 --version 2>&1)" >> "$OUT/env.txt"
. "$(dirname "${BASH_SOURCE[0]}")/reference.sh"
timeout 540 .device/bin/orrery-bench balltree --executors cpu,cuda,wgpu --threads "$threads" \
  --peer benches/python/balltree_peer.py --out "$OUT" > "$OUT/balltree.txt" 2>&1
echo "orrery-bench rc=$?" >> "$OUT/env.txt"
tar czf "$R/logs.tar.gz" -C /tmp results
cp "$OUT/env.txt" "$OUT/balltree.txt" "$R/"; cp "$OUT/balltree.json" "$OUT/balltree.md" "$R/" 2>/dev/null
cat "$OUT/env.txt"; cat "$OUT/balltree.md" 2>/dev/null || tail -40 "$OUT/balltree.txt"
