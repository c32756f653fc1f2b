// shaders/clusters/centroid.wgsl — the centroid family on the GPU
// (crates/orrery-clusters/src/gpu/centroid.rs; host reference crate::centroid), the WGSL twin
// of kernels/clusters/centroid.cu: the same nine entry points with the same arguments, the
// same chunk grid, the same f32 arithmetic (compensated column sums, Welford moments within
// a row group, Chan's merge across groups and chunks), the same sentinels. Module
// "clusters/centroid": this file (it //#includes core/common).
//
// Differences from centroid.cu, none visible in the results beyond f32 rounding:
//   - Scalar loads only (a buffer of f32 cannot be read as vec4 here). The column mapping
//     is centroid.cu's all the same: with dim % 4 == 0 an invocation owns the 4 dimensions
//     4j .. 4j + 3 of column j, so both languages launch the same grids.
//   - cl_distances reduces a row's terms with a workgroup-memory tree over groups of 32
//     invocations (no subgroups needed), one row per group per step; centroid.cu uses warp
//     shuffles and two rows per warp.
//   - pass-3 counts are tree sums of u32, not __syncthreads_count.
//   - NaN is written as its bits (bitcast), never computed.
//
// Launch shape, buffers, invariants: centroid.cu's header (bindings in argument order:
// buffers 0.., then the uniform block of the scalars). Workgroup sizes: THREADS (256) for
// every entry except cl_moments (MERGE_THREADS, 128) and cl_thresholds (CHUNK_ROWS, 128);
// the host launches exactly these. Views must start at aligned offsets (the host binds whole
// buffers). Indices are u32: every buffer is below the binding-size limit (< 2^32 bytes).
//
// Measured cost: not measured yet.

//#include core/common

const THREADS: u32 = 256u;
const CHUNK_ROWS: u32 = 128u;
const MERGE_THREADS: u32 = 128u;
const GROUP: u32 = 32u;

const F_COHESION: u32 = 0u;
const F_INERTIA: u32 = 1u;
const F_RMS: u32 = 2u;
const F_SPREAD: u32 = 3u;
const F_SKEW: u32 = 4u;
const F_MIN: u32 = 5u;
const F_MAX: u32 = 6u;
const F_MEAN_NORM: u32 = 7u;
const F_QUALITY: u32 = 8u;
const F_OFFSET: u32 = 9u;
const F_NOVELTY: u32 = 10u;
const F_OUTLIER: u32 = 11u;
const F_CORE: u32 = 12u;
const F_CORE_PERIPHERY: u32 = 13u;
const F_OUTLIER_T: u32 = 14u;
const F_CORE_T: u32 = 15u;
const F_GLOBAL_TERM: u32 = 16u;
const FIELDS: u32 = 17u;

const P2_COUNT: u32 = 0u;
const P2_MEAN: u32 = 1u;
const P2_M2: u32 = 2u;
const P2_M3: u32 = 3u;
const P2_MIN: u32 = 4u;
const P2_MAX: u32 = 5u;
const P2_SUM_SQ: u32 = 6u;
const P2_SUM_NORM: u32 = 7u;

const P3_OUTLIERS: u32 = 0u;
const P3_CORE: u32 = 1u;
const P3_CORE_SUM: u32 = 2u;
const P3_PERIPHERY_SUM: u32 = 3u;

fn cl_nan() -> f32 {
    return bitcast<f32>(0x7fc00000u);
}

fn cl_lanes(dim: u32) -> u32 {
    return select(1u, 4u, (dim & 3u) == 0u);
}

fn cl_slabs(dim: u32) -> u32 {
    return (dim / cl_lanes(dim) + THREADS - 1u) / THREADS;
}

// Compensated sums (Neumaier), four at a time: the sum is s + c.
struct Sum4 {
    s: vec4<f32>,
    c: vec4<f32>,
}

fn sum4_zero() -> Sum4 {
    return Sum4(vec4<f32>(0.0), vec4<f32>(0.0));
}

fn sum4_add(a: Sum4, x: vec4<f32>) -> Sum4 {
    let t = a.s + x;
    let e = select((x - t) + a.s, (a.s - t) + x, abs(a.s) >= abs(x));
    return Sum4(t, a.c + e);
}

fn sum4_value(a: Sum4) -> vec4<f32> {
    return a.s + a.c;
}

// The `lanes` values of column `j` of row `row` of a row-major buffer of `dim` columns
// (the unused components are 0).
fn col_index(row: u32, dim: u32, j: u32, lanes: u32) -> u32 {
    return row * dim + j * lanes;
}

// Streaming moments (crates/orrery-clusters/src/moments.rs, in f32).
struct Moments {
    n: u32,
    mean: f32,
    m2: f32,
    m3: f32,
    mn: f32,
    mx: f32,
}

fn mom_zero() -> Moments {
    return Moments(0u, 0.0, 0.0, 0.0, bitcast<f32>(0x7f800000u), bitcast<f32>(0xff800000u));
}

fn mom_push(m0: Moments, x: f32) -> Moments {
    var m = m0;
    let n1 = f32(m.n);
    m.n += 1u;
    let n = f32(m.n);
    let delta = x - m.mean;
    let dn = delta / n;
    let t1 = delta * dn * n1;
    m.mean += dn;
    m.m3 += t1 * dn * (n - 2.0) - 3.0 * dn * m.m2;
    m.m2 += t1;
    m.mn = min(m.mn, x);
    m.mx = max(m.mx, x);
    return m;
}

fn mom_merge(a: Moments, b: Moments) -> Moments {
    if b.n == 0u {
        return a;
    }
    if a.n == 0u {
        return b;
    }
    let na = f32(a.n);
    let nb = f32(b.n);
    var r: Moments;
    r.n = a.n + b.n;
    let n = f32(r.n);
    let delta = b.mean - a.mean;
    r.mean = a.mean + delta * (nb / n);
    r.m2 = a.m2 + b.m2 + delta * delta * (na * nb / n);
    r.m3 = a.m3 + b.m3 + delta * delta * delta * (na * nb * (na - nb) / (n * n)) + 3.0 * delta * (na * b.m2 - nb * a.m2) / n;
    r.mn = min(a.mn, b.mn);
    r.mx = max(a.mx, b.mx);
    return r;
}

// ---- pass 1: cl_sum_chunks ------------------------------------------------------------------

struct SumChunksParams {
    dim: u32,
    chunks: u32,
}

@group(0) @binding(0) var<storage, read> sc_vectors: array<f32>;
@group(0) @binding(1) var<storage, read> sc_offsets: array<u32>;
@group(0) @binding(2) var<storage, read> sc_chunk_cluster: array<u32>;
@group(0) @binding(3) var<storage, read> sc_chunk_start: array<u32>;
@group(0) @binding(4) var<storage, read_write> sc_part1: array<f32>;
@group(0) @binding(5) var<uniform> sc_p: SumChunksParams;

fn sc_load(i: u32, dim: u32, j: u32, lanes: u32) -> vec4<f32> {
    let at = col_index(i, dim, j, lanes);
    if lanes == 4u {
        return vec4<f32>(sc_vectors[at], sc_vectors[at + 1u], sc_vectors[at + 2u], sc_vectors[at + 3u]);
    }
    return vec4<f32>(sc_vectors[at], 0.0, 0.0, 0.0);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn cl_sum_chunks(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let dim = sc_p.dim;
    let slabs = cl_slabs(dim);
    let b = linear_block(wid, nwg);
    let g = b / slabs;
    let lanes = cl_lanes(dim);
    let j = (b % slabs) * THREADS + lid;
    if g >= sc_p.chunks || j >= dim / lanes {
        return;
    }
    let c = sc_chunk_cluster[g];
    let start = sc_chunk_start[g];
    let end = min(start + CHUNK_ROWS, sc_offsets[c + 1u]);
    var s = sum4_zero();
    for (var i = start; i < end; i++) {
        s = sum4_add(s, sc_load(i, dim, j, lanes));
    }
    let v = sum4_value(s);
    let at = g * dim + j * lanes;
    for (var k = 0u; k < lanes; k++) {
        sc_part1[at + k] = v[k];
    }
}

// ---- pass 1: cl_centroids -------------------------------------------------------------------

struct CentroidsParams {
    dim: u32,
    clusters: u32,
}

@group(0) @binding(0) var<storage, read> ce_part1: array<f32>;
@group(0) @binding(1) var<storage, read> ce_offsets: array<u32>;
@group(0) @binding(2) var<storage, read> ce_chunk_first: array<u32>;
@group(0) @binding(3) var<storage, read_write> ce_sums: array<f32>;
@group(0) @binding(4) var<storage, read_write> ce_centroids: array<f32>;
@group(0) @binding(5) var<uniform> ce_p: CentroidsParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn cl_centroids(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let dim = ce_p.dim;
    let slabs = cl_slabs(dim);
    let b = linear_block(wid, nwg);
    let c = b / slabs;
    let lanes = cl_lanes(dim);
    let j = (b % slabs) * THREADS + lid;
    if c >= ce_p.clusters || j >= dim / lanes {
        return;
    }
    let n = ce_offsets[c + 1u] - ce_offsets[c];
    var s = sum4_zero();
    for (var g = ce_chunk_first[c]; g < ce_chunk_first[c + 1u]; g++) {
        let at = col_index(g, dim, j, lanes);
        var x = vec4<f32>(ce_part1[at], 0.0, 0.0, 0.0);
        if lanes == 4u {
            x = vec4<f32>(ce_part1[at], ce_part1[at + 1u], ce_part1[at + 2u], ce_part1[at + 3u]);
        }
        s = sum4_add(s, x);
    }
    let v = sum4_value(s);
    let at = col_index(c, dim, j, lanes);
    for (var k = 0u; k < lanes; k++) {
        ce_sums[at + k] = v[k];
        if n == 0u {
            ce_centroids[at + k] = cl_nan();
        } else {
            ce_centroids[at + k] = v[k] / f32(n);
        }
    }
}

// ---- pass 1: cl_global_part -----------------------------------------------------------------

struct GlobalPartParams {
    dim: u32,
    clusters: u32,
}

@group(0) @binding(0) var<storage, read> gp_sums: array<f32>;
@group(0) @binding(1) var<storage, read_write> gp_gpart: array<f32>;
@group(0) @binding(2) var<uniform> gp_p: GlobalPartParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn cl_global_part(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let dim = gp_p.dim;
    let clusters = gp_p.clusters;
    let slabs = cl_slabs(dim);
    let b = linear_block(wid, nwg);
    let grp = b / slabs;
    let lanes = cl_lanes(dim);
    let j = (b % slabs) * THREADS + lid;
    if grp >= (clusters + GROUP - 1u) / GROUP || j >= dim / lanes {
        return;
    }
    let c1 = min(clusters, (grp + 1u) * GROUP);
    var s = sum4_zero();
    for (var c = grp * GROUP; c < c1; c++) {
        let at = col_index(c, dim, j, lanes);
        var x = vec4<f32>(gp_sums[at], 0.0, 0.0, 0.0);
        if lanes == 4u {
            x = vec4<f32>(gp_sums[at], gp_sums[at + 1u], gp_sums[at + 2u], gp_sums[at + 3u]);
        }
        s = sum4_add(s, x);
    }
    let v = sum4_value(s);
    let at = col_index(grp, dim, j, lanes);
    for (var k = 0u; k < lanes; k++) {
        gp_gpart[at + k] = v[k];
    }
}

// ---- pass 1: cl_global ----------------------------------------------------------------------

struct GlobalParams {
    dim: u32,
    clusters: u32,
}

@group(0) @binding(0) var<storage, read> gl_gpart: array<f32>;
@group(0) @binding(1) var<storage, read> gl_offsets: array<u32>;
@group(0) @binding(2) var<storage, read_write> gl_global: array<f32>;
@group(0) @binding(3) var<uniform> gl_p: GlobalParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn cl_global(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let dim = gl_p.dim;
    let lanes = cl_lanes(dim);
    let j = linear_block(wid, nwg) * THREADS + lid;
    if j >= dim / lanes {
        return;
    }
    let groups = (gl_p.clusters + GROUP - 1u) / GROUP;
    let rows = gl_offsets[gl_p.clusters];
    var s = sum4_zero();
    for (var grp = 0u; grp < groups; grp++) {
        let at = col_index(grp, dim, j, lanes);
        var x = vec4<f32>(gl_gpart[at], 0.0, 0.0, 0.0);
        if lanes == 4u {
            x = vec4<f32>(gl_gpart[at], gl_gpart[at + 1u], gl_gpart[at + 2u], gl_gpart[at + 3u]);
        }
        s = sum4_add(s, x);
    }
    let v = sum4_value(s);
    for (var k = 0u; k < lanes; k++) {
        if rows == 0u {
            gl_global[j * lanes + k] = cl_nan();
        } else {
            gl_global[j * lanes + k] = v[k] / f32(rows);
        }
    }
}

// ---- pass 2: cl_distances -------------------------------------------------------------------

struct DistancesParams {
    dim: u32,
    chunks: u32,
}

@group(0) @binding(0) var<storage, read> di_vectors: array<f32>;
@group(0) @binding(1) var<storage, read> di_offsets: array<u32>;
@group(0) @binding(2) var<storage, read> di_chunk_cluster: array<u32>;
@group(0) @binding(3) var<storage, read> di_chunk_start: array<u32>;
@group(0) @binding(4) var<storage, read> di_centroids: array<f32>;
@group(0) @binding(5) var<storage, read_write> di_member_distance: array<f32>;
@group(0) @binding(6) var<storage, read_write> di_part2: array<f32>;
@group(0) @binding(7) var<uniform> di_p: DistancesParams;

var<workgroup> di_d2: array<f32, THREADS>;
var<workgroup> di_x2: array<f32, THREADS>;
var<workgroup> di_m: array<Moments, 8>;
var<workgroup> di_sq: array<f32, 8>;
var<workgroup> di_sn: array<f32, 8>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn cl_distances(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let dim = di_p.dim;
    let chunks = di_p.chunks;
    let g = linear_block(wid, nwg);
    if g >= chunks {
        return;
    }
    let c = di_chunk_cluster[g];
    let start = di_chunk_start[g];
    let end = min(start + CHUNK_ROWS, di_offsets[c + 1u]);
    let grp = lid / 32u;
    let lane = lid % 32u;
    let mu = c * dim;
    var m = mom_zero();
    var sq = 0.0;
    var sn = 0.0;
    // One row per group of 32 invocations per step, rows start + grp, start + grp + 8, ...
    for (var i0 = start; i0 < end; i0 += 8u) {
        let i = i0 + grp;
        var d2 = 0.0;
        var x2 = 0.0;
        if i < end {
            for (var d = lane; d < dim; d += 32u) {
                let a = di_vectors[i * dim + d];
                let t = a - di_centroids[mu + d];
                d2 = fma(t, t, d2);
                x2 = fma(a, a, x2);
            }
        }
        di_d2[lid] = d2;
        di_x2[lid] = x2;
        for (var s = 16u; s > 0u; s >>= 1u) {
            workgroupBarrier();
            if lane < s {
                di_d2[lid] += di_d2[lid + s];
                di_x2[lid] += di_x2[lid + s];
            }
        }
        workgroupBarrier();
        if lane == 0u && i < end {
            let rd2 = di_d2[lid];
            let r = sqrt(rd2);
            di_member_distance[i] = r;
            m = mom_push(m, r);
            sq += rd2;
            sn += sqrt(di_x2[lid]);
        }
    }
    if lane == 0u {
        di_m[grp] = m;
        di_sq[grp] = sq;
        di_sn[grp] = sn;
    }
    workgroupBarrier();
    if lid == 0u {
        var t = di_m[0];
        var tsq = di_sq[0];
        var tsn = di_sn[0];
        for (var w = 1u; w < 8u; w++) {
            t = mom_merge(t, di_m[w]);
            tsq += di_sq[w];
            tsn += di_sn[w];
        }
        di_part2[P2_COUNT * chunks + g] = f32(t.n);
        di_part2[P2_MEAN * chunks + g] = t.mean;
        di_part2[P2_M2 * chunks + g] = t.m2;
        di_part2[P2_M3 * chunks + g] = t.m3;
        di_part2[P2_MIN * chunks + g] = t.mn;
        di_part2[P2_MAX * chunks + g] = t.mx;
        di_part2[P2_SUM_SQ * chunks + g] = tsq;
        di_part2[P2_SUM_NORM * chunks + g] = tsn;
    }
}

// ---- pass 2: cl_moments ---------------------------------------------------------------------

struct MomentsParams {
    clusters: u32,
    chunks: u32,
    outlier_sigmas: f32,
    core_scale: f32,
}

@group(0) @binding(0) var<storage, read> mo_part2: array<f32>;
@group(0) @binding(1) var<storage, read> mo_offsets: array<u32>;
@group(0) @binding(2) var<storage, read> mo_chunk_first: array<u32>;
@group(0) @binding(3) var<storage, read_write> mo_stats: array<f32>;
@group(0) @binding(4) var<uniform> mo_p: MomentsParams;

var<workgroup> mo_m: array<Moments, MERGE_THREADS>;
var<workgroup> mo_sq: array<f32, MERGE_THREADS>;
var<workgroup> mo_sn: array<f32, MERGE_THREADS>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn cl_moments(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let clusters = mo_p.clusters;
    let chunks = mo_p.chunks;
    let c = linear_block(wid, nwg);
    if c >= clusters {
        return;
    }
    let g0 = mo_chunk_first[c];
    let g1 = mo_chunk_first[c + 1u];
    let per = (g1 - g0 + MERGE_THREADS - 1u) / MERGE_THREADS;
    var m = mom_zero();
    var sq = sum4_zero();
    let a = g0 + lid * per;
    let b = min(g1, a + per);
    for (var g = a; g < b; g++) {
        let p = Moments(
            u32(mo_part2[P2_COUNT * chunks + g]),
            mo_part2[P2_MEAN * chunks + g],
            mo_part2[P2_M2 * chunks + g],
            mo_part2[P2_M3 * chunks + g],
            mo_part2[P2_MIN * chunks + g],
            mo_part2[P2_MAX * chunks + g],
        );
        m = mom_merge(m, p);
        sq = sum4_add(sq, vec4<f32>(mo_part2[P2_SUM_SQ * chunks + g], mo_part2[P2_SUM_NORM * chunks + g], 0.0, 0.0));
    }
    let sv = sum4_value(sq);
    mo_m[lid] = m;
    mo_sq[lid] = sv.x;
    mo_sn[lid] = sv.y;
    workgroupBarrier();
    for (var s = MERGE_THREADS / 2u; s > 0u; s >>= 1u) {
        if lid < s {
            mo_m[lid] = mom_merge(mo_m[lid], mo_m[lid + s]);
            mo_sq[lid] += mo_sq[lid + s];
            mo_sn[lid] += mo_sn[lid + s];
        }
        workgroupBarrier();
    }
    if lid != 0u {
        return;
    }
    let n = mo_offsets[c + 1u] - mo_offsets[c];
    if n == 0u {
        for (var k = 0u; k < FIELDS; k++) {
            mo_stats[k * clusters + c] = cl_nan();
        }
        return;
    }
    let r = mo_m[0];
    let nf = f32(n);
    let spread = sqrt(max(r.m2 / nf, 0.0));
    var skew = 0.0;
    if r.m2 > 0.0 {
        skew = sqrt(nf) * r.m3 / (r.m2 * sqrt(r.m2));
    }
    mo_stats[F_COHESION * clusters + c] = r.mean;
    mo_stats[F_INERTIA * clusters + c] = mo_sq[0];
    mo_stats[F_RMS * clusters + c] = sqrt(mo_sq[0] / nf);
    mo_stats[F_SPREAD * clusters + c] = spread;
    mo_stats[F_SKEW * clusters + c] = skew;
    mo_stats[F_MIN * clusters + c] = r.mn;
    mo_stats[F_MAX * clusters + c] = r.mx;
    mo_stats[F_MEAN_NORM * clusters + c] = mo_sn[0] / nf;
    mo_stats[F_OUTLIER_T * clusters + c] = r.mean + mo_p.outlier_sigmas * spread;
    mo_stats[F_CORE_T * clusters + c] = mo_p.core_scale * r.mean;
}

// ---- pass 3: cl_thresholds ------------------------------------------------------------------

struct ThresholdsParams {
    clusters: u32,
    chunks: u32,
}

@group(0) @binding(0) var<storage, read> th_member_distance: array<f32>;
@group(0) @binding(1) var<storage, read> th_offsets: array<u32>;
@group(0) @binding(2) var<storage, read> th_chunk_cluster: array<u32>;
@group(0) @binding(3) var<storage, read> th_chunk_start: array<u32>;
@group(0) @binding(4) var<storage, read> th_stats: array<f32>;
@group(0) @binding(5) var<storage, read_write> th_part3: array<u32>;
@group(0) @binding(6) var<uniform> th_p: ThresholdsParams;

var<workgroup> th_o: array<u32, CHUNK_ROWS>;
var<workgroup> th_k: array<u32, CHUNK_ROWS>;
var<workgroup> th_cs: array<f32, CHUNK_ROWS>;
var<workgroup> th_ps: array<f32, CHUNK_ROWS>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn cl_thresholds(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let clusters = th_p.clusters;
    let chunks = th_p.chunks;
    let g = linear_block(wid, nwg);
    if g >= chunks {
        return;
    }
    let c = th_chunk_cluster[g];
    let i = th_chunk_start[g] + lid;
    let valid = i < th_offsets[c + 1u];
    var r = 0.0;
    if valid {
        r = th_member_distance[i];
    }
    let out = valid && r > th_stats[F_OUTLIER_T * clusters + c];
    let core = valid && r <= th_stats[F_CORE_T * clusters + c];
    th_o[lid] = select(0u, 1u, out);
    th_k[lid] = select(0u, 1u, core);
    th_cs[lid] = select(0.0, r, core);
    th_ps[lid] = select(0.0, r, valid && !core);
    workgroupBarrier();
    for (var s = CHUNK_ROWS / 2u; s > 0u; s >>= 1u) {
        if lid < s {
            th_o[lid] += th_o[lid + s];
            th_k[lid] += th_k[lid + s];
            th_cs[lid] += th_cs[lid + s];
            th_ps[lid] += th_ps[lid + s];
        }
        workgroupBarrier();
    }
    if lid == 0u {
        th_part3[P3_OUTLIERS * chunks + g] = th_o[0];
        th_part3[P3_CORE * chunks + g] = th_k[0];
        th_part3[P3_CORE_SUM * chunks + g] = bitcast<u32>(th_cs[0]);
        th_part3[P3_PERIPHERY_SUM * chunks + g] = bitcast<u32>(th_ps[0]);
    }
}

// ---- cl_finish ------------------------------------------------------------------------------

struct FinishParams {
    dim: u32,
    clusters: u32,
    chunks: u32,
}

@group(0) @binding(0) var<storage, read> fi_centroids: array<f32>;
@group(0) @binding(1) var<storage, read> fi_global: array<f32>;
@group(0) @binding(2) var<storage, read> fi_offsets: array<u32>;
@group(0) @binding(3) var<storage, read> fi_chunk_first: array<u32>;
@group(0) @binding(4) var<storage, read> fi_part3: array<u32>;
@group(0) @binding(5) var<storage, read_write> fi_stats: array<f32>;
@group(0) @binding(6) var<uniform> fi_p: FinishParams;

var<workgroup> fi_a: array<f32, THREADS>;
var<workgroup> fi_b: array<f32, THREADS>;
var<workgroup> fi_cs: array<f32, THREADS>;
var<workgroup> fi_ps: array<f32, THREADS>;
var<workgroup> fi_o: array<u32, THREADS>;
var<workgroup> fi_k: array<u32, THREADS>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn cl_finish(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let dim = fi_p.dim;
    let clusters = fi_p.clusters;
    let chunks = fi_p.chunks;
    let c = linear_block(wid, nwg);
    if c >= clusters {
        return;
    }
    let n = fi_offsets[c + 1u] - fi_offsets[c];
    if n == 0u {
        if lid == 0u {
            fi_stats[F_GLOBAL_TERM * clusters + c] = 0.0;
        }
        return;
    }
    var a = 0.0;
    var b = 0.0;
    for (var d = lid; d < dim; d += THREADS) {
        let u = fi_centroids[c * dim + d];
        let v = u - fi_global[d];
        a = fma(u, u, a);
        b = fma(v, v, b);
    }
    var o = 0u;
    var k = 0u;
    var cs = 0.0;
    var ps = 0.0;
    for (var g = fi_chunk_first[c] + lid; g < fi_chunk_first[c + 1u]; g += THREADS) {
        o += fi_part3[P3_OUTLIERS * chunks + g];
        k += fi_part3[P3_CORE * chunks + g];
        cs += bitcast<f32>(fi_part3[P3_CORE_SUM * chunks + g]);
        ps += bitcast<f32>(fi_part3[P3_PERIPHERY_SUM * chunks + g]);
    }
    fi_a[lid] = a;
    fi_b[lid] = b;
    fi_o[lid] = o;
    fi_k[lid] = k;
    fi_cs[lid] = cs;
    fi_ps[lid] = ps;
    workgroupBarrier();
    for (var s = THREADS / 2u; s > 0u; s >>= 1u) {
        if lid < s {
            fi_a[lid] += fi_a[lid + s];
            fi_b[lid] += fi_b[lid + s];
            fi_o[lid] += fi_o[lid + s];
            fi_k[lid] += fi_k[lid + s];
            fi_cs[lid] += fi_cs[lid + s];
            fi_ps[lid] += fi_ps[lid + s];
        }
        workgroupBarrier();
    }
    if lid != 0u {
        return;
    }
    let nf = f32(n);
    let mean_norm = fi_stats[F_MEAN_NORM * clusters + c];
    var quality = 0.0;
    if mean_norm > 0.0 {
        quality = min(sqrt(fi_a[0]) / mean_norm, 1.0);
    }
    let offset = sqrt(fi_b[0]);
    let cores = fi_k[0];
    let periphery = n - cores;
    var cp = 1.0;
    if cores != 0u && periphery != 0u {
        cp = (fi_cs[0] / f32(cores)) / (fi_ps[0] / f32(periphery));
    }
    fi_stats[F_QUALITY * clusters + c] = quality;
    fi_stats[F_OFFSET * clusters + c] = offset;
    fi_stats[F_OUTLIER * clusters + c] = f32(fi_o[0]) / nf;
    fi_stats[F_CORE * clusters + c] = f32(cores) / nf;
    fi_stats[F_CORE_PERIPHERY * clusters + c] = cp;
    fi_stats[F_GLOBAL_TERM * clusters + c] = fi_stats[F_INERTIA * clusters + c] + nf * offset * offset;
}

// ---- cl_novelty -----------------------------------------------------------------------------

struct NoveltyParams {
    dim: u32,
    clusters: u32,
}

@group(0) @binding(0) var<storage, read> no_offsets: array<u32>;
@group(0) @binding(1) var<storage, read_write> no_global: array<f32>;
@group(0) @binding(2) var<storage, read_write> no_stats: array<f32>;
@group(0) @binding(3) var<uniform> no_p: NoveltyParams;

var<workgroup> no_sum: array<f32, THREADS>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn cl_novelty(@builtin(local_invocation_index) lid: u32) {
    let clusters = no_p.clusters;
    var s = sum4_zero();
    for (var c = lid; c < clusters; c += THREADS) {
        s = sum4_add(s, vec4<f32>(no_stats[F_GLOBAL_TERM * clusters + c], 0.0, 0.0, 0.0));
    }
    no_sum[lid] = sum4_value(s).x;
    workgroupBarrier();
    for (var h = THREADS / 2u; h > 0u; h >>= 1u) {
        if lid < h {
            no_sum[lid] += no_sum[lid + h];
        }
        workgroupBarrier();
    }
    let rows = no_offsets[clusters];
    var sg = cl_nan();
    if rows != 0u {
        sg = sqrt(no_sum[0] / f32(rows));
    }
    if lid == 0u {
        no_global[no_p.dim] = sg;
    }
    for (var c = lid; c < clusters; c += THREADS) {
        let n = no_offsets[c + 1u] - no_offsets[c];
        var v = cl_nan();
        if n != 0u {
            v = 0.0;
            if rows != 0u && sg > 0.0 {
                v = no_stats[F_OFFSET * clusters + c] / sg;
            }
        }
        no_stats[F_NOVELTY * clusters + c] = v;
    }
}
