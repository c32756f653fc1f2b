// shaders/tree/view.wgsl — the TreeView on the GPU (crates/orrery-tree-build/src/gpu_view),
// the WGSL twin of kernels/tree/view.cu: same entry points, same arguments, same integer
// arithmetic, with u64 as vec2<u32> (low word first). Boxes in f32 only (WGSL has no
// f64): tv_boxes_f32. Module "tree/view": core/common, then this file.
//
// What it computes: see view.cu (tv_setup, tv_chain_counts, the executor's scan,
// tv_chains, the executor's 8-bit sort, tv_order, tv_nodes, tv_links, tv_ranges,
// tv_levels, tv_child_centric, tv_nf, tv_particle_leaves, tv_boxes_f32). The box rule is Geometry::cell_box's in f32:
// T(corner) = f32(f64(corner)) is computed with integer operations as the two
// round-to-nearest-even steps (u64 -> 53 bits -> 24 bits), every product and sum is one
// WGSL f32 operation (correctly rounded); WGSL cannot forbid the driver from contracting
// `min + T(corner) * unit` into an FMA, so the bit-identity of boxes is a property of the
// driver, checked by the tests (it holds on lavapipe).
//
// Launch shape: one invocation per item, any WORKGROUP_SIZE, the linear workgroup id of a
// 2D dispatch (linear_block); invocations past the bound or the live count (a meta word)
// return. Why: as view.cu (the leaf count may live on the device).
//
// Buffers (binding: direction, length): per entry below; meta is u32 x 8 (view.cu). The
// user's views (keys, lfp, nf, count) may start at any element: their `off_*` fields.
//
// Invariants: every read index is clamped into its array (view.cu).
//
// Measured cost: not measured yet.

//#include core/common

const NONE: u32 = 0xffffffffu;

const META_LEAVES: u32 = 0u;
const META_BOUNDARIES: u32 = 1u;
const META_INTERNAL: u32 = 2u;
const META_NODES: u32 = 3u;
const META_PARTICLES: u32 = 4u;
const META_DEPTH: u32 = 5u;
const META_ERRORS: u32 = 6u;

const ERR_NO_LEAVES: u32 = 1u;
const ERR_LEAF_BOUND: u32 = 2u;
const ERR_INTERNAL_COUNT: u32 = 4u;
const ERR_STARTS_ORIGIN: u32 = 8u;
const ERR_STARTS_DECREASE: u32 = 16u;
const ERR_PARTICLE_BOUND: u32 = 32u;
const ERR_NF_SENTINEL: u32 = 64u;

fn item(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return linear_block(wid, nwg) * WORKGROUP_SIZE + lid;
}

// ---- u64 as vec2<u32> ---------------------------------------------------------------------

fn shl64(v: vec2<u32>, s: u32) -> vec2<u32> {
    if s >= 64u {
        return vec2<u32>(0u, 0u);
    }
    if s >= 32u {
        return vec2<u32>(0u, v.x << (s - 32u));
    }
    if s == 0u {
        return v;
    }
    return vec2<u32>(v.x << s, (v.y << s) | (v.x >> (32u - s)));
}

fn shr64(v: vec2<u32>, s: u32) -> vec2<u32> {
    if s >= 64u {
        return vec2<u32>(0u, 0u);
    }
    if s >= 32u {
        return vec2<u32>(v.y >> (s - 32u), 0u);
    }
    if s == 0u {
        return v;
    }
    return vec2<u32>((v.x >> s) | (v.y << (32u - s)), v.y >> s);
}

fn sub64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}


fn is_zero64(a: vec2<u32>) -> bool {
    return a.x == 0u && a.y == 0u;
}

// The index of the highest set bit (v != 0).
fn msb64(v: vec2<u32>) -> u32 {
    if v.y != 0u {
        return 32u + firstLeadingBit(v.y);
    }
    return firstLeadingBit(v.x);
}

// Trailing zeros, 64 for 0.
fn ctz64(v: vec2<u32>) -> u32 {
    if v.x != 0u {
        return firstTrailingBit(v.x);
    }
    if v.y != 0u {
        return 32u + firstTrailingBit(v.y);
    }
    return 64u;
}

fn one_shl(s: u32) -> vec2<u32> {
    return shl64(vec2<u32>(1u, 0u), s);
}

// ---- KeyLayout arithmetic (view.cu) ---------------------------------------------------------

fn size_log2(level: u32, b: u32, levels: u32) -> u32 {
    return b * select(0u, levels - level, levels > level);
}

fn cell_size(level: u32, b: u32, levels: u32) -> vec2<u32> {
    return one_shl(size_log2(level, b, levels));
}




fn placeholder(start: vec2<u32>, level: u32, b: u32, levels: u32) -> vec2<u32> {
    return one_shl(b * level) | shr64(start, size_log2(level, b, levels));
}

fn placeholder_level(p: vec2<u32>, b: u32) -> u32 {
    if is_zero64(p) {
        return 0u;
    }
    return msb64(p) / b;
}


// ---- tv_setup -------------------------------------------------------------------------------

struct SetupParams {
    leaf_bound: u32,
    particle_bound: u32,
    off_su_count: u32,
    off_su_lfp: u32,
}

@group(0) @binding(0) var<storage, read> su_count: array<u32>;
@group(0) @binding(1) var<storage, read> su_lfp: array<u32>;
@group(0) @binding(2) var<storage, read_write> su_meta: array<u32>;
@group(0) @binding(3) var<uniform> su_p: SetupParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tv_setup(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>) {
    if item(wid, nwg, lid) != 0u {
        return;
    }
    var err = 0u;
    var l = su_count[su_p.off_su_count];
    if l > su_p.leaf_bound {
        l = su_p.leaf_bound;
        err |= ERR_LEAF_BOUND;
    }
    if l == 0u {
        l = 1u;
        err |= ERR_NO_LEAVES;
    }
    var p = su_lfp[su_p.off_su_lfp + l];
    if p > su_p.particle_bound {
        p = su_p.particle_bound;
        err |= ERR_PARTICLE_BOUND;
    }
    if su_lfp[su_p.off_su_lfp] != 0u {
        err |= ERR_STARTS_ORIGIN;
    }
    su_meta[META_LEAVES] = l;
    su_meta[META_BOUNDARIES] = l - 1u;
    su_meta[META_INTERNAL] = 0u;
    su_meta[META_NODES] = 0u;
    su_meta[META_PARTICLES] = p;
    su_meta[META_DEPTH] = 0u;
    su_meta[META_ERRORS] = err;
    su_meta[7] = 0u;
}

// ---- tv_ranges ------------------------------------------------------------------------------

struct RangeParams {
    node_bound: u32,
    off_rg_lfp: u32,
}

@group(0) @binding(0) var<storage, read> rg_lfp: array<u32>;
@group(0) @binding(1) var<storage, read> rg_leaf_begins: array<u32>;
@group(0) @binding(2) var<storage, read> rg_leaf_counts: array<u32>;
@group(0) @binding(3) var<storage, read> rg_meta: array<u32>;
@group(0) @binding(4) var<storage, read_write> rg_particle_begins: array<u32>;
@group(0) @binding(5) var<storage, read_write> rg_particle_counts: array<u32>;
@group(0) @binding(6) var<storage, read_write> rg_leaf_nodes: array<u32>;
@group(0) @binding(7) var<uniform> rg_p: RangeParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tv_ranges(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = item(wid, nwg, lid);
    let nodes = rg_meta[META_NODES];
    if n >= rg_p.node_bound || n >= nodes {
        return;
    }
    let l = rg_meta[META_LEAVES];
    let lb = rg_leaf_begins[n];
    let lc = rg_leaf_counts[n];
    let first = min(lb, l);
    var end = l;
    if lb < l && lc < l - lb {
        end = lb + lc;
    }
    let begin = rg_lfp[rg_p.off_rg_lfp + first];
    rg_particle_begins[n] = begin;
    rg_particle_counts[n] = rg_lfp[rg_p.off_rg_lfp + end] - begin;
    if lc == 1u && lb < l {
        rg_leaf_nodes[lb] = n;
    }
}

// ---- chains (view.cu: tv_leaf_level, tv_aligned_level, tv_chain) --------------------------

// A leaf's level from its size (a power of 2^b; clamped to 0..=levels).
fn leaf_level(k0: vec2<u32>, k1: vec2<u32>, b: u32, levels: u32) -> u32 {
    let steps = ctz64(sub64(k1, k0)) / b;
    return select(levels - steps, 0u, steps >= levels);
}

// The coarsest level at which `key` starts a cell (0 for key 0).
fn aligned_level(key: vec2<u32>, b: u32, levels: u32) -> u32 {
    let steps = ctz64(key) / b;
    return select(levels - steps, 0u, steps >= levels);
}

// The coarsest level of the chain of a leaf with first key k0 and level `leaf`.
fn chain_top(k0: vec2<u32>, leaf: u32, b: u32, levels: u32) -> u32 {
    return min(aligned_level(k0, b, levels), leaf);
}

// ---- tv_chain_counts ------------------------------------------------------------------------

struct ChainCountParams {
    leaf_bound: u32,
    bits_per_level: u32,
    levels: u32,
    off_cn_keys: u32,
    off_cn_lfp: u32,
}

@group(0) @binding(0) var<storage, read> cn_keys: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> cn_lfp: array<u32>;
@group(0) @binding(2) var<storage, read_write> cn_meta: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> cn_counts: array<u32>;
@group(0) @binding(4) var<uniform> cn_p: ChainCountParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tv_chain_counts(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                   @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = item(wid, nwg, lid);
    if j >= cn_p.leaf_bound || j >= atomicLoad(&cn_meta[META_LEAVES]) {
        return;
    }
    let b = cn_p.bits_per_level;
    let levels = cn_p.levels;
    let k0 = cn_keys[cn_p.off_cn_keys + j];
    let level = leaf_level(k0, cn_keys[cn_p.off_cn_keys + j + 1u], b, levels);
    cn_counts[j] = level - chain_top(k0, level, b, levels) + 1u;
    if cn_lfp[cn_p.off_cn_lfp + j] > cn_lfp[cn_p.off_cn_lfp + j + 1u] {
        atomicOr(&cn_meta[META_ERRORS], ERR_STARTS_DECREASE);
    }
}

// ---- tv_chains ------------------------------------------------------------------------------

struct ChainParams {
    node_bound: u32,
    bits_per_level: u32,
    levels: u32,
    off_ch_keys: u32,
}

@group(0) @binding(0) var<storage, read> ch_keys: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> ch_chain_starts: array<u32>;
@group(0) @binding(2) var<storage, read_write> ch_meta: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> ch_level_keys: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read_write> ch_leaf_of: array<u32>;
@group(0) @binding(5) var<uniform> ch_p: ChainParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tv_chains(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = item(wid, nwg, lid);
    if t >= ch_p.node_bound {
        return;
    }
    let b = ch_p.bits_per_level;
    let levels = ch_p.levels;
    let l = atomicLoad(&ch_meta[META_LEAVES]);
    let total = ch_chain_starts[l];
    let nodes = min(total, ch_p.node_bound);
    if t == 0u {
        let internal = select(0u, total - l, total >= l);
        if total < l || internal != (l - 1u) / ((1u << b) - 1u) {
            atomicOr(&ch_meta[META_ERRORS], ERR_INTERNAL_COUNT);
        }
        atomicStore(&ch_meta[META_INTERNAL], internal);
        atomicStore(&ch_meta[META_NODES], nodes);
    }
    if t < l {
        let k0 = ch_keys[ch_p.off_ch_keys + t];
        let level = leaf_level(k0, ch_keys[ch_p.off_ch_keys + t + 1u], b, levels);
        let top = chain_top(k0, level, b, levels);
        let start = ch_chain_starts[t];
        for (var v = top; v <= level; v++) {
            let d = start + (v - top);
            if d >= nodes {
                break;
            }
            ch_level_keys[d] = vec2<u32>(v, 0u);
            ch_leaf_of[d] = t;
        }
    }
    if t >= nodes {
        ch_level_keys[t] = vec2<u32>(0xffffffffu, 0xffffffffu);
        ch_leaf_of[t] = 0u;
    }
}

// ---- tv_order -------------------------------------------------------------------------------

struct OrderParams {
    node_bound: u32,
    bits_per_level: u32,
    levels: u32,
    off_or_keys: u32,
}

@group(0) @binding(0) var<storage, read_write> or_pkeys: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> or_leaf_of: array<u32>;
@group(0) @binding(2) var<storage, read> or_keys: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> or_chain_starts: array<u32>;
@group(0) @binding(4) var<storage, read> or_meta: array<u32>;
@group(0) @binding(5) var<storage, read_write> or_dfs_positions: array<u32>;
@group(0) @binding(6) var<storage, read_write> or_dfs_order: array<u32>;
@group(0) @binding(7) var<storage, read_write> or_levels: array<u32>;
@group(0) @binding(8) var<storage, read_write> or_node_keys: array<vec2<u32>>;
@group(0) @binding(9) var<uniform> or_p: OrderParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tv_order(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = item(wid, nwg, lid);
    let nodes = or_meta[META_NODES];
    if n >= or_p.node_bound || n >= nodes {
        return;
    }
    let b = or_p.bits_per_level;
    let levels = or_p.levels;
    let l = or_meta[META_LEAVES];
    let level = min(or_pkeys[n].x & 0xffu, levels);
    let j = min(or_leaf_of[n], l - 1u);
    let k0 = or_keys[or_p.off_or_keys + j];
    let top = chain_top(k0, leaf_level(k0, or_keys[or_p.off_or_keys + j + 1u], b, levels), b, levels);
    let d = min(or_chain_starts[j] + select(0u, level - top, level > top), nodes - 1u);
    or_dfs_positions[n] = d;
    or_dfs_order[d] = n;
    or_levels[n] = level;
    or_node_keys[n] = k0;
    or_pkeys[n] = placeholder(k0, level, b, levels);
}

// ---- tv_nodes -------------------------------------------------------------------------------

struct NodeParams {
    node_bound: u32,
    bits_per_level: u32,
    levels: u32,
    off_nd_keys: u32,
}

@group(0) @binding(0) var<storage, read> nd_leaf_of: array<u32>;
@group(0) @binding(1) var<storage, read> nd_keys: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> nd_dfs_positions: array<u32>;
@group(0) @binding(3) var<storage, read> nd_dfs_order: array<u32>;
@group(0) @binding(4) var<storage, read> nd_levels: array<u32>;
@group(0) @binding(5) var<storage, read> nd_meta: array<u32>;
@group(0) @binding(6) var<storage, read_write> nd_first_children: array<u32>;
@group(0) @binding(7) var<storage, read_write> nd_leaf_begins: array<u32>;
@group(0) @binding(8) var<storage, read_write> nd_leaf_counts: array<u32>;
@group(0) @binding(9) var<uniform> nd_p: NodeParams;

// lower_bound_one over K[lo..n) (view.cu: tv_lower_bound_after): galloping up from lo,
// then the halving loop in the window found.
fn nd_lower_after(lo: u32, n: u32, q: vec2<u32>) -> u32 {
    var left = lo;
    var last = n;
    var step = 1u;
    loop {
        if left >= n || step - 1u >= n - left {
            break;
        }
        let probe = left + step - 1u;
        if !u64_lt(nd_keys[nd_p.off_nd_keys + probe], q) {
            last = probe;
            break;
        }
        left = probe + 1u;
        if step >= 0x80000000u {
            break;
        }
        step = step << 1u;
    }
    var first = left;
    var count = last - left;
    while count > 0u {
        let half = count / 2u;
        let probe = first + half;
        if u64_lt(nd_keys[nd_p.off_nd_keys + probe], q) {
            first = probe + 1u;
            count -= half + 1u;
        } else {
            count = half;
        }
    }
    return first;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn tv_nodes(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = item(wid, nwg, lid);
    let nodes = nd_meta[META_NODES];
    if n >= nd_p.node_bound || n >= nodes {
        return;
    }
    let b = nd_p.bits_per_level;
    let levels = nd_p.levels;
    let l = nd_meta[META_LEAVES];
    let j = min(nd_leaf_of[n], l - 1u);
    let level = nd_levels[n];
    let k0 = nd_keys[nd_p.off_nd_keys + j];
    let leaf = leaf_level(k0, nd_keys[nd_p.off_nd_keys + j + 1u], b, levels);
    var end = j + 1u;
    if level < leaf {
        end = nd_lower_after(j + 1u, l + 1u, u64_add(k0, cell_size(level, b, levels)));
    }
    end = min(end, l);
    let count = select(0u, end - j, end > j);
    nd_leaf_begins[n] = j;
    nd_leaf_counts[n] = count;
    var fc = NONE;
    if count != 1u {
        fc = nd_dfs_order[min(nd_dfs_positions[n] + 1u, nodes - 1u)];
    }
    nd_first_children[n] = fc;
}

// ---- tv_links -------------------------------------------------------------------------------

struct LinkParams {
    node_bound: u32,
    bits_per_level: u32,
}

@group(0) @binding(0) var<storage, read> lk_chain_starts: array<u32>;
@group(0) @binding(1) var<storage, read> lk_dfs_order: array<u32>;
@group(0) @binding(2) var<storage, read> lk_leaf_begins: array<u32>;
@group(0) @binding(3) var<storage, read> lk_leaf_counts: array<u32>;
@group(0) @binding(4) var<storage, read> lk_first_children: array<u32>;
@group(0) @binding(5) var<storage, read> lk_meta: array<u32>;
@group(0) @binding(6) var<storage, read_write> lk_parents: array<u32>;
@group(0) @binding(7) var<storage, read_write> lk_escapes: array<u32>;
@group(0) @binding(8) var<uniform> lk_p: LinkParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tv_links(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = item(wid, nwg, lid);
    let nodes = lk_meta[META_NODES];
    if n >= lk_p.node_bound || n >= nodes {
        return;
    }
    let l = lk_meta[META_LEAVES];
    // The children of a node are consecutive in level order: the parent writes their
    // parent (view.cu); the root keeps the fill's NONE.
    let fc = lk_first_children[n];
    if fc != NONE {
        let children = 1u << lk_p.bits_per_level;
        for (var c = 0u; c < children; c++) {
            if fc + c < nodes && fc + c != 0u {
                lk_parents[fc + c] = n;
            }
        }
    }
    let end = lk_leaf_begins[n] + lk_leaf_counts[n];
    var escape = NONE;
    if end < l {
        escape = lk_dfs_order[min(lk_chain_starts[end], nodes - 1u)];
    }
    lk_escapes[n] = escape;
}

// ---- tv_levels ------------------------------------------------------------------------------

struct LevelParams {
    bits_per_level: u32,
    levels: u32,
}

@group(0) @binding(0) var<storage, read> lv_pkeys: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read_write> lv_meta: array<u32>;
@group(0) @binding(2) var<storage, read_write> lv_level_offsets: array<u32>;
@group(0) @binding(3) var<storage, read_write> lv_parents_per_level: array<u32>;
@group(0) @binding(4) var<uniform> lv_p: LevelParams;

fn lv_lower_p(n: u32, q: vec2<u32>) -> u32 {
    var first = 0u;
    var count = n;
    while count > 0u {
        let step = count / 2u;
        let probe = first + step;
        if u64_lt(lv_pkeys[probe], q) {
            first = probe + 1u;
            count -= step + 1u;
        } else {
            count = step;
        }
    }
    return first;
}

// The first node of level x (x <= depth), then N.
fn lv_offset(x: u32, depth: u32, nodes: u32) -> u32 {
    if x <= depth {
        return lv_lower_p(nodes, one_shl(lv_p.bits_per_level * x));
    }
    return nodes;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn tv_levels(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
    let l = item(wid, nwg, lid);
    let levels = lv_p.levels;
    if l >= levels + 2u {
        return;
    }
    let b = lv_p.bits_per_level;
    let nodes = lv_meta[META_NODES];
    var depth = 0u;
    if nodes != 0u {
        depth = min(placeholder_level(lv_pkeys[nodes - 1u], b), levels);
    }
    if l == 0u {
        lv_meta[META_DEPTH] = depth;
    }
    lv_level_offsets[l] = lv_offset(l, depth, nodes);
    if l <= levels {
        var m = 0u;
        if l < depth {
            m = (lv_offset(l + 2u, depth, nodes) - lv_offset(l + 1u, depth, nodes)) >> b;
        }
        lv_parents_per_level[l] = m;
    }
}

// ---- tv_child_centric -----------------------------------------------------------------------

struct ChildCentricParams {
    node_bound: u32,
    bits_per_level: u32,
    levels: u32,
}

@group(0) @binding(0) var<storage, read> cc_levels: array<u32>;
@group(0) @binding(1) var<storage, read> cc_first_children: array<u32>;
@group(0) @binding(2) var<storage, read> cc_level_offsets: array<u32>;
@group(0) @binding(3) var<storage, read> cc_parents_per_level: array<u32>;
@group(0) @binding(4) var<storage, read> cc_meta: array<u32>;
@group(0) @binding(5) var<storage, read_write> cc_positions: array<u32>;
@group(0) @binding(6) var<storage, read_write> cc_nodes_at: array<u32>;
@group(0) @binding(7) var<storage, read_write> cc_child_indices: array<u32>;
@group(0) @binding(8) var<uniform> cc_p: ChildCentricParams;

fn cc_position(node: u32, level: u32) -> u32 {
    if level == 0u {
        return node;
    }
    let levels = cc_p.levels;
    let lv = min(level, levels + 1u);
    let base = cc_level_offsets[lv];
    let m = cc_parents_per_level[min(lv - 1u, levels)];
    let j = node - base;
    let c = 1u << cc_p.bits_per_level;
    return base + (j % c) * m + j / c;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn tv_child_centric(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                    @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = item(wid, nwg, lid);
    let nodes = cc_meta[META_NODES];
    if n >= cc_p.node_bound || n >= nodes {
        return;
    }
    let level = cc_levels[n];
    let q = cc_position(n, level);
    cc_positions[n] = q;
    if q < nodes {
        cc_nodes_at[q] = n;
        let fc = cc_first_children[n];
        var ci = NONE;
        if fc != NONE {
            ci = cc_position(fc, level + 1u);
        }
        cc_child_indices[q] = ci;
    }
}

// ---- tv_nf ----------------------------------------------------------------------------------

struct NfParams {
    node_bound: u32,
    off_nf_values: u32,
}

@group(0) @binding(0) var<storage, read> nf_values: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> nf_leaf_begins: array<u32>;
@group(0) @binding(2) var<storage, read> nf_leaf_counts: array<u32>;
@group(0) @binding(3) var<storage, read_write> nf_meta: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> nf_node_nf: array<vec2<u32>>;
@group(0) @binding(5) var<uniform> nf_p: NfParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tv_nf(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
         @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = item(wid, nwg, lid);
    let nodes = atomicLoad(&nf_meta[META_NODES]);
    if n >= nf_p.node_bound || n >= nodes {
        return;
    }
    var v = vec2<u32>(0xffffffffu, 0xffffffffu);
    if nf_leaf_counts[n] == 1u {
        let l = atomicLoad(&nf_meta[META_LEAVES]);
        v = nf_values[nf_p.off_nf_values + min(nf_leaf_begins[n], l - 1u)];
        if v.x == 0xffffffffu && v.y == 0xffffffffu {
            atomicOr(&nf_meta[META_ERRORS], ERR_NF_SENTINEL);
        }
    }
    nf_node_nf[n] = v;
}

// ---- tv_particle_leaves (view.cu: one workgroup per chunks of 256 leaves) -------------------

const GROUP_LEAVES: u32 = 256u;

struct ParticleParams {
    leaf_bound: u32,
    particle_bound: u32,
    off_pl_lfp: u32,
}

@group(0) @binding(0) var<storage, read> pl_lfp: array<u32>;
@group(0) @binding(1) var<storage, read> pl_meta: array<u32>;
@group(0) @binding(2) var<storage, read_write> pl_particle_leaves: array<u32>;
@group(0) @binding(3) var<uniform> pl_p: ParticleParams;

var<workgroup> pl_starts: array<u32, 257>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tv_particle_leaves(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                      @builtin(num_workgroups) nwg: vec3<u32>) {
    let lim = min(pl_meta[META_LEAVES], pl_p.leaf_bound);
    let p = min(pl_meta[META_PARTICLES], pl_p.particle_bound);
    for (var c = 0u; c < WORKGROUP_SIZE; c += GROUP_LEAVES) {
        let j0 = linear_block(wid, nwg) * WORKGROUP_SIZE + c;
        var count = 0u;
        if j0 < lim {
            count = min(GROUP_LEAVES, lim - j0);
        }
        workgroupBarrier();
        if count > 0u {
            for (var i = lid; i <= count; i += WORKGROUP_SIZE) {
                pl_starts[i] = min(pl_lfp[pl_p.off_pl_lfp + j0 + i], p);
            }
        }
        workgroupBarrier();
        if count > 0u {
            for (var q = pl_starts[0] + lid; q < pl_starts[count]; q += WORKGROUP_SIZE) {
                // upper_bound(starts[0..count], q) - 1
                var first = 0u;
                var n = count;
                while n > 0u {
                    let step = n / 2u;
                    let probe = first + step;
                    if pl_starts[probe] <= q {
                        first = probe + 1u;
                        n -= step + 1u;
                    } else {
                        n = step;
                    }
                }
                pl_particle_leaves[q] = j0 + first - 1u;
            }
        }
    }
}

// ---- tv_boxes_f32 ---------------------------------------------------------------------------

struct BoxParams {
    node_bound: u32,
    curve: u32,
    levels: u32,
    min_x: f32,
    min_y: f32,
    min_z: f32,
    unit_x: f32,
    unit_y: f32,
    unit_z: f32,
}

@group(0) @binding(0) var<storage, read> bx_node_keys: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> bx_levels: array<u32>;
@group(0) @binding(2) var<storage, read> bx_table: array<u32>;
@group(0) @binding(3) var<storage, read> bx_side_log2: array<u32>;
@group(0) @binding(4) var<storage, read> bx_meta: array<u32>;
@group(0) @binding(5) var<storage, read_write> bx_centres: array<f32>;
@group(0) @binding(6) var<storage, read_write> bx_halves: array<f32>;
@group(0) @binding(7) var<uniform> bx_p: BoxParams;

// f32(f64(v)): round v to 53 significant bits (nearest, ties to even), then to 24, as
// the CPU's `v as f64 as f32` does; exact powers of two from bit patterns.
fn f32_of_u64(v: vec2<u32>) -> f32 {
    if is_zero64(v) {
        return 0.0;
    }
    // Step 1: 53 bits. value = keep * 2^sh.
    var keep = v;
    var sh = 0u;
    let p = msb64(v);
    if p > 52u {
        sh = p - 52u; // 1..=11: the dropped bits lie in the low word
        keep = shr64(v, sh);
        let rem = v.x & ((1u << sh) - 1u);
        let half = 1u << (sh - 1u);
        if rem > half || (rem == half && (keep.x & 1u) == 1u) {
            keep = u64_add(keep, vec2<u32>(1u, 0u));
            if keep.y == (1u << 21u) && keep.x == 0u {
                keep = vec2<u32>(0u, 1u << 20u);
                sh += 1u;
            }
        }
    }
    // Step 2: 24 bits. value = k2 * 2^(sh + sh2).
    let q = msb64(keep);
    var k2: u32;
    var sh2 = 0u;
    if q > 23u {
        sh2 = q - 23u; // 1..=29: the dropped bits lie in the low word
        k2 = shr64(keep, sh2).x;
        let rem = keep.x & ((1u << sh2) - 1u);
        let half = 1u << (sh2 - 1u);
        if rem > half || (rem == half && (k2 & 1u) == 1u) {
            k2 += 1u;
            if k2 == (1u << 24u) {
                k2 = 1u << 23u;
                sh2 += 1u;
            }
        }
    } else {
        k2 = keep.x;
    }
    let q2 = firstLeadingBit(k2);
    let e = sh + sh2 + q2;
    let mantissa = (k2 << (23u - q2)) & 0x7fffffu;
    return bitcast<f32>(((e + 127u) << 23u) | mantissa);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn tv_boxes_f32(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = item(wid, nwg, lid);
    if n >= bx_p.node_bound || n >= bx_meta[META_NODES] {
        return;
    }
    let key = bx_node_keys[n];
    let levels = bx_p.levels;
    var c = array<vec2<u32>, 3>(vec2<u32>(0u, 0u), vec2<u32>(0u, 0u), vec2<u32>(0u, 0u));
    if bx_p.curve == 2u {
        for (var l = 0u; l < levels; l++) {
            let bit = shr64(key, levels - 1u - l).x & 1u;
            let a = min(bx_table[l], 2u);
            c[a] = shl64(c[a], 1u) | vec2<u32>(bit, 0u);
        }
    } else {
        var x = 0u;
        var y = 0u;
        var z = 0u;
        var entry = 0u;
        for (var l = 21u; l > 0u; l--) {
            var digit = shr64(key, 3u * (l - 1u)).x & 7u;
            if bx_p.curve == 1u {
                entry = bx_table[((entry & ~7u) | digit) % 192u];
                digit = entry & 7u;
            }
            x = (x << 1u) | ((digit >> 2u) & 1u);
            y = (y << 1u) | ((digit >> 1u) & 1u);
            z = (z << 1u) | (digit & 1u);
        }
        c[0] = vec2<u32>(x, 0u);
        c[1] = vec2<u32>(y, 0u);
        c[2] = vec2<u32>(z, 0u);
    }
    let level = min(bx_levels[n], levels);
    let mins = array<f32, 3>(bx_p.min_x, bx_p.min_y, bx_p.min_z);
    let units = array<f32, 3>(bx_p.unit_x, bx_p.unit_y, bx_p.unit_z);
    // WGSL lets a compiler contract `min + corner * unit` into a fused multiply-add, and
    // NVIDIA's Vulkan driver does (measured on the H200: z corners one ULP off the CPU's
    // rule). OR-ing the product's bits with a zero the compiler cannot prove (levels is at
    // most 63, so `levels >> 6` is 0, but it is a uniform) forces the product to be
    // rounded to f32 before the addition, as the rule says.
    let opaque_zero = levels >> 6u;
    for (var a = 0u; a < 3u; a++) {
        let s = min(bx_side_log2[level * 3u + a], 63u);
        let corner = shl64(shr64(c[a], s), s);
        let side = bitcast<f32>((127u + s) << 23u) * units[a];
        let half = side * 0.5;
        let offset = bitcast<f32>(bitcast<u32>(f32_of_u64(corner) * units[a]) | opaque_zero);
        let lo = mins[a] + offset;
        bx_centres[3u * n + a] = lo + half;
        bx_halves[3u * n + a] = half;
    }
}
