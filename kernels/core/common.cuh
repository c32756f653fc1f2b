// kernels/core/common.cuh — shared prelude of every kernels/core module.
//
// What it holds: the integer type names, warp and block collectives (sums and scans
// in a fixed order), and the status words of the single-pass decoupled look-back used
// by the scan, the compaction and the radix sort.
//
// How it is used: the executor prepends this file to each module's source before NVRTC
// compiles it (one translation unit per module, no #include), together with the tuning
// constants of src/policy.rs as -D defines. Every module checks that the defines it
// needs are present, so the policy has exactly one source of truth.
//
// Look-back status words (64 bits, one per tile, or per tile and digit in the sort):
//
//     bits 63..34  epoch   the operation that wrote the word
//     bits 33..32  flag    1 = AGGREGATE (this tile alone), 2 = INCLUSIVE (all tiles <= this)
//     bits 31..0   value   the count or sum
//
// A word whose epoch differs from the running operation's reads as "not ready", so the
// status array is never cleared between operations. Flag and value live in one word, so
// relaxed 64-bit loads and stores suffice: a reader never needs data published by
// another block beyond the word.
//
// Epochs live on the device (no epoch scalar from the host, so a replayed CUDA graph
// stays correct). The executor keeps one control pair per status array:
//
//     u64 ctl = epoch << 32 | tile counter     (1 << 32 after allocation: epoch 0 is never valid)
//     u32 hwm = most status words any launch has used since the array was allocated
//
// Each block draws `old = atomicAdd(ctl, 1)`: tile = low 32 bits, epoch = high 32 bits
// (lb_draw). The block that draws the last tile (tile == gridDim.x - 1; all draws are done
// then) calls lb_finish: it raises hwm to the words this launch uses (`used`), clears the
// words [used, hwm) when the epoch is LB_MAX_EPOCH or 1 (see below), and stores
// `next << 32` (next = epoch + 1, or 1 after LB_MAX_EPOCH), which resets the tile counter
// for the next launch on the stream. Why both clears: every launch writes its epoch into
// words [0, used) only. The LB_MAX_EPOCH launch clears [used, hwm) so that no word of the
// ending cycle survives except its own (epoch MAX); the epoch-1 launch after it clears
// [used, hwm) again, which removes those MAX words beyond its own range. From then on
// every word holds 0 or an epoch below the running one, until the next wrap.

typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;
typedef long long i64;

#define FULL_MASK 0xffffffffu

#define LB_AGGREGATE 1u
#define LB_INCLUSIVE 2u
#define LB_MAX_EPOCH ((1u << 30) - 1u)

__device__ __forceinline__ u64 lb_pack(u32 epoch, u32 flag, u32 value) {
    return ((u64)epoch << 34) | ((u64)flag << 32) | (u64)value;
}

// The flag of `word` for operation `epoch`, or 0 when the word belongs to another one.
__device__ __forceinline__ u32 lb_flag(u64 word, u32 epoch) {
    return ((u32)(word >> 34) == epoch) ? (u32)(word >> 32) & 3u : 0u;
}

__device__ __forceinline__ u64 ld_relaxed_u64(const u64* p) {
    u64 v;
    asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void st_relaxed_u64(u64* p, u64 v) {
    asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// One block's draw from the control word: its tile id and the launch's epoch. Call from
// one thread.
__device__ __forceinline__ void lb_draw(u64* ctl, u32& tile, u32& epoch) {
    const u64 old = atomicAdd(reinterpret_cast<unsigned long long*>(ctl), 1ull);
    tile = (u32)old;
    epoch = (u32)(old >> 32);
}

// Called by every thread of the block that drew tile gridDim.x - 1 (block-uniform
// condition: it contains __syncthreads). `used` = status words this launch writes.
__device__ __noinline__ void lb_finish(u64* ctl, u32* hwm, u64* status, u32 used, u32 epoch) {
    __shared__ u32 s_old_hwm;
    if (threadIdx.x == 0) {
        const u32 old = *hwm;
        s_old_hwm = old;
        *hwm = old > used ? old : used;
    }
    __syncthreads();
    if (epoch == LB_MAX_EPOCH || epoch == 1u) {
        for (u32 j = used + threadIdx.x; j < s_old_hwm; j += blockDim.x) status[j] = 0ull;
    }
    if (threadIdx.x == 0) {
        const u32 next = epoch >= LB_MAX_EPOCH ? 1u : epoch + 1u;
        atomicExch(reinterpret_cast<unsigned long long*>(ctl), (unsigned long long)next << 32);
    }
    __syncthreads();
}

__device__ __forceinline__ u32 lane_id() { return threadIdx.x & 31u; }

__device__ __forceinline__ u32 lanemask_lt() {
    u32 m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}

// Inclusive warp scan (Kogge-Stone over shuffles), wrapping u32 arithmetic.
__device__ __forceinline__ u32 warp_inclusive_scan(u32 v) {
    const u32 lane = lane_id();
#pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
        const u32 o = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d) v += o;
    }
    return v;
}

// Sum over the warp, wrapping; every lane gets the result.
__device__ __forceinline__ u32 warp_sum(u32 v) {
#pragma unroll
    for (u32 d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(FULL_MASK, v, d);
    return v;
}

// Exclusive scan over a block of `WARPS` warps, one value per thread. `scratch` holds
// WARPS words of shared memory. Returns the exclusive prefix; `total` receives the block
// sum. Contains two __syncthreads: every thread of the block must call it.
template <u32 WARPS>
__device__ __forceinline__ u32 block_exclusive_scan(u32 v, u32* scratch, u32& total) {
    const u32 lane = lane_id();
    const u32 warp = threadIdx.x >> 5;
    const u32 incl = warp_inclusive_scan(v);
    if (lane == 31) scratch[warp] = incl;
    __syncthreads();
    u32 before = 0, sum = 0;
#pragma unroll
    for (u32 w = 0; w < WARPS; ++w) {
        const u32 s = scratch[w];
        before += (w < warp) ? s : 0u;
        sum += s;
    }
    __syncthreads();
    total = sum;
    return before + incl - v;
}

// Decoupled look-back by one warp over per-tile status words: returns the sum of the
// values of all tiles before `tile` (every lane gets it). Tiles publish AGGREGATE as soon
// as they know their own sum and INCLUSIVE once they know their prefix; tile 0 publishes
// INCLUSIVE at once, so the walk always ends. Each round reads a window of 32 * WORDS
// predecessors (word k of lane l is tile end - 1 - 32k - l, nearest first) and stops at the
// nearest INCLUSIVE one; tiles before the first read as an INCLUSIVE zero. A wider window
// lets the INCLUSIVE front advance further per L2 round trip, which is what bounds a scan
// of many small tiles.
template <int WORDS>
__device__ __forceinline__ u32 warp_lookback(const u64* status, u32 tile, u32 epoch) {
    const u32 lane = lane_id();
    u32 prefix = 0;
    long long end = (long long)tile;  // look at tiles [end - 32 * WORDS, end)
    while (true) {
        u64 word[WORDS];
        u32 flag[WORDS];
        bool waiting;
        do {
            waiting = false;
#pragma unroll
            for (int k = 0; k < WORDS; ++k) {
                const long long j = end - 1 - 32LL * k - (long long)lane;
                word[k] = (j >= 0) ? ld_relaxed_u64(status + j) : lb_pack(epoch, LB_INCLUSIVE, 0u);
                flag[k] = lb_flag(word[k], epoch);
                waiting |= flag[k] == 0u;
            }
        } while (__any_sync(FULL_MASK, waiting));
        u32 stop = 32u * WORDS - 1u;
        bool found = false;
#pragma unroll
        for (int k = 0; k < WORDS; ++k) {
            const u32 inclusive = __ballot_sync(FULL_MASK, flag[k] == LB_INCLUSIVE);
            if (!found && inclusive) {
                stop = 32u * k + (u32)(__ffs(inclusive) - 1);
                found = true;
            }
        }
        // Lanes up to and including the nearest INCLUSIVE tile contribute.
        u32 v = 0;
#pragma unroll
        for (int k = 0; k < WORDS; ++k) v += (32u * k + lane <= stop) ? (u32)word[k] : 0u;
        prefix += warp_sum(v);
        if (found) return prefix;
        end -= 32LL * WORDS;
    }
}
