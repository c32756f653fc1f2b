// shaders/sim/integrate.wgsl — the leapfrog's kicks and drifts on the device, the WGSL
// twin of kernels/sim/integrate.cu (whose header has the reasoning; the CPU reference is
// crates/orrery-sim/src/steps.rs).
//
// Module "sim/integrate": this file (it //#includes core/common).
//
// What it computes, one invocation per body: sim_drift (x += round(v dt)) and sim_kick
// (closing and opening half-kicks of the active bodies, a new rung when ADAPT).
//
// Why it is shaped so: WGSL lets a driver contract a*b + c into an FMA (NVIDIA's Vulkan
// driver does), which would move the rungs off the CPU's. Every product is therefore
// OR-ed with an "opaque zero" (a uniform that is 0 but unknown to the compiler), which
// forces it to be rounded before the sum, as in shaders/traverse/walk.wgsl.
//
// Launch shape: WORKGROUP_SIZE invocations per workgroup, one per body, over a 1D grid
// spread on a 2D dispatch (linear_block).
//
// Buffers (binding: direction, length)
//   sim_drift: 0 x, 1 y, 2 z (rw, n f32), 3 vx, 4 vy, 5 vz (r, n f32), 6 params {n, dt, opaque_zero}
//   sim_kick: 0 vx, 1 vy, 2 vz (rw, n f32), 3 ax, 4 ay, 5 az (r, n f32), 6 rung (rw, n u32),
//             7 params {n, tick, levels, flags, dt, dt4, c2, opaque_zero}
//
// Invariants: levels <= 20, rung[i] <= levels.
//
// Measured cost: not measured separately.

//#include core/common

const SIM_CLOSE: u32 = 1u;
const SIM_OPEN: u32 = 2u;
const SIM_ADAPT: u32 = 4u;

// A product rounded to f32 before any sum it feeds (see the header).
fn sim_mul(a: f32, b: f32, opaque_zero: u32) -> f32 {
    return bitcast<f32>(bitcast<u32>(a * b) | opaque_zero);
}

fn sim_pow2_neg(k: u32) -> f32 {
    return bitcast<f32>((127u - k) << 23u);
}

fn sim_active(rung: u32, tick: u32, levels: u32) -> bool {
    let period = 1u << (levels - min(rung, levels));
    return (tick & (period - 1u)) == 0u;
}

// ---- sim_drift ---------------------------------------------------------------------------

struct DriftParams {
    n: u32,
    dt: f32,
    opaque_zero: u32,
}

@group(0) @binding(0) var<storage, read_write> dr_x: array<f32>;
@group(0) @binding(1) var<storage, read_write> dr_y: array<f32>;
@group(0) @binding(2) var<storage, read_write> dr_z: array<f32>;
@group(0) @binding(3) var<storage, read> dr_vx: array<f32>;
@group(0) @binding(4) var<storage, read> dr_vy: array<f32>;
@group(0) @binding(5) var<storage, read> dr_vz: array<f32>;
@group(0) @binding(6) var<uniform> dr_p: DriftParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn sim_drift(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + lid;
    if i >= dr_p.n {
        return;
    }
    let o = dr_p.opaque_zero;
    dr_x[i] = dr_x[i] + sim_mul(dr_vx[i], dr_p.dt, o);
    dr_y[i] = dr_y[i] + sim_mul(dr_vy[i], dr_p.dt, o);
    dr_z[i] = dr_z[i] + sim_mul(dr_vz[i], dr_p.dt, o);
}

// ---- sim_kick ----------------------------------------------------------------------------

struct KickParams {
    n: u32,
    tick: u32,
    levels: u32,
    flags: u32,
    dt: f32,
    dt4: f32,
    c2: f32,
    opaque_zero: u32,
}

@group(0) @binding(0) var<storage, read_write> ki_vx: array<f32>;
@group(0) @binding(1) var<storage, read_write> ki_vy: array<f32>;
@group(0) @binding(2) var<storage, read_write> ki_vz: array<f32>;
@group(0) @binding(3) var<storage, read> ki_ax: array<f32>;
@group(0) @binding(4) var<storage, read> ki_ay: array<f32>;
@group(0) @binding(5) var<storage, read> ki_az: array<f32>;
@group(0) @binding(6) var<storage, read_write> ki_rung: array<u32>;
@group(0) @binding(7) var<uniform> ki_p: KickParams;

fn sim_wanted_rung(a2: f32, levels: u32, o: u32) -> u32 {
    let q = sim_mul(a2, ki_p.dt4, o);
    for (var r = 0u; r <= levels; r++) {
        if sim_mul(q, sim_pow2_neg(4u * r), o) <= ki_p.c2 {
            return r;
        }
    }
    return levels;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn sim_kick(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + lid;
    if i >= ki_p.n {
        return;
    }
    let levels = ki_p.levels;
    let tick = ki_p.tick;
    var rung = ki_rung[i];
    if !sim_active(rung, tick, levels) {
        return;
    }
    let o = ki_p.opaque_zero;
    let a = vec3<f32>(ki_ax[i], ki_ay[i], ki_az[i]);
    var v = vec3<f32>(ki_vx[i], ki_vy[i], ki_vz[i]);
    if (ki_p.flags & SIM_CLOSE) != 0u {
        let h = sim_mul(ki_p.dt, sim_pow2_neg(rung + 1u), o);
        v = vec3<f32>(v.x + sim_mul(a.x, h, o), v.y + sim_mul(a.y, h, o), v.z + sim_mul(a.z, h, o));
    }
    if (ki_p.flags & SIM_OPEN) != 0u {
        if (ki_p.flags & SIM_ADAPT) != 0u {
            let a2 = (sim_mul(a.x, a.x, o) + sim_mul(a.y, a.y, o)) + sim_mul(a.z, a.z, o);
            var r = sim_wanted_rung(a2, levels, o);
            while r < rung && !sim_active(r, tick, levels) {
                r += 1u;
            }
            rung = r;
            ki_rung[i] = rung;
        }
        let h = sim_mul(ki_p.dt, sim_pow2_neg(rung + 1u), o);
        v = vec3<f32>(v.x + sim_mul(a.x, h, o), v.y + sim_mul(a.y, h, o), v.z + sim_mul(a.z, h, o));
    }
    ki_vx[i] = v.x;
    ki_vy[i] = v.y;
    ki_vz[i] = v.z;
}
