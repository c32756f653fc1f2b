// shaders/balltree/common.wgsl — the prelude of the ball tree build's WGSL modules
// (crates/orrery-balltree/src/gpu): the host concatenates it with one pass file
// (levels.wgsl, select.wgsl, local.wgsl) into each module; the WGSL twin of
// kernels/balltree/common.cuh (f32 only: WGSL has no f64, the host reports f64 input as
// unsupported).
//
// What it computes: the per-element rules (host reference: gpu/spread.rs): order-preserving
//   codes of f32 coordinates (-0.0 as 0.0), their decoding, the exact spread as an
//   error-free pair, and the linear item index of a (possibly 2D) dispatch.
// Launch shape: functions only; ITEM_THREADS (256) and BOUNDS_ITEMS (4) are the shapes of
//   the per-item and tiled kernels (gpu/kernels.rs holds the host's copies).
// Buffers: none.
// Invariants: finite coordinates. Subnormal coordinates: a Vulkan adapter may flush them in
//   the spread arithmetic (see gpu/spread.rs).
// Measured cost: see each pass file.

//#include core/common

const FROZEN: u32 = 0xffffffffu;
const PAD: u32 = 0xffffffffu;
const ITEM_THREADS: u32 = 256u;
const BOUNDS_ITEMS: u32 = 4u;

// ---- per-element rules (host reference: gpu/spread.rs) ----------------------------------

fn ord_f32(x: f32) -> u32 {
    var b = bitcast<u32>(x);
    if b == 0x80000000u {
        b = 0u;
    }
    return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

fn dec_f32(o: u32) -> f32 {
    return bitcast<f32>(select(~o, o & 0x7fffffffu, (o & 0x80000000u) != 0u));
}

fn is_finite_f32(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

struct Spread {
    overflow: u32,
    s: f32,
    e: f32,
}

fn spread_of(lo: f32, hi: f32) -> Spread {
    var a = hi;
    var b = -lo;
    var s = a + b;
    var overflow = 0u;
    if !is_finite_f32(s) {
        a = hi * 0.5;
        b = -(lo * 0.5);
        s = a + b;
        overflow = 1u;
    }
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    return Spread(overflow, s, e);
}

fn spread_greater(x: Spread, y: Spread) -> bool {
    if x.overflow != y.overflow {
        return x.overflow > y.overflow;
    }
    if x.s != y.s {
        return x.s > y.s;
    }
    return x.e > y.e;
}

fn item_index(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return linear_block(wid, nwg) * WORKGROUP_SIZE + lid;
}
