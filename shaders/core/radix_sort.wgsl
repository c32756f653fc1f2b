// core/radix_sort — one digit pass of a stable LSD radix sort of (u64 key, u32 value)
// pairs, reduce-then-scan.
//
// What it computes: for the digit of `bits` (<= 8) key bits starting at bit `shift`, a
// stable counting sort of the pairs from (keys_in, values_in) to (keys_out, values_out).
// The host runs one pass per 8-bit digit of the requested bit range, ping-ponging
// between the caller's buffers and scratch, with three launches per pass:
//   1. sort_count     counts[d * tiles + t] = number of keys of tile t with digit d
//   2. the exclusive scan of core/scan over counts (digit-major), giving for every
//      (digit, tile) the first output position of its keys
//   3. sort_scatter   sorts each tile by digit in shared memory (two stable 4-bit
//      splits), then writes every pair to offsets[d * tiles + t] + its rank among the
//      tile's keys of digit d; ranks follow input order, so the pass is stable
// Keys are vec2<u32>, low word first (the little-endian bytes of a u64).
//
// Launch shape: WORKGROUP_SIZE (256) invocations, one workgroup per tile of TILE =
// 256 * ITEMS (4) = 1024 pairs (linear_block over a 2D dispatch).
//
// Buffers (binding: direction, length, layout)
//   sort_count:   0 keys_in (read, n, vec2<u32>), 1 counts (write, 2^bits * tiles, u32), 2 params
//   sort_scatter: 0 keys_in (read, n), 1 values_in (read, n, u32),
//                 2 offsets (read, 2^bits * tiles (+1), u32), 3 keys_out (write, n),
//                 4 values_out (write, n), 5 params
//   params: { n, tiles, shift, bits, off_* } with 1 <= bits <= 8, shift + bits <= 64;
//   keys and values are views (element i of keys_in is keys_in[off_keys_in + i], the
//   executor fills the off_* fields)
//
// Shared memory of sort_scatter: 2 * TILE + 256 + 4 * (WORKGROUP_SIZE + 17) words
// (13.3 KiB at 256 invocations), within WebGPU's 16 KiB default.
//
// Invariants: a tile's positions past n carry the digit 255 and sort after every real key
// of the tile (they come last in input order and the splits are stable); they are never
// written. Local ranks are positions in the tile's sorted order minus the first position
// of the digit, so equal keys keep their input order.
//
// Measured cost (examples/wgpu_primitives, median of 7, device timestamps):
//   lavapipe (llvmpipe, 2 cores), 1M pairs, bits 0..63 (8 passes): 1.2 s with subgroups
//   of 8, 3.1 s on the shared-memory path (before views). H200: not measured yet.

//#include core/common

const ITEMS: u32 = 4u;
override TILE: u32 = WORKGROUP_SIZE * ITEMS;
override VSCAN_WORDS: u32 = 4u * WORKGROUP_SIZE;

struct SortParams {
    n: u32,
    tiles: u32,
    shift: u32,
    bits: u32,
    off_count_keys: u32,
    off_keys_in: u32,
    off_values_in: u32,
    off_keys_out: u32,
    off_values_out: u32,
}

fn digit_of(k: vec2<u32>, shift: u32, bits: u32) -> u32 {
    var v: u32;
    if shift >= 32u {
        v = k.y >> (shift - 32u);
    } else if shift + bits <= 32u {
        v = k.x >> shift;
    } else {
        // 24 < shift < 32: the digit straddles the two words.
        v = (k.x >> shift) | (k.y << (32u - shift));
    }
    return v & ((1u << bits) - 1u);
}

// ---- 1. per-tile digit counts ----------------------------------------------------------

@group(0) @binding(0) var<storage, read> count_keys: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read_write> count_out: array<u32>;
@group(0) @binding(2) var<uniform> count_params: SortParams;

var<workgroup> hist: array<atomic<u32>, 256>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn sort_count(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tile = linear_block(wid, nwg);
    if tile >= count_params.tiles {
        return;
    }
    let radix = 1u << count_params.bits;
    for (var d = inv.lid; d < radix; d += WORKGROUP_SIZE) {
        atomicStore(&hist[d], 0u);
    }
    workgroupBarrier();
    let base = tile * TILE;
    for (var j = 0u; j < ITEMS; j++) {
        let i = base + j * WORKGROUP_SIZE + inv.lid;
        if i < count_params.n {
            atomicAdd(&hist[digit_of(count_keys[count_params.off_count_keys + i], count_params.shift, count_params.bits)], 1u);
        }
    }
    workgroupBarrier();
    for (var d = inv.lid; d < radix; d += WORKGROUP_SIZE) {
        count_out[d * count_params.tiles + tile] = atomicLoad(&hist[d]);
    }
}

// ---- 3. stable scatter --------------------------------------------------------------------

@group(0) @binding(0) var<storage, read> keys_in: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> values_in: array<u32>;
@group(0) @binding(2) var<storage, read> offsets: array<u32>;
@group(0) @binding(3) var<storage, read_write> keys_out: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read_write> values_out: array<u32>;
@group(0) @binding(5) var<uniform> params: SortParams;

// Tile entries: digit << 16 | position in the tile, ping-ponged by the two splits.
var<workgroup> ent_a: array<u32, TILE>;
var<workgroup> ent_b: array<u32, TILE>;
// First sorted position of each digit in the tile.
var<workgroup> first_of: array<u32, 256>;
// Scan scratch: 4 words per invocation, then 16 raker prefixes and the total (4 words each).
var<workgroup> vscan: array<u32, VSCAN_WORDS>;
var<workgroup> vrake: array<u32, 68>;

struct VScan {
    excl: vec4<u32>,
    total: vec4<u32>,
}

fn vscan_store(at: u32, v: vec4<u32>) {
    vscan[at] = v.x;
    vscan[at + 1u] = v.y;
    vscan[at + 2u] = v.z;
    vscan[at + 3u] = v.w;
}

fn vscan_load(at: u32) -> vec4<u32> {
    return vec4<u32>(vscan[at], vscan[at + 1u], vscan[at + 2u], vscan[at + 3u]);
}

fn vrake_store(at: u32, v: vec4<u32>) {
    vrake[at] = v.x;
    vrake[at + 1u] = v.y;
    vrake[at + 2u] = v.z;
    vrake[at + 3u] = v.w;
}

fn vrake_load(at: u32) -> vec4<u32> {
    return vec4<u32>(vrake[at], vrake[at + 1u], vrake[at + 2u], vrake[at + 3u]);
}

// Workgroup exclusive scan of a vec4<u32> per invocation, in rank order, as
// core/wg_scan does for u32 (same two paths). Ends with a barrier.
fn wg_exclusive_scan_v4(me: Lane, v: vec4<u32>) -> VScan {
//#if SUBGROUP
    let incl = subgroupInclusiveAdd(v);
    if me.lane == me.sg_size - 1u {
        vscan_store(4u * me.sg, incl);
    }
    workgroupBarrier();
    if me.rank == 0u {
        var acc = vec4<u32>(0u);
        let groups = WORKGROUP_SIZE / me.sg_size;
        for (var i = 0u; i < groups; i++) {
            let t = vscan_load(4u * i);
            vscan_store(4u * i, acc);
            acc += t;
        }
        vrake_store(64u, acc);
    }
    workgroupBarrier();
    let result = VScan(incl - v + vscan_load(4u * me.sg), vrake_load(64u));
    workgroupBarrier();
    return result;
//#else
    vscan_store(4u * me.rank, v);
    workgroupBarrier();
    let seg = WORKGROUP_SIZE / 16u;
    if me.rank < 16u {
        var acc = vec4<u32>(0u);
        for (var i = me.rank * seg; i < (me.rank + 1u) * seg; i++) {
            let t = vscan_load(4u * i);
            vscan_store(4u * i, acc);
            acc += t;
        }
        vrake_store(4u * me.rank, acc);
    }
    workgroupBarrier();
    if me.rank == 0u {
        var acc = vec4<u32>(0u);
        for (var i = 0u; i < 16u; i++) {
            let t = vrake_load(4u * i);
            vrake_store(4u * i, acc);
            acc += t;
        }
        vrake_store(64u, acc);
    }
    workgroupBarrier();
    let result = VScan(vscan_load(4u * me.rank) + vrake_load(4u * (me.rank / seg)), vrake_load(64u));
    workgroupBarrier();
    return result;
//#endif
}

// 16 counters of 16 bits in two vec4<u32>: bucket b lives in word (b >> 1) & 3 of
// lo (b < 8) or hi (b >= 8), half b & 1. A tile has at most 1024 entries, so counts fit.
fn counter(lo: vec4<u32>, hi: vec4<u32>, b: u32) -> u32 {
    let v = select(lo, hi, b >= 8u);
    return (v[(b >> 1u) & 3u] >> ((b & 1u) * 16u)) & 0xffffu;
}

struct Split {
    pos: array<u32, ITEMS>,
}

// New positions of the invocation's ITEMS consecutive entries `e` after a stable split of
// the tile on the 4-bit bucket (e >> shift) & 15. Every invocation calls it.
fn split_positions(me: Lane, e: array<u32, ITEMS>, shift: u32) -> Split {
    var lo = vec4<u32>(0u);
    var hi = vec4<u32>(0u);
    var before: array<u32, ITEMS>;
    for (var k = 0u; k < ITEMS; k++) {
        let b = (e[k] >> shift) & 15u;
        before[k] = counter(lo, hi, b);
        let word = (b >> 1u) & 3u;
        let inc = 1u << ((b & 1u) * 16u);
        if b < 8u {
            lo[word] += inc;
        } else {
            hi[word] += inc;
        }
    }
    let slo = wg_exclusive_scan_v4(me, lo);
    let shi = wg_exclusive_scan_v4(me, hi);
    // First tile position of each bucket: exclusive scan of the 16 bucket totals.
    var start: array<u32, 16>;
    var acc = 0u;
    for (var b = 0u; b < 16u; b++) {
        start[b] = acc;
        acc += counter(slo.total, shi.total, b);
    }
    var out: Split;
    for (var k = 0u; k < ITEMS; k++) {
        let b = (e[k] >> shift) & 15u;
        out.pos[k] = start[b] + counter(slo.excl, shi.excl, b) + before[k];
    }
    return out;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn sort_scatter(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tile = linear_block(wid, nwg);
    if tile >= params.tiles {
        return;
    }
    let me = lane_of(inv);
    let base = tile * TILE;

    // Digits of the tile, in input order (coalesced loads).
    for (var j = 0u; j < ITEMS; j++) {
        let p = j * WORKGROUP_SIZE + inv.lid;
        var d = 255u;
        if base + p < params.n {
            d = digit_of(keys_in[params.off_keys_in + base + p], params.shift, params.bits);
        }
        ent_a[p] = (d << 16u) | p;
    }
    workgroupBarrier();

    // Split on the low nibble (ent_a -> ent_b), then on the high nibble (ent_b -> ent_a).
    var e: array<u32, ITEMS>;
    for (var k = 0u; k < ITEMS; k++) {
        e[k] = ent_a[me.rank * ITEMS + k];
    }
    let s0 = split_positions(me, e, 16u);
    for (var k = 0u; k < ITEMS; k++) {
        ent_b[s0.pos[k]] = e[k];
    }
    workgroupBarrier();
    for (var k = 0u; k < ITEMS; k++) {
        e[k] = ent_b[me.rank * ITEMS + k];
    }
    let s1 = split_positions(me, e, 20u);
    for (var k = 0u; k < ITEMS; k++) {
        ent_a[s1.pos[k]] = e[k];
    }
    workgroupBarrier();

    // First position of each digit present in the tile.
    for (var j = 0u; j < ITEMS; j++) {
        let p = j * WORKGROUP_SIZE + inv.lid;
        let d = ent_a[p] >> 16u;
        if p == 0u || (ent_a[p - 1u] >> 16u) != d {
            first_of[d] = p;
        }
    }
    workgroupBarrier();

    // Write in sorted order: runs of equal digits go to consecutive addresses.
    for (var j = 0u; j < ITEMS; j++) {
        let p = j * WORKGROUP_SIZE + inv.lid;
        let entry = ent_a[p];
        let src = base + (entry & 0xffffu);
        if src < params.n {
            let d = entry >> 16u;
            let dst = offsets[d * params.tiles + tile] + p - first_of[d];
            keys_out[params.off_keys_out + dst] = keys_in[params.off_keys_in + src];
            values_out[params.off_values_out + dst] = values_in[params.off_values_in + src];
        }
    }
}
