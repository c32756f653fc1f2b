// shaders/tree/nf_count.wgsl — the NFCount criterion of a rebalance pass
// (crates/orrery-tree-build/src/gpu/passes.rs and nf.rs; host reference crate::nfcount),
// the WGSL twin of kernels/tree/nf_count.cu: same entry points, same arguments, same
// integers. Module "tree/nf_count": common.wgsl, then this file.
//
// What it computes: see nf_count.cu (tb_nf_starts, tb_nf_eval, tb_nf_ops, tb_nf_scatter,
//   tb_nf_stencil_counts; starts and vals by parity). 64-bit values (keys, W, group
//   values, masks) are vec2<u32>, low word first. S (the particles of a stencil) is a sum
//   over disjoint cells, so it is at most the particle count and fits a u32; W = n * S is
//   the full 32 x 32 -> 64-bit product (mul_wide), as u64 on the host (which never
//   saturates there).
//
// Launch shape: one invocation per leaf of the capacity (tb_nf_starts and tb_nf_scatter:
//   of capacity + 1; tb_nf_eval: `lanes` per leaf, as nf_count.cu; tb_nf_stencil_counts
//   per query), workgroups of THREADS over a 2D
//   dispatch (item_index); invocations past L return at once.
//
// Buffers (binding: direction, length, layout); at most 8 storage buffers per entry
//   (WebGPU's default limit)
//   tb_nf_starts:  0 keys (r, n vec2<u32>), 1 leaves (r, capacity + 1), 2 starts (rw,
//                  2 (capacity + 1)), 3 vals (rw, 4 capacity vec2<u32>), 4 status (r),
//                  5 params {n, capacity, parity, reset}
//   tb_nf_eval:    0 leaves (r), 1 starts (r), 2 keys (r), 3 geom (r, 768), 4 vals (rw),
//                  5 counts (rw, capacity), 6 status (r), 7 params {capacity, n, parity,
//                  hilbert, bits, levels, lanes}
//   tb_nf_ops:     0 leaves (r), 1 vals (r), 2 ops (rw), 3 status (rw atomic), 4 params
//                  {capacity, parity, threshold_lo, threshold_hi, bits, levels}
//   tb_nf_scatter: 0 leaves (r), 1 ops (r), 2 offsets (r), 3 next (rw), 4 status (rw
//                  atomic), 5 starts (rw), 6 vals (rw), 7 params {capacity, parity, bits,
//                  levels}
//
// No invocation loops more than a few thousand times (lavapipe's gallivm ends any
// invocation after 65535 loop iterations in total): a split's children are searched by
// tb_nf_starts, one invocation each, not by the scatter's invocation.
//   tb_nf_stencil_counts: 0 leaves, 1 starts, 2 keys, 3 geom (as tb_nf_eval), 4 qkeys (r),
//                  5 qmeta (r, 2 per query: level, near), 6 out (rw), 7 params
//                  {queries, live, n, hilbert, bits, levels}
//
// Invariants: as nf_count.cu.
//
// Measured cost: not measured yet.

const NF_GEOM_WORDS: u32 = 768u;
const NF_ENCODE: u32 = 0u;
const NF_DECODE: u32 = 192u;
const NF_MASKS: u32 = 384u;
const NF_MAX_JUMP_BITS: u32 = 12u;
const NF_ALL: vec2<u32> = vec2<u32>(0xffffffffu, 0xffffffffu);

// ---- 64-bit helpers ----------------------------------------------------------------------

fn u64_le(a: vec2<u32>, b: vec2<u32>) -> bool {
    return !u64_lt(b, a);
}

// The full product of two u32 values.
fn mul_wide(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    let lo = (p00 & 0xffffu) | (mid << 16u);
    let hi = p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
    return vec2<u32>(lo, hi);
}

// ---- stencil (shared by tb_nf_eval and tb_nf_stencil_counts: bindings 0..3) -------------

@group(0) @binding(0) var<storage, read> st_leaves: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> st_starts: array<u32>;
@group(0) @binding(2) var<storage, read> st_keys: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> st_geom: array<u32>;

fn nf_upper_bound_leaves(lo: u32, hi: u32, q: vec2<u32>) -> u32 {
    var first = 0u;
    var count = select(0u, hi - lo, hi > lo);
    while count > 0u {
        let step = count / 2u;
        let probe = first + step;
        if u64_le(st_leaves[lo + probe], q) {
            first = probe + 1u;
            count -= step + 1u;
        } else {
            count = step;
        }
    }
    return first;
}

fn nf_lower_bound_keys(lo: u32, hi: u32, q: vec2<u32>) -> u32 {
    var first = 0u;
    var count = select(0u, hi - lo, hi > lo);
    while count > 0u {
        let step = count / 2u;
        let probe = first + step;
        if u64_lt(st_keys[lo + probe], q) {
            first = probe + 1u;
            count -= step + 1u;
        } else {
            count = step;
        }
    }
    return first;
}

fn nf_leaf_holding(last: u32, key: vec2<u32>, near_in: u32) -> u32 {
    let near = min(near_in, last - 1u);
    var lo = near;
    var hi = near;
    var step = 1u;
    if u64_le(st_leaves[near], key) {
        loop {
            hi = select(last, near + step, last - near > step);
            if hi >= last {
                hi = last;
                break;
            }
            if u64_lt(key, st_leaves[hi]) {
                break;
            }
            lo = hi;
            step = select(step * 2u, 0xffffffffu, step > 0x7fffffffu);
        }
    } else {
        loop {
            if step >= near {
                lo = 0u;
                break;
            }
            lo = near - step;
            if u64_le(st_leaves[lo], key) {
                break;
            }
            hi = lo;
            step = select(step * 2u, 0xffffffffu, step > 0x7fffffffu);
        }
    }
    let top = select(lo + 1u, hi, hi > lo + 1u);
    return lo + nf_upper_bound_leaves(lo + 1u, top, key);
}

fn nf_cell_count(live: u32, n: u32, sb: u32, first: vec2<u32>, end: vec2<u32>, near: u32) -> u32 {
    let j = nf_leaf_holding(live, first, near);
    let inside = !u64_eq(st_leaves[j], first) || u64_lt(end, st_leaves[j + 1u]) || u64_le(end, first);
    if !inside {
        var k = j + 1u;
        if !u64_eq(st_leaves[j + 1u], end) {
            k = nf_leaf_holding(live, u64_sub(end, vec2<u32>(1u, 0u)), j + 1u) + 1u;
        }
        return select(0u, st_starts[sb + k] - st_starts[sb + j], st_starts[sb + k] >= st_starts[sb + j]);
    }
    let lo = min(st_starts[sb + j], n);
    let hi = min(max(st_starts[sb + j + 1u], lo), n);
    let a = nf_lower_bound_keys(lo, hi, end);
    let b = nf_lower_bound_keys(lo, hi, first);
    return select(0u, a - b, a >= b);
}

fn nf_mask(level: u32, axis: u32) -> vec2<u32> {
    let at = NF_MASKS + 2u * (3u * level + axis);
    return vec2<u32>(st_geom[at], st_geom[at + 1u]);
}

fn nf_run_table(table: u32, prefix: vec2<u32>, levels: u32) -> vec2<u32> {
    var entry = 0u;
    var out = vec2<u32>(0u, 0u);
    for (var l = levels; l > 0u; l--) {
        let digit = shr64(prefix, 3u * (l - 1u)).x & 7u;
        entry = st_geom[table + (((entry & ~7u) | digit) & 255u)];
        out = shl64(out, 3u) | vec2<u32>(entry & 7u, 0u);
    }
    return out;
}

fn clz64(v: vec2<u32>) -> u32 {
    if v.y != 0u {
        return countLeadingZeros(v.y);
    }
    return 32u + countLeadingZeros(v.x);
}

// The stencil around the level-`level` cell holding a key (nf_count.cu: TbNfStencil): its
// masks and size, and for Hilbert keys the cell's Morton prefix and the encoder's state
// before each of its digits.
struct Stencil {
    masks: array<vec2<u32>, 3>,
    size: vec2<u32>,
    hprefix: vec2<u32>,
    mprefix: vec2<u32>,
    base: vec2<u32>,
    shift: u32,
    level: u32,
    states: array<u32, 22>,
}

fn nf_stencil_setup(key: vec2<u32>, level_in: u32, hilbert: u32, bits: u32, levels: u32) -> Stencil {
    var st: Stencil;
    let level = min(level_in, levels);
    st.level = level;
    st.shift = bits * (levels - level);
    st.size = pow2_64(st.shift);
    let start = key & ~u64_sub(st.size, vec2<u32>(1u, 0u));
    st.masks = array<vec2<u32>, 3>(nf_mask(level, 0u), nf_mask(level, 1u), nf_mask(level, 2u));
    st.hprefix = shr64(start, st.shift);
    st.mprefix = st.hprefix;
    if hilbert != 0u {
        st.mprefix = nf_run_table(NF_DECODE, st.hprefix, level);
        var e = 0u;
        for (var k = 0u; k < level; k++) {
            st.states[k] = e & ~7u;
            let digit = shr64(st.mprefix, 3u * (level - 1u - k)).x & 7u;
            e = st_geom[NF_ENCODE + (((e & ~7u) | digit) & 255u)];
        }
    }
    st.base = shl64(st.mprefix, st.shift);
    return st;
}

// The particles of cell c (0..27) of the stencil, 0 past the box's edge, with the starts at
// st_starts[sb..]. Hilbert: a neighbour runs the table only below its first differing digit.
fn nf_stencil_cell(st: Stencil, c: u32, live: u32, n: u32, sb: u32, near: u32, hilbert: u32) -> u32 {
    var d = array<i32, 3>(i32(c / 9u) - 1, i32(c / 3u % 3u) - 1, i32(c % 3u) - 1);
    var cell = st.base;
    for (var a = 0u; a < 3u; a++) {
        let mask = st.masks[a];
        let field = cell & mask;
        var moved = field;
        if d[a] == 1 {
            if u64_eq(field, mask) {
                return 0u;
            }
            moved = u64_add(field | ~mask, vec2<u32>(1u, 0u)) & mask;
        } else if d[a] == -1 {
            if u64_eq(field, vec2<u32>(0u, 0u)) {
                return 0u;
            }
            moved = u64_sub(field, vec2<u32>(1u, 0u)) & mask;
        }
        cell = (cell & ~mask) | moved;
    }
    var first = cell;
    if hilbert != 0u {
        let level = st.level;
        let m = shr64(cell, st.shift);
        let diff = m ^ st.mprefix;
        var h = st.hprefix;
        if !u64_eq(diff, vec2<u32>(0u, 0u)) {
            let k = level - 1u - (63u - clz64(diff)) / 3u;
            var e = st.states[k];
            h = shr64(st.hprefix, 3u * (level - k));
            for (var j = k; j < level; j++) {
                let digit = shr64(m, 3u * (level - 1u - j)).x & 7u;
                e = st_geom[NF_ENCODE + (((e & ~7u) | digit) & 255u)];
                h = shl64(h, 3u) | vec2<u32>(e & 7u, 0u);
            }
        }
        first = shl64(h, st.shift);
    }
    return nf_cell_count(live, n, sb, first, u64_add(first, st.size), near);
}

// The particles of the 27 level-`level_in` cells around the one holding `key` (S < 2^32),
// one cell after the other (tb_nf_stencil_counts; the eval spreads them over 32 invocations).
fn nf_stencil(live: u32, n: u32, sb: u32, key: vec2<u32>, level_in: u32, near: u32, hilbert: u32, bits: u32,
              levels: u32) -> u32 {
    let st = nf_stencil_setup(key, level_in, hilbert, bits, levels);
    var sum = 0u;
    for (var c = 0u; c < 27u; c++) {
        sum += nf_stencil_cell(st, c, live, n, sb, near, hilbert);
    }
    return sum;
}

// crate::rebalance::sibling_group: vec2(first, slot) of i's complete group, or
// vec2(0xffffffff, 0) when there is none.
fn nf_group(leaf: vec2<u32>, level: u32, i: u32, live: u32, bits: u32, levels: u32) -> vec2<u32> {
    let none = vec2<u32>(0xffffffffu, 0u);
    if level == 0u {
        return none;
    }
    let children = 1u << bits;
    let s = shr64(leaf, bits * (levels - level)).x & (children - 1u);
    if s > i {
        return none;
    }
    let f = i - s;
    let last = f + children;
    if last > live {
        return none;
    }
    let parent_size = pow2_64(bits * (levels - level + 1u));
    if !u64_eq(st_leaves[last], u64_add(st_leaves[f], parent_size)) {
        return none;
    }
    return vec2<u32>(f, s);
}

// ---- tb_nf_starts --------------------------------------------------------------------------

struct StartsParams {
    n: u32,
    capacity: u32,
    parity: u32,
    reset: u32,
}

@group(0) @binding(0) var<storage, read> rs_keys: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> rs_leaves: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read_write> rs_starts: array<u32>;
@group(0) @binding(3) var<storage, read_write> rs_vals: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> rs_status: array<u32>;
@group(0) @binding(5) var<uniform> rs_p: StartsParams;

// lower_bound_one over rs_keys[lo, hi), relative to lo.
fn rs_lower_bound(lo: u32, hi: u32, q: vec2<u32>) -> u32 {
    var first = 0u;
    var count = select(0u, hi - lo, hi > lo);
    while count > 0u {
        let step = count / 2u;
        let probe = first + step;
        if u64_lt(rs_keys[lo + probe], q) {
            first = probe + 1u;
            count -= step + 1u;
        } else {
            count = step;
        }
    }
    return first;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn tb_nf_starts(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
    if rs_status[ST_STATE] == DONE {
        return;
    }
    let cap = rs_p.capacity;
    let live = min(rs_status[ST_LEAF_COUNT], cap);
    let i = item_index(wid, nwg, lid);
    if i > live {
        return;
    }
    let sb = rs_p.parity * (cap + 1u);
    let vb = rs_p.parity * 2u * cap;
    let n = rs_p.n;
    if rs_p.reset != 0u {
        rs_starts[sb + i] = rs_lower_bound(0u, n, rs_leaves[i]);
        if i == live {
            return;
        }
        rs_vals[vb + i] = NF_ALL;
        rs_vals[vb + cap + i] = NF_ALL;
        return;
    }
    if i == live || !u64_eq(rs_vals[vb + i], NF_ALL) || u64_eq(rs_vals[vb + cap + i], NF_ALL) {
        return;
    }
    let lo = min(rs_starts[sb + i], n);
    let end = rs_vals[vb + cap + i];
    let hi = max(select(n, min(end.x, n), end.y == 0u), lo);
    rs_starts[sb + i] = lo + rs_lower_bound(lo, hi, rs_leaves[i]);
    rs_vals[vb + cap + i] = NF_ALL;
}

// ---- tb_nf_eval ----------------------------------------------------------------------------

struct EvalParams {
    capacity: u32,
    n: u32,
    parity: u32,
    hilbert: u32,
    bits: u32,
    levels: u32,
    lanes: u32,
}

@group(0) @binding(4) var<storage, read_write> ev_vals: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read_write> ev_counts: array<u32>;
@group(0) @binding(6) var<storage, read> ev_status: array<u32>;
@group(0) @binding(7) var<uniform> ev_p: EvalParams;

// The partial cell counts of a workgroup's invocations (WORKGROUP_SIZE <= 256, a multiple
// of `lanes`).
var<workgroup> ev_parts: array<u32, 256>;

// `lanes` invocations per leaf (nf_count.cu): invocation k of a leaf counts cells k,
// k + lanes, ... of the stencil, the leaf's first invocation sums their partials. No
// invocation returns before the barriers.
@compute @workgroup_size(WORKGROUP_SIZE)
fn tb_nf_eval(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
              @builtin(num_workgroups) nwg: vec3<u32>) {
    var lanes = ev_p.lanes;
    if lanes == 0u || lanes > 32u || (lanes & (lanes - 1u)) != 0u {
        lanes = 1u;
    }
    let cap = ev_p.capacity;
    let live = min(ev_status[ST_LEAF_COUNT], cap);
    let t = item_index(wid, nwg, lid);
    let i = t / lanes;
    let sub = t % lanes;
    let in_tree = ev_status[ST_STATE] != DONE && i < live;
    let sb = ev_p.parity * (cap + 1u);
    let vb = ev_p.parity * 2u * cap;
    let bits = ev_p.bits;
    let levels = ev_p.levels;
    var key = vec2<u32>(0u, 0u);
    var level = 0u;
    var count = 0u;
    var fresh = false;
    var leader = false;
    var carried = false;
    var parent = 0u;
    if in_tree {
        key = st_leaves[i];
        level = leaf_level(key, st_leaves[i + 1u], bits, levels);
        let s0 = st_starts[sb + i];
        let s1 = st_starts[sb + i + 1u];
        count = select(0u, s1 - s0, s1 >= s0);
        fresh = u64_eq(ev_vals[vb + i], NF_ALL);
        carried = !u64_eq(ev_vals[vb + cap + i], NF_ALL);
        let g = nf_group(key, level, i, live, bits, levels);
        leader = g.x != 0xffffffffu && g.y == 0u;
        if leader {
            let end = st_starts[sb + i + (1u << bits)];
            parent = select(0u, end - s0, end >= s0);
        }
    }
    // The leaf's own stencil.
    var part = 0u;
    if in_tree && fresh && count > 0u {
        let st = nf_stencil_setup(key, level, ev_p.hilbert, bits, levels);
        for (var c = sub; c < 27u; c += lanes) {
            part += nf_stencil_cell(st, c, live, ev_p.n, sb, i, ev_p.hilbert);
        }
    }
    ev_parts[lid] = part;
    storageBarrier();
    workgroupBarrier();
    var own = 0u;
    if sub == 0u {
        for (var k = 0u; k < lanes; k++) {
            own += ev_parts[lid + k];
        }
    }
    workgroupBarrier();
    // A group leader's parent stencil.
    let lead = in_tree && leader && !carried && parent > 0u;
    part = 0u;
    if lead {
        let st = nf_stencil_setup(key, level - 1u, ev_p.hilbert, bits, levels);
        for (var c = sub; c < 27u; c += lanes) {
            part += nf_stencil_cell(st, c, live, ev_p.n, sb, i, ev_p.hilbert);
        }
    }
    ev_parts[lid] = part;
    workgroupBarrier();
    if in_tree && sub == 0u {
        ev_counts[i] = count;
        if fresh {
            ev_vals[vb + i] = mul_wide(count, own);
        }
        if !leader {
            ev_vals[vb + cap + i] = NF_ALL;
        } else if !carried {
            var up = 0u;
            for (var k = 0u; k < lanes; k++) {
                up += ev_parts[lid + k];
            }
            ev_vals[vb + cap + i] = mul_wide(parent, up);
        }
    }
}

// ---- tb_nf_ops -----------------------------------------------------------------------------

struct OpsParams {
    capacity: u32,
    parity: u32,
    threshold_lo: u32,
    threshold_hi: u32,
    bits: u32,
    levels: u32,
}

@group(0) @binding(0) var<storage, read> op_leaves: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> op_vals: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read_write> op_ops: array<u32>;
@group(0) @binding(3) var<storage, read_write> op_status: array<atomic<u32>>;
@group(0) @binding(4) var<uniform> op_p: OpsParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tb_nf_ops(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
    if atomicLoad(&op_status[ST_STATE]) != RUN {
        return;
    }
    let cap = op_p.capacity;
    let live = min(atomicLoad(&op_status[ST_LEAF_COUNT]), cap);
    let i = item_index(wid, nwg, lid);
    if i >= live {
        return;
    }
    let vb = op_p.parity * 2u * cap;
    let bits = op_p.bits;
    let levels = op_p.levels;
    let threshold = vec2<u32>(op_p.threshold_lo, op_p.threshold_hi);
    let key = op_leaves[i];
    let level = leaf_level(key, op_leaves[i + 1u], bits, levels);
    // sibling_group, as nf_group (which reads the stencil bindings) over op_leaves.
    var merge = false;
    if level > 0u {
        let children = 1u << bits;
        let s = shr64(key, bits * (levels - level)).x & (children - 1u);
        if s > 0u && s <= i {
            let f = i - s;
            let last = f + children;
            let parent_size = pow2_64(bits * (levels - level + 1u));
            if last <= live && u64_eq(op_leaves[last], u64_add(op_leaves[f], parent_size)) {
                merge = u64_le(op_vals[vb + cap + f], threshold);
            }
        }
    }
    var op = 0u;
    if !merge {
        op = 1u;
        let w = op_vals[vb + i];
        let jmax = max(NF_MAX_JUMP_BITS / bits, 1u);
        for (var j = jmax; j >= 1u; j--) {
            let sh = 2u * bits * (j - 1u);
            var bar = shl64(threshold, sh);
            if sh > 0u && !u64_eq(shr64(threshold, 64u - sh), vec2<u32>(0u, 0u)) {
                bar = NF_ALL;
            }
            if u64_lt(bar, w) && level + j <= levels {
                op = 1u << (bits * j);
                break;
            }
        }
    }
    op_ops[i] = op;
    if op != 1u {
        atomicOr(&op_status[ST_CHANGED], 1u);
    }
}

// ---- tb_nf_scatter -------------------------------------------------------------------------

struct NfScatterParams {
    capacity: u32,
    parity: u32,
    bits: u32,
    levels: u32,
}

@group(0) @binding(0) var<storage, read> ns_leaves: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> ns_ops: array<u32>;
@group(0) @binding(2) var<storage, read> ns_offsets: array<u32>;
@group(0) @binding(3) var<storage, read_write> ns_next: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read_write> ns_status: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> ns_starts: array<u32>;
@group(0) @binding(6) var<storage, read_write> ns_vals: array<vec2<u32>>;
@group(0) @binding(7) var<uniform> ns_p: NfScatterParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tb_nf_scatter(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                 @builtin(num_workgroups) nwg: vec3<u32>) {
    if atomicLoad(&ns_status[ST_STATE]) != RUN || atomicLoad(&ns_status[ST_CHANGED]) == 0u {
        return;
    }
    let cap = ns_p.capacity;
    let live = min(atomicLoad(&ns_status[ST_LEAF_COUNT]), cap);
    let total = ns_offsets[live];
    let i = item_index(wid, nwg, lid);
    if total > cap {
        if i == 0u {
            atomicStore(&ns_status[ST_OVERFLOW], 1u);
            atomicStore(&ns_status[ST_NEEDED], total);
        }
        return;
    }
    if i > live {
        return;
    }
    let sb = ns_p.parity * (cap + 1u);
    let nsb = (ns_p.parity ^ 1u) * (cap + 1u);
    let vb = ns_p.parity * 2u * cap;
    let nvb = (ns_p.parity ^ 1u) * 2u * cap;
    if i == live {
        ns_next[total] = key_end(ns_p.bits, ns_p.levels);
        ns_starts[nsb + total] = ns_starts[sb + live];
        return;
    }
    let op = ns_ops[i];
    if op == 0u {
        return;
    }
    let o = ns_offsets[i];
    let key = ns_leaves[i];
    let s0 = ns_starts[sb + i];
    if op == 1u {
        ns_next[o] = key;
        ns_starts[nsb + o] = s0;
        if i + 1u < live && ns_ops[i + 1u] == 0u {
            ns_vals[nvb + o] = ns_vals[vb + cap + i];
            ns_vals[nvb + cap + o] = NF_ALL;
        } else {
            ns_vals[nvb + o] = ns_vals[vb + i];
            ns_vals[nvb + cap + o] = ns_vals[vb + cap + i];
        }
        return;
    }
    let level = leaf_level(key, ns_leaves[i + 1u], ns_p.bits, ns_p.levels);
    let jump = countTrailingZeros(op) / ns_p.bits;
    let shift = ns_p.bits * (ns_p.levels - level - jump);
    let hi = vec2<u32>(ns_starts[sb + i + 1u], 0u);
    for (var c = 0u; c < op; c++) {
        ns_next[o + c] = u64_add(key, shl64(vec2<u32>(c, 0u), shift));
        ns_starts[nsb + o + c] = s0;
        ns_vals[nvb + o + c] = NF_ALL;
        ns_vals[nvb + cap + o + c] = select(hi, NF_ALL, c == 0u);
    }
}

// ---- tb_nf_stencil_counts ------------------------------------------------------------------

struct StencilParams {
    queries: u32,
    live: u32,
    n: u32,
    hilbert: u32,
    bits: u32,
    levels: u32,
}

@group(0) @binding(4) var<storage, read> sq_keys: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read> sq_meta: array<u32>;
@group(0) @binding(6) var<storage, read_write> sq_out: array<vec2<u32>>;
@group(0) @binding(7) var<uniform> sq_p: StencilParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tb_nf_stencil_counts(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                        @builtin(num_workgroups) nwg: vec3<u32>) {
    let q = item_index(wid, nwg, lid);
    if q >= sq_p.queries {
        return;
    }
    let s = nf_stencil(sq_p.live, sq_p.n, 0u, sq_keys[q], sq_meta[2u * q], sq_meta[2u * q + 1u], sq_p.hilbert, sq_p.bits,
                       sq_p.levels);
    sq_out[q] = vec2<u32>(s, 0u);
}
