// core/probe — what the subgroups of this adapter look like, checked once when the
// executor starts (only compiled when the device has Features::SUBGROUP).
//
// What it computes: one workgroup of WORKGROUP_SIZE (256) invocations writes, for every
// invocation, its rank sg_id * sg_size + lane at out[local_invocation_index], the sum
// subgroupExclusiveAdd(1) at out[256 + local_invocation_index] (must equal the lane),
// and the subgroup size at out[512]. The host then requires that the ranks are a
// permutation of 0..256 and the sums equal the lanes; otherwise the executor runs the
// shared-memory paths.
//
// Launch shape: one workgroup. Buffers: 0 out (write, 513, u32).
//
// Measured cost: one launch at start-up.

//#include core/common

@group(0) @binding(0) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn probe_subgroups(inv: Invocation) {
    let me = lane_of(inv);
    out[inv.lid] = me.rank;
    out[WORKGROUP_SIZE + inv.lid] = subgroupExclusiveAdd(1u) - me.lane;
    if inv.lid == 0u {
        out[2u * WORKGROUP_SIZE] = me.sg_size;
    }
}
