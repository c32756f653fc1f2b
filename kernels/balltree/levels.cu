// kernels/balltree/levels.cu — the ball tree build's global levels
// (crates/orrery-balltree/src/gpu/levels.rs): per level, every segment's coordinate bounds
// and split dimension, and the sort keys of Strategy::LevelSort / Hybrid. Module
// "balltree/levels": common.cuh, kernels/core/segment.cuh, this file.
//
// What it computes (segments = the level's nodes, see gpu/plan.rs)
//   bt_reset_bounds  lo[i] = ~0, hi[i] = 0                        i < count (u32 codes)
//   bt_reset_bounds_u64  the same for u64 codes (f64 bounds)
//   bt_bounds_F      node_of[perm[p]] = segment of position p (segment_of in the level's
//                    starts); per active segment and dimension, min / max of the ordered
//                    codes of its points' coordinates (integer atomics: exact and
//                    deterministic)
//   bt_sbounds_F     the same bounds from coords_t[d * n + p] (Select: coordinates in
//                    position order, coalesced), without node_of
//   bt_choose_F      seg_dim[s] = split dimension of active segment s, or BT_FROZEN
//   bt_keys_f32      keys[i] = node_of[i] << 32 | code(points[i][seg_dim]), vals[i] = i
//                    (code 0 in frozen segments); the host then sorts (keys, vals) stably
//                    on bits 0..32 + node_bits, so vals is the next perm.
//   bt_keys_f64      keys[i] = code(points[i][seg_dim]), vals[i] = i; the host sorts on
//                    0..64, then bt_node_keys keys[p] = node_of[vals[p]] and sorts on
//                    0..node_bits (stable LSD composition: the same order).
//
// Launch shapes
//   bt_reset_bounds(_u64), bt_choose_F, bt_keys_F, bt_node_keys: 1D, one thread per item, any
//     block size (the host uses BT_ITEM_THREADS).
//   bt_bounds_F, bt_sbounds_F: blocks of exactly BT_ITEM_THREADS threads, a tile of
//     BT_ITEM_THREADS * BT_BOUNDS_ITEMS positions per block (thread t takes BT_BOUNDS_ITEMS
//     consecutive positions); a tile inside one segment (segment_tile) reduces in the
//     block and issues one atomic per bound.
//
// Buffers (direction, length, layout)
//   points      read   n * dim       F (float | double), row-major
//   coords_t    read   n * dim       F, dimension after dimension, in position order
//   seg_starts  read   all levels    u32, first position of each segment; level at offset
//   seg_active  read   all levels    u32, 1 = splits at this level, 0 = frozen
//   perm        read   n             u32, point indices in current tree order
//   node_of     write  n             u32, segment of each point (this level)
//   lo, hi      write  segments*dim  ordered codes (u32 for float, u64 for double); read by
//                                    bt_choose_F
//   seg_dim     write  segments      u32, split dimension or BT_FROZEN (read by bt_keys_F)
//   keys, vals  write  n             u64 sort keys, u32 point indices
//
// Invariants
//   Positions of one segment are contiguous, segments are in position order and hold at
//   least one position; starts[offset] = 0.
//
// Measured cost (H200, driver 580.159.04, ncu gpu__time_duration, 3D uniform f32, 1 x 2^20
//   Hybrid): per global level (9) bt_reset_bounds 1.7 us, bt_bounds 39 us (13 us at level
//   0), bt_choose 3 us, bt_keys 9.3 us, the executor's sort 118 us. Select: bt_sbounds
//   10.5 us per level. bt_bounds_f32 32 registers (sm_90). Measured before the split into
//   pass files and the shared segment search; not re-measured yet.

// lo[i] = all ones, hi[i] = 0 for i < count 32-bit words (u64 bounds reset as 2 words).
extern "C" __global__ void bt_reset_bounds(u32* __restrict__ lo, u32* __restrict__ hi, u32 count) {
    const u64 i = item_index();
    if (i >= count) return;
    lo[i] = 0xffffffffu;
    hi[i] = 0u;
}

// The same for u64 codes (f64 bounds): count codes.
extern "C" __global__ void bt_reset_bounds_u64(u64* __restrict__ lo, u64* __restrict__ hi, u32 count) {
    const u64 i = item_index();
    if (i >= count) return;
    lo[i] = ~0ull;
    hi[i] = 0ull;
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
    const SegmentTile tile = segment_tile(starts, segments, (u32)base, (u32)end);
    const u32 first = tile.first;
    const u32 last = tile.last;
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
