// kernels/clusters/pairs.cuh — the shared prelude of orrery-clusters' sub-structure and
// pairwise modules (crates/orrery-clusters/src/gpu/{substructure,pairwise}.rs): the host
// concatenates common.cuh, this file and substructure.cu (module "clusters/substructure")
// or pairwise.cu (module "clusters/pairwise"); kernels/src/lib.rs, `clusters::unit`.
//
// What it holds
//   - The launch constants both modules share with the host (gpu/sources.rs holds copies; a
//     unit test checks them against this text).
//   - pt_tile: the distances of one 64 x 64 tile pair of member rows, the work of every
//     pairwise pass (silhouette, sigma's histogram, entanglement, both diversity passes).
//     The tile is the CPU's PAIR_TILE (crate::grid), so a tile pair (ti, tj) means the same
//     rows on both sides.
//   - pt_item: the decode of a pairwise work item: its cluster by a binary search in the
//     exclusive prefix sum of items per cluster, then its run of consecutive tile pairs
//     l0 .. l1 of that cluster, each decoded as (ti, tj) = (l / T_c, l % T_c) with
//     T_c = ceil(n_c / 64): the flat grid of T_c^2 tile pairs per cluster of the issue.
//     Items of a cluster hold max(1, ceil(T_c^2 / PT_MAX_ITEMS)) tile pairs each, so a
//     cluster has at most 4,096 items (and partials) and a 3-member cluster one. When every
//     cluster has at most 4,096 tile pairs (fewer than 4,097 members) the item prefix *is*
//     the prefix sum of T_c^2. The CPU groups tile pairs in runs of at least 16 (its items
//     are rayon tasks); the grouping changes only which float partials are merged, never a
//     count.
//   - f32 moments whose count is a float (PtMoments): pairwise counts reach 5e11 for a 1M-
//     member cluster, beyond u32, and WGSL has no u64 arithmetic; a float count is exact up
//     to 2^24 values per thread, far above what one thread folds (16 pairs per tile pair).
//
// Launch shape of pt_tile: PT_THREADS (256) threads; thread t = 16 ty + tx owns the 16
//   pairs (rows ty + 16 a, columns tx + 16 b), a, b < 4 (rows and columns interleaved by 16
//   so that the shared-memory reads of a warp are broadcasts or consecutive words). The
//   rows are staged PT_KC (32) dimensions at a time in two shared arrays [PT_KC][65] (the
//   pad makes the transposed stores conflict-free): 16.6 KB, whatever the dimension; rows
//   and dimensions past the end are staged as 0, so they add nothing.
//
// Arithmetic: d^2 = sum_k (x_k - y_k)^2 in f32 with FMAs, summed over k in order per
//   thread (relative error below dim * 2^-24, typically sqrt(dim) * 2^-24: about 2e-6 at
//   1,024 dims). Never |x|^2 + |y|^2 - 2 x.y, which cancels for near members.
//
// Buffers: device functions only. Invariants: offsets valid CSR; n_c < 2^32.
//
// Measured cost: see substructure.cu and pairwise.cu.

#define PT_TILE 64u
#define PT_THREADS 256u
#define PT_KC 32u
#define PT_STRIDE 65u
#define PT_MAX_ITEMS 4096u
#define PT_MERGE_THREADS 128u
// Rows per chunk of the two-means passes (and threads of the per-chunk kernels' rows).
#define TM_CHUNK_ROWS 128u
#define TM_THREADS 256u
#define SIGMA_BINS 256u
#define DIV_BINS 20u

struct PtShared {
    float a[PT_KC * PT_STRIDE];
    float b[PT_KC * PT_STRIDE];
};

// acc[a][b] = |x_(r0 + ty + 16a) - x_(c0 + tx + 16b)|^2 for the rows of the two tiles
// (r0, nr rows) and (c0, nc rows); entries outside the tiles are garbage-free zeros'
// distances (the caller masks them). Every thread of the block must call it.
__device__ __forceinline__ void pt_tile(const float* __restrict__ vectors, u32 dim, u32 r0, u32 nr, u32 c0, u32 nc,
                                        PtShared& sh, float acc[4][4]) {
    const u32 t = threadIdx.x, ty = t >> 4, tx = t & 15u;
#pragma unroll
    for (u32 a = 0; a < 4u; ++a)
#pragma unroll
        for (u32 b = 0; b < 4u; ++b) acc[a][b] = 0.0f;
    for (u32 k0 = 0; k0 < dim; k0 += PT_KC) {
        __syncthreads();
        for (u32 e = t; e < PT_TILE * PT_KC; e += PT_THREADS) {
            const u32 r = e / PT_KC, k = e % PT_KC, d = k0 + k;
            sh.a[k * PT_STRIDE + r] = (r < nr && d < dim) ? __ldg(vectors + (u64)(r0 + r) * dim + d) : 0.0f;
            sh.b[k * PT_STRIDE + r] = (r < nc && d < dim) ? __ldg(vectors + (u64)(c0 + r) * dim + d) : 0.0f;
        }
        __syncthreads();
#pragma unroll 4
        for (u32 k = 0; k < PT_KC; ++k) {
            float x[4], y[4];
#pragma unroll
            for (u32 a = 0; a < 4u; ++a) x[a] = sh.a[k * PT_STRIDE + ty + 16u * a];
#pragma unroll
            for (u32 b = 0; b < 4u; ++b) y[b] = sh.b[k * PT_STRIDE + tx + 16u * b];
#pragma unroll
            for (u32 a = 0; a < 4u; ++a)
#pragma unroll
                for (u32 b = 0; b < 4u; ++b) {
                    const float u = x[a] - y[b];
                    acc[a][b] = fmaf(u, u, acc[a][b]);
                }
        }
    }
}

// Whether local pair (row i, column j) of tile pair (ti, tj) is a pair i < j of the upper
// triangle inside the tiles.
__device__ __forceinline__ bool pt_upper(u32 ti, u32 tj, u32 i, u32 j, u32 nr, u32 nc) {
    return i < nr && j < nc && (ti < tj || j > i);
}

// The decode of item `item` (see the header): false when the cluster has no item there.
struct PtItem {
    u32 c, first, n, tiles;
    u64 l0, l1;
};

__device__ __forceinline__ u64 pt_group(u64 pairs) {
    const u64 g = (pairs + PT_MAX_ITEMS - 1u) / PT_MAX_ITEMS;
    return g > 1u ? g : 1u;
}

__device__ __forceinline__ PtItem pt_item(const u32* __restrict__ offsets, const u32* __restrict__ item_prefix,
                                          u32 clusters, u32 item) {
    // The cluster c with item_prefix[c] <= item < item_prefix[c + 1] (the last such c).
    u32 lo = 0u, hi = clusters;
    while (hi - lo > 1u) {
        const u32 mid = (lo + hi) >> 1;
        if (item_prefix[mid] <= item) lo = mid; else hi = mid;
    }
    PtItem it;
    it.c = lo;
    it.first = offsets[lo];
    it.n = offsets[lo + 1u] - it.first;
    it.tiles = (it.n + PT_TILE - 1u) / PT_TILE;
    const u64 pairs = (u64)it.tiles * it.tiles;
    const u64 group = pt_group(pairs);
    it.l0 = (u64)(item - item_prefix[lo]) * group;
    it.l1 = min(pairs, it.l0 + group);
    return it;
}

// ---- f32 moments with a float count (see the header) --------------------------------------

struct PtMoments {
    float n, mean, m2, m3, mn, mx;
};

__device__ __forceinline__ PtMoments pt_mom0() {
    PtMoments m;
    m.n = 0.0f;
    m.mean = 0.0f;
    m.m2 = 0.0f;
    m.m3 = 0.0f;
    m.mn = __int_as_float(0x7f800000);
    m.mx = __int_as_float(0xff800000);
    return m;
}

__device__ __forceinline__ void pt_push(PtMoments& m, float x) {
    const float n1 = m.n;
    m.n += 1.0f;
    const float n = m.n;
    const float delta = x - m.mean;
    const float dn = delta / n;
    const float t1 = delta * dn * n1;
    m.mean += dn;
    m.m3 += t1 * dn * (n - 2.0f) - 3.0f * dn * m.m2;
    m.m2 += t1;
    m.mn = fminf(m.mn, x);
    m.mx = fmaxf(m.mx, x);
}

__device__ __forceinline__ PtMoments pt_merge(PtMoments a, PtMoments b) {
    if (b.n == 0.0f) return a;
    if (a.n == 0.0f) return b;
    const float na = a.n, nb = b.n;
    PtMoments r;
    r.n = na + nb;
    const float n = r.n;
    const float delta = b.mean - a.mean;
    r.mean = a.mean + delta * (nb / n);
    r.m2 = a.m2 + b.m2 + delta * delta * (na * (nb / n));
    r.m3 = a.m3 + b.m3 + delta * delta * delta * (na * (nb / n) * ((na - nb) / n)) +
           3.0f * delta * (na * b.m2 - nb * a.m2) / n;
    r.mn = fminf(a.mn, b.mn);
    r.mx = fmaxf(a.mx, b.mx);
    return r;
}

// A 64-bit counter in two u32 words (low first) of a histogram, incremented by v.
__device__ __forceinline__ void pt_count(u32* __restrict__ words, u32 bin, u32 v) {
    if (v != 0u) atomicAdd(reinterpret_cast<unsigned long long*>(words) + bin, (unsigned long long)v);
}

__device__ __forceinline__ u64 pt_word64(const u32* __restrict__ words, u32 bin) {
    return (u64)words[2u * bin] | ((u64)words[2u * bin + 1u] << 32);
}

// exp(-d2 / s2) with exp(-0 / 0) = 1 (a zero-width kernel: 1 at distance 0, 0 elsewhere).
__device__ __forceinline__ float pt_kernel(float d2, float s2) {
    return s2 > 0.0f ? expf(-d2 / s2) : (d2 == 0.0f ? 1.0f : 0.0f);
}
