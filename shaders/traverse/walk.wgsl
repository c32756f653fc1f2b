// shaders/traverse/walk.wgsl — the Barnes-Hut walks of orrery-traverse (f32), the WGSL
// twin of kernels/traverse/walk.cu (read its header for the inputs, outputs and the
// three walks). Module "traverse/walk": core/common, then this file.
//
// What differs from CUDA
//   - bh_walk_coherent: with subgroups (SUBGROUP) the node index is shared by a subgroup
//     and advanced by subgroupAny, as the CUDA warp vote; without subgroups the whole
//     workgroup shares it through workgroup memory (a vote by atomicOr, one barrier per
//     node, the next node chosen by invocation 0 and read back with
//     workgroupUniformLoad). Either way every target evaluates exactly its own walk, in
//     its own order: bit-identical to bh_walk_independent.
//   - bh_walk_group (bh_walk_group2): the group's box (32 or 64 consecutive targets) is reduced in workgroup
//     memory, so groups do not depend on the subgroup size; then each invocation walks
//     with the group's decisions (identical across the group, so no divergence).
//   - The opening test forces every product to be rounded to f32 before the sums (an
//     "opaque zero", 0 but unknown to the compiler, OR-ed into the product's bits): WGSL
//     lets a driver contract a*b + c into an FMA, and NVIDIA's Vulkan driver does, which
//     would move the test off the CPU's and change the interaction counts.
//
// Launch shape: WORKGROUP_SIZE invocations per workgroup (a multiple of 32), one per
//   target, over a 1D grid spread on a 2D dispatch (linear_block).
//
// Buffers (binding: direction, length)
//   0 bodies (r, 4 n f32), 1 centres (r, 4 N f32), 2 masses (r, 4 N), 3 quads (r, 4 N),
//   4 links (r, 4 N u32), 5 acc (rw, n vec4), 6 counts (rw, n vec2<u32>), 7 params {n, quadrupole, eps2, g}
//
// bh_scatter_forces / bh_scatter_counts: out[order[k]] = in[k], one invocation per target
//   (bindings: acc or counts, order, then the outputs, then params {n}).
//
// Measured cost: not measured yet.

//#include core/common

const NONE: u32 = 0xffffffffu;
const GROUP: u32 = 32u;

struct WalkParams {
    n: u32,
    quadrupole: u32,
    eps2: f32,
    g: f32,
}

// The node and body arrays are flat f32 / u32 buffers of four values per entry (as the
// upward pass writes them); body(i), centre(n), ... read one entry.
@group(0) @binding(0) var<storage, read> wk_bodies: array<f32>;
@group(0) @binding(1) var<storage, read> wk_centres: array<f32>;
@group(0) @binding(2) var<storage, read> wk_masses: array<f32>;
@group(0) @binding(3) var<storage, read> wk_quads: array<f32>;
@group(0) @binding(4) var<storage, read> wk_links: array<u32>;
@group(0) @binding(5) var<storage, read_write> wk_acc: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> wk_counts: array<vec2<u32>>;
@group(0) @binding(7) var<uniform> wk_p: WalkParams;

fn body(i: u32) -> vec4<f32> {
    return vec4<f32>(wk_bodies[4u * i], wk_bodies[4u * i + 1u], wk_bodies[4u * i + 2u], wk_bodies[4u * i + 3u]);
}

fn centre(n: u32) -> vec4<f32> {
    return vec4<f32>(wk_centres[4u * n], wk_centres[4u * n + 1u], wk_centres[4u * n + 2u], wk_centres[4u * n + 3u]);
}

fn mass_of(n: u32) -> vec4<f32> {
    return vec4<f32>(wk_masses[4u * n], wk_masses[4u * n + 1u], wk_masses[4u * n + 2u], wk_masses[4u * n + 3u]);
}

fn quadrupole_of(n: u32) -> vec4<f32> {
    return vec4<f32>(wk_quads[4u * n], wk_quads[4u * n + 1u], wk_quads[4u * n + 2u], wk_quads[4u * n + 3u]);
}

fn link(n: u32) -> vec4<u32> {
    return vec4<u32>(wk_links[4u * n], wk_links[4u * n + 1u], wk_links[4u * n + 2u], wk_links[4u * n + 3u]);
}

// A product rounded to f32 before any sum it feeds (see the header).
fn rounded_mul(a: f32, b: f32, opaque_zero: u32) -> f32 {
    return bitcast<f32>(bitcast<u32>(a * b) | opaque_zero);
}

// ((dx*dx + dy*dy) + dz*dz) with d = c - x, every operation rounded (the CPU's distance2).
fn dist2(c: vec4<f32>, x: vec3<f32>, oz: u32) -> f32 {
    let d = c.xyz - x;
    return (rounded_mul(d.x, d.x, oz) + rounded_mul(d.y, d.y, oz)) + rounded_mul(d.z, d.z, oz);
}

// The CPU's box_distance2 from p to the box (centre gc, half-extents gh).
fn box_dist2(p: vec4<f32>, gc: vec3<f32>, gh: vec3<f32>, oz: u32) -> f32 {
    let d = max(abs(p.xyz - gc) - gh, vec3<f32>(0.0));
    return (rounded_mul(d.x, d.x, oz) + rounded_mul(d.y, d.y, oz)) + rounded_mul(d.z, d.z, oz);
}

fn p2p(a: vec4<f32>, xi: vec3<f32>, s: vec4<f32>, eps2: f32) -> vec4<f32> {
    let d = s.xyz - xi;
    let r2 = fma(d.z, d.z, fma(d.y, d.y, fma(d.x, d.x, eps2)));
    let rinv = select(0.0, inverseSqrt(r2), r2 > 0.0);
    let mr = s.w * rinv;
    let mr3 = (mr * rinv) * rinv;
    return vec4<f32>(fma(vec3<f32>(mr3), d, a.xyz), a.w - mr);
}

fn m2p(a: vec4<f32>, xi: vec3<f32>, c: vec4<f32>, mq: vec4<f32>, q2: vec4<f32>, eps2: f32, quad: bool) -> vec4<f32> {
    let d = c.xyz - xi;
    let r2 = fma(d.z, d.z, fma(d.y, d.y, fma(d.x, d.x, eps2)));
    let rinv = select(0.0, inverseSqrt(r2), r2 > 0.0);
    let rinv2 = rinv * rinv;
    let mr = mq.x * rinv;
    let mr3 = mr * rinv2;
    var acc = fma(vec3<f32>(mr3), d, a.xyz);
    var p = a.w - mr;
    if quad {
        let q = vec3<f32>(
            fma(mq.w, d.z, fma(mq.z, d.y, mq.y * d.x)),
            fma(q2.y, d.z, fma(q2.x, d.y, mq.z * d.x)),
            fma(q2.z, d.z, fma(q2.y, d.y, mq.w * d.x)),
        );
        let s = fma(d.z, q.z, fma(d.y, q.y, d.x * q.x));
        let rinv5 = (rinv2 * rinv2) * rinv;
        let g = ((2.5 * s) * rinv5) * rinv2;
        acc = fma(vec3<f32>(g), d, fma(-q, vec3<f32>(rinv5), acc));
        p = fma(-0.5 * s, rinv5, p);
    }
    return vec4<f32>(acc, p);
}

fn store(i: u32, a: vec4<f32>, pp: u32, pc: u32) {
    wk_acc[i] = wk_p.g * a;
    wk_counts[i] = vec2<u32>(pp, pc);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn bh_walk_independent(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                       @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + lid;
    if i >= wk_p.n {
        return;
    }
    let oz = wk_p.quadrupole >> 1u;
    let quad = wk_p.quadrupole != 0u;
    let eps2 = wk_p.eps2;
    let xi = body(i).xyz;
    var a = vec4<f32>(0.0);
    var pp = 0u;
    var pc = 0u;
    var node = 0u;
    while node != NONE {
        let l = link(node);
        if l.w == 0u {
            node = l.y;
            continue;
        }
        let c = centre(node);
        if dist2(c, xi, oz) < c.w {
            if l.x != NONE {
                node = l.x;
                continue;
            }
            for (var j = l.z; j < l.z + l.w; j++) {
                if j != i {
                    a = p2p(a, xi, body(j), eps2);
                    pp += 1u;
                }
            }
        } else {
            a = m2p(a, xi, c, mass_of(node), quadrupole_of(node), eps2, quad);
            pc += 1u;
        }
        node = l.y;
    }
    store(i, a, pp, pc);
}

var<workgroup> wk_node: u32;
var<workgroup> wk_vote: atomic<u32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn bh_walk_coherent(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let lid = inv.lid;
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + lid;
    let n = wk_p.n;
    let valid = i < n;
    let oz = wk_p.quadrupole >> 1u;
    let quad = wk_p.quadrupole != 0u;
    let eps2 = wk_p.eps2;
    let xi = body(min(i, n - 1u)).xyz;
    var a = vec4<f32>(0.0);
    var pp = 0u;
    var pc = 0u;
    var walking = valid;
    var resume = NONE;
//#if SUBGROUP
    // One node index per subgroup. Subgroups past the targets leave at once (nothing
    // below synchronises the workgroup).
    if subgroupAll(!valid) {
        return;
    }
    var node = 0u;
    while node != NONE {
        if node == resume {
            walking = true;
        }
        let l = link(node);
        if l.w == 0u {
            node = l.y;
            continue;
        }
        let c = centre(node);
        let open = walking && dist2(c, xi, oz) < c.w;
        let leaf = l.x == NONE;
        if walking && !open {
            a = m2p(a, xi, c, mass_of(node), quadrupole_of(node), eps2, quad);
            pc += 1u;
            if !leaf {
                walking = false;
                resume = l.y;
            }
        }
        let any_open = subgroupAny(open);
        if leaf {
            if open {
                for (var j = l.z; j < l.z + l.w; j++) {
                    if j != i {
                        a = p2p(a, xi, body(j), eps2);
                        pp += 1u;
                    }
                }
            }
            node = l.y;
        } else {
            node = select(l.y, l.x, any_open);
        }
    }
//#else
    // One node index per workgroup: the barriers below need uniform control flow, so
    // every invocation stays in the loop to the end.
    if lid == 0u {
        wk_node = 0u;
        atomicStore(&wk_vote, 0u);
    }
    loop {
        let node = workgroupUniformLoad(&wk_node);
        if node == NONE {
            break;
        }
        if node == resume {
            walking = true;
        }
        let l = link(node);
        let c = centre(node);
        let live = l.w != 0u;
        let open = live && walking && dist2(c, xi, oz) < c.w;
        let leaf = l.x == NONE;
        if live && walking && !open {
            a = m2p(a, xi, c, mass_of(node), quadrupole_of(node), eps2, quad);
            pc += 1u;
            if !leaf {
                walking = false;
                resume = l.y;
            }
        }
        if open {
            atomicOr(&wk_vote, 1u);
            if leaf {
                for (var j = l.z; j < l.z + l.w; j++) {
                    if j != i {
                        a = p2p(a, xi, body(j), eps2);
                        pp += 1u;
                    }
                }
            }
        }
        workgroupBarrier();
        if lid == 0u {
            let any_open = atomicExchange(&wk_vote, 0u) != 0u;
            wk_node = select(l.y, l.x, any_open && live && !leaf);
        }
    }
//#endif
    if valid {
        store(i, a, pp, pc);
    }
}

var<workgroup> wk_lo: array<vec3<f32>, 1024>;

// The group walk with groups of `group` (32 or 64) consecutive targets, one per
// invocation; workgroups hold whole groups.
fn group_walk(lid: u32, wid: vec3<u32>, nwg: vec3<u32>, group: u32) {
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + lid;
    let n = wk_p.n;
    let oz = wk_p.quadrupole >> 1u;
    let quad = wk_p.quadrupole != 0u;
    let eps2 = wk_p.eps2;
    let b = body(min(i, n - 1u));
    let xi = b.xyz;
    // The group's box: min and max over its targets (exact in any order), then centre
    // and half-extents rounded as the CPU's group_box.
    wk_lo[lid] = xi;
    workgroupBarrier();
    let first = lid & ~(group - 1u);
    var lo = xi;
    var hi = xi;
    for (var k = 0u; k < group; k++) {
        lo = min(lo, wk_lo[first + k]);
        hi = max(hi, wk_lo[first + k]);
    }
    let gc = (lo + hi) * 0.5;
    let gh = (hi - lo) * 0.5;
    if i >= n {
        return;
    }
    var a = vec4<f32>(0.0);
    var pp = 0u;
    var pc = 0u;
    var node = 0u;
    while node != NONE {
        let l = link(node);
        if l.w == 0u {
            node = l.y;
            continue;
        }
        let c = centre(node);
        if box_dist2(c, gc, gh, oz) < c.w {
            if l.x != NONE {
                node = l.x;
                continue;
            }
            for (var j = l.z; j < l.z + l.w; j++) {
                if j != i {
                    a = p2p(a, xi, body(j), eps2);
                    pp += 1u;
                }
            }
        } else {
            a = m2p(a, xi, c, mass_of(node), quadrupole_of(node), eps2, quad);
            pc += 1u;
        }
        node = l.y;
    }
    store(i, a, pp, pc);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn bh_walk_group(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                 @builtin(num_workgroups) nwg: vec3<u32>) {
    group_walk(lid, wid, nwg, GROUP);
}

// Groups of 64 (CUDA runs two targets per lane; here one per invocation, the same groups).
@compute @workgroup_size(WORKGROUP_SIZE)
fn bh_walk_group2(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                  @builtin(num_workgroups) nwg: vec3<u32>) {
    group_walk(lid, wid, nwg, 2u * GROUP);
}

struct ScatterParams {
    n: u32,
}

@group(0) @binding(0) var<storage, read> sf_acc: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> sf_order: array<u32>;
@group(0) @binding(2) var<storage, read_write> sf_ax: array<f32>;
@group(0) @binding(3) var<storage, read_write> sf_ay: array<f32>;
@group(0) @binding(4) var<storage, read_write> sf_az: array<f32>;
@group(0) @binding(5) var<storage, read_write> sf_pot: array<f32>;
@group(0) @binding(6) var<uniform> sf_p: ScatterParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn bh_scatter_forces(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                     @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_block(wid, nwg) * WORKGROUP_SIZE + lid;
    if k >= sf_p.n {
        return;
    }
    let a = sf_acc[k];
    let i = sf_order[k];
    sf_ax[i] = a.x;
    sf_ay[i] = a.y;
    sf_az[i] = a.z;
    sf_pot[i] = a.w;
}

@group(0) @binding(0) var<storage, read> sc_counts: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> sc_order: array<u32>;
@group(0) @binding(2) var<storage, read_write> sc_pp: array<u32>;
@group(0) @binding(3) var<storage, read_write> sc_pc: array<u32>;
@group(0) @binding(4) var<uniform> sc_p: ScatterParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn bh_scatter_counts(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                     @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_block(wid, nwg) * WORKGROUP_SIZE + lid;
    if k >= sc_p.n {
        return;
    }
    let c = sc_counts[k];
    let i = sc_order[k];
    sc_pp[i] = c.x;
    sc_pc[i] = c.y;
}
