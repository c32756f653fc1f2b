// kernels/clusters/probe.cu — the inverted file and the lattice on CUDA: k-means++ seeding
// distances, Lloyd iterations, exact f64 centroids, and the list-probing search with its
// fused side measurement (crates/orrery-clusters/src/gpu/{ivf,lattice,probe}.rs; host
// references crate::search::{ivf, lattice, fused, probe}). Module "clusters/probe",
// self-contained; CUDA only (no WGSL twin: every key is f64 in the CPU's order, which WGSL
// cannot do; xtask's CUDA_ONLY_MODULES says so).
//
// What it computes, bit for bit the CPU's:
//   Every key is crate::dist's: f64, dimension d in lane d % 8 in increasing d, lanes
//   combined ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)), correctly rounded _rn operations, no FMA.
//   A tile pads dimensions past D with zeros on both sides: that adds +0 (L2: 0 * 0; IP:
//   0 * x = +-0) to a lane sum that is never -0 (it starts at +0 and a sum is -0 only when
//   both terms are), which leaves it unchanged, so padding is exact.
//   pr_keys        (mode 0) the key of every (query, centroid) of a batch, or (mode 1) every
//                  row's nearest centroid by squared distance, ties to the lower index.
//   pr_d2          k-means++: d2[r] = key(r, centre) (init) or min(d2[r], key(r, centre)).
//   pr_chunk_sums  sums[c] = d2[c*4096] + ... in order from 0 (the CPU's seeding blocks).
//   pr_seed        centroids[l] = the f64 widening of row seeds[l].
//   pr_sum_items   per item (a contiguous range of positions: a list, or a 4096-member chunk
//                  of a cluster) the f64 sum of its vectors in position order, per dim.
//   pr_fold_items  per cluster the items' sums in item order from 0, divided by the member
//                  count: IVF's Lloyd update (one item per list; empty lists keep their
//                  centroid) and the lattice's centroids (crate::centroid::centroids; NaN
//                  for an empty cluster).
//   pr_gather_rows dst row i = src row rows[i] (the index's list vectors).
//   pr_widen       the stable sort's (key, value) = (list[i], i), grouping rows by list.
//   pr_pairs       per (query, probe) pair of a batch: its list (from the coarse top-k's
//                  positions), the sort key and value that group pairs by list, and its
//                  segment count ceil(list size / PR_SEG).
//   pr_items       per list: work items = ceil(pairs / PR_TQ) query chunks x segments.
//   pr_partial     per item (list l, query chunk, segment): for each of up to PR_TQ pairs,
//                  the top k by (key, row) over the segment's members, written sorted and
//                  padded (NO_ROW, +inf) to the pair's slot slot_off[pair] + segment. With
//                  `fused`, the items of query chunk 0 also write side[row] = |x - mu_l| for
//                  every member of their segment (every member of a probed list is in one).
//   pr_merge       per query: the k best of its slots by (key, row) (sorted lists merged
//                  two at a time by co-ranking), the CPU's merge_sorted.
//   pr_side_chunks per 4096-member chunk: (count, sum d, sum d^2) over non-NaN side values.
//   pr_side_fold   per cluster: the chunk partials in order: scored, cohesion, inertia.
//
// How a search runs without a query x database matrix: the coarse keys (batch x lists,
//   f64) and the executor's segmented top-k pick every query's lists; the executor's stable
//   sort groups the (query, list) pairs by list, so a block scores one list tile against up
//   to PR_TQ queries that probe it: a list is read once per 32 probing queries, not once
//   per query. Every partial and the merge order by (key, row), a total order on distinct
//   rows, so the result does not depend on the grouping, the segments or the block order.
//
// Launch shape
//   pr_keys, pr_partial: PR_THREADS (256) = 16 x 16 threads (tx = t % 16, ty = t / 16); a
//     thread owns queries 2 ty + a and columns 2 tx + b (a, b < 2): four keys, 32 f64 lane
//     sums in registers. Tiles of PR_TQ = 32 queries by PR_TC = 32 columns go through
//     shared memory in chunks of PR_KC = 16 dims, widened to f64 once per element (stride
//     PR_TS = 34 doubles per dim: 2-way conflicts on the stores, double2 loads aligned).
//     pr_keys: blocks = query tiles x centroid splits (mode 1: one split). pr_partial: a
//     grid-stride loop over the items (their count is read on the device); static shared
//     memory 17 KB plus PR_TQ * k * 12 bytes of lists (dynamic, 48 KB at k = 128).
//   pr_partial's narrow tile: an item of at most PR_NQ = 8 pairs (a list probed by few
//     queries: about 4 per list at nprobe 1 of 1,024 lists for 4,096 queries) takes 8
//     queries x PR_NC = 128 columns instead (thread t: query t / 32, columns t % 32 + 32 j,
//     the same four pairs per thread), so it computes no padded query rows; `narrow_ok` = 0
//     keeps the square tile everywhere (the first version, the baseline).
//   Both tiles fetch the next 16-dim chunk into registers while the current one is computed
//     (the global loads' latency overlaps the f64 work), then store it widened to f64.
//   pr_partial's selection: warp w owns queries w, w + 8, w + 16, w + 24 of the chunk; lane
//     j holds columns j, j + 32, ... of the tile; survivors of a ballot against the list's
//     worst are inserted one at a time by replace-worst (the worst recomputed by a warp
//     reduction over the k entries). Its shared memory is declared once in the kernel (not
//     per metric instance): 27 KB static plus PR_TQ * k * 12 bytes of lists.
//   pr_merge: PR_MERGE_THREADS (128 = PR_MAX_K) threads per query.
//   pr_d2, pr_seed, pr_gather_rows, pr_pairs, pr_items, pr_fold_items, pr_side_fold: one
//     thread per element (PR_ROW_THREADS = 256 per block), grid-stride where counts are
//     large. pr_sum_items: a block per item, threads over dims. pr_chunk_sums,
//     pr_side_chunks: a block per chunk stages it in shared memory; thread 0 sums in order.
//
// Why this shape: the CPU's order makes every key a chain of D / 8 dependent f64 additions
//   per lane and forbids the GEMM form (|x|^2 - 2 q.x); the f64 pipe (64 DFMA-class
//   operations per SM per clock, 1.7e13/s on an H200) is the limit. A 2 x 2 register block
//   issues 12 f64 operations (L2: sub, mul, add) per 2 double2 shared loads. 4096 queries
//   probing 16 of 1,024 lists of 1,000 rows x 128 dims are 2.6e10 operations: 1.5 ms at the
//   f64 peak. The coarse pass is nlist / (nprobe * list size) of that; an index build is
//   dominated by the Lloyd assignments (rows x lists x D x 3: 4e11 per iteration at 1M x
//   1,024 x 128, 24 ms at peak) and by k-means++'s one pass over the rows per centroid
//   (memory bound: 512 MB per centroid at 1M x 128).
//
// Buffers (direction, length)
//   pr_keys:        queries (r, f32 rows from row q_first), cents (r, nc*dim f64), keys (rw,
//                   nq_batch*nc f64, mode 0), nearest (rw, q_first + nq u32, mode 1)
//   pr_d2:          data (r, n*dim f32), d2 (rw, n f64)
//   pr_chunk_sums:  d2 (r, n), sums (rw, ceil(n / chunk))
//   pr_seed:        data (r), seeds (r, nl u32), cents (rw, nl*dim f64)
//   pr_sum_items:   data (r), rows (r, positions u32: used when mapped), item_begin (r,
//                   items+1 u32), part (rw, items*dim f64)
//   pr_fold_items:  part (r), cluster_items (r, clusters+1), offsets (r, clusters+1), cents (rw)
//   pr_gather_rows: src (r, f32 rows), rows (r, n u32), dst (rw, n*dim f32)
//   pr_widen:       list (r, n u32), keys (rw, n u64), vals (rw, n u32)
//   pr_pairs:       top_idx (r, pairs u32: positions into the batch's keys), list_offsets
//                   (r, nlist+1), probe_list (rw, pairs u32), sort_keys (rw, pairs u64),
//                   sort_vals (rw, pairs u32), pair_segs (rw, pairs u32)
//   pr_items:       list_pair_off (r, nlist+1), list_offsets (r), item_count (rw, nlist)
//   pr_partial:     vectors (r, list-order f32 rows), rows (r, map: used when mapped),
//                   queries (r), list_offsets, list_pair_off, pair_of (r, the sorted pair
//                   ids), item_off (r, nlist+1), slot_off (r, pairs+1), cents (r), slot_keys
//                   (rw, slots*k f64), slot_rows (rw, slots*k u32), side (rw, rows f64: fused)
//   pr_merge:       slot_keys, slot_rows, slot_off (r); out_rows (rw, nq*k u32), out_scores
//                   (rw, nq*k f64), written at q_first + q
//   pr_side_chunks: side (r), item_begin (r), part_n (rw, items u32), part_s, part_s2 (rw f64)
//   pr_side_fold:   part_n, part_s, part_s2, cluster_items (r); scored (rw u32), cohesion,
//                   inertia (rw f64)
//
// Invariants: every value finite; 1 <= k <= PR_MAX_K; rows and pair counts fit u32 (indices
//   that multiply by dim are u64); item_begin and cluster_items non-decreasing; every slot
//   is written by exactly one item before pr_merge reads it (slot_off from the same pairs).
//
// Measured cost (H200, 21cd279, before the narrow tile and the register fetch; 4096 queries,
//   1M x 128, nlist 1024, k 10): pr_partial 2.65 ms at nprobe 1 (tiles one eighth full) and
//   8.1 ms at nprobe 16 (2.6e10 f64 operations: about 20% of the f64 rate); coarse 0.33 ms,
//   select 0.31, group 0.14, merge 0.02-0.06. Predicted for the narrow tile at nprobe 1:
//   partial 0.8-1.0 ms (a quarter of the padded work); for the fetch, 1.3-1.6x on full tiles.
//   docs/performance/clusters.md has the rows.

typedef unsigned int u32;
typedef unsigned long long u64;

#define FULL_MASK 0xffffffffu
#define PR_NO_ROW 0xffffffffu
#define PR_THREADS 256u
#define PR_TQ 32u
#define PR_TC 32u
#define PR_KC 16u
#define PR_TS 34u
#define PR_NQ 8u
#define PR_NC 128u
#define PR_NCS 130u
#define PR_SEG 2048u
#define PR_MAX_K 128u
#define PR_MERGE_THREADS 128u
#define PR_ROW_THREADS 256u
#define PR_CHUNK 4096u

__device__ __forceinline__ double pr_inf() { return __longlong_as_double(0x7ff0000000000000ll); }
__device__ __forceinline__ double pr_nan() { return __longlong_as_double(0x7ff8000000000000ll); }

// (ka, ra) ranks before (kb, rb): the CPU's Candidate::better.
__device__ __forceinline__ bool pr_better(double ka, u32 ra, double kb, u32 rb) {
    return ka < kb || (ka == kb && ra < rb);
}

// One lane step of the CPU's sums: L2 acc += (a - b)^2, IP acc += a * b.
template <u32 METRIC>
__device__ __forceinline__ void pr_step(double& acc, double a, double b) {
    if (METRIC == 0u) {
        const double t = __dsub_rn(a, b);
        acc = __dadd_rn(acc, __dmul_rn(t, t));
    } else {
        acc = __dadd_rn(acc, __dmul_rn(a, b));
    }
}

__device__ __forceinline__ double pr_combine(const double (&l)[8]) {
    return __dadd_rn(__dadd_rn(__dadd_rn(l[0], l[1]), __dadd_rn(l[2], l[3])),
                     __dadd_rn(__dadd_rn(l[4], l[5]), __dadd_rn(l[6], l[7])));
}

// The key of a lane-sum set: the sum (L2) or its negation (IP, exact).
template <u32 METRIC>
__device__ __forceinline__ double pr_key(const double (&l)[8]) {
    const double s = pr_combine(l);
    return METRIC == 0u ? s : -s;
}

// sq_l2(x, c) of one f32 row against an f32 or f64 vector, in the CPU's order.
template <typename C>
__device__ double pr_sq_l2(const float* __restrict__ x, const C* __restrict__ c, u32 dim) {
    double acc[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    u32 d = 0;
    for (; d + 8u <= dim; d += 8u) {
#pragma unroll
        for (u32 l = 0; l < 8u; ++l) pr_step<0u>(acc[l], (double)x[d + l], (double)c[d + l]);
    }
#pragma unroll
    for (u32 l = 0; l < 8u; ++l) {
        if (d + l < dim) pr_step<0u>(acc[l], (double)x[d + l], (double)c[d + l]);
    }
    return pr_combine(acc);
}

// ---- the tile: PR_TQ queries x PR_TC columns, f64 lane sums in registers ---------------------

struct PrTileSmem {
    double q[PR_KC * PR_TS];  // q[dd * PR_TS + i]: dim d0 + dd of query i
    double c[PR_KC * PR_TS];  // c[dd * PR_TS + j]: dim d0 + dd of column j
};

__device__ __forceinline__ void pr_zero(double (&acc)[2][2][8]) {
#pragma unroll
    for (u32 a = 0; a < 2u; ++a)
#pragma unroll
        for (u32 b = 0; b < 2u; ++b)
#pragma unroll
            for (u32 l = 0; l < 8u; ++l) acc[a][b][l] = 0.0;
}

// The tile's loads of dims d0 .. d0 + PR_KC into registers: qrow[i] / crow[j] point at the
// rows (nullptr: padding, zeros). Thread t holds element (t / 16, t % 16) and (t / 16 + 16,
// t % 16) of each side: 16 consecutive dims of a row per half-warp. The next chunk's loads
// are in flight while the current chunk is computed (pr_tile), then stored widened.
template <typename C>
struct PrFetch {
    float q[2];
    C c[2];
};

template <typename C>
__device__ __forceinline__ void pr_fetch(PrFetch<C>& f, const float* const* qrow, const C* const* crow, u32 d0,
                                         u32 dim) {
    const u32 t = threadIdx.x;
    const u32 d = d0 + (t & 15u), i0 = t >> 4;
#pragma unroll
    for (u32 h = 0; h < 2u; ++h) {
        const float* q = qrow[i0 + 16u * h];
        const C* c = crow[i0 + 16u * h];
        f.q[h] = (q != nullptr && d < dim) ? q[d] : 0.0f;
        f.c[h] = (c != nullptr && d < dim) ? c[d] : (C)0;
    }
}

template <typename C>
__device__ __forceinline__ void pr_store(PrTileSmem& s, const PrFetch<C>& f) {
    const u32 t = threadIdx.x;
    const u32 dd = t & 15u, i0 = t >> 4;
#pragma unroll
    for (u32 h = 0; h < 2u; ++h) {
        s.q[dd * PR_TS + i0 + 16u * h] = (double)f.q[h];
        s.c[dd * PR_TS + i0 + 16u * h] = (double)f.c[h];
    }
}

// One chunk of PR_KC dims into the thread's four pairs.
template <u32 METRIC>
__device__ __forceinline__ void pr_chunk(const PrTileSmem& s, double (&acc)[2][2][8]) {
    const u32 tx = threadIdx.x & 15u, ty = threadIdx.x >> 4;
#pragma unroll
    for (u32 dd = 0; dd < PR_KC; ++dd) {
        const double2 a = *reinterpret_cast<const double2*>(s.q + dd * PR_TS + 2u * ty);
        const double2 b = *reinterpret_cast<const double2*>(s.c + dd * PR_TS + 2u * tx);
        const u32 l = dd & 7u;
        pr_step<METRIC>(acc[0][0][l], a.x, b.x);
        pr_step<METRIC>(acc[0][1][l], a.x, b.y);
        pr_step<METRIC>(acc[1][0][l], a.y, b.x);
        pr_step<METRIC>(acc[1][1][l], a.y, b.y);
    }
}

// The whole tile over `dim` dims: the four keys of this thread in keys[a][b].
template <u32 METRIC, typename C>
__device__ __forceinline__ void pr_tile(PrTileSmem& s, const float* const* qrow, const C* const* crow, u32 dim,
                                        double (&keys)[2][2]) {
    double acc[2][2][8];
    pr_zero(acc);
    PrFetch<C> f;
    pr_fetch<C>(f, qrow, crow, 0, dim);
    for (u32 d0 = 0; d0 < dim; d0 += PR_KC) {
        pr_store<C>(s, f);
        __syncthreads();
        if (d0 + PR_KC < dim) pr_fetch<C>(f, qrow, crow, d0 + PR_KC, dim);
        pr_chunk<METRIC>(s, acc);
        __syncthreads();
    }
#pragma unroll
    for (u32 a = 0; a < 2u; ++a)
#pragma unroll
        for (u32 b = 0; b < 2u; ++b) keys[a][b] = pr_key<METRIC>(acc[a][b]);
}

// ---- pr_keys: coarse keys (mode 0) and nearest centroids (mode 1) ---------------------------

template <u32 METRIC>
__device__ void pr_keys_body(const float* __restrict__ queries, const double* __restrict__ cents,
                             double* __restrict__ keys, u32* __restrict__ nearest, u32 nq, u32 q_first, u32 nc,
                             u32 dim, u32 splits, u32 split_cents, u32 mode) {
    __shared__ __align__(16) PrTileSmem s;
    __shared__ const float* qrow[PR_TQ];
    __shared__ const double* crow[PR_TC];
    const u32 qtiles = (nq + PR_TQ - 1u) / PR_TQ;
    const u32 tx = threadIdx.x & 15u, ty = threadIdx.x >> 4;
    for (u32 b = blockIdx.x; b < qtiles * splits; b += gridDim.x) {
        const u32 qt = b % qtiles, split = b / qtiles;
        const u32 c_begin = split * split_cents;
        const u32 c_end = min(nc, c_begin + split_cents);
        if (threadIdx.x < PR_TQ) {
            const u32 q = qt * PR_TQ + threadIdx.x;
            qrow[threadIdx.x] = q < nq ? queries + (u64)(q_first + q) * dim : nullptr;
        }
        double best_key[2] = {pr_inf(), pr_inf()};
        u32 best_idx[2] = {PR_NO_ROW, PR_NO_ROW};
        for (u32 c0 = c_begin; c0 < c_end; c0 += PR_TC) {
            __syncthreads();
            if (threadIdx.x < PR_TC) {
                const u32 c = c0 + threadIdx.x;
                crow[threadIdx.x] = c < c_end ? cents + (u64)c * dim : nullptr;
            }
            __syncthreads();
            double k4[2][2];
            pr_tile<METRIC, double>(s, qrow, crow, dim, k4);
#pragma unroll
            for (u32 a = 0; a < 2u; ++a) {
                const u32 q = qt * PR_TQ + 2u * ty + a;
#pragma unroll
                for (u32 bb = 0; bb < 2u; ++bb) {
                    const u32 c = c0 + 2u * tx + bb;
                    if (q >= nq || c >= c_end) continue;
                    if (mode == 0u) {
                        keys[(u64)q * nc + c] = k4[a][bb];
                    } else if (k4[a][bb] < best_key[a]) {  // ascending c: strict keeps the lower
                        best_key[a] = k4[a][bb];
                        best_idx[a] = c;
                    }
                }
            }
        }
        if (mode == 1u) {
            // The 16 threads of a query row are 16 consecutive lanes of one warp.
#pragma unroll
            for (u32 a = 0; a < 2u; ++a) {
#pragma unroll
                for (u32 m = 8u; m >= 1u; m >>= 1) {
                    const double ok = __shfl_xor_sync(FULL_MASK, best_key[a], m);
                    const u32 oi = __shfl_xor_sync(FULL_MASK, best_idx[a], m);
                    if (pr_better(ok, oi, best_key[a], best_idx[a])) {
                        best_key[a] = ok;
                        best_idx[a] = oi;
                    }
                }
                const u32 q = qt * PR_TQ + 2u * ty + a;
                if (tx == 0u && q < nq) nearest[q_first + q] = best_idx[a];
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(PR_THREADS)
    pr_keys(const float* __restrict__ queries, const double* __restrict__ cents, double* __restrict__ keys,
            u32* __restrict__ nearest, u32 nq, u32 q_first, u32 nc, u32 dim, u32 splits, u32 split_cents,
            u32 metric, u32 mode) {
    if (metric == 0u) {
        pr_keys_body<0u>(queries, cents, keys, nearest, nq, q_first, nc, dim, splits, split_cents, mode);
    } else {
        pr_keys_body<1u>(queries, cents, keys, nearest, nq, q_first, nc, dim, splits, split_cents, mode);
    }
}

// ---- k-means++ seeding ---------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(PR_ROW_THREADS)
    pr_d2(const float* __restrict__ data, double* __restrict__ d2, u32 n, u32 dim, u32 centre, u32 init) {
    const float* c = data + (u64)centre * dim;
    for (u32 r = blockIdx.x * blockDim.x + threadIdx.x; r < n; r += gridDim.x * blockDim.x) {
        const double d = pr_sq_l2<float>(data + (u64)r * dim, c, dim);
        d2[r] = init != 0u ? d : fmin(d2[r], d);
    }
}

// Stages one chunk in shared memory (coalesced), then thread 0 adds it in order.
extern "C" __global__ void __launch_bounds__(PR_ROW_THREADS)
    pr_chunk_sums(const double* __restrict__ d2, double* __restrict__ sums, u32 n) {
    __shared__ double v[PR_CHUNK];
    const u32 chunks = (n + PR_CHUNK - 1u) / PR_CHUNK;
    for (u32 c = blockIdx.x; c < chunks; c += gridDim.x) {
        const u32 begin = c * PR_CHUNK, len = min(PR_CHUNK, n - begin);
        __syncthreads();
        for (u32 i = threadIdx.x; i < len; i += blockDim.x) v[i] = d2[begin + i];
        __syncthreads();
        if (threadIdx.x == 0u) {
            double s = 0.0;
            for (u32 i = 0; i < len; ++i) s = __dadd_rn(s, v[i]);
            sums[c] = s;
        }
    }
}

extern "C" __global__ void __launch_bounds__(PR_ROW_THREADS)
    pr_seed(const float* __restrict__ data, const u32* __restrict__ seeds, double* __restrict__ cents, u32 nl,
            u32 dim) {
    const u64 total = (u64)nl * dim;
    for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (u64)gridDim.x * blockDim.x) {
        const u64 l = e / dim, d = e % dim;
        cents[e] = (double)data[(u64)seeds[l] * dim + d];
    }
}

// ---- f64 sums of items, folded per cluster --------------------------------------------------

extern "C" __global__ void __launch_bounds__(PR_ROW_THREADS)
    pr_sum_items(const float* __restrict__ data, const u32* __restrict__ rows, const u32* __restrict__ item_begin,
                 double* __restrict__ part, u32 items, u32 dim, u32 mapped) {
    for (u32 it = blockIdx.x; it < items; it += gridDim.x) {
        const u32 begin = item_begin[it], end = item_begin[it + 1];
        for (u32 d = threadIdx.x; d < dim; d += blockDim.x) {
            double s = 0.0;
            for (u32 pos = begin; pos < end; ++pos) {
                const u32 r = mapped != 0u ? rows[pos] : pos;
                s = __dadd_rn(s, (double)data[(u64)r * dim + d]);
            }
            part[(u64)it * dim + d] = s;
        }
    }
}

extern "C" __global__ void __launch_bounds__(PR_ROW_THREADS)
    pr_fold_items(const double* __restrict__ part, const u32* __restrict__ cluster_items,
                  const u32* __restrict__ offsets, double* __restrict__ cents, u32 clusters, u32 dim,
                  u32 keep_empty) {
    const u64 total = (u64)clusters * dim;
    for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (u64)gridDim.x * blockDim.x) {
        const u32 c = (u32)(e / dim), d = (u32)(e % dim);
        const u32 n = offsets[c + 1] - offsets[c];
        if (n == 0u) {
            if (keep_empty == 0u) cents[e] = pr_nan();
            continue;
        }
        double s = 0.0;
        for (u32 it = cluster_items[c]; it < cluster_items[c + 1]; ++it) s = __dadd_rn(s, part[(u64)it * dim + d]);
        cents[e] = __ddiv_rn(s, (double)n);
    }
}

extern "C" __global__ void __launch_bounds__(PR_ROW_THREADS)
    pr_gather_rows(const float* __restrict__ src, const u32* __restrict__ rows, float* __restrict__ dst, u32 n,
                   u32 dim) {
    const u64 total = (u64)n * dim;
    for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (u64)gridDim.x * blockDim.x) {
        const u64 i = e / dim, d = e % dim;
        dst[e] = src[(u64)rows[i] * dim + d];
    }
}

// The stable sort's inputs for grouping rows by list: keys[i] = list[i], vals[i] = i.
extern "C" __global__ void __launch_bounds__(PR_ROW_THREADS)
    pr_widen(const u32* __restrict__ list, u64* __restrict__ keys, u32* __restrict__ vals, u32 n) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        keys[i] = list[i];
        vals[i] = i;
    }
}

// ---- the probe search: pairs, items, partial top-k, merge -----------------------------------

__device__ __forceinline__ u32 pr_segments(u32 size) { return (size + PR_SEG - 1u) / PR_SEG; }

extern "C" __global__ void __launch_bounds__(PR_ROW_THREADS)
    pr_pairs(const u32* __restrict__ top_idx, const u32* __restrict__ list_offsets, u32* __restrict__ probe_list,
             u64* __restrict__ sort_keys, u32* __restrict__ sort_vals, u32* __restrict__ pair_segs, u32 pairs,
             u32 nprobe, u32 nlist) {
    for (u32 p = blockIdx.x * blockDim.x + threadIdx.x; p < pairs; p += gridDim.x * blockDim.x) {
        const u32 q = p / nprobe;
        const u32 l = top_idx[p] - q * nlist;  // a position of row q of the batch's keys
        probe_list[p] = l;
        sort_keys[p] = l;
        sort_vals[p] = p;
        pair_segs[p] = pr_segments(list_offsets[l + 1] - list_offsets[l]);
    }
}

extern "C" __global__ void __launch_bounds__(PR_ROW_THREADS)
    pr_items(const u32* __restrict__ list_pair_off, const u32* __restrict__ list_offsets,
             u32* __restrict__ item_count, u32 nlist) {
    for (u32 l = blockIdx.x * blockDim.x + threadIdx.x; l < nlist; l += gridDim.x * blockDim.x) {
        const u32 pairs = list_pair_off[l + 1] - list_pair_off[l];
        item_count[l] = ((pairs + PR_TQ - 1u) / PR_TQ) * pr_segments(list_offsets[l + 1] - list_offsets[l]);
    }
}

// The last l with item_off[l] <= item (item < item_off[nlist]).
__device__ __forceinline__ u32 pr_list_of(const u32* __restrict__ item_off, u32 nlist, u32 item) {
    u32 lo = 0, hi = nlist;  // item_off[lo] <= item < item_off[hi]
    while (hi - lo > 1u) {
        const u32 mid = (lo + hi) >> 1;
        if (item_off[mid] <= item) lo = mid; else hi = mid;
    }
    return lo;
}

// The worst entry of a full list (the largest by (key, row)): position, key, row.
__device__ __forceinline__ void pr_find_worst(const double* keys, const u32* rows, u32 k, u32 lane, u32& pos,
                                              double& wk, u32& wr) {
    u32 bp = PR_NO_ROW;
    double bk = -pr_inf();
    u32 br = 0;
    for (u32 i = lane; i < k; i += 32u) {
        if (bp == PR_NO_ROW || pr_better(bk, br, keys[i], rows[i])) {
            bp = i;
            bk = keys[i];
            br = rows[i];
        }
    }
#pragma unroll
    for (u32 m = 16u; m >= 1u; m >>= 1) {
        const u32 op = __shfl_xor_sync(FULL_MASK, bp, m);
        const double ok = __shfl_xor_sync(FULL_MASK, bk, m);
        const u32 orr = __shfl_xor_sync(FULL_MASK, br, m);
        if (op != PR_NO_ROW && (bp == PR_NO_ROW || pr_better(bk, br, ok, orr))) {
            bp = op;
            bk = ok;
            br = orr;
        }
    }
    pos = bp;
    wk = bk;
    wr = br;
    // Every lane's reads of the list are done before lane 0 replaces the worst entry.
    __syncwarp();
}

// ---- the narrow tile: PR_NQ queries x PR_NC columns, for lists with few probing queries ----
// Thread t: query t / 32, columns t % 32 + 32 j (j < 4): the same four pairs per thread as the
// square tile, so an item of at most PR_NQ pairs computes no padded query rows.

struct PrNarrowSmem {
    double q[PR_KC * PR_NQ];    // q[dd * PR_NQ + i]
    double c[PR_KC * PR_NCS];   // c[dd * PR_NCS + j]
};

template <typename C>
struct PrFetchNarrow {
    float q;
    C c[PR_NC / 16u];
};

template <typename C>
__device__ __forceinline__ void pr_fetch_narrow(PrFetchNarrow<C>& f, const float* const* qrow,
                                                const C* const* crow, u32 d0, u32 dim) {
    const u32 t = threadIdx.x;
    const u32 d = d0 + (t & 15u), r0 = t >> 4;
    const float* q = r0 < PR_NQ ? qrow[r0] : nullptr;
    f.q = (q != nullptr && d < dim) ? q[d] : 0.0f;
#pragma unroll
    for (u32 h = 0; h < PR_NC / 16u; ++h) {
        const C* c = crow[r0 + 16u * h];
        f.c[h] = (c != nullptr && d < dim) ? c[d] : (C)0;
    }
}

template <typename C>
__device__ __forceinline__ void pr_store_narrow(PrNarrowSmem& s, const PrFetchNarrow<C>& f) {
    const u32 t = threadIdx.x;
    const u32 dd = t & 15u, r0 = t >> 4;
    if (r0 < PR_NQ) s.q[dd * PR_NQ + r0] = (double)f.q;
#pragma unroll
    for (u32 h = 0; h < PR_NC / 16u; ++h) s.c[dd * PR_NCS + r0 + 16u * h] = (double)f.c[h];
}

template <u32 METRIC>
__device__ __forceinline__ void pr_chunk_narrow(const PrNarrowSmem& s, double (&acc)[4][8]) {
    const u32 tx = threadIdx.x & 31u, ty = threadIdx.x >> 5;
#pragma unroll
    for (u32 dd = 0; dd < PR_KC; ++dd) {
        const double a = s.q[dd * PR_NQ + ty];
        const u32 l = dd & 7u;
#pragma unroll
        for (u32 j = 0; j < 4u; ++j) pr_step<METRIC>(acc[j][l], a, s.c[dd * PR_NCS + tx + 32u * j]);
    }
}

template <u32 METRIC, typename C>
__device__ __forceinline__ void pr_tile_narrow(PrNarrowSmem& s, const float* const* qrow, const C* const* crow,
                                               u32 dim, double (&keys)[4]) {
    double acc[4][8];
#pragma unroll
    for (u32 j = 0; j < 4u; ++j)
#pragma unroll
        for (u32 l = 0; l < 8u; ++l) acc[j][l] = 0.0;
    PrFetchNarrow<C> f;
    pr_fetch_narrow<C>(f, qrow, crow, 0, dim);
    for (u32 d0 = 0; d0 < dim; d0 += PR_KC) {
        pr_store_narrow<C>(s, f);
        __syncthreads();
        if (d0 + PR_KC < dim) pr_fetch_narrow<C>(f, qrow, crow, d0 + PR_KC, dim);
        pr_chunk_narrow<METRIC>(s, acc);
        __syncthreads();
    }
#pragma unroll
    for (u32 j = 0; j < 4u; ++j) keys[j] = pr_key<METRIC>(acc[j]);
}

// ---- pr_partial -----------------------------------------------------------------------------

// The shared memory of pr_partial, declared once in the kernel (not per template instance).
struct PrPartialSmem {
    union {
        PrTileSmem square;
        PrNarrowSmem narrow;
    } t;
    double tile[PR_TQ * PR_TC];  // keys [query][column]: 32 x 32 (square) or 8 x 128 (narrow)
    const float* qrow[PR_TQ];
    const float* crow[PR_NC];
    u32 col_row[PR_NC];
    u32 q_slot[PR_TQ];
    u32 q_cnt[PR_TQ];
    u32 q_wpos[PR_TQ];
    u32 q_wrow[PR_TQ];
    double q_wkey[PR_TQ];
};

// One query's selection over the `ncols` columns of the tile row `keys` (lane j: columns j,
// j + 32, ...): a ballot against the list's worst, then replace-worst insertion one survivor
// at a time. The list state lives in registers (warp-uniform) between the calls.
__device__ __forceinline__ void pr_select(const double* keys, const u32* col_row, u32 ncols, u32 lane, double* lk,
                                          u32* lr, u32 k, u32& cnt, u32& wpos, double& wkey, u32& wrow) {
    for (u32 c0 = 0; c0 < ncols; c0 += 32u) {
        const double key = keys[c0 + lane];
        const u32 row = col_row[c0 + lane];
        u32 want = __ballot_sync(FULL_MASK, c0 + lane < ncols && (cnt < k || pr_better(key, row, wkey, wrow)));
        while (want != 0u) {
            const u32 src = __ffs(want) - 1u;
            want &= want - 1u;
            const double ck = __shfl_sync(FULL_MASK, key, src);
            const u32 cr = __shfl_sync(FULL_MASK, row, src);
            if (cnt < k) {
                if (lane == 0u) {
                    lk[cnt] = ck;
                    lr[cnt] = cr;
                }
                ++cnt;
                __syncwarp();
                if (cnt == k) pr_find_worst(lk, lr, k, lane, wpos, wkey, wrow);
            } else if (pr_better(ck, cr, wkey, wrow)) {
                if (lane == 0u) {
                    lk[wpos] = ck;
                    lr[wpos] = cr;
                }
                __syncwarp();
                pr_find_worst(lk, lr, k, lane, wpos, wkey, wrow);
            }
        }
    }
}

template <u32 METRIC>
__device__ void pr_partial_body(PrPartialSmem& sm, double* lkeys, u32* lrows, const float* __restrict__ vectors,
                                const u32* __restrict__ rows, const float* __restrict__ queries,
                                const u32* __restrict__ list_offsets, const u32* __restrict__ list_pair_off,
                                const u32* __restrict__ pair_of, const u32* __restrict__ item_off,
                                const u32* __restrict__ slot_off, const double* __restrict__ cents,
                                double* __restrict__ slot_keys, u32* __restrict__ slot_rows,
                                double* __restrict__ side, u32 nlist, u32 q_first, u32 nprobe, u32 dim, u32 k,
                                u32 mapped, u32 fused, u32 narrow_ok) {
    const u32 tx = threadIdx.x & 15u, ty = threadIdx.x >> 4;
    const u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
    const u32 items = item_off[nlist];
    for (u32 item = blockIdx.x; item < items; item += gridDim.x) {
        const u32 l = pr_list_of(item_off, nlist, item);
        const u32 lbegin = list_offsets[l], lsize = list_offsets[l + 1] - lbegin;
        const u32 segs = pr_segments(lsize);
        const u32 local = item - item_off[l];
        const u32 chunk = local / segs, seg = local % segs;
        const u32 p_begin = list_pair_off[l] + chunk * PR_TQ;
        const u32 npq = min(PR_TQ, list_pair_off[l + 1] - p_begin);
        const u32 r_begin = lbegin + seg * PR_SEG;
        const u32 r_end = min(lbegin + lsize, r_begin + PR_SEG);
        // Few probing queries: the narrow tile (8 x 128) computes no padded query rows.
        const bool narrow = narrow_ok != 0u && npq <= PR_NQ;
        const u32 tc = narrow ? PR_NC : PR_TC;
        __syncthreads();  // the previous item's lists and row table are no longer read
        if (threadIdx.x < PR_TQ) {
            const u32 i = threadIdx.x;
            if (i < npq) {
                const u32 p = pair_of[p_begin + i];
                sm.qrow[i] = queries + (u64)(q_first + p / nprobe) * dim;
                sm.q_slot[i] = slot_off[p] + seg;
            } else {
                sm.qrow[i] = nullptr;
            }
            sm.q_cnt[i] = 0;
        }
        for (u32 r0 = r_begin; r0 < r_end; r0 += tc) {
            const u32 ncols = min(tc, r_end - r0);
            __syncthreads();  // the previous tile's keys and columns are no longer read
            if (threadIdx.x < tc) {
                const u32 j = threadIdx.x;
                sm.crow[j] = j < ncols ? vectors + (u64)(r0 + j) * dim : nullptr;
                sm.col_row[j] = j < ncols ? (mapped != 0u ? rows[r0 + j] : r0 + j) : PR_NO_ROW;
            }
            __syncthreads();
            if (narrow) {
                double k4[4];
                pr_tile_narrow<METRIC, float>(sm.t.narrow, sm.qrow, sm.crow, dim, k4);
#pragma unroll
                for (u32 j = 0; j < 4u; ++j) sm.tile[(threadIdx.x >> 5) * PR_NC + lane + 32u * j] = k4[j];
            } else {
                double k4[2][2];
                pr_tile<METRIC, float>(sm.t.square, sm.qrow, sm.crow, dim, k4);
#pragma unroll
                for (u32 a = 0; a < 2u; ++a)
#pragma unroll
                    for (u32 b = 0; b < 2u; ++b) sm.tile[(2u * ty + a) * PR_TC + 2u * tx + b] = k4[a][b];
            }
            __syncthreads();
            // Selection: warp w owns queries w, w + 8, w + 16, w + 24.
            for (u32 i = warp; i < npq; i += PR_THREADS / 32u) {
                u32 cnt = sm.q_cnt[i], wpos = sm.q_wpos[i], wrow = sm.q_wrow[i];
                double wkey = sm.q_wkey[i];
                pr_select(sm.tile + i * tc, sm.col_row, ncols, lane, lkeys + (size_t)i * k, lrows + (size_t)i * k, k,
                          cnt, wpos, wkey, wrow);
                if (lane == 0u) {
                    sm.q_cnt[i] = cnt;
                    sm.q_wpos[i] = wpos;
                    sm.q_wkey[i] = wkey;
                    sm.q_wrow[i] = wrow;
                }
                __syncwarp();
            }
            // The fused side: every member of this segment, once (query chunk 0).
            if (fused != 0u && chunk == 0u && threadIdx.x < ncols) {
                const u32 j = threadIdx.x;
                side[sm.col_row[j]] = __dsqrt_rn(pr_sq_l2<double>(sm.crow[j], cents + (u64)l * dim, dim));
            }
        }
        __syncthreads();
        // Each pair's list sorted by rank into its slot, padded to k.
        for (u32 i = warp; i < npq; i += PR_THREADS / 32u) {
            const double* lk = lkeys + (size_t)i * k;
            const u32* lr = lrows + (size_t)i * k;
            const u32 cnt = sm.q_cnt[i];
            const u64 base = (u64)sm.q_slot[i] * k;
            for (u32 e = lane; e < k; e += 32u) {
                if (e < cnt) {
                    const double ek = lk[e];
                    const u32 er = lr[e];
                    u32 rank = 0;
                    for (u32 o = 0; o < cnt; ++o) rank += pr_better(lk[o], lr[o], ek, er) ? 1u : 0u;
                    slot_keys[base + rank] = ek;
                    slot_rows[base + rank] = er;
                } else {
                    slot_keys[base + e] = pr_inf();
                    slot_rows[base + e] = PR_NO_ROW;
                }
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(PR_THREADS)
    pr_partial(const float* __restrict__ vectors, const u32* __restrict__ rows, const float* __restrict__ queries,
               const u32* __restrict__ list_offsets, const u32* __restrict__ list_pair_off,
               const u32* __restrict__ pair_of, const u32* __restrict__ item_off, const u32* __restrict__ slot_off,
               const double* __restrict__ cents, double* __restrict__ slot_keys, u32* __restrict__ slot_rows,
               double* __restrict__ side, u32 nlist, u32 q_first, u32 nprobe, u32 dim, u32 k, u32 metric,
               u32 mapped, u32 fused, u32 narrow_ok) {
    __shared__ __align__(16) PrPartialSmem sm;
    extern __shared__ __align__(16) unsigned char pr_dyn[];
    double* lkeys = reinterpret_cast<double*>(pr_dyn);                     // [PR_TQ][k]
    u32* lrows = reinterpret_cast<u32*>(pr_dyn + (size_t)PR_TQ * k * 8u);  // [PR_TQ][k]
    if (metric == 0u) {
        pr_partial_body<0u>(sm, lkeys, lrows, vectors, rows, queries, list_offsets, list_pair_off, pair_of, item_off,
                            slot_off, cents, slot_keys, slot_rows, side, nlist, q_first, nprobe, dim, k, mapped, fused,
                            narrow_ok);
    } else {
        pr_partial_body<1u>(sm, lkeys, lrows, vectors, rows, queries, list_offsets, list_pair_off, pair_of, item_off,
                            slot_off, cents, slot_keys, slot_rows, side, nlist, q_first, nprobe, dim, k, mapped, fused,
                            narrow_ok);
    }
}

// Entries of the sorted list (keys, rows)[0..n) that rank before (ck, cr).
__device__ __forceinline__ u32 pr_count_before(const double* keys, const u32* rows, u32 n, double ck, u32 cr) {
    u32 lo = 0, hi = n;
    while (lo < hi) {
        const u32 mid = (lo + hi) >> 1;
        if (pr_better(keys[mid], rows[mid], ck, cr)) lo = mid + 1u; else hi = mid;
    }
    return lo;
}

extern "C" __global__ void __launch_bounds__(PR_MERGE_THREADS)
    pr_merge(const double* __restrict__ slot_keys, const u32* __restrict__ slot_rows, const u32* __restrict__ slot_off,
             u32* __restrict__ out_rows, double* __restrict__ out_scores, u32 nb, u32 q_first, u32 nprobe, u32 k,
             u32 metric) {
    __shared__ double ak[PR_MAX_K], bk[PR_MAX_K], nk[PR_MAX_K];
    __shared__ u32 ar[PR_MAX_K], br[PR_MAX_K], nr[PR_MAX_K];
    const u32 t = threadIdx.x;
    for (u32 q = blockIdx.x; q < nb; q += gridDim.x) {
        const u32 s_begin = slot_off[q * nprobe], s_end = slot_off[(q + 1u) * nprobe];
        u32 na = 0;
        for (u32 sl = s_begin; sl < s_end; ++sl) {
            const u64 base = (u64)sl * k;
            double vk = 0.0;
            u32 vr = PR_NO_ROW;
            if (t < k) {
                vk = slot_keys[base + t];
                vr = slot_rows[base + t];
                bk[t] = vk;
                br[t] = vr;
            }
            const u32 nbv = (u32)__syncthreads_count(t < k && vr != PR_NO_ROW);
            if (t < na) {
                const u32 pos = t + pr_count_before(bk, br, nbv, ak[t], ar[t]);
                if (pos < k) {
                    nk[pos] = ak[t];
                    nr[pos] = ar[t];
                }
            }
            if (t < nbv) {
                const u32 pos = t + pr_count_before(ak, ar, na, vk, vr);
                if (pos < k) {
                    nk[pos] = vk;
                    nr[pos] = vr;
                }
            }
            __syncthreads();
            na = min(k, na + nbv);
            if (t < na) {
                ak[t] = nk[t];
                ar[t] = nr[t];
            }
            __syncthreads();
        }
        if (t < k) {
            const u64 o = (u64)(q_first + q) * k + t;
            if (t < na) {
                out_rows[o] = ar[t];
                out_scores[o] = metric == 0u ? ak[t] : -ak[t];
            } else {
                out_rows[o] = PR_NO_ROW;
                out_scores[o] = metric == 0u ? pr_inf() : -pr_inf();
            }
        }
        __syncthreads();
    }
}

// ---- the fused side's reduction ---------------------------------------------------------

extern "C" __global__ void __launch_bounds__(PR_ROW_THREADS)
    pr_side_chunks(const double* __restrict__ side, const u32* __restrict__ item_begin, u32* __restrict__ part_n,
                   double* __restrict__ part_s, double* __restrict__ part_s2, u32 items) {
    __shared__ double v[PR_CHUNK];
    for (u32 it = blockIdx.x; it < items; it += gridDim.x) {
        const u32 begin = item_begin[it], len = item_begin[it + 1] - begin;
        __syncthreads();
        for (u32 i = threadIdx.x; i < len; i += blockDim.x) v[i] = side[begin + i];
        __syncthreads();
        if (threadIdx.x == 0u) {
            u32 n = 0;
            double s = 0.0, s2 = 0.0;
            for (u32 i = 0; i < len; ++i) {
                const double d = v[i];
                if (d == d) {
                    ++n;
                    s = __dadd_rn(s, d);
                    s2 = __dadd_rn(s2, __dmul_rn(d, d));
                }
            }
            part_n[it] = n;
            part_s[it] = s;
            part_s2[it] = s2;
        }
    }
}

extern "C" __global__ void __launch_bounds__(PR_ROW_THREADS)
    pr_side_fold(const u32* __restrict__ part_n, const double* __restrict__ part_s, const double* __restrict__ part_s2,
                 const u32* __restrict__ cluster_items, u32* __restrict__ scored, double* __restrict__ cohesion,
                 double* __restrict__ inertia, u32 clusters) {
    for (u32 c = blockIdx.x * blockDim.x + threadIdx.x; c < clusters; c += gridDim.x * blockDim.x) {
        u32 n = 0;
        double s = 0.0, s2 = 0.0;
        for (u32 it = cluster_items[c]; it < cluster_items[c + 1]; ++it) {
            n += part_n[it];
            s = __dadd_rn(s, part_s[it]);
            s2 = __dadd_rn(s2, part_s2[it]);
        }
        scored[c] = n;
        cohesion[c] = n == 0u ? pr_nan() : __ddiv_rn(s, (double)n);
        inertia[c] = n == 0u ? pr_nan() : s2;
    }
}
