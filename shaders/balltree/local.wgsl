// shaders/balltree/local.wgsl — the ball tree build's local phase
// (crates/orrery-balltree/src/gpu/local.rs), the WGSL twin of kernels/balltree/local.cu.
// Module "balltree/local/<capacity>": common.wgsl, then this file, with the defines
// LOCAL_CAPACITY (slots per workgroup) and LOCAL_THREADS (invocations per workgroup,
// LOCAL_CAPACITY / 4), which the host chooses from the device limits (2048 / 512 where
// 512 invocations and the workgroup arrays fit, else 1024 / 256).
//
// What it computes
//   bt_local_f32     one workgroup finishes up to LOCAL_CAPACITY / 2^h subtrees of 2^h
//                    slots: stage the coordinates; per local level split dimensions
//                    (workgroup-memory tree), keys, a bitonic sort of every aligned
//                    segment by (code, global index), the split move; then the leaves.
//   bt_local_ordered_f32  the same algorithm (both call local_phase), under the name the
//                    host launches for Select; local.cu's packs the sort key into a u64.
//
// Launch shape: WORKGROUP_SIZE = LOCAL_THREADS, one workgroup per block (workgroups past
//   num_blocks return).
//
// Buffers (binding: direction, length, layout)
//   0 points (r, n * dim f32), 1 perm (r, n), 2 nodes (r, 3 per subtree: first position,
//   points, first slot), 3 blocks (r, 4 per block: first subtree, subtrees, h, staging
//   base), 4 staged (rw, sum of block slots * dim f32), 5 out_idx (rw, slots),
//   6 out_mask (rw, slots), 7 params {dim, num_blocks}
//   Workgroup memory: 12 * LOCAL_CAPACITY + 8 * LOCAL_THREADS + LOCAL_CAPACITY bytes
//   (15 KB at 1024 slots, 30 KB at 2048).
//
// Invariants: as local.cu.
//
// Measured cost (build times, median of 10, device timestamps; gpu/mod.rs has the table,
//   1024 / 256): H200 (Vulkan, subgroups of 32): Hybrid 16 x 1024 0.20 ms (bt_local alone,
//   16 workgroups). lavapipe (llvmpipe, 2 cores): Hybrid 16 x 1024 48 ms. 2048 / 512: not
//   measured yet.

const LOCAL_ITEMS: u32 = LOCAL_CAPACITY / LOCAL_THREADS;

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
var<workgroup> lc_seg_dim: array<u32, LOCAL_CAPACITY / 4u>;

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
