#!/usr/bin/env bash
# One device call for the tree-build benchmarks, side by side with Cornerstone on the same
# particles: `orrery-bench tree` on the CPU (all the host's cores), CUDA and wgpu, writing
# every dataset in the peer format with our converged Hilbert leaf array (--peer-files),
# then `cstone_octree_driver` (../shared/peers) on each file with the same box, curve and
# bucket, and a byte comparison of its leaf array with ours.
# Needs the release bundle (`cargo xtask device-bundle` -> .device) and the GL/Vulkan
# loader debs in .gl; the call carries [".device", ".gl", ".peers"].
#   bash benches/device/tree.sh   (on the device machine, from the repository root, $OUT set)
# Env: EXECUTORS (default cpu,cuda,wgpu), BENCH_ARGS (extra orrery-bench arguments),
# PEERS (default .peers: a copy of ../shared/peers/bin/cstone_octree_driver, git-ignored and
# carried, since ../shared does not travel to the device).
# Returns: tree.txt (our table), peer.txt (Cornerstone's phases per set and the leaf-array
# comparison), tree.json, env.txt, logs.tar.gz.
set -u
R=$OUT; OUT=/tmp/results; mkdir -p $OUT
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/env.txt" 2>&1
threads=$(nproc); W=/tmp/treework; mkdir -p $W; P=${PEERS:-.peers}
echo "nproc=$threads commit=$ORRERY_COMMIT" >> "$OUT/env.txt"
timeout 420 .device/bin/orrery-bench tree --executors "${EXECUTORS:-cpu,cuda,wgpu}" --threads "$threads" \
  --peer-files $W --out "$OUT" ${BENCH_ARGS:-} > "$OUT/tree.txt" 2>&1
echo "orrery-bench rc=$?" >> "$OUT/env.txt"
for ours in $W/*-leaves.bin; do
  base=${ours%-leaves.bin}; name=$(basename $base)
  echo "== $name" >> "$OUT/peer.txt"
  timeout 60 $P/cstone_octree_driver $base.bin --box -1 1 --sfc hilbert --bucket 16 --out $base-cs.bin >> "$OUT/peer.txt" 2>&1
  if cmp -s $base-cs.bin $ours; then echo "LEAVES $name identical to Cornerstone" >> "$OUT/peer.txt";
  else echo "LEAVES $name DIFFER from Cornerstone" >> "$OUT/peer.txt"; fi
done
tar czf "$R/logs.tar.gz" -C /tmp results
cp "$OUT/env.txt" "$OUT/tree.txt" "$OUT/peer.txt" "$R/"; cp "$OUT/tree.json" "$R/" 2>/dev/null
cat "$OUT/env.txt"; grep -E "LEAVES|TIME|calls|leaves" "$OUT/peer.txt" | head -80
