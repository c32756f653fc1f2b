// kernels/sim/integrate.cu — the leapfrog's kicks and drifts on the device
// (crates/orrery-sim/src/backend/device.rs; the CPU reference is
// crates/orrery-sim/src/steps.rs, whose module documentation states the scheme).
//
// What it computes, one thread per body:
//   sim_drift  x += round(v * dt) per axis.
//   sim_kick   for a body active at `tick` (2^(levels - rung) divides it): with CLOSE,
//              v += round(a * dt 2^-(rung+1)); with OPEN, a new rung (ADAPT: the criterion
//              (|a|^2 dt^4) 2^(-4r) <= c2, then the period rule) and the same half-kick on it.
//
// Why it is shaped so: every product is __fmul_rn and every sum __fadd_rn, so NVRTC cannot
// contract them into FMAs and the results (the rungs above all, which are integers) equal
// the CPU reference's f32 arithmetic bit for bit. Powers of two are built from their bits
// (exact). The kernels are bandwidth-bound (28 and 32 bytes per body): the kick of a 1M
// body step moves 32 MB, about 10 us on an H200.
//
// Launch shape: SIM_THREADS threads per block, one body per thread, a 1D grid.
//
// Buffers: x, y, z (rw, n f32), vx, vy, vz (read for the drift, rw for the kick, n f32),
//   ax, ay, az (read, n f32), rung (rw, n u32).
//
// Invariants: levels <= 20, rung[i] <= levels (the host writes only such rungs).
//
// Measured cost: not measured separately (part of the simulation's integrate phase).

typedef unsigned int u32;

#define SIM_THREADS 256u
#define SIM_CLOSE 1u
#define SIM_OPEN 2u
#define SIM_ADAPT 4u

__device__ __forceinline__ float sim_pow2_neg(u32 k) { return __int_as_float((int)((127u - k) << 23)); }

__device__ __forceinline__ bool sim_active(u32 rung, u32 tick, u32 levels) {
    u32 period = 1u << (levels - min(rung, levels));
    return (tick & (period - 1u)) == 0u;
}

__device__ __forceinline__ u32 sim_wanted_rung(float a2, float dt4, float c2, u32 levels) {
    float q = __fmul_rn(a2, dt4);
    for (u32 r = 0; r <= levels; ++r) {
        if (__fmul_rn(q, sim_pow2_neg(4u * r)) <= c2) return r;
    }
    return levels;
}

extern "C" __global__ void __launch_bounds__(SIM_THREADS)
    sim_drift(float* __restrict__ x, float* __restrict__ y, float* __restrict__ z, const float* __restrict__ vx,
              const float* __restrict__ vy, const float* __restrict__ vz, u32 n, float dt, u32 opaque_zero) {
    (void)opaque_zero;  // the WGSL twin's guard against contraction; CUDA uses __fmul_rn
    u32 i = blockIdx.x * SIM_THREADS + threadIdx.x;
    if (i >= n) return;
    x[i] = __fadd_rn(x[i], __fmul_rn(vx[i], dt));
    y[i] = __fadd_rn(y[i], __fmul_rn(vy[i], dt));
    z[i] = __fadd_rn(z[i], __fmul_rn(vz[i], dt));
}

extern "C" __global__ void __launch_bounds__(SIM_THREADS)
    sim_kick(float* __restrict__ vx, float* __restrict__ vy, float* __restrict__ vz, const float* __restrict__ ax,
             const float* __restrict__ ay, const float* __restrict__ az, u32* __restrict__ rungs, u32 n, u32 tick,
             u32 levels, u32 flags, float dt, float dt4, float c2, u32 opaque_zero) {
    (void)opaque_zero;  // the WGSL twin's guard against contraction; CUDA uses __fmul_rn
    u32 i = blockIdx.x * SIM_THREADS + threadIdx.x;
    if (i >= n) return;
    u32 rung = rungs[i];
    if (!sim_active(rung, tick, levels)) return;
    float a[3] = {ax[i], ay[i], az[i]};
    float v[3] = {vx[i], vy[i], vz[i]};
    if (flags & SIM_CLOSE) {
        float h = __fmul_rn(dt, sim_pow2_neg(rung + 1u));
        for (int c = 0; c < 3; ++c) v[c] = __fadd_rn(v[c], __fmul_rn(a[c], h));
    }
    if (flags & SIM_OPEN) {
        if (flags & SIM_ADAPT) {
            float a2 = __fadd_rn(__fadd_rn(__fmul_rn(a[0], a[0]), __fmul_rn(a[1], a[1])), __fmul_rn(a[2], a[2]));
            u32 r = sim_wanted_rung(a2, dt4, c2, levels);
            while (r < rung && !sim_active(r, tick, levels)) ++r;
            rung = r;
            rungs[i] = rung;
        }
        float h = __fmul_rn(dt, sim_pow2_neg(rung + 1u));
        for (int c = 0; c < 3; ++c) v[c] = __fadd_rn(v[c], __fmul_rn(a[c], h));
    }
    vx[i] = v[0];
    vy[i] = v[1];
    vz[i] = v[2];
}
