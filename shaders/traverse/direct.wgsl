// shaders/traverse/direct.wgsl — direct summation on the GPU
// (crates/orrery-traverse/src/gpu/direct.rs; host reference crate::direct), the WGSL twin
// of kernels/traverse/direct.cu: the same entry points and arguments (f32 only; WGSL has
// no f64 arithmetic without SHADER_F64, so direct_f64 / direct_targets_f64 are CUDA's).
// Module "traverse/direct": this file (it //#includes core/common).
//
// What it computes, for every target q < count (body i = q for direct_f32, i = targets[q]
// for direct_targets_f32), over the sources j = 0..n in index order (see direct.cu):
//   a_q = g * sum_j m_j d / s^(3/2),   pot_q = -g * sum_j m_j / s^(1/2),
//   s = max(r^2 + p2, c2) with (p2, c2) = (soft2, 0) for Plummer softening and (0, soft2)
//   for the clamped kernel: exactly r^2 + eps^2 and max(r^2, 4 h^2), one formula.
//   The pair rule is crate::direct's: j == i is skipped by index, s == 0 contributes
//   nothing. Unlike direct.cu, which has three inner loops (no select; skip by index; skip
//   s == 0) chosen per tile, this file keeps one loop with both selects on every tile:
//   the results are the same (the selects only remove pairs the CUDA loops remove too),
//   at two or three more operations per interaction.
//   inverseSqrt (2 ULP in WGSL) replaces CUDA's rsqrt.approx; a target index >= n gives
//   zeros.
//
// Launch shape: workgroups of THREADS (128) invocations over a 2D dispatch, each
//   invocation TARGETS (4) targets q = block * 512 + k * 128 + local index, held as the
//   components of vec4<f32> (no arrays, so nothing spills to function memory); sources
//   stream through a workgroup tile of THREADS vec4<f32> (x, y, z, m; 2 KiB), one per
//   invocation per tile, the last tile padded with m = 0. See direct.cu for why.
//
// Buffers (binding: direction, length, layout)
//   direct_f32:         0 x, 1 y, 2 z, 3 m (r, n f32), 4 ax, 5 ay, 6 az, 7 pot (rw, n f32),
//                       8 params {n, g, soft2, clamped}
//   direct_targets_f32: 0 x, 1 y, 2 z, 3 m (r, n f32), 4 targets (r, count u32), 5 ax,
//                       6 ay, 7 az, 8 pot (rw, count f32), 9 params {n, count, g, soft2,
//                       clamped}
//   Views must start at aligned offsets (no off_* fields; the host binds whole buffers).
//
// Invariants: n >= 1, count >= 1 (the host launches nothing otherwise).
//
// Measured cost: not measured yet.

//#include core/common

const THREADS: u32 = 128u;
const TARGETS: u32 = 4u;

// One invocation's four targets (component k is target k).
struct Targets4 {
    x: vec4<f32>,
    y: vec4<f32>,
    z: vec4<f32>,
    idx: vec4<u32>,
}

struct Sums {
    ax: vec4<f32>,
    ay: vec4<f32>,
    az: vec4<f32>,
    phi: vec4<f32>,
}

var<workgroup> dr_tile: array<vec4<f32>, THREADS>;

// The tile in dr_tile (its first source is body `first`) against the four targets.
fn dr_interact(first: u32, t: Targets4, sums: Sums, p2: f32, c2: f32) -> Sums {
    var s = sums;
    for (var j = 0u; j < THREADS; j++) {
        let b = dr_tile[j];
        let dx = vec4<f32>(b.x) - t.x;
        let dy = vec4<f32>(b.y) - t.y;
        let dz = vec4<f32>(b.z) - t.z;
        let r2 = max(dx * dx + dy * dy + dz * dz + vec4<f32>(p2), vec4<f32>(c2));
        let keep = (r2 > vec4<f32>(0.0)) & (vec4<u32>(first + j) != t.idx);
        let inv = select(vec4<f32>(0.0), inverseSqrt(r2), keep);
        let minv = b.w * inv;
        let w = minv * inv * inv;
        s.ax += dx * w;
        s.ay += dy * w;
        s.az += dz * w;
        s.phi += minv;
    }
    return s;
}

fn dr_zero() -> Sums {
    return Sums(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
}

// ---- direct_f32 --------------------------------------------------------------------------

struct AllParams {
    n: u32,
    g: f32,
    soft2: f32,
    clamped: u32,
}

@group(0) @binding(0) var<storage, read> da_x: array<f32>;
@group(0) @binding(1) var<storage, read> da_y: array<f32>;
@group(0) @binding(2) var<storage, read> da_z: array<f32>;
@group(0) @binding(3) var<storage, read> da_m: array<f32>;
@group(0) @binding(4) var<storage, read_write> da_ax: array<f32>;
@group(0) @binding(5) var<storage, read_write> da_ay: array<f32>;
@group(0) @binding(6) var<storage, read_write> da_az: array<f32>;
@group(0) @binding(7) var<storage, read_write> da_pot: array<f32>;
@group(0) @binding(8) var<uniform> da_p: AllParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn direct_f32(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let n = da_p.n;
    let block_first = linear_block(wid, nwg) * (THREADS * TARGETS);
    if block_first >= n {
        return;
    }
    var t: Targets4;
    for (var k = 0u; k < TARGETS; k++) {
        let i = min(block_first + k * THREADS + lid, n - 1u);
        t.idx[k] = i;
        t.x[k] = da_x[i];
        t.y[k] = da_y[i];
        t.z[k] = da_z[i];
    }
    let clamped = da_p.clamped != 0u;
    let p2 = select(da_p.soft2, 0.0, clamped);
    let c2 = select(0.0, da_p.soft2, clamped);
    var s = dr_zero();
    let tiles = (n + THREADS - 1u) / THREADS;
    for (var ti = 0u; ti < tiles; ti++) {
        let first = ti * THREADS;
        workgroupBarrier();
        let j = first + lid;
        if j < n {
            dr_tile[lid] = vec4<f32>(da_x[j], da_y[j], da_z[j], da_m[j]);
        } else {
            dr_tile[lid] = vec4<f32>(0.0);
        }
        workgroupBarrier();
        s = dr_interact(first, t, s, p2, c2);
    }
    let g = da_p.g;
    for (var k = 0u; k < TARGETS; k++) {
        let q = block_first + k * THREADS + lid;
        if q < n {
            da_ax[q] = g * s.ax[k];
            da_ay[q] = g * s.ay[k];
            da_az[q] = g * s.az[k];
            da_pot[q] = -(g * s.phi[k]);
        }
    }
}

// ---- direct_targets_f32 ------------------------------------------------------------------

struct TargetParams {
    n: u32,
    count: u32,
    g: f32,
    soft2: f32,
    clamped: u32,
}

@group(0) @binding(0) var<storage, read> dt_x: array<f32>;
@group(0) @binding(1) var<storage, read> dt_y: array<f32>;
@group(0) @binding(2) var<storage, read> dt_z: array<f32>;
@group(0) @binding(3) var<storage, read> dt_m: array<f32>;
@group(0) @binding(4) var<storage, read> dt_targets: array<u32>;
@group(0) @binding(5) var<storage, read_write> dt_ax: array<f32>;
@group(0) @binding(6) var<storage, read_write> dt_ay: array<f32>;
@group(0) @binding(7) var<storage, read_write> dt_az: array<f32>;
@group(0) @binding(8) var<storage, read_write> dt_pot: array<f32>;
@group(0) @binding(9) var<uniform> dt_p: TargetParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn direct_targets_f32(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let n = dt_p.n;
    let count = dt_p.count;
    let block_first = linear_block(wid, nwg) * (THREADS * TARGETS);
    if block_first >= count {
        return;
    }
    var t: Targets4;
    for (var k = 0u; k < TARGETS; k++) {
        let q = min(block_first + k * THREADS + lid, count - 1u);
        let i = min(dt_targets[q], n - 1u);
        t.idx[k] = i;
        t.x[k] = dt_x[i];
        t.y[k] = dt_y[i];
        t.z[k] = dt_z[i];
    }
    let clamped = dt_p.clamped != 0u;
    let p2 = select(dt_p.soft2, 0.0, clamped);
    let c2 = select(0.0, dt_p.soft2, clamped);
    var s = dr_zero();
    let tiles = (n + THREADS - 1u) / THREADS;
    for (var ti = 0u; ti < tiles; ti++) {
        let first = ti * THREADS;
        workgroupBarrier();
        let j = first + lid;
        if j < n {
            dr_tile[lid] = vec4<f32>(dt_x[j], dt_y[j], dt_z[j], dt_m[j]);
        } else {
            dr_tile[lid] = vec4<f32>(0.0);
        }
        workgroupBarrier();
        s = dr_interact(first, t, s, p2, c2);
    }
    let g = dt_p.g;
    for (var k = 0u; k < TARGETS; k++) {
        let q = block_first + k * THREADS + lid;
        if q < count {
            let ok = dt_targets[q] < n;
            dt_ax[q] = select(0.0, g * s.ax[k], ok);
            dt_ay[q] = select(0.0, g * s.ay[k], ok);
            dt_az[q] = select(0.0, g * s.az[k], ok);
            dt_pot[q] = select(0.0, -(g * s.phi[k]), ok);
        }
    }
}
