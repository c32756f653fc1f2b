// kernels/clusters/substructure.cu — the sub-structure family on the GPU
// (crates/orrery-clusters/src/gpu/substructure.rs; host reference crate::substructure), the
// CUDA twin of shaders/clusters/substructure.wgsl. Module "clusters/substructure":
// common.cuh, pairs.cuh, this file.
//
// What it computes: orrery's two-means split of every cluster (seeds at the first and the
//   last member, exactly three Lloyd iterations, ties to side A, a side without members keeps
//   its centroid, a final assignment), then split_inertia, inertia_ratio, split_balance,
//   split_separation and the silhouette over the final labels (docs/clusters/statistics.md,
//   section 2), for all clusters in one launch per kernel. Launches per run: tm_seed, three
//   times (tm_assign, tm_chunk_sums, tm_update), tm_assign, tm_finish, sil_rows, sil_merge.
//     tm_seed        cluster x slab blocks, a thread per dimension: the seeds     -> means
//     tm_assign      a block per chunk of TM_CHUNK_ROWS (128) rows, a warp per row: both
//                    squared distances (lane-strided f32 FMAs, warp tree), label = B iff
//                    d_B < d_A                                      -> labels, sq_distance
//     tm_chunk_sums  chunk x slab blocks, a thread per dimension: per chunk and side the
//                    compensated sums of its members, and the side counts -> part, part_count
//     tm_update      cluster x slab blocks: the chunk partials in chunk order; a side's mean
//                    is its sum over its count, or stays                     -> means
//     tm_finish      a block per cluster: sizes, the compensated sum of the final squared
//                    distances, |c_A - c_B|, and the ratios             -> sizes, stats
//     sil_rows       a block per row tile of 64 members (the CPU's row-tile pass): the block
//                    walks every column tile of its cluster in order with pt_tile; per row the
//                    distance sums to each side are reduced over the 16 threads that share the
//                    row (shuffles in a fixed order) and added to compensated running sums
//                    held by one thread, so no atomics and no quadratic storage; then s_i and
//                    the tile's sum of s_i in row order                       -> part_sil
//     sil_merge      a block per cluster: the row tiles' sums in order (thread runs, fixed
//                    tree), silhouette = sum / n (0 when a side is empty)     -> stats
//
// Arithmetic: f32 (the WGSL twin has no f64), compensated sums for the means, the split
//   inertia and the silhouette's row sums. A label is a comparison of two f32 squared
//   distances: a member whose two f64 distances differ by less than about dim * 2^-24 of
//   their size can take the other side than on the CPU (and then the three iterations move
//   apart). The tests compare labels exactly where the CPU's margins are clear, statistics
//   within a relative 1e-4 (tests/clusters/gpu_families.rs).
//
// Launch shape: see each kernel; slabs = ceil(dim / TM_THREADS); every kernel returns for
//   block ids past its items, so grids may be rounded up.
//
// Buffers (direction, length, layout); offsets are CSR (clusters + 1 u32)
//   vectors (r, rows * dim f32), chunk_cluster / chunk_start (r, chunks u32: the cluster and
//   first row of each 128-row chunk), chunk_first (r, clusters + 1: a cluster's chunks),
//   means (rw, clusters * 2 * dim f32: side A then side B; NaN for an empty cluster),
//   labels (rw, rows u32: 0 = A, 1 = B), sq_distance (rw, rows f32), part (rw, chunks * 2 *
//   dim f32), part_count (rw, chunks * 2 u32), cstats (r, the centroid family's statistics,
//   CL_FIELDS * clusters f32: the inertia), sizes (rw, clusters * 2 u32), stats (rw,
//   SUB_FIELDS * clusters f32, field f of cluster c at f * clusters + c), tile_cluster /
//   tile_start (r, tiles u32: each 64-row tile's cluster and first row), tile_first (r,
//   clusters + 1), part_sil (rw, tiles f32).
//
// Invariants: offsets valid CSR; the per-chunk kernels are launched only when chunks >= 1
//   (tiles >= 1); row * dim indexed in u64.
//
// Cost model: two-means is 4 assignment and 3 summation passes over the vectors (each
//   reads rows * dim f32 once: 7 x 0.1 ms for 100K x 1024 at 4 TB/s) plus small merges. The
//   silhouette is n_c^2 * dim FMA-and-subtract pairs per cluster (it walks the full square,
//   as the CPU): each tile pair is 64 x 64 x dim, staged through shared memory 32 dims at a
//   time; a thread's 16 FMAs per 8 shared loads keep it near the shared-memory bound (about
//   a third of the H200's FP32 peak, ~20 TFLOP/s: 5e14 terms of a 1M-member cluster at
//   1,024 dims in about 50 s; 100 clusters of 1,000 in about 10 ms). Measured: not yet.

#define SUB_F_SPLIT_INERTIA 0u
#define SUB_F_INERTIA_RATIO 1u
#define SUB_F_SILHOUETTE 2u
#define SUB_F_BALANCE 3u
#define SUB_F_SEPARATION 4u
#define SUB_FIELDS 5u

__device__ __forceinline__ u32 tm_slabs(u32 dim) { return (dim + TM_THREADS - 1u) / TM_THREADS; }

__device__ __forceinline__ float tm_warp_sum(float v) {
#pragma unroll
    for (u32 m = 16u; m >= 1u; m >>= 1) v += __shfl_xor_sync(FULL_MASK, v, m);
    return v;
}

extern "C" __global__ void __launch_bounds__(TM_THREADS) tm_seed(
    const float* __restrict__ vectors, const u32* __restrict__ offsets, float* __restrict__ means, u32 dim,
    u32 clusters) {
    const u32 slabs = tm_slabs(dim);
    const u32 c = blockIdx.x / slabs;
    const u32 d = (blockIdx.x % slabs) * TM_THREADS + threadIdx.x;
    if (c >= clusters || d >= dim) return;
    const u32 s = offsets[c], e = offsets[c + 1u];
    const u64 at = (u64)c * 2u * dim + d;
    means[at] = s == e ? cl_nan() : vectors[(u64)s * dim + d];
    means[at + dim] = s == e ? cl_nan() : vectors[(u64)(e - 1u) * dim + d];
}

extern "C" __global__ void __launch_bounds__(TM_THREADS) tm_assign(
    const float* __restrict__ vectors, const u32* __restrict__ offsets, const u32* __restrict__ chunk_cluster,
    const u32* __restrict__ chunk_start, const float* __restrict__ means, u32* __restrict__ labels,
    float* __restrict__ sq_distance, u32 dim, u32 chunks) {
    const u32 g = blockIdx.x;
    if (g >= chunks) return;
    const u32 c = chunk_cluster[g];
    const u32 start = chunk_start[g];
    const u32 end = min(start + TM_CHUNK_ROWS, offsets[c + 1u]);
    const u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
    const float* ca = means + (u64)c * 2u * dim;
    const float* cb = ca + dim;
    for (u32 i = start + warp; i < end; i += TM_THREADS / 32u) {
        const float* x = vectors + (u64)i * dim;
        float da = 0.0f, db = 0.0f;
        for (u32 d = lane; d < dim; d += 32u) {
            const float v = __ldg(x + d);
            const float u = v - __ldg(ca + d), w = v - __ldg(cb + d);
            da = fmaf(u, u, da);
            db = fmaf(w, w, db);
        }
        da = tm_warp_sum(da);
        db = tm_warp_sum(db);
        if (lane == 0u) {
            const bool b = db < da;
            labels[i] = b ? 1u : 0u;
            sq_distance[i] = b ? db : da;
        }
    }
}

extern "C" __global__ void __launch_bounds__(TM_THREADS) tm_chunk_sums(
    const float* __restrict__ vectors, const u32* __restrict__ offsets, const u32* __restrict__ chunk_cluster,
    const u32* __restrict__ chunk_start, const u32* __restrict__ labels, float* __restrict__ part,
    u32* __restrict__ part_count, u32 dim, u32 chunks) {
    const u32 slabs = tm_slabs(dim);
    const u32 g = blockIdx.x / slabs;
    const u32 d = (blockIdx.x % slabs) * TM_THREADS + threadIdx.x;
    if (g >= chunks || d >= dim) return;
    const u32 c = chunk_cluster[g];
    const u32 start = chunk_start[g];
    const u32 end = min(start + TM_CHUNK_ROWS, offsets[c + 1u]);
    ClSum sa = cl_sum0(), sb = cl_sum0();
    u32 nb = 0u;
    for (u32 i = start; i < end; ++i) {
        const u32 side = __ldg(labels + i);
        const float v = __ldg(vectors + (u64)i * dim + d);
        nb += side;
        // Each side adds 0 for the other side's members: the same sums, no divergence.
        cl_add(sa, side == 0u ? v : 0.0f);
        cl_add(sb, side == 0u ? 0.0f : v);
    }
    part[((u64)g * 2u) * dim + d] = cl_value(sa);
    part[((u64)g * 2u + 1u) * dim + d] = cl_value(sb);
    if (d == 0u) {
        part_count[2u * g] = (end - start) - nb;
        part_count[2u * g + 1u] = nb;
    }
}

extern "C" __global__ void __launch_bounds__(TM_THREADS) tm_update(
    const float* __restrict__ part, const u32* __restrict__ part_count, const u32* __restrict__ chunk_first,
    float* __restrict__ means, u32 dim, u32 clusters) {
    const u32 slabs = tm_slabs(dim);
    const u32 c = blockIdx.x / slabs;
    const u32 d = (blockIdx.x % slabs) * TM_THREADS + threadIdx.x;
    if (c >= clusters || d >= dim) return;
    ClSum sa = cl_sum0(), sb = cl_sum0();
    u32 na = 0u, nb = 0u;
    for (u32 g = chunk_first[c]; g < chunk_first[c + 1u]; ++g) {
        cl_add(sa, __ldg(part + ((u64)g * 2u) * dim + d));
        cl_add(sb, __ldg(part + ((u64)g * 2u + 1u) * dim + d));
        na += __ldg(part_count + 2u * g);
        nb += __ldg(part_count + 2u * g + 1u);
    }
    if (na > 0u) means[((u64)c * 2u) * dim + d] = cl_value(sa) / (float)na;
    if (nb > 0u) means[((u64)c * 2u + 1u) * dim + d] = cl_value(sb) / (float)nb;
}

extern "C" __global__ void __launch_bounds__(TM_THREADS) tm_finish(
    const float* __restrict__ means, const u32* __restrict__ labels, const float* __restrict__ sq_distance,
    const u32* __restrict__ offsets, const float* __restrict__ cstats, u32* __restrict__ sizes,
    float* __restrict__ stats, u32 dim, u32 clusters) {
    __shared__ float sh_s[TM_THREADS], sh_d[TM_THREADS];
    __shared__ u32 sh_b[TM_THREADS];
    const u32 c = blockIdx.x;
    if (c >= clusters) return;
    const u32 t = threadIdx.x;
    const u32 s0 = offsets[c], n = offsets[c + 1u] - s0;
    ClSum sq = cl_sum0();
    u32 nb = 0u;
    for (u32 i = s0 + t; i < s0 + n; i += TM_THREADS) {
        cl_add(sq, sq_distance[i]);
        nb += labels[i];
    }
    float sep = 0.0f;
    const float* ca = means + (u64)c * 2u * dim;
    if (n > 0u) {
        for (u32 d = t; d < dim; d += TM_THREADS) {
            const float u = ca[d] - ca[d + dim];
            sep = fmaf(u, u, sep);
        }
    }
    sh_s[t] = cl_value(sq);
    sh_d[t] = sep;
    sh_b[t] = nb;
    __syncthreads();
    for (u32 h = TM_THREADS / 2u; h > 0u; h >>= 1) {
        if (t < h) {
            sh_s[t] += sh_s[t + h];
            sh_d[t] += sh_d[t + h];
            sh_b[t] += sh_b[t + h];
        }
        __syncthreads();
    }
    if (t != 0u) return;
    sizes[2u * c] = n - sh_b[0];
    sizes[2u * c + 1u] = sh_b[0];
    float* f = stats + c;
    if (n == 0u) {
        for (u32 k = 0; k < SUB_FIELDS; ++k) f[k * clusters] = cl_nan();
        return;
    }
    const float split = sh_s[0];
    const float inertia = cstats[CL_F_INERTIA * clusters + c];
    f[SUB_F_SPLIT_INERTIA * clusters] = split;
    f[SUB_F_INERTIA_RATIO * clusters] = inertia > 0.0f ? fminf(fmaxf(split / inertia, 0.0f), 1.0f) : 1.0f;
    f[SUB_F_BALANCE * clusters] = (float)min(n - sh_b[0], sh_b[0]) / (float)n;
    f[SUB_F_SEPARATION * clusters] = sqrtf(sh_d[0]);
}

extern "C" __global__ void __launch_bounds__(PT_THREADS) sil_rows(
    const float* __restrict__ vectors, const u32* __restrict__ offsets, const u32* __restrict__ tile_cluster,
    const u32* __restrict__ tile_start, const u32* __restrict__ labels, const u32* __restrict__ sizes,
    float* __restrict__ part_sil, u32 dim, u32 tiles) {
    __shared__ PtShared sh;
    __shared__ u32 sh_lab[PT_TILE];
    __shared__ float sh_row[PT_TILE];
    const u32 g = blockIdx.x;
    if (g >= tiles) return;
    const u32 c = tile_cluster[g];
    const u32 r0 = tile_start[g];
    const u32 first = offsets[c], end = offsets[c + 1u];
    const u32 nr = min(PT_TILE, end - r0);
    const u32 na = sizes[2u * c], nb = sizes[2u * c + 1u];
    const u32 t = threadIdx.x, ty = t >> 4, tx = t & 15u;
    if (na == 0u || nb == 0u) {
        if (t == 0u) part_sil[g] = 0.0f;
        return;
    }
    // Thread tx == 0 of each row group keeps the running sums of its 4 rows.
    ClSum run[4][2];
#pragma unroll
    for (u32 a = 0; a < 4u; ++a) {
        run[a][0] = cl_sum0();
        run[a][1] = cl_sum0();
    }
    for (u32 c0 = first; c0 < end; c0 += PT_TILE) {
        const u32 nc = min(PT_TILE, end - c0);
        __syncthreads();  // the previous tile's labels are no longer read
        if (t < PT_TILE) sh_lab[t] = t < nc ? labels[c0 + t] : 0u;
        float acc[4][4];
        pt_tile(vectors, dim, r0, nr, c0, nc, sh, acc);  // synchronises before it reads sh_lab
#pragma unroll
        for (u32 a = 0; a < 4u; ++a) {
            const u32 i = ty + 16u * a;
            float s0 = 0.0f, s1 = 0.0f;
#pragma unroll
            for (u32 b = 0; b < 4u; ++b) {
                const u32 j = tx + 16u * b;
                if (i < nr && j < nc && r0 + i != c0 + j) {
                    const float dist = sqrtf(acc[a][b]);
                    if (sh_lab[j] == 0u) s0 += dist; else s1 += dist;
                }
            }
#pragma unroll
            for (u32 m = 8u; m >= 1u; m >>= 1) {
                s0 += __shfl_xor_sync(FULL_MASK, s0, m);
                s1 += __shfl_xor_sync(FULL_MASK, s1, m);
            }
            if (tx == 0u) {
                cl_add(run[a][0], s0);
                cl_add(run[a][1], s1);
            }
        }
    }
    if (tx == 0u) {
#pragma unroll
        for (u32 a = 0; a < 4u; ++a) {
            const u32 i = ty + 16u * a;
            float s = 0.0f;
            if (i < nr) {
                const bool own_a = labels[r0 + i] == 0u;
                const float n_own = (float)(own_a ? na : nb), n_other = (float)(own_a ? nb : na);
                const float sum_a = cl_value(run[a][0]), sum_b = cl_value(run[a][1]);
                if (n_own >= 2.0f) {
                    const float ai = (own_a ? sum_a : sum_b) / (n_own - 1.0f);
                    const float bi = (own_a ? sum_b : sum_a) / n_other;
                    const float mx = fmaxf(ai, bi);
                    if (mx > 0.0f) s = (bi - ai) / mx;
                }
            }
            sh_row[i] = s;
        }
    }
    __syncthreads();
    if (t == 0u) {
        ClSum s = cl_sum0();
        for (u32 i = 0; i < nr; ++i) cl_add(s, sh_row[i]);
        part_sil[g] = cl_value(s);
    }
}

extern "C" __global__ void __launch_bounds__(PT_MERGE_THREADS) sil_merge(
    const float* __restrict__ part_sil, const u32* __restrict__ offsets, const u32* __restrict__ tile_first,
    const u32* __restrict__ sizes, float* __restrict__ stats, u32 clusters) {
    __shared__ float sh[PT_MERGE_THREADS];
    const u32 c = blockIdx.x;
    if (c >= clusters) return;
    const u32 t = threadIdx.x;
    const u32 g0 = tile_first[c], g1 = tile_first[c + 1u];
    const u32 per = (g1 - g0 + PT_MERGE_THREADS - 1u) / PT_MERGE_THREADS;
    const u32 a = g0 + t * per, b = min(g1, a + per);
    ClSum s = cl_sum0();
    for (u32 g = a; g < b; ++g) cl_add(s, part_sil[g]);
    sh[t] = cl_value(s);
    __syncthreads();
    for (u32 h = PT_MERGE_THREADS / 2u; h > 0u; h >>= 1) {
        if (t < h) sh[t] += sh[t + h];
        __syncthreads();
    }
    if (t != 0u) return;
    const u32 n = offsets[c + 1u] - offsets[c];
    const bool split = sizes[2u * c] > 0u && sizes[2u * c + 1u] > 0u;
    stats[SUB_F_SILHOUETTE * clusters + c] = n == 0u ? cl_nan() : (split ? sh[0] / (float)n : 0.0f);
}
