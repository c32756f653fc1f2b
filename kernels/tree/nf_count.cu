// kernels/tree/nf_count.cu — the NFCount criterion of a rebalance pass
// (crates/orrery-tree-build/src/gpu/passes.rs and nf.rs; host reference crate::nfcount:
// leaf_nf, group_nf, nf_op, stencil_count, locate_cell, cell_count, NfState::apply, and
// crate::counts::carry_starts). Module "tree/nf_count": common.cuh, this file. The WGSL
// twin is shaders/tree/nf_count.wgsl (same entries, same arguments, same integers).
//
// Per leaf of the current tree the device holds its first particle (starts, L + 1 with
// starts[L] = the particles inside the box), W = n * S and its group value G (the parent's
// n_p * S_p when it leads a complete sibling group, else NO_GROUP), by leaf-buffer parity:
// starts = [parity 0 (capacity + 1) | parity 1 (capacity + 1)], vals = [W0 | G0 | W1 | G1]
// (capacity each). `parity` is the parity of the tree the kernel reads (sp = parity *
// (capacity + 1), vp = parity * 2 * capacity); W == FRESH marks a leaf to evaluate.
//
// What it computes (L = min(status[TB_LEAF_COUNT], capacity); K = the leaf array):
//   tb_nf_starts   reset = 1, the run's first tree: starts[sp + i] = lower_bound(keys,
//                  K[i]) for i <= L; W[i] = FRESH, G[i] = NO_GROUP for i < L (the particles
//                  moved since the last run, so every value is evaluated again).
//                  reset = 0, after a scatter: a split child (W[i] == FRESH, G[i] != NO_GROUP)
//                  holds its parent's first particle lo in starts and the parent's end hi in
//                  G: starts[i] = lo + lower_bound(keys[lo..hi], K[i]), G[i] = NO_GROUP
//                  (crate::counts::carry_starts, one search per child, in parallel).
//   tb_nf_eval     for i < L: counts[i] = starts[i + 1] - starts[i]; W[i] = n_i * S_i for
//                  a fresh leaf (0 when empty, no stencil); G[i] = NO_GROUP unless i leads
//                  a complete sibling group, and for a leader without a carried value
//                  G[i] = n_p * S_p of its parent (group_nf). S = the particles of the 27
//                  same-level cells around the cell (stencil_count): each cell is located
//                  in the leaf array by galloping from leaf i (leaf_holding); a union of
//                  whole leaves j..k counts starts[k] - starts[j], a cell inside one
//                  coarser leaf j searches only that leaf's particles.
//   tb_nf_ops      ops[i] = nf_op: 0 for a non-first sibling of a complete group whose
//                  leader's G <= threshold, else split_op(W[i], threshold, 4^bits, level);
//                  any op other than 1 sets status[TB_CHANGED]. State TB_RUN only.
//   tb_nf_scatter  tb_scatter (passes.cu: the new boundaries into next, key_end at
//                  next[offsets[L]], or the overflow flag and nothing else when
//                  offsets[L] > capacity) and the carry into the other parity
//                  (NfState::apply): old leaf i, o = offsets[i]: kept (op 1, next op not
//                  0): start, W, G as they were; merge leader (op 1, next op 0): its start,
//                  W = G[i] (the parent's value that decided the merge; FRESH if it had
//                  none), G = NO_GROUP; split (op > 1): W = FRESH for every child, the first
//                  child starts at starts[i] (G = NO_GROUP), the others get starts[i] and
//                  G = starts[i + 1] for tb_nf_starts to search (the thread writes only, so a
//                  4096-way split is 4096 stores, not 4096 dependent searches). Thread L
//                  writes starts[L] at offsets[L]. Runs in state TB_RUN when the decide
//                  changed something.
//   tb_nf_stencil_counts  (tests) out[q] = S of the level qmeta[2q] cell holding qkeys[q],
//                  galloping from leaf qmeta[2q+1], for a host-given leaf array and starts.
//
// Geometry (geom, u32[TB_NF_GEOM_WORDS], filled by the host from orrery_core and the
//   tree's key geometry, so no table is copied into this source):
//   [0, 192)    orrery_core::sfc::hilbert::ENCODE_3D, widened
//   [192, 384)  orrery_core::sfc::hilbert::DECODE_3D, widened
//   [384, 768)  per level l = 0..=63 and axis a, the key bits of axis a among the first l
//               levels (u64 as two words, low first, at 384 + 2 * (3l + a)): Morton's
//               dilated masks for octrees, the BinaryAxes masks for binary trees.
//   A neighbour's first key is the cell's first key with one axis' bits stepped as a
//   dilated integer ((field | ~mask) + 1) & mask, (field - 1) & mask, none past an edge.
//   Hilbert keys (hilbert = 1) step the cell's Morton key (DECODE_3D per level) and encode
//   each neighbour back with ENCODE_3D: the state machine's states along the cell's own
//   path are kept per level, so a neighbour runs the table only for the levels below the
//   first Morton digit where it differs from the cell (on average a few, not `level`):
//   the same key as hilbert::encode_3d_levels, which restarts from the top.
//
// Launch shape: one thread per leaf of the capacity (tb_nf_starts and tb_nf_scatter: of
//   capacity + 1; tb_nf_eval: `lanes` threads per leaf, 1 to 32, its lanes sharing the 27
//   cells of the stencil, since one thread walking 27 cells in turn leaves a tree of few
//   leaves latency-bound; tb_nf_stencil_counts one per query), ceil(items / TB_THREADS) blocks of
//   TB_THREADS; threads past L return at once: sized for the capacity so that a recorded
//   pass needs no host-known leaf count. Each leaf's values depend on its own cell and on
//   read-only arrays, so threads are independent; the only shared write is the integer
//   atomicOr of the change flag (and thread 0's overflow words).
//
// Buffers (direction, length, layout)
//   keys     read   n                   u64 sorted particle keys
//   leaves   read   capacity + 1        u64 K[0..=L]; next: write, the new leaf array
//   starts   r / w  2 * (capacity + 1)  u32 (by parity, see above)
//   vals     r / w  4 * capacity        u64 (by parity, see above)
//   counts   write  capacity            u32 particles per leaf of the tree read
//   geom     read   TB_NF_GEOM_WORDS    u32
//   ops      r / w  capacity            u32; offsets read capacity + 1 (their scan)
//   status   r / w  TB_STATUS_WORDS     u32 (TB_STATE, TB_LEAF_COUNT, TB_CHANGED; the
//                                       scatter sets TB_OVERFLOW and TB_NEEDED)
//
// Invariants: a valid leaf array; bits in {1, 3}, bits * levels <= 63; threshold >= 1;
//   n >= 1; no real value reaches FRESH or NO_GROUP (n, S < 2^32, so n * S < 2^64 - 2).
//
// Measured cost (H200, docs/performance/tree.md): a pass slot is 6 launches, LeafCount's 5
//   (counts, decide, scan, scatter, finish) plus one: starts, eval, ops, scan, scatter,
//   finish. The hot spot is tb_nf_eval on the first tree of a run (every leaf's stencil):
//   an update of an unchanged tree 0.35 ms at uniform 2M with one thread per leaf, 0.27
//   with a warp per leaf; 3.3 and 5.2 ms at 25.6M, hence `lanes` from the capacity.

#define TB_NF_GEOM_WORDS 768u
#define TB_NF_ENCODE 0u
#define TB_NF_DECODE 192u
#define TB_NF_MASKS 384u
#define TB_NF_FRESH 0xffffffffffffffffull
#define TB_NF_NO_GROUP 0xffffffffffffffffull
#define TB_NF_MAX_JUMP_BITS 12u

// ---- searches ----------------------------------------------------------------------------

// upper_bound_one over keys[lo, hi): lo + the first offset whose key is > q.
__device__ __forceinline__ u32 tb_nf_upper_bound(const u64* __restrict__ keys, u32 lo, u32 hi, u64 q) {
    u32 first = 0u;
    u32 count = hi > lo ? hi - lo : 0u;
    while (count > 0u) {
        const u32 step = count / 2u;
        const u32 probe = first + step;
        if (keys[lo + probe] <= q) {
            first = probe + 1u;
            count -= step + 1u;
        } else {
            count = step;
        }
    }
    return first;
}

// lower_bound_one over keys[lo, hi), relative to lo.
__device__ __forceinline__ u32 tb_nf_lower_bound(const u64* __restrict__ keys, u32 lo, u32 hi, u64 q) {
    u32 first = 0u;
    u32 count = hi > lo ? hi - lo : 0u;
    while (count > 0u) {
        const u32 step = count / 2u;
        const u32 probe = first + step;
        if (keys[lo + probe] < q) {
            first = probe + 1u;
            count -= step + 1u;
        } else {
            count = step;
        }
    }
    return first;
}

// crate::nfcount::leaf_holding: the last boundary j < last with leaves[j] <= key (last = L
// boundaries past the first), galloping from `near`.
__device__ __forceinline__ u32 tb_nf_leaf_holding(const u64* __restrict__ leaves, u32 last, u64 key, u32 near) {
    if (near > last - 1u) near = last - 1u;
    u32 lo = near;
    u32 hi = near;
    u32 step = 1u;
    if (leaves[near] <= key) {
        for (;;) {
            hi = (last - near > step) ? near + step : last;
            if (hi >= last) {
                hi = last;
                break;
            }
            if (leaves[hi] > key) break;
            lo = hi;
            step = step > 0x7fffffffu ? 0xffffffffu : step * 2u;
        }
    } else {
        for (;;) {
            if (step >= near) {
                lo = 0u;
                break;
            }
            lo = near - step;
            if (leaves[lo] <= key) break;
            hi = lo;
            step = step > 0x7fffffffu ? 0xffffffffu : step * 2u;
        }
    }
    const u32 top = hi > lo + 1u ? hi : lo + 1u;
    return lo + tb_nf_upper_bound(leaves, lo + 1u, top, key);
}

// crate::nfcount::cell_count for a leaf array of `live` leaves (live + 1 boundaries).
__device__ __forceinline__ u32 tb_nf_cell_count(const u64* __restrict__ leaves, const u32* __restrict__ starts,
                                                const u64* __restrict__ keys, u32 live, u32 n, u64 first, u64 end,
                                                u32 near) {
    const u32 j = tb_nf_leaf_holding(leaves, live, first, near);
    bool inside = leaves[j] != first || leaves[j + 1u] > end || end <= first;
    u32 k = j + 1u;
    if (!inside && leaves[j + 1u] != end) k = tb_nf_leaf_holding(leaves, live, end - 1ull, j + 1u) + 1u;
    if (!inside) return starts[k] >= starts[j] ? starts[k] - starts[j] : 0u;
    const u32 lo = starts[j] < n ? starts[j] : n;
    u32 hi = starts[j + 1u];
    if (hi < lo) hi = lo;
    if (hi > n) hi = n;
    const u32 a = tb_nf_lower_bound(keys, lo, hi, end);
    const u32 b = tb_nf_lower_bound(keys, lo, hi, first);
    return a >= b ? a - b : 0u;
}

// ---- geometry ----------------------------------------------------------------------------

__device__ __forceinline__ u64 tb_nf_mask(const u32* __restrict__ geom, u32 level, u32 axis) {
    const u32 at = TB_NF_MASKS + 2u * (3u * level + axis);
    return ((u64)geom[at + 1u] << 32) | (u64)geom[at];
}

// The octal digits of `prefix` (levels of them, coarsest first) through a state table.
__device__ __forceinline__ u64 tb_nf_run_table(const u32* __restrict__ geom, u32 table, u64 prefix, u32 levels) {
    u32 entry = 0u;
    u64 out = 0ull;
    for (u32 l = levels; l > 0u; --l) {
        const u32 digit = (u32)(prefix >> (3u * (l - 1u))) & 7u;
        entry = geom[table + (((entry & ~7u) | digit) & 255u)];
        out = (out << 3) | (u64)(entry & 7u);
    }
    return out;
}

// The stencil around the level-`level` cell holding `key`: its masks, size, and for Hilbert
// keys the cell's Morton prefix and the encoder's state before each of its digits.
struct TbNfStencil {
    u64 masks[3];
    u64 size, hprefix, mprefix, base;
    u32 shift, level;
    unsigned char states[22];
};

__device__ __forceinline__ void tb_nf_stencil_setup(const u32* __restrict__ geom, u64 key, u32 level, u32 hilbert,
                                                    u32 bits, u32 levels, TbNfStencil* st) {
    if (level > levels) level = levels;
    st->level = level;
    st->shift = bits * (levels - level);
    st->size = 1ull << st->shift;
    const u64 start = key & ~(st->size - 1ull);
    for (u32 a = 0u; a < 3u; ++a) st->masks[a] = tb_nf_mask(geom, level, a);
    st->hprefix = start >> st->shift;
    st->mprefix = st->hprefix;
    if (hilbert) {
        st->mprefix = tb_nf_run_table(geom, TB_NF_DECODE, st->hprefix, level);
        u32 e = 0u;
        for (u32 k = 0u; k < level; ++k) {
            st->states[k] = (unsigned char)(e & ~7u);
            const u32 digit = (u32)(st->mprefix >> (3u * (level - 1u - k))) & 7u;
            e = geom[TB_NF_ENCODE + (((e & ~7u) | digit) & 255u)];
        }
    }
    st->base = st->mprefix << st->shift;
}

// The particles of cell c (0..27: offsets c / 9 - 1, c / 3 % 3 - 1, c % 3 - 1) of the
// stencil; 0 for a cell past the box's edge (crate::nfcount's sum_over_stencil term).
__device__ u32 tb_nf_stencil_cell(const TbNfStencil& st, u32 c, const u64* __restrict__ leaves,
                                  const u32* __restrict__ starts, const u64* __restrict__ keys,
                                  const u32* __restrict__ geom, u32 live, u32 n, u32 near, u32 hilbert) {
    const int d[3] = {(int)(c / 9u) - 1, (int)(c / 3u % 3u) - 1, (int)(c % 3u) - 1};
    u64 cell = st.base;
    for (u32 a = 0u; a < 3u; ++a) {
        const u64 mask = st.masks[a];
        const u64 field = cell & mask;
        u64 moved = field;
        if (d[a] == 1) {
            if (field == mask) return 0u;
            moved = ((field | ~mask) + 1ull) & mask;
        } else if (d[a] == -1) {
            if (field == 0ull) return 0u;
            moved = (field - 1ull) & mask;
        }
        cell = (cell & ~mask) | moved;
    }
    u64 first = cell;
    if (hilbert) {
        const u32 level = st.level;
        const u64 m = cell >> st.shift;
        const u64 diff = m ^ st.mprefix;
        u64 h = st.hprefix;
        if (diff != 0ull) {
            // The first k digits (from the top) agree: run the table from digit k on.
            const u32 k = level - 1u - (63u - (u32)__clzll((long long)diff)) / 3u;
            u32 e = st.states[k];
            h = st.hprefix >> (3u * (level - k));
            for (u32 j = k; j < level; ++j) {
                const u32 digit = (u32)(m >> (3u * (level - 1u - j))) & 7u;
                e = geom[TB_NF_ENCODE + (((e & ~7u) | digit) & 255u)];
                h = (h << 3) | (u64)(e & 7u);
            }
        }
        first = h << st.shift;
    }
    return tb_nf_cell_count(leaves, starts, keys, live, n, first, first + st.size, near);
}

// crate::nfcount's sum_over_stencil with cell_count: the particles of the 27 level-`level`
// cells around the one holding `key`, one cell after the other (tb_nf_stencil_counts; the
// eval spreads the cells over a warp).
__device__ u64 tb_nf_stencil(const u64* __restrict__ leaves, const u32* __restrict__ starts,
                             const u64* __restrict__ keys, const u32* __restrict__ geom, u32 live, u32 n, u64 key,
                             u32 level, u32 near, u32 hilbert, u32 bits, u32 levels) {
    TbNfStencil st;
    tb_nf_stencil_setup(geom, key, level, hilbert, bits, levels, &st);
    u64 sum = 0ull;
    for (u32 c = 0u; c < 27u; ++c) sum += tb_nf_stencil_cell(st, c, leaves, starts, keys, geom, live, n, near, hilbert);
    return sum;
}

// crate::rebalance::sibling_group: the first leaf of i's complete group and i's slot, or
// false.
__device__ __forceinline__ bool tb_nf_group(const u64* __restrict__ leaves, u32 live, u32 i, u32 level, u32 bits,
                                            u32 levels, u32* first, u32* slot) {
    if (level == 0u) return false;
    const u32 children = 1u << bits;
    const u32 s = (u32)(leaves[i] >> (bits * (levels - level))) & (children - 1u);
    if (s > i) return false;
    const u32 f = i - s;
    const u32 last = f + children;
    const u64 parent_size = 1ull << (bits * (levels - level + 1u));
    if (last > live || leaves[last] != leaves[f] + parent_size) return false;
    *first = f;
    *slot = s;
    return true;
}

// ---- entries ----------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(TB_THREADS)
    tb_nf_starts(const u64* __restrict__ keys, const u64* __restrict__ leaves, u32* __restrict__ starts,
                 u64* __restrict__ vals, const u32* __restrict__ status, u32 n, u32 capacity, u32 parity,
                 u32 reset) {
    if (status[TB_STATE] == TB_DONE) return;
    const u32 live = tb_live(status, capacity);
    const u64 item = tb_item();
    if (item > live) return;
    const u32 i = (u32)item;
    u32* s = starts + (u64)parity * (capacity + 1u);
    u64* v = vals + (u64)parity * 2u * capacity;
    if (reset) {
        s[i] = tb_lower_bound(keys, n, leaves[i]);
        if (i == live) return;
        v[i] = TB_NF_FRESH;
        v[capacity + i] = TB_NF_NO_GROUP;
        return;
    }
    if (i == live || v[i] != TB_NF_FRESH || v[capacity + i] == TB_NF_NO_GROUP) return;
    const u32 lo = s[i] < n ? s[i] : n;
    const u64 end = v[capacity + i];
    u32 hi = end < (u64)n ? (u32)end : n;
    if (hi < lo) hi = lo;
    s[i] = lo + tb_nf_lower_bound(keys, lo, hi, leaves[i]);
    v[capacity + i] = TB_NF_NO_GROUP;
}

// The sum of `v` over each aligned group of `lanes` lanes (a power of two <= 32); every
// lane of the warp takes part.
__device__ __forceinline__ u64 tb_nf_group_sum(u64 v, u32 lanes) {
    for (u32 o = 1u; o < lanes; o <<= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// `lanes` threads per leaf (a power of two <= 32, chosen by the host from the capacity:
// many for few leaves, whose 27 cells one thread would walk in turn with the GPU mostly
// idle; one for many leaves, where the per-thread stencil setup would be repeated for
// nothing): lane k counts cells k, k + lanes, ... of the stencil, a group sum gives S
// (integers: the CPU's sum in any order). No thread returns before the sums, so the
// shuffles always see the whole warp; past-the-tree threads add zeros.
extern "C" __global__ void __launch_bounds__(TB_THREADS)
    tb_nf_eval(const u64* __restrict__ leaves, const u32* __restrict__ starts, const u64* __restrict__ keys,
               const u32* __restrict__ geom, u64* __restrict__ vals, u32* __restrict__ counts,
               const u32* __restrict__ status, u32 capacity, u32 n, u32 parity, u32 hilbert, u32 bits, u32 levels,
               u32 lanes) {
    if (status[TB_STATE] == TB_DONE) return;  // the whole grid returns
    if (lanes == 0u || lanes > 32u || (lanes & (lanes - 1u)) != 0u) lanes = 1u;
    const u32 live = tb_live(status, capacity);
    const u64 item = tb_item();
    const u32 sub = (u32)(item % lanes);
    const u64 leaf = item / lanes;
    const bool in_tree = leaf < live;
    const u32 i = in_tree ? (u32)leaf : 0u;
    const u32* s = starts + (u64)parity * (capacity + 1u);
    u64* v = vals + (u64)parity * 2u * capacity;
    u64 key = 0ull;
    u32 level = 0u, count = 0u, parent = 0u, first = 0u, slot = 0u;
    bool fresh = false, carried = false, leader = false;
    if (in_tree) {
        key = leaves[i];
        level = tb_leaf_level(key, leaves[i + 1u], bits, levels);
        count = s[i + 1u] >= s[i] ? s[i + 1u] - s[i] : 0u;
        fresh = v[i] == TB_NF_FRESH;
        carried = v[capacity + i] != TB_NF_NO_GROUP;
        leader = tb_nf_group(leaves, live, i, level, bits, levels, &first, &slot) && slot == 0u;
        if (leader) {
            const u32 end = s[i + (1u << bits)];
            parent = end >= s[i] ? end - s[i] : 0u;
        }
    }
    u64 own = 0ull;
    if (in_tree && fresh && count > 0u) {
        TbNfStencil st;
        tb_nf_stencil_setup(geom, key, level, hilbert, bits, levels, &st);
        for (u32 c = sub; c < 27u; c += lanes) own += tb_nf_stencil_cell(st, c, leaves, s, keys, geom, live, n, i, hilbert);
    }
    own = tb_nf_group_sum(own, lanes);
    u64 up = 0ull;
    if (in_tree && leader && !carried && parent > 0u) {
        TbNfStencil st;
        tb_nf_stencil_setup(geom, key, level - 1u, hilbert, bits, levels, &st);
        for (u32 c = sub; c < 27u; c += lanes) up += tb_nf_stencil_cell(st, c, leaves, s, keys, geom, live, n, i, hilbert);
    }
    up = tb_nf_group_sum(up, lanes);  // also orders every lane's reads of v before the writes below
    if (!in_tree || sub != 0u) return;
    counts[i] = count;
    if (fresh) v[i] = (u64)count * own;
    if (!leader) {
        v[capacity + i] = TB_NF_NO_GROUP;
    } else if (!carried) {
        v[capacity + i] = (u64)parent * up;
    }
}

extern "C" __global__ void __launch_bounds__(TB_THREADS)
    tb_nf_ops(const u64* __restrict__ leaves, const u64* __restrict__ vals, u32* __restrict__ ops,
              u32* __restrict__ status, u32 capacity, u32 parity, u32 threshold_lo, u32 threshold_hi, u32 bits,
              u32 levels) {
    if (status[TB_STATE] != TB_RUN) return;
    const u32 live = tb_live(status, capacity);
    const u64 item = tb_item();
    if (item >= live) return;
    const u32 i = (u32)item;
    const u64* v = vals + (u64)parity * 2u * capacity;
    const u64 threshold = ((u64)threshold_hi << 32) | (u64)threshold_lo;
    const u32 level = tb_leaf_level(leaves[i], leaves[i + 1u], bits, levels);
    u32 first = 0u, slot = 0u;
    u32 op = 1u;
    if (tb_nf_group(leaves, live, i, level, bits, levels, &first, &slot) && slot > 0u &&
        v[capacity + first] <= threshold) {
        op = 0u;
    } else {
        // split_op(W, threshold, 4^bits, level): bar_j = threshold * 4^(bits (j - 1)), saturated.
        const u64 w = v[i];
        u32 jmax = TB_NF_MAX_JUMP_BITS / bits;
        if (jmax == 0u) jmax = 1u;
        for (u32 j = jmax; j >= 1u; --j) {
            const u32 sh = 2u * bits * (j - 1u);
            const u64 bar = (sh > 0u && (threshold >> (64u - sh)) != 0ull) ? 0xffffffffffffffffull : threshold << sh;
            if (w > bar && level + j <= levels) {
                op = 1u << (bits * j);
                break;
            }
        }
    }
    ops[i] = op;
    if (op != 1u) atomicOr(&status[TB_CHANGED], 1u);
}

extern "C" __global__ void __launch_bounds__(TB_THREADS)
    tb_nf_scatter(const u64* __restrict__ leaves, const u32* __restrict__ ops, const u32* __restrict__ offsets,
                  u64* __restrict__ next, u32* __restrict__ status, u32* starts, u64* vals, u32 capacity, u32 parity,
                  u32 bits, u32 levels) {
    if (status[TB_STATE] != TB_RUN || status[TB_CHANGED] == 0u) return;
    const u32 live = tb_live(status, capacity);
    const u32 total = offsets[live];
    const u64 item = tb_item();
    if (total > capacity) {
        if (item == 0) {
            status[TB_OVERFLOW] = 1u;
            status[TB_NEEDED] = total;
        }
        return;
    }
    if (item > live) return;
    const u32 i = (u32)item;
    const u32* s = starts + (u64)parity * (capacity + 1u);
    u32* ns = starts + (u64)(parity ^ 1u) * (capacity + 1u);
    const u64* v = vals + (u64)parity * 2u * capacity;
    u64* nv = vals + (u64)(parity ^ 1u) * 2u * capacity;
    if (i == live) {
        next[total] = tb_key_end(bits, levels);
        ns[total] = s[live];
        return;
    }
    const u32 op = ops[i];
    if (op == 0u) return;
    const u32 o = offsets[i];
    const u64 key = leaves[i];
    if (op == 1u) {
        next[o] = key;
        ns[o] = s[i];
        if (i + 1u < live && ops[i + 1u] == 0u) {
            nv[o] = v[capacity + i];  // the merged parent's value (NO_GROUP == FRESH: evaluated)
            nv[capacity + o] = TB_NF_NO_GROUP;
        } else {
            nv[o] = v[i];
            nv[capacity + o] = v[capacity + i];
        }
        return;
    }
    const u32 level = tb_leaf_level(key, leaves[i + 1u], bits, levels);
    const u32 jump = tb_ctz64(op) / bits;
    const u64 step = 1ull << (bits * (levels - level - jump));
    const u32 lo = s[i];
    const u64 hi = (u64)s[i + 1u];
    for (u32 c = 0u; c < op; ++c) {
        next[o + c] = key + (u64)c * step;
        ns[o + c] = lo;
        nv[o + c] = TB_NF_FRESH;
        nv[capacity + o + c] = c == 0u ? TB_NF_NO_GROUP : hi;
    }
}

extern "C" __global__ void __launch_bounds__(TB_THREADS)
    tb_nf_stencil_counts(const u64* __restrict__ leaves, const u32* __restrict__ starts, const u64* __restrict__ keys,
                         const u32* __restrict__ geom, const u64* __restrict__ qkeys, const u32* __restrict__ qmeta,
                         u64* __restrict__ out, u32 queries, u32 live, u32 n, u32 hilbert, u32 bits, u32 levels) {
    const u64 q = tb_item();
    if (q >= queries) return;
    out[q] = tb_nf_stencil(leaves, starts, keys, geom, live, n, qkeys[q], qmeta[2u * q], qmeta[2u * q + 1u], hilbert,
                           bits, levels);
}
