// shaders/traverse/fmm_p2p.wgsl — the FMM's near field on the GPU, f32
// (crates/orrery-traverse/src/gpu/fmm/; host reference crate::fmm::evaluate::leaves), the
// WGSL twin of kernels/traverse/fmm_p2p.cu: the same entry point and arguments. Module
// "traverse/fmm_p2p": this file (it //#includes core/common). The expansion passes
// (module traverse/fmm) are f64 and CUDA only, so on wgpu this is the near field alone.
//
// What it computes: see fmm_p2p.cu. Per non-empty leaf and target i (tree order), the
// near field of its P2P source leaves (sorted by first particle), the own index and
// s == 0 skipped, G applied: acc_i = [G a, -G sum m / s^(1/2)]. inverseSqrt (2 ULP in
// WGSL) replaces CUDA's rsqrt.approx; sums may or may not be fused by the driver.
//
// Launch shape: workgroups of THREADS (64) invocations (WORKGROUP_SIZE must be 64), one
//   workgroup per leaf, grid-stride over the leaf list on a 2D dispatch (linear_block).
//   Targets in chunks of 64, sources through a workgroup tile of 64 vec4<f32> (1 KiB).
//   The leaf's ranges and each source leaf's range are read by invocation 0 and shared
//   with workgroupUniformLoad, so every loop that holds a barrier is uniform.
//
// Buffers (binding: direction, length, layout)
//   0 bodies (r, 4 n f32: [x, y, z, m], tree order), 1 leaves (r, L u32: non-empty leaf
//   nodes), 2 begins (r, N u32), 3 counts (r, N u32), 4 p2p_offsets (r, N + 1 u32),
//   5 p2p_sources (r, u32), 6 acc (rw, n vec4<f32>), 7 params {leaves_count, g, eps2}.
//   Views must start at aligned offsets (no off_* fields).
//
// Invariants: as fmm_p2p.cu.
//
// Measured cost: not measured yet.

//#include core/common

const THREADS: u32 = 64u;

struct P2pParams {
    leaves_count: u32,
    g: f32,
    eps2: f32,
}

@group(0) @binding(0) var<storage, read> fp_bodies: array<f32>;
@group(0) @binding(1) var<storage, read> fp_leaves: array<u32>;
@group(0) @binding(2) var<storage, read> fp_begins: array<u32>;
@group(0) @binding(3) var<storage, read> fp_counts: array<u32>;
@group(0) @binding(4) var<storage, read> fp_p2p_offsets: array<u32>;
@group(0) @binding(5) var<storage, read> fp_p2p_sources: array<u32>;
@group(0) @binding(6) var<storage, read_write> fp_acc: array<vec4<f32>>;
@group(0) @binding(7) var<uniform> fp_p: P2pParams;

var<workgroup> fp_tile: array<vec4<f32>, THREADS>;
// [target begin, target count, first list entry, end of the list] of the current leaf.
var<workgroup> fp_range: vec4<u32>;
// [begin, count] of the current source leaf.
var<workgroup> fp_src: vec2<u32>;

fn fp_body(i: u32) -> vec4<f32> {
    return vec4<f32>(fp_bodies[4u * i], fp_bodies[4u * i + 1u], fp_bodies[4u * i + 2u], fp_bodies[4u * i + 3u]);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn fmm_p2p(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let blocks = nwg.x * nwg.y;
    let eps2 = fp_p.eps2;
    let g = fp_p.g;
    for (var l = linear_block(wid, nwg); l < fp_p.leaves_count; l += blocks) {
        workgroupBarrier();  // every invocation has read the previous leaf's ranges
        if lid == 0u {
            let leaf = fp_leaves[l];
            fp_range = vec4<u32>(fp_begins[leaf], fp_counts[leaf], fp_p2p_offsets[leaf], fp_p2p_offsets[leaf + 1u]);
        }
        let r = workgroupUniformLoad(&fp_range);
        for (var chunk = 0u; chunk < r.y; chunk += THREADS) {
            let i = r.x + chunk + lid;
            let valid = chunk + lid < r.y;
            let t = fp_body(select(r.x, i, valid));
            var sum = vec4<f32>(0.0);  // a_x, a_y, a_z, sum m / s^(1/2)
            for (var e = r.z; e < r.w; e++) {
                workgroupBarrier();  // every invocation has read the previous source range
                if lid == 0u {
                    let src = fp_p2p_sources[e];
                    fp_src = vec2<u32>(fp_begins[src], fp_counts[src]);
                }
                let sr = workgroupUniformLoad(&fp_src);
                for (var s0 = 0u; s0 < sr.y; s0 += THREADS) {
                    workgroupBarrier();  // the previous tile is no longer read
                    let j = s0 + lid;
                    let b = fp_body(sr.x + min(j, sr.y - 1u));
                    fp_tile[lid] = select(vec4<f32>(0.0), b, j < sr.y);
                    workgroupBarrier();
                    let len = min(THREADS, sr.y - s0);
                    for (var k = 0u; k < len; k++) {
                        let b = fp_tile[k];
                        let d = b.xyz - t.xyz;
                        let r2 = dot(d, d) + eps2;
                        let keep = r2 > 0.0 && sr.x + s0 + k != i;
                        let inv = select(0.0, inverseSqrt(r2), keep);
                        let minv = b.w * inv;
                        let w = minv * inv * inv;
                        sum += vec4<f32>(d * w, minv);
                    }
                }
            }
            if valid {
                fp_acc[i] = vec4<f32>(g * sum.x, g * sum.y, g * sum.z, -(g * sum.w));
            }
        }
    }
}
