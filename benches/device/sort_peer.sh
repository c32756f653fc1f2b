#!/usr/bin/env bash
# One device call for issue 18's "CUDA sort at CUB's speed": `orrery-bench sort-peer` on
# CUDA (and the other executors named in EXECUTORS) writes the 2M and 25.6M uniform sets
# in the peer format (--peer-files) and sorts their Hilbert keys; then
# `cstone_octree_driver` (CUB's DeviceRadixSort::SortPairs inside Cornerstone) runs on the
# same files with the same box and curve, and its "sort keys" phase is printed beside ours.
# Needs the release bundle in .device (BIN, default .device/bin) and the driver in .peers
# (a copy of ../shared/peers/bin/cstone_octree_driver; ../shared does not travel).
#   bash benches/device/sort_peer.sh   (on the device machine, from the repository root, $OUT set)
# Env: EXECUTORS (default cuda), BIN, PEERS (default .peers), TAG (file prefix, default sort-peer).
# Returns: $OUT/$TAG.json (our records) and $OUT/$TAG.txt (our table and the peer's phases).
set -u
B=${BIN:-.device/bin}; P=${PEERS:-.peers}; T=${TAG:-sort-peer}; W=/tmp/sortpeer; mkdir -p $W /tmp/$T
timeout 300 $B/orrery-bench sort-peer --executors "${EXECUTORS:-cuda}" --peer-files $W --out /tmp/$T > "$OUT/$T.txt" 2>&1
echo "orrery-bench rc=$?" >> "$OUT/$T.txt"
cp /tmp/$T/sort-peer.json "$OUT/$T.json" 2>/dev/null
for f in $W/sort-uniform-*.bin; do
  echo "== peer $(basename $f)" >> "$OUT/$T.txt"
  timeout 120 $P/cstone_octree_driver $f --box -1 1 --sfc hilbert --bucket 16 --out $W/cs-leaves.bin 2>&1 \
    | grep -E "numParticles|sfc keys|sort keys|GPU|device" >> "$OUT/$T.txt"
done
