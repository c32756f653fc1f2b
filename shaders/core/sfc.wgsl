// core/sfc — 64-bit 3D space-filling-curve keys of positions (Morton and Hilbert),
// bit-identical to orrery_core::sfc::KeyMapper::<T, u64>::key_clamped.
//
// What it computes: keys[i] = key_clamped(x[i], y[i], z[i]) for i < n, with
//   - quantisation per axis a, in the position type: f = floor((p - min[a]) * scale[a])
//     (one rounded subtraction, one rounded multiplication; no FMA can form from a
//     subtraction followed by a multiplication), clamped in floating point: 0 when
//     !(f > 0) (NaN included), 2^21 - 1 when f >= 2^21, else u32(f);
//   - Morton: key bit 3l + 2 is bit l of x, 3l + 1 of y, 3l of z (levels l = 20..0);
//   - Hilbert: the state machine of orrery_core::sfc::hilbert, e = ENCODE_3D[(e & ~7) | m]
//     per level from the top with e = 0, the digit e & 7 appended per level. The table
//     is a storage buffer the executor fills from orrery_core's ENCODE_3D, so it cannot
//     drift from the CPU's.
// The 63-bit key is assembled in two u32 words (vec2<u32>, low word first).
//
// Variants: F64 adds sfc_keys_f64 (f64 positions; needs Features::SHADER_F64).
//
// Launch shape: WORKGROUP_SIZE (256) invocations, one per position, linear_block over a
// 2D dispatch.
//
// Buffers (binding: direction, length, layout)
//   0 x, 1 y, 2 z (read, n, f32 or f64), 3 keys (write, n, vec2<u32>),
//   4 table (read, 192, u32: ENCODE_3D widened), 5 params
//   params: { n, curve (0 Morton, 1 Hilbert), min x y z, scale x y z } in the position
//   type, then the executor-filled element offsets of the views (off_x32 .. off_keys)
//
// Invariants: scale = KeyMapper::scale(), min = KeyMapper::bbox().min(), both as the host
// computed them. Denormal differences (p - min below 2^-126) may flush to zero on some
// GPUs; they quantise to cell 0 either way unless the box extent is below ~2^-105.
//
// Measured cost (examples/wgpu_primitives, median of 7, device timestamps):
//   lavapipe (llvmpipe, 2 cores), 1M f32 Hilbert keys: 74 ms (before views). H200: not
//   measured yet.

//#include core/common

const LEVELS: u32 = 21u;
const CURVE_HILBERT: u32 = 1u;

struct ParamsF32 {
    n: u32,
    curve: u32,
    min_x: f32,
    min_y: f32,
    min_z: f32,
    scale_x: f32,
    scale_y: f32,
    scale_z: f32,
    off_x32: u32,
    off_y32: u32,
    off_z32: u32,
    off_keys: u32,
}

@group(0) @binding(4) var<storage, read> hilbert_table: array<u32>;

fn quantize_f32(p: f32, lo: f32, s: f32) -> u32 {
    let f = floor((p - lo) * s);
    if !(f > 0.0) {
        return 0u;
    }
    if f >= 2097152.0 {
        return 2097151u;
    }
    return u32(f);
}

fn key_of(x: u32, y: u32, z: u32, curve: u32) -> vec2<u32> {
    var lo = 0u;
    var hi = 0u;
    var e = 0u;
    for (var l = LEVELS; l > 0u; l--) {
        let b = l - 1u;
        let m = (((x >> b) & 1u) << 2u) | (((y >> b) & 1u) << 1u) | ((z >> b) & 1u);
        var digit = m;
        if curve == CURVE_HILBERT {
            e = hilbert_table[(e & ~7u) | m];
            digit = e & 7u;
        }
        hi = (hi << 3u) | (lo >> 29u);
        lo = (lo << 3u) | digit;
    }
    return vec2<u32>(lo, hi);
}

@group(0) @binding(0) var<storage, read> x32: array<f32>;
@group(0) @binding(1) var<storage, read> y32: array<f32>;
@group(0) @binding(2) var<storage, read> z32: array<f32>;
@group(0) @binding(3) var<storage, read_write> keys: array<vec2<u32>>;
@group(0) @binding(5) var<uniform> params32: ParamsF32;

@compute @workgroup_size(WORKGROUP_SIZE)
fn sfc_keys_f32(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + inv.lid;
    if i >= params32.n {
        return;
    }
    let p = params32;
    let ix = quantize_f32(x32[p.off_x32 + i], p.min_x, p.scale_x);
    let iy = quantize_f32(y32[p.off_y32 + i], p.min_y, p.scale_y);
    let iz = quantize_f32(z32[p.off_z32 + i], p.min_z, p.scale_z);
    keys[p.off_keys + i] = key_of(ix, iy, iz, p.curve);
}

//#if F64
struct ParamsF64 {
    n: u32,
    curve: u32,
    min_x: f64,
    min_y: f64,
    min_z: f64,
    scale_x: f64,
    scale_y: f64,
    scale_z: f64,
    off_x64: u32,
    off_y64: u32,
    off_z64: u32,
    off_keys: u32,
}

fn quantize_f64(p: f64, lo: f64, s: f64) -> u32 {
    let f = floor((p - lo) * s);
    if !(f > 0.0lf) {
        return 0u;
    }
    if f >= 2097152.0lf {
        return 2097151u;
    }
    return u32(f);
}

@group(0) @binding(0) var<storage, read> x64: array<f64>;
@group(0) @binding(1) var<storage, read> y64: array<f64>;
@group(0) @binding(2) var<storage, read> z64: array<f64>;
@group(0) @binding(5) var<uniform> params64: ParamsF64;

@compute @workgroup_size(WORKGROUP_SIZE)
fn sfc_keys_f64(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + inv.lid;
    if i >= params64.n {
        return;
    }
    let p = params64;
    let ix = quantize_f64(x64[p.off_x64 + i], p.min_x, p.scale_x);
    let iy = quantize_f64(y64[p.off_y64 + i], p.min_y, p.scale_y);
    let iz = quantize_f64(z64[p.off_z64 + i], p.min_z, p.scale_z);
    keys[p.off_keys + i] = key_of(ix, iy, iz, p.curve);
}
//#endif
