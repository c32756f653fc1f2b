// kernels/core/scan.cu — prefix sums of u32 (exclusive into CSR offsets, inclusive) and
// stream compaction, plain or over a device-resident count.
//
// What it computes, for n = count ? min(*count, bound) : bound (the live length; `count`
// is a one-word device count or null):
//   scan_exclusive_u32:  out[i] = in[0] + ... + in[i-1] (wrapping) for i < n, out[n] = total;
//                        out[n+1 ..] is left untouched.
//   scan_inclusive_u32:  out[i] = in[0] + ... + in[i] (wrapping) for i < n.
//   compact_b4/_b8/_words: out[k] = in[i] for the k-th i < n with flags[i] != 0, in order;
//                        count_out[0] = number of such i. out past the count is untouched.
//                        _words moves elements of `words` u32 words each.
//
// Algorithm: one pass, decoupled look-back (Merrill & Garland 2016). Each block draws the
// next tile id and the launch's epoch from the control word (common.cuh: lb_draw, so every
// tile it waits for has already started: no deadlock whatever the scheduling), reduces its
// tile, publishes the tile's AGGREGATE, lets warp 0 walk back over its predecessors' status
// words to get its exclusive prefix, publishes INCLUSIVE, and writes. Data are read once and
// written once. The block that draws the last id advances the epoch (lb_finish).
//
// Launch shape: grid = max(1, ceil(bound / SCAN_TILE)) blocks (sized for the bound), block =
// SCAN_THREADS threads, one tile per block. Live tiles = max(1, ceil(n / SCAN_TILE)) (tile 0
// always runs: it writes out[0] = 0 or count_out = 0 for n = 0); blocks that draw a tile id
// past the live tiles return right after the draw (and lb_finish when theirs is the last id),
// so the look-back protocol holds for any count. Status words used = live tiles.
// Tile = SCAN_THREADS * SCAN_VECS * 4 elements. Warp w of a tile covers the contiguous
// range [w * 128 * SCAN_VECS, (w + 1) * 128 * SCAN_VECS); its lane l holds the 16-byte
// vectors j * 32 + l (j < SCAN_VECS), so every load is a coalesced 16-byte load and the
// in-warp order is (vector j, lane, element), which is the index order. Vector loads and
// stores are used only when the pointers are 16-byte aligned (views may start at any
// element), otherwise element loads of the same elements. Warp 0 looks back over windows
// of 32 * SCAN_LOOKBACK_WORDS predecessors.
//
// Buffers
//   in        u32[>= n] read   (scan input; compaction: T[>= n], any element alignment)
//   flags     u32[>= n] read   (compaction; nonzero = keep)
//   out       u32[n + 1] written (exclusive), u32[n] (inclusive), T[<= n] (compaction)
//   count     u32[1]    read   (the live count, or null for n = bound)
//   count_out u32[1]    written (compaction)
//   status    u64[>= grid] read/written: look-back words of this launch's epoch
//   ctl, hwm  u64[1], u32[1] read/written: the control pair (common.cuh)
//
// Invariants: bound < 2^32 (u32 totals); status words hold 0 or epochs other than the
// running one (maintained by lb_finish and the executor's zeroing on allocation).
//
// Measured cost (H200, driver 580.159.04, events, median of 10), before the device-resident
// epochs and counts: exclusive scan of 256M u32 in 0.719 ms = 2988 GB/s in + out, 70% of
// the 1 GiB device copy (0.506 ms) with SCAN_MIN_BLOCKS = 4; compaction of 64M u64 with
// half the flags set in 0.301 ms. The counted / inclusive / device-epoch kernels: not
// measured yet.

#ifndef SCAN_MIN_BLOCKS
#define SCAN_MIN_BLOCKS 1
#endif
#if !defined(SCAN_THREADS) || !defined(SCAN_VECS) || !defined(SCAN_LOOKBACK_WORDS)
#error "scan.cu needs SCAN_THREADS, SCAN_VECS and SCAN_LOOKBACK_WORDS from the executor's policy"
#endif

#define SCAN_WARPS (SCAN_THREADS / 32)
#define SCAN_TILE (SCAN_THREADS * SCAN_VECS * 4)

struct ScanShared {
    u32 warp_totals[SCAN_WARPS];
    u32 tile;
    u32 epoch;
    u32 prefix;
    u32 n;
};

// Index of element 0 of vector j of this thread, relative to the tile start.
__device__ __forceinline__ u32 scan_vec_offset(u32 j) {
    return ((threadIdx.x >> 5) * SCAN_VECS + j) * 128u + 4u * lane_id();
}

// Loads the thread's vectors; elements at or past n read as 0. With FLAGS, each element
// becomes 1 when nonzero.
template <bool FLAGS>
__device__ __forceinline__ void scan_load(const u32* __restrict__ in, u64 base, u64 n, bool aligned,
                                          uint4 (&v)[SCAN_VECS]) {
    const bool full = aligned && base + SCAN_TILE <= n;
#pragma unroll
    for (u32 j = 0; j < SCAN_VECS; ++j) {
        const u64 i = base + scan_vec_offset(j);
        if (full) {
            v[j] = *reinterpret_cast<const uint4*>(in + i);
        } else {
            v[j].x = (i + 0 < n) ? in[i + 0] : 0u;
            v[j].y = (i + 1 < n) ? in[i + 1] : 0u;
            v[j].z = (i + 2 < n) ? in[i + 2] : 0u;
            v[j].w = (i + 3 < n) ? in[i + 3] : 0u;
        }
        if (FLAGS) {
            v[j].x = v[j].x != 0u;
            v[j].y = v[j].y != 0u;
            v[j].z = v[j].z != 0u;
            v[j].w = v[j].w != 0u;
        }
    }
}

// The tile-level scan shared by both kernels. On return, ex[j] is the exclusive prefix
// (from the start of the whole array) of vector j's first element, the block has
// published its INCLUSIVE status, and `total_out` is the inclusive total up to the end of
// this tile. `tile` is this block's tile id.
__device__ __forceinline__ void scan_tile(const uint4 (&v)[SCAN_VECS], u32 (&ex)[SCAN_VECS], ScanShared& sh,
                                          u64* status, u32 tile, u32 epoch, u32& total_out) {
    const u32 lane = lane_id();
    const u32 warp = threadIdx.x >> 5;
    u32 carry = 0;
#pragma unroll
    for (u32 j = 0; j < SCAN_VECS; ++j) {
        const u32 s = v[j].x + v[j].y + v[j].z + v[j].w;
        const u32 incl = warp_inclusive_scan(s);
        ex[j] = carry + incl - s;
        carry += __shfl_sync(FULL_MASK, incl, 31);
    }
    if (lane == 0) sh.warp_totals[warp] = carry;
    __syncthreads();
    u32 warp_prefix = 0, aggregate = 0;
#pragma unroll
    for (u32 w = 0; w < SCAN_WARPS; ++w) {
        const u32 t = sh.warp_totals[w];
        warp_prefix += (w < warp) ? t : 0u;
        aggregate += t;
    }
    if (warp == 0) {
        u32 prefix = 0;
        if (tile == 0) {
            if (lane == 0) st_relaxed_u64(status, lb_pack(epoch, LB_INCLUSIVE, aggregate));
        } else {
            if (lane == 0) st_relaxed_u64(status + tile, lb_pack(epoch, LB_AGGREGATE, aggregate));
            prefix = warp_lookback<SCAN_LOOKBACK_WORDS>(status, tile, epoch);
            if (lane == 0) st_relaxed_u64(status + tile, lb_pack(epoch, LB_INCLUSIVE, prefix + aggregate));
        }
        if (lane == 0) sh.prefix = prefix;
    }
    __syncthreads();
    const u32 prefix = sh.prefix + warp_prefix;
#pragma unroll
    for (u32 j = 0; j < SCAN_VECS; ++j) ex[j] += prefix;
    total_out = sh.prefix + aggregate;
}

// Draws this block's tile and the epoch, reads the live count, and lets the block that
// drew the last id finish the control pair. Returns false when the tile is past the live
// tiles (the block then exits). All threads of the block call it.
__device__ __forceinline__ bool scan_begin(ScanShared& sh, const u32* count, u32 bound, u64* status, u64* ctl,
                                           u32* hwm, u32& tile, u32& epoch, u64& n) {
    if (threadIdx.x == 0) {
        u32 t, e;
        lb_draw(ctl, t, e);
        sh.tile = t;
        sh.epoch = e;
        sh.n = count ? min(*count, bound) : bound;
    }
    __syncthreads();
    tile = sh.tile;
    epoch = sh.epoch;
    n = sh.n;
    const u32 live_tiles = max(1u, (u32)((n + SCAN_TILE - 1) / SCAN_TILE));
    if (tile == gridDim.x - 1) lb_finish(ctl, hwm, status, live_tiles, epoch);
    return tile < live_tiles;
}

__device__ __forceinline__ bool aligned16(const void* p) { return ((u64)p & 15ull) == 0ull; }

// Scans the loaded tile `v` and writes its prefixes: exclusive (and the total after the
// last live tile) or inclusive.
template <bool INCLUSIVE>
__device__ __forceinline__ void scan_tile_write(const uint4 (&v)[SCAN_VECS], ScanShared& sh, u32* __restrict__ out,
                                                u64* status, u32 tile, u64 n, u32 epoch, bool aligned) {
    const u64 base = (u64)tile * SCAN_TILE;
    u32 ex[SCAN_VECS];
    u32 total;
    scan_tile(v, ex, sh, status, tile, epoch, total);
    const bool full = aligned && base + SCAN_TILE <= n;
#pragma unroll
    for (u32 j = 0; j < SCAN_VECS; ++j) {
        const u64 i = base + scan_vec_offset(j);
        uint4 o;
        if (INCLUSIVE) {
            o.x = ex[j] + v[j].x;
            o.y = o.x + v[j].y;
            o.z = o.y + v[j].z;
            o.w = o.z + v[j].w;
        } else {
            o.x = ex[j];
            o.y = o.x + v[j].x;
            o.z = o.y + v[j].y;
            o.w = o.z + v[j].z;
        }
        if (full) {
            *reinterpret_cast<uint4*>(out + i) = o;
        } else {
            if (i + 0 < n) out[i + 0] = o.x;
            if (i + 1 < n) out[i + 1] = o.y;
            if (i + 2 < n) out[i + 2] = o.z;
            if (i + 3 < n) out[i + 3] = o.w;
        }
    }
    // The last live tile ends at or past n (n == 0: tile 0 with total 0).
    if (!INCLUSIVE && threadIdx.x == 0 && base + SCAN_TILE >= n) out[n] = total;
}

template <bool INCLUSIVE>
__device__ __forceinline__ void scan_kernel(const u32* __restrict__ in, u32* __restrict__ out, const u32* count,
                                            u64* status, u64* ctl, u32* hwm, u32 bound) {
    __shared__ ScanShared sh;
    u32 tile, epoch;
    u64 n;
    if (!scan_begin(sh, count, bound, status, ctl, hwm, tile, epoch, n)) return;
    const bool aligned = aligned16(in) && aligned16(out);
    uint4 v[SCAN_VECS];
    scan_load<false>(in, (u64)tile * SCAN_TILE, n, aligned, v);
    scan_tile_write<INCLUSIVE>(v, sh, out, status, tile, n, epoch, aligned);
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS, SCAN_MIN_BLOCKS)
    scan_exclusive_u32(const u32* __restrict__ in, u32* __restrict__ out, const u32* count, u64* status, u64* ctl,
                       u32* hwm, u32 bound) {
    scan_kernel<false>(in, out, count, status, ctl, hwm, bound);
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS, SCAN_MIN_BLOCKS)
    scan_inclusive_u32(const u32* __restrict__ in, u32* __restrict__ out, const u32* count, u64* status, u64* ctl,
                       u32* hwm, u32 bound) {
    scan_kernel<true>(in, out, count, status, ctl, hwm, bound);
}

// ---- compaction ------------------------------------------------------------------------

// Moves one element of T.
template <typename T>
struct ElemMove {
    const T* __restrict__ in;
    T* __restrict__ out;
    __device__ __forceinline__ void operator()(u64 src, u32 dst) const { out[dst] = in[src]; }
};

// Moves one element of `words` u32 words.
struct WordsMove {
    const u32* __restrict__ in;
    u32* __restrict__ out;
    u32 words;
    __device__ __forceinline__ void operator()(u64 src, u32 dst) const {
        for (u32 w = 0; w < words; ++w) out[(u64)dst * words + w] = in[src * words + w];
    }
};

template <typename Move>
__device__ __forceinline__ void compact_kernel(const Move& move, const u32* __restrict__ flags,
                                               u32* __restrict__ count_out, const u32* live, u64* status, u64* ctl,
                                               u32* hwm, u32 bound) {
    __shared__ ScanShared sh;
    u32 tile, epoch;
    u64 n;
    if (!scan_begin(sh, live, bound, status, ctl, hwm, tile, epoch, n)) return;
    const u64 base = (u64)tile * SCAN_TILE;
    uint4 v[SCAN_VECS];
    scan_load<true>(flags, base, n, aligned16(flags), v);
    u32 ex[SCAN_VECS];
    u32 total;
    scan_tile(v, ex, sh, status, tile, epoch, total);
#pragma unroll
    for (u32 j = 0; j < SCAN_VECS; ++j) {
        const u64 i = base + scan_vec_offset(j);
        u32 pos = ex[j];
        // Elements at or past n have flag 0, so they are never read or written.
        if (v[j].x) move(i + 0, pos++);
        if (v[j].y) move(i + 1, pos++);
        if (v[j].z) move(i + 2, pos++);
        if (v[j].w) move(i + 3, pos);
    }
    if (threadIdx.x == 0 && base + SCAN_TILE >= n) count_out[0] = total;
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS, SCAN_MIN_BLOCKS)
    compact_b4(const u32* __restrict__ in, const u32* __restrict__ flags, u32* __restrict__ out,
               u32* __restrict__ count_out, const u32* live, u64* status, u64* ctl, u32* hwm, u32 bound) {
    const ElemMove<u32> move{in, out};
    compact_kernel(move, flags, count_out, live, status, ctl, hwm, bound);
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS, SCAN_MIN_BLOCKS)
    compact_b8(const u64* __restrict__ in, const u32* __restrict__ flags, u64* __restrict__ out,
               u32* __restrict__ count_out, const u32* live, u64* status, u64* ctl, u32* hwm, u32 bound) {
    const ElemMove<u64> move{in, out};
    compact_kernel(move, flags, count_out, live, status, ctl, hwm, bound);
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS, SCAN_MIN_BLOCKS)
    compact_words(const u32* __restrict__ in, const u32* __restrict__ flags, u32* __restrict__ out,
                  u32* __restrict__ count_out, const u32* live, u64* status, u64* ctl, u32* hwm, u32 bound,
                  u32 words) {
    const WordsMove move{in, out, words};
    compact_kernel(move, flags, count_out, live, status, ctl, hwm, bound);
}
