#!/usr/bin/env bash
# One device call: the CPU ball-tree build beside the reference `balltree-erwin` on the
# same cores, in interleaved rounds (the host's speed drifts between and within leases,
# so each round times ours and then the reference): per round, `orrery-bench balltree
# --executors cpu` once per instruction-set level in $ISAS (ORRERY_MAX_CPU_ISA, ADR 0009;
# default "native": the best the CPU has) and per CPU-executor spin in $SPINS (keep-warm,
# ADR 0008; default "1000"), then the reference alone. Needs the release bundle (.device)
# and the wheel (.whl); carry [".device", ".whl"].
#   [ISAS="baseline x86-64-v3 native"] [SPINS="0 1000"] bash benches/device/cpu_rounds.sh [rounds]
#   (device machine, repository root, $OUT set)
# Returns: rounds.md (every run's side-by-side medians), env.txt (lscpu, commit), logs.tar.gz.
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
  { echo "## $name (rc=$?)"; cat "$OUT/$name/balltree.md" 2>/dev/null; echo; } >> "$OUT/rounds.md"
}
for r in $(seq 1 "$rounds"); do
  for isa in ${ISAS:-native}; do
    for us in ${SPINS:-1000}; do
      if [ "$isa" = native ]; then unset ORRERY_MAX_CPU_ISA; else export ORRERY_MAX_CPU_ISA=$isa; fi
      bench "r$r-$isa-spin$us" --executors cpu --cpu-spin-us "$us"
    done
  done
  unset ORRERY_MAX_CPU_ISA
  bench "r$r-peer" --executors none --peer benches/python/balltree_peer.py
done
tar czf "$R/logs.tar.gz" -C /tmp results
cp "$OUT/env.txt" "$OUT/rounds.md" "$R/"
cat "$OUT/rounds.md"
