// kernels/tree/common.cuh — the prelude of the Cornerstone tree build's CUDA modules
// (crates/orrery-tree-build/src/gpu): the host concatenates it with one pass file
// (keys.cu, passes.cu, leaf_count.cu) into each module's text.
//
// What it computes: device functions only, each the port of one CPU rule:
//   tb_lower_bound   orrery_core::executor::lower_bound_one's halving loop (first, count)
//                    over u64 keys, so counts equal crate::counts::leaf_counts bit for bit
//   tb_leaf_level    crate::leaves::leaf_level: levels - ctz(K[i+1] - K[i]) / bits
//   tb_key_end       KeyLayout::key_end: 1 << (bits * levels)
//   tb_live          min(status[TB_LEAF_COUNT], capacity): the live leaf count, clamped
//                    (a bad device value is defined, never a fault)
// and the layout of the status block every pass reads (gpu/status.rs holds the host's
// copy; a test checks that they agree).
//
// Launch shape: functions only. TB_THREADS (256) is the block size of every per-item
//   kernel (gpu/kernels.rs holds the host's copy); the status kernels run one thread.
//
// Buffers: none.
//
// Invariants: leaf arrays are valid Cornerstone arrays (strictly increasing cells); a
//   zero-length interval gets level 0 instead of faulting.
//
// Measured cost: see each pass file.

typedef unsigned int u32;
typedef unsigned long long u64;

#define TB_THREADS 256u

// The status block: STATUS_WORDS u32 words (gpu/status.rs).
#define TB_LEAF_COUNT 0
#define TB_SCAN_COUNT 1
#define TB_CHANGED 2
#define TB_STATE 3
#define TB_PASSES 4
#define TB_CONVERGED 5
#define TB_OVERFLOW 6
#define TB_NEEDED 7
#define TB_CURRENT 8
#define TB_ACTIVE 9
#define TB_RUN_BASE 10
#define TB_STATUS_WORDS 16

// States of a run (status[TB_STATE]).
#define TB_RUN 0u
#define TB_COUNT_ONLY 1u
#define TB_DONE 2u

// Modes of tb_begin.
#define TB_BEGIN_UPDATE 0u
#define TB_BEGIN_RESUME 1u
#define TB_BEGIN_BUILD 2u

__device__ __forceinline__ u64 tb_item() { return (u64)blockIdx.x * blockDim.x + threadIdx.x; }

__device__ __forceinline__ u32 tb_lower_bound(const u64* __restrict__ keys, u32 n, u64 q) {
    u32 first = 0u;
    u32 count = n;
    while (count > 0u) {
        const u32 step = count / 2u;
        const u32 probe = first + step;
        if (keys[probe] < q) {
            first = probe + 1u;
            count -= step + 1u;
        } else {
            count = step;
        }
    }
    return first;
}

// Trailing zeros of a 64-bit value, 64 for zero.
__device__ __forceinline__ u32 tb_ctz64(u64 v) { return v == 0ull ? 64u : (u32)(__ffsll((long long)v) - 1); }

__device__ __forceinline__ u32 tb_leaf_level(u64 start, u64 end, u32 bits, u32 levels) {
    const u32 up = tb_ctz64(end - start) / bits;
    return levels - (up < levels ? up : levels);
}

__device__ __forceinline__ u64 tb_key_end(u32 bits, u32 levels) { return 1ull << (bits * levels); }

__device__ __forceinline__ u32 tb_live(const u32* status, u32 capacity) {
    const u32 l = status[TB_LEAF_COUNT];
    return l < capacity ? l : capacity;
}
