// kernels/balltree/local.cu — the ball tree build's local phase
// (crates/orrery-balltree/src/gpu/local.rs): every remaining subtree is finished by one
// block in shared memory. Module "balltree/local/<capacity>": common.cuh, then this
// file, compiled with -DLOCAL_CAPACITY=<slots>u
// -DLOCAL_THREADS=<threads>u (the host picks the shape from the device limits:
// 2048 / 512 where 512 threads and the shared arrays fit, else 1024 / 256).
//
// What it computes
//   bt_local_F       per block: up to CAPACITY / 2^h subtrees of 2^h slots. Stage the
//                    block's coordinates contiguously (one gather); per local level the
//                    split dimension of every segment (warp shuffles), keys, a bitonic
//                    sort of every aligned segment by (code, global index) with padding
//                    last, and the move of the right child's points to the front of the
//                    segment's second half; finally the leaves (1 or 2 points, ascending
//                    index; a single point fills both slots, the second masked).
//   bt_local_ordered_f32  the same for Select (every subtree's points arrive in index
//                    order): the sort key packs into one u64, code << 32 | local number.
//
// Launch shape: one block per entry of `blocks` (num_blocks), exactly BT_LOCAL_THREADS
//   threads; thread t owns slots t + r * BT_LOCAL_THREADS for the moves and the consecutive
//   slots [4t, 4t + 4) for the reductions (CAPACITY / THREADS = 4).
//
// Buffers (direction, length, layout)
//   points      read   n * dim       F (float | double), row-major
//   perm        read   n             u32, point indices in tree order after the levels
//   nodes       read   3 * subtrees  u32 (first position, points, first slot)
//   blocks      read   4 * blocks    u32 (first subtree, subtrees, h, staging base)
//   staged      write  sum(slots)*dim F, block b's coordinates from base_b * dim, by the
//                                    block's local point number (its slot at the start)
//   out_idx     write  slots         u32 point index per slot
//   out_mask    write  slots         u32 1 = real point, 0 = padding duplicate
//
// Invariants
//   A subtree of 2^h slots holds m points with 2^(h-2) < m <= 2^h, so every segment at
//   local levels g >= 2 holds at least two points and every leaf one or two. Equal keys
//   are two real points or two paddings.
//
// Measured cost (H200, 3D uniform f32, 2048 / 512): bt_local 462 us for 1 x 2^20 Hybrid
//   (512 blocks of 2048 slots, two waves at 2 blocks per multiprocessor), 460 us for
//   64 x 16384; bt_local_ordered_f32 405 / 400 us (Select). Resources (sm_90): bt_local_f32
//   56 registers, 27.8 KB shared; bt_local_f64 64, 36.1 KB.
//   History: gathering coordinates from `points` at every local level instead of staging
//   them cost bt_local 503-540 us. Register-resident bitonic steps (strides < 128 by warp
//   shuffles, 10 barriers per 2048-slot sort instead of 66) measured no faster (bt_local is
//   ALU-bound: 69% issue slots busy, 2.8 IPC) and slower at 1024 slots (half the threads
//   idle): reverted. The packed u64 key of bt_local_ordered_f32: 459 -> 400 us. Measured
//   before the split into pass files; not re-measured yet.

// The shape, from the module's defines (LOCAL_CAPACITY, LOCAL_THREADS; the same names
// as local.wgsl's constants); the large shape without them (ahead-of-time compiles).
#ifndef LOCAL_CAPACITY
#define LOCAL_CAPACITY 2048u
#endif
#ifndef LOCAL_THREADS
#define LOCAL_THREADS 512u
#endif
#define BT_LOCAL_CAPACITY LOCAL_CAPACITY
#define BT_LOCAL_THREADS LOCAL_THREADS
#define BT_LOCAL_ITEMS (BT_LOCAL_CAPACITY / BT_LOCAL_THREADS)
static_assert(BT_LOCAL_ITEMS == 4u, "four slots per thread");

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
