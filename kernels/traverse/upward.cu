// kernels/traverse/upward.cu — the upward pass of orrery-traverse on the GPU
// (crates/orrery-traverse/src/gpu/upward.rs), the CUDA twin of shaders/traverse/upward.wgsl:
// same entry points, same arguments (buffers first, then scalars). Self-contained: this
// file is the translation unit NVRTC compiles.
//
// What it computes: the multipoles of every node of a TreeView and the packed node data of
// a walk, exactly as the CPU's Multipoles::compute and WalkNodes::new
// (crates/orrery-traverse/src/{multipole.rs, mac.rs, walk/nodes.rs}) in f32:
//
//   tu_gather    per body i < n_active: bodies[4i..4i+4] = [x, y, z, m][order[i]] (tree
//                order, packed so that one 16-byte load fetches a body), order copied;
//                an order entry past the bodies writes zeros and atomicMin's its position
//                into status[0] (the host reports it as IndexOutOfBounds)
//   tu_links     per node: links[4n..] = [first child, escape, particle begin, count]
//   tu_leaves    per leaf: mass M = sum m, com c = g + (sum m (x - g)) / M about the cell
//                centre g (c = g when M = 0), raw second moments T_ab += (m d_a) d_b with
//                d = x - c, and the farthest particle's d^2, looping the leaf's particles in
//                tree order
//   tu_internal  per internal node of one level (launched per level, deepest first): the
//                same sums over its children in child order, T += T_child + (M_k s_a) s_b
//                with s = c_k - c (parallel-axis theorem); d^2 slot set to 0
//   tu_extents   per particle: for each proper ancestor of its leaf, atomicMax of the f32
//                bits of |x - c|^2 into the node's d^2 slot (non-negative floats order like
//                their bits, and max is order-independent: the result does not depend on
//                scheduling)
//   tu_finish    per node: traceless Q = 3 T - ((T_xx + T_yy) + T_zz) I, the squared
//                critical radius of Opening::critical_radius2 (s = 2 max(h), r = s / theta,
//                + |c - g| for the safe MAC) and extent = sqrt(d^2)
//
// Between tu_leaves and tu_finish the output arrays hold the raw moments: centres [c, -],
// masses [M, T_xx, T_xy, T_xz], quads [T_yy, T_yz, T_zz, 0], extents d^2; tu_finish turns
// them into the walk's packing (see WalkNodes): centres [c, r^2], masses [M, Q_xx, Q_xy,
// Q_xz], quads [Q_yy, Q_yz, Q_zz, 0], extents |c - farthest particle|.
//
// Floats: every operation is one correctly rounded intrinsic (__fadd_rn, __fsub_rn,
// __fmul_rn, __fdiv_rn, __fsqrt_rn) in the CPU's order, so nvcc/NVRTC can neither contract
// a product and a sum into an FMA nor use approximate division or square root: the results
// are the CPU's bit for bit. fmaxf equals Rust's f32::max on the finite values here.
//
// Launch shape: one thread per item (body, node, leaf, particle), blocks of TU_THREADS, a
// 1D grid; tu_internal is launched once per level with a grid sized for an upper bound of
// the level's nodes and loops grid-stride over the level's range [level_offsets[level],
// level_offsets[level + 1]), read on the device. Why: a level's nodes only need the level
// below, so one launch per level is the dependency order with no host round trip (the host
// knows the depth from the view's status, not the offsets); every node's work is a short
// loop over at most 2^b children or its leaf's particles (a bucket), memory bound, so one
// thread per node and no shared memory. Extents go per particle with atomics instead of per
// node over its particle range because the root's range is every particle: per node, one
// thread would loop over all n. A thread reads the node's current d^2 first and issues the
// atomic only when its own is larger, which keeps the contention at the root low. The links
// are written first (tu_links) so that tu_leaves reads a leaf's particle range from them:
// that keeps every entry at 8 storage buffers or fewer, WebGPU's default per-stage limit,
// which the WGSL twin must respect.
//
// Buffers (all u32 indices; f32 arrays packed 4 per node unless said):
//   bodies      f32 x 4 per body, [x, y, z, m] in tree order (16-byte aligned: float4 loads)
//   links       u32 x 4 per node
//   box_centres, half_extents   f32 x 3 per node (the view's boxes)
//   leaf_nodes (L), particle_leaves (particles), parents, first_children, escapes,
//   particle_begins, particle_counts (N), level_offsets (depth + 2): the view's arrays
//   extents     f32 per node
// `zero` (always 0) is WGSL's guard against FMA contraction; CUDA ignores it.
//
// Invariants: the view is valid (TreeView::from_parts holds), the bodies are its particles
// in tree order with finite coordinates (a NaN's bits would win the max).
//
// Measured cost: not measured yet. Ideas: warp-aggregated extents (consecutive particles
// share their ancestors), a leaf kernel with a warp per leaf, indirect grids per level.

typedef unsigned int u32;

#define TU_NONE 0xffffffffu
#define TU_THREADS 256u
// Most levels a parent chain can have (64-bit binary keys: 63 levels below the root).
#define TU_MAX_LEVELS 64u

__device__ __forceinline__ u32 tu_item() { return blockIdx.x * blockDim.x + threadIdx.x; }

extern "C" __global__ void tu_gather(const float* __restrict__ x, const float* __restrict__ y,
                                     const float* __restrict__ z, const float* __restrict__ m,
                                     const u32* __restrict__ order, float* __restrict__ bodies,
                                     u32* __restrict__ order_out, u32* __restrict__ status, u32 n_active,
                                     u32 n_bodies) {
    u32 i = tu_item();
    if (i >= n_active) return;
    u32 j = order[i];
    order_out[i] = j;
    float4 b = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (j < n_bodies) {
        b = make_float4(x[j], y[j], z[j], m[j]);
    } else {
        atomicMin(status, i);
    }
    reinterpret_cast<float4*>(bodies)[i] = b;
}

extern "C" __global__ void tu_links(const u32* __restrict__ first_children, const u32* __restrict__ escapes,
                                    const u32* __restrict__ particle_begins,
                                    const u32* __restrict__ particle_counts, u32* __restrict__ links,
                                    u32 nodes) {
    u32 n = tu_item();
    if (n >= nodes) return;
    reinterpret_cast<uint4*>(links)[n] =
        make_uint4(first_children[n], escapes[n], particle_begins[n], particle_counts[n]);
}

extern "C" __global__ void tu_leaves(const float* __restrict__ bodies, const u32* __restrict__ leaf_nodes,
                                     const u32* __restrict__ links, const float* __restrict__ box_centres,
                                     float* __restrict__ centres, float* __restrict__ masses,
                                     float* __restrict__ quads, float* __restrict__ extents, u32 leaves,
                                     u32 zero) {
    (void)zero;
    u32 i = tu_item();
    if (i >= leaves) return;
    const float4* b = reinterpret_cast<const float4*>(bodies);
    u32 n = leaf_nodes[i];
    uint4 link = reinterpret_cast<const uint4*>(links)[n];
    u32 begin = link.z, end = link.z + link.w;
    float g0 = box_centres[3u * n], g1 = box_centres[3u * n + 1u], g2 = box_centres[3u * n + 2u];
    float mass = 0.0f, s0 = 0.0f, s1 = 0.0f, s2 = 0.0f;
    for (u32 j = begin; j < end; ++j) {
        float4 p = b[j];
        mass = __fadd_rn(mass, p.w);
        s0 = __fadd_rn(s0, __fmul_rn(p.w, __fsub_rn(p.x, g0)));
        s1 = __fadd_rn(s1, __fmul_rn(p.w, __fsub_rn(p.y, g1)));
        s2 = __fadd_rn(s2, __fmul_rn(p.w, __fsub_rn(p.z, g2)));
    }
    float c0 = g0, c1 = g1, c2 = g2;
    float t0 = 0.0f, t1 = 0.0f, t2 = 0.0f, t3 = 0.0f, t4 = 0.0f, t5 = 0.0f, far = 0.0f;
    bool massive = mass != 0.0f;
    if (massive) {
        c0 = __fadd_rn(g0, __fdiv_rn(s0, mass));
        c1 = __fadd_rn(g1, __fdiv_rn(s1, mass));
        c2 = __fadd_rn(g2, __fdiv_rn(s2, mass));
    }
    for (u32 j = begin; j < end; ++j) {
        float4 p = b[j];
        float d0 = __fsub_rn(p.x, c0), d1 = __fsub_rn(p.y, c1), d2 = __fsub_rn(p.z, c2);
        if (massive) {
            float m0 = __fmul_rn(p.w, d0), m1 = __fmul_rn(p.w, d1), m2 = __fmul_rn(p.w, d2);
            t0 = __fadd_rn(t0, __fmul_rn(m0, d0));
            t1 = __fadd_rn(t1, __fmul_rn(m0, d1));
            t2 = __fadd_rn(t2, __fmul_rn(m0, d2));
            t3 = __fadd_rn(t3, __fmul_rn(m1, d1));
            t4 = __fadd_rn(t4, __fmul_rn(m1, d2));
            t5 = __fadd_rn(t5, __fmul_rn(m2, d2));
        }
        // mac::distance2(x, c): ((dx dx + dy dy) + dz dz); d is the same x - c.
        float r2 = __fadd_rn(__fadd_rn(__fmul_rn(d0, d0), __fmul_rn(d1, d1)), __fmul_rn(d2, d2));
        far = fmaxf(far, r2);
    }
    reinterpret_cast<float4*>(centres)[n] = make_float4(c0, c1, c2, 0.0f);
    reinterpret_cast<float4*>(masses)[n] = make_float4(mass, t0, t1, t2);
    reinterpret_cast<float4*>(quads)[n] = make_float4(t3, t4, t5, 0.0f);
    extents[n] = far;
}

extern "C" __global__ void tu_internal(const float* __restrict__ box_centres, const u32* __restrict__ links,
                                       const u32* __restrict__ parents, const u32* __restrict__ level_offsets,
                                       float* __restrict__ centres, float* __restrict__ masses,
                                       float* __restrict__ quads, float* __restrict__ extents, u32 level,
                                       u32 nodes, u32 zero) {
    (void)zero;
    float4* cen = reinterpret_cast<float4*>(centres);
    float4* mas = reinterpret_cast<float4*>(masses);
    float4* qua = reinterpret_cast<float4*>(quads);
    u32 begin = level_offsets[level], end = min(level_offsets[level + 1u], nodes);
    u32 stride = gridDim.x * blockDim.x;
    for (u32 n = begin + tu_item(); n < end; n += stride) {
        u32 first = reinterpret_cast<const uint4*>(links)[n].x;
        if (first == TU_NONE) continue;  // a leaf: tu_leaves did it
        // The children: first.. while their parent is n (2^b of them in a valid view).
        u32 last = first;
        while (last < nodes && parents[last] == n) ++last;
        float g0 = box_centres[3u * n], g1 = box_centres[3u * n + 1u], g2 = box_centres[3u * n + 2u];
        float mass = 0.0f, s0 = 0.0f, s1 = 0.0f, s2 = 0.0f;
        for (u32 k = first; k < last; ++k) {
            float4 c = cen[k];
            float mk = mas[k].x;
            mass = __fadd_rn(mass, mk);
            s0 = __fadd_rn(s0, __fmul_rn(mk, __fsub_rn(c.x, g0)));
            s1 = __fadd_rn(s1, __fmul_rn(mk, __fsub_rn(c.y, g1)));
            s2 = __fadd_rn(s2, __fmul_rn(mk, __fsub_rn(c.z, g2)));
        }
        float c0 = g0, c1 = g1, c2 = g2;
        float t0 = 0.0f, t1 = 0.0f, t2 = 0.0f, t3 = 0.0f, t4 = 0.0f, t5 = 0.0f;
        if (mass != 0.0f) {
            c0 = __fadd_rn(g0, __fdiv_rn(s0, mass));
            c1 = __fadd_rn(g1, __fdiv_rn(s1, mass));
            c2 = __fadd_rn(g2, __fdiv_rn(s2, mass));
            for (u32 k = first; k < last; ++k) {
                float4 c = cen[k], mt = mas[k], q = qua[k];
                t0 = __fadd_rn(t0, mt.y);
                t1 = __fadd_rn(t1, mt.z);
                t2 = __fadd_rn(t2, mt.w);
                t3 = __fadd_rn(t3, q.x);
                t4 = __fadd_rn(t4, q.y);
                t5 = __fadd_rn(t5, q.z);
                float d0 = __fsub_rn(c.x, c0), d1 = __fsub_rn(c.y, c1), d2 = __fsub_rn(c.z, c2);
                float m0 = __fmul_rn(mt.x, d0), m1 = __fmul_rn(mt.x, d1), m2 = __fmul_rn(mt.x, d2);
                t0 = __fadd_rn(t0, __fmul_rn(m0, d0));
                t1 = __fadd_rn(t1, __fmul_rn(m0, d1));
                t2 = __fadd_rn(t2, __fmul_rn(m0, d2));
                t3 = __fadd_rn(t3, __fmul_rn(m1, d1));
                t4 = __fadd_rn(t4, __fmul_rn(m1, d2));
                t5 = __fadd_rn(t5, __fmul_rn(m2, d2));
            }
        }
        cen[n] = make_float4(c0, c1, c2, 0.0f);
        mas[n] = make_float4(mass, t0, t1, t2);
        qua[n] = make_float4(t3, t4, t5, 0.0f);
        extents[n] = 0.0f;
    }
}

extern "C" __global__ void tu_extents(const float* __restrict__ bodies, const u32* __restrict__ particle_leaves,
                                      const u32* __restrict__ leaf_nodes, const u32* __restrict__ parents,
                                      const float* __restrict__ centres, float* __restrict__ extents,
                                      u32 particles, u32 zero) {
    (void)zero;
    u32 q = tu_item();
    if (q >= particles) return;
    float4 p = reinterpret_cast<const float4*>(bodies)[q];
    const float4* cen = reinterpret_cast<const float4*>(centres);
    u32* far = reinterpret_cast<u32*>(extents);
    u32 node = parents[leaf_nodes[particle_leaves[q]]];
    for (u32 step = 0u; node != TU_NONE && step < TU_MAX_LEVELS; ++step) {
        float4 c = cen[node];
        float d0 = __fsub_rn(p.x, c.x), d1 = __fsub_rn(p.y, c.y), d2 = __fsub_rn(p.z, c.z);
        float r2 = __fadd_rn(__fadd_rn(__fmul_rn(d0, d0), __fmul_rn(d1, d1)), __fmul_rn(d2, d2));
        u32 bits = __float_as_uint(r2);
        // The slot only grows: a stale read can only cause an unneeded atomic.
        if (bits > far[node]) atomicMax(far + node, bits);
        node = parents[node];
    }
}

extern "C" __global__ void tu_finish(const float* __restrict__ box_centres, const float* __restrict__ half_extents,
                                     float* __restrict__ centres, float* __restrict__ masses,
                                     float* __restrict__ quads, float* __restrict__ extents, u32 nodes,
                                     u32 safe, float theta, u32 zero) {
    (void)zero;
    u32 n = tu_item();
    if (n >= nodes) return;
    float4* cen = reinterpret_cast<float4*>(centres);
    float4* mas = reinterpret_cast<float4*>(masses);
    float4* qua = reinterpret_cast<float4*>(quads);
    float4 c = cen[n], mt = mas[n], q = qua[n];
    // multipole::traceless: three = 1 + 1 + 1, trace = (t0 + t3) + t5.
    const float three = 3.0f;
    float trace = __fadd_rn(__fadd_rn(mt.y, q.x), q.z);
    float q0 = __fsub_rn(__fmul_rn(three, mt.y), trace);
    float q1 = __fmul_rn(three, mt.z);
    float q2 = __fmul_rn(three, mt.w);
    float q3 = __fsub_rn(__fmul_rn(three, q.x), trace);
    float q4 = __fmul_rn(three, q.y);
    float q5 = __fsub_rn(__fmul_rn(three, q.z), trace);
    // Opening::critical_radius2.
    float h0 = half_extents[3u * n], h1 = half_extents[3u * n + 1u], h2 = half_extents[3u * n + 2u];
    float side = __fmul_rn(2.0f, fmaxf(fmaxf(h0, h1), h2));
    float r = __fdiv_rn(side, theta);
    if (safe != 0u) {
        float d0 = __fsub_rn(c.x, box_centres[3u * n]);
        float d1 = __fsub_rn(c.y, box_centres[3u * n + 1u]);
        float d2 = __fsub_rn(c.z, box_centres[3u * n + 2u]);
        r = __fadd_rn(r, __fsqrt_rn(__fadd_rn(__fadd_rn(__fmul_rn(d0, d0), __fmul_rn(d1, d1)), __fmul_rn(d2, d2))));
    }
    cen[n] = make_float4(c.x, c.y, c.z, __fmul_rn(r, r));
    mas[n] = make_float4(mt.x, q0, q1, q2);
    qua[n] = make_float4(q3, q4, q5, 0.0f);
    extents[n] = __fsqrt_rn(extents[n]);
}
