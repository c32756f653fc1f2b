// kernels/core/scan.cu — exclusive scan of u32 into CSR offsets, and stream compaction.
//
// What it computes
//   scan_exclusive_u32:  out[i] = in[0] + ... + in[i-1] (wrapping) for i < n, out[n] = total.
//   compact_b4/_b8:      out[k] = in[i] for the k-th i with flags[i] != 0, in order;
//                        count[0] = number of such i. out[count..n) is left untouched.
//
// Algorithm: one pass, decoupled look-back (Merrill & Garland 2016). Each block takes the
// next tile id from an atomic counter (so every tile it waits for has already started:
// no deadlock whatever the scheduling), reduces its tile, publishes the tile's AGGREGATE,
// lets warp 0 walk back over its predecessors' status words (common.cuh) to get its
// exclusive prefix, publishes INCLUSIVE, and writes. Data are read once and written once.
//
// Launch shape: grid = tiles = ceil(n / SCAN_TILE) blocks exactly (also passed as `tiles`),
// one tile each; block = SCAN_THREADS threads. The block that draws the last tile id
// resets the tile counter to 0 for the next launch.
// Tile = SCAN_THREADS * SCAN_VECS * 4 elements. Warp w of a tile covers the contiguous
// range [w * 128 * SCAN_VECS, (w + 1) * 128 * SCAN_VECS); its lane l holds the 16-byte
// vectors j * 32 + l (j < SCAN_VECS), so every load is a coalesced 16-byte load and the
// in-warp order is (vector j, lane, element), which is the index order. Warp 0 looks back
// over windows of 32 * SCAN_LOOKBACK_WORDS predecessors.
//
// Buffers
//   in      u32[n]        read      (16-byte aligned: buffers start at allocation starts)
//   flags   u32[n]        read      (compaction; nonzero = keep)
//   out     u32[n + 1]    written   (scan);  T[n] written (compaction, first count elements)
//   count   u32[1]        written   (compaction)
//   status  u64[>= grid]  read/written look-back words of this launch's epoch
//   counter u32[1]        read/written: 0 on entry, 0 on exit
//
// Invariants: n < 2^32 (u32 totals); n > 0 (the host handles n == 0); status words of
// earlier epochs may hold anything but the current epoch.
//
// Measured cost (H200, driver 580.159.04, events, median of 10): exclusive scan of 256M u32
// in 0.719 ms = 2988 GB/s in + out, 70% of the 1 GiB device copy (0.506 ms) with
// SCAN_MIN_BLOCKS = 4 (0.769 ms, 65%, with ptxas's own 72 registers); compaction of
// 64M u64 with half the flags set in 0.301 ms.

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
    u32 prefix;
};

// Index of element 0 of vector j of this thread, relative to the tile start.
__device__ __forceinline__ u32 scan_vec_offset(u32 j) {
    return ((threadIdx.x >> 5) * SCAN_VECS + j) * 128u + 4u * lane_id();
}

// Loads the thread's vectors; elements at or past n read as 0. With FLAGS, each element
// becomes 1 when nonzero.
template <bool FLAGS>
__device__ __forceinline__ void scan_load(const u32* __restrict__ in, u64 base, u64 n, uint4 (&v)[SCAN_VECS]) {
    const bool full = base + SCAN_TILE <= n;
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

__device__ __forceinline__ u32 scan_next_tile(ScanShared& sh, u32* counter) {
    if (threadIdx.x == 0) sh.tile = atomicAdd(counter, 1u);
    __syncthreads();
    return sh.tile;
}

// Scans the loaded tile `v` and writes its exclusive prefixes (and the total after the
// last tile).
__device__ __forceinline__ void scan_tile_write(const uint4 (&v)[SCAN_VECS], ScanShared& sh, u32* __restrict__ out,
                                                u64* status, u32 tile, u32 tiles, u64 n, u32 epoch) {
    const u64 base = (u64)tile * SCAN_TILE;
    u32 ex[SCAN_VECS];
    u32 total;
    scan_tile(v, ex, sh, status, tile, epoch, total);
    const bool full = base + SCAN_TILE <= n;
#pragma unroll
    for (u32 j = 0; j < SCAN_VECS; ++j) {
        const u64 i = base + scan_vec_offset(j);
        uint4 o;
        o.x = ex[j];
        o.y = o.x + v[j].x;
        o.z = o.y + v[j].y;
        o.w = o.z + v[j].z;
        if (full) {
            *reinterpret_cast<uint4*>(out + i) = o;
        } else {
            if (i + 0 < n) out[i + 0] = o.x;
            if (i + 1 < n) out[i + 1] = o.y;
            if (i + 2 < n) out[i + 2] = o.z;
            if (i + 3 < n) out[i + 3] = o.w;
        }
    }
    if (threadIdx.x == 0 && tile == tiles - 1) out[n] = total;
}

// Compacts the tile whose flags (as 0/1) are loaded in `v`.
template <typename T>
__device__ __forceinline__ void compact_tile_write(const uint4 (&v)[SCAN_VECS], ScanShared& sh,
                                                   const T* __restrict__ in, T* __restrict__ out,
                                                   u32* __restrict__ count, u64* status, u32 tile, u32 tiles,
                                                   u32 epoch) {
    const u64 base = (u64)tile * SCAN_TILE;
    u32 ex[SCAN_VECS];
    u32 total;
    scan_tile(v, ex, sh, status, tile, epoch, total);
#pragma unroll
    for (u32 j = 0; j < SCAN_VECS; ++j) {
        const u64 i = base + scan_vec_offset(j);
        u32 pos = ex[j];
        // Elements past n have flag 0, so they are never read or written.
        if (v[j].x) out[pos++] = in[i + 0];
        if (v[j].y) out[pos++] = in[i + 1];
        if (v[j].z) out[pos++] = in[i + 2];
        if (v[j].w) out[pos] = in[i + 3];
    }
    if (threadIdx.x == 0 && tile == tiles - 1) count[0] = total;
}

// ---- kernels: one tile per block ----------------------------------------------------------
// The block that drew the last tile id resets the counter: every other block has drawn
// its id before it (one atomicAdd per block), so no one reads it afterwards.

extern "C" __global__ void __launch_bounds__(SCAN_THREADS, SCAN_MIN_BLOCKS)
    scan_exclusive_u32(const u32* __restrict__ in, u32* __restrict__ out, u64* status, u32* counter, u64 n,
                       u32 epoch, u32 tiles) {
    __shared__ ScanShared sh;
    const u32 tile = scan_next_tile(sh, counter);
    uint4 v[SCAN_VECS];
    scan_load<false>(in, (u64)tile * SCAN_TILE, n, v);
    scan_tile_write(v, sh, out, status, tile, tiles, n, epoch);
    if (threadIdx.x == 0 && tile == tiles - 1) *counter = 0u;
}

template <typename T>
__device__ __forceinline__ void compact_one(const T* __restrict__ in, const u32* __restrict__ flags, T* __restrict__ out,
                                            u32* __restrict__ count, u64* status, u32* counter, u64 n, u32 epoch,
                                            u32 tiles) {
    __shared__ ScanShared sh;
    const u32 tile = scan_next_tile(sh, counter);
    uint4 v[SCAN_VECS];
    scan_load<true>(flags, (u64)tile * SCAN_TILE, n, v);
    compact_tile_write<T>(v, sh, in, out, count, status, tile, tiles, epoch);
    if (threadIdx.x == 0 && tile == tiles - 1) *counter = 0u;
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS, SCAN_MIN_BLOCKS)
    compact_b4(const u32* __restrict__ in, const u32* __restrict__ flags, u32* __restrict__ out, u32* __restrict__ count,
               u64* status, u32* counter, u64 n, u32 epoch, u32 tiles) {
    compact_one<u32>(in, flags, out, count, status, counter, n, epoch, tiles);
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS, SCAN_MIN_BLOCKS)
    compact_b8(const u64* __restrict__ in, const u32* __restrict__ flags, u64* __restrict__ out, u32* __restrict__ count,
               u64* status, u32* counter, u64 n, u32 epoch, u32 tiles) {
    compact_one<u64>(in, flags, out, count, status, counter, n, epoch, tiles);
}
