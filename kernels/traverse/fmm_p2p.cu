// kernels/traverse/fmm_p2p.cu — the FMM's near field on the GPU, f32
// (crates/orrery-traverse/src/gpu/fmm/; host reference crate::fmm::evaluate::leaves and
// crate::fmm::operators::p2p), the CUDA twin of shaders/traverse/fmm_p2p.wgsl. Module
// "traverse/fmm_p2p": this file (self-contained).
//
// What it computes, per non-empty leaf T and target i of T (tree order):
//   acc_i = [G a_near, G phi_near],  a_near = sum_j m_j d / s^(3/2),  phi_near = -sum_j m_j / s^(1/2),
//   d = x_j - x_i, s = |d|^2 + eps2, over the particles j of T's P2P source leaves (the
//   host sorts each leaf's list by first particle, so j runs in increasing index: the
//   CPU's order after its run merge); the own index j == i and pairs with s == 0 are
//   skipped (the CPU's pair rule). fmm_l2p (module traverse/fmm) then adds the far field.
//   rsqrt.approx and fused multiply-adds as in direct.cu: per term the relative error is
//   below 2^-22.9 (x3 through inv^3), plus the f32 roundings of the sums; the tests allow
//   2e-5 of sum_j m_j / r_ij^2 (gpu/fmm/mod.rs).
//
// Launch shape: one block of FMM_P2P_THREADS (64) threads per non-empty leaf, grid-stride
//   over the leaf list; the leaf's targets in chunks of 64 (one per thread; LeafCount 64
//   is one chunk), sources staged through a shared tile of 64 float4 (1 KiB) per source
//   leaf, padded with m = 0 (a pad at s == 0 is skipped by the select, elsewhere it adds 0).
//   Everything that bounds a loop is uniform per block (leaf, ranges, list), so the
//   barriers are reached by every thread.
//
// Why this shape: the targets of a leaf share every source (the style of direct.cu): one
//   shared-memory load of a source feeds 64 targets, and consecutive source leaves are
//   neighbours on the curve (cache-friendly). One target per thread (not four as in
//   direct.cu) because a leaf has only ~64 targets; 64-thread blocks keep a leaf's
//   threads busy; a leaf's ~27 source leaves are ~27 tiles (~2 barriers each).
//
// Buffers (direction, length, layout)
//   bodies               read  4 n f32     [x, y, z, m] per body, tree order
//   leaves               read  L u32       non-empty leaf node ids
//   begins, counts       read  N u32       particle range per node
//   p2p_offsets          read  N + 1 u32   CSR offsets of the P2P lists
//   p2p_sources          read  P u32       source leaves, sorted by first particle per target
//   acc                  write n float4    [ax, ay, az, pot] per body, tree order
//   scalars: leaves_count (L), g, eps2.
//
// Invariants: every index is in range (the host built the arrays from one plan).
//
// Registers (ptxas, sm_90): 31, no spills, 1 KiB static shared memory.
//
// Measured cost: not measured yet.

typedef unsigned int u32;

#define FMM_P2P_THREADS 64u

__device__ __forceinline__ float fmm_rsqrt(float x) {
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

extern "C" __global__ void __launch_bounds__(FMM_P2P_THREADS)
    fmm_p2p(const float* __restrict__ bodies, const u32* __restrict__ leaves, const u32* __restrict__ begins,
            const u32* __restrict__ counts, const u32* __restrict__ p2p_offsets, const u32* __restrict__ p2p_sources,
            float4* __restrict__ acc, u32 leaves_count, float g, float eps2) {
    __shared__ float4 tile[FMM_P2P_THREADS];
    const float4* b4 = reinterpret_cast<const float4*>(bodies);
    for (u32 l = blockIdx.x; l < leaves_count; l += gridDim.x) {
        const u32 leaf = leaves[l];
        const u32 tbegin = begins[leaf], tcount = counts[leaf];
        const u32 lfirst = p2p_offsets[leaf], llast = p2p_offsets[leaf + 1];
        for (u32 chunk = 0; chunk < tcount; chunk += FMM_P2P_THREADS) {
            const u32 i = tbegin + chunk + threadIdx.x;
            const bool valid = chunk + threadIdx.x < tcount;
            const float4 t = b4[valid ? i : tbegin];
            float ax = 0.0f, ay = 0.0f, az = 0.0f, phi = 0.0f;
            for (u32 e = lfirst; e < llast; ++e) {
                const u32 src = p2p_sources[e];
                const u32 sbegin = begins[src], scount = counts[src];
                for (u32 s0 = 0; s0 < scount; s0 += FMM_P2P_THREADS) {
                    __syncthreads();  // the previous tile is no longer read
                    const u32 j = s0 + threadIdx.x;
                    tile[threadIdx.x] = j < scount ? b4[sbegin + j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                    __syncthreads();
                    const u32 len = min(FMM_P2P_THREADS, scount - s0);
                    for (u32 k = 0; k < len; ++k) {
                        const float4 b = tile[k];
                        const float dx = b.x - t.x;
                        const float dy = b.y - t.y;
                        const float dz = b.z - t.z;
                        const float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, eps2)));
                        const bool keep = r2 > 0.0f && sbegin + s0 + k != i;
                        const float inv = keep ? fmm_rsqrt(r2) : 0.0f;
                        const float minv = b.w * inv;
                        const float w = minv * inv * inv;
                        phi += minv;
                        ax = fmaf(dx, w, ax);
                        ay = fmaf(dy, w, ay);
                        az = fmaf(dz, w, az);
                    }
                }
            }
            if (valid) acc[i] = make_float4(g * ax, g * ay, g * az, -(g * phi));
        }
    }
}
