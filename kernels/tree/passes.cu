// kernels/tree/passes.cu — the criterion-independent steps of a rebalance pass of the
// Cornerstone tree build (crates/orrery-tree-build/src/gpu/passes.rs). Module "tree/passes":
// common.cuh, this file.
//
// What it computes (L = the live leaf count, min(status[TB_LEAF_COUNT], capacity))
//   tb_leaf_counts  counts[i] = lower_bound(keys, K[i + 1]) - lower_bound(keys, K[i]),
//                   i < L: two binary searches per leaf in the n sorted particle keys,
//                   the loop of lower_bound_one (crate::counts::leaf_counts). Runs unless
//                   the run is done (state TB_DONE).
//   tb_scatter      the new leaf array from the operations and their exclusive scan
//                   (crate::rebalance::rebalance): leaf i writes its op descendants'
//                   first keys K[i] + c * cell_size(level + j) at next[offsets[i] + c]
//                   (op = 2^(bits * j); op 1 copies K[i], op 0 writes nothing) and the
//                   thread i = L writes key_end at next[offsets[L]]. Runs in state TB_RUN
//                   when the decide set TB_CHANGED. A proposal of more than `capacity`
//                   leaves (offsets[L] > capacity) writes nothing: thread 0 sets
//                   TB_OVERFLOW and TB_NEEDED = offsets[L] instead, and the host grows.
//   tb_finish       one thread ends the pass in the status block: counts the pass, stops
//                   on convergence (no change), on overflow or at the run's pass budget
//                   (`max_passes` passes since tb_begin: the host enqueues a run of a few
//                   slots and resumes with another while passes remain, so dead slots
//                   after convergence stay few)
//                   (then one more tb_leaf_counts of the final tree, state
//                   TB_COUNT_ONLY), else makes the scattered array current (leaf count
//                   offsets[L], TB_CURRENT flipped) and sets the next scan's live count.
//   tb_begin        one thread starts a run: state TB_RUN, flags cleared, passes reset
//                   (TB_BEGIN_UPDATE), kept (TB_BEGIN_RESUME, after growth or a spent
//                   run budget; TB_RUN_BASE remembers them) or reset with
//                   the root leaf [0, key_end] written to leaves (TB_BEGIN_BUILD).
//
// Launch shapes
//   tb_leaf_counts, tb_scatter: one thread per leaf of the capacity (ceil((capacity + 1) /
//     TB_THREADS) blocks of TB_THREADS), so a recorded pass needs no host-known leaf count;
//     threads past L return at once, and every thread returns at once in the passes after
//     the run is done, so a fixed pass budget costs little more than the passes used.
//   tb_finish, tb_begin: one block; only thread 0 works (a few status words written in
//   order by one thread: no atomics, no races between the words).
//
// Buffers (direction, length, layout)
//   keys     read   n             u64 sorted particle keys (removed ones = key_end, last)
//   leaves   read   capacity + 1  u64 current leaf array K[0..=L] (tb_begin: written)
//   status   read / write  TB_STATUS_WORDS u32 (common.cuh)
//   counts   write  capacity      u32 particles per leaf
//   ops      read   capacity      u32 operations of the pass's decide
//   offsets  read   capacity + 1  u32 their exclusive scan (the executor's counted scan
//                                 of L elements: offsets[L] is the new leaf count)
//   next     write  capacity + 1  u64 the new leaf array
//
// Invariants: the leaf array and the operations are valid (the decide kernels produce only
//   0, 1 and splits within the key depth); n >= 1; capacity + 1 < 2^32.
//
// Measured cost: not measured yet. Obvious later work: one thread per leaf in the scatter
//   writes up to 4096 keys for a deep split (a block-cooperative scatter of large splits);
//   the counts could search only the keys between the previous pass's bounds.

extern "C" __global__ void __launch_bounds__(TB_THREADS)
    tb_leaf_counts(const u64* __restrict__ keys, const u64* __restrict__ leaves, const u32* __restrict__ status,
                   u32* __restrict__ counts, u32 n, u32 capacity) {
    if (status[TB_STATE] == TB_DONE) return;
    const u64 i = tb_item();
    if (i >= tb_live(status, capacity)) return;
    counts[i] = tb_lower_bound(keys, n, leaves[i + 1]) - tb_lower_bound(keys, n, leaves[i]);
}

extern "C" __global__ void __launch_bounds__(TB_THREADS)
    tb_scatter(const u64* __restrict__ leaves, const u32* __restrict__ ops, const u32* __restrict__ offsets,
               u64* __restrict__ next, u32* __restrict__ status, u32 capacity, u32 bits, u32 levels) {
    if (status[TB_STATE] != TB_RUN || status[TB_CHANGED] == 0u) return;
    const u32 live = tb_live(status, capacity);
    const u32 total = offsets[live];
    const u64 i = tb_item();
    if (total > capacity) {
        if (i == 0) {
            status[TB_OVERFLOW] = 1u;
            status[TB_NEEDED] = total;
        }
        return;
    }
    if (i > live) return;
    if (i == live) {
        next[total] = tb_key_end(bits, levels);
        return;
    }
    const u32 op = ops[i];
    if (op == 0u) return;
    const u32 base = offsets[i];
    const u64 key = leaves[i];
    if (op == 1u) {
        next[base] = key;
        return;
    }
    const u32 level = tb_leaf_level(key, leaves[i + 1], bits, levels);
    const u32 jump = tb_ctz64(op) / bits;
    const u32 below = levels - level - jump;  // the new cells' level, counted from the bottom
    const u64 step = 1ull << (bits * below);
    for (u32 c = 0u; c < op; ++c) next[base + c] = key + (u64)c * step;
}

extern "C" __global__ void tb_finish(const u32* __restrict__ offsets, u32* __restrict__ status, u32 capacity,
                                     u32 max_passes) {
    if (blockIdx.x != 0u || threadIdx.x != 0u) return;
    const u32 state = status[TB_STATE];
    if (state == TB_DONE) return;
    if (state == TB_COUNT_ONLY || status[TB_OVERFLOW] != 0u) {
        // The final tree's counts are done, or the proposal did not fit: the tree and its
        // counts are those of the last completed pass.
        status[TB_STATE] = TB_DONE;
        status[TB_SCAN_COUNT] = 0u;
        return;
    }
    const u32 passes = status[TB_PASSES] + 1u;
    status[TB_PASSES] = passes;
    if (status[TB_CHANGED] == 0u) {
        status[TB_CONVERGED] = 1u;
        status[TB_STATE] = TB_DONE;
        status[TB_SCAN_COUNT] = 0u;
        return;
    }
    const u32 total = offsets[tb_live(status, capacity)];
    status[TB_LEAF_COUNT] = total;
    status[TB_CURRENT] ^= 1u;
    status[TB_CHANGED] = 0u;
    if (passes - status[TB_RUN_BASE] >= max_passes) {
        status[TB_STATE] = TB_COUNT_ONLY;
        status[TB_SCAN_COUNT] = 0u;
    } else {
        status[TB_SCAN_COUNT] = total;
    }
}

extern "C" __global__ void tb_begin(u64* __restrict__ leaves, u32* __restrict__ status, u32 mode, u32 bits,
                                    u32 levels) {
    if (blockIdx.x != 0u || threadIdx.x != 0u) return;
    if (mode == TB_BEGIN_BUILD) {
        leaves[0] = 0ull;
        leaves[1] = tb_key_end(bits, levels);
        status[TB_LEAF_COUNT] = 1u;
        status[TB_CURRENT] = 0u;
    }
    if (mode != TB_BEGIN_RESUME) status[TB_PASSES] = 0u;
    status[TB_RUN_BASE] = status[TB_PASSES];
    status[TB_STATE] = TB_RUN;
    status[TB_CHANGED] = 0u;
    status[TB_CONVERGED] = 0u;
    status[TB_OVERFLOW] = 0u;
    status[TB_NEEDED] = 0u;
    status[TB_SCAN_COUNT] = status[TB_LEAF_COUNT];
}
