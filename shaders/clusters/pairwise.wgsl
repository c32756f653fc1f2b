// shaders/clusters/pairwise.wgsl — the scale, Gaussian-potential and diversity families on
// the GPU (crates/orrery-clusters/src/gpu/pairwise.rs; host references crate::scale,
// crate::potential, crate::diversity), the WGSL twin of kernels/clusters/pairwise.cu: the
// same nine entry points with the same arguments and launch grids, the same pairwise item
// decode (a cluster by binary search in the item prefix, then runs of its T_c^2 tile pairs),
// the same f32 arithmetic and sentinels. Module "clusters/pairwise": pairs.wgsl (the shared
// prelude: constants, sums, the distance tile), then this file (it //#includes core/common).
//
// Differences from pairwise.cu, none visible in the results beyond f32 rounding:
//   - Tile-pair indices are u32 (WGSL has no u64): the host refuses clusters of more than
//     65,535 tiles (4,194,240 members) on wgpu (gpu/plan.rs, WGSL_MAX_CLUSTER), so T_c^2 <
//     2^32. Pair counts (up to 2^43) and 64-bit histogram counters are vec2<u32> (low word
//     first); a counter's increment carries into the high word when the low word wraps.
//   - The distance tile stages PT_KC_W = 16 dimensions at a time (16 KB of workgroup
//     memory on many adapters), not 32; warp shuffles are workgroup-memory trees.
//   - The entry points that share a binding slot with the same meaning share one module-
//     scope variable (pt_vectors, pw_offsets, pw_item_prefix, pw_in, pw_hist, pw_p), so the
//     tile and the item decode are written once.
//   - NaN is written as its bits (bitcast), never computed.
//
// Launch shape, buffers, invariants, cost model: pairwise.cu's header (bindings in argument
// order, then the uniform block of the scalars). Workgroup sizes: PT_THREADS (256) except
// div_merge (PT_MERGE_THREADS, 128); the host launches exactly these.
//
// Measured cost: lavapipe only (correctness), not measured on a GPU yet.

//#include core/common


const CL_F_MAX: u32 = 6u;

const SC_F_SIGMA: u32 = 0u;
const SC_F_WIDTH: u32 = 1u;
const SC_FIELDS: u32 = 2u;

const POT_F_DEPTH: u32 = 0u;
const POT_F_CURVATURE: u32 = 1u;
const POT_F_ESCAPE: u32 = 2u;
const POT_F_ENTANGLEMENT: u32 = 3u;
const POT_F_NEAREST_DISTANCE: u32 = 4u;
const POT_FIELDS: u32 = 5u;

const DIV_F_MEAN: u32 = 0u;
const DIV_F_STD: u32 = 1u;
const DIV_F_SKEW: u32 = 2u;
const DIV_F_CV: u32 = 3u;
const DIV_F_MIN: u32 = 4u;
const DIV_F_MAX: u32 = 5u;
const DIV_F_ENTROPY: u32 = 6u;
const DIV_F_PERPLEXITY: u32 = 7u;
const DIV_F_LO: u32 = 8u;
const DIV_F_WIDTH: u32 = 9u;
const DIV_FIELDS: u32 = 10u;

const NO_CLUSTER: u32 = 0xffffffffu;

fn inf_f32() -> f32 {
    return bitcast<f32>(0x7f800000u);
}

// ---- u64 as vec2<u32> (low, high) --------------------------------------------------------

fn u64_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}

// a * b for a, b < 2^32, exact.
fn u64_mul(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    var r = vec2<u32>(a0 * b0, a1 * b1);
    let m1 = a0 * b1;
    let m2 = a1 * b0;
    r = u64_add(r, vec2<u32>(m1 << 16u, m1 >> 16u));
    r = u64_add(r, vec2<u32>(m2 << 16u, m2 >> 16u));
    return r;
}

fn u64_f32(a: vec2<u32>) -> f32 {
    return f32(a.x) + f32(a.y) * 4294967296.0;
}

// n (n - 1) / 2.
fn pair_count(n: u32) -> vec2<u32> {
    if n < 2u {
        return vec2<u32>(0u, 0u);
    }
    if (n & 1u) == 0u {
        return u64_mul(n / 2u, n - 1u);
    }
    return u64_mul(n, (n - 1u) / 2u);
}

fn pt_kernel(d2: f32, s2: f32) -> f32 {
    if s2 > 0.0 {
        return exp(-d2 / s2);
    }
    return select(0.0, 1.0, d2 == 0.0);
}

fn pw_bin(d: f32, lo: f32, h: f32, bins: u32) -> u32 {
    if !(h > 0.0) {
        return 0u;
    }
    let q = (d - lo) / h;
    if q >= f32(bins - 1u) {
        return bins - 1u;
    }
    return select(0u, u32(q), q > 0.0);
}

// ---- moments with a float count (pairs.cuh's PtMoments) ----------------------------------

struct Moments {
    n: f32,
    mean: f32,
    m2: f32,
    m3: f32,
    mn: f32,
    mx: f32,
}

fn mom_zero() -> Moments {
    return Moments(0.0, 0.0, 0.0, 0.0, inf_f32(), -inf_f32());
}

fn mom_push(m0: Moments, x: f32) -> Moments {
    var m = m0;
    let n1 = m.n;
    m.n += 1.0;
    let n = m.n;
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
    if b.n == 0.0 {
        return a;
    }
    if a.n == 0.0 {
        return b;
    }
    let na = a.n;
    let nb = b.n;
    var r: Moments;
    r.n = na + nb;
    let n = r.n;
    let delta = b.mean - a.mean;
    r.mean = a.mean + delta * (nb / n);
    r.m2 = a.m2 + b.m2 + delta * delta * (na * (nb / n));
    r.m3 = a.m3 + b.m3 + delta * delta * delta * (na * (nb / n) * ((na - nb) / n)) + 3.0 * delta * (na * b.m2 - nb * a.m2) / n;
    r.mn = min(a.mn, b.mn);
    r.mx = max(a.mx, b.mx);
    return r;
}

// ---- shared bindings of the item entry points --------------------------------------------

struct ItemParams {
    dim: u32,
    clusters: u32,
    items: u32,
}

@group(0) @binding(0) var<storage, read> pt_vectors: array<f32>;
@group(0) @binding(1) var<storage, read> pw_offsets: array<u32>;
@group(0) @binding(2) var<storage, read> pw_item_prefix: array<u32>;
@group(0) @binding(3) var<storage, read> pw_in: array<f32>;
@group(0) @binding(4) var<storage, read_write> pw_hist: array<atomic<u32>>;
@group(0) @binding(5) var<uniform> pw_p: ItemParams;

struct Item {
    c: u32,
    first: u32,
    n: u32,
    tiles: u32,
    l0: u32,
    l1: u32,
}

fn pt_item(clusters: u32, item: u32) -> Item {
    var lo = 0u;
    var hi = clusters;
    while hi - lo > 1u {
        let mid = (lo + hi) >> 1u;
        if pw_item_prefix[mid] <= item {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    var it: Item;
    it.c = lo;
    it.first = pw_offsets[lo];
    it.n = pw_offsets[lo + 1u] - it.first;
    it.tiles = (it.n + PT_TILE - 1u) / PT_TILE;
    let pairs = it.tiles * it.tiles;
    let group = max(1u, (pairs + PT_MAX_ITEMS - 1u) / PT_MAX_ITEMS);
    it.l0 = (item - pw_item_prefix[lo]) * group;
    it.l1 = it.l0 + min(group, pairs - min(pairs, it.l0));
    return it;
}


fn pt_upper(ti: u32, tj: u32, i: u32, j: u32, nr: u32, nc: u32) -> bool {
    return i < nr && j < nc && (ti < tj || j > i);
}

var<workgroup> pw_h: array<atomic<u32>, 256>;

// One histogram pass over the item's pairs i < j with (lo, h), then the counters.
fn pw_histogram(lid: u32, it: Item, dim: u32, lo: f32, h: f32, bins: u32) {
    let ty = lid >> 4u;
    let tx = lid & 15u;
    for (var b = lid; b < bins; b += PT_THREADS) {
        atomicStore(&pw_h[b], 0u);
    }
    for (var l = it.l0; l < it.l1; l++) {
        let ti = l / it.tiles;
        let tj = l % it.tiles;
        if ti > tj {
            continue;
        }
        let r0 = it.first + ti * PT_TILE;
        let c0 = it.first + tj * PT_TILE;
        let nr = min(PT_TILE, it.first + it.n - r0);
        let nc = min(PT_TILE, it.first + it.n - c0);
        pt_tile(lid, dim, r0, nr, c0, nc);
        for (var a = 0u; a < 4u; a++) {
            for (var b = 0u; b < 4u; b++) {
                if pt_upper(ti, tj, ty + 16u * a, tx + 16u * b, nr, nc) {
                    atomicAdd(&pw_h[pw_bin(sqrt(pt_acc[4u * a + b]), lo, h, bins)], 1u);
                }
            }
        }
    }
    workgroupBarrier();
    for (var b = lid; b < bins; b += PT_THREADS) {
        let v = atomicLoad(&pw_h[b]);
        if v != 0u {
            let word = 2u * (bins * it.c + b);
            let old = atomicAdd(&pw_hist[word], v);
            if old + v < old {
                atomicAdd(&pw_hist[word + 1u], 1u);
            }
        }
    }
}

// ---- scale --------------------------------------------------------------------------------

@compute @workgroup_size(WORKGROUP_SIZE)
fn sc_hist(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let b = linear_block(wid, nwg);
    if b >= pw_p.items {
        return;
    }
    let it = pt_item(pw_p.clusters, b);
    let h = 2.0 * pw_in[CL_F_MAX * pw_p.clusters + it.c] / f32(SIGMA_BINS);
    pw_histogram(lid, it, pw_p.dim, 0.0, h, SIGMA_BINS);
}

struct ClusterParams {
    clusters: u32,
}

@group(0) @binding(0) var<storage, read> ss_offsets: array<u32>;
@group(0) @binding(1) var<storage, read> ss_cstats: array<f32>;
@group(0) @binding(2) var<storage, read> ss_hist: array<u32>;
@group(0) @binding(3) var<storage, read_write> ss_sstats: array<f32>;
@group(0) @binding(4) var<uniform> ss_p: ClusterParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn sc_sigma(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let clusters = ss_p.clusters;
    let c = linear_block(wid, nwg) * PT_THREADS + lid;
    if c >= clusters {
        return;
    }
    let n = ss_offsets[c + 1u] - ss_offsets[c];
    let h = 2.0 * ss_cstats[CL_F_MAX * clusters + c] / f32(SIGMA_BINS);
    let m = pair_count(n);
    var sigma = 0.0;
    if n == 0u {
        sigma = nan_f32();
    } else if (m.x != 0u || m.y != 0u) && h > 0.0 {
        // k = ceil(m / 2)
        let m1 = u64_add(m, vec2<u32>(1u, 0u));
        let k = vec2<u32>((m1.x >> 1u) | (m1.y << 31u), m1.y >> 1u);
        var below = vec2<u32>(0u, 0u);
        for (var b = 0u; b < SIGMA_BINS; b++) {
            let at = 2u * (SIGMA_BINS * c + b);
            let cnt = vec2<u32>(ss_hist[at], ss_hist[at + 1u]);
            let upto = u64_add(below, cnt);
            if !u64_lt(upto, k) && (cnt.x != 0u || cnt.y != 0u) {
                sigma = h * (f32(b) + (u64_f32(u64_sub(k, below)) - 0.5) / u64_f32(cnt));
                break;
            }
            below = upto;
        }
    }
    ss_sstats[SC_F_SIGMA * clusters + c] = sigma;
    ss_sstats[SC_F_WIDTH * clusters + c] = select(h, nan_f32(), n == 0u);
}

// ---- potential ----------------------------------------------------------------------------

struct NearestParams {
    dim: u32,
    clusters: u32,
}

@group(0) @binding(0) var<storage, read> pn_centroids: array<f32>;
@group(0) @binding(1) var<storage, read> pn_offsets: array<u32>;
@group(0) @binding(2) var<storage, read_write> pn_nearest: array<u32>;
@group(0) @binding(3) var<storage, read_write> pn_pstats: array<f32>;
@group(0) @binding(4) var<uniform> pn_p: NearestParams;

var<workgroup> pn_red: array<f32, 256>;
var<workgroup> pn_best: array<f32, 8>;
var<workgroup> pn_arg: array<u32, 8>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn pot_nearest(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let dim = pn_p.dim;
    let clusters = pn_p.clusters;
    let c = linear_block(wid, nwg);
    if c >= clusters {
        return;
    }
    let grp = lid / 32u;
    let lane = lid % 32u;
    let live = pn_offsets[c + 1u] > pn_offsets[c];
    var best = inf_f32();
    var arg = NO_CLUSTER;
    if live {
        for (var o0 = 0u; o0 < clusters; o0 += PT_THREADS / 32u) {
            let o = o0 + grp;
            var ok = o < clusters && o != c;
            if ok {
                ok = pn_offsets[o + 1u] > pn_offsets[o];
            }
            var s = 0.0;
            if ok {
                for (var d = lane; d < dim; d += 32u) {
                    let u = pn_centroids[c * dim + d] - pn_centroids[o * dim + d];
                    s = fma(u, u, s);
                }
            }
            pn_red[lid] = s;
            for (var h = 16u; h > 0u; h >>= 1u) {
                workgroupBarrier();
                if lane < h {
                    pn_red[lid] += pn_red[lid + h];
                }
            }
            workgroupBarrier();
            if ok && pn_red[lid - lane] < best {
                best = pn_red[lid - lane];
                arg = o;
            }
            workgroupBarrier();
        }
    }
    if lane == 0u {
        pn_best[grp] = best;
        pn_arg[grp] = arg;
    }
    workgroupBarrier();
    if lid != 0u {
        return;
    }
    for (var w = 1u; w < PT_THREADS / 32u; w++) {
        if pn_best[w] < best || (pn_best[w] == best && pn_arg[w] < arg) {
            best = pn_best[w];
            arg = pn_arg[w];
        }
    }
    pn_nearest[c] = arg;
    pn_pstats[POT_F_NEAREST_DISTANCE * clusters + c] = select(nan_f32(), sqrt(best), live);
}

@group(0) @binding(4) var<storage, read_write> pe_part_e: array<f32>;

var<workgroup> pe_s: array<f32, 256>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn pot_entangle(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let b = linear_block(wid, nwg);
    if b >= pw_p.items {
        return;
    }
    let it = pt_item(pw_p.clusters, b);
    let sigma = pw_in[SC_F_SIGMA * pw_p.clusters + it.c];
    let s2 = sigma * sigma;
    let inv = select(0.0, 1.0 / s2, s2 > 0.0);
    let ty = lid >> 4u;
    let tx = lid & 15u;
    var s = Sum(0.0, 0.0);
    for (var l = it.l0; l < it.l1; l++) {
        let ti = l / it.tiles;
        let tj = l % it.tiles;
        if ti > tj {
            continue;
        }
        let r0 = it.first + ti * PT_TILE;
        let c0 = it.first + tj * PT_TILE;
        let nr = min(PT_TILE, it.first + it.n - r0);
        let nc = min(PT_TILE, it.first + it.n - c0);
        pt_tile(lid, pw_p.dim, r0, nr, c0, nc);
        var part = 0.0;
        for (var a = 0u; a < 4u; a++) {
            for (var q = 0u; q < 4u; q++) {
                if pt_upper(ti, tj, ty + 16u * a, tx + 16u * q, nr, nc) {
                    let d2 = pt_acc[4u * a + q];
                    if s2 > 0.0 {
                        part += exp(-d2 * inv);
                    } else if d2 == 0.0 {
                        part += 1.0;
                    }
                }
            }
        }
        s = sum_add(s, part);
    }
    pe_s[lid] = sum_value(s);
    for (var h = PT_THREADS / 2u; h > 0u; h >>= 1u) {
        workgroupBarrier();
        if lid < h {
            pe_s[lid] += pe_s[lid + h];
        }
    }
    workgroupBarrier();
    if lid == 0u {
        pe_part_e[b] = pe_s[0];
    }
}

struct PotFinishParams {
    dim: u32,
    clusters: u32,
}

@group(0) @binding(0) var<storage, read> pf_member_distance: array<f32>;
@group(0) @binding(1) var<storage, read> pf_offsets: array<u32>;
@group(0) @binding(2) var<storage, read> pf_item_prefix: array<u32>;
@group(0) @binding(3) var<storage, read> pf_part_e: array<f32>;
@group(0) @binding(4) var<storage, read> pf_sstats: array<f32>;
@group(0) @binding(5) var<storage, read_write> pf_pstats: array<f32>;
@group(0) @binding(6) var<uniform> pf_p: PotFinishParams;

var<workgroup> pf_w: array<f32, 256>;
var<workgroup> pf_k: array<f32, 256>;
var<workgroup> pf_e: array<f32, 256>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn pot_finish(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let clusters = pf_p.clusters;
    let c = linear_block(wid, nwg);
    if c >= clusters {
        return;
    }
    let s0 = pf_offsets[c];
    let n = pf_offsets[c + 1u] - s0;
    let sigma = pf_sstats[SC_F_SIGMA * clusters + c];
    let s2 = 2.0 * sigma * sigma;
    let dsig = f32(pf_p.dim) * sigma * sigma;
    var w = Sum(0.0, 0.0);
    var k = Sum(0.0, 0.0);
    var e = Sum(0.0, 0.0);
    for (var i = s0 + lid; i < s0 + n; i += PT_THREADS) {
        let r = pf_member_distance[i];
        let r2 = r * r;
        let kr = pt_kernel(r2, s2);
        w = sum_add(w, kr);
        k = sum_add(k, select(kr, kr * (1.0 - r2 / dsig), sigma > 0.0));
    }
    for (var g = pf_item_prefix[c] + lid; g < pf_item_prefix[c + 1u]; g += PT_THREADS) {
        e = sum_add(e, pf_part_e[g]);
    }
    pf_w[lid] = sum_value(w);
    pf_k[lid] = sum_value(k);
    pf_e[lid] = sum_value(e);
    for (var h = PT_THREADS / 2u; h > 0u; h >>= 1u) {
        workgroupBarrier();
        if lid < h {
            pf_w[lid] += pf_w[lid + h];
            pf_k[lid] += pf_k[lid + h];
            pf_e[lid] += pf_e[lid + h];
        }
    }
    workgroupBarrier();
    if lid != 0u {
        return;
    }
    if n == 0u {
        pf_pstats[POT_F_DEPTH * clusters + c] = nan_f32();
        pf_pstats[POT_F_CURVATURE * clusters + c] = nan_f32();
        pf_pstats[POT_F_ESCAPE * clusters + c] = nan_f32();
        pf_pstats[POT_F_ENTANGLEMENT * clusters + c] = nan_f32();
        return;
    }
    let nf = f32(n);
    let delta = pf_pstats[POT_F_NEAREST_DISTANCE * clusters + c];
    pf_pstats[POT_F_DEPTH * clusters + c] = pf_w[0] / nf;
    pf_pstats[POT_F_CURVATURE * clusters + c] = pf_k[0] / nf;
    var escape = 0.0;
    if delta < inf_f32() {
        escape = pt_kernel(delta * delta, 8.0 * sigma * sigma);
    }
    pf_pstats[POT_F_ESCAPE * clusters + c] = escape;
    var ent = 0.0;
    if n >= 2u {
        let purity = (nf + 2.0 * pf_e[0]) / (nf * nf);
        ent = clamp((1.0 - purity) * (nf / (nf - 1.0)), 0.0, 1.0);
    }
    pf_pstats[POT_F_ENTANGLEMENT * clusters + c] = ent;
}

// ---- diversity ----------------------------------------------------------------------------

@group(0) @binding(3) var<storage, read_write> dm_part_m: array<f32>;
@group(0) @binding(4) var<uniform> dm_p: ItemParams;

var<workgroup> dm_m: array<Moments, 256>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn div_moments(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let items = dm_p.items;
    let g = linear_block(wid, nwg);
    if g >= items {
        return;
    }
    let it = pt_item(dm_p.clusters, g);
    let ty = lid >> 4u;
    let tx = lid & 15u;
    var m = mom_zero();
    for (var l = it.l0; l < it.l1; l++) {
        let ti = l / it.tiles;
        let tj = l % it.tiles;
        if ti > tj {
            continue;
        }
        let r0 = it.first + ti * PT_TILE;
        let c0 = it.first + tj * PT_TILE;
        let nr = min(PT_TILE, it.first + it.n - r0);
        let nc = min(PT_TILE, it.first + it.n - c0);
        pt_tile(lid, dm_p.dim, r0, nr, c0, nc);
        for (var a = 0u; a < 4u; a++) {
            for (var q = 0u; q < 4u; q++) {
                if pt_upper(ti, tj, ty + 16u * a, tx + 16u * q, nr, nc) {
                    m = mom_push(m, sqrt(pt_acc[4u * a + q]));
                }
            }
        }
    }
    dm_m[lid] = m;
    for (var h = PT_THREADS / 2u; h > 0u; h >>= 1u) {
        workgroupBarrier();
        if lid < h {
            dm_m[lid] = mom_merge(dm_m[lid], dm_m[lid + h]);
        }
    }
    workgroupBarrier();
    if lid != 0u {
        return;
    }
    let r = dm_m[0];
    dm_part_m[0u * items + g] = r.n;
    dm_part_m[1u * items + g] = r.mean;
    dm_part_m[2u * items + g] = r.m2;
    dm_part_m[3u * items + g] = r.m3;
    dm_part_m[4u * items + g] = r.mn;
    dm_part_m[5u * items + g] = r.mx;
}

struct MergeParams {
    clusters: u32,
    items: u32,
}

@group(0) @binding(0) var<storage, read> dg_part_m: array<f32>;
@group(0) @binding(1) var<storage, read> dg_offsets: array<u32>;
@group(0) @binding(2) var<storage, read> dg_item_prefix: array<u32>;
@group(0) @binding(3) var<storage, read_write> dg_dstats: array<f32>;
@group(0) @binding(4) var<uniform> dg_p: MergeParams;

var<workgroup> dg_m: array<Moments, 128>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn div_merge(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let clusters = dg_p.clusters;
    let items = dg_p.items;
    let c = linear_block(wid, nwg);
    if c >= clusters {
        return;
    }
    let g0 = dg_item_prefix[c];
    let g1 = dg_item_prefix[c + 1u];
    let per = (g1 - g0 + PT_MERGE_THREADS - 1u) / PT_MERGE_THREADS;
    let a = g0 + lid * per;
    let b = min(g1, a + per);
    var m = mom_zero();
    for (var g = a; g < b; g++) {
        let p = Moments(dg_part_m[g], dg_part_m[items + g], dg_part_m[2u * items + g], dg_part_m[3u * items + g],
            dg_part_m[4u * items + g], dg_part_m[5u * items + g]);
        m = mom_merge(m, p);
    }
    dg_m[lid] = m;
    for (var h = PT_MERGE_THREADS / 2u; h > 0u; h >>= 1u) {
        workgroupBarrier();
        if lid < h {
            dg_m[lid] = mom_merge(dg_m[lid], dg_m[lid + h]);
        }
    }
    workgroupBarrier();
    if lid != 0u {
        return;
    }
    let n = dg_offsets[c + 1u] - dg_offsets[c];
    let r = dg_m[0];
    if r.n == 0.0 {
        let fill = select(0.0, nan_f32(), n == 0u);
        for (var k = 0u; k < DIV_FIELDS; k++) {
            dg_dstats[k * clusters + c] = fill;
        }
        dg_dstats[DIV_F_PERPLEXITY * clusters + c] = select(1.0, nan_f32(), n == 0u);
        dg_dstats[DIV_F_LO * clusters + c] = 0.0;
        dg_dstats[DIV_F_WIDTH * clusters + c] = 0.0;
        return;
    }
    let sd = sqrt(max(r.m2 / r.n, 0.0));
    dg_dstats[DIV_F_MEAN * clusters + c] = r.mean;
    dg_dstats[DIV_F_STD * clusters + c] = sd;
    var skew = 0.0;
    if r.m2 > 0.0 {
        skew = sqrt(r.n) * r.m3 / (r.m2 * sqrt(r.m2));
    }
    dg_dstats[DIV_F_SKEW * clusters + c] = skew;
    dg_dstats[DIV_F_CV * clusters + c] = select(0.0, sd / r.mean, r.mean > 0.0);
    dg_dstats[DIV_F_MIN * clusters + c] = r.mn;
    dg_dstats[DIV_F_MAX * clusters + c] = r.mx;
    dg_dstats[DIV_F_LO * clusters + c] = r.mn;
    dg_dstats[DIV_F_WIDTH * clusters + c] = (r.mx - r.mn) / f32(DIV_BINS);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn div_hist(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let b = linear_block(wid, nwg);
    if b >= pw_p.items {
        return;
    }
    let it = pt_item(pw_p.clusters, b);
    let lo = pw_in[DIV_F_LO * pw_p.clusters + it.c];
    let w = pw_in[DIV_F_WIDTH * pw_p.clusters + it.c];
    pw_histogram(lid, it, pw_p.dim, lo, w, DIV_BINS);
}

@group(0) @binding(0) var<storage, read> de_offsets: array<u32>;
@group(0) @binding(1) var<storage, read> de_hist: array<u32>;
@group(0) @binding(2) var<storage, read_write> de_dstats: array<f32>;
@group(0) @binding(3) var<uniform> de_p: ClusterParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn div_entropy(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let clusters = de_p.clusters;
    let c = linear_block(wid, nwg) * PT_THREADS + lid;
    if c >= clusters {
        return;
    }
    let m = pair_count(de_offsets[c + 1u] - de_offsets[c]);
    if m.x == 0u && m.y == 0u {
        return;
    }
    let total = u64_f32(m);
    var h = 0.0;
    for (var b = 0u; b < DIV_BINS; b++) {
        let at = 2u * (DIV_BINS * c + b);
        let cnt = vec2<u32>(de_hist[at], de_hist[at + 1u]);
        if cnt.x != 0u || cnt.y != 0u {
            let p = u64_f32(cnt) / total;
            h -= p * log2(p);
        }
    }
    de_dstats[DIV_F_ENTROPY * clusters + c] = clamp(h / log2(f32(DIV_BINS)), 0.0, 1.0);
    de_dstats[DIV_F_PERPLEXITY * clusters + c] = exp2(h);
}
