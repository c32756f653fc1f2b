// core/histogram — counts of u32 values in bins: counts[b] = number of values[i] == b
// for b < bins; values >= bins are not counted. Counts wrap (they cannot exceed 2^32 - 1
// for inputs of < 2^32 values).
//
// What it computes, after the executor zeroes counts[0..bins] (a buffer clear):
//   hist_shared   (bins <= SHARED_BINS = 4096, 16 KB of workgroup memory) each workgroup
//                 counts a tile of TILE = 256 * ITEMS (16) = 4096 values in a
//                 workgroup-private histogram (atomicAdd on workgroup memory), then adds
//                 its non-zero bins to counts with atomicAdd;
//   hist_global   (more bins) atomicAdd on counts for every value, TILE values per
//                 workgroup.
// Integer atomics commute, so the result does not depend on the order (bit-identical to
// the CPU executor).
//
// Launch shape: WORKGROUP_SIZE (256) invocations, ceil(n / TILE) workgroups
// (linear_block over a 2D dispatch; workgroups past params.tiles return).
//
// Buffers (binding: direction, length, layout)
//   0 values (read,       params.n u32 from off_values)
//   1 counts (read-write, params.bins u32 from off_counts, atomic<u32>)
//   2 params { n, bins, tiles, off_values, off_counts }
//
// Invariants: bins >= 1 and n < 2^32 (host-checked); tiles = ceil(n / TILE); every
// value is compared with bins before it indexes anything, so bad values never fault.
//
// Measured cost: not measured yet.

//#include core/common

const ITEMS: u32 = 16u;
const TILE: u32 = 4096u;
const SHARED_BINS: u32 = 4096u;

struct Params {
    n: u32,
    bins: u32,
    tiles: u32,
    off_values: u32,
    off_counts: u32,
}

@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> counts: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> params: Params;

var<workgroup> local_counts: array<atomic<u32>, SHARED_BINS>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn hist_shared(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let tile = linear_block(wid, nwg);
    if tile >= params.tiles {
        return;
    }
    let bins = min(params.bins, SHARED_BINS);
    for (var b = lid; b < bins; b += WORKGROUP_SIZE) {
        atomicStore(&local_counts[b], 0u);
    }
    workgroupBarrier();
    let base = tile * TILE;
    for (var j = 0u; j < ITEMS; j++) {
        let i = base + j * WORKGROUP_SIZE + lid;
        if i < params.n {
            let v = values[params.off_values + i];
            if v < bins {
                atomicAdd(&local_counts[v], 1u);
            }
        }
    }
    workgroupBarrier();
    for (var b = lid; b < bins; b += WORKGROUP_SIZE) {
        let c = atomicLoad(&local_counts[b]);
        if c != 0u {
            atomicAdd(&counts[params.off_counts + b], c);
        }
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn hist_global(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let tile = linear_block(wid, nwg);
    if tile >= params.tiles {
        return;
    }
    let base = tile * TILE;
    for (var j = 0u; j < ITEMS; j++) {
        let i = base + j * WORKGROUP_SIZE + lid;
        if i < params.n {
            let v = values[params.off_values + i];
            if v < params.bins {
                atomicAdd(&counts[params.off_counts + v], 1u);
            }
        }
    }
}
