// kernels/clusters/pairwise.cu — the scale, Gaussian-potential and diversity families on the
// GPU (crates/orrery-clusters/src/gpu/pairwise.rs; host references crate::scale,
// crate::potential, crate::diversity), the CUDA twin of shaders/clusters/pairwise.wgsl.
// Module "clusters/pairwise": common.cuh, pairs.cuh, this file.
//
// What it computes (docs/clusters/statistics.md, sections 3-5), every pass one launch over
//   all clusters:
//   scale       sc_hist     a block per pairwise item (pairs.cuh): for its tile pairs with
//                           ti <= tj the distances of the pairs i < j binned into 256 bins of
//                           width h = 2 max_radius / 256 (last bin also holds the top edge and
//                           beyond; bin 0 when h = 0), a shared-memory histogram per block,
//                           then added to the cluster's 64-bit counters     -> hist
//               sc_sigma    a thread per cluster: the lower median's bin and its interpolation
//                           sigma = h (b + (k - C_b - 1/2) / count_b), k = ceil(M / 2)  -> sstats
//   potential   pot_nearest a block per cluster, a warp per candidate centroid: the nearest
//                           other non-empty centroid (ties to the lower index)  -> nearest, pstats
//               pot_entangle a block per pairwise item: sum of exp(-d^2 / sigma^2) over its
//                           pairs i < j (compensated per thread, fixed tree)  -> part_e
//               pot_finish  a block per cluster: depth and curvature from the member distances,
//                           the item partials in order, the escape probability    -> pstats
//   diversity   div_moments a block per pairwise item: Welford moments of its pair distances
//                           per thread, Chan's merge over the block in a fixed tree -> part_m
//               div_merge   a block per cluster: the item partials in item order (thread runs,
//                           fixed tree): mean, std, skew, cv, min, max, the histogram's edges
//               div_hist    a block per pairwise item: 20 bins over [min, max]       -> hist
//               div_entropy a thread per cluster: entropy / log2 20 and 2^H          -> dstats
//
// Arithmetic: f32 (the WGSL twin has no f64; see pairs.cuh). Histogram counts are integers
//   (shared-memory atomics, then 64-bit global atomics: the counts do not depend on the
//   order). A distance computed in f32 can fall into the neighbouring bin of the one its
//   f64 value falls into on the CPU when it lies within about dim * 2^-24 of an edge, so
//   histograms may differ from the CPU's by those pairs and sigma by up to one bin width h
//   (the bound the CPU's sigma has against the exact median anyway); the tests check
//   exactly that (tests/clusters/gpu_families.rs). Float sums and moments are merged in a
//   fixed order: a run's result is one function of its input.
//
// Launch shape: pairwise items PT_THREADS (256) threads, blocks = items (host: the item
//   prefix); per-cluster kernels one block of PT_THREADS (pot_nearest, pot_finish) or
//   PT_MERGE_THREADS (div_merge) per cluster; per-cluster threads (sc_sigma, div_entropy)
//   ceil(clusters / PT_THREADS) blocks.
//
// Buffers (direction, length, layout)
//   vectors (r, rows * dim f32), offsets (r, clusters + 1 u32), item_prefix (r, clusters + 1
//   u32: exclusive prefix sum of items per cluster), cstats (r, the centroid family's
//   statistics, CL_FIELDS * clusters f32), centroids (r, clusters * dim f32; NaN rows for
//   empty clusters), member_distance (r, rows f32), hist (rw, clusters * bins * 2 u32: 64-bit
//   counters, low word first; zeroed by the host before sc_hist / div_hist), sstats (rw,
//   SC_FIELDS * clusters f32), nearest (rw, clusters u32), pstats (rw, POT_FIELDS * clusters),
//   part_e (rw, items f32), part_m (rw, 6 * items f32, field-major), dstats (rw, DIV_FIELDS *
//   clusters). Field f of cluster c is at f * clusters + c in every stats buffer.
//
// Invariants: offsets valid CSR; clusters >= 1; items >= 1 for the item kernels (the host
//   skips them otherwise); row * dim in u64, tile pairs in u64.
//
// Cost model: each pairwise pass is M_c * dim subtract-and-FMA terms per cluster over the
//   upper triangle (half the tile pairs are skipped at once); staged through shared memory
//   (pairs.cuh) at about a third of FP32 peak: 100 clusters of 1,000 members at 1,024 dims
//   (5e10 terms) in about 3 ms per pass; a 1M-member cluster (5e14) in about 25 s per pass.
//   The histograms add a shared atomic per pair. Measured: not yet.

#define SC_F_SIGMA 0u
#define SC_F_WIDTH 1u
#define SC_FIELDS 2u

#define POT_F_DEPTH 0u
#define POT_F_CURVATURE 1u
#define POT_F_ESCAPE 2u
#define POT_F_ENTANGLEMENT 3u
#define POT_F_NEAREST_DISTANCE 4u
#define POT_FIELDS 5u

#define DIV_F_MEAN 0u
#define DIV_F_STD 1u
#define DIV_F_SKEW 2u
#define DIV_F_CV 3u
#define DIV_F_MIN 4u
#define DIV_F_MAX 5u
#define DIV_F_ENTROPY 6u
#define DIV_F_PERPLEXITY 7u
#define DIV_F_LO 8u
#define DIV_F_WIDTH 9u
#define DIV_FIELDS 10u

#define NO_CLUSTER 0xffffffffu

__device__ __forceinline__ float pw_warp_sum(float v) {
#pragma unroll
    for (u32 m = 16u; m >= 1u; m >>= 1) v += __shfl_xor_sync(FULL_MASK, v, m);
    return v;
}

__device__ __forceinline__ u32 pw_bin(float d, float lo, float h, u32 bins) {
    if (!(h > 0.0f)) return 0u;
    const float q = (d - lo) / h;
    return q >= (float)(bins - 1u) ? bins - 1u : (q > 0.0f ? (u32)q : 0u);
}

// A histogram pass: every pair i < j of the item binned with (lo, h) of its cluster.
template <u32 BINS>
__device__ __forceinline__ void pw_histogram(const float* __restrict__ vectors, const PtItem& it, u32 dim, float lo,
                                             float h, u32* __restrict__ hist, PtShared& sh, u32* sh_h) {
    const u32 t = threadIdx.x, ty = t >> 4, tx = t & 15u;
    for (u32 b = t; b < BINS; b += PT_THREADS) sh_h[b] = 0u;
    for (u64 l = it.l0; l < it.l1; ++l) {  // the item's tile pairs on or above the diagonal
        const u32 ti = (u32)(l / it.tiles), tj = (u32)(l % it.tiles);
        if (ti > tj) continue;
        const u32 r0 = it.first + ti * PT_TILE, c0 = it.first + tj * PT_TILE;
        const u32 nr = min(PT_TILE, it.first + it.n - r0), nc = min(PT_TILE, it.first + it.n - c0);
        float acc[4][4];
        pt_tile(vectors, dim, r0, nr, c0, nc, sh, acc);
#pragma unroll
        for (u32 a = 0; a < 4u; ++a)
#pragma unroll
            for (u32 b = 0; b < 4u; ++b)
                if (pt_upper(ti, tj, ty + 16u * a, tx + 16u * b, nr, nc))
                    atomicAdd(sh_h + pw_bin(sqrtf(acc[a][b]), lo, h, BINS), 1u);
    }
    __syncthreads();
    for (u32 b = t; b < BINS; b += PT_THREADS) pt_count(hist + 2u * BINS * it.c, b, sh_h[b]);
}

// ---- scale ----------------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(PT_THREADS) sc_hist(
    const float* __restrict__ vectors, const u32* __restrict__ offsets, const u32* __restrict__ item_prefix,
    const float* __restrict__ cstats, u32* __restrict__ hist, u32 dim, u32 clusters, u32 items) {
    __shared__ PtShared sh;
    __shared__ u32 sh_h[SIGMA_BINS];
    if (blockIdx.x >= items) return;
    const PtItem it = pt_item(offsets, item_prefix, clusters, blockIdx.x);
    const float h = 2.0f * cstats[CL_F_MAX * clusters + it.c] / (float)SIGMA_BINS;
    pw_histogram<SIGMA_BINS>(vectors, it, dim, 0.0f, h, hist, sh, sh_h);
}

extern "C" __global__ void __launch_bounds__(PT_THREADS) sc_sigma(
    const u32* __restrict__ offsets, const float* __restrict__ cstats, const u32* __restrict__ hist,
    float* __restrict__ sstats, u32 clusters) {
    const u32 c = blockIdx.x * PT_THREADS + threadIdx.x;
    if (c >= clusters) return;
    const u64 n = offsets[c + 1u] - offsets[c];
    const float h = 2.0f * cstats[CL_F_MAX * clusters + c] / (float)SIGMA_BINS;
    const u64 m = n * (n > 0u ? n - 1u : 0u) / 2u;
    float sigma = 0.0f;
    if (n == 0u) {
        sigma = cl_nan();
    } else if (m > 0u && h > 0.0f) {
        const u64 k = (m + 1u) / 2u;
        u64 below = 0u;
        for (u32 b = 0; b < SIGMA_BINS; ++b) {
            const u64 cnt = pt_word64(hist + 2u * SIGMA_BINS * c, b);
            if (below + cnt >= k && cnt > 0u) {
                sigma = h * ((float)b + ((float)(k - below) - 0.5f) / (float)cnt);
                break;
            }
            below += cnt;
        }
    }
    sstats[SC_F_SIGMA * clusters + c] = sigma;
    sstats[SC_F_WIDTH * clusters + c] = n == 0u ? cl_nan() : h;
}

// ---- potential ------------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(PT_THREADS) pot_nearest(
    const float* __restrict__ centroids, const u32* __restrict__ offsets, u32* __restrict__ nearest,
    float* __restrict__ pstats, u32 dim, u32 clusters) {
    __shared__ float sh_d[PT_THREADS / 32u];
    __shared__ u32 sh_o[PT_THREADS / 32u];
    const u32 c = blockIdx.x;
    if (c >= clusters) return;
    const u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
    const bool live = offsets[c + 1u] > offsets[c];
    const float* mu = centroids + (u64)c * dim;
    float best = __int_as_float(0x7f800000);
    u32 arg = NO_CLUSTER;
    if (live) {
        for (u32 o = warp; o < clusters; o += PT_THREADS / 32u) {
            if (o == c || offsets[o + 1u] == offsets[o]) continue;
            const float* nu = centroids + (u64)o * dim;
            float s = 0.0f;
            for (u32 d = lane; d < dim; d += 32u) {
                const float u = __ldg(mu + d) - __ldg(nu + d);
                s = fmaf(u, u, s);
            }
            s = pw_warp_sum(s);
            if (s < best) {  // candidates ascend per warp: a tie keeps the lower index
                best = s;
                arg = o;
            }
        }
    }
    if (lane == 0u) {
        sh_d[warp] = best;
        sh_o[warp] = arg;
    }
    __syncthreads();
    if (threadIdx.x != 0u) return;
    for (u32 w = 1; w < PT_THREADS / 32u; ++w) {
        if (sh_d[w] < best || (sh_d[w] == best && sh_o[w] < arg)) {
            best = sh_d[w];
            arg = sh_o[w];
        }
    }
    nearest[c] = arg;
    pstats[POT_F_NEAREST_DISTANCE * clusters + c] = live ? sqrtf(best) : cl_nan();
}

extern "C" __global__ void __launch_bounds__(PT_THREADS) pot_entangle(
    const float* __restrict__ vectors, const u32* __restrict__ offsets, const u32* __restrict__ item_prefix,
    const float* __restrict__ sstats, float* __restrict__ part_e, u32 dim, u32 clusters, u32 items) {
    __shared__ PtShared sh;
    __shared__ float sh_s[PT_THREADS];
    if (blockIdx.x >= items) return;
    const PtItem it = pt_item(offsets, item_prefix, clusters, blockIdx.x);
    const float sigma = sstats[SC_F_SIGMA * clusters + it.c];
    const float s2 = sigma * sigma;
    // exp(-d2 * (1 / s2)): one division per item, not per pair (a per-pair division is a
    // subroutine that made ptxas spill); 1 ulp from exp(-d2 / s2).
    const float inv = s2 > 0.0f ? 1.0f / s2 : 0.0f;
    const u32 t = threadIdx.x, ty = t >> 4, tx = t & 15u;
    ClSum s = cl_sum0();
    for (u64 l = it.l0; l < it.l1; ++l) {  // the item's tile pairs on or above the diagonal
        const u32 ti = (u32)(l / it.tiles), tj = (u32)(l % it.tiles);
        if (ti > tj) continue;
        const u32 r0 = it.first + ti * PT_TILE, c0 = it.first + tj * PT_TILE;
        const u32 nr = min(PT_TILE, it.first + it.n - r0), nc = min(PT_TILE, it.first + it.n - c0);
        float acc[4][4];
        pt_tile(vectors, dim, r0, nr, c0, nc, sh, acc);
        float part = 0.0f;
#pragma unroll
        for (u32 a = 0; a < 4u; ++a)
#pragma unroll
            for (u32 b = 0; b < 4u; ++b)
                if (pt_upper(ti, tj, ty + 16u * a, tx + 16u * b, nr, nc))
                    part += s2 > 0.0f ? expf(-acc[a][b] * inv) : (acc[a][b] == 0.0f ? 1.0f : 0.0f);
        cl_add(s, part);
    }
    sh_s[t] = cl_value(s);
    __syncthreads();
    for (u32 h = PT_THREADS / 2u; h > 0u; h >>= 1) {
        if (t < h) sh_s[t] += sh_s[t + h];
        __syncthreads();
    }
    if (t == 0u) part_e[blockIdx.x] = sh_s[0];
}

extern "C" __global__ void __launch_bounds__(PT_THREADS) pot_finish(
    const float* __restrict__ member_distance, const u32* __restrict__ offsets, const u32* __restrict__ item_prefix,
    const float* __restrict__ part_e, const float* __restrict__ sstats, float* __restrict__ pstats, u32 dim,
    u32 clusters) {
    __shared__ float sh_w[PT_THREADS], sh_k[PT_THREADS], sh_e[PT_THREADS];
    const u32 c = blockIdx.x;
    if (c >= clusters) return;
    const u32 t = threadIdx.x;
    const u32 s0 = offsets[c], n = offsets[c + 1u] - s0;
    const float sigma = sstats[SC_F_SIGMA * clusters + c];
    const float s2 = 2.0f * sigma * sigma;
    const float dsig = (float)dim * sigma * sigma;
    ClSum w = cl_sum0(), k = cl_sum0(), e = cl_sum0();
    for (u32 i = s0 + t; i < s0 + n; i += PT_THREADS) {
        const float r = member_distance[i];
        const float r2 = r * r;
        const float kr = pt_kernel(r2, s2);
        cl_add(w, kr);
        cl_add(k, sigma > 0.0f ? kr * (1.0f - r2 / dsig) : kr);
    }
    for (u32 g = item_prefix[c] + t; g < item_prefix[c + 1u]; g += PT_THREADS) cl_add(e, part_e[g]);
    sh_w[t] = cl_value(w);
    sh_k[t] = cl_value(k);
    sh_e[t] = cl_value(e);
    __syncthreads();
    for (u32 h = PT_THREADS / 2u; h > 0u; h >>= 1) {
        if (t < h) {
            sh_w[t] += sh_w[t + h];
            sh_k[t] += sh_k[t + h];
            sh_e[t] += sh_e[t + h];
        }
        __syncthreads();
    }
    if (t != 0u) return;
    float* f = pstats + c;
    if (n == 0u) {
        f[POT_F_DEPTH * clusters] = cl_nan();
        f[POT_F_CURVATURE * clusters] = cl_nan();
        f[POT_F_ESCAPE * clusters] = cl_nan();
        f[POT_F_ENTANGLEMENT * clusters] = cl_nan();
        return;
    }
    const float nf = (float)n;
    const float delta = f[POT_F_NEAREST_DISTANCE * clusters];
    f[POT_F_DEPTH * clusters] = sh_w[0] / nf;
    f[POT_F_CURVATURE * clusters] = sh_k[0] / nf;
    f[POT_F_ESCAPE * clusters] = isinf(delta) ? 0.0f : pt_kernel(delta * delta, 8.0f * sigma * sigma);
    float ent = 0.0f;
    if (n >= 2u) {
        const float purity = (nf + 2.0f * sh_e[0]) / (nf * nf);
        ent = fminf(fmaxf((1.0f - purity) * (nf / (nf - 1.0f)), 0.0f), 1.0f);
    }
    f[POT_F_ENTANGLEMENT * clusters] = ent;
}

// ---- diversity ------------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(PT_THREADS) div_moments(
    const float* __restrict__ vectors, const u32* __restrict__ offsets, const u32* __restrict__ item_prefix,
    float* __restrict__ part_m, u32 dim, u32 clusters, u32 items) {
    __shared__ PtShared sh;
    __shared__ PtMoments sh_m[PT_THREADS];
    if (blockIdx.x >= items) return;
    const PtItem it = pt_item(offsets, item_prefix, clusters, blockIdx.x);
    const u32 t = threadIdx.x, ty = t >> 4, tx = t & 15u;
    PtMoments m = pt_mom0();
    for (u64 l = it.l0; l < it.l1; ++l) {  // the item's tile pairs on or above the diagonal
        const u32 ti = (u32)(l / it.tiles), tj = (u32)(l % it.tiles);
        if (ti > tj) continue;
        const u32 r0 = it.first + ti * PT_TILE, c0 = it.first + tj * PT_TILE;
        const u32 nr = min(PT_TILE, it.first + it.n - r0), nc = min(PT_TILE, it.first + it.n - c0);
        float acc[4][4];
        pt_tile(vectors, dim, r0, nr, c0, nc, sh, acc);
#pragma unroll
        for (u32 a = 0; a < 4u; ++a)
#pragma unroll
            for (u32 b = 0; b < 4u; ++b)
                if (pt_upper(ti, tj, ty + 16u * a, tx + 16u * b, nr, nc)) pt_push(m, sqrtf(acc[a][b]));
    }
    sh_m[t] = m;
    __syncthreads();
    for (u32 h = PT_THREADS / 2u; h > 0u; h >>= 1) {
        if (t < h) sh_m[t] = pt_merge(sh_m[t], sh_m[t + h]);
        __syncthreads();
    }
    if (t != 0u) return;
    const PtMoments r = sh_m[0];
    const u32 g = blockIdx.x;
    part_m[0u * items + g] = r.n;
    part_m[1u * items + g] = r.mean;
    part_m[2u * items + g] = r.m2;
    part_m[3u * items + g] = r.m3;
    part_m[4u * items + g] = r.mn;
    part_m[5u * items + g] = r.mx;
}

extern "C" __global__ void __launch_bounds__(PT_MERGE_THREADS) div_merge(
    const float* __restrict__ part_m, const u32* __restrict__ offsets, const u32* __restrict__ item_prefix,
    float* __restrict__ dstats, u32 clusters, u32 items) {
    __shared__ PtMoments sh_m[PT_MERGE_THREADS];
    const u32 c = blockIdx.x;
    if (c >= clusters) return;
    const u32 t = threadIdx.x;
    const u32 g0 = item_prefix[c], g1 = item_prefix[c + 1u];
    const u32 per = (g1 - g0 + PT_MERGE_THREADS - 1u) / PT_MERGE_THREADS;
    const u32 a = g0 + t * per, b = min(g1, a + per);
    PtMoments m = pt_mom0();
    for (u32 g = a; g < b; ++g) {
        PtMoments p;
        p.n = part_m[0u * items + g];
        p.mean = part_m[1u * items + g];
        p.m2 = part_m[2u * items + g];
        p.m3 = part_m[3u * items + g];
        p.mn = part_m[4u * items + g];
        p.mx = part_m[5u * items + g];
        m = pt_merge(m, p);
    }
    sh_m[t] = m;
    __syncthreads();
    for (u32 h = PT_MERGE_THREADS / 2u; h > 0u; h >>= 1) {
        if (t < h) sh_m[t] = pt_merge(sh_m[t], sh_m[t + h]);
        __syncthreads();
    }
    if (t != 0u) return;
    const u32 n = offsets[c + 1u] - offsets[c];
    float* f = dstats + c;
    const PtMoments r = sh_m[0];
    if (r.n == 0.0f) {
        const float fill = n == 0u ? cl_nan() : 0.0f;
        for (u32 k = 0; k < DIV_FIELDS; ++k) f[k * clusters] = fill;
        f[DIV_F_PERPLEXITY * clusters] = n == 0u ? cl_nan() : 1.0f;
        f[DIV_F_LO * clusters] = 0.0f;
        f[DIV_F_WIDTH * clusters] = 0.0f;
        return;
    }
    const float sd = sqrtf(fmaxf(r.m2 / r.n, 0.0f));
    f[DIV_F_MEAN * clusters] = r.mean;
    f[DIV_F_STD * clusters] = sd;
    f[DIV_F_SKEW * clusters] = r.m2 <= 0.0f ? 0.0f : sqrtf(r.n) * r.m3 / (r.m2 * sqrtf(r.m2));
    f[DIV_F_CV * clusters] = r.mean > 0.0f ? sd / r.mean : 0.0f;
    f[DIV_F_MIN * clusters] = r.mn;
    f[DIV_F_MAX * clusters] = r.mx;
    f[DIV_F_LO * clusters] = r.mn;
    f[DIV_F_WIDTH * clusters] = (r.mx - r.mn) / (float)DIV_BINS;
}

extern "C" __global__ void __launch_bounds__(PT_THREADS) div_hist(
    const float* __restrict__ vectors, const u32* __restrict__ offsets, const u32* __restrict__ item_prefix,
    const float* __restrict__ dstats, u32* __restrict__ hist, u32 dim, u32 clusters, u32 items) {
    __shared__ PtShared sh;
    __shared__ u32 sh_h[DIV_BINS];
    if (blockIdx.x >= items) return;
    const PtItem it = pt_item(offsets, item_prefix, clusters, blockIdx.x);
    const float lo = dstats[DIV_F_LO * clusters + it.c], w = dstats[DIV_F_WIDTH * clusters + it.c];
    pw_histogram<DIV_BINS>(vectors, it, dim, lo, w, hist, sh, sh_h);
}

extern "C" __global__ void __launch_bounds__(PT_THREADS) div_entropy(
    const u32* __restrict__ offsets, const u32* __restrict__ hist, float* __restrict__ dstats, u32 clusters) {
    const u32 c = blockIdx.x * PT_THREADS + threadIdx.x;
    if (c >= clusters) return;
    const u64 n = offsets[c + 1u] - offsets[c];
    const u64 m = n * (n > 0u ? n - 1u : 0u) / 2u;
    if (m == 0u) return;  // div_merge wrote the sentinels
    const float total = (float)m;
    float h = 0.0f;
    for (u32 b = 0; b < DIV_BINS; ++b) {
        const u64 cnt = pt_word64(hist + 2u * DIV_BINS * c, b);
        if (cnt > 0u) {
            const float p = (float)cnt / total;
            h -= p * log2f(p);
        }
    }
    dstats[DIV_F_ENTROPY * clusters + c] = fminf(fmaxf(h / log2f((float)DIV_BINS), 0.0f), 1.0f);
    dstats[DIV_F_PERPLEXITY * clusters + c] = exp2f(h);
}
