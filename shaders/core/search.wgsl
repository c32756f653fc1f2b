// core/search — vectorised lower and upper bounds: for every query, the index of the
// first element of `sorted` whose order key is not less than (lower_bound) / greater
// than (upper_bound) the query's, running exactly orrery_core::executor::lower_bound_one
// / upper_bound_one's halving loop (first, count), so unsorted input gives the CPU's
// index too.
//
// Variants (defines set by the executor, one module per element type):
//   T_U32 | T_I32 | T_F32     32-bit words (array<u32>)
//   T_U64 | T_I64 | T_F64     64-bit words (array<vec2<u32>>, low word first), W64 set
// Keys are Element::order_key computed from the raw words (integers: sign bit flipped
// for signed types; floats: IEEE totalOrder, -NaN < -inf < ... < -0 < +0 < ... < +NaN),
// so f64 needs no SHADER_F64 and every executor orders ties, signed zeros and NaNs alike.
//
// Launch shape: WORKGROUP_SIZE (256) invocations, one per query; ceil(queries / 256)
// workgroups over a 2D dispatch (linear_block); workgroups past that count return.
//
// Buffers (binding: direction, length, layout)
//   0 sorted  (read,  params.n elements from off_sorted, W)
//   1 queries (read,  params.queries elements from off_queries, W)
//   2 output  (write, params.queries u32 from off_output)
//   3 params  { n, queries, off_sorted, off_queries, off_output }
//
// Invariants: n and queries < 2^32 (host-checked); every index read is < n, so no read
// leaves the view; off_* are element offsets of the views within their bindings.
//
// Measured cost: not measured yet.

//#include core/common

//#if W64
alias W = vec2<u32>;
//#else
alias W = u32;
//#endif

struct Params {
    n: u32,
    queries: u32,
    off_sorted: u32,
    off_queries: u32,
    off_output: u32,
}

@group(0) @binding(0) var<storage, read> sorted: array<W>;
@group(0) @binding(1) var<storage, read> queries: array<W>;
@group(0) @binding(2) var<storage, read_write> output: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

// Element::order_key of raw words (the low 32 bits for 32-bit types).
fn order_key(w: W) -> W {
//#if T_I32
    return w ^ 0x80000000u;
//#elif T_F32
    return select(w | 0x80000000u, ~w, (w >> 31u) == 1u);
//#elif T_I64
    return vec2<u32>(w.x, w.y ^ 0x80000000u);
//#elif T_F64
    if (w.y >> 31u) == 1u {
        return ~w;
    }
    return vec2<u32>(w.x, w.y | 0x80000000u);
//#else
    return w;
//#endif
}

fn key_lt(a: W, b: W) -> bool {
//#if W64
    return u64_lt(a, b);
//#else
    return a < b;
//#endif
}

// The first index where `before` is false: `before(v) = key(v) < q` (lower) or
// `key(v) <= q`, i.e. `!(q < key(v))` (upper).
fn search(q: W, upper: bool) -> u32 {
    var first = 0u;
    var count = params.n;
    while count > 0u {
        let step = count / 2u;
        let probe = first + step;
        let v = order_key(sorted[params.off_sorted + probe]);
        var before: bool;
        if upper {
            before = !key_lt(q, v);
        } else {
            before = key_lt(v, q);
        }
        if before {
            first = probe + 1u;
            count -= step + 1u;
        } else {
            count = step;
        }
    }
    return first;
}

// The query this invocation answers, or queries (none) past the last.
fn query_index(lid: u32, wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    let block = linear_block(wid, nwg);
    let blocks = params.queries / WORKGROUP_SIZE + select(0u, 1u, params.queries % WORKGROUP_SIZE != 0u);
    if block >= blocks {
        return params.queries;
    }
    return block * WORKGROUP_SIZE + lid;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn lower_bound(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let i = query_index(lid, wid, nwg);
    if i >= params.queries {
        return;
    }
    output[params.off_output + i] = search(order_key(queries[params.off_queries + i]), false);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn upper_bound(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let i = query_index(lid, wid, nwg);
    if i >= params.queries {
        return;
    }
    output[params.off_output + i] = search(order_key(queries[params.off_queries + i]), true);
}
