#!/usr/bin/env bash
# One device call for the gravity benchmarks, side by side with Ryoanji on the same
# bodies: `orrery-bench gravity` on CUDA and wgpu (and the CPU: the 1M Plummer sphere),
# writing every workload in the peer format first (--peer-files), then `ryoanji_driver`
# (../shared/peers) on each file at theta 0.5 and 0.6 (quadrupoles, groups of 64,
# softening h = 0.005: its pair distance is clamped at 2h = 0.01, our Plummer length),
# with its own GPU direct-sum check of its errors where that takes under a minute.
# Needs the release bundle (`cargo xtask device-bundle` -> .device) and the GL/Vulkan
# loader debs in .gl; the call carries [".device", ".gl", ".peers"].
#   bash benches/device/gravity.sh   (on the device machine, from the repository root, $OUT set)
# Env: EXECUTORS (default cuda,wgpu; CPU=0 skips the separate CPU run), BENCH_ARGS (extra orrery-bench arguments),
# PEERS (default .peers: a copy of ../shared/peers/bin/ryoanji_driver, git-ignored and
# carried), RYOANJI_DIRECT (default "plummer-1M": the files whose errors Ryoanji checks
# against its direct sum; 4M takes 16 s per check).
# Returns: gravity.txt (our table), peer.txt (Ryoanji's phases and errors per file),
# gravity.json, env.txt, logs.tar.gz.
set -u
R=$OUT; OUT=/tmp/results; mkdir -p $OUT
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/env.txt" 2>&1
threads=$(nproc); W=/tmp/gravwork; mkdir -p $W; P=${PEERS:-.peers}
echo "nproc=$threads commit=$ORRERY_COMMIT" >> "$OUT/env.txt"
timeout ${BENCH_TIMEOUT:-400} .device/bin/orrery-bench gravity --executors "${EXECUTORS:-cuda,wgpu}" \
  --threads "$threads" --peer-files $W --out "$OUT" ${BENCH_ARGS:-} > "$OUT/gravity.txt" 2>&1
echo "orrery-bench gpu rc=$?" >> "$OUT/env.txt"
# The CPU's whole evaluations take seconds each: fewer repeats.
if [ "${CPU:-1}" = 1 ]; then
  mkdir -p "$OUT/cpu"
  timeout ${CPU_TIMEOUT:-200} .device/bin/orrery-bench gravity --executors cpu --threads "$threads" --warmup 1 --repeats 3 \
    --out "$OUT/cpu" > "$OUT/gravity-cpu.txt" 2>&1
  echo "orrery-bench cpu rc=$?" >> "$OUT/env.txt"
fi
for f in $W/*.bin; do
  name=$(basename ${f%.bin})
  for theta in ${RYOANJI_THETAS:-0.5 0.6}; do
    direct=""; case " ${RYOANJI_DIRECT:-plummer-1M plummer-4M} " in *" $name "*) direct="--direct";; esac
    echo "== $name theta $theta $direct" >> "$OUT/peer.txt"
    timeout 120 $P/ryoanji_driver $f --theta $theta --ncrit 64 --h 0.005 $direct >> "$OUT/peer.txt" 2>&1
    echo "rc=$?" >> "$OUT/peer.txt"
  done
done
tar czf "$R/logs.tar.gz" -C /tmp results
cp "$OUT/env.txt" "$OUT/gravity.txt" "$OUT/peer.txt" "$R/"; cp "$OUT/gravity.json" "$R/" 2>/dev/null
cp "$OUT/gravity-cpu.txt" "$R/" 2>/dev/null; cp "$OUT/cpu/gravity.json" "$R/gravity-cpu.json" 2>/dev/null
cat "$OUT/env.txt"; grep -E "^==|TIME (build|upsweep|force|all)|BH vs direct|rate" "$OUT/peer.txt" | head -80
