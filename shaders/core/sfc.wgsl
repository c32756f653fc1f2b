// core/sfc — 64-bit 3D space-filling-curve keys of positions (Morton and Hilbert),
// bit-identical to orrery_core::sfc::KeyMapper::<T, u64>::key_clamped; the WGSL twin of
// kernels/core/sfc.cu.
//
// What it computes: keys[i] = key_clamped(x[i], y[i], z[i]) for i < n, with
//   - quantisation per axis a, in the position type: f = floor((p - min[a]) * scale[a])
//     (one rounded subtraction, one rounded multiplication; no FMA can form from a
//     subtraction followed by a multiplication), clamped in floating point: 0 when
//     !(f > 0) (NaN included), 2^21 - 1 when f >= 2^21, else u32(f);
//   - Morton: key bit 3l + 2 is bit l of x, 3l + 1 of y, 3l of z (levels l = 20..0);
//   - Hilbert: the state machine of orrery_core::sfc::hilbert (ENCODE_3D: per level from
//     the top, e = ENCODE_3D[(e & ~7) | morton_digit], the digit e & 7), walked three
//     levels per lookup as sfc.cu's sfc_hilbert3 does: group g = 6..0 holds levels
//     3g + 2..3g; its 9 raw coordinate bits r = x[3g+2..3g] << 6 | y[..] << 3 | z[..]
//     index a 24 x 512 table, e = T3[(e & ~511) | r] with e = 0 at the start, whose
//     entry is next_state << 9 | the group's three Hilbert digits (sfc.cu's
//     sfc_hilbert3_entry), and the digits e & 511 fill key bits 9g + 8..9g.
// The 63-bit key is assembled in two u32 words (vec2<u32>, low word first): WGSL has
// no u64.
//
// Variants (preprocessor defines, chosen by the executor, primitives/keys.rs)
//   (none)            Morton: each coordinate split into 3 chunks of 7 levels, each chunk
//                     spread to 21 bits with 32-bit masks (spread7), no per-level loop.
//   HILBERT           Hilbert, T3 in workgroup memory: 12288 u16 entries packed two per
//                     u32 (entry i in the low half of word i >> 1 when i is even, in the
//                     high half when odd), 24 KB, copied per workgroup from the host's
//                     table (binding 4).
//   HILBERT HILBERT1  Hilbert where the device's max_compute_workgroup_storage_size is
//                     below 24 KB (WebGPU guarantees 16 KB): the 192-entry ENCODE_3D in
//                     workgroup memory, each T3 entry recomputed from it with three
//                     lookups (the same 7 groups, 21 dependent lookups).
//   F64               adds sfc_keys_f64 (f64 positions; needs Features::SHADER_F64).
//
// Launch shape: grid-stride. WORKGROUP_SIZE (256) invocations; grid = min(ceil(n / ROUND),
// 1024) workgroups (keys.rs's MAX_WORKGROUPS), linear_block over the dispatch, ROUND =
// ITEMS * WORKGROUP_SIZE = 1024 positions per workgroup and round. In a round starting
// at base (linear_block * ROUND, then + workgroups * ROUND), invocation lid handles
// i = base + k * WORKGROUP_SIZE + lid for k < ITEMS: coalesced loads of x, y, z and
// 8-byte stores of keys, the ITEMS loads of each array issued before any is used.
//
// Buffers (binding: direction, length, layout)
//   0 x, 1 y, 2 z (read, n, f32 or f64), 3 keys (write, n, vec2<u32>),
//   4 table (read): HILBERT: 1536 vec4<u32> (T3 packed as above); HILBERT1: 192 u32
//     (ENCODE_3D widened); Morton: unused. The executor fills both from orrery_core's
//     ENCODE_3D, so neither can drift from the CPU's.
//   5 params: { n, min x y z, scale x y z } in the position type, then the
//     executor-filled element offsets of the views (off_x32 .. off_keys)
//
// Invariants: scale = KeyMapper::scale(), min = KeyMapper::bbox().min(), both as the host
// computed them. Denormal differences (p - min below 2^-126) may flush to zero on some
// GPUs; they quantise to cell 0 either way unless the box extent is below ~2^-105.
// n + 1024 * ROUND < 2^32, so the last stride cannot wrap (n is below 2^29: keys are 8
// bytes in a binding below 4 GiB).
//
// Why it is shaped so: the previous kernel built each key with a 21-iteration loop (for
// Hilbert, 21 dependent storage-buffer lookups) and ran 14-15x slower than the CUDA
// kernel on an H200, ALU-bound; naga also bounds every loop with an injected counter
// (~1.5x in loops). So the per-point code is straight-line: masks for Morton, 7 lookups
// in workgroup memory for Hilbert. The grid is capped and strided so that each
// workgroup copies the 24 KB table once for many rounds (1024 workgroups copy 24 MB
// from L2, against 1.28 GB of positions and keys at n = 64M); 1024 is about the CUDA
// executor's H200 grid for the same loop (8 blocks per SM x 132 SMs = 1056). Copying
// the host's T3 costs one load per 8 entries, building it from ENCODE_3D three dependent
// lookups per entry: with 12288 entries per workgroup against 1024 positions per round,
// building would dominate whenever n is small.
//
// Measured cost (examples/wgpu_primitives: uniform f32 positions in three arrays, median
// of 7 with device timestamps, the middle of 3 runs):
//   lavapipe (llvmpipe, 2 cores shared with builds, load ~5.5), before -> this layout:
//     Hilbert 1M 81 -> 60 ms, 4M 353 -> 182 ms; Morton 1M 47 -> 18 ms, 4M 233 -> 88 ms.
//     At 1M each of the 1024 workgroups copies the table for a single round.
//   H200: pending.

//#include core/common

// Positions per invocation and round; keys.rs's ITEMS must match (the per-round code
// below is written out for exactly four).
const ITEMS: u32 = 4u;
const LAST_CELL: u32 = 2097151u;

@group(0) @binding(3) var<storage, read_write> keys: array<vec2<u32>>;

fn quantize_f32(p: f32, lo: f32, s: f32) -> u32 {
    let f = floor((p - lo) * s);
    if !(f > 0.0) {
        return 0u;
    }
    if f >= 2097152.0 {
        return LAST_CELL;
    }
    return u32(f);
}

//#if HILBERT
// ---- Hilbert -------------------------------------------------------------------------

//#if HILBERT1
@group(0) @binding(4) var<storage, read> table: array<u32>;

// ENCODE_3D, one entry per word.
var<workgroup> encode: array<u32, 192>;

fn load_table(lid: u32) {
    for (var k = 0u; k < 192u; k += WORKGROUP_SIZE) {
        let j = k + lid;
        if j < 192u {
            encode[j] = table[j];
        }
    }
    workgroupBarrier();
}

// T3[i] from ENCODE_3D (sfc.cu's sfc_hilbert3_entry): state i >> 9, then the Morton
// digits of levels j = 2, 1, 0 of the raw bits (bits 6 + j, 3 + j, j of i).
fn entry3(i: u32) -> u32 {
    var e = (i >> 9u) << 3u;
    e = encode[(e & ~7u) | ((i >> 6u) & 4u) | ((i >> 4u) & 2u) | ((i >> 2u) & 1u)];
    var digits = e & 7u;
    e = encode[(e & ~7u) | ((i >> 5u) & 4u) | ((i >> 3u) & 2u) | ((i >> 1u) & 1u)];
    digits = (digits << 3u) | (e & 7u);
    e = encode[(e & ~7u) | ((i >> 4u) & 4u) | ((i >> 2u) & 2u) | (i & 1u)];
    digits = (digits << 3u) | (e & 7u);
    return ((e >> 3u) << 9u) | digits;
}
//#else
@group(0) @binding(4) var<storage, read> table: array<vec4<u32>>;

// T3, two u16 entries per word, entry i in the half (i & 1) of word i >> 1.
var<workgroup> t3: array<u32, 6144>;

// 1536 vec4 loads per workgroup, then a barrier; the trip count is uniform.
fn load_table(lid: u32) {
    for (var k = 0u; k < 1536u; k += WORKGROUP_SIZE) {
        let j = k + lid;
        if j < 1536u {
            let v = table[j];
            t3[4u * j] = v.x;
            t3[4u * j + 1u] = v.y;
            t3[4u * j + 2u] = v.z;
            t3[4u * j + 3u] = v.w;
        }
    }
    workgroupBarrier();
}

fn entry3(i: u32) -> u32 {
    return (t3[i >> 1u] >> ((i & 1u) << 4u)) & 0xffffu;
}
//#endif

// The raw bits of group g = shift / 3: x[3g+2..3g] << 6 | y[..] << 3 | z[..].
fn raw3(q: vec3<u32>, shift: u32) -> u32 {
    let r = (q >> vec3<u32>(shift)) & vec3<u32>(7u);
    return (r.x << 6u) | (r.y << 3u) | r.z;
}

// Seven dependent lookups, coarsest group first; e & ~511 = next_state * 512.
fn key_of(q: vec3<u32>) -> vec2<u32> {
    var e = entry3(raw3(q, 18u));
    let d6 = e & 511u;
    e = entry3((e & ~511u) | raw3(q, 15u));
    let d5 = e & 511u;
    e = entry3((e & ~511u) | raw3(q, 12u));
    let d4 = e & 511u;
    e = entry3((e & ~511u) | raw3(q, 9u));
    let d3 = e & 511u;
    e = entry3((e & ~511u) | raw3(q, 6u));
    let d2 = e & 511u;
    e = entry3((e & ~511u) | raw3(q, 3u));
    let d1 = e & 511u;
    e = entry3((e & ~511u) | raw3(q, 0u));
    let d0 = e & 511u;
    // Group g fills key bits 9g + 8..9g; group 3 (bits 35..27) straddles the words.
    let lo = (d3 << 27u) | (d2 << 18u) | (d1 << 9u) | d0;
    let hi = (d6 << 22u) | (d5 << 13u) | (d4 << 4u) | (d3 >> 5u);
    return vec2<u32>(lo, hi);
}
//#else
// ---- Morton --------------------------------------------------------------------------

fn load_table(lid: u32) {}

// Moves bit l of each component's low 7 bits to bit 3l (l < 7; 21 bits out), in three
// shift-or-mask steps, each moving a group of bits up by the distance still missing:
//   shift 8: bits 6..4 to 14..12, bits 3..0 stay             keep 0x0000700f (14-12, 3-0)
//   shift 4: bits 3, 2 to 7, 6 and bit 14 (from 6) to 18    keep 0x000430c3 (18, 13-12, 7-6, 1-0)
//   shift 2: bits 1, 7, 13 (from 1, 3, 5) to 3, 9, 15       keep 0x00049249 (18, 15, ..., 3, 0)
// In every step the kept bits of v and of v << shift are disjoint, so the or mixes none.
fn spread7(v: vec3<u32>) -> vec3<u32> {
    var x = v & vec3<u32>(0x7fu);
    x = (x | (x << vec3<u32>(8u))) & vec3<u32>(0x0000700fu);
    x = (x | (x << vec3<u32>(4u))) & vec3<u32>(0x000430c3u);
    x = (x | (x << vec3<u32>(2u))) & vec3<u32>(0x00049249u);
    return x;
}

// The three 7-level chunks of a coordinate, finest first (spread7 masks them).
fn chunks(c: u32) -> vec3<u32> {
    return vec3<u32>(c, c >> 7u, c >> 14u);
}

// m.c is the 21-bit Morton key of chunk c (levels 7c + 6..7c), key bits 21c + 20..21c:
// lo = m0 | m1 << 21 (its low 11 bits), hi = m1 >> 11 | m2 << 10 (key bits 62..32).
fn key_of(q: vec3<u32>) -> vec2<u32> {
    let m = (spread7(chunks(q.x)) << vec3<u32>(2u)) | (spread7(chunks(q.y)) << vec3<u32>(1u)) | spread7(chunks(q.z));
    return vec2<u32>(m.x | (m.y << 21u), (m.y >> 11u) | (m.z << 10u));
}
//#endif

// The key of position i < n (the quantised coordinates q) at keys[off + i].
fn store(i: u32, n: u32, off: u32, q: vec3<u32>) {
    if i < n {
        keys[off + i] = key_of(q);
    }
}

// ---- f32 -------------------------------------------------------------------------------

struct ParamsF32 {
    n: u32,
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

@group(0) @binding(0) var<storage, read> x32: array<f32>;
@group(0) @binding(1) var<storage, read> y32: array<f32>;
@group(0) @binding(2) var<storage, read> z32: array<f32>;
@group(0) @binding(5) var<uniform> params32: ParamsF32;

fn quantize3_f32(x: f32, y: f32, z: f32) -> vec3<u32> {
    let p = params32;
    return vec3<u32>(quantize_f32(x, p.min_x, p.scale_x), quantize_f32(y, p.min_y, p.scale_y),
        quantize_f32(z, p.min_z, p.scale_z));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn sfc_keys_f32(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    load_table(inv.lid);
    let p = params32;
    let round = ITEMS * WORKGROUP_SIZE;
    let stride = nwg.x * nwg.y * round;
    for (var base = linear_block(wid, nwg) * round; base < p.n; base += stride) {
        // Indices past n load position n - 1 (in the view) and store nothing.
        let i0 = base + inv.lid;
        let i1 = i0 + WORKGROUP_SIZE;
        let i2 = i1 + WORKGROUP_SIZE;
        let i3 = i2 + WORKGROUP_SIZE;
        let last = p.n - 1u;
        let j0 = min(i0, last);
        let j1 = min(i1, last);
        let j2 = min(i2, last);
        let j3 = min(i3, last);
        let x0 = x32[p.off_x32 + j0];
        let x1 = x32[p.off_x32 + j1];
        let x2 = x32[p.off_x32 + j2];
        let x3 = x32[p.off_x32 + j3];
        let y0 = y32[p.off_y32 + j0];
        let y1 = y32[p.off_y32 + j1];
        let y2 = y32[p.off_y32 + j2];
        let y3 = y32[p.off_y32 + j3];
        let z0 = z32[p.off_z32 + j0];
        let z1 = z32[p.off_z32 + j1];
        let z2 = z32[p.off_z32 + j2];
        let z3 = z32[p.off_z32 + j3];
        store(i0, p.n, p.off_keys, quantize3_f32(x0, y0, z0));
        store(i1, p.n, p.off_keys, quantize3_f32(x1, y1, z1));
        store(i2, p.n, p.off_keys, quantize3_f32(x2, y2, z2));
        store(i3, p.n, p.off_keys, quantize3_f32(x3, y3, z3));
    }
}

//#if F64
// ---- f64 -------------------------------------------------------------------------------

struct ParamsF64 {
    n: u32,
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
        return LAST_CELL;
    }
    return u32(f);
}

@group(0) @binding(0) var<storage, read> x64: array<f64>;
@group(0) @binding(1) var<storage, read> y64: array<f64>;
@group(0) @binding(2) var<storage, read> z64: array<f64>;
@group(0) @binding(5) var<uniform> params64: ParamsF64;

fn quantize3_f64(x: f64, y: f64, z: f64) -> vec3<u32> {
    let p = params64;
    return vec3<u32>(quantize_f64(x, p.min_x, p.scale_x), quantize_f64(y, p.min_y, p.scale_y),
        quantize_f64(z, p.min_z, p.scale_z));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn sfc_keys_f64(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    load_table(inv.lid);
    let p = params64;
    let round = ITEMS * WORKGROUP_SIZE;
    let stride = nwg.x * nwg.y * round;
    for (var base = linear_block(wid, nwg) * round; base < p.n; base += stride) {
        let i0 = base + inv.lid;
        let i1 = i0 + WORKGROUP_SIZE;
        let i2 = i1 + WORKGROUP_SIZE;
        let i3 = i2 + WORKGROUP_SIZE;
        let last = p.n - 1u;
        let j0 = min(i0, last);
        let j1 = min(i1, last);
        let j2 = min(i2, last);
        let j3 = min(i3, last);
        let x0 = x64[p.off_x64 + j0];
        let x1 = x64[p.off_x64 + j1];
        let x2 = x64[p.off_x64 + j2];
        let x3 = x64[p.off_x64 + j3];
        let y0 = y64[p.off_y64 + j0];
        let y1 = y64[p.off_y64 + j1];
        let y2 = y64[p.off_y64 + j2];
        let y3 = y64[p.off_y64 + j3];
        let z0 = z64[p.off_z64 + j0];
        let z1 = z64[p.off_z64 + j1];
        let z2 = z64[p.off_z64 + j2];
        let z3 = z64[p.off_z64 + j3];
        store(i0, p.n, p.off_keys, quantize3_f64(x0, y0, z0));
        store(i1, p.n, p.off_keys, quantize3_f64(x1, y1, z1));
        store(i2, p.n, p.off_keys, quantize3_f64(x2, y2, z2));
        store(i3, p.n, p.off_keys, quantize3_f64(x3, y3, z3));
    }
}
//#endif
