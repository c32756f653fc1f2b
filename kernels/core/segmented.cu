// kernels/core/segmented.cu — segmented (CSR) reduction, scan and top-k, the device
// versions of orrery_core/src/cpu/segmented.rs (integer results bit-identical to it).
//
// Segments. Segment s of a CSR `offsets` array (L = S + 1 words, S segments) over n
// elements is [start, end) with start = min(offsets[s], n), end = min(max(offsets[s + 1],
// start), n) (orrery_core::executor::segment_bounds): any offsets give a defined answer,
// every read stays in bounds.
//
// ---- segmented_reduce_<op>_<type>(in, offsets, out, n, segments) --------------------------
//   out[s] = op over in[start..end), the identity for an empty segment (0; the type's
//   highest for min, +inf for floats; its lowest for max). Fixed order, as on the CPU:
//   the segment in tiles of SEG_TILE (= orrery_core::executor::SEGMENT_TILE = 1024)
//   elements from `start`, tiles combined left to right from the identity; inside a tile
//   thread t folds its 4 contiguous elements start + tile + 4t .. +3 from the identity,
//   then an order-preserving shuffle tree (lane l takes lane l + d, d = 1, 2, 4, 8, 16)
//   and thread 0 folds the 8 warp results in warp order. fold(a, b) = a + b (wrapping for
//   integers, IEEE __fadd_rn / __dadd_rn), (b < a) ? b : a, (b > a) ? b : a:
//   ReduceOp::apply. Every leaf enters through a fold from the identity, so a NaN never
//   becomes an accumulator of min / max (it is skipped, as on the CPU), and every fold
//   keeps its left (lower-index) operand on ties, so min / max return the same element
//   as the CPU's left-to-right fold, signed zeros included. Float sums differ from the
//   CPU's sequential tile sums by rounding only; they are the same run to run.
//
// ---- segmented_scan_{exclusive,inclusive}_u32(in, offsets, out, n, num_offsets) ----------
//   The CPU rule: element i belongs to segment seg(i) = r(i) - 1 with r(i) =
//   upper_bound_one(offsets, i) (the shared halving search over the L offsets), when
//   0 <= seg(i) < S and i lies in segment_bounds(seg(i)); then out[i] is the sum of the
//   elements of its segment before it (exclusive) or up to it (inclusive), wrapping;
//   elements of no segment get 0.
//   r is non-decreasing in i for ANY offsets (two searches follow the same probes until
//   their first different decision, where the smaller value goes left), so the elements
//   with r(i) = s + 1 form an interval [A_s, A_{s+1}), A_s = first i in [0, n] with
//   r(i) >= s + 1 (n when none). Block s owns [A_s, A_{s+1}) (block 0 from 0, block S-1
//   up to n): every element is written by exactly one block, no clearing pass. It scans
//   [max(A_s, start), min(A_{s+1}, end)) in tiles of SEG_TILE with a running carry and
//   writes 0 to the rest of what it owns. A_s is found by checking the candidate
//   min(offsets[s], n) (r(c) >= s + 1 and r(c - 1) < s + 1: four searches, one lane
//   each), which holds for every non-decreasing offsets array; otherwise warp 0 searches
//   [0, n] with 32 probes per round (about log32(n) rounds of one r evaluation each).
//
// ---- segmented_top_k_{smallest,largest}_<type>(keys, offsets, indices, top_keys, n, S, k)
//   For segment s, the k first (key, position) pairs in the order of sel(key) = order key
//   (Smallest) or its complement (Largest), ties by the smaller position, written
//   ascending to indices / top_keys [s * k, (s + 1) * k); a segment of m < k elements
//   pads with position 0xffffffff and key HIGHEST (Smallest) / LOWEST (Largest). One
//   block per segment:
//   - m <= TOPK_CAP (1024): every element is a candidate.
//   - m > TOPK_CAP: radix select over sel (8-bit digits from the top, 4 passes for
//     4-byte keys, 8 for 8-byte keys): each pass counts the digits of the elements that
//     match the prefix chosen so far into 256 shared counters (warp-aggregated with
//     __match_any_sync), scans them, and picks the digit whose bucket holds the
//     remaining rank. This gives the threshold key T of rank k and `need`, how many
//     elements equal to T are taken (the first `need` by position). A pass whose bucket is
//     taken whole ends the selection early (T = largest key of the bucket, all ties
//     taken). A collecting pass then takes sel < T, and the first `need` of sel == T (a
//     block scan of the tie flags in position order, only in tiles that hold a tie):
//     exactly k candidates.
//   - The candidates (sel, position) go to shared memory, padded to a power of two with
//     (all ones, 0xffffffff), are sorted by a bitonic network, and the first k are
//     written (the key converted back from sel bit for bit), then the padding.
//   Cost model (per segment of m elements, one block on one SM): m <= 1024: one read of
//   the segment and a bitonic sort of pow2(m) entries (log2^2 / 2 shared-memory stages);
//   m > 1024: up to P + 1 reads of the segment (P = 4 for 32-bit, 8 for 64-bit types,
//   fewer when a bucket is taken whole) plus one sort of pow2(k) entries. A segment's
//   reads are limited by one block's loads in flight (TOPK_THREADS * TOPK_ITEMS
//   elements), so a single huge segment runs far below device bandwidth; many segments
//   fill the device. Many equal keys cost nothing extra (aggregated counters).
//
// Launch shapes: grid = min(S, SEG_MAX_BLOCKS) blocks, grid-stride over segments;
//   reduce and scan: SEG_THREADS (256) threads; top-k: TOPK_THREADS (512).
//
// Buffers
//   in / keys     T[n]                read
//   offsets       u32[S + 1]          read (any values)
//   out           T[S] (reduce) / u32[n] (scan)   written
//   indices       u32[S * k]          written
//   top_keys      T[S * k]            written
//
// Invariants: n < 2^32, S + 1 < 2^32 (checked by the host); 1 <= k <= TOPK_CAP; S >= 1 and
// n >= 1 for the scan (the host handles S == 0 and n == 0 without a launch). Shared
// memory: top-k 13.3 KB (8-byte keys), reduce 64 B, scan 64 B, all static.
//
// Measured cost (H200, driver 580.159.04, CUDA events, median of 7; tests/new_primitives.rs
// `timings`):
//   segmented_reduce sum, 64M f32: segments of 32 2.76 ms, of 1000 0.110 ms (2.4 TB/s),
//     of 100000 0.093 ms; ONE segment of 64M 40.9 ms (one block: 6.6 GB/s).
//   segmented_scan exclusive, 64M u32: segments of 32 9.75 ms (four searches of the
//     offsets per segment dominate), of 1000 0.334 ms, of 100000 0.189 ms; one segment
//     of 64M 51.0 ms (one block).
//   segmented_top_k smallest f32, 16M keys: segments of 100, k = 8: 2.11 ms; of 1000,
//     k = 16: 0.906 ms; of 100000, k = 64: 0.251 ms; one segment of 16M, k = 32: 49.7 ms.
//   A few huge segments leave the device idle (one block each): that is the cost of the
//   one-block-per-segment design without scratch.

#define SEG_THREADS 256u
#define SEG_WARPS (SEG_THREADS / 32u)
#define SEG_TILE 1024u
#define SEG_ITEMS (SEG_TILE / SEG_THREADS)
#define TOPK_THREADS 512u
#define TOPK_WARPS (TOPK_THREADS / 32u)
#define TOPK_CAP 1024u
#define TOPK_ITEMS 4u
#define TOPK_ALL 0xffffffffu

static_assert(SEG_TILE % SEG_THREADS == 0, "a tile is a whole number of items per thread");
static_assert(TOPK_THREADS >= 256, "the digit scan needs one thread per digit");

// segment_bounds(offsets, s, n).
__device__ __forceinline__ void segment_range(const u32* __restrict__ offsets, u64 s, u64 n, u64& start, u64& end) {
    const u64 a = offsets[s];
    const u64 b = offsets[s + 1];
    start = a < n ? a : n;
    const u64 e = b > start ? b : start;
    end = e < n ? e : n;
}

// ---- reductions ----------------------------------------------------------------------------

#define OP_SUM 0
#define OP_MIN 1
#define OP_MAX 2

template <typename T>
struct SegArith;

template <>
struct SegArith<u32> {
    __device__ static u32 lowest() { return 0u; }
    __device__ static u32 highest() { return 0xffffffffu; }
    __device__ static u32 add(u32 a, u32 b) { return a + b; }
};
template <>
struct SegArith<i32> {
    __device__ static i32 lowest() { return (i32)0x80000000u; }
    __device__ static i32 highest() { return 0x7fffffff; }
    __device__ static i32 add(i32 a, i32 b) { return (i32)((u32)a + (u32)b); }
};
template <>
struct SegArith<u64> {
    __device__ static u64 lowest() { return 0ull; }
    __device__ static u64 highest() { return 0xffffffffffffffffull; }
    __device__ static u64 add(u64 a, u64 b) { return a + b; }
};
template <>
struct SegArith<i64> {
    __device__ static i64 lowest() { return (i64)0x8000000000000000ull; }
    __device__ static i64 highest() { return 0x7fffffffffffffffll; }
    __device__ static i64 add(i64 a, i64 b) { return (i64)((u64)a + (u64)b); }
};
template <>
struct SegArith<float> {
    __device__ static float lowest() { return __int_as_float(0xff800000); }
    __device__ static float highest() { return __int_as_float(0x7f800000); }
    __device__ static float add(float a, float b) { return __fadd_rn(a, b); }
};
template <>
struct SegArith<double> {
    __device__ static double lowest() { return __longlong_as_double(0xfff0000000000000ll); }
    __device__ static double highest() { return __longlong_as_double(0x7ff0000000000000ll); }
    __device__ static double add(double a, double b) { return __dadd_rn(a, b); }
};

template <typename T, int OP>
__device__ __forceinline__ T seg_identity() {
    return OP == OP_SUM ? (T)0 : (OP == OP_MIN ? SegArith<T>::highest() : SegArith<T>::lowest());
}

template <typename T, int OP>
__device__ __forceinline__ T seg_fold(T a, T b) {
    if (OP == OP_SUM) return SegArith<T>::add(a, b);
    if (OP == OP_MIN) return (b < a) ? b : a;
    return (b > a) ? b : a;
}

template <typename T, int OP>
__device__ __forceinline__ void segmented_reduce_impl(const T* __restrict__ in, const u32* __restrict__ offsets,
                                                      T* __restrict__ out, u64 n, u64 segments) {
    __shared__ T warp_results[SEG_WARPS];
    const u32 lane = lane_id();
    const u32 warp = threadIdx.x >> 5;
    for (u64 s = blockIdx.x; s < segments; s += gridDim.x) {
        u64 start, end;
        segment_range(offsets, s, n, start, end);
        T acc = seg_identity<T, OP>();  // meaningful in thread 0
        for (u64 base = start; base < end; base += SEG_TILE) {
            T v = seg_identity<T, OP>();
#pragma unroll
            for (u32 j = 0; j < SEG_ITEMS; ++j) {
                const u64 i = base + (u64)threadIdx.x * SEG_ITEMS + j;
                if (i < end) v = seg_fold<T, OP>(v, in[i]);
            }
            // Lane l (a multiple of 2d) holds lanes [l, l + d) and takes [l + d, l + 2d):
            // lane 0 ends with the warp's elements folded in index order. Lanes whose
            // partner is out of range read their own value; lane 0 never depends on them.
#pragma unroll
            for (u32 d = 1; d < 32; d <<= 1) v = seg_fold<T, OP>(v, __shfl_down_sync(FULL_MASK, v, d));
            if (lane == 0) warp_results[warp] = v;
            __syncthreads();
            if (threadIdx.x == 0) {
                T t = warp_results[0];
#pragma unroll
                for (u32 w = 1; w < SEG_WARPS; ++w) t = seg_fold<T, OP>(t, warp_results[w]);
                acc = seg_fold<T, OP>(acc, t);
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) out[s] = acc;
    }
}

#define SEG_REDUCE_ENTRY(OPNAME, OP, TNAME, T)                                                                   \
    extern "C" __global__ void __launch_bounds__(SEG_THREADS)                                                    \
        segmented_reduce_##OPNAME##_##TNAME(const T* __restrict__ in, const u32* __restrict__ offsets,           \
                                            T* __restrict__ out, u64 n, u64 segments) {                          \
        segmented_reduce_impl<T, OP>(in, offsets, out, n, segments);                                             \
    }

#define SEG_REDUCE_ALL_OPS(TNAME, T)            \
    SEG_REDUCE_ENTRY(sum, OP_SUM, TNAME, T)     \
    SEG_REDUCE_ENTRY(min, OP_MIN, TNAME, T)     \
    SEG_REDUCE_ENTRY(max, OP_MAX, TNAME, T)

SEG_REDUCE_ALL_OPS(u32, u32)
SEG_REDUCE_ALL_OPS(i32, i32)
SEG_REDUCE_ALL_OPS(u64, u64)
SEG_REDUCE_ALL_OPS(i64, i64)
SEG_REDUCE_ALL_OPS(f32, float)
SEG_REDUCE_ALL_OPS(f64, double)

// ---- scan ----------------------------------------------------------------------------------

// r(v) = upper_bound_one(offsets[0..L), v).
__device__ __forceinline__ u32 seg_upper(const u32* __restrict__ offsets, u32 L, u32 v) {
    return bound_search<u32, true>(offsets, L, v);
}

// First i in [lo, hi) with r(i) >= t, hi when none; r(i) >= t is monotone in i (false,
// then true). hi <= n < 2^32. Called by all 32 lanes of one warp; every lane gets it.
// Each round probes 32 points spread over the interval and keeps the gap before the first
// true one (about len / 32 elements).
__device__ __forceinline__ u64 warp_first_at_least(const u32* __restrict__ offsets, u32 L, u64 t, u64 lo, u64 hi) {
    const u32 lane = lane_id();
    while (lo < hi) {
        const u64 len = hi - lo;
        if (len <= 32u) {
            const bool p = lane < len && (u64)seg_upper(offsets, L, (u32)(lo + lane)) >= t;
            const u32 b = __ballot_sync(FULL_MASK, p);
            return b ? lo + (u64)(__ffs(b) - 1) : hi;
        }
        const u64 x = lo + ((u64)lane * len) / 32u;  // x_0 = lo < x_1 < ... < x_31 < hi
        const bool p = (u64)seg_upper(offsets, L, (u32)x) >= t;
        const u32 b = __ballot_sync(FULL_MASK, p);
        if (b == 0u) {
            lo = __shfl_sync(FULL_MASK, x, 31) + 1;
        } else {
            const u32 f = (u32)(__ffs(b) - 1);
            const u64 xf = __shfl_sync(FULL_MASK, x, f);
            const u64 xp = __shfl_sync(FULL_MASK, x, f == 0u ? 0u : f - 1u);
            hi = xf;                   // true at x_f
            if (f > 0u) lo = xp + 1;   // false at x_{f-1}
        }
    }
    return lo;
}

struct SegScanShared {
    u32 warp_totals[SEG_WARPS];
    u64 own_lo, own_hi;  // the elements this block writes
    u64 a, b;            // the part of them it scans
};

template <bool INCLUSIVE>
__device__ __forceinline__ void segmented_scan_impl(const u32* __restrict__ in, const u32* __restrict__ offsets,
                                                    u32* __restrict__ out, u64 n, u32 L) {
    __shared__ SegScanShared sh;
    const u64 segments = (u64)L - 1;
    const u32 lane = lane_id();
    for (u64 s = blockIdx.x; s < segments; s += gridDim.x) {
        if (threadIdx.x < 32u) {
            u64 start, end;
            segment_range(offsets, s, n, start, end);
            const u64 t1 = s + 1, t2 = s + 2;  // <= L < 2^32
            const u64 o1 = offsets[s], o2 = offsets[s + 1];
            const u64 c1 = o1 < n ? o1 : n;
            const u64 c2 = o2 < n ? o2 : n;
            // Lanes 0 / 1 check candidate c1 for A_s (r(c1) >= t1, r(c1 - 1) < t1), lanes
            // 2 / 3 candidate c2 for A_{s+1}; position n counts as "at least" everything.
            bool ok = true;
            if (lane < 4u) {
                const u64 t = lane < 2u ? t1 : t2;
                const u64 c = lane < 2u ? c1 : c2;
                if ((lane & 1u) == 0u) {
                    ok = c >= n || (u64)seg_upper(offsets, L, (u32)c) >= t;
                } else {
                    ok = c == 0 || (u64)seg_upper(offsets, L, (u32)(c - 1)) < t;
                }
            }
            const u32 good = __ballot_sync(FULL_MASK, ok);
            u64 A = c1, B = c2;
            if ((good & 3u) != 3u) A = warp_first_at_least(offsets, L, t1, 0, n);
            if ((good & 12u) != 12u) B = warp_first_at_least(offsets, L, t2, A, n);  // A_{s+1} >= A_s
            if (lane == 0u) {
                sh.own_lo = (s == 0) ? 0 : A;
                sh.own_hi = (s + 1 == segments) ? n : B;
                const u64 a = A > start ? A : start;
                const u64 b = B < end ? B : end;
                sh.a = a;
                sh.b = b > a ? b : a;
            }
        }
        __syncthreads();
        const u64 own_lo = sh.own_lo, own_hi = sh.own_hi, a = sh.a, b = sh.b;
        u32 carry = 0;
        for (u64 base = own_lo; base < own_hi; base += SEG_TILE) {
            u32 v[SEG_ITEMS];
            u32 sum = 0;
#pragma unroll
            for (u32 j = 0; j < SEG_ITEMS; ++j) {
                const u64 i = base + (u64)threadIdx.x * SEG_ITEMS + j;
                v[j] = (i >= a && i < b) ? in[i] : 0u;
                sum += v[j];
            }
            u32 total;
            u32 run = carry + block_exclusive_scan<SEG_WARPS>(sum, sh.warp_totals, total);
#pragma unroll
            for (u32 j = 0; j < SEG_ITEMS; ++j) {
                const u64 i = base + (u64)threadIdx.x * SEG_ITEMS + j;
                const u32 next = run + v[j];
                if (i < own_hi) out[i] = (i >= a && i < b) ? (INCLUSIVE ? next : run) : 0u;
                run = next;
            }
            carry += total;
        }
        __syncthreads();  // sh is rewritten for the next segment
    }
}

extern "C" __global__ void __launch_bounds__(SEG_THREADS)
    segmented_scan_exclusive_u32(const u32* __restrict__ in, const u32* __restrict__ offsets, u32* __restrict__ out,
                                 u64 n, u32 num_offsets) {
    segmented_scan_impl<false>(in, offsets, out, n, num_offsets);
}

extern "C" __global__ void __launch_bounds__(SEG_THREADS)
    segmented_scan_inclusive_u32(const u32* __restrict__ in, const u32* __restrict__ offsets, u32* __restrict__ out,
                                 u64 n, u32 num_offsets) {
    segmented_scan_impl<true>(in, offsets, out, n, num_offsets);
}

// ---- top-k ---------------------------------------------------------------------------------

template <typename T, bool LARGEST>
__device__ __forceinline__ typename OrderKey<T>::Bits topk_sel(typename OrderKey<T>::Bits bits) {
    const typename OrderKey<T>::Bits k = OrderKey<T>::key(bits);
    return LARGEST ? (typename OrderKey<T>::Bits)~k : k;
}

template <typename T, bool LARGEST>
__device__ __forceinline__ void top_k_impl(const T* __restrict__ keys, const u32* __restrict__ offsets,
                                           u32* __restrict__ indices, T* __restrict__ top_keys, u64 n, u64 segments,
                                           u32 k) {
    typedef typename OrderKey<T>::Bits B;
    constexpr int BITS = (int)sizeof(B) * 8;
    const B ALL = (B)~(B)0;
    __shared__ B cand_key[TOPK_CAP];
    __shared__ u32 cand_pos[TOPK_CAP];
    __shared__ u32 hist[256];
    __shared__ u32 scan_scratch[TOPK_WARPS];
    __shared__ u32 sh_taken, sh_digit, sh_remaining, sh_full;
    const B* kb = reinterpret_cast<const B*>(keys);
    B* out_keys = reinterpret_cast<B*>(top_keys);
    const u32 lane = lane_id();
    for (u64 s = blockIdx.x; s < segments; s += gridDim.x) {
        u64 start, end;
        segment_range(offsets, s, n, start, end);
        // Take sel < thr, and sel == thr for the first `need` ties by position (TOPK_ALL:
        // every tie). With thr = ALL and need = TOPK_ALL every element is taken.
        B thr = ALL;
        u32 need = TOPK_ALL;
        if (end - start > TOPK_CAP) {
            B prefix = 0, mask = 0;
            u32 remaining = k;  // rank still to find among the elements matching prefix
            bool full = false;
            for (int shift = BITS - 8; shift >= 0; shift -= 8) {
                for (u32 d = threadIdx.x; d < 256u; d += TOPK_THREADS) hist[d] = 0u;
                __syncthreads();
                for (u64 base = start; base < end; base += TOPK_THREADS * TOPK_ITEMS) {
                    B u[TOPK_ITEMS];
                    bool ok[TOPK_ITEMS];
#pragma unroll
                    for (u32 j = 0; j < TOPK_ITEMS; ++j) {
                        const u64 i = base + (u64)j * TOPK_THREADS + threadIdx.x;
                        ok[j] = i < end;
                        u[j] = ok[j] ? topk_sel<T, LARGEST>(kb[i]) : (B)0;
                    }
#pragma unroll
                    for (u32 j = 0; j < TOPK_ITEMS; ++j) {
                        const bool match = ok[j] && (u[j] & mask) == prefix;
                        const u32 digit = match ? (u32)(u[j] >> shift) & 255u : 256u;
                        const u32 peers = __match_any_sync(FULL_MASK, digit);
                        if (match && lane == (u32)(__ffs(peers) - 1)) atomicAdd(&hist[digit], (u32)__popc(peers));
                    }
                }
                __syncthreads();
                const u32 c = threadIdx.x < 256u ? hist[threadIdx.x] : 0u;
                u32 total;
                const u32 ex = block_exclusive_scan<TOPK_WARPS>(c, scan_scratch, total);
                // The buckets (ex, ex + c] partition (0, total] and remaining <= total:
                // exactly one thread finds the bucket of rank `remaining`.
                if (threadIdx.x < 256u && ex < remaining && remaining <= ex + c) {
                    sh_digit = threadIdx.x;
                    sh_remaining = remaining - ex;
                    sh_full = (c == remaining - ex) ? 1u : 0u;
                }
                __syncthreads();
                const u32 digit = sh_digit;
                remaining = sh_remaining;
                full = sh_full != 0u;
                prefix |= (B)digit << shift;
                mask |= (B)255u << shift;
                if (full) break;  // uniform: read from shared memory after a barrier
            }
            if (full) {
                thr = prefix | (B)~mask;  // the bucket's largest key: every element <= it is taken
            } else {
                thr = prefix;
                need = remaining;
            }
            // Every thread has read sh_digit / sh_remaining / sh_full before thread 0 resets
            // sh_taken below: the compiler may read the four words with one 16-byte load
            // (racecheck saw that load race with the reset; the value read was unused).
            __syncthreads();
        }
        // Collect the candidates (unordered; the sort below orders them).
        if (threadIdx.x == 0) sh_taken = 0u;
        __syncthreads();
        u32 ties_seen = 0;  // ties before this tile (same in every thread)
        for (u64 base = start; base < end; base += TOPK_THREADS) {
            const u64 i = base + threadIdx.x;
            const bool ok = i < end;
            const B u = ok ? topk_sel<T, LARGEST>(kb[i]) : (B)0;
            const bool tie = ok && u == thr;
            bool take = ok && (u < thr || (tie && need == TOPK_ALL));
            if (need != TOPK_ALL && ties_seen < need) {
                if (__syncthreads_or(tie)) {
                    u32 total;
                    const u32 r = block_exclusive_scan<TOPK_WARPS>(tie ? 1u : 0u, scan_scratch, total);
                    take = take || (tie && ties_seen + r < need);
                    ties_seen += total;
                }
            }
            if (take) {
                const u32 slot = atomicAdd(&sh_taken, 1u);
                if (slot < TOPK_CAP) {
                    cand_key[slot] = u;
                    cand_pos[slot] = (u32)i;
                }
            }
        }
        __syncthreads();
        const u32 taken = sh_taken < TOPK_CAP ? sh_taken : TOPK_CAP;
        u32 size = 1;
        while (size < taken) size <<= 1;
        // Padding sorts after every candidate: positions are < n <= 0xffffffff.
        for (u32 j = taken + threadIdx.x; j < size; j += TOPK_THREADS) {
            cand_key[j] = ALL;
            cand_pos[j] = 0xffffffffu;
        }
        __syncthreads();
        // Bitonic sort of `size` entries by (key, position), ascending.
        for (u32 len = 2; len <= size; len <<= 1) {
            for (u32 stride = len >> 1; stride > 0u; stride >>= 1) {
                for (u32 p = threadIdx.x; p < size / 2u; p += TOPK_THREADS) {
                    const u32 lo = 2u * p - (p & (stride - 1u));
                    const u32 hi = lo + stride;
                    const bool up = (lo & len) == 0u;
                    const B ka = cand_key[lo], kz = cand_key[hi];
                    const u32 pa = cand_pos[lo], pz = cand_pos[hi];
                    const bool greater = ka > kz || (ka == kz && pa > pz);
                    if (greater == up) {
                        cand_key[lo] = kz;
                        cand_key[hi] = ka;
                        cand_pos[lo] = pz;
                        cand_pos[hi] = pa;
                    }
                }
                __syncthreads();
            }
        }
        const B pad = LARGEST ? OrderKey<T>::lowest() : OrderKey<T>::highest();
        for (u32 j = threadIdx.x; j < k; j += TOPK_THREADS) {
            const u64 o = s * (u64)k + j;
            if (j < taken) {
                indices[o] = cand_pos[j];
                out_keys[o] = OrderKey<T>::value(LARGEST ? (B)~cand_key[j] : cand_key[j]);
            } else {
                indices[o] = 0xffffffffu;
                out_keys[o] = pad;
            }
        }
        __syncthreads();  // shared memory is reused by the next segment
    }
}

#define TOPK_ENTRIES(TNAME, T)                                                                                   \
    extern "C" __global__ void __launch_bounds__(TOPK_THREADS)                                                   \
        segmented_top_k_smallest_##TNAME(const T* __restrict__ keys, const u32* __restrict__ offsets,            \
                                         u32* __restrict__ indices, T* __restrict__ top_keys, u64 n,             \
                                         u64 segments, u32 k) {                                                  \
        top_k_impl<T, false>(keys, offsets, indices, top_keys, n, segments, k);                                  \
    }                                                                                                            \
    extern "C" __global__ void __launch_bounds__(TOPK_THREADS)                                                   \
        segmented_top_k_largest_##TNAME(const T* __restrict__ keys, const u32* __restrict__ offsets,             \
                                        u32* __restrict__ indices, T* __restrict__ top_keys, u64 n,              \
                                        u64 segments, u32 k) {                                                   \
        top_k_impl<T, true>(keys, offsets, indices, top_keys, n, segments, k);                                   \
    }

TOPK_ENTRIES(u32, u32)
TOPK_ENTRIES(i32, i32)
TOPK_ENTRIES(u64, u64)
TOPK_ENTRIES(i64, i64)
TOPK_ENTRIES(f32, float)
TOPK_ENTRIES(f64, double)
