// core/common — helpers shared by the core shaders (an //#include snippet, not a module).
//
// What it holds
//   - linear_block: the linear workgroup id of a 1D grid that the executor spread over a
//     2D dispatch (x = up to max_compute_workgroups_per_dimension, y = rows); kernels
//     return when it is >= their block or tile count.
//   - Invocation, Lane: who an invocation is in its workgroup's scan order (lane_of).
//   - 64-bit integers as vec2<u32>, low word first (the little-endian bytes of a u64 or
//     i64 buffer): add with carry, unsigned and signed less-than.
//
// Invariants
//   - WORKGROUP_SIZE is a pipeline override set by the executor.
//   - With SUBGROUP defined, the executor has checked at start-up (shaders/core/probe.wgsl)
//     that subgroups are full and that subgroup_id * subgroup_size + subgroup_invocation_id
//     enumerates 0..WORKGROUP_SIZE; otherwise it does not define SUBGROUP.

override WORKGROUP_SIZE: u32;

fn linear_block(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wid.x + wid.y * nwg.x;
}

// An invocation's place in the scan order of its workgroup. Scans and ranks run over
// `rank`; with subgroups it is subgroup-major so that subgroup scans run in rank order.
struct Lane {
    // Position in the workgroup's scan order, 0..WORKGROUP_SIZE.
    rank: u32,
    // subgroup_invocation_id (0 without subgroups).
    lane: u32,
    // subgroup_id (rank without subgroups).
    sg: u32,
    // subgroup size (1 without subgroups).
    sg_size: u32,
}

// The per-invocation built-ins every core kernel takes as its first argument. The
// per-workgroup ones (workgroup_id, num_workgroups) are separate arguments so that
// naga's uniformity analysis sees them as uniform (early returns before barriers).
struct Invocation {
    @builtin(local_invocation_index) lid: u32,
//#if SUBGROUP
    @builtin(subgroup_id) sg: u32,
    @builtin(subgroup_invocation_id) sg_lane: u32,
    @builtin(subgroup_size) sg_size: u32,
//#endif
}

fn lane_of(inv: Invocation) -> Lane {
//#if SUBGROUP
    return Lane(inv.sg * inv.sg_size + inv.sg_lane, inv.sg_lane, inv.sg, inv.sg_size);
//#else
    return Lane(inv.lid, 0u, inv.lid, 1u);
//#endif
}

fn u64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

fn u64_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.y < b.y || (a.y == b.y && a.x < b.x);
}

fn i64_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
    let ah = bitcast<i32>(a.y);
    let bh = bitcast<i32>(b.y);
    return ah < bh || (ah == bh && a.x < b.x);
}
