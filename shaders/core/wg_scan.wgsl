// core/wg_scan — workgroup-wide exclusive sum of one u32 per invocation (an //#include
// snippet; needs core/common).
//
// wg_exclusive_scan(me, v) returns the sum of v over the invocations of lower rank and
// leaves the workgroup total in wg_scan_total() until the next call. Every invocation of
// the workgroup must call it (it holds barriers), and it ends with a barrier, so the
// caller may reuse its own shared memory right away.
//
// Two paths, chosen when the pipeline is built:
//   - SUBGROUP: subgroupInclusiveAdd inside each subgroup, then invocation 0 scans the
//     WORKGROUP_SIZE / subgroup_size subgroup totals serially (32 for lavapipe's
//     subgroups of 8 and 256 invocations, 8 on NVIDIA's 32). 3 barriers.
//   - shared memory: a raking scan. 16 rakers scan WORKGROUP_SIZE / 16 values each
//     serially, invocation 0 scans the 16 raker totals, everyone adds. 4 barriers, which
//     beats a log-step (Hillis-Steele) scan's 16 where barriers are expensive (lavapipe).
//
// Invariants: WORKGROUP_SIZE is a multiple of 16 and at most 1024.

const WG_RAKERS: u32 = 16u;

var<workgroup> wg_scan_buf: array<u32, WORKGROUP_SIZE>;
// Raker prefixes at 0..16, the workgroup total at 16.
var<workgroup> wg_scan_rake: array<u32, 17>;

fn wg_scan_total() -> u32 {
    return wg_scan_rake[WG_RAKERS];
}

fn wg_exclusive_scan(me: Lane, v: u32) -> u32 {
//#if SUBGROUP
    let incl = subgroupInclusiveAdd(v);
    if me.lane == me.sg_size - 1u {
        wg_scan_buf[me.sg] = incl;
    }
    workgroupBarrier();
    if me.rank == 0u {
        var acc = 0u;
        let groups = WORKGROUP_SIZE / me.sg_size;
        for (var i = 0u; i < groups; i++) {
            let t = wg_scan_buf[i];
            wg_scan_buf[i] = acc;
            acc += t;
        }
        wg_scan_rake[WG_RAKERS] = acc;
    }
    workgroupBarrier();
    let result = incl - v + wg_scan_buf[me.sg];
    workgroupBarrier();
    return result;
//#else
    wg_scan_buf[me.rank] = v;
    workgroupBarrier();
    let seg = WORKGROUP_SIZE / WG_RAKERS;
    if me.rank < WG_RAKERS {
        var acc = 0u;
        let base = me.rank * seg;
        for (var i = 0u; i < seg; i++) {
            let t = wg_scan_buf[base + i];
            wg_scan_buf[base + i] = acc;
            acc += t;
        }
        wg_scan_rake[me.rank] = acc;
    }
    workgroupBarrier();
    if me.rank == 0u {
        var acc = 0u;
        for (var i = 0u; i < WG_RAKERS; i++) {
            let t = wg_scan_rake[i];
            wg_scan_rake[i] = acc;
            acc += t;
        }
        wg_scan_rake[WG_RAKERS] = acc;
    }
    workgroupBarrier();
    let result = wg_scan_buf[me.rank] + wg_scan_rake[me.rank / seg];
    workgroupBarrier();
    return result;
//#endif
}
