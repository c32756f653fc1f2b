// kernels/tree/view.cu — the TreeView on the GPU (crates/orrery-tree-build/src/gpu_view),
// the CUDA twin of shaders/tree/view.wgsl: same entry points, same arguments (buffers
// first, then scalars), same integer arithmetic; f64 boxes in CUDA only.
//
// What it computes: the arrays of crates/orrery-tree-build/src/view/steps.rs (the CPU
// reference, which sorts placeholder keys), by a route that needs no 64-bit sort. Every
// node starts at the first key of its first leaf, so the nodes that start at K[j] form a
// chain: levels top_j..=level_j of leaf j, top_j the coarsest level at which K[j] starts
// a cell. Depth-first preorder sorts nodes by (first key, level), so it lists the chains
// of leaves 0, 1, ... in turn, each coarsest node first: the DFS position of node
// (j, v) is S[j] + v - top_j, S the exclusive scan of the chain lengths. Level order
// (the view's node numbering: by level, then key) is DFS order stably sorted by level:
// one 8-bit radix pass. From K (L + 1 keys), the leaf starts lfp (L + 1):
//
//   tv_setup            one thread: the live leaf count L (from the device count, clamped
//                       to the bound, at least 1), L - 1, the particle count lfp[L]
//                       (clamped), input error bits (meta words below)
//   tv_chain_counts     per leaf: its chain length level_j - top_j + 1; checks lfp
//   (the executor's counted exclusive scan: chain starts S, the node count at S[L])
//   tv_chains           per node slot: thread j < L writes its chain's levels (the sort
//                       keys) and leaf j at DFS positions S[j]..S[j + 1]; slots >= N get
//                       key u64::MAX (sorts last); the node count N and the internal-node
//                       check (N - L = (L - 1) / (2^b - 1) on a valid leaf array)
//   (the executor sorts (level, leaf) pairs on key bits 0..8, stable: level order)
//   tv_order            per node n: DFS position d and its inverse (a scatter), level,
//                       key K[j], placeholder key (sorted, for tv_levels and the view)
//   tv_nodes            per node: leaf range (a leaf: j..j + 1; internal: a galloping
//                       search of K up from j for the cell's end), first child = the node
//                       at DFS position d + 1
//   tv_links            per node: its children's parent (the 2^b children of a node are
//                       consecutive in level order; parents are filled with NONE before,
//                       so the root keeps NONE), escape = the head of the chain of the
//                       first leaf past the node's leaves
//   tv_ranges           per node: particle range; leaf -> node (a scatter)
//   tv_levels           per level 0..levels + 1: level offsets, parents per level, depth
//   tv_child_centric    per node: child-centric position, its inverse, child indices
//   tv_nf               per node: the leaf's NF value or NF_INTERNAL (u64::MAX)
//   tv_particle_leaves  per 256 leaves: their particles' leaf, upper_bound(lfp[0..L], q) - 1
//                       (the search over the leaves' starts in shared memory; stores
//                       coalesced: a chunk's particles are one range)
//   tv_boxes_f32/_f64   per node: centre and half-extent (Geometry::cell_box's rule,
//                       every operation correctly rounded, no FMA: __fmul_rn/__fadd_rn,
//                       __dmul_rn/__dadd_rn; T(corner) = __double2float_rn(__ull2double_rn))
//
// Launch shape: one thread per item (leaf, node slot, level), blocks of
// TV_ITEM_THREADS (any multiple of 32 works), a 1D grid sized for the host-side bound;
// threads past the live count (read from meta, written on the device) return at once.
// Why: the leaf count may live on the device (the tree update chains the view without a
// host read), so every launch is sized for the capacity bound and the live counts are
// device words; every step is a few loads per element, memory bound, so one thread per
// element and no shared memory.
//
// Buffers: every index is u32; K, P, node keys and NF values are u64. meta (u32 x 8):
//   0 L, 1 L - 1, 2 internal nodes, 3 N = min(S[L], node bound), 4 particles lfp[L]
//   (clamped), 5 depth, 6 error bits (TV_ERR_*), 7 unused.
//
// Invariants: every read index is clamped into its array's live range, so any input
// (an invalid leaf array, decreasing starts) gives a defined result, never a fault; the
// host reports the error bits and TreeView::from_parts checks the result. On a valid
// leaf array every search returns lower_bound_one's index, so the arrays are the CPU's.
//
// Measured cost (H200, uniform 25.6M, 3.75M leaves): the earlier route (placeholder keys
// of every node, a 64-bit sort of them, four binary searches per node) took 1.70 ms at
// 5223546; this one: docs/performance/tree.md.

typedef unsigned int u32;
typedef unsigned long long u64;

#define TV_NONE 0xffffffffu
#define TV_NF_INTERNAL 0xffffffffffffffffull
#define TV_ITEM_THREADS 256u

#define TV_META_LEAVES 0
#define TV_META_BOUNDARIES 1
#define TV_META_INTERNAL 2
#define TV_META_NODES 3
#define TV_META_PARTICLES 4
#define TV_META_DEPTH 5
#define TV_META_ERRORS 6

#define TV_ERR_NO_LEAVES 1u
#define TV_ERR_LEAF_BOUND 2u
#define TV_ERR_INTERNAL_COUNT 4u
#define TV_ERR_STARTS_ORIGIN 8u
#define TV_ERR_STARTS_DECREASE 16u
#define TV_ERR_PARTICLE_BOUND 32u
#define TV_ERR_NF_SENTINEL 64u

__device__ __forceinline__ u32 tv_item() { return blockIdx.x * blockDim.x + threadIdx.x; }

// Shifts defined for every amount (>= 64 gives 0), as the Rust unchecked forms never
// shift that far on valid input.
__device__ __forceinline__ u64 tv_shl(u64 v, u32 s) { return s >= 64u ? 0ull : v << s; }
__device__ __forceinline__ u64 tv_shr(u64 v, u32 s) { return s >= 64u ? 0ull : v >> s; }

// KeyLayout arithmetic (orrery_core::sfc::KeyLayout, the _unchecked forms).
__device__ __forceinline__ u32 tv_size_log2(u32 level, u32 b, u32 levels) {
    return b * (levels > level ? levels - level : 0u);
}
__device__ __forceinline__ u64 tv_cell_size(u32 level, u32 b, u32 levels) {
    return tv_shl(1ull, tv_size_log2(level, b, levels));
}
// steps::placeholder_key, placeholder_level.
__device__ __forceinline__ u64 tv_placeholder(u64 start, u32 level, u32 b, u32 levels) {
    return tv_shl(1ull, b * level) | tv_shr(start, tv_size_log2(level, b, levels));
}
__device__ __forceinline__ u32 tv_placeholder_level(u64 p, u32 b) {
    return p == 0ull ? 0u : (63u - (u32)__clzll((long long)p)) / b;
}

// orrery_core::executor::lower_bound_one: the halving loop.
__device__ __forceinline__ u32 tv_lower_bound_u64(const u64* a, u32 n, u64 q) {
    u32 first = 0u, count = n;
    while (count > 0u) {
        u32 step = count / 2u, probe = first + step;
        if (a[probe] < q) {
            first = probe + 1u;
            count -= step + 1u;
        } else {
            count = step;
        }
    }
    return first;
}

extern "C" __global__ void tv_setup(const u32* __restrict__ count, const u32* __restrict__ lfp,
                                    u32* __restrict__ meta, u32 leaf_bound, u32 particle_bound) {
    if (tv_item() != 0u) return;
    u32 err = 0u;
    u32 l = count[0];
    if (l > leaf_bound) {
        l = leaf_bound;
        err |= TV_ERR_LEAF_BOUND;
    }
    if (l == 0u) {
        l = 1u;
        err |= TV_ERR_NO_LEAVES;
    }
    u32 p = lfp[l];
    if (p > particle_bound) {
        p = particle_bound;
        err |= TV_ERR_PARTICLE_BOUND;
    }
    if (lfp[0] != 0u) err |= TV_ERR_STARTS_ORIGIN;
    meta[TV_META_LEAVES] = l;
    meta[TV_META_BOUNDARIES] = l - 1u;
    meta[TV_META_INTERNAL] = 0u;
    meta[TV_META_NODES] = 0u;
    meta[TV_META_PARTICLES] = p;
    meta[TV_META_DEPTH] = 0u;
    meta[TV_META_ERRORS] = err;
    meta[7] = 0u;
}

// A leaf's level from its size K[j + 1] - K[j] (a power of 2^b; clamped to 0..=levels).
__device__ __forceinline__ u32 tv_leaf_level(u64 k0, u64 k1, u32 b, u32 levels) {
    u64 size = k1 - k0;
    u32 steps = (size == 0ull ? 64u : (u32)(__ffsll((long long)size) - 1)) / b;
    return steps >= levels ? 0u : levels - steps;
}
// The coarsest level at which `key` starts a cell (0 for key 0).
__device__ __forceinline__ u32 tv_aligned_level(u64 key, u32 b, u32 levels) {
    u32 steps = (key == 0ull ? 64u : (u32)(__ffsll((long long)key) - 1)) / b;
    return steps >= levels ? 0u : levels - steps;
}
// The chain of leaf j: the nodes that start at K[j], levels chain_top..=leaf level (its
// coarsest node first); `top` and `level` out.
__device__ __forceinline__ void tv_chain(const u64* keys, u32 j, u32 b, u32 levels, u32* top, u32* level) {
    u32 lv = tv_leaf_level(keys[j], keys[j + 1u], b, levels);
    *level = lv;
    *top = min(tv_aligned_level(keys[j], b, levels), lv);
}
// lower_bound_one over a[lo..n) for q (lo when a[lo] >= q, n when none is): galloping up
// from lo, then the halving loop in the window found.
__device__ __forceinline__ u32 tv_lower_bound_after(const u64* a, u32 lo, u32 n, u64 q) {
    u32 left = lo, last = n;
    for (u64 step = 1ull; (u64)left + step - 1ull < (u64)n; step <<= 1) {
        u32 probe = left + (u32)step - 1u;
        if (a[probe] >= q) {
            last = probe;
            break;
        }
        left = probe + 1u;
    }
    return left + tv_lower_bound_u64(a + left, last - left, q);
}

extern "C" __global__ void tv_chain_counts(const u64* __restrict__ keys, const u32* __restrict__ lfp,
                                           u32* __restrict__ meta, u32* __restrict__ counts, u32 leaf_bound,
                                           u32 bits_per_level, u32 levels) {
    u32 j = tv_item();
    if (j >= leaf_bound || j >= meta[TV_META_LEAVES]) return;
    u32 top, level;
    tv_chain(keys, j, bits_per_level, levels, &top, &level);
    counts[j] = level - top + 1u;
    if (lfp[j] > lfp[j + 1u]) atomicOr(meta + TV_META_ERRORS, TV_ERR_STARTS_DECREASE);
}

extern "C" __global__ void tv_chains(const u64* __restrict__ keys, const u32* __restrict__ chain_starts,
                                     u32* __restrict__ meta, u64* __restrict__ level_keys,
                                     u32* __restrict__ leaf_of, u32 node_bound, u32 bits_per_level, u32 levels) {
    u32 t = tv_item();
    if (t >= node_bound) return;
    u32 b = bits_per_level;
    u32 l = meta[TV_META_LEAVES];
    u32 total = chain_starts[l];
    u32 nodes = min(total, node_bound);
    if (t == 0u) {
        u32 internal = total >= l ? total - l : 0u;
        if (total < l || internal != (l - 1u) / ((1u << b) - 1u)) atomicOr(meta + TV_META_ERRORS, TV_ERR_INTERNAL_COUNT);
        meta[TV_META_INTERNAL] = internal;
        meta[TV_META_NODES] = nodes;
    }
    if (t < l) {
        u32 top, level;
        tv_chain(keys, t, b, levels, &top, &level);
        u32 start = chain_starts[t];
        for (u32 v = top; v <= level; ++v) {
            u32 d = start + (v - top);
            if (d >= nodes) break;
            level_keys[d] = (u64)v;
            leaf_of[d] = t;
        }
    }
    if (t >= nodes) {
        level_keys[t] = 0xffffffffffffffffull;
        leaf_of[t] = 0u;
    }
}

extern "C" __global__ void tv_order(u64* __restrict__ pkeys, const u32* __restrict__ leaf_of,
                                    const u64* __restrict__ keys, const u32* __restrict__ chain_starts,
                                    const u32* __restrict__ meta, u32* __restrict__ dfs_positions,
                                    u32* __restrict__ dfs_order, u32* __restrict__ levels_out,
                                    u64* __restrict__ node_keys, u32 node_bound, u32 bits_per_level, u32 levels) {
    u32 n = tv_item();
    u32 nodes = meta[TV_META_NODES];
    if (n >= node_bound || n >= nodes) return;
    u32 b = bits_per_level;
    u32 l = meta[TV_META_LEAVES];
    u32 level = min((u32)(pkeys[n] & 0xffull), levels);
    u32 j = min(leaf_of[n], l - 1u);
    u32 top, leaf_level;
    tv_chain(keys, j, b, levels, &top, &leaf_level);
    u32 d = min(chain_starts[j] + (level > top ? level - top : 0u), nodes - 1u);
    u64 key = keys[j];
    dfs_positions[n] = d;
    dfs_order[d] = n;
    levels_out[n] = level;
    node_keys[n] = key;
    pkeys[n] = tv_placeholder(key, level, b, levels);
}

extern "C" __global__ void tv_nodes(const u32* __restrict__ leaf_of, const u64* __restrict__ keys,
                                    const u32* __restrict__ dfs_positions, const u32* __restrict__ dfs_order,
                                    const u32* __restrict__ levels_in, const u32* __restrict__ meta,
                                    u32* __restrict__ first_children, u32* __restrict__ leaf_begins,
                                    u32* __restrict__ leaf_counts, u32 node_bound, u32 bits_per_level, u32 levels) {
    u32 n = tv_item();
    u32 nodes = meta[TV_META_NODES];
    if (n >= node_bound || n >= nodes) return;
    u32 b = bits_per_level;
    u32 l = meta[TV_META_LEAVES];
    u32 j = min(leaf_of[n], l - 1u);
    u32 level = levels_in[n];
    u32 leaf_level = tv_leaf_level(keys[j], keys[j + 1u], b, levels);
    u32 end = j + 1u;
    if (level < leaf_level) end = tv_lower_bound_after(keys, j + 1u, l + 1u, keys[j] + tv_cell_size(level, b, levels));
    end = min(end, l);
    u32 count = end > j ? end - j : 0u;
    leaf_begins[n] = j;
    leaf_counts[n] = count;
    first_children[n] = count == 1u ? TV_NONE : dfs_order[min(dfs_positions[n] + 1u, nodes - 1u)];
}

extern "C" __global__ void tv_links(const u32* __restrict__ chain_starts, const u32* __restrict__ dfs_order,
                                    const u32* __restrict__ leaf_begins, const u32* __restrict__ leaf_counts,
                                    const u32* __restrict__ first_children, const u32* __restrict__ meta,
                                    u32* __restrict__ parents, u32* __restrict__ escapes, u32 node_bound,
                                    u32 bits_per_level) {
    u32 n = tv_item();
    u32 nodes = meta[TV_META_NODES];
    if (n >= node_bound || n >= nodes) return;
    u32 l = meta[TV_META_LEAVES];
    // The 2^b children of a node are consecutive in level order (siblings sorted by key,
    // nothing else of their level in the parent's cell): the parent writes their parent.
    // Node 0 (the root) is never written: it keeps the fill's NONE on any input.
    u32 fc = first_children[n];
    if (fc != TV_NONE) {
        u32 children = 1u << bits_per_level;
        for (u32 c = 0u; c < children; ++c)
            if (fc + c < nodes && fc + c != 0u) parents[fc + c] = n;
    }
    u32 end = leaf_begins[n] + leaf_counts[n];
    escapes[n] = end >= l ? TV_NONE : dfs_order[min(chain_starts[end], nodes - 1u)];
}

extern "C" __global__ void tv_ranges(const u32* __restrict__ lfp, const u32* __restrict__ leaf_begins,
                                     const u32* __restrict__ leaf_counts, const u32* __restrict__ meta,
                                     u32* __restrict__ particle_begins, u32* __restrict__ particle_counts,
                                     u32* __restrict__ leaf_nodes, u32 node_bound) {
    u32 n = tv_item();
    u32 nodes = meta[TV_META_NODES];
    if (n >= node_bound || n >= nodes) return;
    u32 l = meta[TV_META_LEAVES];
    u32 lb = leaf_begins[n], lc = leaf_counts[n];
    u32 first = min(lb, l);
    u32 end = (u64)lb + (u64)lc < (u64)l ? lb + lc : l;
    u32 begin = lfp[first];
    particle_begins[n] = begin;
    particle_counts[n] = lfp[end] - begin;
    if (lc == 1u && lb < l) leaf_nodes[lb] = n;
}

extern "C" __global__ void tv_levels(const u64* __restrict__ pkeys, u32* __restrict__ meta,
                                     u32* __restrict__ level_offsets, u32* __restrict__ parents_per_level,
                                     u32 bits_per_level, u32 levels) {
    u32 l = tv_item();
    if (l >= levels + 2u) return;
    u32 b = bits_per_level;
    u32 nodes = meta[TV_META_NODES];
    u32 depth = nodes == 0u ? 0u : min(tv_placeholder_level(pkeys[nodes - 1u], b), levels);
    if (l == 0u) meta[TV_META_DEPTH] = depth;
    // The first node of level x (x <= depth), then N.
#define TV_OFFSET(x) ((x) <= depth ? tv_lower_bound_u64(pkeys, nodes, tv_shl(1ull, b * (x))) : nodes)
    level_offsets[l] = TV_OFFSET(l);
    if (l <= levels) parents_per_level[l] = l < depth ? (TV_OFFSET(l + 2u) - TV_OFFSET(l + 1u)) >> b : 0u;
#undef TV_OFFSET
}

// layouts::child_centric_position of node `node` on level `level`.
__device__ __forceinline__ u32 tv_cc_position(u32 node, u32 level, const u32* level_offsets,
                                              const u32* parents_per_level, u32 b, u32 levels) {
    if (level == 0u) return node;
    u32 lv = min(level, levels + 1u);
    u32 base = level_offsets[lv];
    u32 m = parents_per_level[min(lv - 1u, levels)];
    u32 j = node - base;
    u32 c = 1u << b;
    return base + (j % c) * m + j / c;
}

extern "C" __global__ void tv_child_centric(const u32* __restrict__ levels_in,
                                            const u32* __restrict__ first_children,
                                            const u32* __restrict__ level_offsets,
                                            const u32* __restrict__ parents_per_level,
                                            const u32* __restrict__ meta, u32* __restrict__ positions,
                                            u32* __restrict__ nodes_at, u32* __restrict__ child_indices,
                                            u32 node_bound, u32 bits_per_level, u32 levels) {
    u32 n = tv_item();
    u32 nodes = meta[TV_META_NODES];
    if (n >= node_bound || n >= nodes) return;
    u32 b = bits_per_level;
    u32 level = levels_in[n];
    u32 q = tv_cc_position(n, level, level_offsets, parents_per_level, b, levels);
    positions[n] = q;
    if (q < nodes) {
        nodes_at[q] = n;
        u32 fc = first_children[n];
        child_indices[q] =
            fc == TV_NONE ? TV_NONE : tv_cc_position(fc, level + 1u, level_offsets, parents_per_level, b, levels);
    }
}

extern "C" __global__ void tv_nf(const u64* __restrict__ nf, const u32* __restrict__ leaf_begins,
                                 const u32* __restrict__ leaf_counts, u32* __restrict__ meta,
                                 u64* __restrict__ node_nf, u32 node_bound) {
    u32 n = tv_item();
    u32 nodes = meta[TV_META_NODES];
    if (n >= node_bound || n >= nodes) return;
    u64 v = TV_NF_INTERNAL;
    if (leaf_counts[n] == 1u) {
        u32 l = meta[TV_META_LEAVES];
        v = nf[min(leaf_begins[n], l - 1u)];
        if (v == TV_NF_INTERNAL) atomicOr(meta + TV_META_ERRORS, TV_ERR_NF_SENTINEL);
    }
    node_nf[n] = v;
}

// Leaves per group of tv_particle_leaves (its shared array holds their starts and the end).
#define TV_GROUP_LEAVES 256u

// One block per TV_GROUP_LEAVES-leaf chunks of its own blockDim.x leaves: the chunk's
// leaf starts go to shared memory, then the block writes the chunk's particles (one
// contiguous range, since leaf ranges are consecutive) with coalesced stores, each
// particle's leaf found by the halving loop over the shared starts. The result is
// upper_bound(lfp[0..L], q) - 1 for every particle (the leaf search of steps.rs).
extern "C" __global__ void tv_particle_leaves(const u32* __restrict__ lfp, const u32* __restrict__ meta,
                                              u32* __restrict__ particle_leaves, u32 leaf_bound,
                                              u32 particle_bound) {
    __shared__ u32 starts[TV_GROUP_LEAVES + 1u];
    u32 lim = min(meta[TV_META_LEAVES], leaf_bound);
    u32 p = min(meta[TV_META_PARTICLES], particle_bound);
    for (u32 c = 0u; c < blockDim.x; c += TV_GROUP_LEAVES) {
        u32 j0 = blockIdx.x * blockDim.x + c;
        u32 count = j0 < lim ? min(TV_GROUP_LEAVES, lim - j0) : 0u;
        __syncthreads();  // the previous chunk is done with `starts`
        if (count > 0u)
            for (u32 i = threadIdx.x; i <= count; i += blockDim.x) starts[i] = min(lfp[j0 + i], p);
        __syncthreads();
        if (count == 0u) continue;
        for (u32 q = starts[0] + threadIdx.x; q < starts[count]; q += blockDim.x) {
            u32 first = 0u, n = count;
            while (n > 0u) {
                u32 step = n / 2u, probe = first + step;
                if (starts[probe] <= q) {
                    first = probe + 1u;
                    n -= step + 1u;
                } else {
                    n = step;
                }
            }
            particle_leaves[q] = j0 + first - 1u;
        }
    }
}

// ---- boxes ------------------------------------------------------------------------------

// Every other bit of a Morton key, from bit 0 (morton::compact_3d).
__device__ __forceinline__ u64 tv_compact3(u64 v) {
    v &= 0x1249249249249249ull;
    v = (v ^ (v >> 2)) & 0x10c30c30c30c30c3ull;
    v = (v ^ (v >> 4)) & 0x100f00f00f00f00full;
    v = (v ^ (v >> 8)) & 0x1f0000ff0000ffull;
    v = (v ^ (v >> 16)) & 0x1f00000000ffffull;
    v = (v ^ (v >> 32)) & 0x1fffffull;
    return v;
}

// The integer coordinates of a key: curve 0 Morton, 1 Hilbert (table = DECODE_3D, one
// lookup per level), 2 binary (table = the split axis of each of `levels` levels).
__device__ __forceinline__ void tv_decode(u64 key, u32 curve, u32 levels, const u32* table, u64 c[3]) {
    if (curve == 2u) {
        c[0] = c[1] = c[2] = 0ull;
        for (u32 l = 0u; l < levels; ++l) {
            u64 bit = (key >> (levels - 1u - l)) & 1ull;
            u32 a = min(table[l], 2u);
            c[a] = (c[a] << 1) | bit;
        }
        return;
    }
    u64 m = key & ((1ull << 63) - 1ull);
    if (curve == 1u) {
        u64 out = 0ull;
        u32 entry = 0u;
        for (u32 l = 21u; l > 0u; --l) {
            u32 digit = (u32)((key >> (3u * (l - 1u))) & 7ull);
            entry = table[((entry & ~7u) | digit) % 192u];
            out = (out << 3) | (u64)(entry & 7u);
        }
        m = out;
    }
    c[0] = tv_compact3(m >> 2);
    c[1] = tv_compact3(m >> 1);
    c[2] = tv_compact3(m);
}

// T(v) as the CPU computes it: u64 -> f64 -> T, each round-to-nearest-even; products and
// sums correctly rounded and never contracted into an FMA.
__device__ __forceinline__ float tv_of_u64(u64 v, float) { return __double2float_rn(__ull2double_rn(v)); }
__device__ __forceinline__ double tv_of_u64(u64 v, double) { return __ull2double_rn(v); }
__device__ __forceinline__ float tv_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double tv_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float tv_add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double tv_add(double a, double b) { return __dadd_rn(a, b); }

// Geometry::cell_box per axis: corner = (c >> s) << s, side = T(2^s) * unit,
// half = side * 0.5, lo = min + T(corner) * unit, centre = lo + half.
template <typename T>
__device__ __forceinline__ void tv_boxes(const u64* node_keys, const u32* levels_in, const u32* table,
                                         const u32* side_log2, const u32* meta, T* centres, T* halves,
                                         u32 node_bound, u32 curve, u32 levels, const T mins[3],
                                         const T units[3]) {
    u32 n = tv_item();
    if (n >= node_bound || n >= meta[TV_META_NODES]) return;
    u64 c[3];
    tv_decode(node_keys[n], curve, levels, table, c);
    u32 level = min(levels_in[n], levels);
    for (u32 a = 0u; a < 3u; ++a) {
        u32 s = min(side_log2[level * 3u + a], 63u);
        u64 corner = (c[a] >> s) << s;
        T side = tv_mul(tv_of_u64(1ull << s, T(0)), units[a]);
        T half = tv_mul(side, T(0.5));
        T lo = tv_add(mins[a], tv_mul(tv_of_u64(corner, T(0)), units[a]));
        centres[3u * n + a] = tv_add(lo, half);
        halves[3u * n + a] = half;
    }
}

extern "C" __global__ void tv_boxes_f32(const u64* __restrict__ node_keys, const u32* __restrict__ levels_in,
                                        const u32* __restrict__ table, const u32* __restrict__ side_log2,
                                        const u32* __restrict__ meta, float* __restrict__ centres,
                                        float* __restrict__ halves, u32 node_bound, u32 curve, u32 levels,
                                        float min_x, float min_y, float min_z, float unit_x, float unit_y,
                                        float unit_z) {
    const float mins[3] = {min_x, min_y, min_z};
    const float units[3] = {unit_x, unit_y, unit_z};
    tv_boxes<float>(node_keys, levels_in, table, side_log2, meta, centres, halves, node_bound, curve, levels, mins,
                    units);
}

extern "C" __global__ void tv_boxes_f64(const u64* __restrict__ node_keys, const u32* __restrict__ levels_in,
                                        const u32* __restrict__ table, const u32* __restrict__ side_log2,
                                        const u32* __restrict__ meta, double* __restrict__ centres,
                                        double* __restrict__ halves, u32 node_bound, u32 curve, u32 levels,
                                        double min_x, double min_y, double min_z, double unit_x, double unit_y,
                                        double unit_z) {
    const double mins[3] = {min_x, min_y, min_z};
    const double units[3] = {unit_x, unit_y, unit_z};
    tv_boxes<double>(node_keys, levels_in, table, side_log2, meta, centres, halves, node_bound, curve, levels, mins,
                     units);
}
