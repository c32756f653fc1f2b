// core/scan — prefix sums of u32 (exclusive in CSR form, inclusive) and stream
// compaction, plain or counted (the length read on the device), reduce-then-scan.
//
// What it computes (every user buffer is a view: element i of binding b is
// b[off_b + i]; n = bound, or min(count[off_count], bound) when the mode is COUNTED)
//   Exclusive scan in CSR form (output[0] = 0, output[i + 1] = output[i] + input[i],
//   wrapping; the total at output[n]) or inclusive scan (output[i] = input[0..=i]) in
//   three launches:
//     1. scan_reduce     partials[t] = sum of tile t of the input
//     2. scan_partials   partials[t] = exclusive scan of partials (one workgroup);
//                        the total to total_out[n] (TOTAL_AT_N), total_out[0], or nowhere
//                        (NO_TOTAL)
//     3. scan_downsweep  output[i] = partials[tile of i] + scan of i within its tile
//                        (+ input[i] when INCLUSIVE); output past n is not written
//   Compaction (output = the input[i] with flags[i] != 0, i < n, in order; count = how many):
//     1. compact_reduce         partials[t] = number of set flags in tile t
//     2. scan_partials          as above, total_out = count
//     3. compact_scatter_32/64/words  output[partials[t] + rank among set flags] = input[i]
//   Reduce-then-scan reads the input twice but needs no inter-workgroup communication
//   beyond launch order, so it is correct on every adapter (decoupled look-back relies
//   on forward progress between workgroups, which WebGPU does not promise).
//
// Modes (params.mode bits): COUNTED 1, INCLUSIVE 2, TOTAL_AT_N 4, NO_TOTAL 8.
//
// Launch shape: WORKGROUP_SIZE (256) invocations; a tile is TILE = 256 * ITEMS (8) =
// 2048 elements; launches 1 and 3 take one workgroup per tile of the bound (linear_block
// over a 2D dispatch) and return past the live tiles, launch 2 exactly one workgroup that
// walks the live partials 2048 at a time.
//
// Buffers (binding: direction, length, layout)
//   scan_reduce:      0 input (read, bound, u32), 1 partials (write, tiles), 2 count (read, 1), 3 params
//   scan_partials:    0 partials (read-write, tiles), 1 total_out (write, > total index),
//                     2 count (read, 1), 3 params
//   scan_downsweep:   0 input (read, bound), 1 partials (read, tiles), 2 output (write, >= n),
//                     3 count (read, 1), 4 params
//   compact_reduce:   0 flags (read, bound, u32), 1 partials (write, tiles), 2 count, 3 params
//   compact_scatter:  0 input (read, bound, 4- or 8-byte elements, or `words` words),
//                     1 flags (read, bound), 2 partials (read, tiles), 3 output (write,
//                     >= count), 4 count (read, 1), 5 params
//   count is the executor's dummy buffer when the mode is not COUNTED.
//
// Invariants: tiles = ceil(bound / TILE) >= 1 for launches 1 and 3 (the host skips them
// for bound = 0; launch 2 then writes a zero total). Loads and stores of tiles are
// coalesced through shared memory; each invocation scans ITEMS consecutive elements
// serially. A count slot above the bound is clamped to it, so a bad count never reads
// or writes past the views.
//
// Measured cost (examples/wgpu_primitives, median of 7, device timestamps, before
// views and counts):
//   lavapipe (llvmpipe, 2 cores), 1M u32 scan: 21 ms (subgroups of 8), 44 ms (shared
//   memory); 1M u64 compaction: 42 ms / 51 ms. H200: not measured yet.

//#include core/common
//#include core/wg_scan

const ITEMS: u32 = 8u;
override TILE: u32 = WORKGROUP_SIZE * ITEMS;

const COUNTED: u32 = 1u;
const INCLUSIVE: u32 = 2u;
const TOTAL_AT_N: u32 = 4u;
const NO_TOTAL: u32 = 8u;

// The live length: the bound, or the count slot clamped to it.
fn live_n(bound: u32, mode: u32, slot: u32) -> u32 {
    return select(bound, min(slot, bound), (mode & COUNTED) != 0u);
}

fn tiles_of(n: u32) -> u32 {
    return n / TILE + select(0u, 1u, n % TILE != 0u);
}

struct ReduceParams {
    bound: u32,
    tiles: u32,
    mode: u32,
    off_reduce_in: u32,
    off_reduce_count: u32,
}

struct PartialParams {
    bound: u32,
    mode: u32,
    off_total_out: u32,
    off_part_count: u32,
}

struct DownParams {
    bound: u32,
    tiles: u32,
    mode: u32,
    off_down_in: u32,
    off_down_out: u32,
    off_down_count: u32,
}

struct CompactParams {
    bound: u32,
    tiles: u32,
    mode: u32,
    words: u32,
    off_compact_flags: u32,
    off_compact_count: u32,
    off_compact32_in: u32,
    off_compact32_out: u32,
    off_compact64_in: u32,
    off_compact64_out: u32,
    off_compactw_in: u32,
    off_compactw_out: u32,
}

var<workgroup> tile_buf: array<u32, TILE>;

// ---- 1. per-tile sums ---------------------------------------------------------------

@group(0) @binding(0) var<storage, read> reduce_in: array<u32>;
@group(0) @binding(1) var<storage, read_write> reduce_partials: array<u32>;
@group(0) @binding(2) var<storage, read> reduce_count: array<u32>;
@group(0) @binding(3) var<uniform> reduce_params: ReduceParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn scan_reduce(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tile = linear_block(wid, nwg);
    let n = live_n(reduce_params.bound, reduce_params.mode, reduce_count[reduce_params.off_reduce_count]);
    if tile >= tiles_of(n) {
        return;
    }
    let me = lane_of(inv);
    let base = tile * TILE;
    var acc = 0u;
    for (var j = 0u; j < ITEMS; j++) {
        let i = base + j * WORKGROUP_SIZE + inv.lid;
        if i < n {
            acc += reduce_in[reduce_params.off_reduce_in + i];
        }
    }
    wg_exclusive_scan(me, acc);
    if inv.lid == 0u {
        reduce_partials[tile] = wg_scan_total();
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn compact_reduce(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tile = linear_block(wid, nwg);
    let n = live_n(reduce_params.bound, reduce_params.mode, reduce_count[reduce_params.off_reduce_count]);
    if tile >= tiles_of(n) {
        return;
    }
    let me = lane_of(inv);
    let base = tile * TILE;
    var acc = 0u;
    for (var j = 0u; j < ITEMS; j++) {
        let i = base + j * WORKGROUP_SIZE + inv.lid;
        if i < n && reduce_in[reduce_params.off_reduce_in + i] != 0u {
            acc += 1u;
        }
    }
    wg_exclusive_scan(me, acc);
    if inv.lid == 0u {
        reduce_partials[tile] = wg_scan_total();
    }
}

// ---- 2. scan of the tile sums (one workgroup) -----------------------------------------

@group(0) @binding(0) var<storage, read_write> partials: array<u32>;
@group(0) @binding(1) var<storage, read_write> total_out: array<u32>;
@group(0) @binding(2) var<storage, read> part_count: array<u32>;
@group(0) @binding(3) var<uniform> partial_params: PartialParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn scan_partials(inv: Invocation) {
    let me = lane_of(inv);
    let mode = partial_params.mode;
    let n = live_n(partial_params.bound, mode, part_count[partial_params.off_part_count]);
    let tiles = tiles_of(n);
    var carry = 0u;
    for (var base = 0u; base < tiles; base += TILE) {
        // Each invocation owns ITEMS consecutive partials of this chunk, in rank order.
        let first = base + me.rank * ITEMS;
        var vals: array<u32, ITEMS>;
        var sum = 0u;
        for (var k = 0u; k < ITEMS; k++) {
            let i = first + k;
            var v = 0u;
            if i < tiles {
                v = partials[i];
            }
            vals[k] = v;
            sum += v;
        }
        var prefix = carry + wg_exclusive_scan(me, sum);
        for (var k = 0u; k < ITEMS; k++) {
            let i = first + k;
            if i < tiles {
                partials[i] = prefix;
            }
            prefix += vals[k];
        }
        carry += wg_scan_total();
    }
    if inv.lid == 0u && (mode & NO_TOTAL) == 0u {
        let at = select(0u, n, (mode & TOTAL_AT_N) != 0u);
        total_out[partial_params.off_total_out + at] = carry;
    }
}

// ---- 3. scan within tiles --------------------------------------------------------------

@group(0) @binding(0) var<storage, read> down_in: array<u32>;
@group(0) @binding(1) var<storage, read> down_partials: array<u32>;
@group(0) @binding(2) var<storage, read_write> down_out: array<u32>;
@group(0) @binding(3) var<storage, read> down_count: array<u32>;
@group(0) @binding(4) var<uniform> down_params: DownParams;

// Scans tile_buf[0..TILE] in place (exclusive, plus `offset`). Every invocation calls it.
fn scan_tile_buf(me: Lane, offset: u32) {
    let first = me.rank * ITEMS;
    var vals: array<u32, ITEMS>;
    var sum = 0u;
    for (var k = 0u; k < ITEMS; k++) {
        vals[k] = tile_buf[first + k];
        sum += vals[k];
    }
    var prefix = offset + wg_exclusive_scan(me, sum);
    for (var k = 0u; k < ITEMS; k++) {
        tile_buf[first + k] = prefix;
        prefix += vals[k];
    }
    workgroupBarrier();
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn scan_downsweep(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tile = linear_block(wid, nwg);
    let mode = down_params.mode;
    let n = live_n(down_params.bound, mode, down_count[down_params.off_down_count]);
    if tile >= tiles_of(n) {
        return;
    }
    let me = lane_of(inv);
    let base = tile * TILE;
    let src = down_params.off_down_in + base;
    var mine: array<u32, ITEMS>;
    for (var j = 0u; j < ITEMS; j++) {
        let p = j * WORKGROUP_SIZE + inv.lid;
        var v = 0u;
        if base + p < n {
            v = down_in[src + p];
        }
        mine[j] = v;
        tile_buf[p] = v;
    }
    workgroupBarrier();
    scan_tile_buf(me, down_partials[tile]);
    let inclusive = (mode & INCLUSIVE) != 0u;
    let dst = down_params.off_down_out + base;
    for (var j = 0u; j < ITEMS; j++) {
        let p = j * WORKGROUP_SIZE + inv.lid;
        if base + p < n {
            down_out[dst + p] = tile_buf[p] + select(0u, mine[j], inclusive);
        }
    }
}

// ---- 3'. compaction scatter --------------------------------------------------------------

@group(0) @binding(1) var<storage, read> compact_flags: array<u32>;
@group(0) @binding(2) var<storage, read> compact_partials: array<u32>;
@group(0) @binding(4) var<storage, read> compact_count: array<u32>;
@group(0) @binding(5) var<uniform> compact_params: CompactParams;

fn compact_live() -> u32 {
    return live_n(compact_params.bound, compact_params.mode, compact_count[compact_params.off_compact_count]);
}

// Fills tile_buf with the destination of each element of the tile, or 0xffffffff for
// elements that are not kept. Every invocation calls it.
fn compact_destinations(me: Lane, lid: u32, tile: u32, n: u32) {
    let base = tile * TILE;
    for (var j = 0u; j < ITEMS; j++) {
        let p = j * WORKGROUP_SIZE + lid;
        var v = 0u;
        if base + p < n && compact_flags[compact_params.off_compact_flags + base + p] != 0u {
            v = 1u;
        }
        tile_buf[p] = v;
    }
    workgroupBarrier();
    let first = me.rank * ITEMS;
    var keep: array<bool, ITEMS>;
    var sum = 0u;
    for (var k = 0u; k < ITEMS; k++) {
        keep[k] = tile_buf[first + k] != 0u;
        sum += select(0u, 1u, keep[k]);
    }
    var dst = compact_partials[tile] + wg_exclusive_scan(me, sum);
    for (var k = 0u; k < ITEMS; k++) {
        if keep[k] {
            tile_buf[first + k] = dst;
            dst += 1u;
        } else {
            tile_buf[first + k] = 0xffffffffu;
        }
    }
    workgroupBarrier();
}

@group(0) @binding(0) var<storage, read> compact32_in: array<u32>;
@group(0) @binding(3) var<storage, read_write> compact32_out: array<u32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn compact_scatter_32(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tile = linear_block(wid, nwg);
    let n = compact_live();
    if tile >= tiles_of(n) {
        return;
    }
    compact_destinations(lane_of(inv), inv.lid, tile, n);
    let base = tile * TILE;
    for (var j = 0u; j < ITEMS; j++) {
        let p = j * WORKGROUP_SIZE + inv.lid;
        let dst = tile_buf[p];
        if dst != 0xffffffffu {
            compact32_out[compact_params.off_compact32_out + dst] = compact32_in[compact_params.off_compact32_in + base + p];
        }
    }
}

@group(0) @binding(0) var<storage, read> compact64_in: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> compact64_out: array<vec2<u32>>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn compact_scatter_64(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tile = linear_block(wid, nwg);
    let n = compact_live();
    if tile >= tiles_of(n) {
        return;
    }
    compact_destinations(lane_of(inv), inv.lid, tile, n);
    let base = tile * TILE;
    for (var j = 0u; j < ITEMS; j++) {
        let p = j * WORKGROUP_SIZE + inv.lid;
        let dst = tile_buf[p];
        if dst != 0xffffffffu {
            compact64_out[compact_params.off_compact64_out + dst] = compact64_in[compact_params.off_compact64_in + base + p];
        }
    }
}

@group(0) @binding(0) var<storage, read> compactw_in: array<u32>;
@group(0) @binding(3) var<storage, read_write> compactw_out: array<u32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn compact_scatter_words(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tile = linear_block(wid, nwg);
    let n = compact_live();
    if tile >= tiles_of(n) {
        return;
    }
    compact_destinations(lane_of(inv), inv.lid, tile, n);
    let base = tile * TILE;
    let w = compact_params.words;
    for (var j = 0u; j < ITEMS; j++) {
        let p = j * WORKGROUP_SIZE + inv.lid;
        let dst = tile_buf[p];
        if dst != 0xffffffffu {
            let src_at = compact_params.off_compactw_in + (base + p) * w;
            let dst_at = compact_params.off_compactw_out + dst * w;
            for (var k = 0u; k < w; k++) {
                compactw_out[dst_at + k] = compactw_in[src_at + k];
            }
        }
    }
}
