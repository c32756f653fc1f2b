// kernels/traverse/common.cuh — the prelude of orrery-traverse's CUDA modules
// (crates/orrery-traverse/src/gpu): the host concatenates it with one file (direct.cu)
// into each module's text.
//
// What it computes: device functions only.
//   tr_rsqrt      rsqrt.approx.ftz.f32: one MUFU.RSQ, relative error below 2^-22.9.
//                 rsqrtf() without -ftz=true (NVRTC's default, which orrery keeps) adds
//                 a denormal fix-up around the MUFU; a softened r^2 is never denormal,
//                 and without softening a pair at r^2 < 1.2e-38 overflows f32 anyway.
//   tr_soft_r2    the softened squared distance of crate::direct's pair rule in f32:
//                 r^2 + eps^2 (Plummer; soft2 = eps^2) or max(r^2, (2h)^2) (Clamped;
//                 soft2 = 4 h^2), as fused multiply-adds.
//
// Launch shape: functions only; the launch constants of the direct sum (the host's copies
// are in crates/orrery-traverse/src/gpu/direct.rs; a test checks that they agree):
//   TR_DIRECT_THREADS   threads per block of direct_f32 / direct_targets_f32
//   TR_DIRECT_TARGETS   targets per thread (K)
//   TR_DIRECT_TILE      sources per shared-memory tile (one per thread)
//   TR_DIRECT64_THREADS threads per block of the f64 kernels (one target each)
//
// Buffers: none.
//
// Invariants: none.
//
// Measured cost: see direct.cu.

typedef unsigned int u32;

#define TR_DIRECT_THREADS 128u
#define TR_DIRECT_TARGETS 4u
#define TR_DIRECT_TILE TR_DIRECT_THREADS
#define TR_DIRECT64_THREADS 128u

__device__ __forceinline__ float tr_rsqrt(float x) {
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

template <bool CLAMPED>
__device__ __forceinline__ float tr_soft_r2(float dx, float dy, float dz, float soft2) {
    if (CLAMPED) return fmaxf(fmaf(dx, dx, fmaf(dy, dy, dz * dz)), soft2);
    return fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, soft2)));
}
