// shaders/tree/common.wgsl — the prelude of the Cornerstone tree build's WGSL modules
// (crates/orrery-tree-build/src/gpu): the host concatenates it with one pass file
// (keys.wgsl, passes.wgsl, leaf_count.wgsl) into each module; the WGSL twin of
// kernels/tree/common.cuh.
//
// What it computes: functions only. WGSL has no u64, so keys are vec2<u32> (low word
//   first, the little-endian words of the u64 buffers): shifts, the power of two, the
//   difference and the trailing zeros of 64-bit values; the leaf level
//   (crate::leaves::leaf_level), key_end, the linear item index of a (possibly 2D)
//   dispatch, and the status block's layout (gpu/status.rs holds the host's copy).
//
// Launch shape: functions only. THREADS (256) is the workgroup size of the per-item
//   kernels; the status kernels run one invocation.
//
// Buffers: none.
//
// Invariants: shift amounts below 64; a zero-length interval gets level 0.
//
// Measured cost: see each pass file.

//#include core/common

const THREADS: u32 = 256u;

const ST_LEAF_COUNT: u32 = 0u;
const ST_SCAN_COUNT: u32 = 1u;
const ST_CHANGED: u32 = 2u;
const ST_STATE: u32 = 3u;
const ST_PASSES: u32 = 4u;
const ST_CONVERGED: u32 = 5u;
const ST_OVERFLOW: u32 = 6u;
const ST_NEEDED: u32 = 7u;
const ST_CURRENT: u32 = 8u;
const ST_ACTIVE: u32 = 9u;
const ST_RUN_BASE: u32 = 10u;
const STATUS_WORDS: u32 = 16u;

const RUN: u32 = 0u;
const COUNT_ONLY: u32 = 1u;
const DONE: u32 = 2u;

const BEGIN_UPDATE: u32 = 0u;
const BEGIN_RESUME: u32 = 1u;
const BEGIN_BUILD: u32 = 2u;

fn item_index(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return linear_block(wid, nwg) * WORKGROUP_SIZE + lid;
}

// v >> s for s < 64.
fn shr64(v: vec2<u32>, s: u32) -> vec2<u32> {
    if s == 0u {
        return v;
    }
    if s < 32u {
        return vec2<u32>((v.x >> s) | (v.y << (32u - s)), v.y >> s);
    }
    return vec2<u32>(v.y >> (s - 32u), 0u);
}

// v << s for s < 64.
fn shl64(v: vec2<u32>, s: u32) -> vec2<u32> {
    if s == 0u {
        return v;
    }
    if s < 32u {
        return vec2<u32>(v.x << s, (v.y << s) | (v.x >> (32u - s)));
    }
    return vec2<u32>(0u, v.x << (s - 32u));
}

// 1 << s for s < 64.
fn pow2_64(s: u32) -> vec2<u32> {
    return shl64(vec2<u32>(1u, 0u), s);
}

// a - b (wrapping).
fn u64_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}

fn u64_eq(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.x == b.x && a.y == b.y;
}

// Trailing zeros, 64 for zero.
fn ctz64(v: vec2<u32>) -> u32 {
    if v.x != 0u {
        return countTrailingZeros(v.x);
    }
    return 32u + countTrailingZeros(v.y);
}

fn leaf_level(start: vec2<u32>, end: vec2<u32>, bits: u32, levels: u32) -> u32 {
    let up = ctz64(u64_sub(end, start)) / bits;
    return levels - min(up, levels);
}

fn key_end(bits: u32, levels: u32) -> vec2<u32> {
    return pow2_64(bits * levels);
}
