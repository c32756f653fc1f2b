#!/usr/bin/env bash
# The FMM's f64 expansion kernels (kernels/traverse/fmm.cu) checked without a GPU: the
# ignored test gpu_fmm::fmm_dump_for_the_host_emulation writes each case's plan, inputs
# and the CPU's stage results (ORRERY_FMM_DUMP=DIR), g++ compiles fmm.cu with shim.h, and
# main.cpp runs the kernels on one std::thread per CUDA thread and compares.
#   bash crates/orrery-traverse/tests/traverse/emulation/run.sh   (from the repository root)
# What it proves: the kernels' logic (indexing, barriers, the passes of each translation,
# the L2P regrouping) computes the CPU's results; with -ffp-contract=off (what the _rn
# intrinsics do on the device) bit for bit. What it does not: anything the device adds
# (memory errors, races between warps: compute-sanitizer on the H200, benches/device/fmm.sh).
set -eu
D=${ORRERY_FMM_DUMP:-/tmp/orrery-fmm-dump}
mkdir -p "$D"
ORRERY_FMM_DUMP=$D cargo test -q -p orrery-traverse --all-features --test traverse -- --ignored fmm_dump_for_the_host_emulation
g++ -std=c++20 -O2 -pthread -ffp-contract=off -I. -o "$D/emu" crates/orrery-traverse/tests/traverse/emulation/main.cpp
rc=0
for c in "$D"/case*; do echo "$(basename $c): $(cat $c/label)"; "$D/emu" "$c" || rc=1; done
exit $rc
