// core/segmented — segmented (CSR) reduction, scan and top-k: one workgroup per segment,
// the references being orrery_core's cpu/segmented.rs (integer results bit-identical).
//
// Segments: segment s of a CSR `offsets` array (segments + 1 entries) over n elements is
// seg_bounds(s) = [start, end), start = min(offsets[s], n), end = min(max(offsets[s + 1],
// start), n) (orrery_core::executor::segment_bounds): decreasing offsets give empty
// segments, offsets past n are cut, so bad device data never faults.
//
// Variants (defines set by the executor):
//   element type  T_U32 | T_I32 | T_F32 | T_U64 | T_I64 | T_F64 (W64 with the 64-bit ones:
//                 array<vec2<u32>>, low word first)
//   operation     OP_SUM | OP_MIN | OP_MAX (segmented_reduce only)
// Only T_F64 with OP_SUM does f64 arithmetic (E = f64, needs SHADER_F64); every other
// variant works on raw words: signed compares for i32/i64, and for floats the IEEE `<`
// computed on the bits (false when either side is NaN, -0 == +0), so Min/Max are exact.
//
// 1. segmented_reduce (workgroup s = segment s)
//    red_output[s] = reduction of the segment with op (the identity when empty), in the
//    order of the CPU reference's contract: tiles of SEGMENT_TILE = 1024 elements from
//    the segment's start, left to right; in a tile invocation r folds elements 4r..4r+3
//    left to right from the identity, then a fixed tree combines adjacent pairs (stride
//    1, 2, ..., 128), the left operand always holding the lower indices. Min/Max keep the
//    first of equal values and never let a NaN in (combine(identity, NaN) = identity), as
//    ReduceOp::apply's left fold does: bit-identical to the CPU. Sums: integers wrap (u64
//    / i64 by add with carry); float sums differ from the CPU's sequential tile fold by
//    rounding only, and are the same run to run.
//    Buffers: 0 red_input (read, n, E), 1 red_offsets (read, segments + 1, u32),
//             2 red_output (write, segments, E), 3 params { segments, n, off_red_input,
//             off_red_offsets, off_red_output, identity: E }
//
// 2. segmented scan of u32 (exclusive or inclusive). Element i belongs to segment
//    owner(i) = upper_bound_one(offsets, i) - 1 when that is a segment and i lies in its
//    seg_bounds; otherwise its output is 0 (the CPU rule, defined for any offsets).
//    scan_orphans (one invocation per element): scan_output[i] = 0 for elements of no
//      segment.
//    scan_segments (workgroup s = segment s): walks seg_bounds(s) in tiles of 1024
//      (invocation rank r takes elements 4r..4r+3), skips elements whose owner is not s,
//      scans the rest with a workgroup scan and a carry between tiles (wrapping).
//    The two launches write disjoint elements. Each element's owner is a binary search
//    over the offsets (log2(segments + 1) reads, the cost of accepting any offsets).
//    Buffers: 0 scan_input (read, n, u32), 1 scan_offsets (read, segments + 1, u32),
//             2 scan_output (write, n, u32), 3 params { segments, n, inclusive,
//             off_scan_input, off_scan_offsets, off_scan_output }
//
// 3. segmented_top_k (workgroup s = segment s), k in 1..=MAX_K (1024)
//    Sort key of position p: sk(p) = order_key(keys[p]) as a 64-bit (hi, lo) pair,
//    complemented for Largest (params.largest), ties broken by p: the winners are the k
//    smallest (sk, p). A segment of m <= k elements takes all of them; otherwise a radix
//    select (8-bit digits, most significant first, 8 passes for 64-bit types and 4 for
//    32-bit ones, a 256-bin workgroup histogram per pass over the elements that match the
//    prefix) finds the key T of the k-th winner and how many of the winners equal T
//    (`need`); one ordered pass then collects every element with sk < T and the first
//    `need` elements with sk == T (by position, a workgroup scan per tile). The winners
//    are bitonic-sorted by (sk, p) in workgroup memory (keys and positions of MAX_K
//    entries: 12 KB; 14.1 KB in all) and written in order: tk_indices[s * k + j] = p,
//    tk_top[s * k + j] = keys[p] (the stored bits); slots past the segment's count get
//    position 0xffffffff and params.pad (T::HIGHEST for Smallest, T::LOWEST for Largest).
//    Buffers: 0 tk_keys (read, n, W), 1 tk_offsets (read, segments + 1, u32),
//             2 tk_indices (write, segments * k, u32), 3 tk_top (write, segments * k, W),
//             4 params { segments, n, k, largest, off_tk_keys, off_tk_offsets,
//             off_tk_indices, off_tk_top, pad: W }
//
// Launch shape: WORKGROUP_SIZE = 256 invocations (the top-k histogram has one bin per
// invocation, so it must be 256); one workgroup per segment (linear_block over a 2D
// dispatch, workgroups past params.segments return), scan_orphans ceil(n / 256).
//
// Invariants: n < 2^31 (a wgpu binding holds fewer 4-byte elements), so index sums never
// wrap; segments * k < 2^32 (host-checked lengths); no workgroup waits for another
// (WebGPU promises no forward progress between workgroups). Loop bounds and branches that
// contain barriers depend only on params and on workgroupUniformLoad results.
//
// Measured cost: not measured yet.

//#include core/common
//#include core/wg_scan

const SEGMENT_TILE: u32 = 1024u;
const ITEMS: u32 = 4u;
const MAX_K: u32 = 1024u;
const BINS: u32 = 256u;

//#if W64
alias W = vec2<u32>;
//#else
alias W = u32;
//#endif

//#if T_F64
//#if OP_SUM
alias E = f64;
//#else
alias E = W;
//#endif
//#else
alias E = W;
//#endif

// ---- element helpers ---------------------------------------------------------------------

// Element::order_key of raw words (the low 32 bits for 32-bit types).
fn order_key(w: W) -> W {
//#if T_I32
    return w ^ 0x80000000u;
//#elif T_F32
    return select(w | 0x80000000u, ~w, (w >> 31u) == 1u);
//#elif T_I64
    return vec2<u32>(w.x, w.y ^ 0x80000000u);
//#elif T_F64
    if (w.y >> 31u) == 1u {
        return ~w;
    }
    return vec2<u32>(w.x, w.y | 0x80000000u);
//#else
    return w;
//#endif
}

//#if !OP_SUM
// IEEE `a < b` on the bits of two f32 values.
fn f32_bits_lt(a: u32, b: u32) -> bool {
    let nan = (a & 0x7fffffffu) > 0x7f800000u || (b & 0x7fffffffu) > 0x7f800000u;
    let zeros = ((a | b) & 0x7fffffffu) == 0u;
    let ka = select(a | 0x80000000u, ~a, (a >> 31u) == 1u);
    let kb = select(b | 0x80000000u, ~b, (b >> 31u) == 1u);
    return !nan && !zeros && ka < kb;
}

fn f64_is_nan(a: vec2<u32>) -> bool {
    let hi = a.y & 0x7fffffffu;
    return hi > 0x7ff00000u || (hi == 0x7ff00000u && a.x != 0u);
}

// IEEE `a < b` on the words of two f64 values.
fn f64_bits_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
    let zeros = ((a.y | b.y) & 0x7fffffffu) == 0u && (a.x | b.x) == 0u;
    var ka = vec2<u32>(a.x, a.y | 0x80000000u);
    if (a.y >> 31u) == 1u {
        ka = ~a;
    }
    var kb = vec2<u32>(b.x, b.y | 0x80000000u);
    if (b.y >> 31u) == 1u {
        kb = ~b;
    }
    return !f64_is_nan(a) && !f64_is_nan(b) && !zeros && u64_lt(ka, kb);
}

// The element type's `<` (ReduceOp::apply's comparison).
fn less(a: E, b: E) -> bool {
//#if T_U32
    return a < b;
//#elif T_I32
    return bitcast<i32>(a) < bitcast<i32>(b);
//#elif T_F32
    return f32_bits_lt(a, b);
//#elif T_U64
    return u64_lt(a, b);
//#elif T_I64
    return i64_lt(a, b);
//#else
    return f64_bits_lt(a, b);
//#endif
}
//#endif

// ReduceOp::apply(a, b).
fn combine(a: E, b: E) -> E {
//#if OP_SUM
//#if T_F32
    return bitcast<u32>(bitcast<f32>(a) + bitcast<f32>(b));
//#elif T_U64
    return u64_add(a, b);
//#elif T_I64
    return u64_add(a, b);
//#else
    return a + b;
//#endif
//#elif OP_MIN
    return select(a, b, less(b, a));
//#elif OP_MAX
    return select(a, b, less(a, b));
//#else
    return a;
//#endif
}

// ---- 1. segmented reduction ------------------------------------------------------------

struct ReduceParams {
    segments: u32,
    n: u32,
    off_red_input: u32,
    off_red_offsets: u32,
    off_red_output: u32,
    identity: E,
}

@group(0) @binding(0) var<storage, read> red_input: array<E>;
@group(0) @binding(1) var<storage, read> red_offsets: array<u32>;
@group(0) @binding(2) var<storage, read_write> red_output: array<E>;
@group(0) @binding(3) var<uniform> red_params: ReduceParams;

var<workgroup> red_tree: array<E, WORKGROUP_SIZE>;
var<workgroup> red_range: vec2<u32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn segmented_reduce(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let s = linear_block(wid, nwg);
    if s >= red_params.segments {
        return;
    }
    if lid == 0u {
        let n = red_params.n;
        let start = min(red_offsets[red_params.off_red_offsets + s], n);
        let end = min(max(red_offsets[red_params.off_red_offsets + s + 1u], start), n);
        red_range = vec2<u32>(start, end);
    }
    let range = workgroupUniformLoad(&red_range);
    let tiles = (range.y - range.x + SEGMENT_TILE - 1u) / SEGMENT_TILE;
    let identity = red_params.identity;
    var acc = identity;
    for (var t = 0u; t < tiles; t++) {
        let first = range.x + t * SEGMENT_TILE + lid * ITEMS;
        var v = identity;
        for (var j = 0u; j < ITEMS; j++) {
            let i = first + j;
            if i < range.y {
                v = combine(v, red_input[red_params.off_red_input + i]);
            }
        }
        red_tree[lid] = v;
        workgroupBarrier();
        for (var stride = 1u; stride < WORKGROUP_SIZE; stride <<= 1u) {
            if (lid & (2u * stride - 1u)) == 0u {
                red_tree[lid] = combine(red_tree[lid], red_tree[lid + stride]);
            }
            workgroupBarrier();
        }
        acc = combine(acc, red_tree[0]);
        workgroupBarrier();
    }
    if lid == 0u {
        red_output[red_params.off_red_output + s] = acc;
    }
}

// ---- 2. segmented scan (u32) -------------------------------------------------------------

struct ScanParams {
    segments: u32,
    n: u32,
    inclusive: u32,
    off_scan_input: u32,
    off_scan_offsets: u32,
    off_scan_output: u32,
}

@group(0) @binding(0) var<storage, read> scan_input: array<u32>;
@group(0) @binding(1) var<storage, read> scan_offsets: array<u32>;
@group(0) @binding(2) var<storage, read_write> scan_output: array<u32>;
@group(0) @binding(3) var<uniform> scan_params: ScanParams;

var<workgroup> scan_range: vec2<u32>;

// upper_bound_one(offsets, i) - 1 (wrapping: 0xffffffff when the search returns 0).
fn scan_search(i: u32) -> u32 {
    var first = 0u;
    var count = scan_params.segments + 1u;
    while count > 0u {
        let step = count / 2u;
        let probe = first + step;
        if scan_offsets[scan_params.off_scan_offsets + probe] <= i {
            first = probe + 1u;
            count -= step + 1u;
        } else {
            count = step;
        }
    }
    return first - 1u;
}

fn scan_bounds(s: u32) -> vec2<u32> {
    let n = scan_params.n;
    let start = min(scan_offsets[scan_params.off_scan_offsets + s], n);
    let end = min(max(scan_offsets[scan_params.off_scan_offsets + s + 1u], start), n);
    return vec2<u32>(start, end);
}

// Whether element i belongs to a segment under the search rule.
fn scan_owned(i: u32) -> bool {
    let s = scan_search(i);
    if s >= scan_params.segments {
        return false;
    }
    let b = scan_bounds(s);
    return b.x <= i && i < b.y;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn scan_orphans(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let block = linear_block(wid, nwg);
    let n = scan_params.n;
    let blocks = n / WORKGROUP_SIZE + select(0u, 1u, n % WORKGROUP_SIZE != 0u);
    if block >= blocks {
        return;
    }
    let i = block * WORKGROUP_SIZE + lid;
    if i < n && !scan_owned(i) {
        scan_output[scan_params.off_scan_output + i] = 0u;
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn scan_segments(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = linear_block(wid, nwg);
    if s >= scan_params.segments {
        return;
    }
    let me = lane_of(inv);
    if inv.lid == 0u {
        scan_range = scan_bounds(s);
    }
    let range = workgroupUniformLoad(&scan_range);
    let tiles = (range.y - range.x + SEGMENT_TILE - 1u) / SEGMENT_TILE;
    let inclusive = scan_params.inclusive != 0u;
    var carry = 0u;
    for (var t = 0u; t < tiles; t++) {
        let first = range.x + t * SEGMENT_TILE + me.rank * ITEMS;
        var vals: array<u32, ITEMS>;
        var mine: array<bool, ITEMS>;
        var sum = 0u;
        for (var j = 0u; j < ITEMS; j++) {
            let i = first + j;
            mine[j] = i < range.y && scan_search(i) == s;
            vals[j] = 0u;
            if mine[j] {
                vals[j] = scan_input[scan_params.off_scan_input + i];
            }
            sum += vals[j];
        }
        var acc = carry + wg_exclusive_scan(me, sum);
        carry += wg_scan_total();
        for (var j = 0u; j < ITEMS; j++) {
            if mine[j] {
                let before = acc;
                acc += vals[j];
                scan_output[scan_params.off_scan_output + first + j] = select(before, acc, inclusive);
            }
        }
    }
}

// ---- 3. segmented top-k ------------------------------------------------------------------

struct TopKParams {
    segments: u32,
    n: u32,
    k: u32,
    largest: u32,
    off_tk_keys: u32,
    off_tk_offsets: u32,
    off_tk_indices: u32,
    off_tk_top: u32,
    pad: W,
}

@group(0) @binding(0) var<storage, read> tk_keys: array<W>;
@group(0) @binding(1) var<storage, read> tk_offsets: array<u32>;
@group(0) @binding(2) var<storage, read_write> tk_indices: array<u32>;
@group(0) @binding(3) var<storage, read_write> tk_top: array<W>;
@group(0) @binding(4) var<uniform> tk_params: TopKParams;

// The winners: sort key (hi, lo words) and position.
var<workgroup> tk_hi: array<u32, MAX_K>;
var<workgroup> tk_lo: array<u32, MAX_K>;
var<workgroup> tk_pos: array<u32, MAX_K>;
var<workgroup> tk_hist: array<atomic<u32>, BINS>;
var<workgroup> tk_range: vec2<u32>;
// The selected digit and the rank left within it.
var<workgroup> tk_sel: vec2<u32>;

// sk(p) as (lo, hi); hi = 0 for 32-bit types (a constant word does not change the order).
fn tk_sort_key(p: u32) -> vec2<u32> {
    let w = tk_keys[tk_params.off_tk_keys + p];
//#if W64
    var key = order_key(w);
//#else
    var key = vec2<u32>(order_key(w), 0u);
//#endif
    if tk_params.largest != 0u {
//#if W64
        key = ~key;
//#else
        key.x = ~key.x;
//#endif
    }
    return key;
}

// Whether entry a sorts after entry b by (sk, position).
fn tk_after(a: u32, b: u32) -> bool {
    if tk_hi[a] != tk_hi[b] {
        return tk_hi[a] > tk_hi[b];
    }
    if tk_lo[a] != tk_lo[b] {
        return tk_lo[a] > tk_lo[b];
    }
    return tk_pos[a] > tk_pos[b];
}

fn tk_store(slot: u32, key: vec2<u32>, p: u32) {
    tk_hi[slot] = key.y;
    tk_lo[slot] = key.x;
    tk_pos[slot] = p;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn segmented_top_k(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = linear_block(wid, nwg);
    if s >= tk_params.segments {
        return;
    }
    let me = lane_of(inv);
    let lid = inv.lid;
    if lid == 0u {
        let n = tk_params.n;
        let start = min(tk_offsets[tk_params.off_tk_offsets + s], n);
        let end = min(max(tk_offsets[tk_params.off_tk_offsets + s + 1u], start), n);
        tk_range = vec2<u32>(start, end);
    }
    let range = workgroupUniformLoad(&tk_range);
    let m = range.y - range.x;
    let k = min(tk_params.k, MAX_K);
    let count = min(m, k);
    if m <= k {
        for (var p = range.x + lid; p < range.y; p += WORKGROUP_SIZE) {
            tk_store(p - range.x, tk_sort_key(p), p);
        }
    } else {
        // Radix select of the k-th smallest sort key, most significant digit first.
//#if W64
        let passes = 8u;
//#else
        let passes = 4u;
//#endif
        var prefix = vec2<u32>(0u, 0u);
        var mask = vec2<u32>(0u, 0u);
        var want = k;
        for (var round = 0u; round < passes; round++) {
            let digit = passes - 1u - round;
            let high = digit >= 4u;
            let shift = (digit % 4u) * 8u;
            atomicStore(&tk_hist[lid], 0u);
            workgroupBarrier();
            for (var p = range.x + lid; p < range.y; p += WORKGROUP_SIZE) {
                let key = tk_sort_key(p);
                if all((key & mask) == prefix) {
                    let word = select(key.x, key.y, high);
                    atomicAdd(&tk_hist[(word >> shift) & 0xffu], 1u);
                }
            }
            workgroupBarrier();
            let c = atomicLoad(&tk_hist[me.rank]);
            let before = wg_exclusive_scan(me, c);
            if before < want && want <= before + c {
                tk_sel = vec2<u32>(me.rank, want - before);
            }
            let sel = workgroupUniformLoad(&tk_sel);
            want = sel.y;
            if high {
                prefix.y |= sel.x << shift;
                mask.y |= 0xffu << shift;
            } else {
                prefix.x |= sel.x << shift;
                mask.x |= 0xffu << shift;
            }
        }
        // prefix is the k-th winner's key; `want` winners equal it, k - want are below.
        let below = k - want;
        var carry_lt = 0u;
        var carry_eq = 0u;
        let tiles = (m + SEGMENT_TILE - 1u) / SEGMENT_TILE;
        for (var t = 0u; t < tiles; t++) {
            let first = range.x + t * SEGMENT_TILE + me.rank * ITEMS;
            var packed = 0u;
            var kind: array<u32, ITEMS>;
            var keys: array<vec2<u32>, ITEMS>;
            for (var j = 0u; j < ITEMS; j++) {
                let p = first + j;
                kind[j] = 0u;
                if p < range.y {
                    let key = tk_sort_key(p);
                    keys[j] = key;
                    if u64_lt(key, prefix) {
                        kind[j] = 1u;
                    } else if all(key == prefix) {
                        kind[j] = 0x10000u;
                    }
                }
                packed += kind[j];
            }
            let excl = wg_exclusive_scan(me, packed);
            let total = wg_scan_total();
            var lt_rank = carry_lt + (excl & 0xffffu);
            var eq_rank = carry_eq + (excl >> 16u);
            for (var j = 0u; j < ITEMS; j++) {
                if kind[j] == 1u {
                    tk_store(lt_rank, keys[j], first + j);
                    lt_rank += 1u;
                } else if kind[j] == 0x10000u {
                    if eq_rank < want {
                        tk_store(below + eq_rank, keys[j], first + j);
                    }
                    eq_rank += 1u;
                }
            }
            carry_lt += total & 0xffffu;
            carry_eq += total >> 16u;
        }
    }
    // Bitonic sort of the count winners, padded to a power of two with entries that sort
    // last (key 2^64 - 1, position 0xffffffff; real positions are < 2^31).
    var size = 1u;
    while size < count {
        size <<= 1u;
    }
    for (var i = count + lid; i < size; i += WORKGROUP_SIZE) {
        tk_store(i, vec2<u32>(0xffffffffu, 0xffffffffu), 0xffffffffu);
    }
    workgroupBarrier();
    for (var span = 2u; span <= size; span <<= 1u) {
        for (var stride = span / 2u; stride > 0u; stride >>= 1u) {
            for (var t = lid; t < size / 2u; t += WORKGROUP_SIZE) {
                let a = (t / stride) * 2u * stride + t % stride;
                let b = a + stride;
                let ascending = (a & span) == 0u;
                if tk_after(a, b) == ascending {
                    let hi = tk_hi[a];
                    let lo = tk_lo[a];
                    let pos = tk_pos[a];
                    tk_hi[a] = tk_hi[b];
                    tk_lo[a] = tk_lo[b];
                    tk_pos[a] = tk_pos[b];
                    tk_hi[b] = hi;
                    tk_lo[b] = lo;
                    tk_pos[b] = pos;
                }
            }
            workgroupBarrier();
        }
    }
    let dst = s * tk_params.k;
    for (var j = lid; j < tk_params.k; j += WORKGROUP_SIZE) {
        var pos = 0xffffffffu;
        var value = tk_params.pad;
        if j < count {
            pos = tk_pos[j];
            value = tk_keys[tk_params.off_tk_keys + pos];
        }
        tk_indices[tk_params.off_tk_indices + dst + j] = pos;
        tk_top[tk_params.off_tk_top + dst + j] = value;
    }
}
