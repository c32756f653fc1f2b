// kernels/balltree/build.cu — the GPU ball tree build (crates/orrery-balltree/src/gpu).
//
// What it computes
//   The batched Erwin ball tree, in two phases driven by a host plan that depends only on
//   the batch sizes (gpu/plan.rs): *global levels*, each splitting the level's nodes with
//   launches over all points, then the *local phase*, in which one block finishes
//   subtrees in shared memory. The host's Strategy (gpu/build.rs) sets the split between
//   them and how a global level splits; all three give the same tree:
//     LevelSort  global levels for every node above the leaves (one stable sort of all
//                points per level); the local phase only writes the leaves (2 slots each).
//     Hybrid     global levels while a node has more than BT_LOCAL_CAPACITY slots, one
//                stable sort of all points per level; bt_local_F finishes the subtrees.
//     Select     (the default) Hybrid's levels, but each selects every node's median by a
//                segmented radix selection and partitions stably instead of sorting; the
//                f32 local phase is bt_local_ordered_f32 (packed u64 key), f64 bt_local_f64.
//   Split rule (crates/orrery-balltree/src/split.rs): the dimension of largest spread,
//   compared exactly (gpu/spread.rs), ties to the lowest; the left child gets the
//   floor(m/2) first points in the order (coordinate, point index). -0.0 and 0.0 are
//   equal coordinates.
//
//   Per global level k of LevelSort and Hybrid (segments = the level's nodes, gpu/plan.rs):
//     bt_reset_bounds  lo[i] = ~0, hi[i] = 0                        i < count (u32 words)
//     bt_bounds_F      node_of[perm[p]] = segment of position p (binary search in the
//                      level's starts); per active segment and dimension, min / max of
//                      the ordered codes of its points' coordinates (integer atomics:
//                      exact and deterministic)
//     bt_choose_F      seg_dim[s] = split dimension of active segment s, or FROZEN
//     bt_keys_f32      keys[i] = node_of[i] << 32 | code(points[i][seg_dim]), vals[i] = i
//                      (code 0 in frozen segments); the host then sorts (keys, vals)
//                      stably on bits 0..32 + node_bits, so vals is the next perm.
//     bt_keys_f64      keys[i] = code(points[i][seg_dim]), vals[i] = i; host sorts on
//                      0..64, then bt_node_keys keys[p] = node_of[vals[p]] and sorts on
//                      0..node_bits (stable LSD composition: the same order).
//   Per global level of the Select strategy (after bt_transpose_F once: coords_t[d][p]):
//     bt_reset_bounds, bt_sbounds_F (bounds from coords_t, coalesced), bt_choose_F,
//     bt_select_init   state[s] = rank floor(m/2), nothing resolved; pending += active
//     rounds r < R     bt_select_count_F: histogram of the r-th 11-bit digit of every
//                      candidate's key (code, point index); bt_select_find_F: per
//                      segment the bucket of the pivot's rank, decided when it is the
//                      bucket's smallest (see the section's comment)
//     bt_select_flags_F, the executor's exclusive scan, bt_select_scatter_F: the stable
//                      partition of perm and coords_t (ping-pong buffers)
//   Local phase:
//     bt_local_F       per block: up to CAPACITY / 2^h subtrees of 2^h slots. Stage the
//                      block's coordinates contiguously (one gather); per local level
//                      the split dimension of every segment (warp shuffles, then shared
//                      memory across warps), keys, a bitonic sort of every aligned
//                      segment by (code, global index) with padding last, and the move
//                      of the right child's points to the front of the segment's second
//                      half; finally the leaves (1 or 2 points, ascending index; a
//                      single point fills both slots, the second masked).
//     bt_local_ordered_f32  the same with one u64 key (code << 32 | local number) per
//                      slot: after Select's stable partitions the local numbers of a
//                      subtree are in global-index order.
//
// Launch shapes
//   bt_reset_bounds, bt_choose_F, bt_keys_F, bt_node_keys: 1D, one thread per item, any
//     block size (the host uses BT_ITEM_THREADS).
//   bt_bounds_F: blocks of exactly BT_ITEM_THREADS threads, BT_ITEM_THREADS * BT_BOUNDS_ITEMS
//     positions per block (thread t takes BT_BOUNDS_ITEMS consecutive positions).
//   bt_transpose_F, bt_select_init, bt_select_flags_F, bt_select_scatter_F: 1D, one
//     thread per item (position, or segment for bt_select_init), any block size.
//   bt_sbounds_F, bt_select_count_F: as bt_bounds_F (exactly BT_ITEM_THREADS threads,
//     BT_ITEM_THREADS * BT_BOUNDS_ITEMS positions per block).
//   bt_select_find_F: one block per segment of the level, exactly BT_ITEM_THREADS threads
//     (BT_SELECT_BINS / BT_ITEM_THREADS = 8 bins each).
//   bt_local_F, bt_local_ordered_f32: one block per entry of `blocks` (num_blocks),
//     exactly BT_LOCAL_THREADS threads (__launch_bounds__ for 2 blocks per SM); thread t
//     owns slots t + r * BT_LOCAL_THREADS for the moves and the consecutive slots
//     [4t, 4t + 4) for the reductions.
//
// Buffers (direction, length, layout)
//   points      read   n * dim       F (float | double), row-major
//   seg_starts  read   all levels    u32, first position of each segment; level at offset
//   seg_active  read   all levels    u32, 1 = splits at this level, 0 = frozen
//   perm        read   n             u32, point indices in current tree order
//   node_of     r/w    n             u32, segment of each point (this level)
//   lo, hi      r/w    segments*dim  ordered codes (u32 for float, u64 for double)
//   seg_dim     r/w    segments      u32, split dimension or BT_FROZEN
//   keys, vals  write  n             u64 sort keys, u32 point indices
//   coords_t    read   dim * n       F, Select: position order, dimension after dimension
//   coords_out  write  dim * n       F, Select: coords_t after the level's partition
//   perm_out    write  n             u32, Select: perm after the partition (ping-pong)
//   state       r/w    segments * 8  u32, Select: per-segment selection state
//   hist        r/w    segments*2048 u32, Select: round histograms, zero between rounds
//   pending     r/w    1             u32, Select: active undecided segments, 0 between levels
//   flags       write  n             u32, Select: 1 = goes to the left child
//   scan        read   n + 1         u32, Select: exclusive scan of flags
//   nodes       read   3 * subtrees  u32 (first position, points, first slot)
//   blocks      read   4 * blocks    u32 (first subtree, subtrees, h, staging base)
//   staged      r/w    sum(slots)*dim F, block b's coordinates from base_b * dim, by the
//                                    block's local point number (its slot at the start)
//   out_idx     write  slots         u32 point index per slot
//   out_mask    write  slots         u32 1 = real point, 0 = padding duplicate
//
// Invariants
//   Coordinates are finite (validated on the host). Positions of one segment are
//   contiguous and segments are in position order. A subtree of 2^h slots holds
//   m points with 2^(h-2) < m <= 2^h, so every segment at local levels g >= 2 holds at
//   least two points and every leaf one or two. Ordered codes of finite values are below
//   0xff800000 (float) / 0xfff0000000000000 (double), so the all-ones padding key sorts
//   last and equal keys are two real points or two paddings.
//
// Measured cost (H200, driver 580.159.04, ncu gpu__time_duration, 3D uniform f32; build
// times of every strategy and executor, and these profiles' summaries, with commit and
// date: docs/performance/balltree.md):
//   1 x 2^20 Hybrid (1.98 ms in kernels, 2.02 ms by events): per global level (9)
//   bt_reset_bounds 1.7 us, bt_bounds 39 us (13 us at level 0), bt_choose 3 us, bt_keys
//   9.3 us, the executor's sort 118 us; bt_local 462 us (512 blocks of 2048 slots).
//   64 x 16384 Hybrid: 3 global levels, bt_local 460 us; 0.98 ms by events.
//   Resources (sm_90): bt_local_f32 56 registers, 27.8 KB shared; bt_local_f64 64, 36.1 KB;
//   bt_bounds_f32 32 registers.
//   1 x 2^20 Select (1.33 ms in kernels, 1.20 ms by events): per global level about
//   102 us (bt_sbounds 10.5, rounds: count 9-11 us busy (3 rounds) / 2.8 idle, find
//   3.6 / 2.4, flags 7, scan 7, scatter 16.6); bt_local_ordered_f32 405 us.
//   64 x 16384 Select: 0.75 ms in kernels (bt_local_ordered 400 us), 0.71 ms by events.
//   History: gathering coordinates from `points` at every local level instead of staging
//   them cost bt_local 503-540 us; a separate assignment kernel cost 16.5 us per level.
//   Register-resident bitonic steps (strides < 128 by warp shuffles, 10 barriers per
//   2048-slot sort instead of 66) measured no faster (bt_local is ALU-bound: 69% issue
//   slots busy, 2.8 IPC) and slower at 1024 slots (half the threads idle): reverted.
//   Warp-aggregated histogram atomics (__match_any_sync) in bt_select_count: slower
//   (13.9 / 11.9 / 9.1 us for the busy rounds against 9.4 / 10.5 / 8.3): removed. The
//   packed u64 key of bt_local_ordered_f32: 459 -> 400 us.
typedef unsigned int u32;
typedef unsigned long long u64;

#define BT_FROZEN 0xffffffffu
#define BT_PAD 0xffffffffu
#define BT_ITEM_THREADS 256u
#define BT_BOUNDS_ITEMS 4u
#define BT_LOCAL_CAPACITY 2048u
#define BT_LOCAL_THREADS 512u
#define BT_LOCAL_ITEMS (BT_LOCAL_CAPACITY / BT_LOCAL_THREADS)

// ---- per-element rules (host reference: gpu/spread.rs) ----------------------------------

template <typename F>
struct Coord;

template <>
struct Coord<float> {
    typedef u32 Ord;
    static __device__ __forceinline__ Ord ord(float x) {
        u32 b = __float_as_uint(x);
        if (b == 0x80000000u) b = 0u;  // -0.0 is 0.0
        return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    }
    static __device__ __forceinline__ float dec(Ord o) {
        return __uint_as_float((o & 0x80000000u) ? (o & 0x7fffffffu) : ~o);
    }
    static __device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
    static __device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
    static __device__ __forceinline__ float half(float a) { return __fmul_rn(a, 0.5f); }
    static __device__ __forceinline__ bool finite(float a) { return isfinite(a); }
};

template <>
struct Coord<double> {
    typedef u64 Ord;
    static __device__ __forceinline__ Ord ord(double x) {
        u64 b = (u64)__double_as_longlong(x);
        if (b == 0x8000000000000000ull) b = 0ull;
        return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
    }
    static __device__ __forceinline__ double dec(Ord o) {
        return __longlong_as_double((long long)((o & 0x8000000000000000ull) ? (o & 0x7fffffffffffffffull) : ~o));
    }
    static __device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
    static __device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
    static __device__ __forceinline__ double half(double a) { return __dmul_rn(a, 0.5); }
    static __device__ __forceinline__ bool finite(double a) { return isfinite(a); }
};

// The exact spread hi - lo as an error-free pair (TwoSum), halved when it overflows.
template <typename F>
struct Spread {
    u32 overflow;
    F s;
    F e;
};

template <typename F>
__device__ __forceinline__ Spread<F> spread_of(F lo, F hi) {
    typedef Coord<F> C;
    F a = hi, b = -lo;
    F s = C::add(a, b);
    u32 overflow = 0u;
    if (!C::finite(s)) {
        a = C::half(hi);
        b = -C::half(lo);
        s = C::add(a, b);
        overflow = 1u;
    }
    const F bb = C::sub(s, a);
    const F e = C::add(C::sub(a, C::sub(s, bb)), C::sub(b, bb));
    Spread<F> r;
    r.overflow = overflow;
    r.s = s;
    r.e = e;
    return r;
}

template <typename F>
__device__ __forceinline__ bool spread_greater(const Spread<F>& x, const Spread<F>& y) {
    if (x.overflow != y.overflow) return x.overflow > y.overflow;
    if (x.s != y.s) return x.s > y.s;
    return x.e > y.e;
}

template <typename F>
__device__ __forceinline__ Spread<F> spread_zero() {
    Spread<F> r;
    r.overflow = 0u;
    r.s = (F)0;
    r.e = (F)0;
    return r;
}

__device__ __forceinline__ u64 item_index() { return (u64)blockIdx.x * blockDim.x + threadIdx.x; }

// ---- global levels ------------------------------------------------------------------

// lo[i] = all ones, hi[i] = 0 for i < count 32-bit words (u64 bounds reset as 2 words).
extern "C" __global__ void bt_reset_bounds(u32* __restrict__ lo, u32* __restrict__ hi, u32 count) {
    const u64 i = item_index();
    if (i >= count) return;
    lo[i] = 0xffffffffu;
    hi[i] = 0u;
}

// The segment of position p: the last s < segments with starts[s] <= p (starts[0] = 0).
__device__ __forceinline__ u32 segment_of(const u32* __restrict__ starts, u32 segments, u32 p) {
    u32 lo = 0u, hi = segments;  // starts[lo] <= p < starts[hi] (starts[segments] is n)
    while (hi - lo > 1u) {
        const u32 mid = (lo + hi) >> 1;
        if (starts[mid] <= p) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// Segment assignment and bounds in one pass over the positions. Thread t takes the
// BT_BOUNDS_ITEMS consecutive positions from base + t * BT_BOUNDS_ITEMS: one binary
// search for the first, then a forward walk (segments hold at least one position).
template <typename F, bool TRANSPOSED>
__device__ __forceinline__ void bounds_impl(const F* __restrict__ points, const u32* __restrict__ seg_starts,
                                            const u32* __restrict__ seg_active, const u32* __restrict__ perm,
                                            u32* __restrict__ node_of, typename Coord<F>::Ord* __restrict__ lo_out,
                                            typename Coord<F>::Ord* __restrict__ hi_out, u32 n, u32 dim,
                                            u32 level_offset, u32 segments) {
    typedef Coord<F> C;
    typedef typename C::Ord O;
    __shared__ O red_lo[BT_ITEM_THREADS / 32];
    __shared__ O red_hi[BT_ITEM_THREADS / 32];
    const u32 tid = threadIdx.x;
    const u32 lane = tid & 31u, warp = tid >> 5;
    const u64 base = (u64)blockIdx.x * (BT_ITEM_THREADS * BT_BOUNDS_ITEMS);
    if (base >= n) return;
    const u64 end = min(base + (u64)(BT_ITEM_THREADS * BT_BOUNDS_ITEMS), (u64)n);
    const u32* starts = seg_starts + level_offset;
    const u32* active = seg_active + level_offset;
    const u32 first = segment_of(starts, segments, (u32)base);
    const u32 last = segment_of(starts, segments, (u32)(end - 1));
    u32 pt[BT_BOUNDS_ITEMS];
    u32 sg[BT_BOUNDS_ITEMS];
    const u64 p0 = base + (u64)tid * BT_BOUNDS_ITEMS;
    u32 s = (p0 < end) ? segment_of(starts, segments, (u32)p0) : 0u;
#pragma unroll
    for (u32 r = 0; r < BT_BOUNDS_ITEMS; ++r) {
        const u64 p = p0 + r;
        pt[r] = BT_PAD;
        sg[r] = BT_PAD;
        if (p < end) {
            while (s + 1u < segments && starts[s + 1u] <= (u32)p) ++s;
            pt[r] = TRANSPOSED ? (u32)p : perm[p];
            sg[r] = s;
            if (!TRANSPOSED) node_of[pt[r]] = s;
        }
    }
    if (first == last) {
        // The whole block lies in one segment: warp shuffles, then one warp over the
        // per-warp results, one atomic per bound.
        if (active[first] == 0u) return;
        for (u32 d = 0; d < dim; ++d) {
            O lo = ~(O)0, hi = (O)0;
#pragma unroll
            for (u32 r = 0; r < BT_BOUNDS_ITEMS; ++r) {
                if (pt[r] != BT_PAD) {
                    const O v = C::ord(TRANSPOSED ? points[(u64)d * n + pt[r]] : points[(u64)pt[r] * dim + d]);
                    lo = min(lo, v);
                    hi = max(hi, v);
                }
            }
#pragma unroll
            for (u32 w = 16u; w > 0u; w >>= 1) {
                lo = min(lo, (O)__shfl_xor_sync(0xffffffffu, lo, w));
                hi = max(hi, (O)__shfl_xor_sync(0xffffffffu, hi, w));
            }
            if (lane == 0u) {
                red_lo[warp] = lo;
                red_hi[warp] = hi;
            }
            __syncthreads();
            if (tid == 0u) {
                for (u32 k = 1; k < BT_ITEM_THREADS / 32; ++k) {
                    lo = min(lo, red_lo[k]);
                    hi = max(hi, red_hi[k]);
                }
                atomicMin(&lo_out[(u64)first * dim + d], lo);
                atomicMax(&hi_out[(u64)first * dim + d], hi);
            }
            __syncthreads();
        }
        return;
    }
    // Segment boundaries inside the block: runs per thread, one atomic per run and bound.
    for (u32 d = 0; d < dim; ++d) {
        u32 cur = BT_PAD;
        O lo = ~(O)0, hi = (O)0;
#pragma unroll
        for (u32 r = 0; r < BT_BOUNDS_ITEMS; ++r) {
            if (pt[r] == BT_PAD) continue;
            if (sg[r] != cur) {
                if (cur != BT_PAD && active[cur] != 0u) {
                    atomicMin(&lo_out[(u64)cur * dim + d], lo);
                    atomicMax(&hi_out[(u64)cur * dim + d], hi);
                }
                cur = sg[r];
                lo = ~(O)0;
                hi = (O)0;
            }
            if (active[cur] != 0u) {
                const O v = C::ord(TRANSPOSED ? points[(u64)d * n + pt[r]] : points[(u64)pt[r] * dim + d]);
                lo = min(lo, v);
                hi = max(hi, v);
            }
        }
        if (cur != BT_PAD && active[cur] != 0u) {
            atomicMin(&lo_out[(u64)cur * dim + d], lo);
            atomicMax(&hi_out[(u64)cur * dim + d], hi);
        }
    }
}

extern "C" __global__ void __launch_bounds__(BT_ITEM_THREADS)
    bt_bounds_f32(const float* __restrict__ points, const u32* __restrict__ seg_starts,
                  const u32* __restrict__ seg_active, const u32* __restrict__ perm, u32* __restrict__ node_of,
                  u32* __restrict__ lo, u32* __restrict__ hi, u32 n, u32 dim, u32 level_offset, u32 segments) {
    bounds_impl<float, false>(points, seg_starts, seg_active, perm, node_of, lo, hi, n, dim, level_offset, segments);
}

extern "C" __global__ void __launch_bounds__(BT_ITEM_THREADS)
    bt_bounds_f64(const double* __restrict__ points, const u32* __restrict__ seg_starts,
                  const u32* __restrict__ seg_active, const u32* __restrict__ perm, u32* __restrict__ node_of,
                  u64* __restrict__ lo, u64* __restrict__ hi, u32 n, u32 dim, u32 level_offset, u32 segments) {
    bounds_impl<double, false>(points, seg_starts, seg_active, perm, node_of, lo, hi, n, dim, level_offset, segments);
}

extern "C" __global__ void __launch_bounds__(BT_ITEM_THREADS)
    bt_sbounds_f32(const float* __restrict__ coords_t, const u32* __restrict__ seg_starts,
                   const u32* __restrict__ seg_active, u32* __restrict__ lo, u32* __restrict__ hi, u32 n, u32 dim,
                   u32 level_offset, u32 segments) {
    bounds_impl<float, true>(coords_t, seg_starts, seg_active, nullptr, nullptr, lo, hi, n, dim, level_offset,
                             segments);
}

extern "C" __global__ void __launch_bounds__(BT_ITEM_THREADS)
    bt_sbounds_f64(const double* __restrict__ coords_t, const u32* __restrict__ seg_starts,
                   const u32* __restrict__ seg_active, u64* __restrict__ lo, u64* __restrict__ hi, u32 n, u32 dim,
                   u32 level_offset, u32 segments) {
    bounds_impl<double, true>(coords_t, seg_starts, seg_active, nullptr, nullptr, lo, hi, n, dim, level_offset,
                              segments);
}

template <typename F>
__device__ __forceinline__ void choose_impl(const typename Coord<F>::Ord* __restrict__ lo,
                                            const typename Coord<F>::Ord* __restrict__ hi,
                                            const u32* __restrict__ seg_active, u32* __restrict__ seg_dim,
                                            u32 segments, u32 dim, u32 level_offset) {
    typedef Coord<F> C;
    const u64 s = item_index();
    if (s >= segments) return;
    if (seg_active[level_offset + s] == 0u) {
        seg_dim[s] = BT_FROZEN;
        return;
    }
    Spread<F> best = spread_zero<F>();
    u32 best_dim = 0u;
    for (u32 d = 0; d < dim; ++d) {
        const Spread<F> x = spread_of<F>(C::dec(lo[s * dim + d]), C::dec(hi[s * dim + d]));
        if (spread_greater<F>(x, best)) {
            best = x;
            best_dim = d;
        }
    }
    seg_dim[s] = best_dim;
}

extern "C" __global__ void bt_choose_f32(const u32* __restrict__ lo, const u32* __restrict__ hi,
                                         const u32* __restrict__ seg_active, u32* __restrict__ seg_dim, u32 segments,
                                         u32 dim, u32 level_offset) {
    choose_impl<float>(lo, hi, seg_active, seg_dim, segments, dim, level_offset);
}

extern "C" __global__ void bt_choose_f64(const u64* __restrict__ lo, const u64* __restrict__ hi,
                                         const u32* __restrict__ seg_active, u32* __restrict__ seg_dim, u32 segments,
                                         u32 dim, u32 level_offset) {
    choose_impl<double>(lo, hi, seg_active, seg_dim, segments, dim, level_offset);
}

extern "C" __global__ void bt_keys_f32(const float* __restrict__ points, const u32* __restrict__ node_of,
                                       const u32* __restrict__ seg_dim, u64* __restrict__ keys,
                                       u32* __restrict__ vals, u32 n, u32 dim) {
    const u64 i = item_index();
    if (i >= n) return;
    const u32 s = node_of[i];
    const u32 d = seg_dim[s];
    const u32 code = (d == BT_FROZEN) ? 0u : Coord<float>::ord(points[i * dim + d]);
    keys[i] = ((u64)s << 32) | (u64)code;
    vals[i] = (u32)i;
}

extern "C" __global__ void bt_keys_f64(const double* __restrict__ points, const u32* __restrict__ node_of,
                                       const u32* __restrict__ seg_dim, u64* __restrict__ keys,
                                       u32* __restrict__ vals, u32 n, u32 dim) {
    const u64 i = item_index();
    if (i >= n) return;
    const u32 d = seg_dim[node_of[i]];
    keys[i] = (d == BT_FROZEN) ? 0ull : Coord<double>::ord(points[i * dim + d]);
    vals[i] = (u32)i;
}

extern "C" __global__ void bt_node_keys(const u32* __restrict__ node_of, const u32* __restrict__ vals,
                                        u64* __restrict__ keys, u32 n) {
    const u64 p = item_index();
    if (p >= n) return;
    keys[p] = (u64)node_of[vals[p]];
}

// ---- the Select strategy: exact medians by segmented radix selection ------------------
//
// Instead of sorting all points every level, each active segment selects its pivot, the
// point of rank floor(m/2) in the order (code, global index), by a most-significant-digit
// radix selection over the concatenated key: rounds of up to 11 bits over the code, then
// over the index bits (the host plans the rounds: part 0 = code, 1 = index, shift, width).
// A round histograms the digit of every *candidate* (a point whose resolved bits equal
// the pivot's) and then one warp per segment finds the bucket of the pivot's rank. When
// that rank within the bucket is 0, every candidate is >= the pivot and the segment is
// decided: later rounds skip it. A stable partition (flags, the executor's scan, a
// scatter) then moves the left child's points to the front of the segment. The
// coordinates travel with the permutation in position order, dimension after dimension
// (`coords_t`), so every pass reads them coalesced instead of gathering rows.
#define BT_SELECT_BINS 2048u
#define BT_SELECT_WORDS 8u
static_assert(BT_SELECT_BINS == 8u * BT_ITEM_THREADS, "the bucket search reads 8 bins per thread");

// A segment's selection state (BT_SELECT_WORDS u32 words; 8-byte aligned for u64 codes).
template <typename O>
struct SelectState {
    u32 t;          // rank of the pivot among the candidates; 0 = decided
    u32 gi_prefix;  // resolved bits of the pivot's global index
    u32 gi_mask;
    u32 pad;
    O code_prefix;  // resolved bits of the pivot's code
    O code_mask;
};

template <typename O>
__device__ __forceinline__ SelectState<O>* select_state(u32* state, u32 s) {
    return reinterpret_cast<SelectState<O>*>(state + (u64)s * BT_SELECT_WORDS);
}

// End of segment s of a level (its segments partition the positions 0..n in order).
__device__ __forceinline__ u32 segment_end(const u32* __restrict__ starts, u32 segments, u32 s, u32 n) {
    return (s + 1u < segments) ? starts[s + 1u] : n;
}

// coords_t[d * n + p] = points[p * dim + d]: the coordinates in position order (the
// identity permutation), dimension after dimension.
template <typename F>
__device__ __forceinline__ void transpose_impl(const F* __restrict__ points, F* __restrict__ coords_t, u32 n,
                                               u32 dim) {
    const u64 p = item_index();
    if (p >= n) return;
    for (u32 d = 0; d < dim; ++d) coords_t[(u64)d * n + p] = points[p * dim + d];
}

extern "C" __global__ void bt_transpose_f32(const float* __restrict__ points, float* __restrict__ coords_t, u32 n,
                                            u32 dim) {
    transpose_impl<float>(points, coords_t, n, dim);
}

extern "C" __global__ void bt_transpose_f64(const double* __restrict__ points, double* __restrict__ coords_t,
                                            u32 n, u32 dim) {
    transpose_impl<double>(points, coords_t, n, dim);
}

// Initial state of every segment: rank floor(m / 2), nothing resolved (t = 0 for frozen
// segments, which no round touches); `pending` (0 between levels) counts the active ones.
extern "C" __global__ void bt_select_init(const u32* __restrict__ seg_starts, const u32* __restrict__ seg_active,
                                          u32* __restrict__ state, u32* __restrict__ pending, u32 n,
                                          u32 level_offset, u32 segments) {
    const u64 s = item_index();
    if (s >= segments) return;
    const u32* starts = seg_starts + level_offset;
    const u32 m = segment_end(starts, segments, (u32)s, n) - starts[s];
    const bool active = seg_active[level_offset + s] != 0u;
    u32* w = state + s * BT_SELECT_WORDS;
    w[0] = active ? (m >> 1) : 0u;
    for (u32 k = 1; k < BT_SELECT_WORDS; ++k) w[k] = 0u;
    if (active) atomicAdd(pending, 1u);
}

// The digit of round (part, shift, width) of a candidate, or BT_PAD for a non-candidate.
template <typename O>
__device__ __forceinline__ u32 select_digit(const SelectState<O>& st, O code, u32 gi, u32 part, u32 shift,
                                            u32 width) {
    if ((code & st.code_mask) != st.code_prefix || (gi & st.gi_mask) != st.gi_prefix) return BT_PAD;
    const u32 wmask = (1u << width) - 1u;
    return part == 0u ? (u32)(code >> shift) & wmask : (gi >> shift) & wmask;
}

// One round's histogram: thread t takes BT_BOUNDS_ITEMS consecutive positions of the
// block's tile. A tile inside one segment (the common case) reads the segment's state
// once and counts in shared memory first. Nothing to do once every segment is decided.
// (Warp aggregation with __match_any_sync measured slower: 13.9 / 11.9 / 9.1 us against
// 9.4 / 10.5 / 8.3 us for the three busy rounds of 1 x 2^20.)
template <typename F>
__device__ __forceinline__ void select_count_impl(const F* __restrict__ coords_t, const u32* __restrict__ perm,
                                                  const u32* __restrict__ seg_starts,
                                                  const u32* __restrict__ seg_active,
                                                  const u32* __restrict__ seg_dim, u32* __restrict__ state,
                                                  u32* __restrict__ hist, const u32* __restrict__ pending, u32 n,
                                                  u32 level_offset, u32 segments, u32 part, u32 shift, u32 width) {
    typedef typename Coord<F>::Ord O;
    __shared__ u32 tile_hist[BT_SELECT_BINS];
    if (*pending == 0u) return;
    const u32 tid = threadIdx.x;
    const u64 base = (u64)blockIdx.x * (BT_ITEM_THREADS * BT_BOUNDS_ITEMS);
    if (base >= n) return;
    const u64 end = min(base + (u64)(BT_ITEM_THREADS * BT_BOUNDS_ITEMS), (u64)n);
    const u32* starts = seg_starts + level_offset;
    const u32* active = seg_active + level_offset;
    const u32 first = segment_of(starts, segments, (u32)base);
    const u32 last = segment_of(starts, segments, (u32)(end - 1));
    const u64 p0 = base + (u64)tid * BT_BOUNDS_ITEMS;
    if (first == last) {
        if (active[first] == 0u) return;
        const SelectState<O> st = *select_state<O>(state, first);
        if (st.t == 0u) return;
        for (u32 b = tid; b < BT_SELECT_BINS; b += BT_ITEM_THREADS) tile_hist[b] = 0u;
        __syncthreads();
        const F* coords = coords_t + (u64)seg_dim[first] * n;
#pragma unroll
        for (u32 r = 0; r < BT_BOUNDS_ITEMS; ++r) {
            const u64 p = p0 + r;
            if (p < end) {
                const u32 digit = select_digit<O>(st, Coord<F>::ord(coords[p]), perm[p], part, shift, width);
                if (digit != BT_PAD) atomicAdd(&tile_hist[digit], 1u);
            }
        }
        __syncthreads();
        for (u32 b = tid; b < BT_SELECT_BINS; b += BT_ITEM_THREADS) {
            const u32 c = tile_hist[b];
            if (c != 0u) atomicAdd(&hist[(u64)first * BT_SELECT_BINS + b], c);
        }
        return;
    }
    u32 s = (p0 < end) ? segment_of(starts, segments, (u32)p0) : 0u;
#pragma unroll
    for (u32 r = 0; r < BT_BOUNDS_ITEMS; ++r) {
        const u64 p = p0 + r;
        if (p >= end) break;
        while (s + 1u < segments && starts[s + 1u] <= (u32)p) ++s;
        if (active[s] == 0u) continue;
        const SelectState<O> st = *select_state<O>(state, s);
        if (st.t == 0u) continue;
        const O code = Coord<F>::ord(coords_t[(u64)seg_dim[s] * n + p]);
        const u32 digit = select_digit<O>(st, code, perm[p], part, shift, width);
        if (digit != BT_PAD) atomicAdd(&hist[(u64)s * BT_SELECT_BINS + digit], 1u);
    }
}

extern "C" __global__ void __launch_bounds__(BT_ITEM_THREADS)
    bt_select_count_f32(const float* __restrict__ coords_t, const u32* __restrict__ perm,
                        const u32* __restrict__ seg_starts, const u32* __restrict__ seg_active,
                        const u32* __restrict__ seg_dim, u32* __restrict__ state, u32* __restrict__ hist,
                        const u32* __restrict__ pending, u32 n, u32 level_offset, u32 segments, u32 part, u32 shift,
                        u32 width) {
    select_count_impl<float>(coords_t, perm, seg_starts, seg_active, seg_dim, state, hist, pending, n, level_offset,
                             segments, part, shift, width);
}

extern "C" __global__ void __launch_bounds__(BT_ITEM_THREADS)
    bt_select_count_f64(const double* __restrict__ coords_t, const u32* __restrict__ perm,
                        const u32* __restrict__ seg_starts, const u32* __restrict__ seg_active,
                        const u32* __restrict__ seg_dim, u32* __restrict__ state, u32* __restrict__ hist,
                        const u32* __restrict__ pending, u32 n, u32 level_offset, u32 segments, u32 part, u32 shift,
                        u32 width) {
    select_count_impl<double>(coords_t, perm, seg_starts, seg_active, seg_dim, state, hist, pending, n, level_offset,
                              segments, part, shift, width);
}

// One block of BT_ITEM_THREADS threads per segment: the bucket that holds the pivot's
// rank (each thread sums 8 bins, a block-wide exclusive scan, the thread whose range
// holds the rank walks its bins); clears the histogram; a decided segment leaves
// `pending`.
#define BT_FIND_BINS (BT_SELECT_BINS / BT_ITEM_THREADS)
template <typename O>
__device__ __forceinline__ void select_find_impl(const u32* __restrict__ seg_active, u32* __restrict__ state,
                                                 u32* __restrict__ hist, u32* __restrict__ pending,
                                                 u32 level_offset, u32 segments, u32 part, u32 shift, u32 width) {
    __shared__ u32 warp_sums[BT_ITEM_THREADS / 32u];
    const u32 tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
    const u32 s = blockIdx.x;
    // (No early exit on `pending`: other blocks change it during this launch.)
    if (s >= segments || seg_active[level_offset + s] == 0u) return;
    SelectState<O>* st = select_state<O>(state, s);
    const u32 t = st->t;
    if (t == 0u) return;
    uint4* bins = reinterpret_cast<uint4*>(hist + (u64)s * BT_SELECT_BINS + tid * BT_FIND_BINS);
    const uint4 h0 = bins[0], h1 = bins[1];
    bins[0] = make_uint4(0u, 0u, 0u, 0u);
    bins[1] = make_uint4(0u, 0u, 0u, 0u);
    const u32 v[BT_FIND_BINS] = {h0.x, h0.y, h0.z, h0.w, h1.x, h1.y, h1.z, h1.w};
    u32 sum = 0u;
#pragma unroll
    for (u32 k = 0; k < BT_FIND_BINS; ++k) sum += v[k];
    u32 incl = sum;
#pragma unroll
    for (u32 w = 1u; w < 32u; w <<= 1) {
        const u32 x = __shfl_up_sync(0xffffffffu, incl, w);
        if (lane >= w) incl += x;
    }
    if (lane == 31u) warp_sums[warp] = incl;
    __syncthreads();
    u32 before = 0u;
    for (u32 k = 0; k < warp; ++k) before += warp_sums[k];
    const u32 excl = before + incl - sum;
    if (!(excl <= t && t < excl + sum)) return;
    // This thread holds the bucket: walk its bins.
    u32 c = excl, bucket = 0u, rank = 0u;
    bool found = false;
#pragma unroll
    for (u32 k = 0; k < BT_FIND_BINS; ++k) {
        if (!found && t < c + v[k]) {
            found = true;
            bucket = tid * BT_FIND_BINS + k;
            rank = t - c;
        }
        c += v[k];
    }
    const u32 wmask = (1u << width) - 1u;
    if (part == 0u) {
        st->code_prefix |= (O)bucket << shift;
        st->code_mask |= (O)wmask << shift;
    } else {
        st->gi_prefix |= bucket << shift;
        st->gi_mask |= wmask << shift;
    }
    st->t = rank;
    if (rank == 0u) atomicSub(pending, 1u);
}

extern "C" __global__ void __launch_bounds__(BT_ITEM_THREADS)
    bt_select_find_f32(const u32* __restrict__ seg_active, u32* __restrict__ state, u32* __restrict__ hist,
                       u32* __restrict__ pending, u32 level_offset, u32 segments, u32 part, u32 shift, u32 width) {
    select_find_impl<u32>(seg_active, state, hist, pending, level_offset, segments, part, shift, width);
}

extern "C" __global__ void __launch_bounds__(BT_ITEM_THREADS)
    bt_select_find_f64(const u32* __restrict__ seg_active, u32* __restrict__ state, u32* __restrict__ hist,
                       u32* __restrict__ pending, u32 level_offset, u32 segments, u32 part, u32 shift, u32 width) {
    select_find_impl<u64>(seg_active, state, hist, pending, level_offset, segments, part, shift, width);
}

// flags[p] = 1 where position p goes to the left child: its key, on the resolved bits,
// is below the pivot's (every segment is decided after the last round).
template <typename F>
__device__ __forceinline__ void select_flags_impl(const F* __restrict__ coords_t, const u32* __restrict__ perm,
                                                  const u32* __restrict__ seg_starts,
                                                  const u32* __restrict__ seg_active,
                                                  const u32* __restrict__ seg_dim, u32* __restrict__ state,
                                                  u32* __restrict__ flags, u32 n, u32 level_offset, u32 segments) {
    typedef typename Coord<F>::Ord O;
    const u64 p = item_index();
    if (p >= n) return;
    const u32 s = segment_of(seg_starts + level_offset, segments, (u32)p);
    u32 left = 0u;
    if (seg_active[level_offset + s] != 0u) {
        const SelectState<O> st = *select_state<O>(state, s);
        const O code = Coord<F>::ord(coords_t[(u64)seg_dim[s] * n + p]) & st.code_mask;
        const u32 gi = perm[p] & st.gi_mask;
        left = (code < st.code_prefix || (code == st.code_prefix && gi < st.gi_prefix)) ? 1u : 0u;
    }
    flags[p] = left;
}

extern "C" __global__ void bt_select_flags_f32(const float* __restrict__ coords_t, const u32* __restrict__ perm,
                                               const u32* __restrict__ seg_starts,
                                               const u32* __restrict__ seg_active, const u32* __restrict__ seg_dim,
                                               u32* __restrict__ state, u32* __restrict__ flags, u32 n,
                                               u32 level_offset, u32 segments) {
    select_flags_impl<float>(coords_t, perm, seg_starts, seg_active, seg_dim, state, flags, n, level_offset,
                             segments);
}

extern "C" __global__ void bt_select_flags_f64(const double* __restrict__ coords_t, const u32* __restrict__ perm,
                                               const u32* __restrict__ seg_starts,
                                               const u32* __restrict__ seg_active, const u32* __restrict__ seg_dim,
                                               u32* __restrict__ state, u32* __restrict__ flags, u32 n,
                                               u32 level_offset, u32 segments) {
    select_flags_impl<double>(coords_t, perm, seg_starts, seg_active, seg_dim, state, flags, n, level_offset,
                              segments);
}

// The stable partition: left-flagged positions of a segment to its front, in order, the
// others after its first floor(m / 2) positions, in order; frozen segments stay. Moves the
// permutation and the transposed coordinates (`scan`: exclusive scan of the flags, n + 1).
template <typename F>
__device__ __forceinline__ void select_scatter_impl(const F* __restrict__ coords_t, const u32* __restrict__ perm,
                                                    const u32* __restrict__ seg_starts,
                                                    const u32* __restrict__ seg_active,
                                                    const u32* __restrict__ scan, F* __restrict__ coords_out,
                                                    u32* __restrict__ perm_out, u32 n, u32 dim, u32 level_offset,
                                                    u32 segments) {
    const u64 p = item_index();
    if (p >= n) return;
    const u32* starts = seg_starts + level_offset;
    const u32 s = segment_of(starts, segments, (u32)p);
    u32 dest = (u32)p;
    if (seg_active[level_offset + s] != 0u) {
        const u32 start = starts[s];
        const u32 half = (segment_end(starts, segments, s, n) - start) >> 1;
        const u32 before = scan[p] - scan[start];  // left points before p in the segment
        dest = (scan[p + 1] != scan[p]) ? start + before : start + half + ((u32)p - start - before);
    }
    perm_out[dest] = perm[p];
    for (u32 d = 0; d < dim; ++d) coords_out[(u64)d * n + dest] = coords_t[(u64)d * n + p];
}

extern "C" __global__ void bt_select_scatter_f32(const float* __restrict__ coords_t, const u32* __restrict__ perm,
                                                 const u32* __restrict__ seg_starts,
                                                 const u32* __restrict__ seg_active, const u32* __restrict__ scan,
                                                 float* __restrict__ coords_out, u32* __restrict__ perm_out, u32 n,
                                                 u32 dim, u32 level_offset, u32 segments) {
    select_scatter_impl<float>(coords_t, perm, seg_starts, seg_active, scan, coords_out, perm_out, n, dim,
                               level_offset, segments);
}

extern "C" __global__ void bt_select_scatter_f64(const double* __restrict__ coords_t, const u32* __restrict__ perm,
                                                 const u32* __restrict__ seg_starts,
                                                 const u32* __restrict__ seg_active, const u32* __restrict__ scan,
                                                 double* __restrict__ coords_out, u32* __restrict__ perm_out, u32 n,
                                                 u32 dim, u32 level_offset, u32 segments) {
    select_scatter_impl<double>(coords_t, perm, seg_starts, seg_active, scan, coords_out, perm_out, n, dim,
                                level_offset, segments);
}

// ---- local phase --------------------------------------------------------------------

// Points of segment `seg` (of 2^g slots) of a block whose subtrees have 2^h slots: the
// size of the node it is, by the recursion floor(m/2) | m - floor(m/2) from its subtree.
__device__ __forceinline__ u32 segment_points(const u32* __restrict__ nodes, u32 first, u32 seg, u32 g, u32 h) {
    const u32 rel = h - g;
    const u32 j = seg & ((1u << rel) - 1u);
    u32 m = nodes[3u * (first + (seg >> rel)) + 1u];
    for (u32 bit = rel; bit > 0u; --bit) {
        m = ((j >> (bit - 1u)) & 1u) ? m - (m >> 1) : (m >> 1);
    }
    return m;
}

// PACKED (f32 only, the Select strategy): local numbers are in global-index order inside
// every subtree (the stable partitions keep each node's positions in index order), so
// the sort key packs to one u64, code << 32 | local number: one 64-bit compare, two
// loads and two stores per compare-exchange instead of four each and a tie lookup.
template <typename F, bool PACKED>
__device__ __forceinline__ void local_impl(const F* __restrict__ points, const u32* __restrict__ perm,
                                           const u32* __restrict__ nodes, const u32* __restrict__ blocks,
                                           F* __restrict__ staged, u32* __restrict__ out_idx,
                                           u32* __restrict__ out_mask, u32 dim, u32 num_blocks) {
    typedef Coord<F> C;
    typedef typename C::Ord O;
    const u32 CAP = BT_LOCAL_CAPACITY;
    const u32 T = BT_LOCAL_THREADS;
    const u32 R = BT_LOCAL_ITEMS;
    const u32 WARPS = T / 32u;
    __shared__ u64 key64[CAP];  // PACKED: code << 32 | local number; padding = all ones
    O* key = reinterpret_cast<O*>(key64);  // otherwise: codes of the split coordinate
    __shared__ u32 idx[CAP];    // local point numbers in slot order; padding = BT_PAD
    __shared__ u32 gidx[CAP];   // global point index of each local number
    __shared__ O red_lo[WARPS];
    __shared__ O red_hi[WARPS];
    __shared__ u32 seg_dim[CAP / 4];

    if (blockIdx.x >= num_blocks) return;
    const u32 tid = threadIdx.x;
    const u32 lane = tid & 31u, warp = tid >> 5;
    const u32 first = blocks[4u * blockIdx.x];
    const u32 count = blocks[4u * blockIdx.x + 1u];
    const u32 h = blocks[4u * blockIdx.x + 2u];
    const u64 base = blocks[4u * blockIdx.x + 3u];
    const u32 used = count << h;
    const u32 node_mask = (1u << h) - 1u;
    F* __restrict__ coords = staged + base * dim;  // this block's coordinates, by local number

    // Load: local number t = slot t of the block at the start; stage the coordinates
    // contiguously so the local levels read them from L1 instead of gathering them.
    for (u32 t = tid; t < used; t += T) {
        const u32 node = first + (t >> h);
        const u32 r = t & node_mask;
        if (r < nodes[3u * node + 1u]) {
            const u32 g = perm[nodes[3u * node] + r];
            idx[t] = t;
            gidx[t] = g;
            for (u32 d = 0; d < dim; ++d) coords[(u64)t * dim + d] = points[(u64)g * dim + d];
        } else {
            idx[t] = BT_PAD;
        }
    }
    __syncthreads();

    for (u32 g = h; g >= 2u; --g) {
        const u32 S = 1u << g;
        // 1. The split dimension of every segment: thread t reduces slots [tR, tR + R);
        //    the S / R threads of a segment combine by warp shuffles (and, for segments
        //    wider than a warp, through shared memory); the leader compares spreads.
        if (dim > 1u) {
            const u32 G = S / R;
            const u32 c0 = tid * R;
            const bool live = c0 < used;
            const bool leader = live && (tid & (G - 1u)) == 0u;
            const u32 lanes = (G < 32u) ? G : 32u;
            Spread<F> best = spread_zero<F>();
            u32 best_dim = 0u;
            for (u32 d = 0; d < dim; ++d) {
                O lo = ~(O)0, hi = (O)0;
                if (live) {
#pragma unroll
                    for (u32 r = 0; r < R; ++r) {
                        const u32 i = idx[c0 + r];
                        if (i != BT_PAD) {
                            const O v = C::ord(coords[(u64)i * dim + d]);
                            lo = min(lo, v);
                            hi = max(hi, v);
                        }
                    }
                }
                for (u32 w = 1u; w < lanes; w <<= 1) {
                    lo = min(lo, (O)__shfl_xor_sync(0xffffffffu, lo, w));
                    hi = max(hi, (O)__shfl_xor_sync(0xffffffffu, hi, w));
                }
                if (G > 32u) {
                    if (lane == 0u) {
                        red_lo[warp] = lo;
                        red_hi[warp] = hi;
                    }
                    __syncthreads();
                    if (leader) {
                        for (u32 k = 1u; k < G / 32u; ++k) {
                            lo = min(lo, red_lo[warp + k]);
                            hi = max(hi, red_hi[warp + k]);
                        }
                    }
                    __syncthreads();
                }
                if (leader) {
                    const Spread<F> x = spread_of<F>(C::dec(lo), C::dec(hi));
                    if (spread_greater<F>(x, best)) {
                        best = x;
                        best_dim = d;
                    }
                }
            }
            if (leader) seg_dim[c0 >> g] = best_dim;
            __syncthreads();
        }
        // 2. Keys: the code of the split coordinate; padding sorts last.
        for (u32 t = tid; t < used; t += T) {
            const u32 i = idx[t];
            const u32 d = (dim > 1u) ? seg_dim[t >> g] : 0u;
            if (PACKED) {
                key64[t] = (i == BT_PAD) ? ~0ull : (((u64)C::ord(coords[(u64)i * dim + d]) << 32) | i);
            } else {
                key[t] = (i == BT_PAD) ? ~(O)0 : C::ord(coords[(u64)i * dim + d]);
            }
        }
        __syncthreads();
        if (PACKED) {
            // 3. Bitonic sort of every aligned segment by the packed key, ascending.
            for (u32 k = 2u; k <= S; k <<= 1) {
                for (u32 j = k >> 1; j > 0u; j >>= 1) {
                    for (u32 q = tid; q < used / 2u; q += T) {
                        const u32 a = ((q & ~(j - 1u)) << 1) | (q & (j - 1u));
                        const u32 b = a | j;
                        const bool ascending = ((a & (S - 1u)) & k) == 0u;
                        const u64 ka = key64[a], kb = key64[b];
                        if (ka != kb && (ka > kb) == ascending) {
                            key64[a] = kb;
                            key64[b] = ka;
                        }
                    }
                    __syncthreads();
                }
            }
            for (u32 t = tid; t < used; t += T) idx[t] = (u32)key64[t];  // padding: BT_PAD
            __syncthreads();
        } else {
            // 3. Bitonic sort of every aligned segment of S slots by (key, global index),
            //    ascending. Real keys are below the padding key, so equal keys are two real
            //    points (compared by global index) or two paddings (left alone).
            for (u32 k = 2u; k <= S; k <<= 1) {
                for (u32 j = k >> 1; j > 0u; j >>= 1) {
                    for (u32 q = tid; q < used / 2u; q += T) {
                        const u32 a = ((q & ~(j - 1u)) << 1) | (q & (j - 1u));
                        const u32 b = a | j;
                        const bool ascending = ((a & (S - 1u)) & k) == 0u;
                        const O ka = key[a], kb = key[b];
                        const u32 ia = idx[a], ib = idx[b];
                        bool greater = ka > kb;
                        if (ka == kb && ia != BT_PAD) greater = gidx[ia] > gidx[ib];
                        if (greater == ascending) {
                            key[a] = kb;
                            key[b] = ka;
                            idx[a] = ib;
                            idx[b] = ia;
                        }
                    }
                    __syncthreads();
                }
            }
        }
        // 4. The left child keeps the first floor(m/2) points in the first half; the right
        //    child's points move to the front of the second half; the rest is padding.
        u32 moved[R];
#pragma unroll
        for (u32 r = 0; r < R; ++r) {
            const u32 t = tid + r * T;
            moved[r] = BT_PAD;
            if (t < used) {
                const u32 seg = t >> g;
                const u32 m = segment_points(nodes, first, seg, g, h);
                const u32 left = m >> 1;
                const u32 half = S >> 1;
                const u32 ri = t & (S - 1u);
                u32 src = BT_PAD;
                if (ri < half) {
                    if (ri < left) src = ri;
                } else if (ri - half < m - left) {
                    src = left + (ri - half);
                }
                if (src != BT_PAD) moved[r] = idx[(seg << g) + src];
            }
        }
        __syncthreads();
#pragma unroll
        for (u32 r = 0; r < R; ++r) {
            const u32 t = tid + r * T;
            if (t < used) idx[t] = moved[r];
        }
        __syncthreads();
    }

    // Leaves: two points by ascending index, or one point twice with the second masked.
    for (u32 l = tid; l < used / 2u; l += T) {
        const u32 t = 2u * l;
        const u32 a = gidx[idx[t]];
        const u32 ib = idx[t + 1u];
        const u32 slot = nodes[3u * (first + (t >> h)) + 2u] + (t & node_mask);
        if (ib == BT_PAD) {
            out_idx[slot] = a;
            out_idx[slot + 1u] = a;
            out_mask[slot] = 1u;
            out_mask[slot + 1u] = 0u;
        } else {
            const u32 b = gidx[ib];
            out_idx[slot] = min(a, b);
            out_idx[slot + 1u] = max(a, b);
            out_mask[slot] = 1u;
            out_mask[slot + 1u] = 1u;
        }
    }
}

extern "C" __global__ void __launch_bounds__(BT_LOCAL_THREADS, 2)
    bt_local_f32(const float* __restrict__ points, const u32* __restrict__ perm, const u32* __restrict__ nodes,
                 const u32* __restrict__ blocks, float* __restrict__ staged, u32* __restrict__ out_idx,
                 u32* __restrict__ out_mask, u32 dim, u32 num_blocks) {
    local_impl<float, false>(points, perm, nodes, blocks, staged, out_idx, out_mask, dim, num_blocks);
}

extern "C" __global__ void __launch_bounds__(BT_LOCAL_THREADS, 2)
    bt_local_ordered_f32(const float* __restrict__ points, const u32* __restrict__ perm,
                         const u32* __restrict__ nodes, const u32* __restrict__ blocks, float* __restrict__ staged,
                         u32* __restrict__ out_idx, u32* __restrict__ out_mask, u32 dim, u32 num_blocks) {
    local_impl<float, true>(points, perm, nodes, blocks, staged, out_idx, out_mask, dim, num_blocks);
}

extern "C" __global__ void __launch_bounds__(BT_LOCAL_THREADS, 2)
    bt_local_f64(const double* __restrict__ points, const u32* __restrict__ perm, const u32* __restrict__ nodes,
                 const u32* __restrict__ blocks, double* __restrict__ staged, u32* __restrict__ out_idx,
                 u32* __restrict__ out_mask, u32 dim, u32 num_blocks) {
    local_impl<double, false>(points, perm, nodes, blocks, staged, out_idx, out_mask, dim, num_blocks);
}
