// kernels/tree/leaf_count.cu — the LeafCount decide of a rebalance pass
// (crates/orrery-tree-build/src/gpu/passes.rs; host reference
// crate::rebalance::leaf_count_op, Cornerstone's calculateNodeOp). Module "tree/leaf_count":
// common.cuh, this file. Another criterion (NFCount) is another module with an entry of
// the same arguments plus its own, launched in the same place of the pass.
//
// What it computes, for every leaf i < L (L = min(status[TB_LEAF_COUNT], capacity)):
//   level = levels - ctz(K[i + 1] - K[i]) / bits
//   0      when i is not the first of a complete sibling group (all 2^bits children of
//          its parent are leaves: K[first + 2^bits] == K[first] + parent size, with
//          first = i - slot, slot = the level's digit of K[i]) and the group's counts sum
//          to at most `bucket`;
//   2^(bits * j) for the largest j <= max(1, 12 / bits) with counts[i] >
//          bucket * 2^(bits * (j - 1)) and level + j <= levels (a split of j levels);
//   1      otherwise.
//   ops[i] = that operation; any operation other than 1 sets status[TB_CHANGED] (an
//   integer atomicOr by the threads that change, none when the tree is converged).
//   Runs only in state TB_RUN.
//
// Launch shape: one thread per leaf of the capacity (ceil(capacity / TB_THREADS) blocks of
//   TB_THREADS); threads past L return at once. Sized for the capacity, not for L, so a
//   recorded pass needs no host-known leaf count; each leaf's decision reads only its own
//   boundaries and its sibling group, so threads are independent.
//
// Buffers (direction, length, layout)
//   leaves  read   capacity + 1  u64 K[0..=L]
//   counts  read   capacity      u32 particles per leaf
//   ops     write  capacity      u32 operation per leaf
//   status  write  TB_STATUS_WORDS u32 (reads TB_STATE, TB_LEAF_COUNT; ors TB_CHANGED)
//
// Invariants: a valid leaf array; bits in {1, 2, 3}, bits * levels <= 63; bucket >= 1.
//
// Measured cost: not measured yet (one read of 2 keys and up to 2^bits counts per leaf).

#define TB_MAX_JUMP_BITS 12u

extern "C" __global__ void __launch_bounds__(TB_THREADS)
    tb_leaf_count_ops(const u64* __restrict__ leaves, const u32* __restrict__ counts, u32* __restrict__ ops,
                      u32* __restrict__ status, u32 capacity, u32 bucket, u32 bits, u32 levels) {
    if (status[TB_STATE] != TB_RUN) return;
    const u32 live = tb_live(status, capacity);
    const u64 i = tb_item();
    if (i >= live) return;
    const u64 key = leaves[i];
    const u32 level = tb_leaf_level(key, leaves[i + 1], bits, levels);
    const u32 children = 1u << bits;
    u32 op = 0xffffffffu;  // not decided yet
    if (level > 0u) {
        const u32 slot = (u32)(key >> (bits * (levels - level))) & (children - 1u);
        if (slot > 0u && (u64)slot <= i) {
            const u64 first = i - slot;
            const u64 last = first + children;
            const u64 parent_size = 1ull << (bits * (levels - level + 1u));
            if (last <= live && leaves[last] == leaves[first] + parent_size) {
                u64 parent = 0ull;
                for (u32 c = 0u; c < children; ++c) parent += counts[first + c];
                if (parent <= (u64)bucket) op = 0u;
            }
        }
    }
    if (op != 0u) {
        op = 1u;
        const u32 count = counts[i];
        u32 jmax = TB_MAX_JUMP_BITS / bits;
        if (jmax == 0u) jmax = 1u;
        for (u32 j = jmax; j >= 1u; --j) {
            const u64 bar = (u64)bucket << (bits * (j - 1u));
            if ((u64)count > bar && level + j <= levels) {
                op = 1u << (bits * j);
                break;
            }
        }
    }
    ops[i] = op;
    if (op != 1u) atomicOr(&status[TB_CHANGED], 1u);
}
