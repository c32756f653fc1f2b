// shaders/tree/leaf_count.wgsl — the LeafCount decide of a rebalance pass
// (crates/orrery-tree-build/src/gpu/passes.rs; host reference
// crate::rebalance::leaf_count_op), the WGSL twin of kernels/tree/leaf_count.cu. Module
// "tree/leaf_count": common.wgsl, then this file.
//
// What it computes, for every leaf i < L: 0 (merged into the first sibling of a complete
//   group of at most `bucket` particles), 2^(bits * j) (split j levels, the largest
//   j <= max(1, 12 / bits) with counts[i] > bucket * 2^(bits * (j - 1)) and level + j <=
//   levels) or 1; any operation other than 1 sets status[CHANGED] (atomicOr). Runs only in
//   state RUN. The group's sum saturates above the bucket in 32 bits (it is only compared
//   with the bucket), and the thresholds bucket << (bits * (j - 1)) are 64-bit pairs.
//
// Launch shape: one invocation per leaf of the capacity, workgroups of THREADS over a 2D
//   dispatch; invocations past L return at once (sized for the capacity so that a recorded
//   pass needs no host-known leaf count).
//
// Buffers (binding: direction, length, layout)
//   0 leaves (r, capacity + 1 vec2<u32>), 1 counts (r, capacity), 2 ops (rw, capacity),
//   3 status (rw atomic, STATUS_WORDS), 4 params {capacity, bucket, bits, levels}
//
// Invariants: as leaf_count.cu.
//
// Measured cost: not measured yet.

const MAX_JUMP_BITS: u32 = 12u;

struct DecideParams {
    capacity: u32,
    bucket: u32,
    bits: u32,
    levels: u32,
}

@group(0) @binding(0) var<storage, read> dc_leaves: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> dc_counts: array<u32>;
@group(0) @binding(2) var<storage, read_write> dc_ops: array<u32>;
@group(0) @binding(3) var<storage, read_write> dc_status: array<atomic<u32>>;
@group(0) @binding(4) var<uniform> dc_p: DecideParams;

// Whether count > bucket << shift, with the threshold as a 64-bit pair.
fn above(count: u32, bucket: u32, shift: u32) -> bool {
    let bar = shl64(vec2<u32>(bucket, 0u), shift);
    return bar.y == 0u && count > bar.x;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn tb_leaf_count_ops(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                     @builtin(num_workgroups) nwg: vec3<u32>) {
    if atomicLoad(&dc_status[ST_STATE]) != RUN {
        return;
    }
    let live = min(atomicLoad(&dc_status[ST_LEAF_COUNT]), dc_p.capacity);
    let i = item_index(wid, nwg, lid);
    if i >= live {
        return;
    }
    let bits = dc_p.bits;
    let levels = dc_p.levels;
    let key = dc_leaves[i];
    let level = leaf_level(key, dc_leaves[i + 1u], bits, levels);
    let children = 1u << bits;
    var merge = false;
    if level > 0u {
        let slot = shr64(key, bits * (levels - level)).x & (children - 1u);
        if slot > 0u && slot <= i {
            let first = i - slot;
            let last = first + children;
            let parent_size = pow2_64(bits * (levels - level + 1u));
            if last <= live && u64_eq(dc_leaves[last], u64_add(dc_leaves[first], parent_size)) {
                // The group's sum, saturated above the bucket (only compared with it).
                var parent = 0u;
                var over = false;
                for (var c = 0u; c < children; c++) {
                    let v = dc_counts[first + c];
                    if v > dc_p.bucket - parent {
                        over = true;
                        break;
                    }
                    parent += v;
                }
                merge = !over;
            }
        }
    }
    var op = 0u;
    if !merge {
        op = 1u;
        let count = dc_counts[i];
        let jmax = max(MAX_JUMP_BITS / bits, 1u);
        for (var j = jmax; j >= 1u; j--) {
            if above(count, dc_p.bucket, bits * (j - 1u)) && level + j <= levels {
                op = 1u << (bits * j);
                break;
            }
        }
    }
    dc_ops[i] = op;
    if op != 1u {
        atomicOr(&dc_status[ST_CHANGED], 1u);
    }
}
