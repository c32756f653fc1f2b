// shaders/clusters/pairs.wgsl — the prelude of the sub-structure and pairwise modules, the
// WGSL twin of kernels/clusters/pairs.cuh: orrery_shaders::clusters::unit::{SUBSTRUCTURE,
// PAIRWISE} put it before substructure.wgsl / pairwise.wgsl (WGSL resolves module-scope names
// in any order). It holds the launch constants the host shares (gpu/sources.rs checks them),
// NaN by its bits, the compensated (Neumaier) f32 sum of common.cuh's ClSum, and the 64 x 64
// distance tile. The tile reads `pt_vectors`, the member vectors, which each including module
// declares at its binding slot 0 (WGSL cannot pass a storage array to a function).
//
// Launch shape, buffers, invariants, cost model: device functions only; see pairwise.cu.

const PT_TILE: u32 = 64u;
const PT_THREADS: u32 = 256u;
const PT_MAX_ITEMS: u32 = 4096u;
const PT_MERGE_THREADS: u32 = 128u;
const TM_CHUNK_ROWS: u32 = 128u;
const TM_THREADS: u32 = 256u;
const SIGMA_BINS: u32 = 256u;
const DIV_BINS: u32 = 20u;
const PT_KC_W: u32 = 16u;
const PT_STRIDE: u32 = 65u;

fn nan_f32() -> f32 {
    return bitcast<f32>(0x7fc00000u);
}

// Compensated sums (Neumaier), as common.cuh's ClSum: the sum is s + c.
struct Sum {
    s: f32,
    c: f32,
}

fn sum_add(a: Sum, x: f32) -> Sum {
    let t = a.s + x;
    let e = select((x - t) + a.s, (a.s - t) + x, abs(a.s) >= abs(x));
    return Sum(t, a.c + e);
}

fn sum_value(a: Sum) -> f32 {
    return a.s + a.c;
}

// ---- the distance tile (pairs.cuh's pt_tile, PT_KC_W dimensions per stage) ---------------

var<workgroup> pt_a: array<f32, 1040>;
var<workgroup> pt_b: array<f32, 1040>;
var<private> pt_acc: array<f32, 16>;

// pt_acc[4 a + b] = |x_(r0 + ty + 16 a) - x_(c0 + tx + 16 b)|^2 (zeros' distances outside the
// tiles). Every invocation of the workgroup must call it.
fn pt_tile(lid: u32, dim: u32, r0: u32, nr: u32, c0: u32, nc: u32) {
    let ty = lid >> 4u;
    let tx = lid & 15u;
    for (var e = 0u; e < 16u; e++) {
        pt_acc[e] = 0.0;
    }
    for (var k0 = 0u; k0 < dim; k0 += PT_KC_W) {
        workgroupBarrier();
        for (var e = lid; e < PT_TILE * PT_KC_W; e += PT_THREADS) {
            let r = e / PT_KC_W;
            let k = e % PT_KC_W;
            let d = k0 + k;
            var va = 0.0;
            var vb = 0.0;
            if r < nr && d < dim {
                va = pt_vectors[(r0 + r) * dim + d];
            }
            if r < nc && d < dim {
                vb = pt_vectors[(c0 + r) * dim + d];
            }
            pt_a[k * PT_STRIDE + r] = va;
            pt_b[k * PT_STRIDE + r] = vb;
        }
        workgroupBarrier();
        for (var k = 0u; k < PT_KC_W; k++) {
            let x = vec4<f32>(pt_a[k * PT_STRIDE + ty], pt_a[k * PT_STRIDE + ty + 16u], pt_a[k * PT_STRIDE + ty + 32u],
                pt_a[k * PT_STRIDE + ty + 48u]);
            let y = vec4<f32>(pt_b[k * PT_STRIDE + tx], pt_b[k * PT_STRIDE + tx + 16u], pt_b[k * PT_STRIDE + tx + 32u],
                pt_b[k * PT_STRIDE + tx + 48u]);
            for (var a = 0u; a < 4u; a++) {
                let u = vec4<f32>(x[a]) - y;
                pt_acc[4u * a] = fma(u.x, u.x, pt_acc[4u * a]);
                pt_acc[4u * a + 1u] = fma(u.y, u.y, pt_acc[4u * a + 1u]);
                pt_acc[4u * a + 2u] = fma(u.z, u.z, pt_acc[4u * a + 2u]);
                pt_acc[4u * a + 3u] = fma(u.w, u.w, pt_acc[4u * a + 3u]);
            }
        }
    }
}
