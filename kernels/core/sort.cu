// kernels/core/sort.cu — stable LSD radix sort of (u64 key, u32 value) pairs, Onesweep
// style (Adinets & Merrill 2022): 8-bit digits, one kernel per digit pass, the digit
// offsets of earlier tiles found by decoupled look-back over per-tile digit counts.
//
// What it computes, for key bits [begin, end) in passes of 8 bits (the last one may be
// narrower); passes = ceil((end - begin) / 8), pass p sorts by bits
// [begin + 8p, min(begin + 8p + 8, end)):
//
//   radix_histogram   hist[p][d] += number of keys whose pass-p digit is d, for all
//                     passes at once (one read of the keys). hist is zeroed by the host.
//   radix_bin_offsets hist[p][d] <- sum of hist[p][d'] for d' < d (exclusive scan over
//                     the 256 digits of each pass, in place).
//   radix_onesweep    one pass: stably moves each (key, value) of keys_in/vals_in to
//                     keys_out/vals_out at  bin_offset[d] + (number of keys with digit d
//                     in earlier tiles) + (rank among keys with digit d in its own tile).
//
// Onesweep tile (SORT_THREADS = 256 = one thread per digit, SORT_ITEMS keys per thread):
//   1. The block draws the next tile id and the epoch from the control word (common.cuh:
//      lb_draw; the tile it waits on in step 4 has started: no deadlock; the block that
//      draws the last id advances the epoch with lb_finish, status words used = tiles * 256).
//      Warp w loads the contiguous SORT_ITEMS*32 keys
//      [w * 32 * SORT_ITEMS, ...) of the tile, item k of lane l being key k * 32 + l, so
//      the in-warp order (k, lane) is the index order. Keys past n read as all-ones: their
//      digit is the largest, and being last in the tile they rank after every real key.
//   2. Ranking with __match_any_sync: per item k the warp finds the lanes holding the
//      same digit; the lowest of them bumps the warp's counter of that digit (per-warp
//      counters in shared memory, touched by one lane at a time); the warp-local rank is
//      the old count plus the number of lower lanes with the same digit.
//   3. Thread d sums the warp counts of digit d, publishes the tile's AGGREGATE count of d
//      (INCLUSIVE for tile 0), and the block scans the 256 digit totals: rank in tile =
//      tile offset of d + count of d in lower warps + warp-local rank. Keys move into
//      shared memory in tile-sorted order.
//   4. Thread d walks back over earlier tiles' status words of digit d (serially, one
//      word at a time) until it meets an INCLUSIVE one, publishes INCLUSIVE, and stores
//      the global destination base of d minus d's tile offset.
//   5. Keys, then values (through the same shared memory), are written from shared
//      memory in tile order, so consecutive threads write consecutive positions of one
//      digit's run.
//
// Stability: the tile order is the index order (tile ids are contiguous ranges drawn in
// increasing order), ranks inside a tile follow the index order (warp, item, lane), and
// earlier tiles' keys of each digit come first.
//
// Launch shapes
//   radix_histogram   grid = min(chunks, SMs * SORT_HIST_BLOCKS_PER_SM), block = SORT_HIST_THREADS,
//                     chunk = SORT_HIST_THREADS * SORT_HIST_ITEMS keys, grid-stride over chunks.
//   radix_bin_offsets grid = 1, block = 256.
//   radix_onesweep    grid = ceil(n / SORT_TILE) exactly, block = SORT_THREADS.
//
// Buffers
//   keys_in/out   u64[n]     read / written (distinct buffers; the host ping-pongs)
//   vals_in/out   u32[n]     read / written
//   hist          u32[passes * 256]  atomically accumulated, then scanned in place
//   bin_offsets   u32[256]   this pass's row of hist, read
//   status        u64[tiles * 256]   look-back words (tile-major, digit-minor) of this pass's epoch
//   ctl, hwm      u64[1], u32[1]     the look-back control pair (common.cuh), shared with the scan
//
// Invariants: 0 < n < 2^32; 1 <= nbits <= 8; shift + nbits <= 64; keys and values are
// element-aligned (views may start anywhere: only scalar loads and stores).
//
// Measured cost (H200, driver 580.159.04, random keys, events, median of 10):
//   64M pairs: bits 0..64 7.10 ms (9.46 Gkeys/s), bits 0..63 7.06 ms
//   16M pairs: bits 0..64 1.92 ms (8.72 Gkeys/s), bits 0..63 1.91 ms
//   torch.sort of int64 + gather of an int32 payload, same run: 8.64 ms / 2.18 ms.

#if !defined(SORT_THREADS) || !defined(SORT_ITEMS) || !defined(SORT_MIN_BLOCKS) || !defined(SORT_HIST_THREADS) || \
    !defined(SORT_HIST_ITEMS)
#error "sort.cu needs SORT_THREADS, SORT_ITEMS, SORT_MIN_BLOCKS, SORT_HIST_THREADS and SORT_HIST_ITEMS from the policy"
#endif

#define RADIX 256
#define MAX_PASSES 8
#define SORT_WARPS (SORT_THREADS / 32)
#define SORT_TILE (SORT_THREADS * SORT_ITEMS)
#define SORT_WARP_KEYS (32 * SORT_ITEMS)

static_assert(SORT_THREADS == RADIX, "the onesweep kernel has one thread per digit");
static_assert(SORT_TILE * 8 + SORT_WARPS * RADIX * 4 + 2 * RADIX * 4 <= 48 * 1024,
              "onesweep shared memory must fit the 48 KB static limit");

__device__ __forceinline__ u32 digit_of(u64 key, u32 shift, u32 mask) { return (u32)(key >> shift) & mask; }

extern "C" __global__ void __launch_bounds__(SORT_HIST_THREADS)
    radix_histogram(const u64* __restrict__ keys, u32* __restrict__ hist, u32 n, u32 begin_bit, u32 end_bit) {
    __shared__ u32 s_hist[MAX_PASSES * RADIX];
    const u32 passes = (end_bit - begin_bit + 7u) / 8u;
    for (u32 i = threadIdx.x; i < passes * RADIX; i += SORT_HIST_THREADS) s_hist[i] = 0u;
    u32 shift[MAX_PASSES], mask[MAX_PASSES];
#pragma unroll
    for (u32 p = 0; p < MAX_PASSES; ++p) {
        shift[p] = begin_bit + 8u * p;
        const u32 bits = (p < passes) ? min(8u, end_bit - shift[p]) : 0u;
        mask[p] = (1u << bits) - 1u;
        shift[p] = (p < passes) ? shift[p] : 0u;
    }
    __syncthreads();
    const u32 chunk = SORT_HIST_THREADS * SORT_HIST_ITEMS;
    const u32 chunks = (u32)(((u64)n + chunk - 1u) / chunk);
    for (u32 c = blockIdx.x; c < chunks; c += gridDim.x) {
        const u64 base = (u64)c * chunk + threadIdx.x;
        u64 k[SORT_HIST_ITEMS];
#pragma unroll
        for (u32 i = 0; i < SORT_HIST_ITEMS; ++i) {
            const u64 idx = base + (u64)i * SORT_HIST_THREADS;
            k[i] = (idx < n) ? keys[idx] : 0ull;
        }
#pragma unroll
        for (u32 i = 0; i < SORT_HIST_ITEMS; ++i) {
            if (base + (u64)i * SORT_HIST_THREADS < n) {
#pragma unroll
                for (u32 p = 0; p < MAX_PASSES; ++p) {
                    if (p < passes) atomicAdd(&s_hist[p * RADIX + digit_of(k[i], shift[p], mask[p])], 1u);
                }
            }
        }
    }
    __syncthreads();
    for (u32 i = threadIdx.x; i < passes * RADIX; i += SORT_HIST_THREADS) {
        const u32 c = s_hist[i];
        if (c) atomicAdd(&hist[i], c);
    }
}

extern "C" __global__ void __launch_bounds__(RADIX) radix_bin_offsets(u32* __restrict__ hist, u32 passes) {
    __shared__ u32 scratch[RADIX / 32];
    for (u32 p = 0; p < passes; ++p) {
        const u32 v = hist[p * RADIX + threadIdx.x];
        u32 total;
        const u32 ex = block_exclusive_scan<RADIX / 32>(v, scratch, total);
        hist[p * RADIX + threadIdx.x] = ex;
    }
}

struct OnesweepShared {
    union {
        u64 keys[SORT_TILE];
        u32 vals[SORT_TILE];
    } ex;
    u32 warp_count[SORT_WARPS][RADIX];  // per-warp digit counts, then per-warp rank offsets
    u32 dst_base[RADIX];                // global position of the digit's run minus its tile offset
    u32 scan[SORT_WARPS];
    u32 tile;
    u32 epoch;
};

extern "C" __global__ void __launch_bounds__(SORT_THREADS, SORT_MIN_BLOCKS)
    radix_onesweep(const u64* __restrict__ keys_in, const u32* __restrict__ vals_in, u64* __restrict__ keys_out,
                   u32* __restrict__ vals_out, const u32* __restrict__ bin_offsets, u64* status, u64* ctl,
                   u32* hwm, u32 n, u32 shift, u32 nbits) {
    __shared__ OnesweepShared sh;
    const u32 t = threadIdx.x;
    const u32 lane = lane_id();
    const u32 warp = t >> 5;
    const u32 mask = (1u << nbits) - 1u;

    // 1. tile id, counters, keys
#pragma unroll
    for (u32 w = 0; w < SORT_WARPS; ++w) sh.warp_count[w][t] = 0u;
    if (t == 0) {
        u32 drawn, e;
        lb_draw(ctl, drawn, e);
        sh.tile = drawn;
        sh.epoch = e;
    }
    __syncthreads();
    const u32 tile = sh.tile;
    const u32 epoch = sh.epoch;
    if (tile == gridDim.x - 1) lb_finish(ctl, hwm, status, gridDim.x * RADIX, epoch);
    const u32 tile_base = tile * SORT_TILE;
    const u32 valid = min((u32)SORT_TILE, n - tile_base);
    const u32 warp_off = warp * SORT_WARP_KEYS + lane;

    u64 key[SORT_ITEMS];
#pragma unroll
    for (u32 k = 0; k < SORT_ITEMS; ++k) {
        const u32 off = warp_off + k * 32;
        key[k] = (off < valid) ? keys_in[tile_base + off] : ~0ull;
    }

    // 2. warp-local ranks
    const u32 lt = lanemask_lt();
    u32 rank[SORT_ITEMS];
#pragma unroll
    for (u32 k = 0; k < SORT_ITEMS; ++k) {
        const u32 d = digit_of(key[k], shift, mask);
        const u32 peers = __match_any_sync(FULL_MASK, d);
        const u32 leader = __ffs(peers) - 1;
        u32 before = 0;
        if (lane == leader) {
            before = sh.warp_count[warp][d];
            sh.warp_count[warp][d] = before + __popc(peers);
        }
        before = __shfl_sync(FULL_MASK, before, leader);
        rank[k] = before + __popc(peers & lt);
        __syncwarp();
    }
    __syncthreads();

    // 3. digit totals, early publication, tile offsets
    u32 total = 0;
#pragma unroll
    for (u32 w = 0; w < SORT_WARPS; ++w) {
        const u32 c = sh.warp_count[w][t];
        sh.warp_count[w][t] = total;
        total += c;
    }
    u64* my_status = status + (u64)tile * RADIX + t;
    st_relaxed_u64(my_status, lb_pack(epoch, tile == 0 ? LB_INCLUSIVE : LB_AGGREGATE, total));
    u32 tile_sum;
    const u32 tile_excl = block_exclusive_scan<SORT_WARPS>(total, sh.scan, tile_sum);
#pragma unroll
    for (u32 w = 0; w < SORT_WARPS; ++w) sh.warp_count[w][t] += tile_excl;
    __syncthreads();
#pragma unroll
    for (u32 k = 0; k < SORT_ITEMS; ++k) {
        rank[k] += sh.warp_count[warp][digit_of(key[k], shift, mask)];
        sh.ex.keys[rank[k]] = key[k];
    }

    // 4. look-back for digit t
    u32 prefix = 0;
    if (tile > 0) {
        const u64* p = status + (u64)(tile - 1) * RADIX + t;
        while (true) {
            u64 word;
            u32 flag;
            do {
                word = ld_relaxed_u64(p);
                flag = lb_flag(word, epoch);
            } while (flag == 0u);
            prefix += (u32)word;
            if (flag == LB_INCLUSIVE) break;
            p -= RADIX;
        }
        st_relaxed_u64(my_status, lb_pack(epoch, LB_INCLUSIVE, prefix + total));
    }
    sh.dst_base[t] = bin_offsets[t] + prefix - tile_excl;

    // values are needed only after the keys are out: load them now so the loads are in
    // flight while the keys move.
    u32 val[SORT_ITEMS];
#pragma unroll
    for (u32 k = 0; k < SORT_ITEMS; ++k) {
        const u32 off = warp_off + k * 32;
        val[k] = (off < valid) ? vals_in[tile_base + off] : 0u;
    }
    __syncthreads();

    // 5. write keys in tile order, remember their destinations, then the values
    u32 dst[SORT_ITEMS];
#pragma unroll
    for (u32 j = 0; j < SORT_ITEMS; ++j) {
        const u32 i = j * SORT_THREADS + t;
        if (i < valid) {
            const u64 k = sh.ex.keys[i];
            dst[j] = sh.dst_base[digit_of(k, shift, mask)] + i;
            keys_out[dst[j]] = k;
        }
    }
    __syncthreads();
#pragma unroll
    for (u32 k = 0; k < SORT_ITEMS; ++k) sh.ex.vals[rank[k]] = val[k];
    __syncthreads();
#pragma unroll
    for (u32 j = 0; j < SORT_ITEMS; ++j) {
        const u32 i = j * SORT_THREADS + t;
        if (i < valid) vals_out[dst[j]] = sh.ex.vals[i];
    }
}
