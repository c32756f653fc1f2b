// shaders/balltree/levels.wgsl — the ball tree build's global levels
// (crates/orrery-balltree/src/gpu/levels.rs), the WGSL twin of kernels/balltree/levels.cu:
// same entry points, same arguments, same arithmetic (f32 only). Module "balltree/levels":
// common.wgsl, then this file.
//
// What it computes (see levels.cu)
//   bt_reset_bounds  lo[i] = 0xffffffff, hi[i] = 0                       i < count
//   bt_bounds_f32    node_of[perm[p]] = segment of position p; per active segment and
//                    dimension the min / max ordered code (atomics)
//   bt_sbounds_f32   the same bounds from coords_t (Select), without node_of
//   bt_choose_f32    seg_dim[s] = split dimension (exact spread compare) or FROZEN
//   bt_keys_f32      keys[i] = (code(points[i][seg_dim[node_of[i]]]), node_of[i]) as
//                    vec2<u32> (low word = code, 0 in frozen segments), vals[i] = i
//
// Launch shapes
//   Per-item kernels: one invocation per item, any WORKGROUP_SIZE; the linear workgroup id
//   of a 2D dispatch (linear_block) times WORKGROUP_SIZE plus the local index.
//   bt_bounds_f32, bt_sbounds_f32: WORKGROUP_SIZE = ITEM_THREADS (256), BOUNDS_ITEMS (4)
//   consecutive positions per invocation; a tile inside one segment (segment_tile)
//   reduces in workgroup memory, one atomic per bound.
//
// Buffers (binding: direction, length, layout)
//   bt_reset_bounds: 0 lo (rw, count), 1 hi (rw, count), 2 params {count}
//   bt_bounds_f32:   0 points (r, n * dim f32 row-major), 1 seg_starts (r, all levels),
//                    2 seg_active (r, all levels), 3 perm (r, n), 4 node_of (rw, n),
//                    5 lo (rw atomic, segments * dim), 6 hi (rw atomic, segments * dim),
//                    7 params {n, dim, level_offset, segments}
//   bt_sbounds_f32:  0 coords_t (r, n * dim, dimension after dimension), 1 seg_starts (r),
//                    2 seg_active (r), 3 lo (rw atomic), 4 hi (rw atomic), 5 params
//                    {n, dim, level_offset, segments}
//   bt_choose_f32:   0 lo (r), 1 hi (r), 2 seg_active (r), 3 seg_dim (rw, segments),
//                    4 params {segments, dim, level_offset}
//   bt_keys_f32:     0 points (r), 1 node_of (r, n), 2 seg_dim (r), 3 keys (rw, n
//                    vec2<u32> = u64 little-endian), 4 vals (rw, n), 5 params {n, dim}
//   The segment search (core/segment) reads the starts through binding 1 (bd_starts) in
//   both bounds kernels.
//
// Invariants: as levels.cu (segments contiguous in position order, non-empty).
//
// Measured cost (H200, Vulkan): the wgpu build is dominated by the executor's sort (1.0 ms
//   for 1M pairs); these kernels were not measured separately yet.

//#include core/segment

// ---- bt_reset_bounds ----------------------------------------------------------------

struct ResetParams {
    count: u32,
}

@group(0) @binding(0) var<storage, read_write> rb_lo: array<u32>;
@group(0) @binding(1) var<storage, read_write> rb_hi: array<u32>;
@group(0) @binding(2) var<uniform> rb_p: ResetParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn bt_reset_bounds(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                   @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = item_index(wid, nwg, lid);
    if i < rb_p.count {
        rb_lo[i] = 0xffffffffu;
        rb_hi[i] = 0u;
    }
}

// ---- bt_bounds_f32 ------------------------------------------------------------------

struct BoundsParams {
    n: u32,
    dim: u32,
    level_offset: u32,
    segments: u32,
}

@group(0) @binding(0) var<storage, read> bd_points: array<f32>;
@group(0) @binding(1) var<storage, read> bd_starts: array<u32>;
@group(0) @binding(2) var<storage, read> bd_active: array<u32>;
@group(0) @binding(3) var<storage, read> bd_perm: array<u32>;
@group(0) @binding(4) var<storage, read_write> bd_node_of: array<u32>;
@group(0) @binding(5) var<storage, read_write> bd_lo: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> bd_hi: array<atomic<u32>>;
@group(0) @binding(7) var<uniform> bd_p: BoundsParams;

var<workgroup> bd_red_lo: array<u32, ITEM_THREADS>;
var<workgroup> bd_red_hi: array<u32, ITEM_THREADS>;

// The workgroup's min of `lo` and max of `hi` into bd_red_lo[0] / bd_red_hi[0] (a tree in
// workgroup memory; every invocation calls it, in uniform control flow).
fn reduce_bounds(tid: u32, lo: u32, hi: u32) {
    bd_red_lo[tid] = lo;
    bd_red_hi[tid] = hi;
    workgroupBarrier();
    for (var w = ITEM_THREADS / 2u; w > 0u; w >>= 1u) {
        if tid < w {
            bd_red_lo[tid] = min(bd_red_lo[tid], bd_red_lo[tid + w]);
            bd_red_hi[tid] = max(bd_red_hi[tid], bd_red_hi[tid + w]);
        }
        workgroupBarrier();
    }
}

// The starts the segment search (core/segment) reads: binding 1 of bt_bounds_f32 and
// bt_sbounds_f32.
fn segment_start(i: u32) -> u32 {
    return bd_starts[i];
}


@compute @workgroup_size(WORKGROUP_SIZE)
fn bt_bounds_f32(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                 @builtin(num_workgroups) nwg: vec3<u32>) {
    let base = linear_block(wid, nwg) * (ITEM_THREADS * BOUNDS_ITEMS);
    if base >= bd_p.n {
        return;
    }
    let end = min(base + ITEM_THREADS * BOUNDS_ITEMS, bd_p.n);
    let dim = bd_p.dim;
    let off = bd_p.level_offset;
    let tile = segment_tile(off, bd_p.segments, base, end);
    let first = tile.x;
    let last = tile.y;
    var pt: array<u32, BOUNDS_ITEMS>;
    var sg: array<u32, BOUNDS_ITEMS>;
    let p0 = base + tid * BOUNDS_ITEMS;
    var s = 0u;
    if p0 < end {
        s = segment_of(off, bd_p.segments, p0);
    }
    for (var r = 0u; r < BOUNDS_ITEMS; r++) {
        let p = p0 + r;
        pt[r] = PAD;
        sg[r] = PAD;
        if p < end {
            while s + 1u < bd_p.segments && bd_starts[off + s + 1u] <= p {
                s += 1u;
            }
            pt[r] = bd_perm[p];
            sg[r] = s;
            bd_node_of[pt[r]] = s;
        }
    }
    if first == last {
        // The whole workgroup lies in one segment: a workgroup reduction, one atomic per bound.
        if bd_active[off + first] == 0u {
            return;
        }
        for (var d = 0u; d < dim; d++) {
            var lo = 0xffffffffu;
            var hi = 0u;
            for (var r = 0u; r < BOUNDS_ITEMS; r++) {
                if pt[r] != PAD {
                    let v = ord_f32(bd_points[pt[r] * dim + d]);
                    lo = min(lo, v);
                    hi = max(hi, v);
                }
            }
            reduce_bounds(tid, lo, hi);
            if tid == 0u {
                atomicMin(&bd_lo[first * dim + d], bd_red_lo[0]);
                atomicMax(&bd_hi[first * dim + d], bd_red_hi[0]);
            }
            workgroupBarrier();
        }
        return;
    }
    // Segment boundaries inside the workgroup: runs per invocation, one atomic per run.
    for (var d = 0u; d < dim; d++) {
        var cur = PAD;
        var lo = 0xffffffffu;
        var hi = 0u;
        for (var r = 0u; r < BOUNDS_ITEMS; r++) {
            if pt[r] == PAD {
                continue;
            }
            if sg[r] != cur {
                if cur != PAD && bd_active[off + cur] != 0u {
                    atomicMin(&bd_lo[cur * dim + d], lo);
                    atomicMax(&bd_hi[cur * dim + d], hi);
                }
                cur = sg[r];
                lo = 0xffffffffu;
                hi = 0u;
            }
            if bd_active[off + cur] != 0u {
                let v = ord_f32(bd_points[pt[r] * dim + d]);
                lo = min(lo, v);
                hi = max(hi, v);
            }
        }
        if cur != PAD && bd_active[off + cur] != 0u {
            atomicMin(&bd_lo[cur * dim + d], lo);
            atomicMax(&bd_hi[cur * dim + d], hi);
        }
    }
}

// ---- bt_choose_f32 ------------------------------------------------------------------

struct ChooseParams {
    segments: u32,
    dim: u32,
    level_offset: u32,
}

@group(0) @binding(0) var<storage, read> ch_lo: array<u32>;
@group(0) @binding(1) var<storage, read> ch_hi: array<u32>;
@group(0) @binding(2) var<storage, read> ch_active: array<u32>;
@group(0) @binding(3) var<storage, read_write> ch_seg_dim: array<u32>;
@group(0) @binding(4) var<uniform> ch_p: ChooseParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn bt_choose_f32(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                 @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = item_index(wid, nwg, lid);
    if s >= ch_p.segments {
        return;
    }
    if ch_active[ch_p.level_offset + s] == 0u {
        ch_seg_dim[s] = FROZEN;
        return;
    }
    var best = Spread(0u, 0.0, 0.0);
    var best_dim = 0u;
    for (var d = 0u; d < ch_p.dim; d++) {
        let i = s * ch_p.dim + d;
        let x = spread_of(dec_f32(ch_lo[i]), dec_f32(ch_hi[i]));
        if spread_greater(x, best) {
            best = x;
            best_dim = d;
        }
    }
    ch_seg_dim[s] = best_dim;
}

// ---- bt_keys_f32 --------------------------------------------------------------------

struct KeysParams {
    n: u32,
    dim: u32,
}

@group(0) @binding(0) var<storage, read> ke_points: array<f32>;
@group(0) @binding(1) var<storage, read> ke_node_of: array<u32>;
@group(0) @binding(2) var<storage, read> ke_seg_dim: array<u32>;
@group(0) @binding(3) var<storage, read_write> ke_keys: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read_write> ke_vals: array<u32>;
@group(0) @binding(5) var<uniform> ke_p: KeysParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn bt_keys_f32(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
               @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = item_index(wid, nwg, lid);
    if i >= ke_p.n {
        return;
    }
    let s = ke_node_of[i];
    let d = ke_seg_dim[s];
    var code = 0u;
    if d != FROZEN {
        code = ord_f32(ke_points[i * ke_p.dim + d]);
    }
    ke_keys[i] = vec2<u32>(code, s);
    ke_vals[i] = i;
}

// ---- bt_sbounds_f32: bounds from coords_t (coalesced) ----------------------------------

@group(0) @binding(0) var<storage, read> sb_coords: array<f32>;
// binding 1: the level's segment starts, read through bd_starts (see segment_start).
@group(0) @binding(2) var<storage, read> sb_active: array<u32>;
@group(0) @binding(3) var<storage, read_write> sb_lo: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> sb_hi: array<atomic<u32>>;
@group(0) @binding(5) var<uniform> sb_p: BoundsParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn bt_sbounds_f32(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                  @builtin(num_workgroups) nwg: vec3<u32>) {
    let base = linear_block(wid, nwg) * (ITEM_THREADS * BOUNDS_ITEMS);
    if base >= sb_p.n {
        return;
    }
    let n = sb_p.n;
    let end = min(base + ITEM_THREADS * BOUNDS_ITEMS, n);
    let dim = sb_p.dim;
    let off = sb_p.level_offset;
    let tile = segment_tile(off, sb_p.segments, base, end);
    let first = tile.x;
    let last = tile.y;
    let p0 = base + tid * BOUNDS_ITEMS;
    if first == last {
        // One segment: a workgroup reduction, one atomic per bound.
        if sb_active[off + first] == 0u {
            return;
        }
        for (var d = 0u; d < dim; d++) {
            var lo = 0xffffffffu;
            var hi = 0u;
            for (var r = 0u; r < BOUNDS_ITEMS; r++) {
                if p0 + r < end {
                    let v = ord_f32(sb_coords[d * n + p0 + r]);
                    lo = min(lo, v);
                    hi = max(hi, v);
                }
            }
            reduce_bounds(tid, lo, hi);
            if tid == 0u {
                atomicMin(&sb_lo[first * dim + d], bd_red_lo[0]);
                atomicMax(&sb_hi[first * dim + d], bd_red_hi[0]);
            }
            workgroupBarrier();
        }
        return;
    }
    // Segment boundaries inside the workgroup: one atomic per position and bound.
    if p0 >= end {
        return;
    }
    var s = segment_of(off, sb_p.segments, p0);
    for (var r = 0u; r < BOUNDS_ITEMS; r++) {
        let p = p0 + r;
        if p >= end {
            break;
        }
        while s + 1u < sb_p.segments && bd_starts[off + s + 1u] <= p {
            s += 1u;
        }
        if sb_active[off + s] != 0u {
            for (var d = 0u; d < dim; d++) {
                let v = ord_f32(sb_coords[d * n + p]);
                atomicMin(&sb_lo[s * dim + d], v);
                atomicMax(&sb_hi[s * dim + d], v);
            }
        }
    }
}
