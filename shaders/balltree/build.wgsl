// shaders/balltree/build.wgsl — the GPU ball tree build (crates/orrery-balltree/src/gpu),
// the WGSL twin of kernels/balltree/build.cu: same entry points, same arguments, same
// arithmetic (f32 only: WGSL has no f64; the host reports f64 input as unsupported).
//
// What it computes (see build.cu for the full description)
//   Per global level:
//     bt_reset_bounds  lo[i] = 0xffffffff, hi[i] = 0                       i < count
//     bt_bounds_f32    node_of[perm[p]] = segment of position p; per active segment and
//                      dimension the min / max ordered code (atomics)
//     bt_choose_f32    seg_dim[s] = split dimension (exact spread compare) or FROZEN
//     bt_keys_f32      keys[i] = (code(points[i][seg_dim[node_of[i]]]), node_of[i]) as
//                      vec2<u32> (low word = code, 0 in frozen segments), vals[i] = i
//   Per global level of the Select strategy (after bt_transpose_f32 once): bt_reset_bounds,
//     bt_sbounds_f32, bt_choose_f32, bt_select_init, rounds of bt_select_count_f32 and
//     bt_select_find_f32, bt_select_flags_f32, the executor's scan, bt_select_scatter_f32:
//     the segmented radix selection of build.cu (see its section), f32 only.
//   Local phase:
//     bt_local_f32     one workgroup finishes up to LOCAL_CAPACITY / 2^h subtrees of 2^h
//                      slots: stage the coordinates; per local level split dimensions
//                      (workgroup-memory tree), keys, a bitonic sort of every aligned
//                      segment by (code, global index), the split move; then the leaves.
//     bt_local_ordered_f32  the same algorithm (both call local_phase), under the name the
//                      host launches for Select; build.cu's packs the sort key into a u64.
//
// Launch shapes
//   Per-item kernels: one invocation per item, any WORKGROUP_SIZE; the linear workgroup id
//   of a 2D dispatch (linear_block) times WORKGROUP_SIZE plus the local index.
//   bt_bounds_f32: WORKGROUP_SIZE = ITEM_THREADS (256), BOUNDS_ITEMS (4) consecutive
//   positions per invocation. bt_local_f32, bt_local_ordered_f32: WORKGROUP_SIZE =
//   LOCAL_THREADS (256), one workgroup per block (workgroups past num_blocks return).
//
// Buffers (binding: direction, length, layout)
//   bt_reset_bounds: 0 lo (rw, count), 1 hi (rw, count), 2 params {count}
//   bt_bounds_f32:   0 points (r, n * dim f32 row-major), 1 seg_starts (r, all levels),
//                    2 seg_active (r, all levels), 3 perm (r, n), 4 node_of (rw, n),
//                    5 lo (rw atomic, segments * dim), 6 hi (rw atomic, segments * dim),
//                    7 params {n, dim, level_offset, segments}
//   bt_choose_f32:   0 lo (r), 1 hi (r), 2 seg_active (r), 3 seg_dim (rw, segments),
//                    4 params {segments, dim, level_offset}
//   bt_keys_f32:     0 points (r), 1 node_of (r, n), 2 seg_dim (r), 3 keys (rw, n
//                    vec2<u32> = u64 little-endian), 4 vals (rw, n), 5 params {n, dim}
//   bt_local_f32 and bt_local_ordered_f32:
//                    0 points (r), 1 perm (r, n), 2 nodes (r, 3 per subtree: first
//                    position, points, first slot), 3 blocks (r, 4 per block: first
//                    subtree, subtrees, h, staging base), 4 staged (rw, sum of block
//                    slots * dim f32), 5 out_idx (rw, slots), 6 out_mask (rw, slots),
//                    7 params {dim, num_blocks}
//
// Invariants: as build.cu (finite coordinates; segments contiguous in position order;
// a subtree of 2^h slots holds more than 2^(h-2) points). Subnormal coordinates: a Vulkan
// adapter may flush them in the spread arithmetic (see gpu/spread.rs).
//
// Measured cost (build times, median of 10, device timestamps; gpu/mod.rs has the table):
//   H200 (Vulkan, subgroups of 32): Hybrid 16 x 1024 0.20 ms (bt_local alone, 16
//   workgroups), 64 x 16384 5.8 ms, 1 x 2^20 12.4 ms, most of it in the wgpu executor's
//   sort (1.0 ms for 1M pairs). lavapipe (llvmpipe, 2 cores): Hybrid 16 x 1024 48 ms.

//#include core/common

const FROZEN: u32 = 0xffffffffu;
const PAD: u32 = 0xffffffffu;
const ITEM_THREADS: u32 = 256u;
const BOUNDS_ITEMS: u32 = 4u;
const LOCAL_CAPACITY: u32 = 1024u;
const LOCAL_THREADS: u32 = 256u;
const LOCAL_ITEMS: u32 = 4u;

// ---- per-element rules (host reference: gpu/spread.rs) ----------------------------------

fn ord_f32(x: f32) -> u32 {
    var b = bitcast<u32>(x);
    if b == 0x80000000u {
        b = 0u;
    }
    return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

fn dec_f32(o: u32) -> f32 {
    return bitcast<f32>(select(~o, o & 0x7fffffffu, (o & 0x80000000u) != 0u));
}

fn is_finite_f32(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

struct Spread {
    overflow: u32,
    s: f32,
    e: f32,
}

fn spread_of(lo: f32, hi: f32) -> Spread {
    var a = hi;
    var b = -lo;
    var s = a + b;
    var overflow = 0u;
    if !is_finite_f32(s) {
        a = hi * 0.5;
        b = -(lo * 0.5);
        s = a + b;
        overflow = 1u;
    }
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    return Spread(overflow, s, e);
}

fn spread_greater(x: Spread, y: Spread) -> bool {
    if x.overflow != y.overflow {
        return x.overflow > y.overflow;
    }
    if x.s != y.s {
        return x.s > y.s;
    }
    return x.e > y.e;
}

fn item_index(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return linear_block(wid, nwg) * WORKGROUP_SIZE + lid;
}

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

// The segment of position p: the last s < segments with bd_starts[off + s] <= p. Used by
// bt_bounds_f32 and bt_sbounds_f32, which both bind the level's starts at binding 1.
fn segment_of(p: u32, off: u32, segments: u32) -> u32 {
    var lo = 0u;
    var hi = segments;
    while hi - lo > 1u {
        let mid = (lo + hi) >> 1u;
        if bd_starts[off + mid] <= p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
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
    let first = segment_of(base, bd_p.level_offset, bd_p.segments);
    let last = segment_of(end - 1u, bd_p.level_offset, bd_p.segments);
    var pt: array<u32, BOUNDS_ITEMS>;
    var sg: array<u32, BOUNDS_ITEMS>;
    let p0 = base + tid * BOUNDS_ITEMS;
    var s = 0u;
    if p0 < end {
        s = segment_of(p0, bd_p.level_offset, bd_p.segments);
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

// ---- the Select strategy (see build.cu: the same kernels, f32 only) ------------------
//
// Coordinates in position order, dimension after dimension (coords_t), move with the
// permutation; each active segment selects its pivot (rank floor(m/2) in the order
// (code, point index)) by rounds over 11-bit digits of that key, then a stable
// partition. A segment's state is SELECT_WORDS words: t (the pivot's rank among the
// candidates, 0 = decided), gi_prefix, gi_mask, pad, code_prefix, code_mask.

const SELECT_BINS: u32 = 2048u;
const SELECT_WORDS: u32 = 8u;
const FIND_BINS: u32 = 8u; // SELECT_BINS / ITEM_THREADS

// ---- bt_transpose_f32 -----------------------------------------------------------------

struct TransposeParams {
    n: u32,
    dim: u32,
}

@group(0) @binding(0) var<storage, read> tr_points: array<f32>;
@group(0) @binding(1) var<storage, read_write> tr_coords: array<f32>;
@group(0) @binding(2) var<uniform> tr_p: TransposeParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn bt_transpose_f32(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                    @builtin(num_workgroups) nwg: vec3<u32>) {
    let p = item_index(wid, nwg, lid);
    if p >= tr_p.n {
        return;
    }
    for (var d = 0u; d < tr_p.dim; d++) {
        tr_coords[d * tr_p.n + p] = tr_points[p * tr_p.dim + d];
    }
}

// ---- bt_sbounds_f32: bounds from coords_t (coalesced) ----------------------------------

@group(0) @binding(0) var<storage, read> sb_coords: array<f32>;
// binding 1: the level's segment starts, read through bd_starts (see segment_of).
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
    let first = segment_of(base, sb_p.level_offset, sb_p.segments);
    let last = segment_of(end - 1u, sb_p.level_offset, sb_p.segments);
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
    var s = segment_of(p0, sb_p.level_offset, sb_p.segments);
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

// ---- bt_select_init ----------------------------------------------------------------------

struct SelectInitParams {
    n: u32,
    level_offset: u32,
    segments: u32,
}

@group(0) @binding(0) var<storage, read> si_starts: array<u32>;
@group(0) @binding(1) var<storage, read> si_active: array<u32>;
@group(0) @binding(2) var<storage, read_write> si_state: array<u32>;
@group(0) @binding(3) var<storage, read_write> si_pending: array<atomic<u32>>;
@group(0) @binding(4) var<uniform> si_p: SelectInitParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn bt_select_init(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                  @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = item_index(wid, nwg, lid);
    if s >= si_p.segments {
        return;
    }
    var end = si_p.n;
    if s + 1u < si_p.segments {
        end = si_starts[si_p.level_offset + s + 1u];
    }
    let m = end - si_starts[si_p.level_offset + s];
    let is_active = si_active[si_p.level_offset + s] != 0u;
    si_state[s * SELECT_WORDS] = select(0u, m >> 1u, is_active);
    for (var k = 1u; k < SELECT_WORDS; k++) {
        si_state[s * SELECT_WORDS + k] = 0u;
    }
    if is_active {
        atomicAdd(&si_pending[0], 1u);
    }
}

// ---- shared by bt_select_count_f32, bt_select_flags_f32, bt_select_scatter_f32 ----------
// (bindings 0-3 are the same in the three kernels)

@group(0) @binding(0) var<storage, read> sl_coords: array<f32>;
@group(0) @binding(1) var<storage, read> sl_perm: array<u32>;
@group(0) @binding(2) var<storage, read> sl_starts: array<u32>;
@group(0) @binding(3) var<storage, read> sl_active: array<u32>;

fn sl_segment_of(p: u32, off: u32, segments: u32) -> u32 {
    var lo = 0u;
    var hi = segments;
    while hi - lo > 1u {
        let mid = (lo + hi) >> 1u;
        if sl_starts[off + mid] <= p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// ---- bt_select_count_f32 -------------------------------------------------------------

struct CountParams {
    n: u32,
    level_offset: u32,
    segments: u32,
    part: u32,
    shift: u32,
    width: u32,
}

@group(0) @binding(4) var<storage, read> sc_seg_dim: array<u32>;
@group(0) @binding(5) var<storage, read> sc_state: array<u32>;
@group(0) @binding(6) var<storage, read_write> sc_hist: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read> sc_pending: array<u32>;
@group(0) @binding(8) var<uniform> sc_p: CountParams;

var<workgroup> sc_tile: array<atomic<u32>, SELECT_BINS>;

// The round's digit of point (code, gi) of segment s, or PAD for a non-candidate.
fn sc_digit(s: u32, code: u32, gi: u32) -> u32 {
    let w = s * SELECT_WORDS;
    if (gi & sc_state[w + 2u]) != sc_state[w + 1u] || (code & sc_state[w + 5u]) != sc_state[w + 4u] {
        return PAD;
    }
    let wmask = (1u << sc_p.width) - 1u;
    return select((gi >> sc_p.shift) & wmask, (code >> sc_p.shift) & wmask, sc_p.part == 0u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn bt_select_count_f32(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                       @builtin(num_workgroups) nwg: vec3<u32>) {
    if sc_pending[0] == 0u {
        return;
    }
    let n = sc_p.n;
    let base = linear_block(wid, nwg) * (ITEM_THREADS * BOUNDS_ITEMS);
    if base >= n {
        return;
    }
    let end = min(base + ITEM_THREADS * BOUNDS_ITEMS, n);
    let off = sc_p.level_offset;
    let first = sl_segment_of(base, off, sc_p.segments);
    let last = sl_segment_of(end - 1u, off, sc_p.segments);
    let p0 = base + tid * BOUNDS_ITEMS;
    if first == last {
        if sl_active[off + first] == 0u || sc_state[first * SELECT_WORDS] == 0u {
            return;
        }
        for (var b = tid; b < SELECT_BINS; b += ITEM_THREADS) {
            atomicStore(&sc_tile[b], 0u);
        }
        workgroupBarrier();
        let d = sc_seg_dim[first];
        for (var r = 0u; r < BOUNDS_ITEMS; r++) {
            let p = p0 + r;
            if p < end {
                let digit = sc_digit(first, ord_f32(sl_coords[d * n + p]), sl_perm[p]);
                if digit != PAD {
                    atomicAdd(&sc_tile[digit], 1u);
                }
            }
        }
        workgroupBarrier();
        for (var b = tid; b < SELECT_BINS; b += ITEM_THREADS) {
            let c = atomicLoad(&sc_tile[b]);
            if c != 0u {
                atomicAdd(&sc_hist[first * SELECT_BINS + b], c);
            }
        }
        return;
    }
    if p0 >= end {
        return;
    }
    var s = sl_segment_of(p0, off, sc_p.segments);
    for (var r = 0u; r < BOUNDS_ITEMS; r++) {
        let p = p0 + r;
        if p >= end {
            break;
        }
        while s + 1u < sc_p.segments && sl_starts[off + s + 1u] <= p {
            s += 1u;
        }
        if sl_active[off + s] == 0u || sc_state[s * SELECT_WORDS] == 0u {
            continue;
        }
        let digit = sc_digit(s, ord_f32(sl_coords[sc_seg_dim[s] * n + p]), sl_perm[p]);
        if digit != PAD {
            atomicAdd(&sc_hist[s * SELECT_BINS + digit], 1u);
        }
    }
}

// ---- bt_select_find_f32: one workgroup of ITEM_THREADS per segment ------------------------

struct FindParams {
    level_offset: u32,
    segments: u32,
    part: u32,
    shift: u32,
    width: u32,
}

@group(0) @binding(0) var<storage, read> sf_active: array<u32>;
@group(0) @binding(1) var<storage, read_write> sf_state: array<u32>;
@group(0) @binding(2) var<storage, read_write> sf_hist: array<u32>;
@group(0) @binding(3) var<storage, read_write> sf_pending: array<atomic<u32>>;
@group(0) @binding(4) var<uniform> sf_p: FindParams;

var<workgroup> sf_scan: array<u32, ITEM_THREADS>;
var<workgroup> sf_t: u32;

@compute @workgroup_size(WORKGROUP_SIZE)
fn bt_select_find_f32(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                      @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = linear_block(wid, nwg);
    if s >= sf_p.segments || sf_active[sf_p.level_offset + s] == 0u {
        return;
    }
    if tid == 0u {
        sf_t = sf_state[s * SELECT_WORDS];
    }
    let t = workgroupUniformLoad(&sf_t);
    if t == 0u {
        return;
    }
    let b0 = s * SELECT_BINS + tid * FIND_BINS;
    var v: array<u32, FIND_BINS>;
    var sum = 0u;
    for (var k = 0u; k < FIND_BINS; k++) {
        v[k] = sf_hist[b0 + k];
        sf_hist[b0 + k] = 0u;
        sum += v[k];
    }
    // Inclusive scan of the per-invocation sums (Hillis-Steele in workgroup memory).
    sf_scan[tid] = sum;
    workgroupBarrier();
    for (var w = 1u; w < ITEM_THREADS; w <<= 1u) {
        var x = 0u;
        if tid >= w {
            x = sf_scan[tid - w];
        }
        workgroupBarrier();
        sf_scan[tid] += x;
        workgroupBarrier();
    }
    let excl = sf_scan[tid] - sum;
    if t < excl || t >= excl + sum {
        return;
    }
    var c = excl;
    var bucket = 0u;
    var rank = 0u;
    var found = false;
    for (var k = 0u; k < FIND_BINS; k++) {
        if !found && t < c + v[k] {
            found = true;
            bucket = tid * FIND_BINS + k;
            rank = t - c;
        }
        c += v[k];
    }
    let w = s * SELECT_WORDS;
    let wmask = (1u << sf_p.width) - 1u;
    if sf_p.part == 0u {
        sf_state[w + 4u] |= bucket << sf_p.shift;
        sf_state[w + 5u] |= wmask << sf_p.shift;
    } else {
        sf_state[w + 1u] |= bucket << sf_p.shift;
        sf_state[w + 2u] |= wmask << sf_p.shift;
    }
    sf_state[w] = rank;
    if rank == 0u {
        atomicSub(&sf_pending[0], 1u);
    }
}

// ---- bt_select_flags_f32 -------------------------------------------------------------

struct FlagsParams {
    n: u32,
    level_offset: u32,
    segments: u32,
}

@group(0) @binding(4) var<storage, read> sg_seg_dim: array<u32>;
@group(0) @binding(5) var<storage, read> sg_state: array<u32>;
@group(0) @binding(6) var<storage, read_write> sg_flags: array<u32>;
@group(0) @binding(7) var<uniform> sg_p: FlagsParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn bt_select_flags_f32(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                       @builtin(num_workgroups) nwg: vec3<u32>) {
    let p = item_index(wid, nwg, lid);
    if p >= sg_p.n {
        return;
    }
    let s = sl_segment_of(p, sg_p.level_offset, sg_p.segments);
    var left = 0u;
    if sl_active[sg_p.level_offset + s] != 0u {
        let w = s * SELECT_WORDS;
        let code = ord_f32(sl_coords[sg_seg_dim[s] * sg_p.n + p]) & sg_state[w + 5u];
        let gi = sl_perm[p] & sg_state[w + 2u];
        let pc = sg_state[w + 4u];
        left = select(0u, 1u, code < pc || (code == pc && gi < sg_state[w + 1u]));
    }
    sg_flags[p] = left;
}

// ---- bt_select_scatter_f32 -----------------------------------------------------------

struct ScatterParams {
    n: u32,
    dim: u32,
    level_offset: u32,
    segments: u32,
}

@group(0) @binding(4) var<storage, read> ss_scan: array<u32>;
@group(0) @binding(5) var<storage, read_write> ss_coords_out: array<f32>;
@group(0) @binding(6) var<storage, read_write> ss_perm_out: array<u32>;
@group(0) @binding(7) var<uniform> ss_p: ScatterParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn bt_select_scatter_f32(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                         @builtin(num_workgroups) nwg: vec3<u32>) {
    let p = item_index(wid, nwg, lid);
    let n = ss_p.n;
    if p >= n {
        return;
    }
    let off = ss_p.level_offset;
    let s = sl_segment_of(p, off, ss_p.segments);
    var dest = p;
    if sl_active[off + s] != 0u {
        let start = sl_starts[off + s];
        var end = n;
        if s + 1u < ss_p.segments {
            end = sl_starts[off + s + 1u];
        }
        let half = (end - start) >> 1u;
        let before = ss_scan[p] - ss_scan[start];
        if ss_scan[p + 1u] != ss_scan[p] {
            dest = start + before;
        } else {
            dest = start + half + (p - start - before);
        }
    }
    ss_perm_out[dest] = sl_perm[p];
    for (var d = 0u; d < ss_p.dim; d++) {
        ss_coords_out[d * n + dest] = sl_coords[d * n + p];
    }
}

// ---- bt_local_f32, bt_local_ordered_f32 ----------------------------------------------

struct LocalParams {
    dim: u32,
    num_blocks: u32,
}

@group(0) @binding(0) var<storage, read> lc_points: array<f32>;
@group(0) @binding(1) var<storage, read> lc_perm: array<u32>;
@group(0) @binding(2) var<storage, read> lc_nodes: array<u32>;
@group(0) @binding(3) var<storage, read> lc_blocks: array<u32>;
@group(0) @binding(4) var<storage, read_write> lc_staged: array<f32>;
@group(0) @binding(5) var<storage, read_write> lc_out_idx: array<u32>;
@group(0) @binding(6) var<storage, read_write> lc_out_mask: array<u32>;
@group(0) @binding(7) var<uniform> lc_p: LocalParams;

// Codes of the split coordinate (padding: all ones), local point numbers in slot order
// (padding: PAD), the global index of each local number.
var<workgroup> lc_key: array<u32, LOCAL_CAPACITY>;
var<workgroup> lc_idx: array<u32, LOCAL_CAPACITY>;
var<workgroup> lc_gidx: array<u32, LOCAL_CAPACITY>;
var<workgroup> lc_red_lo: array<u32, LOCAL_THREADS>;
var<workgroup> lc_red_hi: array<u32, LOCAL_THREADS>;
var<workgroup> lc_seg_dim: array<u32, 256>; // LOCAL_CAPACITY / 4

// Points of segment `seg` (2^g slots) of a block whose subtrees have 2^h slots.
fn segment_points(first: u32, seg: u32, g: u32, h: u32) -> u32 {
    let rel = h - g;
    let j = seg & ((1u << rel) - 1u);
    var m = lc_nodes[3u * (first + (seg >> rel)) + 1u];
    for (var bit = rel; bit > 0u; bit--) {
        if ((j >> (bit - 1u)) & 1u) != 0u {
            m = m - (m >> 1u);
        } else {
            m = m >> 1u;
        }
    }
    return m;
}

// The local phase of block `blk`, run by its workgroup (invocation `tid`): the body of
// both entry points below.
fn local_phase(tid: u32, blk: u32) {
    if blk >= lc_p.num_blocks {
        return;
    }
    let dim = lc_p.dim;
    let first = lc_blocks[4u * blk];
    let count = lc_blocks[4u * blk + 1u];
    let h = lc_blocks[4u * blk + 2u];
    let base = lc_blocks[4u * blk + 3u] * dim; // this block's staged coordinates
    let used = count << h;
    let node_mask = (1u << h) - 1u;

    // Load: local number t = slot t at the start; stage the coordinates contiguously.
    for (var t = tid; t < used; t += LOCAL_THREADS) {
        let node = first + (t >> h);
        let r = t & node_mask;
        var v = PAD;
        if r < lc_nodes[3u * node + 1u] {
            let g = lc_perm[lc_nodes[3u * node] + r];
            v = t;
            lc_gidx[t] = g;
            for (var d = 0u; d < dim; d++) {
                lc_staged[base + t * dim + d] = lc_points[g * dim + d];
            }
        }
        lc_idx[t] = v;
    }
    storageBarrier();
    workgroupBarrier();

    for (var g = h; g >= 2u; g--) {
        let S = 1u << g;
        // 1. Split dimension of every segment (slots [4t, 4t + 4) per invocation, a tree
        //    over the S / 4 invocations of each segment, the leader compares spreads).
        if dim > 1u {
            let G = S / LOCAL_ITEMS;
            let c0 = tid * LOCAL_ITEMS;
            let live = c0 < used;
            let leader = live && (tid & (G - 1u)) == 0u;
            var best = Spread(0u, 0.0, 0.0);
            var best_dim = 0u;
            for (var d = 0u; d < dim; d++) {
                var lo = 0xffffffffu;
                var hi = 0u;
                if live {
                    for (var r = 0u; r < LOCAL_ITEMS; r++) {
                        let i = lc_idx[c0 + r];
                        if i != PAD {
                            let v = ord_f32(lc_staged[base + i * dim + d]);
                            lo = min(lo, v);
                            hi = max(hi, v);
                        }
                    }
                }
                lc_red_lo[tid] = lo;
                lc_red_hi[tid] = hi;
                workgroupBarrier();
                for (var w = 1u; w < G; w <<= 1u) {
                    if (tid & (2u * w - 1u)) == 0u {
                        lc_red_lo[tid] = min(lc_red_lo[tid], lc_red_lo[tid + w]);
                        lc_red_hi[tid] = max(lc_red_hi[tid], lc_red_hi[tid + w]);
                    }
                    workgroupBarrier();
                }
                if leader {
                    let x = spread_of(dec_f32(lc_red_lo[tid]), dec_f32(lc_red_hi[tid]));
                    if spread_greater(x, best) {
                        best = x;
                        best_dim = d;
                    }
                }
                workgroupBarrier();
            }
            if leader {
                lc_seg_dim[c0 >> g] = best_dim;
            }
            workgroupBarrier();
        }
        // 2. Keys; padding sorts last.
        for (var t = tid; t < used; t += LOCAL_THREADS) {
            let i = lc_idx[t];
            var d = 0u;
            if dim > 1u {
                d = lc_seg_dim[t >> g];
            }
            var k = 0xffffffffu;
            if i != PAD {
                k = ord_f32(lc_staged[base + i * dim + d]);
            }
            lc_key[t] = k;
        }
        workgroupBarrier();
        // 3. Bitonic sort of every aligned segment of S slots by (key, global index),
        //    ascending; equal keys are two real points or two paddings.
        for (var k = 2u; k <= S; k <<= 1u) {
            for (var j = k >> 1u; j > 0u; j >>= 1u) {
                for (var q = tid; q < used / 2u; q += LOCAL_THREADS) {
                    let a = ((q & ~(j - 1u)) << 1u) | (q & (j - 1u));
                    let b = a | j;
                    let ascending = ((a & (S - 1u)) & k) == 0u;
                    let ka = lc_key[a];
                    let kb = lc_key[b];
                    let ia = lc_idx[a];
                    let ib = lc_idx[b];
                    var greater = ka > kb;
                    if ka == kb && ia != PAD {
                        greater = lc_gidx[ia] > lc_gidx[ib];
                    }
                    if greater == ascending {
                        lc_key[a] = kb;
                        lc_key[b] = ka;
                        lc_idx[a] = ib;
                        lc_idx[b] = ia;
                    }
                }
                workgroupBarrier();
            }
        }
        // 4. Left child: the first floor(m/2) points stay; right child: the rest moves to
        //    the front of the second half; everything else is padding.
        var moved: array<u32, LOCAL_ITEMS>;
        for (var r = 0u; r < LOCAL_ITEMS; r++) {
            let t = tid + r * LOCAL_THREADS;
            moved[r] = PAD;
            if t < used {
                let seg = t >> g;
                let m = segment_points(first, seg, g, h);
                let left = m >> 1u;
                let half = S >> 1u;
                let ri = t & (S - 1u);
                var src = PAD;
                if ri < half {
                    if ri < left {
                        src = ri;
                    }
                } else if ri - half < m - left {
                    src = left + (ri - half);
                }
                if src != PAD {
                    moved[r] = lc_idx[(seg << g) + src];
                }
            }
        }
        workgroupBarrier();
        for (var r = 0u; r < LOCAL_ITEMS; r++) {
            let t = tid + r * LOCAL_THREADS;
            if t < used {
                lc_idx[t] = moved[r];
            }
        }
        workgroupBarrier();
    }

    // Leaves: two points by ascending index, or one point twice with the second masked.
    for (var l = tid; l < used / 2u; l += LOCAL_THREADS) {
        let t = 2u * l;
        let a = lc_gidx[lc_idx[t]];
        let ib = lc_idx[t + 1u];
        let slot = lc_nodes[3u * (first + (t >> h)) + 2u] + (t & node_mask);
        if ib == PAD {
            lc_out_idx[slot] = a;
            lc_out_idx[slot + 1u] = a;
            lc_out_mask[slot] = 1u;
            lc_out_mask[slot + 1u] = 0u;
        } else {
            let b = lc_gidx[ib];
            lc_out_idx[slot] = min(a, b);
            lc_out_idx[slot + 1u] = max(a, b);
            lc_out_mask[slot] = 1u;
            lc_out_mask[slot + 1u] = 1u;
        }
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn bt_local_f32(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
    local_phase(tid, linear_block(wid, nwg));
}

// The Select strategy's local phase (every subtree's points arrive in index order).
// build.cu packs the sort key into one u64 there; WGSL has no u64, so this runs
// bt_local_f32's algorithm, under the entry-point name the host uses for Select.
@compute @workgroup_size(WORKGROUP_SIZE)
fn bt_local_ordered_f32(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                        @builtin(num_workgroups) nwg: vec3<u32>) {
    local_phase(tid, linear_block(wid, nwg));
}
