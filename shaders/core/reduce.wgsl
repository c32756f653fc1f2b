// core/reduce — reduction of an array to one value: Sum, Min or Max over u32, i32, f32,
// u64, i64 (vec2<u32>, low word first) and f64 (only with Features::SHADER_F64).
//
// Variants (defines set by the executor, one pipeline per combination):
//   element type  T_U32 | T_I32 | T_F32 | T_U64 | T_I64 | T_F64
//   operation     OP_SUM | OP_MIN | OP_MAX
//   SG_REDUCE     use subgroupAdd/Min/Max (only for the 32-bit integer types, whose
//                 result does not depend on the order; float sums must not change with
//                 the adapter's subgroup size)
//
// What it computes, in two launches:
//   1. reduce_tiles   partials[t] = reduction of tile t (TILE = 256 * ITEMS (8) elements)
//   2. reduce_final   output[0]   = reduction of partials[0..params.n] (params.n = tiles)
// An empty input runs launch 2 alone with n = 0 and writes the identity. Sum wraps for
// integers. Min/Max: combine(a, b) = select(a, b, b < a) (Min) / select(a, b, a < b)
// (Max), the rule of ReduceOp::apply, so the first of equal values wins.
//
// Order (floating-point determinism): invocation l of a tile folds elements
// l, l + 256, ..., l + 7 * 256 left to right, then a fixed binary tree (stride 128, 64,
// ..., 1) combines the 256 invocation values; launch 2 does the same over the partials.
// The order depends only on n, so results are reproducible run to run and across
// adapters; they differ from the CPU executor's order by rounding only.
//
// Launch shape: WORKGROUP_SIZE (256); launch 1 one workgroup per tile (linear_block over
// a 2D dispatch), launch 2 one workgroup.
//
// Buffers (binding: direction, length, layout)
//   reduce_tiles: 0 input (read, n, E), 1 partials (write, tiles, E), 2 params
//   reduce_final: 0 partials (read, params.n, E), 1 output (write, 1, E), 2 params
//   params: { n, tiles, off_red_in, off_red_out, identity: E }; input and output are
//   views (element i of red_in is red_in[off_red_in + i]; the executor fills off_*)
//
// Measured cost (examples/wgpu_primitives, median of 7, device timestamps):
//   lavapipe (llvmpipe, 2 cores), 1M f32 sum: 11 ms (before views). H200: not measured yet.

//#include core/common

const ITEMS: u32 = 8u;

//#if T_U32
alias E = u32;
//#elif T_I32
alias E = i32;
//#elif T_F32
alias E = f32;
//#elif T_F64
alias E = f64;
//#else
alias E = vec2<u32>;
//#endif

struct Params {
    n: u32,
    tiles: u32,
    off_red_in: u32,
    off_red_out: u32,
    identity: E,
}

fn less(a: E, b: E) -> bool {
//#if T_U64
    return u64_lt(a, b);
//#elif T_I64
    return i64_lt(a, b);
//#else
    return a < b;
//#endif
}

fn combine(a: E, b: E) -> E {
//#if OP_SUM
//#if T_U64
    return u64_add(a, b);
//#elif T_I64
    return u64_add(a, b);
//#else
    return a + b;
//#endif
//#elif OP_MIN
    return select(a, b, less(b, a));
//#else
    return select(a, b, less(a, b));
//#endif
}

var<workgroup> red_buf: array<E, WORKGROUP_SIZE>;

// Reduces one value per invocation over the workgroup; the result is valid in
// invocation 0. Every invocation calls it.
fn wg_reduce(inv: Invocation, v: E) -> E {
//#if SG_REDUCE
//#if OP_SUM
    let s = subgroupAdd(v);
//#elif OP_MIN
    let s = subgroupMin(v);
//#else
    let s = subgroupMax(v);
//#endif
    if inv.sg_lane == 0u {
        red_buf[inv.sg] = s;
    }
    workgroupBarrier();
    var acc = red_buf[0];
    if inv.lid == 0u {
        let groups = WORKGROUP_SIZE / inv.sg_size;
        for (var i = 1u; i < groups; i++) {
            acc = combine(acc, red_buf[i]);
        }
    }
    return acc;
//#else
    red_buf[inv.lid] = v;
    workgroupBarrier();
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride >>= 1u) {
        if inv.lid < stride {
            red_buf[inv.lid] = combine(red_buf[inv.lid], red_buf[inv.lid + stride]);
        }
        workgroupBarrier();
    }
    return red_buf[0];
//#endif
}

@group(0) @binding(0) var<storage, read> red_in: array<E>;
@group(0) @binding(1) var<storage, read_write> red_out: array<E>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP_SIZE)
fn reduce_tiles(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tile = linear_block(wid, nwg);
    if tile >= params.tiles {
        return;
    }
    let base = tile * WORKGROUP_SIZE * ITEMS;
    var acc = params.identity;
    for (var j = 0u; j < ITEMS; j++) {
        let i = base + j * WORKGROUP_SIZE + inv.lid;
        if i < params.n {
            acc = combine(acc, red_in[params.off_red_in + i]);
        }
    }
    let r = wg_reduce(inv, acc);
    if inv.lid == 0u {
        red_out[params.off_red_out + tile] = r;
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn reduce_final(inv: Invocation) {
    var acc = params.identity;
    for (var i = inv.lid; i < params.n; i += WORKGROUP_SIZE) {
        acc = combine(acc, red_in[params.off_red_in + i]);
    }
    let r = wg_reduce(inv, acc);
    if inv.lid == 0u {
        red_out[params.off_red_out] = r;
    }
}
