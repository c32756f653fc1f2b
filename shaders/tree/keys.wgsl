// shaders/tree/keys.wgsl — particle keys of the Cornerstone tree build
// (crates/orrery-tree-build/src/gpu/keys.rs; host reference crate::input::particle_keys),
// the WGSL twin of kernels/tree/keys.cu. Module "tree/keys": common.wgsl, then this file.
//
// What it computes, for i < n (see keys.cu)
//   tb_remove_outside_f32 / _f64  keys[i] = key_end where the particle is outside the
//                    closed box (NaN included). Compared as integers: a float's
//                    order-preserving code (-0 as +0) orders exactly as the float, so the
//                    f64 variant needs no SHADER_F64 (positions are read as u32 pairs) and
//                    NaN is found from its bits, whatever the compiler assumes about NaN.
//   tb_binary_keys_f32  BinaryLayout::<f32, u64>::key_clamped: per axis g = (p - min) *
//                    scale in f32 (no FMA forms from a subtraction followed by a
//                    multiplication), 0 unless g > 0, 2^bits - 1 when g >= 2^bits, else
//                    floor(g) as a 64-bit pair (exact: above 2^24 an f32 is an integer);
//                    then one key bit per level from axes[l]'s coordinate. No f64 variant
//                    (WGSL f64 arithmetic needs SHADER_F64; the host reports f64 binary
//                    keys on wgpu as unsupported).
//
// Launch shape: one invocation per particle, workgroups of THREADS over a 2D dispatch: every
//   key is independent and the positions are read once, coalesced.
//
// Buffers (binding: direction, length, layout)
//   tb_remove_outside_F: 0 x, 1 y, 2 z (r, n; f32, or f64 as vec2<u32>), 3 bounds (r, 6,
//     lo x y z, hi x y z), 4 keys (rw, n vec2<u32>), 5 params {n, key_bits, off_* of x y z}
//   tb_binary_keys_f32: 0 x, 1 y, 2 z (r, n f32), 3 axes (r, levels u32), 4 keys (rw, n
//     vec2<u32>), 5 params {n, levels, min x y z, scale x y z, bits x y z, off_* of x y z}
//
// Invariants: as keys.cu.
//
// Measured cost: not measured yet.

// The order-preserving code of an f32's bits with -0 as +0.
fn ord32(b: u32) -> u32 {
    var v = b;
    if v == 0x80000000u {
        v = 0u;
    }
    return select(v | 0x80000000u, ~v, (v >> 31u) == 1u);
}

fn nan32(b: u32) -> bool {
    return (b & 0x7fffffffu) > 0x7f800000u;
}

// The order-preserving code of an f64's words (low, high) with -0 as +0.
fn ord64(w: vec2<u32>) -> vec2<u32> {
    var v = w;
    if v.x == 0u && v.y == 0x80000000u {
        v = vec2<u32>(0u, 0u);
    }
    if (v.y >> 31u) == 1u {
        return ~v;
    }
    return vec2<u32>(v.x, v.y | 0x80000000u);
}

fn nan64(w: vec2<u32>) -> bool {
    let hi = w.y & 0x7fffffffu;
    return hi > 0x7ff00000u || (hi == 0x7ff00000u && w.x != 0u);
}

// ---- tb_remove_outside_f32 --------------------------------------------------------------

struct RemoveParams32 {
    n: u32,
    key_bits: u32,
    off_r32_x: u32,
    off_r32_y: u32,
    off_r32_z: u32,
}

@group(0) @binding(0) var<storage, read> r32_x: array<u32>;
@group(0) @binding(1) var<storage, read> r32_y: array<u32>;
@group(0) @binding(2) var<storage, read> r32_z: array<u32>;
@group(0) @binding(3) var<storage, read> r32_bounds: array<u32>;
@group(0) @binding(4) var<storage, read_write> r32_keys: array<vec2<u32>>;
@group(0) @binding(5) var<uniform> r32_p: RemoveParams32;

fn inside32(b: u32, axis: u32) -> bool {
    let v = ord32(b);
    return !nan32(b) && ord32(r32_bounds[axis]) <= v && v <= ord32(r32_bounds[axis + 3u]);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn tb_remove_outside_f32(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                         @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = item_index(wid, nwg, lid);
    if i >= r32_p.n {
        return;
    }
    let p = r32_p;
    if !(inside32(r32_x[p.off_r32_x + i], 0u) && inside32(r32_y[p.off_r32_y + i], 1u)
         && inside32(r32_z[p.off_r32_z + i], 2u)) {
        r32_keys[i] = pow2_64(p.key_bits);
    }
}

// ---- tb_remove_outside_f64 --------------------------------------------------------------

struct RemoveParams64 {
    n: u32,
    key_bits: u32,
    off_r64_x: u32,
    off_r64_y: u32,
    off_r64_z: u32,
}

@group(0) @binding(0) var<storage, read> r64_x: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> r64_y: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> r64_z: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> r64_bounds: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read_write> r64_keys: array<vec2<u32>>;
@group(0) @binding(5) var<uniform> r64_p: RemoveParams64;

fn inside64(w: vec2<u32>, axis: u32) -> bool {
    let v = ord64(w);
    return !nan64(w) && !u64_lt(v, ord64(r64_bounds[axis])) && !u64_lt(ord64(r64_bounds[axis + 3u]), v);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn tb_remove_outside_f64(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                         @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = item_index(wid, nwg, lid);
    if i >= r64_p.n {
        return;
    }
    let p = r64_p;
    if !(inside64(r64_x[p.off_r64_x + i], 0u) && inside64(r64_y[p.off_r64_y + i], 1u)
         && inside64(r64_z[p.off_r64_z + i], 2u)) {
        r64_keys[i] = pow2_64(p.key_bits);
    }
}

// ---- tb_binary_keys_f32 -----------------------------------------------------------------

struct BinaryParams {
    n: u32,
    levels: u32,
    min_x: f32,
    min_y: f32,
    min_z: f32,
    scale_x: f32,
    scale_y: f32,
    scale_z: f32,
    bits_x: u32,
    bits_y: u32,
    bits_z: u32,
    off_bk_x: u32,
    off_bk_y: u32,
    off_bk_z: u32,
}

@group(0) @binding(0) var<storage, read> bk_x: array<f32>;
@group(0) @binding(1) var<storage, read> bk_y: array<f32>;
@group(0) @binding(2) var<storage, read> bk_z: array<f32>;
@group(0) @binding(3) var<storage, read> bk_axes: array<u32>;
@group(0) @binding(4) var<storage, read_write> bk_keys: array<vec2<u32>>;
@group(0) @binding(5) var<uniform> bk_p: BinaryParams;

fn quantize64(p: f32, lo: f32, s: f32, bits: u32) -> vec2<u32> {
    let g = (p - lo) * s;
    if !(g > 0.0) {
        return vec2<u32>(0u, 0u);
    }
    // 2^bits as an f32 (exact: a power of two, bits <= 63).
    let cells = ldexp(1.0, i32(bits));
    if g >= cells {
        return u64_sub(pow2_64(bits), vec2<u32>(1u, 0u));
    }
    let f = floor(g);
    if f < 4294967296.0 {
        return vec2<u32>(u32(f), 0u);
    }
    // f < 2^63 is an integer: its high word is exact after a power-of-two scale, and the
    // remainder below 2^32 is exact too.
    let hi = floor(f * 2.3283064365386963e-10);
    let lo_part = f - hi * 4294967296.0;
    return vec2<u32>(u32(lo_part), u32(hi));
}

fn bit_of(c: vec2<u32>, r: u32) -> u32 {
    if r < 32u {
        return (c.x >> r) & 1u;
    }
    return (c.y >> (r - 32u)) & 1u;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn tb_binary_keys_f32(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                      @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = item_index(wid, nwg, lid);
    if i >= bk_p.n {
        return;
    }
    let p = bk_p;
    var c = array<vec2<u32>, 3>(
        quantize64(bk_x[p.off_bk_x + i], p.min_x, p.scale_x, p.bits_x),
        quantize64(bk_y[p.off_bk_y + i], p.min_y, p.scale_y, p.bits_y),
        quantize64(bk_z[p.off_bk_z + i], p.min_z, p.scale_z, p.bits_z),
    );
    var remaining = array<u32, 3>(p.bits_x, p.bits_y, p.bits_z);
    var key = vec2<u32>(0u, 0u);
    for (var l = 0u; l < p.levels; l++) {
        let a = bk_axes[l] % 3u;
        remaining[a] -= 1u;
        let bit = bit_of(c[a], remaining[a] & 63u);
        key = vec2<u32>((key.x << 1u) | bit, (key.y << 1u) | (key.x >> 31u));
    }
    bk_keys[i] = key;
}
