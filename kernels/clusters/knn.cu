// kernels/clusters/knn.cu — exact k-NN on CUDA (crates/orrery-clusters/src/gpu/knn.rs; host
// reference crate::search::exact). Module "clusters/knn", self-contained; CUDA only (no WGSL
// twin: the rescoring needs f64, which WGSL lacks; xtask's CUDA_ONLY_MODULES says so).
//
// What it computes: for every query q the k rows of the database with the smallest key
//   (squared L2 distance, or the negated inner product), ties to the lower row, with keys and
//   scores bit-identical to the CPU reference (crate::dist: f64, dimension d in lane d % 8,
//   lanes combined ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)), correctly rounded operations, no FMA).
//   Rows past the candidates are NO_ROW with +inf (L2) / -inf (IP).
//
// How, without ever holding a query x database matrix:
//   knn_norms      a warp per database row: |x|^2 in f64, rounded to f32 (once per database).
//   knn_screen     (query tile of 128) x (database split) blocks: a register-blocked f32 GEMM
//                  of the query tile against 128-row database tiles (k-chunks of 16 dims
//                  through double-buffered shared memory, an 8 x 8 block of scores per
//                  thread), approximate keys ks = |x|^2 - 2 q.x (L2; |q|^2 is the same for
//                  every row of a query) or -q.x (IP), and per query a top-KP list (KP = k +
//                  16 rounded to 8) kept in shared memory by replace-worst insertion: the 16
//                  lanes that hold a query's 128 scores of a tile filter them against the
//                  list's worst key and insert the survivors one at a time, recomputing the
//                  worst with a 16-lane reduction. Every query's scores of a tile lie in one
//                  warp, so the lists need no block barrier. Each list is written sorted by
//                  (ks, row).
//   knn_refine     a block per query: the splits' lists sorted together (bitonic, in shared
//                  memory); T = the k-th smallest ks; every candidate with ks <= T + 2E is
//                  rescored exactly (f64, the CPU's order) and the k best by (exact key,
//                  row) are written. E bounds |ks - exact key| (below); the band then holds
//                  every row of the true top k (if x is in it, exact(x) <= exact_k <= T + E,
//                  so ks(x) <= T + 2E). A split list that is full and whose last ks is still
//                  <= T + 2E may have dropped such a row: the query is flagged, and the host
//                  recomputes it exactly (knn_exact_keys + the executor's segmented top-k +
//                  knn_fallback_scatter). Massive ties (duplicate rows) flag; continuous data
//                  almost never does (more than 16 rows of one split within 2E of T).
//
//   The threshold path (the host's Strategy::Threshold, the default; the lists above are its
//   baseline and its sample search):
//   knn_gather     every stride-th row and its norm into a sample (once per database and
//                  stride; stride = 4096 / (8 k), so a sample's k-th neighbour stands near
//                  rank k * stride <= 512 of the whole database).
//   (screen + refine of the sample: its exact top k; the k-th key T_s is an exact key of k
//                  distinct rows, so the true k-th key is <= T_s, flagged or not.)
//   knn_thresholds thr = T_s - |q|^2 + E (L2) / T_s + E (IP), rounded up to f32: every row
//                  of the true top k has ks <= thr.
//   knn_filter     the same GEMM as the screen (knn_gemm), but its selection is a compare
//                  of each score with the thread's 8 thresholds in registers and, for the
//                  few rows inside (about k * stride + the band), an atomic append to the
//                  query's candidate list (cap entries; the count goes on past cap).
//   knn_rescore    a block per query: count > cap flags the query (massive ties); else
//                  the candidates' exact keys, a bitonic sort by (key, row) in shared memory
//                  (12 pow2(count) B <= 48 KB), the first k written.
//   Order of appends is not deterministic; the result is (the sort is by a total order).
//
// The bound E: ks is D sequential FMAs (|error| <= gamma_D sum |q_d x_d| <= gamma_D |q||x|),
//   |x|^2 rounded once, one final FMA: |ks - (|x|^2 - 2 q.x)| <= (D + 3) u (|q| + |x|)^2 with
//   u = 2^-24. The CPU key's own f64 rounding is 2^-29 times smaller. knn_refine uses twice
//   that with R = max |x| (passed by the host, rounded up), plus 1e-30 for underflow:
//   E = 2 (D + 4) 2^-24 (|q| + R)^2 (L2), 2 (D + 4) 2^-24 |q| R (+ 1e-30) (IP).
//
// Launch shape
//   knn_norms: blocks of 256 (8 rows each). knn_screen: KNN_THREADS (256) threads as 16 x 16
//   (tx: rows, ty: queries); a thread owns queries ty*4 + i and 64 + ty*4 + i and rows
//   tx*4 + j and 64 + tx*4 + j (i, j < 4), so its shared-memory fragment loads are two
//   conflict-free float4 each for A and B; warp w holds queries 8w..8w+7 (lanes 0-15) and
//   64+8w..64+8w+7 (lanes 16-31). Grid: qtiles * splits blocks, block b = split * qtiles +
//   query tile, so the blocks resident at one time share database tiles in L2. Dynamic
//   shared memory (all of it): 2 stages x (A, B) x 16 x 132 f32 (33,792 B), then 128 * KP
//   keys and rows, then thr, worst and count per query: 35,328 + 1,024 KP bytes (68 KB at
//   k = 10, 183 KB at k = 128; the host checks the device's opt-in limit). knn_refine: 256
//   threads, sort_len (a power of two >= splits * KP, at most 2048) entries: 20 sort_len B.
//   Loads: float4 when D % 4 == 0 (the host binds whole buffers: rows 16-byte aligned), else
//   scalars; dimensions past D and rows past the split are zero and never offered.
//
// Why this shape: 4096 queries x 1M rows x 128 dims is 5.4e11 FMAs; the H200's FP32 rate is
//   132 SMs x 128 lanes x ~1.9 GHz = 3.2e13 FMA/s, so 17 ms at full rate. An 8 x 8 register
//   block issues 64 FFMA per 4 LDS.128 (A is broadcast over the 16 lanes of a ty, B covers
//   512 contiguous bytes), one barrier per 16-dim chunk (1,024 FFMA per thread). 256 threads
//   and <= 128 registers give 2 blocks (16 warps) per SM at k = 10. The selection costs per
//   tile and thread 64 compares against 8 thresholds (1% of the 8,192 FFMA); insertions are
//   about KP (1 + ln(rows per split / KP)) per query and split for rows in random order
//   (~50 instructions each, half-warp wide). Adversarial orders (rows sorted by decreasing
//   distance to a query) make every row an insertion: correct, several times slower.
//   Measured (H200, 6ec9310): the lists path 107 ms (L2) for 4096 x 1M x 128, k = 10:
//   insertion dominates (3.6e10 instructions for 1.6e10 warp FFMAs, IPC 0.35). The filter
//   drops the lists: per tile and thread 64 compares against register thresholds and ~0.04
//   appends, so it runs at the GEMM's rate. Predicted for the threshold path at that shape:
//   filter 20-25 ms (17 ms at the FP32 peak), sample search 1/51 of the lists path (~2 ms),
//   rescoring ~600 candidates per query (~1 ms).
//
// Buffers (direction, length, layout)
//   knn_norms:   db (r, n*dim f32), norms (rw, n f32)
//   knn_screen:  db, queries (r, nq*dim f32, from row q_first), norms (r, n), part_key (rw, f32)
//                and part_row (rw, u32): nq_batch * splits * KP, list (q, s) at (q*splits+s)*KP
//   knn_refine:  db, queries, part_key, part_row (r); out_rows (rw, nq_total*k u32),
//                out_scores (rw, nq_total*k f64), flags (rw, nq_total u32), written at q_first+q
//   knn_exact_keys: db, queries, fq (r, batch u32: query indices), keys (rw, batch*n f64)
//   knn_fallback_scatter: fq, idx (r, batch*k u32 positions into keys), top (r, batch*k f64),
//                out_rows, out_scores (rw)
//   knn_gather:  db, norms (r); sample (rw, rows*dim f32), sample_norms (rw, rows f32)
//   knn_thresholds: queries (r), sample_scores (r, nq_total*k f64), thr (rw, batch f32)
//   knn_filter:  db, queries, norms, thr (r); count (rw, batch u32, zeroed by the host),
//                cand (rw, batch*cap u32: list of query q at q*cap)
//   knn_rescore: db, queries, count, cand (r); out_rows, out_scores, flags (rw, at q_first+q)
//
// Invariants: n >= 1, 1 <= k <= 128, KP <= KNN_MAX_KP, splits * KP <= sort_len <= 2048, all
//   values finite, R^2 finite (the host uses the exact path otherwise); indices of rows and
//   dims in u64 where they multiply.
//

typedef unsigned int u32;
typedef unsigned long long u64;

#define FULL_MASK 0xffffffffu
#define KNN_NO_ROW 0xffffffffu
#define KNN_THREADS 256u
#define KNN_TILE 128u
#define KNN_KC 16u
#define KNN_AS 132u
#define KNN_MAX_KP 144u
#define KNN_MARGIN 16u
#define KNN_REFINE_THREADS 256u
#define KNN_MAX_SORT 2048u
#define KNN_NORM_THREADS 256u
#define KNN_EXACT_THREADS 256u

__device__ __forceinline__ float knn_inf() { return __int_as_float(0x7f800000); }

// (ka, ra) ranks before (kb, rb).
__device__ __forceinline__ bool knn_better(float ka, u32 ra, float kb, u32 rb) {
    return ka < kb || (ka == kb && ra < rb);
}

__device__ __forceinline__ bool knn_better64(double ka, u32 ra, double kb, u32 rb) {
    return ka < kb || (ka == kb && ra < rb);
}

// The CPU's key (crate::dist::sq_l2 or -dot, f64, lane d % 8, no contraction).
__device__ double knn_exact_key(const float* __restrict__ q, const float* __restrict__ x, u32 dim, u32 metric) {
    double acc[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    u32 d = 0;
    if (metric == 0u) {
        for (; d + 8u <= dim; d += 8u) {
#pragma unroll
            for (u32 l = 0; l < 8u; ++l) {
                const double t = __dsub_rn((double)__ldg(q + d + l), (double)__ldg(x + d + l));
                acc[l] = __dadd_rn(acc[l], __dmul_rn(t, t));
            }
        }
#pragma unroll
        for (u32 l = 0; l < 8u; ++l) {
            if (d + l < dim) {
                const double t = __dsub_rn((double)__ldg(q + d + l), (double)__ldg(x + d + l));
                acc[l] = __dadd_rn(acc[l], __dmul_rn(t, t));
            }
        }
    } else {
        for (; d + 8u <= dim; d += 8u) {
#pragma unroll
            for (u32 l = 0; l < 8u; ++l) {
                acc[l] = __dadd_rn(acc[l], __dmul_rn((double)__ldg(q + d + l), (double)__ldg(x + d + l)));
            }
        }
#pragma unroll
        for (u32 l = 0; l < 8u; ++l) {
            if (d + l < dim) acc[l] = __dadd_rn(acc[l], __dmul_rn((double)__ldg(q + d + l), (double)__ldg(x + d + l)));
        }
    }
    const double s = __dadd_rn(__dadd_rn(__dadd_rn(acc[0], acc[1]), __dadd_rn(acc[2], acc[3])),
                               __dadd_rn(__dadd_rn(acc[4], acc[5]), __dadd_rn(acc[6], acc[7])));
    return metric == 0u ? s : -s;
}

// ---- knn_norms ------------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(KNN_NORM_THREADS) knn_norms(
    const float* __restrict__ db, float* __restrict__ norms, u32 n, u32 dim) {
    const u32 row = blockIdx.x * (KNN_NORM_THREADS / 32u) + (threadIdx.x >> 5);
    const u32 lane = threadIdx.x & 31u;
    if (row >= n) return;
    const float* x = db + (u64)row * dim;
    double s = 0.0;
    for (u32 d = lane; d < dim; d += 32u) {
        const double v = (double)__ldg(x + d);
        s = fma(v, v, s);
    }
#pragma unroll
    for (u32 m = 16u; m >= 1u; m >>= 1) s += __shfl_xor_sync(FULL_MASK, s, m);
    if (lane == 0u) norms[row] = __double2float_rn(s);
}

// ---- knn_screen -----------------------------------------------------------------------------

// Row (within the tile) of column c of a thread with column index tx.
__device__ __forceinline__ u32 knn_col(u32 tx, u32 c) { return c < 4u ? tx * 4u + c : 64u + tx * 4u + (c - 4u); }

// Loads step `st` (tile st / nchunks, chunk st % nchunks) of A (queries) and B (rows) into
// registers: 2 float4 per thread each (D % 4 == 0) or 8 scalars each.
__device__ __forceinline__ void knn_load(float (&pf)[16], const float* __restrict__ db,
                                         const float* __restrict__ queries, u32 dim, u32 q0, u32 nq, u32 row0,
                                         u32 r_end, u32 k0, bool vec) {
    const u32 tid = threadIdx.x;
    if (vec) {
#pragma unroll
        for (u32 m = 0; m < 2u; ++m) {
            const u32 item = tid + m * KNN_THREADS;
            const u32 r = item >> 2, d = k0 + (item & 3u) * 4u;
            float4 a = make_float4(0.f, 0.f, 0.f, 0.f), b = a;
            if (q0 + r < nq && d < dim) a = __ldg(reinterpret_cast<const float4*>(queries + (u64)(q0 + r) * dim + d));
            if (row0 + r < r_end && d < dim) b = __ldg(reinterpret_cast<const float4*>(db + (u64)(row0 + r) * dim + d));
            pf[4u * m + 0u] = a.x; pf[4u * m + 1u] = a.y; pf[4u * m + 2u] = a.z; pf[4u * m + 3u] = a.w;
            pf[8u + 4u * m + 0u] = b.x; pf[8u + 4u * m + 1u] = b.y; pf[8u + 4u * m + 2u] = b.z; pf[8u + 4u * m + 3u] = b.w;
        }
    } else {
#pragma unroll
        for (u32 m = 0; m < 8u; ++m) {
            const u32 item = tid + m * KNN_THREADS;
            const u32 r = item >> 4, d = k0 + (item & 15u);
            pf[m] = (q0 + r < nq && d < dim) ? __ldg(queries + (u64)(q0 + r) * dim + d) : 0.0f;
            pf[8u + m] = (row0 + r < r_end && d < dim) ? __ldg(db + (u64)(row0 + r) * dim + d) : 0.0f;
        }
    }
}

// Stores the registers of knn_load transposed: As[kk][r], Bs[kk][r].
__device__ __forceinline__ void knn_store(const float (&pf)[16], float* As, float* Bs, bool vec) {
    const u32 tid = threadIdx.x;
    if (vec) {
#pragma unroll
        for (u32 m = 0; m < 2u; ++m) {
            const u32 item = tid + m * KNN_THREADS;
            const u32 r = item >> 2, kk = (item & 3u) * 4u;
#pragma unroll
            for (u32 v = 0; v < 4u; ++v) {
                As[(kk + v) * KNN_AS + r] = pf[4u * m + v];
                Bs[(kk + v) * KNN_AS + r] = pf[8u + 4u * m + v];
            }
        }
    } else {
#pragma unroll
        for (u32 m = 0; m < 8u; ++m) {
            const u32 item = tid + m * KNN_THREADS;
            const u32 r = item >> 4, kk = item & 15u;
            As[kk * KNN_AS + r] = pf[m];
            Bs[kk * KNN_AS + r] = pf[8u + m];
        }
    }
}

// Offers candidate (ck, cr) to list lq (all 32 lanes call this; `active` says whether the
// caller's half-warp has a candidate). The half-warp's 16 lanes share the list.
__device__ __forceinline__ void knn_insert(bool active, float ck, u32 cr, u32 lq, u32 kp, float* lkey, u32* lrow,
                                           float* lthr, u32* lworst, u32* lcount, u32 hl) {
    const u32 cnt = lcount[lq];
    bool wrote = false, need = false;
    u32 slot = 0;
    if (active) {
        if (cnt < kp) {
            slot = cnt;
            wrote = true;
            need = cnt + 1u == kp;
        } else {
            const u32 w = lworst[lq];
            if (knn_better(ck, cr, lkey[lq * kp + w], lrow[lq * kp + w])) {
                slot = w;
                wrote = true;
                need = true;
            }
        }
    }
    __syncwarp();
    if (wrote && hl == 0u) {
        lkey[lq * kp + slot] = ck;
        lrow[lq * kp + slot] = cr;
        if (cnt < kp) lcount[lq] = cnt + 1u;
    }
    __syncwarp();
    if (__ballot_sync(FULL_MASK, need) != 0u) {
        // The worst entry by (key, row) of a full list: each lane scans kp / 16 entries, then
        // a 16-lane reduction (xor shuffles stay inside the half-warp).
        float wk = -knn_inf();
        u32 wr = 0u, wi = 0u;
        bool have = false;
        if (need) {
            for (u32 i = hl; i < kp; i += 16u) {
                const float k2 = lkey[lq * kp + i];
                const u32 r2 = lrow[lq * kp + i];
                if (!have || knn_better(wk, wr, k2, r2)) {
                    wk = k2;
                    wr = r2;
                    wi = i;
                    have = true;
                }
            }
        }
#pragma unroll
        for (u32 m = 8u; m >= 1u; m >>= 1) {
            const float ok = __shfl_xor_sync(FULL_MASK, wk, m);
            const u32 orow = __shfl_xor_sync(FULL_MASK, wr, m);
            const u32 oi = __shfl_xor_sync(FULL_MASK, wi, m);
            const bool oh = __shfl_xor_sync(FULL_MASK, (u32)have, m) != 0u;
            if (oh && (!have || knn_better(wk, wr, ok, orow))) {
                wk = ok;
                wr = orow;
                wi = oi;
                have = true;
            }
        }
        if (need && hl == 0u) {
            lworst[lq] = wi;
            lthr[lq] = wk;
        }
        __syncwarp();
    }
}

// The register-blocked GEMM of one block: query tile q0.. (within the batch) against the
// database rows [r_begin, r_end) in 128-row tiles; after each tile's last chunk,
// sel.tile(acc, nxr, row0) sees the tile's scores (acc[i][j]: query knn_col(ty, i), row
// row0 + knn_col(tx, j); nxr: the rows' f32 norms, L2 only) and acc is cleared. Shared by
// the screen (top lists) and the filter (threshold appends), so both see the same keys.
template <class Sel>
__device__ __forceinline__ void knn_gemm(const float* __restrict__ db, const float* __restrict__ qbase,
                                         const float* __restrict__ norms, float* As, float* Bs, u32 dim, u32 q0,
                                         u32 nq, u32 r_begin, u32 r_end, u32 metric, Sel& sel) {
    const u32 tid = threadIdx.x, tx = tid & 15u;
    const u32 ty = tid >> 4;
    const bool vec = (dim & 3u) == 0u;
    const u32 nchunks = (dim + KNN_KC - 1u) / KNN_KC;
    const u32 ntiles = r_end > r_begin ? (r_end - r_begin + KNN_TILE - 1u) / KNN_TILE : 0u;
    const u32 steps = ntiles * nchunks;

    float pf[16];
    float acc[8][8];
#pragma unroll
    for (u32 i = 0; i < 8u; ++i)
#pragma unroll
        for (u32 j = 0; j < 8u; ++j) acc[i][j] = 0.0f;
    float nxr[8];
#pragma unroll
    for (u32 j = 0; j < 8u; ++j) nxr[j] = 0.0f;

    if (steps > 0u) {
        knn_load(pf, db, qbase, dim, q0, nq, r_begin, r_end, 0u, vec);
        knn_store(pf, As, Bs, vec);
    }
    __syncthreads();
    u32 tile = 0u, ch = 0u;
    for (u32 st = 0; st < steps; ++st) {
        const u32 stage = st & 1u;
        const u32 row0 = r_begin + tile * KNN_TILE;
        // The next step's loads are in flight during this step's arithmetic.
        if (st + 1u < steps) {
            const u32 nt = ch + 1u == nchunks ? tile + 1u : tile;
            const u32 nc = ch + 1u == nchunks ? 0u : ch + 1u;
            knn_load(pf, db, qbase, dim, q0, nq, r_begin + nt * KNN_TILE, r_end, nc * KNN_KC, vec);
        }
        if (ch == 0u && metric == 0u) {
#pragma unroll
            for (u32 j = 0; j < 8u; ++j) {
                const u32 r = row0 + knn_col(tx, j);
                nxr[j] = r < r_end ? __ldg(norms + r) : 0.0f;
            }
        }
        const float* as = As + stage * KNN_KC * KNN_AS;
        const float* bs = Bs + stage * KNN_KC * KNN_AS;
#pragma unroll
        for (u32 kk = 0; kk < KNN_KC; ++kk) {
            const float4 a0 = *reinterpret_cast<const float4*>(as + kk * KNN_AS + ty * 4u);
            const float4 a1 = *reinterpret_cast<const float4*>(as + kk * KNN_AS + 64u + ty * 4u);
            const float4 b0 = *reinterpret_cast<const float4*>(bs + kk * KNN_AS + tx * 4u);
            const float4 b1 = *reinterpret_cast<const float4*>(bs + kk * KNN_AS + 64u + tx * 4u);
            const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (u32 i = 0; i < 8u; ++i)
#pragma unroll
                for (u32 j = 0; j < 8u; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (st + 1u < steps) {
            knn_store(pf, As + (stage ^ 1u) * KNN_KC * KNN_AS, Bs + (stage ^ 1u) * KNN_KC * KNN_AS, vec);
        }
        __syncthreads();
        if (ch + 1u == nchunks) {
            sel.tile(acc, nxr, row0, r_end, metric);
#pragma unroll
            for (u32 i = 0; i < 8u; ++i)
#pragma unroll
                for (u32 j = 0; j < 8u; ++j) acc[i][j] = 0.0f;
            ch = 0u;
            ++tile;
        } else {
            ++ch;
        }
    }
}

// The local query (row of the block's query tile) of a thread's score row i.
__device__ __forceinline__ u32 knn_lq(u32 ty, u32 i) { return i < 4u ? ty * 4u + i : 64u + ty * 4u + (i - 4u); }

// The approximate key of score acc against a row of f32 norm nx.
__device__ __forceinline__ float knn_approx_key(float acc, float nx, u32 metric) {
    return metric == 0u ? fmaf(-2.0f, acc, nx) : -acc;
}

// The screen's selection: per query a top-kp list in shared memory (see the header).
struct KnnListSelect {
    float* lkey;
    u32* lrow;
    float* lthr;
    u32* lworst;
    u32* lcount;
    u32 kp, q0, nq, tx, ty, half, hl;

    __device__ __forceinline__ void tile(const float (&acc)[8][8], const float (&nxr)[8], u32 row0, u32 r_end,
                                         u32 metric) {
        // The scores of query lq are in the 16 lanes of one half-warp.
#pragma unroll
        for (u32 i = 0; i < 8u; ++i) {
            const u32 lq = knn_lq(ty, i);
            const bool qvalid = q0 + lq < nq;
            float key[8];
#pragma unroll
            for (u32 j = 0; j < 8u; ++j) key[j] = knn_approx_key(acc[i][j], nxr[j], metric);
            const float thr = lthr[lq];
            u32 pend = 0u;
#pragma unroll
            for (u32 j = 0; j < 8u; ++j) {
                if (qvalid && row0 + knn_col(tx, j) < r_end && key[j] <= thr) pend |= 1u << j;
            }
            while (true) {
                const u32 ball = __ballot_sync(FULL_MASK, pend != 0u);
                if (ball == 0u) break;
                const u32 mine = (ball >> (half * 16u)) & 0xffffu;
                const bool active = mine != 0u;
                const u32 lead = active ? (u32)(__ffs(mine) - 1) : 0u;
                // Every lane's lowest pending candidate; the lead lane's goes in.
                const u32 c = pend != 0u ? (u32)(__ffs(pend) - 1) : 0u;
                float mk = key[0];
#pragma unroll
                for (u32 j = 1; j < 8u; ++j) mk = c == j ? key[j] : mk;
                const u32 mr = row0 + knn_col(tx, c);
                const float ck = __shfl_sync(FULL_MASK, mk, lead, 16);
                const u32 cr = __shfl_sync(FULL_MASK, mr, lead, 16);
                if (active && hl == lead) pend &= pend - 1u;
                knn_insert(active, ck, cr, lq, kp, lkey, lrow, lthr, lworst, lcount, hl);
            }
        }
    }
};

extern "C" __global__ void __launch_bounds__(KNN_THREADS, 2) knn_screen(
    const float* __restrict__ db, const float* __restrict__ queries, const float* __restrict__ norms,
    float* __restrict__ part_key, u32* __restrict__ part_row, u32 n, u32 nq, u32 q_first, u32 dim, u32 splits,
    u32 split_rows, u32 kp, u32 metric) {
    extern __shared__ __align__(16) float knn_sm[];
    float* As = knn_sm;                               // [2][KC][AS]
    float* Bs = knn_sm + 2u * KNN_KC * KNN_AS;        // [2][KC][AS]
    float* lkey = knn_sm + 4u * KNN_KC * KNN_AS;      // [128][kp]
    u32* lrow = reinterpret_cast<u32*>(lkey + KNN_TILE * kp);
    float* lthr = reinterpret_cast<float*>(lrow + KNN_TILE * kp);
    u32* lworst = reinterpret_cast<u32*>(lthr + KNN_TILE);
    u32* lcount = lworst + KNN_TILE;

    const u32 qtiles = (nq + KNN_TILE - 1u) / KNN_TILE;
    const u32 qt = blockIdx.x % qtiles, s = blockIdx.x / qtiles;
    if (s >= splits) return;
    const u32 q0 = qt * KNN_TILE;  // within the batch
    const u32 r_begin = s * split_rows;
    const u32 r_end = min(r_begin + split_rows, n);
    const float* qbase = queries + (u64)q_first * dim;
    const u32 tid = threadIdx.x, tx = tid & 15u, ty = tid >> 4;
    const u32 lane = tid & 31u, half = lane >> 4, hl = lane & 15u;
    for (u32 i = tid; i < KNN_TILE; i += KNN_THREADS) {
        lthr[i] = knn_inf();
        lworst[i] = 0u;
        lcount[i] = 0u;
    }
    KnnListSelect sel{lkey, lrow, lthr, lworst, lcount, kp, q0, nq, tx, ty, half, hl};
    knn_gemm(db, qbase, norms, As, Bs, dim, q0, nq, r_begin, r_end, metric, sel);
    __syncwarp();
    // Each list sorted by (key, row) into its slot: entry e goes to its rank; past the
    // count, (+inf, NO_ROW).
#pragma unroll 1
    for (u32 i = 0; i < 8u; ++i) {
        const u32 lq = knn_lq(ty, i);
        if (q0 + lq >= nq) continue;  // uniform over the half-warp
        const u32 cnt = lcount[lq];
        const u64 base = ((u64)(q0 + lq) * splits + s) * kp;
        for (u32 e = hl; e < kp; e += 16u) {
            if (e < cnt) {
                const float ke = lkey[lq * kp + e];
                const u32 re = lrow[lq * kp + e];
                u32 rank = 0u;
                for (u32 m = 0; m < cnt; ++m) rank += knn_better(lkey[lq * kp + m], lrow[lq * kp + m], ke, re) ? 1u : 0u;
                part_key[base + rank] = ke;
                part_row[base + rank] = re;
            } else {
                part_key[base + e] = knn_inf();
                part_row[base + e] = KNN_NO_ROW;
            }
        }
    }
}

// ---- the threshold path: knn_gather, knn_thresholds, knn_filter, knn_rescore ---------------

// Copies every stride-th row (and its norm) of the database into the sample.
extern "C" __global__ void __launch_bounds__(KNN_EXACT_THREADS) knn_gather(
    const float* __restrict__ db, const float* __restrict__ norms, float* __restrict__ sample,
    float* __restrict__ sample_norms, u32 n, u32 dim, u32 stride, u32 rows) {
    const u64 total = (u64)rows * dim;
    for (u64 e = (u64)blockIdx.x * KNN_EXACT_THREADS + threadIdx.x; e < total; e += (u64)gridDim.x * KNN_EXACT_THREADS) {
        const u64 r = e / dim, d = e % dim;
        const u64 src = r * stride;
        sample[e] = db[src * dim + d];
        if (d == 0u) sample_norms[r] = norms[src];
    }
}

// Per query of the batch: the approximate-key threshold thr = T_s - |q|^2 + E (L2) or
// T_s + E (inner product), rounded up to f32, from the sample's exact k-th key T_s
// (sample_scores at (q_first + q) * k + k - 1; +inf when the sample had fewer than k rows).
// Without a sample the host fills thr with +inf instead of launching this.
extern "C" __global__ void __launch_bounds__(KNN_EXACT_THREADS) knn_thresholds(
    const float* __restrict__ queries, const double* __restrict__ sample_scores, float* __restrict__ thr, u32 nq,
    u32 q_first, u32 dim, u32 k, u32 metric, float rmax) {
    const u32 ql = blockIdx.x * KNN_EXACT_THREADS + threadIdx.x;
    if (ql >= nq) return;
    const u32 q = q_first + ql;
    const float* qv = queries + (u64)q * dim;
    double qq = 0.0;
    for (u32 d = 0; d < dim; ++d) {
        const double v = (double)qv[d];
        qq = fma(v, v, qq);
    }
    const double sc = sample_scores[(u64)q * k + k - 1u];
    const double t = metric == 0u ? sc : -sc;  // the key: +inf (L2) / -(-inf) when short of k rows
    float out = knn_inf();
    if (t < (double)knn_inf()) {
        const double qn = sqrt(qq) * (1.0 + 1e-12);
        const double r = (double)rmax;
        const double u = 5.9604644775390625e-08;  // 2^-24
        const double e = (metric == 0u ? 2.0 * (dim + 4.0) * u * (qn + r) * (qn + r) : 2.0 * (dim + 4.0) * u * qn * r) + 1e-30;
        const double th = metric == 0u ? t - qq + e : t + e;
        out = __double2float_ru(th);
    }
    thr[ql] = out;
}

// The filter's selection: every (query, row) with approximate key <= the query's
// threshold is appended to the query's candidate list (a global counter per query; rows
// past `cap` are counted, not stored, and make knn_rescore flag the query). The thresholds
// sit in shared memory (a broadcast load per score row and tile), not in registers: the
// GEMM's 64 accumulators, 16 prefetch and 16 operand registers leave no room for 8 more
// under the 128-register cap of 2 blocks per SM (with them in registers ptxas spilled
// 344 bytes per thread and the filter ran at 42% of the FP32 rate).
struct KnnFilterSelect {
    const float* sthr;
    u32* count;
    u32* cand;
    u32 cap, q0, tx, ty;

    __device__ __forceinline__ void tile(const float (&acc)[8][8], const float (&nxr)[8], u32 row0, u32 r_end,
                                         u32 metric) {
        // The compares, unrolled, into one bit per score; the rare hits after, in a loop
        // that is not unrolled (one copy of the append code: unrolled 64 times it cost
        // ptxas the registers of the accumulators).
        u64 hits = 0u;
#pragma unroll
        for (u32 i = 0; i < 8u; ++i) {
            const float t = sthr[knn_lq(ty, i)];  // -inf past the batch's queries
#pragma unroll
            for (u32 j = 0; j < 8u; ++j) {
                if (knn_approx_key(acc[i][j], nxr[j], metric) <= t) hits |= 1ull << (i * 8u + j);
            }
        }
#pragma unroll 1
        while (hits != 0u) {
            const u32 b = (u32)(__ffsll((long long)hits) - 1);
            hits &= hits - 1u;
            const u32 r = row0 + knn_col(tx, b & 7u);
            if (r < r_end) {
                const u32 q = q0 + knn_lq(ty, b >> 3);
                const u32 p = atomicAdd(count + q, 1u);
                if (p < cap) cand[(u64)q * cap + p] = r;
            }
        }
    }
};

extern "C" __global__ void __launch_bounds__(KNN_THREADS, 2) knn_filter(
    const float* __restrict__ db, const float* __restrict__ queries, const float* __restrict__ norms,
    const float* __restrict__ thr, u32* __restrict__ count, u32* __restrict__ cand, u32 n, u32 nq, u32 q_first,
    u32 dim, u32 splits, u32 split_rows, u32 cap, u32 metric) {
    __shared__ __align__(16) float knn_fs[4u * KNN_KC * KNN_AS];
    __shared__ float knn_fthr[KNN_TILE];
    const u32 qtiles = (nq + KNN_TILE - 1u) / KNN_TILE;
    const u32 qt = blockIdx.x % qtiles, s = blockIdx.x / qtiles;
    if (s >= splits) return;
    const u32 q0 = qt * KNN_TILE;
    const u32 r_begin = s * split_rows;
    const u32 r_end = min(r_begin + split_rows, n);
    const u32 tid = threadIdx.x;
    for (u32 i = tid; i < KNN_TILE; i += KNN_THREADS) knn_fthr[i] = q0 + i < nq ? thr[q0 + i] : -knn_inf();
    // knn_gemm's first barrier orders these stores before every read.
    KnnFilterSelect sel{knn_fthr, count, cand, cap, q0, tid & 15u, tid >> 4};
    knn_gemm(db, queries + (u64)q_first * dim, norms, knn_fs, knn_fs + 2u * KNN_KC * KNN_AS, dim, q0, nq, r_begin,
             r_end, metric, sel);
}

// A block per query: its candidates (count <= cap; more flags the query for the exact
// path) rescored exactly, sorted by (key, row) (bitonic, in shared memory), the k first
// written at q_first + q.
extern "C" __global__ void __launch_bounds__(KNN_REFINE_THREADS) knn_rescore(
    const float* __restrict__ db, const float* __restrict__ queries, const u32* __restrict__ count,
    const u32* __restrict__ cand, u32* __restrict__ out_rows, double* __restrict__ out_scores, u32* __restrict__ flags,
    u32 n, u32 nq, u32 q_first, u32 dim, u32 cap, u32 k, u32 metric) {
    extern __shared__ __align__(16) double knn_cs[];
    const u32 ql = blockIdx.x;
    if (ql >= nq) return;
    const u32 q = q_first + ql;
    const u32 tid = threadIdx.x;
    const u32 c = count[ql];
    if (c > cap) {
        if (tid == 0u) flags[q] = 1u;  // the exact path writes this query's rows
        return;
    }
    u32 size = 1u;
    while (size < c) size <<= 1;
    double* ckey = knn_cs;                                  // [size]
    u32* crow = reinterpret_cast<u32*>(ckey + size);        // [size]
    const float* qv = queries + (u64)q * dim;
    const u64 base = (u64)ql * cap;
    for (u32 i = tid; i < size; i += KNN_REFINE_THREADS) {
        if (i < c) {
            const u32 row = cand[base + i];
            ckey[i] = knn_exact_key(qv, db + (u64)row * dim, dim, metric);
            crow[i] = row;
        } else {
            ckey[i] = (double)knn_inf();
            crow[i] = KNN_NO_ROW;
        }
    }
    __syncthreads();
    for (u32 len = 2u; len <= size; len <<= 1) {
        for (u32 stride = len >> 1; stride > 0u; stride >>= 1) {
            for (u32 p = tid; p < size / 2u; p += KNN_REFINE_THREADS) {
                const u32 lo = 2u * p - (p & (stride - 1u));
                const u32 hi = lo + stride;
                const bool up = (lo & len) == 0u;
                const double ka = ckey[lo], kz = ckey[hi];
                const u32 ra = crow[lo], rz = crow[hi];
                if (knn_better64(kz, rz, ka, ra) == up) {
                    ckey[lo] = kz;
                    ckey[hi] = ka;
                    crow[lo] = rz;
                    crow[hi] = ra;
                }
            }
            __syncthreads();
        }
    }
    const u64 out = (u64)q * k;
    for (u32 i = tid; i < k; i += KNN_REFINE_THREADS) {
        if (i < c) {
            out_rows[out + i] = crow[i];
            out_scores[out + i] = metric == 0u ? ckey[i] : -ckey[i];
        } else {
            out_rows[out + i] = KNN_NO_ROW;
            out_scores[out + i] = metric == 0u ? (double)knn_inf() : -(double)knn_inf();
        }
    }
    if (tid == 0u) flags[q] = 0u;
}

// ---- knn_refine -----------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(KNN_REFINE_THREADS) knn_refine(
    const float* __restrict__ db, const float* __restrict__ queries, const float* __restrict__ part_key,
    const u32* __restrict__ part_row, u32* __restrict__ out_rows, double* __restrict__ out_scores,
    u32* __restrict__ flags, u32 n, u32 nq, u32 q_first, u32 dim, u32 splits, u32 kp, u32 k, u32 metric,
    u32 sort_len, float rmax) {
    extern __shared__ __align__(16) double knn_rs[];
    double* ckey = knn_rs;                                       // [sort_len]
    float* skey = reinterpret_cast<float*>(ckey + sort_len);     // [sort_len]
    u32* srow = reinterpret_cast<u32*>(skey + sort_len);         // [sort_len]
    u32* crow = srow + sort_len;                                 // [sort_len]
    __shared__ double sh_red[KNN_REFINE_THREADS / 32u];
    __shared__ u32 sh_flag;
    const u32 ql = blockIdx.x;
    if (ql >= nq) return;
    const u32 q = q_first + ql;
    const u32 tid = threadIdx.x;
    const u32 total = splits * kp;
    const u64 base = (u64)ql * total;
    for (u32 i = tid; i < sort_len; i += KNN_REFINE_THREADS) {
        const bool in = i < total;
        skey[i] = in ? part_key[base + i] : knn_inf();
        srow[i] = in ? part_row[base + i] : KNN_NO_ROW;
    }
    if (tid == 0u) sh_flag = 0u;
    // |q| in f64.
    const float* qv = queries + (u64)q * dim;
    double qq = 0.0;
    for (u32 d = tid; d < dim; d += KNN_REFINE_THREADS) {
        const double v = (double)qv[d];
        qq = fma(v, v, qq);
    }
#pragma unroll
    for (u32 m = 16u; m >= 1u; m >>= 1) qq += __shfl_xor_sync(FULL_MASK, qq, m);
    if ((tid & 31u) == 0u) sh_red[tid >> 5] = qq;
    __syncthreads();
    // Bitonic sort by (key, row), ascending.
    for (u32 size = 2u; size <= sort_len; size <<= 1) {
        for (u32 stride = size >> 1; stride > 0u; stride >>= 1) {
            for (u32 i = tid; i < sort_len; i += KNN_REFINE_THREADS) {
                const u32 j = i ^ stride;
                if (j > i) {
                    const bool up = (i & size) == 0u;
                    const float ki = skey[i], kj = skey[j];
                    const u32 ri = srow[i], rj = srow[j];
                    if (knn_better(kj, rj, ki, ri) == up) {
                        skey[i] = kj;
                        skey[j] = ki;
                        srow[i] = rj;
                        srow[j] = ri;
                    }
                }
            }
            __syncthreads();
        }
    }
    double qn2 = 0.0;
    for (u32 w = 0; w < KNN_REFINE_THREADS / 32u; ++w) qn2 += sh_red[w];
    const double qn = sqrt(qn2) * (1.0 + 1e-12);
    const double r = (double)rmax;
    const double u = 5.9604644775390625e-08;  // 2^-24
    const double e = metric == 0u ? 2.0 * (dim + 4.0) * u * (qn + r) * (qn + r) : 2.0 * (dim + 4.0) * u * qn * r;
    const double err = e + 1e-30;
    const double t = srow[k - 1u] != KNN_NO_ROW ? (double)skey[k - 1u] : (double)knn_inf();
    const double band = t + 2.0 * err;
    // A full split list whose last entry is inside the band may have dropped a candidate.
    for (u32 sp = tid; sp < splits; sp += KNN_REFINE_THREADS) {
        const u64 last = base + (u64)sp * kp + kp - 1u;
        if (part_row[last] != KNN_NO_ROW && (double)part_key[last] <= band) sh_flag = 1u;
    }
    // The candidates are a prefix of the sorted entries.
    u32 mine = 0u;
    for (u32 i = tid; i < total; i += KNN_REFINE_THREADS) mine += (srow[i] != KNN_NO_ROW && (double)skey[i] <= band) ? 1u : 0u;
    // Block sum of `mine` (the entries counted are exactly the prefix).
    __shared__ u32 sh_cnt[KNN_REFINE_THREADS / 32u];
#pragma unroll
    for (u32 m = 16u; m >= 1u; m >>= 1) mine += __shfl_xor_sync(FULL_MASK, mine, m);
    if ((tid & 31u) == 0u) sh_cnt[tid >> 5] = mine;
    __syncthreads();
    u32 cands = 0u;
    for (u32 w = 0; w < KNN_REFINE_THREADS / 32u; ++w) cands += sh_cnt[w];
    const float* qp = qv;
    for (u32 i = tid; i < cands; i += KNN_REFINE_THREADS) {
        const u32 row = srow[i];
        ckey[i] = knn_exact_key(qp, db + (u64)row * dim, dim, metric);
        crow[i] = row;
    }
    __syncthreads();
    const u64 out = (u64)q * k;
    for (u32 i = tid; i < cands; i += KNN_REFINE_THREADS) {
        const double ki = ckey[i];
        const u32 ri = crow[i];
        u32 rank = 0u;
        for (u32 m = 0; m < cands; ++m) rank += knn_better64(ckey[m], crow[m], ki, ri) ? 1u : 0u;
        if (rank < k) {
            out_rows[out + rank] = ri;
            out_scores[out + rank] = metric == 0u ? ki : -ki;
        }
    }
    for (u32 i = cands + tid; i < k; i += KNN_REFINE_THREADS) {
        out_rows[out + i] = KNN_NO_ROW;
        out_scores[out + i] = metric == 0u ? (double)knn_inf() : -(double)knn_inf();
    }
    if (tid == 0u) flags[q] = sh_flag;
}

// ---- the exact path (flagged queries) -------------------------------------------------------

extern "C" __global__ void __launch_bounds__(KNN_EXACT_THREADS) knn_exact_keys(
    const float* __restrict__ db, const float* __restrict__ queries, const u32* __restrict__ fq,
    double* __restrict__ keys, u32 n, u32 dim, u32 batch, u32 metric) {
    const u64 item = (u64)blockIdx.x * KNN_EXACT_THREADS + threadIdx.x;
    if (item >= (u64)batch * n) return;
    const u32 b = (u32)(item / n), row = (u32)(item % n);
    keys[item] = knn_exact_key(queries + (u64)fq[b] * dim, db + (u64)row * dim, dim, metric);
}

extern "C" __global__ void __launch_bounds__(KNN_EXACT_THREADS) knn_fallback_scatter(
    const u32* __restrict__ fq, const u32* __restrict__ idx, const double* __restrict__ top,
    u32* __restrict__ out_rows, double* __restrict__ out_scores, u32 n, u32 k, u32 batch, u32 metric) {
    const u32 item = blockIdx.x * KNN_EXACT_THREADS + threadIdx.x;
    if (item >= batch * k) return;
    const u32 b = item / k, i = item % k;
    const u32 p = idx[item];
    const u64 out = (u64)fq[b] * k + i;
    if (p == KNN_NO_ROW) {
        out_rows[out] = KNN_NO_ROW;
        out_scores[out] = metric == 0u ? (double)knn_inf() : -(double)knn_inf();
    } else {
        out_rows[out] = p - b * n;
        out_scores[out] = metric == 0u ? top[item] : -top[item];
    }
}
