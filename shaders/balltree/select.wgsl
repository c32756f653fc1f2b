// shaders/balltree/select.wgsl — the Select strategy's global levels
// (crates/orrery-balltree/src/gpu/select.rs), the WGSL twin of kernels/balltree/select.cu:
// same entry points, same arguments, f32 only. Module "balltree/select": common.wgsl, then
// this file.
//
// What it computes (see select.cu)
//   Coordinates in position order, dimension after dimension (coords_t), move with the
//   permutation; each active segment selects its pivot (rank floor(m/2) in the order
//   (code, point index)) by rounds over 11-bit digits of that key, then a stable
//   partition. A segment's state is SELECT_WORDS words: t (the pivot's rank among the
//   candidates, 0 = decided), gi_prefix, gi_mask, pad, code_prefix, code_mask.
//   bt_transpose_f32, bt_select_init, rounds of bt_select_count_f32 and
//   bt_select_find_f32, bt_select_flags_f32, (the executor's scan), bt_select_scatter_f32.
//
// Launch shapes
//   bt_transpose_f32, bt_select_init, bt_select_flags_f32, bt_select_scatter_f32: one
//   invocation per item, any WORKGROUP_SIZE. bt_select_count_f32: WORKGROUP_SIZE =
//   ITEM_THREADS, tiles of ITEM_THREADS * BOUNDS_ITEMS positions. bt_select_find_f32: one
//   workgroup of ITEM_THREADS per segment.
//
// Buffers (binding: direction, length, layout)
//   bt_transpose_f32: 0 points (r), 1 coords_t (rw, n * dim), 2 params {n, dim}
//   bt_select_init:   0 seg_starts (r), 1 seg_active (r), 2 state (rw, segments * 8),
//                     3 pending (rw atomic, 1), 4 params {n, level_offset, segments}
//   bt_select_count_f32: 0 coords_t (r), 1 perm (r), 2 seg_starts (r), 3 seg_active (r),
//                     4 seg_dim (r), 5 state (r), 6 hist (rw atomic, segments * 2048),
//                     7 pending (r), 8 params {n, level_offset, segments, part, shift, width}
//   bt_select_find_f32: 0 seg_active (r), 1 state (rw), 2 hist (rw), 3 pending (rw atomic),
//                     4 params {level_offset, segments, part, shift, width}
//   bt_select_flags_f32: 0-3 as count, 4 seg_dim (r), 5 state (r), 6 flags (rw, n),
//                     7 params {n, level_offset, segments}
//   bt_select_scatter_f32: 0-3 as count, 4 scan (r, n + 1), 5 coords_out (rw, n * dim),
//                     6 perm_out (rw, n), 7 params {n, dim, level_offset, segments}
//   The segment search (core/segment) reads the starts through binding 2 (sl_starts) in
//   count, flags and scatter.
//
// Invariants: as select.cu.
//
// Measured cost: not measured separately yet (see gpu/mod.rs for the build times).

//#include core/segment

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

// The starts the segment search (core/segment) reads: binding 2 of bt_select_count_f32,
// bt_select_flags_f32 and bt_select_scatter_f32.
fn segment_start(i: u32) -> u32 {
    return sl_starts[i];
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
    let tile = segment_tile(off, sc_p.segments, base, end);
    let first = tile.x;
    let last = tile.y;
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
    var s = segment_of(off, sc_p.segments, p0);
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
    let s = segment_of(sg_p.level_offset, sg_p.segments, p);
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
    let s = segment_of(off, ss_p.segments, p);
    var dest = p;
    if sl_active[off + s] != 0u {
        let start = sl_starts[off + s];
        let half = (segment_end(off, ss_p.segments, s, n) - start) >> 1u;
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
