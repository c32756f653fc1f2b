// kernels/balltree/select.cu — the Select strategy's global levels
// (crates/orrery-balltree/src/gpu/select.rs): exact medians by segmented radix selection
// and a stable partition. Module "balltree/select": common.cuh, kernels/core/segment.cuh,
// this file. The level's bounds and split dimensions come from levels.cu (bt_reset_bounds,
// bt_sbounds_F, bt_choose_F).
//
// What it computes
//   bt_transpose_F   coords_t[d * n + p] = points[p * dim + d], once per build
//   Per global level (segments = the level's nodes, see gpu/plan.rs):
//   bt_select_init   state[s] = rank floor(m/2), nothing resolved; pending += active
//   rounds r < R     bt_select_count_F: histogram of the r-th digit (up to 11 bits) of
//                    every candidate's key (code, point index); bt_select_find_F: per
//                    segment the bucket of the pivot's rank, decided when it is the
//                    bucket's smallest (see the section's comment)
//   bt_select_flags_F, the executor's exclusive scan, bt_select_scatter_F: the stable
//                    partition of perm and coords_t (ping-pong buffers)
//
// Launch shapes
//   bt_transpose_F, bt_select_init, bt_select_flags_F, bt_select_scatter_F: 1D, one thread
//     per item, any block size (the host uses BT_ITEM_THREADS).
//   bt_select_count_F: blocks of exactly BT_ITEM_THREADS threads, tiles of
//     BT_ITEM_THREADS * BT_BOUNDS_ITEMS positions (segment_tile: a tile inside one segment
//     counts in shared memory first).
//   bt_select_find_F: one block of exactly BT_ITEM_THREADS threads per segment.
//
// Buffers (direction, length, layout)
//   points      read   n * dim              F, row-major
//   coords_t    read   n * dim              F, dimension after dimension, position order
//   perm        read   n                    u32, point indices in current tree order
//   seg_starts  read   all levels           u32, first position of each segment
//   seg_active  read   all levels           u32, 1 = splits at this level
//   seg_dim     read   segments             u32, split dimension (bt_choose_F)
//   state       write  segments * 8         u32 words of SelectState (read-only in count
//                                           and flags)
//   hist        write  segments * 2048      u32, zero between rounds (find clears it)
//   pending     write  1                    u32, undecided segments (read-only in count)
//   flags       write  n                    u32, 1 = goes to the left child
//   scan        read   n + 1                u32, exclusive scan of flags
//   coords_out, perm_out  write  n*dim, n   the partitioned coords_t and perm
//
// Invariants
//   As levels.cu; the rounds cover every bit of the key, so every active segment is
//   decided after the last round; frozen segments keep their positions.
//
// Measured cost (H200, 3D uniform f32, 1 x 2^20 Select, 1.33 ms in kernels, 1.20 ms by
//   events): per global level about 103 us (bt_sbounds 10.5, rounds: count 9-11 us busy
//   (3 rounds) / 2.8 idle, find 3.6 / 2.4, flags 9, scan 7, scatter 16.6). Warp-aggregated
//   histogram atomics (__match_any_sync) in bt_select_count: slower (13.9 / 11.9 / 9.1 us
//   for the busy rounds against 9.4 / 10.5 / 8.3): removed. Measured before the split into
//   pass files and the shared segment search; not re-measured yet.

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

template <typename O>
__device__ __forceinline__ const SelectState<O>* select_state(const u32* state, u32 s) {
    return reinterpret_cast<const SelectState<O>*>(state + (u64)s * BT_SELECT_WORDS);
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
                                                  const u32* __restrict__ seg_dim, const u32* __restrict__ state,
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
    const SegmentTile tile = segment_tile(starts, segments, (u32)base, (u32)end);
    const u32 first = tile.first;
    const u32 last = tile.last;
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
                        const u32* __restrict__ seg_dim, const u32* __restrict__ state, u32* __restrict__ hist,
                        const u32* __restrict__ pending, u32 n, u32 level_offset, u32 segments, u32 part, u32 shift,
                        u32 width) {
    select_count_impl<float>(coords_t, perm, seg_starts, seg_active, seg_dim, state, hist, pending, n, level_offset,
                             segments, part, shift, width);
}

extern "C" __global__ void __launch_bounds__(BT_ITEM_THREADS)
    bt_select_count_f64(const double* __restrict__ coords_t, const u32* __restrict__ perm,
                        const u32* __restrict__ seg_starts, const u32* __restrict__ seg_active,
                        const u32* __restrict__ seg_dim, const u32* __restrict__ state, u32* __restrict__ hist,
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
                                                  const u32* __restrict__ seg_dim, const u32* __restrict__ state,
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
                                               const u32* __restrict__ state, u32* __restrict__ flags, u32 n,
                                               u32 level_offset, u32 segments) {
    select_flags_impl<float>(coords_t, perm, seg_starts, seg_active, seg_dim, state, flags, n, level_offset,
                             segments);
}

extern "C" __global__ void bt_select_flags_f64(const double* __restrict__ coords_t, const u32* __restrict__ perm,
                                               const u32* __restrict__ seg_starts,
                                               const u32* __restrict__ seg_active, const u32* __restrict__ seg_dim,
                                               const u32* __restrict__ state, u32* __restrict__ flags, u32 n,
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
