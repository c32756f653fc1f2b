// shaders/traverse/upward.wgsl — the upward pass of orrery-traverse on the GPU
// (crates/orrery-traverse/src/gpu/upward.rs), the WGSL twin of kernels/traverse/upward.cu:
// same entry points, same arguments, same order of operations. Self-contained: it
// includes no snippet.
//
// What it computes: see upward.cu (tu_gather, tu_links, tu_leaves, tu_internal per level,
// tu_extents, tu_finish): the CPU's Multipoles::compute and WalkNodes::new in f32.
//
// Floats: sums, differences and products are correctly rounded in WGSL (and Vulkan), but
// a driver may contract a product and a sum into a fused multiply-add (NVIDIA's Vulkan
// driver does). Every product goes through mul(), which ORs its bits with OZ, a zero the
// compiler cannot prove (the `zero` parameter of each entry, always 0): the product is
// rounded to f32 before its sum, as on the CPU. WGSL's division (2.5 ULP) and sqrt
// (inherited from inverseSqrt, 2 ULP) need not be correctly rounded: com, the quadrupole,
// r^2 and the extent may differ from the CPU's in the last bits on some drivers (the tests
// state the tolerance); masses and links are exact everywhere.
//
// Launch shape: as upward.cu, the linear workgroup id of a 2D dispatch (the executor
// spreads more than 65535 workgroups over y); tu_internal loops grid-stride over its
// level's range. Extents: atomicMax on the u32 bits of d^2 (extents bound as
// array<atomic<u32>> in tu_extents).
//
// Buffers (binding: direction, length): per entry below, as upward.cu. The user's body
// arrays and order (tu_gather) may start at any element: their off_* fields.
//
// Measured cost: not measured yet.

override WORKGROUP_SIZE: u32;

const NONE: u32 = 0xffffffffu;
const MAX_LEVELS: u32 = 64u;

// The opaque zero of the running entry (set from its `zero` parameter).
var<private> OZ: u32;

fn item(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wid.x + wid.y * nwg.x) * WORKGROUP_SIZE + lid;
}

// a * b, rounded to f32 on its own (never fused with a following sum).
fn mul(a: f32, b: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(a * b) | OZ);
}

// mac::distance2 of the difference d: ((dx dx + dy dy) + dz dz).
fn norm2(d: vec3<f32>) -> f32 {
    return (mul(d.x, d.x) + mul(d.y, d.y)) + mul(d.z, d.z);
}

// ---- tu_gather ------------------------------------------------------------------------------

struct GatherParams {
    n_active: u32,
    n_bodies: u32,
    off_ga_x: u32,
    off_ga_y: u32,
    off_ga_z: u32,
    off_ga_m: u32,
    off_ga_order: u32,
}

@group(0) @binding(0) var<storage, read> ga_x: array<f32>;
@group(0) @binding(1) var<storage, read> ga_y: array<f32>;
@group(0) @binding(2) var<storage, read> ga_z: array<f32>;
@group(0) @binding(3) var<storage, read> ga_m: array<f32>;
@group(0) @binding(4) var<storage, read> ga_order: array<u32>;
@group(0) @binding(5) var<storage, read_write> ga_bodies: array<f32>;
@group(0) @binding(6) var<storage, read_write> ga_order_out: array<u32>;
@group(0) @binding(7) var<storage, read_write> ga_status: array<atomic<u32>>;
@group(0) @binding(8) var<uniform> ga_p: GatherParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tu_gather(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = item(wid, nwg, lid);
    if i >= ga_p.n_active {
        return;
    }
    let j = ga_order[ga_p.off_ga_order + i];
    ga_order_out[i] = j;
    var b = vec4<f32>(0.0, 0.0, 0.0, 0.0);
    if j < ga_p.n_bodies {
        b = vec4<f32>(ga_x[ga_p.off_ga_x + j], ga_y[ga_p.off_ga_y + j], ga_z[ga_p.off_ga_z + j],
                      ga_m[ga_p.off_ga_m + j]);
    } else {
        atomicMin(&ga_status[0], i);
    }
    ga_bodies[4u * i] = b.x;
    ga_bodies[4u * i + 1u] = b.y;
    ga_bodies[4u * i + 2u] = b.z;
    ga_bodies[4u * i + 3u] = b.w;
}

// ---- tu_links -------------------------------------------------------------------------------

struct LinkParams {
    nodes: u32,
}

@group(0) @binding(0) var<storage, read> lk_first_children: array<u32>;
@group(0) @binding(1) var<storage, read> lk_escapes: array<u32>;
@group(0) @binding(2) var<storage, read> lk_particle_begins: array<u32>;
@group(0) @binding(3) var<storage, read> lk_particle_counts: array<u32>;
@group(0) @binding(4) var<storage, read_write> lk_links: array<u32>;
@group(0) @binding(5) var<uniform> lk_p: LinkParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tu_links(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = item(wid, nwg, lid);
    if n >= lk_p.nodes {
        return;
    }
    lk_links[4u * n] = lk_first_children[n];
    lk_links[4u * n + 1u] = lk_escapes[n];
    lk_links[4u * n + 2u] = lk_particle_begins[n];
    lk_links[4u * n + 3u] = lk_particle_counts[n];
}

// ---- tu_leaves ------------------------------------------------------------------------------

struct LeafParams {
    leaves: u32,
    zero: u32,
}

@group(0) @binding(0) var<storage, read> lf_bodies: array<f32>;
@group(0) @binding(1) var<storage, read> lf_leaf_nodes: array<u32>;
@group(0) @binding(2) var<storage, read> lf_links: array<u32>;
@group(0) @binding(3) var<storage, read> lf_box_centres: array<f32>;
@group(0) @binding(4) var<storage, read_write> lf_centres: array<f32>;
@group(0) @binding(5) var<storage, read_write> lf_masses: array<f32>;
@group(0) @binding(6) var<storage, read_write> lf_quads: array<f32>;
@group(0) @binding(7) var<storage, read_write> lf_extents: array<f32>;
@group(0) @binding(8) var<uniform> lf_p: LeafParams;

fn lf_body(j: u32) -> vec4<f32> {
    return vec4<f32>(lf_bodies[4u * j], lf_bodies[4u * j + 1u], lf_bodies[4u * j + 2u], lf_bodies[4u * j + 3u]);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn tu_leaves(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
    OZ = lf_p.zero;
    let i = item(wid, nwg, lid);
    if i >= lf_p.leaves {
        return;
    }
    let n = lf_leaf_nodes[i];
    let begin = lf_links[4u * n + 2u];
    let end = begin + lf_links[4u * n + 3u];
    let g = vec3<f32>(lf_box_centres[3u * n], lf_box_centres[3u * n + 1u], lf_box_centres[3u * n + 2u]);
    var mass = 0.0f;
    var s = vec3<f32>(0.0, 0.0, 0.0);
    for (var j = begin; j < end; j++) {
        let p = lf_body(j);
        mass = mass + p.w;
        s.x = s.x + mul(p.w, p.x - g.x);
        s.y = s.y + mul(p.w, p.y - g.y);
        s.z = s.z + mul(p.w, p.z - g.z);
    }
    var c = g;
    let massive = mass != 0.0;
    if massive {
        c = vec3<f32>(g.x + s.x / mass, g.y + s.y / mass, g.z + s.z / mass);
    }
    var t = array<f32, 6>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    var far2 = 0.0f;
    for (var j = begin; j < end; j++) {
        let p = lf_body(j);
        let d = p.xyz - c;
        if massive {
            let md = vec3<f32>(mul(p.w, d.x), mul(p.w, d.y), mul(p.w, d.z));
            t[0] = t[0] + mul(md.x, d.x);
            t[1] = t[1] + mul(md.x, d.y);
            t[2] = t[2] + mul(md.x, d.z);
            t[3] = t[3] + mul(md.y, d.y);
            t[4] = t[4] + mul(md.y, d.z);
            t[5] = t[5] + mul(md.z, d.z);
        }
        far2 = max(far2, norm2(d));
    }
    lf_centres[4u * n] = c.x;
    lf_centres[4u * n + 1u] = c.y;
    lf_centres[4u * n + 2u] = c.z;
    lf_centres[4u * n + 3u] = 0.0;
    lf_masses[4u * n] = mass;
    lf_masses[4u * n + 1u] = t[0];
    lf_masses[4u * n + 2u] = t[1];
    lf_masses[4u * n + 3u] = t[2];
    lf_quads[4u * n] = t[3];
    lf_quads[4u * n + 1u] = t[4];
    lf_quads[4u * n + 2u] = t[5];
    lf_quads[4u * n + 3u] = 0.0;
    lf_extents[n] = far2;
}

// ---- tu_internal ----------------------------------------------------------------------------

struct InternalParams {
    level: u32,
    nodes: u32,
    zero: u32,
}

@group(0) @binding(0) var<storage, read> in_box_centres: array<f32>;
@group(0) @binding(1) var<storage, read> in_links: array<u32>;
@group(0) @binding(2) var<storage, read> in_parents: array<u32>;
@group(0) @binding(3) var<storage, read> in_level_offsets: array<u32>;
@group(0) @binding(4) var<storage, read_write> in_centres: array<f32>;
@group(0) @binding(5) var<storage, read_write> in_masses: array<f32>;
@group(0) @binding(6) var<storage, read_write> in_quads: array<f32>;
@group(0) @binding(7) var<storage, read_write> in_extents: array<f32>;
@group(0) @binding(8) var<uniform> in_p: InternalParams;

fn in_com(k: u32) -> vec3<f32> {
    return vec3<f32>(in_centres[4u * k], in_centres[4u * k + 1u], in_centres[4u * k + 2u]);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn tu_internal(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
               @builtin(num_workgroups) nwg: vec3<u32>) {
    OZ = in_p.zero;
    let nodes = in_p.nodes;
    let begin = in_level_offsets[in_p.level];
    let end = min(in_level_offsets[in_p.level + 1u], nodes);
    let stride = nwg.x * nwg.y * WORKGROUP_SIZE;
    for (var n = begin + item(wid, nwg, lid); n < end; n += stride) {
        let first = in_links[4u * n];
        if first == NONE {
            continue;
        }
        var last = first;
        while last < nodes && in_parents[last] == n {
            last++;
        }
        let g = vec3<f32>(in_box_centres[3u * n], in_box_centres[3u * n + 1u], in_box_centres[3u * n + 2u]);
        var mass = 0.0f;
        var s = vec3<f32>(0.0, 0.0, 0.0);
        for (var k = first; k < last; k++) {
            let ck = in_com(k);
            let mk = in_masses[4u * k];
            mass = mass + mk;
            s.x = s.x + mul(mk, ck.x - g.x);
            s.y = s.y + mul(mk, ck.y - g.y);
            s.z = s.z + mul(mk, ck.z - g.z);
        }
        var c = g;
        var t = array<f32, 6>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        if mass != 0.0 {
            c = vec3<f32>(g.x + s.x / mass, g.y + s.y / mass, g.z + s.z / mass);
            for (var k = first; k < last; k++) {
                let mk = in_masses[4u * k];
                t[0] = t[0] + in_masses[4u * k + 1u];
                t[1] = t[1] + in_masses[4u * k + 2u];
                t[2] = t[2] + in_masses[4u * k + 3u];
                t[3] = t[3] + in_quads[4u * k];
                t[4] = t[4] + in_quads[4u * k + 1u];
                t[5] = t[5] + in_quads[4u * k + 2u];
                let d = in_com(k) - c;
                let md = vec3<f32>(mul(mk, d.x), mul(mk, d.y), mul(mk, d.z));
                t[0] = t[0] + mul(md.x, d.x);
                t[1] = t[1] + mul(md.x, d.y);
                t[2] = t[2] + mul(md.x, d.z);
                t[3] = t[3] + mul(md.y, d.y);
                t[4] = t[4] + mul(md.y, d.z);
                t[5] = t[5] + mul(md.z, d.z);
            }
        }
        in_centres[4u * n] = c.x;
        in_centres[4u * n + 1u] = c.y;
        in_centres[4u * n + 2u] = c.z;
        in_centres[4u * n + 3u] = 0.0;
        in_masses[4u * n] = mass;
        in_masses[4u * n + 1u] = t[0];
        in_masses[4u * n + 2u] = t[1];
        in_masses[4u * n + 3u] = t[2];
        in_quads[4u * n] = t[3];
        in_quads[4u * n + 1u] = t[4];
        in_quads[4u * n + 2u] = t[5];
        in_quads[4u * n + 3u] = 0.0;
        in_extents[n] = 0.0;
    }
}

// ---- tu_extents -----------------------------------------------------------------------------

struct ExtentParams {
    particles: u32,
    zero: u32,
}

@group(0) @binding(0) var<storage, read> ex_bodies: array<f32>;
@group(0) @binding(1) var<storage, read> ex_particle_leaves: array<u32>;
@group(0) @binding(2) var<storage, read> ex_leaf_nodes: array<u32>;
@group(0) @binding(3) var<storage, read> ex_parents: array<u32>;
@group(0) @binding(4) var<storage, read> ex_centres: array<f32>;
@group(0) @binding(5) var<storage, read_write> ex_extents: array<atomic<u32>>;
@group(0) @binding(6) var<uniform> ex_p: ExtentParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tu_extents(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
              @builtin(num_workgroups) nwg: vec3<u32>) {
    OZ = ex_p.zero;
    let q = item(wid, nwg, lid);
    if q >= ex_p.particles {
        return;
    }
    let p = vec3<f32>(ex_bodies[4u * q], ex_bodies[4u * q + 1u], ex_bodies[4u * q + 2u]);
    var node = ex_parents[ex_leaf_nodes[ex_particle_leaves[q]]];
    for (var step = 0u; node != NONE && step < MAX_LEVELS; step++) {
        let c = vec3<f32>(ex_centres[4u * node], ex_centres[4u * node + 1u], ex_centres[4u * node + 2u]);
        let bits = bitcast<u32>(norm2(p - c));
        // The slot only grows: a stale read can only cause an unneeded atomic.
        if bits > atomicLoad(&ex_extents[node]) {
            atomicMax(&ex_extents[node], bits);
        }
        node = ex_parents[node];
    }
}

// ---- tu_finish ------------------------------------------------------------------------------

struct FinishParams {
    nodes: u32,
    safe: u32,
    theta: f32,
    zero: u32,
}

@group(0) @binding(0) var<storage, read> fi_box_centres: array<f32>;
@group(0) @binding(1) var<storage, read> fi_half_extents: array<f32>;
@group(0) @binding(2) var<storage, read_write> fi_centres: array<f32>;
@group(0) @binding(3) var<storage, read_write> fi_masses: array<f32>;
@group(0) @binding(4) var<storage, read_write> fi_quads: array<f32>;
@group(0) @binding(5) var<storage, read_write> fi_extents: array<f32>;
@group(0) @binding(6) var<uniform> fi_p: FinishParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tu_finish(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
    OZ = fi_p.zero;
    let n = item(wid, nwg, lid);
    if n >= fi_p.nodes {
        return;
    }
    // multipole::traceless: trace = (t0 + t3) + t5.
    let t0 = fi_masses[4u * n + 1u];
    let t1 = fi_masses[4u * n + 2u];
    let t2 = fi_masses[4u * n + 3u];
    let t3 = fi_quads[4u * n];
    let t4 = fi_quads[4u * n + 1u];
    let t5 = fi_quads[4u * n + 2u];
    let trace = (t0 + t3) + t5;
    fi_masses[4u * n + 1u] = mul(3.0, t0) - trace;
    fi_masses[4u * n + 2u] = mul(3.0, t1);
    fi_masses[4u * n + 3u] = mul(3.0, t2);
    fi_quads[4u * n] = mul(3.0, t3) - trace;
    fi_quads[4u * n + 1u] = mul(3.0, t4);
    fi_quads[4u * n + 2u] = mul(3.0, t5) - trace;
    fi_quads[4u * n + 3u] = 0.0;
    // Opening::critical_radius2.
    let h = vec3<f32>(fi_half_extents[3u * n], fi_half_extents[3u * n + 1u], fi_half_extents[3u * n + 2u]);
    let side = mul(2.0, max(max(h.x, h.y), h.z));
    var r = side / fi_p.theta;
    if fi_p.safe != 0u {
        let c = vec3<f32>(fi_centres[4u * n], fi_centres[4u * n + 1u], fi_centres[4u * n + 2u]);
        let g = vec3<f32>(fi_box_centres[3u * n], fi_box_centres[3u * n + 1u], fi_box_centres[3u * n + 2u]);
        r = r + sqrt(norm2(c - g));
    }
    fi_centres[4u * n + 3u] = mul(r, r);
    fi_extents[n] = sqrt(fi_extents[n]);
}
