// kernels/traverse/direct.cu — direct summation on the GPU
// (crates/orrery-traverse/src/gpu/direct.rs; host reference crate::direct), the CUDA twin
// of shaders/traverse/direct.wgsl. Module "traverse/direct": common.cuh, this file.
//
// What it computes, for every target q < count (body i = q for the all-bodies entries,
// i = targets[q] for the _targets_ entries), over the sources j = 0..n in index order:
//   a_q   = g * sum_j m_j d / s^(3/2),   pot_q = -g * sum_j m_j / s^(1/2),
//   d = x_j - x_i, s = tr_soft_r2 (r^2 + eps^2, or max(r^2, 4 h^2) when clamped != 0).
//   The pair rule is crate::direct's: the self pair j == i is excluded, a pair with s == 0
//   contributes nothing.
//   direct_f32 / direct_targets_f32   f32, rsqrt.approx (tr_rsqrt), fused multiply-adds.
//     soft2 > 0: s > 0 for every pair, so the inner loop has no select at all, except in
//       the tiles that may hold one of the block's targets (the source range overlaps the
//       block's [lo, hi] target range; a block-uniform test per tile), whose loop skips
//       j == i by index (TR_SKIP_SELF). Skipping by index, not by subtracting the self
//       term -m_i / eps afterwards, keeps the potential exact when m_i / eps dwarfs it.
//     soft2 == 0 (the host passes 0 when eps^2 is below the f32 normal range): every tile
//       selects s > 0 ? rsqrt(s) : 0 (TR_UNSOFTENED), which removes the self pair and
//       coincident pairs alike (two more instructions per interaction).
//   direct_f64 / direct_targets_f64   CUDA only: f32 bodies widened, every operation in
//     f64 and correctly rounded without contraction (__dadd_rn, __dmul_rn, __ddiv_rn,
//     __dsqrt_rn), the operations of crate::direct::direct_sum_f64 in its order: a
//     device-side reference that should equal the CPU's bit for bit (the tests allow
//     1e-13 relative until a device run has confirmed it).
//   A target index >= n (device-resident input is not validated) yields zeros.
//
// Launch shape
//   f32: blocks of TR_DIRECT_THREADS (128) threads, each thread TR_DIRECT_TARGETS (K = 4)
//     targets q = block * 512 + k * 128 + thread (coalesced loads and stores per k),
//     ceil(count / 512) blocks. Sources stream through a shared tile of TR_DIRECT_TILE
//     (128) float4 (x, y, z, m; 2 KiB), one source per thread per tile, the next tile
//     prefetched into registers while the current one is used; the last tile is padded
//     with m = 0 (harmless: s > 0 when soft2 > 0, and the select when soft2 == 0).
//   f64: blocks of TR_DIRECT64_THREADS (128), one target per thread, shared tiles of 128
//     bodies widened to f64.
//
// Why this shape (f32). Per interaction and target the loop issues 3 FADD (d), 3 FFMA
//   (s; clamped: FMUL, 2 FFMA, FMNMX), 1 MUFU.RSQ, 3 FMUL (m inv, w = m inv^3), 1 FADD
//   (pot) and 3 FFMA (a): 14 instructions, 20 flops counting an FMA as 2 and the rsqrt as
//   1 (the conventional count; Ryoanji's 23 includes its per-pair h_i + h_j). One
//   broadcast LDS.128 per source is shared by the K targets, so a thread issues 14 + 1/K
//   instructions per interaction. H200: 132 SMs x 4 schedulers x 1 warp-instruction per
//   clock x 32 lanes x 1.98 GHz = 3.35e13 thread-instructions/s, / 14.25 = 2.35e12
//   interactions/s at full issue; the goal (2e12, twice Ryoanji's 1.09e12) needs 85% of
//   it. FP32 (13 instructions on 128 lanes per SM per clock) and MUFU (16 per SM per
//   clock) both leave headroom below the issue limit. K = 4: K = 8 would save 0.9% of
//   the issue slots but halve the threads (n = 128k bodies: 32k threads at K = 4 fill
//   132 SMs with ~2 blocks each; at K = 8 half of that), and K independent dependency
//   chains per source already cover the MUFU and FMA latencies. 128 threads per block
//   for the same reason (more blocks at mid-size n); ptxas (sm_90) gives the f32 entries
//   64 registers and no spills, with 2 KiB of shared memory per block (plus the 1 KiB
//   the driver reserves): 8 blocks (32 warps) per SM, set by the registers. The f64
//   entries: 52 registers, 4 KiB. The loop over a tile is unrolled by 8 (LDS
//   with immediate offsets, loop overhead < 0.5%); tiles cost two barriers per 512
//   interactions per thread. No divergence: the mode test is uniform per block.
//
// Buffers (direction, length, layout)
//   x, y, z, m       read   n      f32 bodies (structure of arrays; masses > 0)
//   targets          read   count  u32 body indices (the _targets_ entries)
//   ax, ay, az, pot  write  count  f32 (f64 for the _f64 entries), in target order
//   scalars: n (sources), count (the _targets_ entries; else count = n), g, soft2
//   (eps^2 or 4 h^2, in the entry's precision), clamped (0 or 1).
//
// Invariants: n >= 1, count >= 1, n * K fits u32 arithmetic (the host checks n <= u32::MAX
//   and launches ceil(count / 512) blocks; q is computed in u32 and compared in u32).
//
// Measured cost: not measured yet (design estimate above: 1M bodies all-pairs ~0.45 s,
//   4M ~7 s on the H200; Ryoanji's direct sum takes 16.1 s for 4M).

#define TR_K TR_DIRECT_TARGETS

// Inner-loop variants (see above).
#define TR_FAST 0
#define TR_SKIP_SELF 1
#define TR_UNSOFTENED 2

// One thread's K targets: positions, body indices, sums.
struct TrTargets {
    float x[TR_K], y[TR_K], z[TR_K];
    u32 idx[TR_K];
    float ax[TR_K], ay[TR_K], az[TR_K], phi[TR_K];
};

// Source j of the f32 bodies as (x, y, z, m), or the zero-mass pad past n.
__device__ __forceinline__ float4 tr_source(const float* __restrict__ x, const float* __restrict__ y,
                                            const float* __restrict__ z, const float* __restrict__ m, u32 j, u32 n) {
    if (j < n) return make_float4(x[j], y[j], z[j], m[j]);
    return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

// One tile of TR_DIRECT_TILE sources (the first is body `first`) against the K targets.
template <bool CLAMPED, int MODE>
__device__ __forceinline__ void tr_tile(const float4* __restrict__ tile, u32 first, TrTargets& t, float soft2) {
#pragma unroll 8
    for (u32 s = 0; s < TR_DIRECT_TILE; ++s) {
        const float4 b = tile[s];
#pragma unroll
        for (u32 k = 0; k < TR_K; ++k) {
            const float dx = b.x - t.x[k];
            const float dy = b.y - t.y[k];
            const float dz = b.z - t.z[k];
            const float r2 = tr_soft_r2<CLAMPED>(dx, dy, dz, soft2);
            float inv = tr_rsqrt(r2);
            if (MODE == TR_SKIP_SELF) inv = (first + s == t.idx[k]) ? 0.0f : inv;
            if (MODE == TR_UNSOFTENED) inv = (r2 > 0.0f) ? inv : 0.0f;
            const float minv = b.w * inv;
            const float w = minv * inv * inv;
            t.phi[k] += minv;
            t.ax[k] = fmaf(dx, w, t.ax[k]);
            t.ay[k] = fmaf(dy, w, t.ay[k]);
            t.az[k] = fmaf(dz, w, t.az[k]);
        }
    }
}

// The f32 sum of one block. `tile` (TR_DIRECT_TILE float4) and `range` (2 words) are the
// entry's shared memory, declared there so that both instantiations share them.
template <bool CLAMPED, bool INDEXED>
__device__ __forceinline__ void tr_direct(const float* __restrict__ x, const float* __restrict__ y,
                                          const float* __restrict__ z, const float* __restrict__ m,
                                          const u32* __restrict__ targets, float* __restrict__ ax,
                                          float* __restrict__ ay, float* __restrict__ az, float* __restrict__ pot,
                                          u32 n, u32 count, float g, float soft2, float4* tile, u32* range) {
    const u32 block_first = blockIdx.x * (TR_DIRECT_THREADS * TR_K);
    if (block_first >= count) return;  // uniform per block

    TrTargets t;
#pragma unroll
    for (u32 k = 0; k < TR_K; ++k) {
        // Slots past count repeat the last target (computed, never stored).
        const u32 q = min(block_first + k * TR_DIRECT_THREADS + threadIdx.x, count - 1);
        const u32 i = min(INDEXED ? targets[q] : q, n - 1);
        t.idx[k] = i;
        t.x[k] = x[i];
        t.y[k] = y[i];
        t.z[k] = z[i];
        t.ax[k] = t.ay[k] = t.az[k] = t.phi[k] = 0.0f;
    }

    // The block's target range [lo, hi]: tiles that overlap it take the masked loop.
    u32 lo, hi;
    if (INDEXED) {
        if (threadIdx.x == 0) {
            range[0] = 0xffffffffu;
            range[1] = 0u;
        }
        __syncthreads();
        u32 my_lo = t.idx[0], my_hi = t.idx[0];
#pragma unroll
        for (u32 k = 1; k < TR_K; ++k) {
            my_lo = min(my_lo, t.idx[k]);
            my_hi = max(my_hi, t.idx[k]);
        }
        atomicMin(&range[0], my_lo);
        atomicMax(&range[1], my_hi);
        __syncthreads();
        lo = range[0];
        hi = range[1];
    } else {
        lo = block_first;
        hi = min(block_first + TR_DIRECT_THREADS * TR_K, n) - 1;
    }

    const u32 tiles = (n + TR_DIRECT_TILE - 1) / TR_DIRECT_TILE;
    float4 next = tr_source(x, y, z, m, threadIdx.x, n);
    for (u32 ti = 0; ti < tiles; ++ti) {
        const u32 first = ti * TR_DIRECT_TILE;
        __syncthreads();  // the previous tile is no longer read
        tile[threadIdx.x] = next;
        __syncthreads();
        if (ti + 1 < tiles) next = tr_source(x, y, z, m, first + TR_DIRECT_TILE + threadIdx.x, n);
        if (soft2 == 0.0f) {
            tr_tile<CLAMPED, TR_UNSOFTENED>(tile, first, t, soft2);
        } else if (first <= hi && lo < first + TR_DIRECT_TILE) {
            tr_tile<CLAMPED, TR_SKIP_SELF>(tile, first, t, soft2);
        } else {
            tr_tile<CLAMPED, TR_FAST>(tile, first, t, soft2);
        }
    }

#pragma unroll
    for (u32 k = 0; k < TR_K; ++k) {
        const u32 q = block_first + k * TR_DIRECT_THREADS + threadIdx.x;
        if (q < count) {
            const bool ok = !INDEXED || targets[q] < n;
            ax[q] = ok ? g * t.ax[k] : 0.0f;
            ay[q] = ok ? g * t.ay[k] : 0.0f;
            az[q] = ok ? g * t.az[k] : 0.0f;
            pot[q] = ok ? -(g * t.phi[k]) : 0.0f;
        }
    }
}

extern "C" __global__ void __launch_bounds__(TR_DIRECT_THREADS)
    direct_f32(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ z,
               const float* __restrict__ m, float* __restrict__ ax, float* __restrict__ ay, float* __restrict__ az,
               float* __restrict__ pot, u32 n, float g, float soft2, u32 clamped) {
    __shared__ float4 tile[TR_DIRECT_TILE];
    if (clamped) {
        tr_direct<true, false>(x, y, z, m, nullptr, ax, ay, az, pot, n, n, g, soft2, tile, nullptr);
    } else {
        tr_direct<false, false>(x, y, z, m, nullptr, ax, ay, az, pot, n, n, g, soft2, tile, nullptr);
    }
}

extern "C" __global__ void __launch_bounds__(TR_DIRECT_THREADS)
    direct_targets_f32(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ z,
                       const float* __restrict__ m, const u32* __restrict__ targets, float* __restrict__ ax,
                       float* __restrict__ ay, float* __restrict__ az, float* __restrict__ pot, u32 n, u32 count,
                       float g, float soft2, u32 clamped) {
    __shared__ float4 tile[TR_DIRECT_TILE];
    __shared__ u32 range[2];
    if (clamped) {
        tr_direct<true, true>(x, y, z, m, targets, ax, ay, az, pot, n, count, g, soft2, tile, range);
    } else {
        tr_direct<false, true>(x, y, z, m, targets, ax, ay, az, pot, n, count, g, soft2, tile, range);
    }
}

// ---- f64 (CUDA only) ---------------------------------------------------------------------

struct TrBody64 {
    double x, y, z, m;
};

template <bool INDEXED>
__device__ __forceinline__ void tr_direct64(const float* __restrict__ x, const float* __restrict__ y,
                                            const float* __restrict__ z, const float* __restrict__ m,
                                            const u32* __restrict__ targets, double* __restrict__ ax,
                                            double* __restrict__ ay, double* __restrict__ az,
                                            double* __restrict__ pot, u32 n, u32 count, double g, double soft2,
                                            bool clamped) {
    __shared__ TrBody64 tile[TR_DIRECT64_THREADS];
    const u32 block_first = blockIdx.x * TR_DIRECT64_THREADS;
    if (block_first >= count) return;  // uniform per block
    const u32 q = block_first + threadIdx.x;
    const u32 qc = min(q, count - 1);
    const u32 i = min(INDEXED ? targets[qc] : qc, n - 1);
    const double px = (double)x[i], py = (double)y[i], pz = (double)z[i];
    double sx = 0.0, sy = 0.0, sz = 0.0, phi = 0.0;
    for (u32 first = 0; first < n; first += TR_DIRECT64_THREADS) {
        __syncthreads();
        const u32 j = first + threadIdx.x;
        if (j < n) tile[threadIdx.x] = TrBody64{(double)x[j], (double)y[j], (double)z[j], (double)m[j]};
        __syncthreads();
        const u32 len = min(TR_DIRECT64_THREADS, n - first);
        for (u32 s = 0; s < len; ++s) {
            const TrBody64 b = tile[s];
            const double dx = __dsub_rn(b.x, px);
            const double dy = __dsub_rn(b.y, py);
            const double dz = __dsub_rn(b.z, pz);
            const double r2 = __dadd_rn(__dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy)), __dmul_rn(dz, dz));
            const double s2 = clamped ? (r2 < soft2 ? soft2 : r2) : __dadd_rn(r2, soft2);
            const bool keep = s2 > 0.0 && first + s != i;
            const double inv = keep ? __ddiv_rn(1.0, __dsqrt_rn(s2)) : 0.0;
            const double minv = __dmul_rn(b.m, inv);
            const double w = __dmul_rn(__dmul_rn(minv, inv), inv);
            sx = __dadd_rn(sx, __dmul_rn(dx, w));
            sy = __dadd_rn(sy, __dmul_rn(dy, w));
            sz = __dadd_rn(sz, __dmul_rn(dz, w));
            phi = __dadd_rn(phi, minv);
        }
    }
    if (q < count) {
        const bool ok = !INDEXED || targets[q] < n;
        ax[q] = ok ? __dmul_rn(g, sx) : 0.0;
        ay[q] = ok ? __dmul_rn(g, sy) : 0.0;
        az[q] = ok ? __dmul_rn(g, sz) : 0.0;
        pot[q] = ok ? -__dmul_rn(g, phi) : 0.0;
    }
}

extern "C" __global__ void __launch_bounds__(TR_DIRECT64_THREADS)
    direct_f64(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ z,
               const float* __restrict__ m, double* __restrict__ ax, double* __restrict__ ay,
               double* __restrict__ az, double* __restrict__ pot, u32 n, double g, double soft2, u32 clamped) {
    tr_direct64<false>(x, y, z, m, nullptr, ax, ay, az, pot, n, n, g, soft2, clamped != 0);
}

extern "C" __global__ void __launch_bounds__(TR_DIRECT64_THREADS)
    direct_targets_f64(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ z,
                       const float* __restrict__ m, const u32* __restrict__ targets, double* __restrict__ ax,
                       double* __restrict__ ay, double* __restrict__ az, double* __restrict__ pot, u32 n,
                       u32 count, double g, double soft2, u32 clamped) {
    tr_direct64<true>(x, y, z, m, targets, ax, ay, az, pot, n, count, g, soft2, clamped != 0);
}
