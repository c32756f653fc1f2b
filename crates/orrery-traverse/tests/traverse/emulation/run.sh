#!/usr/bin/env bash
# The FMM's f64 expansion kernels (kernels/traverse/fmm.cu) checked without a GPU: the
# ignored test gpu_fmm::fmm_dump_for_the_host_emulation writes each case's plan, inputs
# and the CPU's stage results (ORRERY_FMM_DUMP=DIR), g++ compiles fmm.cu with shim.h, and
# main.cpp runs the kernels (threads as coroutines under a deterministic scheduler) and
# compares.
#   bash crates/orrery-traverse/tests/traverse/emulation/run.sh   (from the repository root)
# 1. Every case, every launch shape of the translations (block: fmm_m2m / fmm_m2l /
#    fmm_l2l; warp: fmm_*_warp; dir: fmm_*_dir, the direction-table shape), both
#    scheduling orders (ascending, descending thread order between barriers): the
#    multipoles and local expansions must equal the CPU's bit for bit, the forces within
#    the device tests' tolerance. caseK is a quarter-turn plan (all three shapes; dir runs
#    its quarter-turn path only), caseKt the same tree with the CPU's table plan (dir only:
#    direct blocks for the common directions, the quarter turn for the others).
# 2. Mutation check of the barriers (on CASE_MUTANTS and its table twin): with the
#    barriers of one source line of fmm.cu left out (EMU_SKIP_LINE), some shape and order
#    must fail (wrong bits, or a crash on the indices of unloaded shared tables); lines
#    marked "emulation: not needed" must pass (they are redundant, and kept in the block
#    baseline so that it stays the measured kernel). A barrier neither needed nor marked
#    fails the script, as does a needed barrier that is marked.
# What it proves: the kernels' logic (indexing, barriers, the passes of each translation,
# the L2P regrouping) computes the CPU's results; with -ffp-contract=off (what the _rn
# intrinsics do on the device) bit for bit; a missing barrier within a block or a warp is
# seen. What it does not: anything the device adds (memory errors, the hardware's own
# scheduling: compute-sanitizer on the H200, benches/device/fmm.sh).
set -eu
D=${ORRERY_FMM_DUMP:-/tmp/orrery-fmm-dump}
SRC=kernels/traverse/fmm.cu
mkdir -p "$D"
ORRERY_FMM_DUMP=$D cargo test -q -p orrery-traverse --all-features --test traverse -- --ignored fmm_dump_for_the_host_emulation
g++ -std=c++20 -O2 -ffp-contract=off -I. -o "$D/emu" crates/orrery-traverse/tests/traverse/emulation/main.cpp
rc=0
for c in "$D"/case*; do
  shapes="block warp dir"
  [[ $c == *t ]] && shapes=dir
  for shape in $shapes; do
    for order in ascending descending; do
      echo "$(basename "$c") $shape $order: $(cat "$c/label")"
      "$D/emu" "$c" "$shape" "$order" || rc=1
    done
  done
done
# The mutants: one run per shape and order until one fails.
mutant_caught() {
  local line=$1 run shape order case=${CASE_MUTANTS:-case2}
  for run in "$case block" "$case warp" "$case dir" "${case}t dir"; do
    set -- $run
    for order in ascending descending; do
      if ! EMU_SKIP_LINE=$line timeout 120 "$D/emu" "$D/$1" "$2" "$order" >/dev/null 2>&1; then
        echo "$1 $2 $order"
        return 0
      fi
    done
  done
  return 1
}
echo "mutation check of the barriers (${CASE_MUTANTS:-case2} and ${CASE_MUTANTS:-case2}t):"
while IFS=: read -r line text; do
  if caught=$(mutant_caught "$line"); then
    if [[ $text == *"emulation: not needed"* ]]; then
      echo "  line $line: caught ($caught) but marked not needed"; rc=1
    else
      echo "  line $line: needed, caught ($caught)"
    fi
  elif [[ $text == *"emulation: not needed"* ]]; then
    echo "  line $line: not needed (marked)"
  else
    echo "  line $line: left out and NOT caught: redundant (mark it) or the emulation misses it"; rc=1
  fi
done < <(grep -n -E '__sync(threads|warp)\(\);' "$SRC")
[ $rc = 0 ] && echo "emulation: OK" || echo "emulation: FAIL"
exit $rc
