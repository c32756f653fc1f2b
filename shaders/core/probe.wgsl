// core/probe — what the subgroups of this adapter look like, checked once when the
// executor starts (only compiled when the device has Features::SUBGROUP).
//
// What it computes: one workgroup of WORKGROUP_SIZE (256) invocations writes
//   out[lid]          the invocation's rank, subgroup_id * subgroup_size + lane
//   out[256 + lid]    0 when every subgroup operation the core kernels use gave the
//                     expected value for this invocation (bit k set when check k failed:
//                     exclusive add of u32, inclusive add of vec4<u32>, add, min of u32,
//                     max of i32)
//   out[512]          the subgroup size
// The host turns the subgroup paths on only when the ranks are a permutation of 0..256
// (full subgroups, subgroup-major order) and every check passed; otherwise, or when this
// module fails to compile, the executor runs the shared-memory paths.
//
// Launch shape: one workgroup. Buffers: 0 out (write, 513, u32).
//
// Measured cost: one launch at start-up.

//#include core/common

@group(0) @binding(0) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn probe_subgroups(inv: Invocation) {
    let me = lane_of(inv);
    var failed = 0u;
    if subgroupExclusiveAdd(1u) != me.lane {
        failed |= 1u;
    }
    let step = vec4<u32>(1u, 2u, 3u, 4u);
    if any(subgroupInclusiveAdd(step) != (me.lane + 1u) * step) {
        failed |= 2u;
    }
    if subgroupAdd(1u) != me.sg_size {
        failed |= 4u;
    }
    if subgroupMin(me.lane) != 0u {
        failed |= 8u;
    }
    if subgroupMax(i32(me.lane)) != i32(me.sg_size) - 1 {
        failed |= 16u;
    }
    out[inv.lid] = me.rank;
    out[WORKGROUP_SIZE + inv.lid] = failed;
    if inv.lid == 0u {
        out[2u * WORKGROUP_SIZE] = me.sg_size;
    }
}
