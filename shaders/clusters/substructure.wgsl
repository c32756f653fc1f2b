// shaders/clusters/substructure.wgsl — the sub-structure family on the GPU
// (crates/orrery-clusters/src/gpu/substructure.rs; host reference crate::substructure), the
// WGSL twin of kernels/clusters/substructure.cu: the same seven entry points with the same
// arguments and launch grids, the same two-means (seeds at the first and last member, three
// Lloyd iterations, ties to A, a side without members keeps its centroid, a final
// assignment), the same silhouette row-tile pass, the same f32 arithmetic with compensated
// sums and the same sentinels. Module "clusters/substructure": pairs.wgsl (the
// shared prelude: constants, sums, the distance tile), then this file (it //#includes
// core/common).
//
// Differences from substructure.cu, none visible in the results beyond f32 rounding:
//   - Reductions over a row's dimensions (tm_assign) and over the 16 invocations that share
//     a silhouette row (sil_rows) are workgroup-memory trees, not warp shuffles (no
//     subgroups needed).
//   - The distance tile stages PT_KC_W = 16 dimensions at a time (workgroup memory is
//     16 KB on many adapters), not 32.
//   - NaN is written as its bits (bitcast), never computed.
//
// Launch shape, buffers, invariants, cost model: substructure.cu's header (bindings in
// argument order: buffers 0.., then the uniform block of the scalars). Workgroup sizes:
// TM_THREADS (256) for the tm_* entries, PT_THREADS (256) for sil_rows, PT_MERGE_THREADS
// (128) for sil_merge; the host launches exactly these. Indices are u32: every buffer is
// below the binding-size limit (< 2^32 bytes).
//
// Measured cost: lavapipe only (correctness), not measured on a GPU yet.

//#include core/common


const CL_F_INERTIA: u32 = 1u;
const CL_FIELDS: u32 = 17u;

const SUB_F_SPLIT_INERTIA: u32 = 0u;
const SUB_F_INERTIA_RATIO: u32 = 1u;
const SUB_F_SILHOUETTE: u32 = 2u;
const SUB_F_BALANCE: u32 = 3u;
const SUB_F_SEPARATION: u32 = 4u;
const SUB_FIELDS: u32 = 5u;

fn tm_slabs(dim: u32) -> u32 {
    return (dim + TM_THREADS - 1u) / TM_THREADS;
}

// ---- tm_seed ------------------------------------------------------------------------------

struct SeedParams {
    dim: u32,
    clusters: u32,
}

@group(0) @binding(0) var<storage, read> se_vectors: array<f32>;
@group(0) @binding(1) var<storage, read> se_offsets: array<u32>;
@group(0) @binding(2) var<storage, read_write> se_means: array<f32>;
@group(0) @binding(3) var<uniform> se_p: SeedParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tm_seed(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let dim = se_p.dim;
    let slabs = tm_slabs(dim);
    let b = linear_block(wid, nwg);
    let c = b / slabs;
    let d = (b % slabs) * TM_THREADS + lid;
    if c >= se_p.clusters || d >= dim {
        return;
    }
    let s = se_offsets[c];
    let e = se_offsets[c + 1u];
    let at = c * 2u * dim + d;
    if s == e {
        se_means[at] = nan_f32();
        se_means[at + dim] = nan_f32();
    } else {
        se_means[at] = se_vectors[s * dim + d];
        se_means[at + dim] = se_vectors[(e - 1u) * dim + d];
    }
}

// ---- tm_assign ----------------------------------------------------------------------------

struct AssignParams {
    dim: u32,
    chunks: u32,
}

@group(0) @binding(0) var<storage, read> as_vectors: array<f32>;
@group(0) @binding(1) var<storage, read> as_offsets: array<u32>;
@group(0) @binding(2) var<storage, read> as_chunk_cluster: array<u32>;
@group(0) @binding(3) var<storage, read> as_chunk_start: array<u32>;
@group(0) @binding(4) var<storage, read> as_means: array<f32>;
@group(0) @binding(5) var<storage, read_write> as_labels: array<u32>;
@group(0) @binding(6) var<storage, read_write> as_sq_distance: array<f32>;
@group(0) @binding(7) var<uniform> as_p: AssignParams;

var<workgroup> as_da: array<f32, 256>;
var<workgroup> as_db: array<f32, 256>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tm_assign(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let dim = as_p.dim;
    let g = linear_block(wid, nwg);
    if g >= as_p.chunks {
        return;
    }
    let c = as_chunk_cluster[g];
    let start = as_chunk_start[g];
    let end = min(start + TM_CHUNK_ROWS, as_offsets[c + 1u]);
    let grp = lid / 32u;
    let lane = lid % 32u;
    let ca = c * 2u * dim;
    let cb = ca + dim;
    // One row per group of 32 invocations per step: rows start + grp, start + grp + 8, ...
    for (var i0 = start; i0 < end; i0 += TM_THREADS / 32u) {
        let i = i0 + grp;
        var da = 0.0;
        var db = 0.0;
        if i < end {
            for (var d = lane; d < dim; d += 32u) {
                let v = as_vectors[i * dim + d];
                let u = v - as_means[ca + d];
                let w = v - as_means[cb + d];
                da = fma(u, u, da);
                db = fma(w, w, db);
            }
        }
        as_da[lid] = da;
        as_db[lid] = db;
        for (var s = 16u; s > 0u; s >>= 1u) {
            workgroupBarrier();
            if lane < s {
                as_da[lid] += as_da[lid + s];
                as_db[lid] += as_db[lid + s];
            }
        }
        workgroupBarrier();
        if lane == 0u && i < end {
            let a = as_da[lid];
            let b = as_db[lid];
            let side_b = b < a;
            as_labels[i] = select(0u, 1u, side_b);
            as_sq_distance[i] = select(a, b, side_b);
        }
        workgroupBarrier();
    }
}

// ---- tm_chunk_sums ------------------------------------------------------------------------

struct ChunkSumsParams {
    dim: u32,
    chunks: u32,
}

@group(0) @binding(0) var<storage, read> cs_vectors: array<f32>;
@group(0) @binding(1) var<storage, read> cs_offsets: array<u32>;
@group(0) @binding(2) var<storage, read> cs_chunk_cluster: array<u32>;
@group(0) @binding(3) var<storage, read> cs_chunk_start: array<u32>;
@group(0) @binding(4) var<storage, read> cs_labels: array<u32>;
@group(0) @binding(5) var<storage, read_write> cs_part: array<f32>;
@group(0) @binding(6) var<storage, read_write> cs_part_count: array<u32>;
@group(0) @binding(7) var<uniform> cs_p: ChunkSumsParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tm_chunk_sums(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let dim = cs_p.dim;
    let slabs = tm_slabs(dim);
    let b = linear_block(wid, nwg);
    let g = b / slabs;
    let d = (b % slabs) * TM_THREADS + lid;
    if g >= cs_p.chunks || d >= dim {
        return;
    }
    let c = cs_chunk_cluster[g];
    let start = cs_chunk_start[g];
    let end = min(start + TM_CHUNK_ROWS, cs_offsets[c + 1u]);
    var sa = Sum(0.0, 0.0);
    var sb = Sum(0.0, 0.0);
    var nb = 0u;
    for (var i = start; i < end; i++) {
        let side = cs_labels[i];
        let v = cs_vectors[i * dim + d];
        nb += side;
        sa = sum_add(sa, select(v, 0.0, side != 0u));
        sb = sum_add(sb, select(0.0, v, side != 0u));
    }
    cs_part[(g * 2u) * dim + d] = sum_value(sa);
    cs_part[(g * 2u + 1u) * dim + d] = sum_value(sb);
    if d == 0u {
        cs_part_count[2u * g] = (end - start) - nb;
        cs_part_count[2u * g + 1u] = nb;
    }
}

// ---- tm_update ----------------------------------------------------------------------------

struct UpdateParams {
    dim: u32,
    clusters: u32,
}

@group(0) @binding(0) var<storage, read> up_part: array<f32>;
@group(0) @binding(1) var<storage, read> up_part_count: array<u32>;
@group(0) @binding(2) var<storage, read> up_chunk_first: array<u32>;
@group(0) @binding(3) var<storage, read_write> up_means: array<f32>;
@group(0) @binding(4) var<uniform> up_p: UpdateParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tm_update(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let dim = up_p.dim;
    let slabs = tm_slabs(dim);
    let b = linear_block(wid, nwg);
    let c = b / slabs;
    let d = (b % slabs) * TM_THREADS + lid;
    if c >= up_p.clusters || d >= dim {
        return;
    }
    var sa = Sum(0.0, 0.0);
    var sb = Sum(0.0, 0.0);
    var na = 0u;
    var nb = 0u;
    for (var g = up_chunk_first[c]; g < up_chunk_first[c + 1u]; g++) {
        sa = sum_add(sa, up_part[(g * 2u) * dim + d]);
        sb = sum_add(sb, up_part[(g * 2u + 1u) * dim + d]);
        na += up_part_count[2u * g];
        nb += up_part_count[2u * g + 1u];
    }
    if na > 0u {
        up_means[(c * 2u) * dim + d] = sum_value(sa) / f32(na);
    }
    if nb > 0u {
        up_means[(c * 2u + 1u) * dim + d] = sum_value(sb) / f32(nb);
    }
}

// ---- tm_finish ----------------------------------------------------------------------------

struct FinishParams {
    dim: u32,
    clusters: u32,
}

@group(0) @binding(0) var<storage, read> fi_means: array<f32>;
@group(0) @binding(1) var<storage, read> fi_labels: array<u32>;
@group(0) @binding(2) var<storage, read> fi_sq_distance: array<f32>;
@group(0) @binding(3) var<storage, read> fi_offsets: array<u32>;
@group(0) @binding(4) var<storage, read> fi_cstats: array<f32>;
@group(0) @binding(5) var<storage, read_write> fi_sizes: array<u32>;
@group(0) @binding(6) var<storage, read_write> fi_stats: array<f32>;
@group(0) @binding(7) var<uniform> fi_p: FinishParams;

var<workgroup> fi_s: array<f32, 256>;
var<workgroup> fi_d: array<f32, 256>;
var<workgroup> fi_b: array<u32, 256>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tm_finish(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let dim = fi_p.dim;
    let clusters = fi_p.clusters;
    let c = linear_block(wid, nwg);
    if c >= clusters {
        return;
    }
    let s0 = fi_offsets[c];
    let n = fi_offsets[c + 1u] - s0;
    var sq = Sum(0.0, 0.0);
    var nb = 0u;
    for (var i = s0 + lid; i < s0 + n; i += TM_THREADS) {
        sq = sum_add(sq, fi_sq_distance[i]);
        nb += fi_labels[i];
    }
    var sep = 0.0;
    let ca = c * 2u * dim;
    if n > 0u {
        for (var d = lid; d < dim; d += TM_THREADS) {
            let u = fi_means[ca + d] - fi_means[ca + d + dim];
            sep = fma(u, u, sep);
        }
    }
    fi_s[lid] = sum_value(sq);
    fi_d[lid] = sep;
    fi_b[lid] = nb;
    for (var h = TM_THREADS / 2u; h > 0u; h >>= 1u) {
        workgroupBarrier();
        if lid < h {
            fi_s[lid] += fi_s[lid + h];
            fi_d[lid] += fi_d[lid + h];
            fi_b[lid] += fi_b[lid + h];
        }
    }
    workgroupBarrier();
    if lid != 0u {
        return;
    }
    let bcount = fi_b[0];
    fi_sizes[2u * c] = n - bcount;
    fi_sizes[2u * c + 1u] = bcount;
    if n == 0u {
        for (var k = 0u; k < SUB_FIELDS; k++) {
            fi_stats[k * clusters + c] = nan_f32();
        }
        return;
    }
    let split = fi_s[0];
    let inertia = fi_cstats[CL_F_INERTIA * clusters + c];
    fi_stats[SUB_F_SPLIT_INERTIA * clusters + c] = split;
    fi_stats[SUB_F_INERTIA_RATIO * clusters + c] = select(1.0, clamp(split / inertia, 0.0, 1.0), inertia > 0.0);
    fi_stats[SUB_F_BALANCE * clusters + c] = f32(min(n - bcount, bcount)) / f32(n);
    fi_stats[SUB_F_SEPARATION * clusters + c] = sqrt(fi_d[0]);
}


// ---- sil_rows -----------------------------------------------------------------------------

struct SilRowsParams {
    dim: u32,
    tiles: u32,
}

@group(0) @binding(0) var<storage, read> pt_vectors: array<f32>;
@group(0) @binding(1) var<storage, read> sr_offsets: array<u32>;
@group(0) @binding(2) var<storage, read> sr_tile_cluster: array<u32>;
@group(0) @binding(3) var<storage, read> sr_tile_start: array<u32>;
@group(0) @binding(4) var<storage, read> sr_labels: array<u32>;
@group(0) @binding(5) var<storage, read> sr_sizes: array<u32>;
@group(0) @binding(6) var<storage, read_write> sr_part_sil: array<f32>;
@group(0) @binding(7) var<uniform> sr_p: SilRowsParams;

var<workgroup> sr_lab: array<u32, 64>;
var<workgroup> sr_red: array<f32, 512>;
var<workgroup> sr_row: array<f32, 64>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn sil_rows(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let dim = sr_p.dim;
    let g = linear_block(wid, nwg);
    if g >= sr_p.tiles {
        return;
    }
    let c = sr_tile_cluster[g];
    let r0 = sr_tile_start[g];
    let first = sr_offsets[c];
    let end = sr_offsets[c + 1u];
    let nr = min(PT_TILE, end - r0);
    let na = sr_sizes[2u * c];
    let nb = sr_sizes[2u * c + 1u];
    let ty = lid >> 4u;
    let tx = lid & 15u;
    if na == 0u || nb == 0u {
        if lid == 0u {
            sr_part_sil[g] = 0.0;
        }
        return;
    }
    // Invocation tx == 0 of each row group keeps the running sums of its 4 rows.
    var run_a: array<Sum, 4>;
    var run_b: array<Sum, 4>;
    for (var a = 0u; a < 4u; a++) {
        run_a[a] = Sum(0.0, 0.0);
        run_b[a] = Sum(0.0, 0.0);
    }
    for (var c0 = first; c0 < end; c0 += PT_TILE) {
        let nc = min(PT_TILE, end - c0);
        workgroupBarrier();
        if lid < PT_TILE {
            sr_lab[lid] = select(0u, sr_labels[c0 + min(lid, nc - 1u)], lid < nc);
        }
        pt_tile(lid, dim, r0, nr, c0, nc);
        for (var a = 0u; a < 4u; a++) {
            let i = ty + 16u * a;
            var s0 = 0.0;
            var s1 = 0.0;
            for (var b = 0u; b < 4u; b++) {
                let j = tx + 16u * b;
                if i < nr && j < nc && r0 + i != c0 + j {
                    let dist = sqrt(pt_acc[4u * a + b]);
                    if sr_lab[j] == 0u {
                        s0 += dist;
                    } else {
                        s1 += dist;
                    }
                }
            }
            workgroupBarrier();
            sr_red[lid] = s0;
            sr_red[256u + lid] = s1;
            workgroupBarrier();
            if tx == 0u {
                var t0 = 0.0;
                var t1 = 0.0;
                for (var q = 0u; q < 16u; q++) {
                    t0 += sr_red[lid + q];
                    t1 += sr_red[256u + lid + q];
                }
                run_a[a] = sum_add(run_a[a], t0);
                run_b[a] = sum_add(run_b[a], t1);
            }
        }
    }
    if tx == 0u {
        for (var a = 0u; a < 4u; a++) {
            let i = ty + 16u * a;
            var s = 0.0;
            if i < nr {
                let own_a = sr_labels[r0 + i] == 0u;
                let n_own = f32(select(nb, na, own_a));
                let n_other = f32(select(na, nb, own_a));
                let sum_a = sum_value(run_a[a]);
                let sum_b = sum_value(run_b[a]);
                if n_own >= 2.0 {
                    let ai = select(sum_b, sum_a, own_a) / (n_own - 1.0);
                    let bi = select(sum_a, sum_b, own_a) / n_other;
                    let mx = max(ai, bi);
                    if mx > 0.0 {
                        s = (bi - ai) / mx;
                    }
                }
            }
            sr_row[i] = s;
        }
    }
    workgroupBarrier();
    if lid == 0u {
        var s = Sum(0.0, 0.0);
        for (var i = 0u; i < nr; i++) {
            s = sum_add(s, sr_row[i]);
        }
        sr_part_sil[g] = sum_value(s);
    }
}

// ---- sil_merge ----------------------------------------------------------------------------

struct SilMergeParams {
    clusters: u32,
}

@group(0) @binding(0) var<storage, read> sm_part_sil: array<f32>;
@group(0) @binding(1) var<storage, read> sm_offsets: array<u32>;
@group(0) @binding(2) var<storage, read> sm_tile_first: array<u32>;
@group(0) @binding(3) var<storage, read> sm_sizes: array<u32>;
@group(0) @binding(4) var<storage, read_write> sm_stats: array<f32>;
@group(0) @binding(5) var<uniform> sm_p: SilMergeParams;

var<workgroup> sm_sh: array<f32, 128>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn sil_merge(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let clusters = sm_p.clusters;
    let c = linear_block(wid, nwg);
    if c >= clusters {
        return;
    }
    let g0 = sm_tile_first[c];
    let g1 = sm_tile_first[c + 1u];
    let per = (g1 - g0 + PT_MERGE_THREADS - 1u) / PT_MERGE_THREADS;
    let a = g0 + lid * per;
    let b = min(g1, a + per);
    var s = Sum(0.0, 0.0);
    for (var g = a; g < b; g++) {
        s = sum_add(s, sm_part_sil[g]);
    }
    sm_sh[lid] = sum_value(s);
    for (var h = PT_MERGE_THREADS / 2u; h > 0u; h >>= 1u) {
        workgroupBarrier();
        if lid < h {
            sm_sh[lid] += sm_sh[lid + h];
        }
    }
    workgroupBarrier();
    if lid != 0u {
        return;
    }
    let n = sm_offsets[c + 1u] - sm_offsets[c];
    let split = sm_sizes[2u * c] > 0u && sm_sizes[2u * c + 1u] > 0u;
    if n == 0u {
        sm_stats[SUB_F_SILHOUETTE * clusters + c] = nan_f32();
    } else {
        sm_stats[SUB_F_SILHOUETTE * clusters + c] = select(0.0, sm_sh[0] / f32(n), split);
    }
}
