#!/usr/bin/env bash
# One device call: the CPU ball-tree build beside the reference `balltree-erwin` on the
# same cores, in interleaved rounds (the host's speed drifts between and within leases,
# so each round times ours and then the reference): per round, `orrery-bench balltree
# --executors cpu` once per CPU-executor spin in $SPINS (keep-warm, ADR 0008; default
# "0 1000 200"), then the reference alone. Needs the release bundle (.device) and the
# wheel (.whl); carry [".device", ".whl"].
#   [SPINS="1000"] bash benches/device/cpu_spin.sh [rounds]   (device machine, repository root, $OUT set)
# Returns: spin.md (every run's side-by-side medians), env.txt (lscpu, commit), logs.tar.gz.
set -u
rounds=${1:-3}
R=$OUT; OUT=/tmp/results; mkdir -p $OUT
export ORRERY_COMMIT=$(cat .device/COMMIT) PYTHONUNBUFFERED=1
threads=$(nproc)
{ echo "nproc=$threads commit=$ORRERY_COMMIT"; lscpu; } > "$OUT/env.txt" 2>&1
. "$(dirname "${BASH_SOURCE[0]}")/reference.sh"
bench() {  # name, args...
  local name=$1; shift
  timeout 300 .device/bin/orrery-bench balltree --threads "$threads" --repeats 20 --out "$OUT/$name" "$@" \
    > "$OUT/$name.txt" 2>&1
  { echo "## $name (rc=$?)"; cat "$OUT/$name/balltree.md" 2>/dev/null; echo; } >> "$OUT/spin.md"
}
for r in $(seq 1 "$rounds"); do
  for us in ${SPINS:-0 1000 200}; do bench "r$r-spin$us" --executors cpu --cpu-spin-us "$us"; done
  bench "r$r-peer" --executors none --peer benches/python/balltree_peer.py
done
tar czf "$R/logs.tar.gz" -C /tmp results
cp "$OUT/env.txt" "$OUT/spin.md" "$R/"
cat "$OUT/spin.md"
