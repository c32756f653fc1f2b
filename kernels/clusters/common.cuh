// kernels/clusters/common.cuh — the prelude of orrery-clusters' centroid module
// (crates/orrery-clusters/src/gpu): the host concatenates it and centroid.cu into the
// module "clusters/centroid" (kernels/src/lib.rs, `clusters::unit::CENTROID`).
//
// What it holds
//   The launch constants the host shares (gpu/kernels.rs holds its copies; a unit test
//   checks them against this text), the field layout of the per-cluster statistics
//   buffer, compensated (Neumaier) f32 sums, and f32 streaming moments: Welford's push
//   with Pebay's third-moment term and Chan's merge, the same formulas as
//   crates/orrery-clusters/src/moments.rs (which accumulates in f64).
//
// Why f32 (and not f64 as the CPU reference): the centroid family is memory bound (two
//   reads of the vectors), every statistic is compared with the CPU within a relative
//   1e-4, and f32 with compensated sums stays far inside that (see centroid.cu's header);
//   the WGSL twin (shaders/clusters/centroid.wgsl) has no f64 at all, so both executors
//   run the same arithmetic.
//
// Launch shape: device functions only.
//
// Buffers: none.
//
// Invariants: counts fit u32 (rows are u32 everywhere in orrery).
//
// Measured cost: see centroid.cu.
typedef unsigned int u32;
typedef unsigned long long u64;

#define FULL_MASK 0xffffffffu

// Threads per block of the column kernels (cl_sum_chunks, cl_centroids, cl_global_part,
// cl_global), of cl_distances (8 warps) and of cl_finish / cl_novelty.
#define CL_THREADS 256u
// Rows per chunk of the per-member passes (the GPU's ChunkGrid chunk; the CPU's is 4096).
#define CL_CHUNK_ROWS 128u
// Threads per block of cl_moments (one block per cluster).
#define CL_MERGE_THREADS 128u
// Clusters per partial of the global centroid (cl_global_part).
#define CL_GROUP 32u

// The per-cluster statistics buffer `stats`: field f of cluster c at stats[f * clusters + c].
#define CL_F_COHESION 0u
#define CL_F_INERTIA 1u
#define CL_F_RMS 2u
#define CL_F_SPREAD 3u
#define CL_F_SKEW 4u
#define CL_F_MIN 5u
#define CL_F_MAX 6u
#define CL_F_MEAN_NORM 7u
#define CL_F_QUALITY 8u
#define CL_F_OFFSET 9u
#define CL_F_NOVELTY 10u
#define CL_F_OUTLIER 11u
#define CL_F_CORE 12u
#define CL_F_CORE_PERIPHERY 13u
#define CL_F_OUTLIER_T 14u
#define CL_F_CORE_T 15u
#define CL_F_GLOBAL_TERM 16u
#define CL_FIELDS 17u

// The per-chunk moment partials of pass 2 (part2[f * chunks + g]).
#define CL_P2_COUNT 0u
#define CL_P2_MEAN 1u
#define CL_P2_M2 2u
#define CL_P2_M3 3u
#define CL_P2_MIN 4u
#define CL_P2_MAX 5u
#define CL_P2_SUM_SQ 6u
#define CL_P2_SUM_NORM 7u
#define CL_P2_FIELDS 8u

// The per-chunk partials of pass 3 (part3[f * chunks + g], u32 words).
#define CL_P3_OUTLIERS 0u
#define CL_P3_CORE 1u
#define CL_P3_CORE_SUM 2u       // f32 bits
#define CL_P3_PERIPHERY_SUM 3u  // f32 bits
#define CL_P3_FIELDS 4u

__device__ __forceinline__ float cl_nan() { return __int_as_float(0x7fc00000); }

// ---- compensated sums (Neumaier's variant of Kahan's) ------------------------------------
// s + c is the sum; the error of n additions is about 2u |sum| + n u^2 sum |x| instead of
// n u sum |x|. __fadd_rn / __fsub_rn keep NVRTC from contracting or reassociating.

struct ClSum {
    float s, c;
};

__device__ __forceinline__ ClSum cl_sum0() {
    ClSum r;
    r.s = 0.0f;
    r.c = 0.0f;
    return r;
}

__device__ __forceinline__ void cl_add(ClSum& a, float x) {
    const float t = __fadd_rn(a.s, x);
    const float e = (fabsf(a.s) >= fabsf(x)) ? __fadd_rn(__fsub_rn(a.s, t), x) : __fadd_rn(__fsub_rn(x, t), a.s);
    a.c = __fadd_rn(a.c, e);
    a.s = t;
}

__device__ __forceinline__ float cl_value(ClSum a) { return __fadd_rn(a.s, a.c); }

// ---- streaming moments (crates/orrery-clusters/src/moments.rs, in f32) -------------------

struct ClMoments {
    u32 n;
    float mean, m2, m3, mn, mx;
};

__device__ __forceinline__ ClMoments cl_mom0() {
    ClMoments m;
    m.n = 0u;
    m.mean = 0.0f;
    m.m2 = 0.0f;
    m.m3 = 0.0f;
    m.mn = __int_as_float(0x7f800000);   // +inf
    m.mx = __int_as_float(0xff800000);   // -inf
    return m;
}

// Welford's update with Pebay's third-moment term (Moments::push).
__device__ __forceinline__ void cl_push(ClMoments& m, float x) {
    const float n1 = (float)m.n;
    m.n += 1u;
    const float n = (float)m.n;
    const float delta = x - m.mean;
    const float dn = delta / n;
    const float t1 = delta * dn * n1;
    m.mean += dn;
    m.m3 += t1 * dn * (n - 2.0f) - 3.0f * dn * m.m2;
    m.m2 += t1;
    m.mn = fminf(m.mn, x);
    m.mx = fmaxf(m.mx, x);
}

// Chan's merge with Pebay's third-moment terms (Moments::merge; `a` first).
__device__ __forceinline__ ClMoments cl_merge(ClMoments a, ClMoments b) {
    if (b.n == 0u) return a;
    if (a.n == 0u) return b;
    const float na = (float)a.n, nb = (float)b.n;
    ClMoments r;
    r.n = a.n + b.n;
    const float n = (float)r.n;
    const float delta = b.mean - a.mean;
    r.mean = a.mean + delta * (nb / n);
    r.m2 = a.m2 + b.m2 + delta * delta * (na * nb / n);
    r.m3 = a.m3 + b.m3 + delta * delta * delta * (na * nb * (na - nb) / (n * n)) + 3.0f * delta * (na * b.m2 - nb * a.m2) / n;
    r.mn = fminf(a.mn, b.mn);
    r.mx = fmaxf(a.mx, b.mx);
    return r;
}
