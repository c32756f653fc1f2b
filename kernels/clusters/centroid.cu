// kernels/clusters/centroid.cu — the centroid family on the GPU
// (crates/orrery-clusters/src/gpu/centroid.rs; host reference crate::centroid), the CUDA twin
// of shaders/clusters/centroid.wgsl. Module "clusters/centroid": common.cuh, this file.
//
// What it computes: every field of `CentroidStats` (docs/clusters/statistics.md, section 1)
//   for all clusters of a CSR set of f32 vectors, in three passes over the members with no
//   atomics. Like the CPU's ChunkGrid, cluster c is cut into ceil(n_c / CL_CHUNK_ROWS)
//   chunks numbered consecutively over all clusters (the host uploads each chunk's cluster
//   and first row, and each cluster's first chunk); a chunk's partial is written to scratch
//   and a second kernel merges a cluster's partials in a fixed order. Nine launches:
//     pass 1  cl_sum_chunks   chunk x column-slab blocks: per chunk the compensated column
//                             sums of its rows                       -> part1 [chunks][dim]
//             cl_centroids    cluster x slab: the chunk sums in chunk order -> sums, centroids
//             cl_global_part  group-of-32-clusters x slab: sums of the cluster sums -> gpart
//             cl_global       slab: G = sum of the group sums / N     -> global[0..dim)
//     pass 2  cl_distances    one block per chunk, a warp per row: r_i = |x_i - mu_c| and
//                             |x_i| (f32, warp tree), per warp Welford moments of r, sum r^2,
//                             sum |x|, warps merged in order          -> member_distance, part2
//             cl_moments      one block per cluster: chunk moments merged (a thread per run
//                             of consecutive chunks, then a fixed tree) -> cohesion, inertia,
//                             rms, spread, skew, min, max, mean norm, both thresholds
//     pass 3  cl_thresholds   one block per chunk, a thread per row: outliers (r > cohesion +
//                             outlier_sigmas spread), core (r <= core_scale cohesion), the sums
//                             of r over core and periphery            -> part3
//             cl_finish       one block per cluster: |mu|, |mu - G| (tree over the dims), the
//                             pass-3 partials -> quality, offset, ratios, n offset^2 + inertia
//             cl_novelty      one block: s_G = sqrt(sum of those terms / N) (Huygens, as the
//                             CPU) -> global[dim], novelty
//   Sentinels as the CPU: an empty cluster is NaN in every field (written explicitly, never
//   computed from NaN); skew 0 when M2 = 0; quality 0 when the mean norm is 0; novelty 0 when
//   s_G = 0; core-periphery ratio 1 when the core or the periphery is empty.
//
// Arithmetic: f32 throughout (see common.cuh for why). Column sums are compensated
//   (Neumaier) within a chunk and across chunks and groups, so a centroid's error stays near
//   2u of the sum of |x| whatever the cluster size; a row's |x - mu|^2 sums at most
//   ceil(dim / 128) float4 terms per lane, then a 5-level warp tree; moments are Welford
//   within a warp (at most 16 rows), Chan across warps and chunks. Compared with the CPU's
//   f64 (tests/clusters/gpu.rs): relative 1e-4 with an absolute floor of 1e-4 of the data's
//   scale, which covers the f32 rounding of mu (all r_i move together) and the cancellation
//   in quantities that are differences (skew near 0, centroid coordinates near 0). The
//   threshold counts compare f32 r_i with f32 thresholds, so a member within rounding of a
//   threshold may be counted differently from the CPU (the tests allow exactly those).
//
// Launch shape
//   Vectors are read as float4 when dim % 4 == 0 (the host binds whole buffers, so every
//   row starts 16-byte aligned), else as scalars: cols = dim / 4 or dim "columns", slabs =
//   ceil(cols / CL_THREADS). Column kernels: CL_THREADS threads, one column each, grid
//   (items x slabs) decoded as block = item * slabs + slab. cl_sum_chunks keeps four rows'
//   loads in flight per thread (16-byte loads, coalesced: a warp reads 512 contiguous
//   bytes of one row). cl_distances: 8 warps per 128-row chunk, each lane a float4 column
//   stride of 32, two rows per warp in flight; the centroid row is re-read through the
//   read-only cache (4 KB at dim 1024, shared by the chunk's rows), so no shared memory is
//   sized by dim and any dim works.
//
// Buffers (direction, length, layout); u32 offsets are CSR (clusters + 1)
//   vectors (r, rows * dim f32, row-major), offsets (r), chunk_cluster / chunk_start (r,
//   chunks u32), chunk_first (r, clusters + 1 u32: a cluster's chunks are chunk_first[c] ..
//   chunk_first[c + 1]), part1 (rw, chunks * dim f32), sums / centroids (rw, clusters * dim
//   f32; an empty cluster's centroid is NaN), gpart (rw, ceil(clusters / 32) * dim), global
//   (rw, dim + 1: G then s_G), member_distance (rw, rows f32), part2 (rw, 8 * chunks f32),
//   part3 (rw, 4 * chunks u32), stats (rw, CL_FIELDS * clusters f32, see common.cuh).
//
// Invariants: offsets valid CSR (validated on the host), chunks >= 1 for the per-chunk
//   kernels (the host skips them otherwise), clusters >= 1, rows * dim and chunks * dim
//   indexed in u64.
//
// Cost model (H200, 100K rows x 1024 dims, ~800 chunks): pass 1 and pass 2 each read the
//   409.6 MB of vectors once (about 0.1 ms each at 4 TB/s); the partials are chunks x dim
//   f32 (3.2 MB written and read once); the other kernels touch clusters x dim values. The
//   compensated adds (6 FP32 operations per element) and pass 2's 3 FMAs per element are
//   far below the FP32 rate for 1e8 elements (about 20 us). Predicted: ~0.25 ms for the
//   nine launches. Measured: not yet.

__device__ __forceinline__ u32 cl_cols(u32 dim) { return (dim & 3u) == 0u ? dim >> 2 : dim; }

__device__ __forceinline__ u32 cl_slabs(u32 dim) { return (cl_cols(dim) + CL_THREADS - 1u) / CL_THREADS; }

__device__ __forceinline__ void cl_add4(ClSum* s, float4 v) {
    cl_add(s[0], v.x);
    cl_add(s[1], v.y);
    cl_add(s[2], v.z);
    cl_add(s[3], v.w);
}

// ---- pass 1 ---------------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(CL_THREADS) cl_sum_chunks(
    const float* __restrict__ vectors, const u32* __restrict__ offsets, const u32* __restrict__ chunk_cluster,
    const u32* __restrict__ chunk_start, float* __restrict__ part1, u32 dim, u32 chunks) {
    const u32 slabs = cl_slabs(dim);
    const u32 g = blockIdx.x / slabs;
    const u32 j = (blockIdx.x % slabs) * CL_THREADS + threadIdx.x;
    if (g >= chunks || j >= cl_cols(dim)) return;
    const u32 c = chunk_cluster[g];
    const u32 start = chunk_start[g];
    const u32 end = min(start + CL_CHUNK_ROWS, offsets[c + 1]);
    if ((dim & 3u) == 0u) {
        const u32 cols = dim >> 2;
        const float4* x = reinterpret_cast<const float4*>(vectors) + j;
        ClSum s[4] = {cl_sum0(), cl_sum0(), cl_sum0(), cl_sum0()};
        u32 i = start;
        for (; i + 4u <= end; i += 4u) {
            const float4 a = __ldg(x + (u64)i * cols);
            const float4 b = __ldg(x + (u64)(i + 1u) * cols);
            const float4 e = __ldg(x + (u64)(i + 2u) * cols);
            const float4 f = __ldg(x + (u64)(i + 3u) * cols);
            cl_add4(s, a);
            cl_add4(s, b);
            cl_add4(s, e);
            cl_add4(s, f);
        }
        for (; i < end; ++i) cl_add4(s, __ldg(x + (u64)i * cols));
        reinterpret_cast<float4*>(part1)[(u64)g * cols + j] =
            make_float4(cl_value(s[0]), cl_value(s[1]), cl_value(s[2]), cl_value(s[3]));
    } else {
        ClSum s = cl_sum0();
        u32 i = start;
        for (; i + 4u <= end; i += 4u) {
            const float a = __ldg(vectors + (u64)i * dim + j);
            const float b = __ldg(vectors + (u64)(i + 1u) * dim + j);
            const float e = __ldg(vectors + (u64)(i + 2u) * dim + j);
            const float f = __ldg(vectors + (u64)(i + 3u) * dim + j);
            cl_add(s, a);
            cl_add(s, b);
            cl_add(s, e);
            cl_add(s, f);
        }
        for (; i < end; ++i) cl_add(s, __ldg(vectors + (u64)i * dim + j));
        part1[(u64)g * dim + j] = cl_value(s);
    }
}

// Per cluster and dimension: the chunk sums in chunk order, and the centroid.
extern "C" __global__ void __launch_bounds__(CL_THREADS) cl_centroids(
    const float* __restrict__ part1, const u32* __restrict__ offsets, const u32* __restrict__ chunk_first,
    float* __restrict__ sums, float* __restrict__ centroids, u32 dim, u32 clusters) {
    const u32 slabs = cl_slabs(dim);
    const u32 c = blockIdx.x / slabs;
    const u32 j = (blockIdx.x % slabs) * CL_THREADS + threadIdx.x;
    const bool vec = (dim & 3u) == 0u;
    if (c >= clusters || j >= cl_cols(dim)) return;
    const u32 n = offsets[c + 1] - offsets[c];
    const u32 g0 = chunk_first[c], g1 = chunk_first[c + 1];
    const u32 lanes = vec ? 4u : 1u;
    ClSum s[4] = {cl_sum0(), cl_sum0(), cl_sum0(), cl_sum0()};
    for (u32 g = g0; g < g1; ++g) {
        const float* p = part1 + (u64)g * dim + (u64)j * lanes;
        if (vec) {
            cl_add4(s, __ldg(reinterpret_cast<const float4*>(p)));
        } else {
            cl_add(s[0], __ldg(p));
        }
    }
    const float nf = (float)n;
#pragma unroll
    for (u32 v = 0; v < 4u; ++v) {
        if (v < lanes) {
            const u64 at = (u64)c * dim + (u64)j * lanes + v;
            const float total = cl_value(s[v]);
            sums[at] = total;
            centroids[at] = n == 0u ? cl_nan() : total / nf;
        }
    }
}

// Per group of CL_GROUP clusters and dimension: the sum of their sums (in cluster order).
extern "C" __global__ void __launch_bounds__(CL_THREADS) cl_global_part(
    const float* __restrict__ sums, float* __restrict__ gpart, u32 dim, u32 clusters) {
    const u32 slabs = cl_slabs(dim);
    const u32 grp = blockIdx.x / slabs;
    const u32 j = (blockIdx.x % slabs) * CL_THREADS + threadIdx.x;
    const u32 groups = (clusters + CL_GROUP - 1u) / CL_GROUP;
    if (grp >= groups || j >= cl_cols(dim)) return;
    const u32 lanes = (dim & 3u) == 0u ? 4u : 1u;
    const u32 c1 = min(clusters, (grp + 1u) * CL_GROUP);
    for (u32 v = 0; v < lanes; ++v) {
        ClSum s = cl_sum0();
        for (u32 c = grp * CL_GROUP; c < c1; ++c) cl_add(s, __ldg(sums + (u64)c * dim + (u64)j * lanes + v));
        gpart[(u64)grp * dim + (u64)j * lanes + v] = cl_value(s);
    }
}

// Per dimension: the global centroid G (NaN when there are no rows).
extern "C" __global__ void __launch_bounds__(CL_THREADS) cl_global(
    const float* __restrict__ gpart, const u32* __restrict__ offsets, float* __restrict__ global, u32 dim,
    u32 clusters) {
    const u32 slab = blockIdx.x;
    const u32 j = slab * CL_THREADS + threadIdx.x;
    if (j >= cl_cols(dim)) return;
    const u32 lanes = (dim & 3u) == 0u ? 4u : 1u;
    const u32 groups = (clusters + CL_GROUP - 1u) / CL_GROUP;
    const u32 rows = offsets[clusters];
    for (u32 v = 0; v < lanes; ++v) {
        ClSum s = cl_sum0();
        for (u32 grp = 0; grp < groups; ++grp) cl_add(s, __ldg(gpart + (u64)grp * dim + (u64)j * lanes + v));
        global[(u64)j * lanes + v] = rows == 0u ? cl_nan() : cl_value(s) / (float)rows;
    }
}

// ---- pass 2 ---------------------------------------------------------------------------------

__device__ __forceinline__ float cl_warp_sum(float v) {
#pragma unroll
    for (u32 m = 16u; m >= 1u; m >>= 1) v += __shfl_xor_sync(FULL_MASK, v, m);
    return v;
}

// |x - mu|^2 and |x|^2 of one row, summed over the lane's columns (no reduction yet).
__device__ __forceinline__ void cl_row_terms(const float* __restrict__ row, const float* __restrict__ mu, u32 dim,
                                             u32 lane, float& d2, float& x2) {
    d2 = 0.0f;
    x2 = 0.0f;
    if ((dim & 3u) == 0u) {
        const u32 cols = dim >> 2;
        const float4* x4 = reinterpret_cast<const float4*>(row);
        const float4* m4 = reinterpret_cast<const float4*>(mu);
        u32 j = lane;
        for (; j + 32u < cols; j += 64u) {
            const float4 a = __ldg(x4 + j), b = __ldg(x4 + j + 32u);
            const float4 ma = __ldg(m4 + j), mb = __ldg(m4 + j + 32u);
            float t;
            t = a.x - ma.x; d2 = fmaf(t, t, d2); t = a.y - ma.y; d2 = fmaf(t, t, d2);
            t = a.z - ma.z; d2 = fmaf(t, t, d2); t = a.w - ma.w; d2 = fmaf(t, t, d2);
            t = b.x - mb.x; d2 = fmaf(t, t, d2); t = b.y - mb.y; d2 = fmaf(t, t, d2);
            t = b.z - mb.z; d2 = fmaf(t, t, d2); t = b.w - mb.w; d2 = fmaf(t, t, d2);
            x2 = fmaf(a.x, a.x, x2); x2 = fmaf(a.y, a.y, x2); x2 = fmaf(a.z, a.z, x2); x2 = fmaf(a.w, a.w, x2);
            x2 = fmaf(b.x, b.x, x2); x2 = fmaf(b.y, b.y, x2); x2 = fmaf(b.z, b.z, x2); x2 = fmaf(b.w, b.w, x2);
        }
        if (j < cols) {
            const float4 a = __ldg(x4 + j), ma = __ldg(m4 + j);
            float t;
            t = a.x - ma.x; d2 = fmaf(t, t, d2); t = a.y - ma.y; d2 = fmaf(t, t, d2);
            t = a.z - ma.z; d2 = fmaf(t, t, d2); t = a.w - ma.w; d2 = fmaf(t, t, d2);
            x2 = fmaf(a.x, a.x, x2); x2 = fmaf(a.y, a.y, x2); x2 = fmaf(a.z, a.z, x2); x2 = fmaf(a.w, a.w, x2);
        }
    } else {
        for (u32 j = lane; j < dim; j += 32u) {
            const float a = __ldg(row + j);
            const float t = a - __ldg(mu + j);
            d2 = fmaf(t, t, d2);
            x2 = fmaf(a, a, x2);
        }
    }
}

extern "C" __global__ void __launch_bounds__(CL_THREADS) cl_distances(
    const float* __restrict__ vectors, const u32* __restrict__ offsets, const u32* __restrict__ chunk_cluster,
    const u32* __restrict__ chunk_start, const float* __restrict__ centroids, float* __restrict__ member_distance,
    float* __restrict__ part2, u32 dim, u32 chunks) {
    __shared__ ClMoments sh_m[CL_THREADS / 32u];
    __shared__ float sh_sq[CL_THREADS / 32u], sh_sn[CL_THREADS / 32u];
    const u32 g = blockIdx.x;
    if (g >= chunks) return;
    const u32 c = chunk_cluster[g];
    const u32 start = chunk_start[g];
    const u32 end = min(start + CL_CHUNK_ROWS, offsets[c + 1]);
    const u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
    const u32 warps = CL_THREADS / 32u;
    const float* mu = centroids + (u64)c * dim;
    ClMoments m = cl_mom0();
    float sq = 0.0f, sn = 0.0f;
    // Two rows per warp per iteration (i and i + warps), in row order.
    for (u32 i = start + warp; i < end; i += 2u * warps) {
        const u32 i2 = i + warps;
        float d2a, x2a, d2b = 0.0f, x2b = 0.0f;
        cl_row_terms(vectors + (u64)i * dim, mu, dim, lane, d2a, x2a);
        if (i2 < end) cl_row_terms(vectors + (u64)i2 * dim, mu, dim, lane, d2b, x2b);
        d2a = cl_warp_sum(d2a);
        x2a = cl_warp_sum(x2a);
        d2b = cl_warp_sum(d2b);
        x2b = cl_warp_sum(x2b);
        if (lane == 0u) {
            const float ra = sqrtf(d2a);
            member_distance[i] = ra;
            cl_push(m, ra);
            sq += d2a;
            sn += sqrtf(x2a);
            if (i2 < end) {
                const float rb = sqrtf(d2b);
                member_distance[i2] = rb;
                cl_push(m, rb);
                sq += d2b;
                sn += sqrtf(x2b);
            }
        }
    }
    if (lane == 0u) {
        sh_m[warp] = m;
        sh_sq[warp] = sq;
        sh_sn[warp] = sn;
    }
    __syncthreads();
    if (threadIdx.x == 0u) {
        ClMoments t = sh_m[0];
        float tsq = sh_sq[0], tsn = sh_sn[0];
        for (u32 w = 1; w < warps; ++w) {
            t = cl_merge(t, sh_m[w]);
            tsq += sh_sq[w];
            tsn += sh_sn[w];
        }
        part2[CL_P2_COUNT * chunks + g] = (float)t.n;
        part2[CL_P2_MEAN * chunks + g] = t.mean;
        part2[CL_P2_M2 * chunks + g] = t.m2;
        part2[CL_P2_M3 * chunks + g] = t.m3;
        part2[CL_P2_MIN * chunks + g] = t.mn;
        part2[CL_P2_MAX * chunks + g] = t.mx;
        part2[CL_P2_SUM_SQ * chunks + g] = tsq;
        part2[CL_P2_SUM_NORM * chunks + g] = tsn;
    }
}

extern "C" __global__ void __launch_bounds__(CL_MERGE_THREADS) cl_moments(
    const float* __restrict__ part2, const u32* __restrict__ offsets, const u32* __restrict__ chunk_first,
    float* __restrict__ stats, u32 clusters, u32 chunks, float outlier_sigmas, float core_scale) {
    __shared__ ClMoments sh_m[CL_MERGE_THREADS];
    __shared__ float sh_sq[CL_MERGE_THREADS], sh_sn[CL_MERGE_THREADS];
    const u32 c = blockIdx.x;
    if (c >= clusters) return;
    const u32 t = threadIdx.x;
    const u32 g0 = chunk_first[c], g1 = chunk_first[c + 1];
    const u32 per = (g1 - g0 + CL_MERGE_THREADS - 1u) / CL_MERGE_THREADS;
    ClMoments m = cl_mom0();
    ClSum sq = cl_sum0(), sn = cl_sum0();
    const u32 a = g0 + t * per, b = min(g1, a + per);
    for (u32 g = a; g < b; ++g) {
        ClMoments p;
        p.n = (u32)part2[CL_P2_COUNT * chunks + g];
        p.mean = part2[CL_P2_MEAN * chunks + g];
        p.m2 = part2[CL_P2_M2 * chunks + g];
        p.m3 = part2[CL_P2_M3 * chunks + g];
        p.mn = part2[CL_P2_MIN * chunks + g];
        p.mx = part2[CL_P2_MAX * chunks + g];
        m = cl_merge(m, p);
        cl_add(sq, part2[CL_P2_SUM_SQ * chunks + g]);
        cl_add(sn, part2[CL_P2_SUM_NORM * chunks + g]);
    }
    sh_m[t] = m;
    sh_sq[t] = cl_value(sq);
    sh_sn[t] = cl_value(sn);
    __syncthreads();
    for (u32 s = CL_MERGE_THREADS / 2u; s > 0u; s >>= 1) {
        if (t < s) {
            sh_m[t] = cl_merge(sh_m[t], sh_m[t + s]);
            sh_sq[t] += sh_sq[t + s];
            sh_sn[t] += sh_sn[t + s];
        }
        __syncthreads();
    }
    if (t != 0u) return;
    const u32 n = offsets[c + 1] - offsets[c];
    float* f = stats + c;
    if (n == 0u) {
        for (u32 k = 0; k < CL_FIELDS; ++k) f[k * clusters] = cl_nan();
        return;
    }
    const ClMoments r = sh_m[0];
    const float nf = (float)n;
    const float spread = sqrtf(fmaxf(r.m2 / nf, 0.0f));
    const float skew = r.m2 <= 0.0f ? 0.0f : sqrtf(nf) * r.m3 / (r.m2 * sqrtf(r.m2));
    f[CL_F_COHESION * clusters] = r.mean;
    f[CL_F_INERTIA * clusters] = sh_sq[0];
    f[CL_F_RMS * clusters] = sqrtf(sh_sq[0] / nf);
    f[CL_F_SPREAD * clusters] = spread;
    f[CL_F_SKEW * clusters] = skew;
    f[CL_F_MIN * clusters] = r.mn;
    f[CL_F_MAX * clusters] = r.mx;
    f[CL_F_MEAN_NORM * clusters] = sh_sn[0] / nf;
    f[CL_F_OUTLIER_T * clusters] = r.mean + outlier_sigmas * spread;
    f[CL_F_CORE_T * clusters] = core_scale * r.mean;
}

// ---- pass 3 ---------------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(CL_CHUNK_ROWS) cl_thresholds(
    const float* __restrict__ member_distance, const u32* __restrict__ offsets,
    const u32* __restrict__ chunk_cluster, const u32* __restrict__ chunk_start, const float* __restrict__ stats,
    u32* __restrict__ part3, u32 clusters, u32 chunks) {
    __shared__ float sh_c[CL_CHUNK_ROWS], sh_p[CL_CHUNK_ROWS];
    const u32 g = blockIdx.x;
    if (g >= chunks) return;
    const u32 c = chunk_cluster[g];
    const u32 i = chunk_start[g] + threadIdx.x;
    const bool valid = i < offsets[c + 1] && threadIdx.x < CL_CHUNK_ROWS;
    const float r = valid ? member_distance[i] : 0.0f;
    const bool out = valid && r > stats[CL_F_OUTLIER_T * clusters + c];
    const bool core = valid && r <= stats[CL_F_CORE_T * clusters + c];
    const u32 outliers = __syncthreads_count(out);
    const u32 cores = __syncthreads_count(core);
    sh_c[threadIdx.x] = core ? r : 0.0f;
    sh_p[threadIdx.x] = (valid && !core) ? r : 0.0f;
    __syncthreads();
    for (u32 s = CL_CHUNK_ROWS / 2u; s > 0u; s >>= 1) {
        if (threadIdx.x < s) {
            sh_c[threadIdx.x] += sh_c[threadIdx.x + s];
            sh_p[threadIdx.x] += sh_p[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0u) {
        part3[CL_P3_OUTLIERS * chunks + g] = outliers;
        part3[CL_P3_CORE * chunks + g] = cores;
        part3[CL_P3_CORE_SUM * chunks + g] = __float_as_uint(sh_c[0]);
        part3[CL_P3_PERIPHERY_SUM * chunks + g] = __float_as_uint(sh_p[0]);
    }
}

extern "C" __global__ void __launch_bounds__(CL_THREADS) cl_finish(
    const float* __restrict__ centroids, const float* __restrict__ global, const u32* __restrict__ offsets,
    const u32* __restrict__ chunk_first, const u32* __restrict__ part3, float* __restrict__ stats, u32 dim,
    u32 clusters, u32 chunks) {
    __shared__ float sh_a[CL_THREADS], sh_b[CL_THREADS], sh_cs[CL_THREADS], sh_ps[CL_THREADS];
    __shared__ u32 sh_o[CL_THREADS], sh_k[CL_THREADS];
    const u32 c = blockIdx.x;
    if (c >= clusters) return;
    const u32 t = threadIdx.x;
    const u32 n = offsets[c + 1] - offsets[c];
    if (n == 0u) {
        // Every field of an empty cluster is NaN (cl_moments wrote them; the global term is 0).
        if (t == 0u) stats[CL_F_GLOBAL_TERM * clusters + c] = 0.0f;
        return;
    }
    const float* mu = centroids + (u64)c * dim;
    float a = 0.0f, b = 0.0f;
    for (u32 d = t; d < dim; d += CL_THREADS) {
        const float u = mu[d];
        const float v = u - global[d];
        a = fmaf(u, u, a);
        b = fmaf(v, v, b);
    }
    const u32 g0 = chunk_first[c], g1 = chunk_first[c + 1];
    u32 o = 0u, k = 0u;
    float cs = 0.0f, ps = 0.0f;
    for (u32 g = g0 + t; g < g1; g += CL_THREADS) {
        o += part3[CL_P3_OUTLIERS * chunks + g];
        k += part3[CL_P3_CORE * chunks + g];
        cs += __uint_as_float(part3[CL_P3_CORE_SUM * chunks + g]);
        ps += __uint_as_float(part3[CL_P3_PERIPHERY_SUM * chunks + g]);
    }
    sh_a[t] = a;
    sh_b[t] = b;
    sh_o[t] = o;
    sh_k[t] = k;
    sh_cs[t] = cs;
    sh_ps[t] = ps;
    __syncthreads();
    for (u32 s = CL_THREADS / 2u; s > 0u; s >>= 1) {
        if (t < s) {
            sh_a[t] += sh_a[t + s];
            sh_b[t] += sh_b[t + s];
            sh_o[t] += sh_o[t + s];
            sh_k[t] += sh_k[t + s];
            sh_cs[t] += sh_cs[t + s];
            sh_ps[t] += sh_ps[t + s];
        }
        __syncthreads();
    }
    if (t != 0u) return;
    const float nf = (float)n;
    const float mean_norm = stats[CL_F_MEAN_NORM * clusters + c];
    const float quality = mean_norm > 0.0f ? fminf(sqrtf(sh_a[0]) / mean_norm, 1.0f) : 0.0f;
    const float offset = sqrtf(sh_b[0]);
    const u32 periphery = n - sh_k[0];
    const float cp = (sh_k[0] == 0u || periphery == 0u) ? 1.0f
                                                        : (sh_cs[0] / (float)sh_k[0]) / (sh_ps[0] / (float)periphery);
    stats[CL_F_QUALITY * clusters + c] = quality;
    stats[CL_F_OFFSET * clusters + c] = offset;
    stats[CL_F_OUTLIER * clusters + c] = (float)sh_o[0] / nf;
    stats[CL_F_CORE * clusters + c] = (float)sh_k[0] / nf;
    stats[CL_F_CORE_PERIPHERY * clusters + c] = cp;
    stats[CL_F_GLOBAL_TERM * clusters + c] = stats[CL_F_INERTIA * clusters + c] + nf * offset * offset;
}

extern "C" __global__ void __launch_bounds__(CL_THREADS) cl_novelty(
    const u32* __restrict__ offsets, float* __restrict__ global, float* __restrict__ stats, u32 dim,
    u32 clusters) {
    __shared__ float sh[CL_THREADS];
    const u32 t = threadIdx.x;
    ClSum s = cl_sum0();
    for (u32 c = t; c < clusters; c += CL_THREADS) cl_add(s, stats[CL_F_GLOBAL_TERM * clusters + c]);
    sh[t] = cl_value(s);
    __syncthreads();
    for (u32 h = CL_THREADS / 2u; h > 0u; h >>= 1) {
        if (t < h) sh[t] += sh[t + h];
        __syncthreads();
    }
    const u32 rows = offsets[clusters];
    const float sg = rows == 0u ? cl_nan() : sqrtf(sh[0] / (float)rows);
    if (t == 0u) global[dim] = sg;
    for (u32 c = t; c < clusters; c += CL_THREADS) {
        const u32 n = offsets[c + 1] - offsets[c];
        stats[CL_F_NOVELTY * clusters + c] =
            n == 0u ? cl_nan() : (sg > 0.0f ? stats[CL_F_OFFSET * clusters + c] / sg : 0.0f);
    }
}
