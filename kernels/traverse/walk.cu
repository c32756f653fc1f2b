// Barnes-Hut tree walks of orrery-traverse (f32): every target's acceleration and
// potential from the packed walk nodes (orrery_traverse::walk::WalkNodes) and the bodies
// in tree order, with its particle-particle and particle-cell interaction counts.
//
// Inputs (all tree order, indexed like the TreeView: level order, children contiguous):
//   bodies   float4 per body: x, y, z, m
//   centres  float4 per node: centre of mass, squared critical radius r^2
//   masses   float4 per node: M, Qxx, Qxy, Qxz          quads  float4: Qyy, Qyz, Qzz, 0
//   links    uint4 per node: first child (NONE for a leaf), escape (next node in
//            preorder after the subtree, NONE at the end), first particle, count
// Outputs per target (tree order): acc float4 (G a_x, G a_y, G a_z, G phi) and counts
// uint2 (particle-particle, particle-cell).
//
// Three walks, one per entry point, all stackless (first child / escape):
//   bh_walk_independent  one thread per target, its own node index: the baseline.
//   bh_walk_coherent     one node index per warp, advanced by agreement: the warp
//       descends when any lane opens the node and skips the subtree when none does; a
//       lane that accepts an internal node waits (contributes nothing) until the warp
//       reaches that node's escape, where its own walk continues. Every lane therefore
//       evaluates exactly its own walk's interactions in its own walk's order, with the
//       same operations as bh_walk_independent: bit-identical results and counts, while
//       node loads are uniform across the warp (one transaction) and lanes never
//       diverge in control flow, only in predication.
//   bh_walk_group        the warp's 32 consecutive targets are one group (bh_walk_group2:
//       64 targets, two per lane; see its comment): a node is
//       opened when the nearest point of the group's bounding box is within r of its
//       centre of mass (orrery_traverse::walk::walk_groups with groups of 32), so every
//       lane takes the same decision and every interaction is evaluated by all lanes.
//
// Bit-exactness: the opening test is written with correctly rounded intrinsics in the
// CPU's order ((dx*dx + dy*dy) + dz*dz, no FMA), so each executor opens the same nodes
// as the CPU and the interaction counts agree exactly. The interactions use explicit
// fmaf and __fmul_rn (nothing is left for the compiler to contract differently in two
// kernels), so the independent and coherent walks agree bit for bit.
//
// Launch: BH_THREADS threads per block, one thread per target (rounded up to whole
// warps); the warp-level walks need blockDim.x a multiple of 32.

#define BH_THREADS 256u
#define BH_NONE 0xffffffffu
#define BH_FULL 0xffffffffu

struct BhAcc {
    float x, y, z, p;
};

__device__ __forceinline__ float bh_dist2(float4 c, float3 x) {
    float dx = __fsub_rn(c.x, x.x), dy = __fsub_rn(c.y, x.y), dz = __fsub_rn(c.z, x.z);
    return __fadd_rn(__fadd_rn(__fmul_rn(dx, dx), __fmul_rn(dy, dy)), __fmul_rn(dz, dz));
}

// Squared distance from p to the box (centre gc, half-extents gh): the CPU's box_distance2.
__device__ __forceinline__ float bh_box_dist2(float4 p, float3 gc, float3 gh) {
    float dx = fmaxf(__fsub_rn(fabsf(__fsub_rn(p.x, gc.x)), gh.x), 0.0f);
    float dy = fmaxf(__fsub_rn(fabsf(__fsub_rn(p.y, gc.y)), gh.y), 0.0f);
    float dz = fmaxf(__fsub_rn(fabsf(__fsub_rn(p.z, gc.z)), gh.z), 0.0f);
    return __fadd_rn(__fadd_rn(__fmul_rn(dx, dx), __fmul_rn(dy, dy)), __fmul_rn(dz, dz));
}

// One particle-particle interaction (orrery_traverse::walk::p2p).
__device__ __forceinline__ void bh_p2p(BhAcc& a, float3 xi, float4 s, float eps2) {
    float dx = __fsub_rn(s.x, xi.x), dy = __fsub_rn(s.y, xi.y), dz = __fsub_rn(s.z, xi.z);
    float r2 = fmaf(dz, dz, fmaf(dy, dy, fmaf(dx, dx, eps2)));
    float rinv = r2 > 0.0f ? rsqrtf(r2) : 0.0f;
    float mr = __fmul_rn(s.w, rinv);
    float mr3 = __fmul_rn(__fmul_rn(mr, rinv), rinv);
    a.x = fmaf(mr3, dx, a.x);
    a.y = fmaf(mr3, dy, a.y);
    a.z = fmaf(mr3, dz, a.z);
    a.p = __fsub_rn(a.p, mr);
}

// One particle-cell interaction (orrery_traverse::walk::m2p).
__device__ __forceinline__ void bh_m2p(BhAcc& a, float3 xi, float4 c, float4 mq, float4 q2, float eps2, bool quad) {
    float dx = __fsub_rn(c.x, xi.x), dy = __fsub_rn(c.y, xi.y), dz = __fsub_rn(c.z, xi.z);
    float r2 = fmaf(dz, dz, fmaf(dy, dy, fmaf(dx, dx, eps2)));
    float rinv = r2 > 0.0f ? rsqrtf(r2) : 0.0f;
    float rinv2 = __fmul_rn(rinv, rinv);
    float mr = __fmul_rn(mq.x, rinv);
    float mr3 = __fmul_rn(mr, rinv2);
    float ax = fmaf(mr3, dx, a.x), ay = fmaf(mr3, dy, a.y), az = fmaf(mr3, dz, a.z);
    float p = __fsub_rn(a.p, mr);
    if (quad) {
        float qx = fmaf(mq.w, dz, fmaf(mq.z, dy, __fmul_rn(mq.y, dx)));
        float qy = fmaf(q2.y, dz, fmaf(q2.x, dy, __fmul_rn(mq.z, dx)));
        float qz = fmaf(q2.z, dz, fmaf(q2.y, dy, __fmul_rn(mq.w, dx)));
        float s = fmaf(dz, qz, fmaf(dy, qy, __fmul_rn(dx, qx)));
        float rinv5 = __fmul_rn(__fmul_rn(rinv2, rinv2), rinv);
        float g = __fmul_rn(__fmul_rn(__fmul_rn(2.5f, s), rinv5), rinv2);
        ax = fmaf(g, dx, fmaf(-qx, rinv5, ax));
        ay = fmaf(g, dy, fmaf(-qy, rinv5, ay));
        az = fmaf(g, dz, fmaf(-qz, rinv5, az));
        p = fmaf(__fmul_rn(-0.5f, s), rinv5, p);
    }
    a.x = ax;
    a.y = ay;
    a.z = az;
    a.p = p;
}

__device__ __forceinline__ void bh_store(float4* acc, uint2* counts, unsigned i, BhAcc a, float g, unsigned pp, unsigned pc) {
    acc[i] = make_float4(__fmul_rn(g, a.x), __fmul_rn(g, a.y), __fmul_rn(g, a.z), __fmul_rn(g, a.p));
    counts[i] = make_uint2(pp, pc);
}

extern "C" __global__ void bh_walk_independent(
    const float* __restrict__ bodies, const float* __restrict__ centres, const float* __restrict__ masses,
    const float* __restrict__ quads, const unsigned* __restrict__ links, float4* __restrict__ acc,
    uint2* __restrict__ counts, unsigned n, unsigned quadrupole, float eps2, float g) {
    // The node and body arrays are flat f32 / u32 buffers of four values per entry (the
    // upward pass writes them so), 16-byte aligned: read as float4 / uint4.
    const float4* B = reinterpret_cast<const float4*>(bodies);
    const float4* C = reinterpret_cast<const float4*>(centres);
    const float4* M = reinterpret_cast<const float4*>(masses);
    const float4* Q = reinterpret_cast<const float4*>(quads);
    const uint4* L = reinterpret_cast<const uint4*>(links);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 b = B[i];
    float3 xi = make_float3(b.x, b.y, b.z);
    BhAcc a = {0.0f, 0.0f, 0.0f, 0.0f};
    unsigned pp = 0, pc = 0, node = 0;
    bool quad = quadrupole != 0;
    while (node != BH_NONE) {
        uint4 l = L[node];
        if (l.w == 0) {
            node = l.y;
            continue;
        }
        float4 c = C[node];
        if (bh_dist2(c, xi) < c.w) {
            if (l.x != BH_NONE) {
                node = l.x;
                continue;
            }
            for (unsigned j = l.z; j < l.z + l.w; ++j) {
                if (j != i) {
                    bh_p2p(a, xi, B[j], eps2);
                    ++pp;
                }
            }
        } else {
            bh_m2p(a, xi, c, M[node], Q[node], eps2, quad);
            ++pc;
        }
        node = l.y;
    }
    bh_store(acc, counts, i, a, g, pp, pc);
}

extern "C" __global__ void bh_walk_coherent(
    const float* __restrict__ bodies, const float* __restrict__ centres, const float* __restrict__ masses,
    const float* __restrict__ quads, const unsigned* __restrict__ links, float4* __restrict__ acc,
    uint2* __restrict__ counts, unsigned n, unsigned quadrupole, float eps2, float g) {
    // The node and body arrays are flat f32 / u32 buffers of four values per entry (the
    // upward pass writes them so), 16-byte aligned: read as float4 / uint4.
    const float4* B = reinterpret_cast<const float4*>(bodies);
    const float4* C = reinterpret_cast<const float4*>(centres);
    const float4* M = reinterpret_cast<const float4*>(masses);
    const float4* Q = reinterpret_cast<const float4*>(quads);
    const uint4* L = reinterpret_cast<const uint4*>(links);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    // Whole warps stay in the loop (the votes need every lane); lanes past the targets
    // are inactive from the start and never resume.
    if ((i & ~31u) >= n) return;
    bool valid = i < n;
    float4 b = B[valid ? i : n - 1];
    float3 xi = make_float3(b.x, b.y, b.z);
    BhAcc a = {0.0f, 0.0f, 0.0f, 0.0f};
    unsigned pp = 0, pc = 0, node = 0;
    bool active = valid;
    unsigned resume = BH_NONE;
    bool quad = quadrupole != 0;
    while (node != BH_NONE) {
        if (node == resume) active = true;
        uint4 l = L[node];
        if (l.w == 0) {
            node = l.y;
            continue;
        }
        float4 c = C[node];
        bool open = active && bh_dist2(c, xi) < c.w;
        bool leaf = l.x == BH_NONE;
        if (active && !open) {
            bh_m2p(a, xi, c, M[node], Q[node], eps2, quad);
            ++pc;
            if (!leaf) {
                active = false;
                resume = l.y;
            }
        }
        bool any_open = __any_sync(BH_FULL, open);
        if (leaf) {
            if (any_open) {
                for (unsigned j = l.z; j < l.z + l.w; ++j) {
                    float4 s = B[j];
                    if (open && j != i) {
                        bh_p2p(a, xi, s, eps2);
                        ++pp;
                    }
                }
            }
            node = l.y;
        } else {
            node = any_open ? l.x : l.y;
        }
    }
    if (valid) bh_store(acc, counts, i, a, g, pp, pc);
}

extern "C" __global__ void bh_walk_group(
    const float* __restrict__ bodies, const float* __restrict__ centres, const float* __restrict__ masses,
    const float* __restrict__ quads, const unsigned* __restrict__ links, float4* __restrict__ acc,
    uint2* __restrict__ counts, unsigned n, unsigned quadrupole, float eps2, float g) {
    // The node and body arrays are flat f32 / u32 buffers of four values per entry (the
    // upward pass writes them so), 16-byte aligned: read as float4 / uint4.
    const float4* B = reinterpret_cast<const float4*>(bodies);
    const float4* C = reinterpret_cast<const float4*>(centres);
    const float4* M = reinterpret_cast<const float4*>(masses);
    const float4* Q = reinterpret_cast<const float4*>(quads);
    const uint4* L = reinterpret_cast<const uint4*>(links);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if ((i & ~31u) >= n) return;
    bool valid = i < n;
    float4 b = B[valid ? i : n - 1];
    float3 xi = make_float3(b.x, b.y, b.z);
    // The group's box: min and max over its targets (exact), then centre and
    // half-extents as the CPU's group_box rounds them.
    float lo_x = b.x, lo_y = b.y, lo_z = b.z, hi_x = b.x, hi_y = b.y, hi_z = b.z;
    for (unsigned off = 16; off > 0; off >>= 1) {
        lo_x = fminf(lo_x, __shfl_xor_sync(BH_FULL, lo_x, off));
        lo_y = fminf(lo_y, __shfl_xor_sync(BH_FULL, lo_y, off));
        lo_z = fminf(lo_z, __shfl_xor_sync(BH_FULL, lo_z, off));
        hi_x = fmaxf(hi_x, __shfl_xor_sync(BH_FULL, hi_x, off));
        hi_y = fmaxf(hi_y, __shfl_xor_sync(BH_FULL, hi_y, off));
        hi_z = fmaxf(hi_z, __shfl_xor_sync(BH_FULL, hi_z, off));
    }
    float3 gc = make_float3(__fmul_rn(__fadd_rn(lo_x, hi_x), 0.5f), __fmul_rn(__fadd_rn(lo_y, hi_y), 0.5f),
                            __fmul_rn(__fadd_rn(lo_z, hi_z), 0.5f));
    float3 gh = make_float3(__fmul_rn(__fsub_rn(hi_x, lo_x), 0.5f), __fmul_rn(__fsub_rn(hi_y, lo_y), 0.5f),
                            __fmul_rn(__fsub_rn(hi_z, lo_z), 0.5f));
    BhAcc a = {0.0f, 0.0f, 0.0f, 0.0f};
    unsigned pp = 0, pc = 0, node = 0;
    bool quad = quadrupole != 0;
    while (node != BH_NONE) {
        uint4 l = L[node];
        if (l.w == 0) {
            node = l.y;
            continue;
        }
        float4 c = C[node];
        if (bh_box_dist2(c, gc, gh) < c.w) {
            if (l.x != BH_NONE) {
                node = l.x;
                continue;
            }
            for (unsigned j = l.z; j < l.z + l.w; ++j) {
                float4 s = B[j];
                if (j != i) {
                    bh_p2p(a, xi, s, eps2);
                    ++pp;
                }
            }
        } else {
            bh_m2p(a, xi, c, M[node], Q[node], eps2, quad);
            ++pc;
        }
        node = l.y;
    }
    if (valid) bh_store(acc, counts, i, a, g, pp, pc);
}

// bh_walk_group2: groups of 64 consecutive targets, two per lane (targets base + lane and
// base + 32 + lane). One node visit, one box test and one node load serve 64 targets, and
// each lane keeps two independent accumulation chains (more instruction-level
// parallelism): the traversal overhead per interaction halves, at the price of the
// larger group box (more interactions per target). The CPU reference is
// orrery_traverse::walk::walk_groups with groups of 64.
extern "C" __global__ void bh_walk_group2(
    const float* __restrict__ bodies, const float* __restrict__ centres, const float* __restrict__ masses,
    const float* __restrict__ quads, const unsigned* __restrict__ links, float4* __restrict__ acc,
    uint2* __restrict__ counts, unsigned n, unsigned quadrupole, float eps2, float g) {
    const float4* B = reinterpret_cast<const float4*>(bodies);
    const float4* C = reinterpret_cast<const float4*>(centres);
    const float4* M = reinterpret_cast<const float4*>(masses);
    const float4* Q = reinterpret_cast<const float4*>(quads);
    const uint4* L = reinterpret_cast<const uint4*>(links);
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned base = (t >> 5) * 64u, lane = t & 31u;
    if (base >= n) return;
    unsigned i0 = base + lane, i1 = base + 32u + lane;
    bool v0 = i0 < n, v1 = i1 < n;
    float4 b0 = B[v0 ? i0 : n - 1], b1 = B[v1 ? i1 : n - 1];
    float3 x0 = make_float3(b0.x, b0.y, b0.z), x1 = make_float3(b1.x, b1.y, b1.z);
    float lo_x = fminf(b0.x, b1.x), lo_y = fminf(b0.y, b1.y), lo_z = fminf(b0.z, b1.z);
    float hi_x = fmaxf(b0.x, b1.x), hi_y = fmaxf(b0.y, b1.y), hi_z = fmaxf(b0.z, b1.z);
    for (unsigned off = 16; off > 0; off >>= 1) {
        lo_x = fminf(lo_x, __shfl_xor_sync(BH_FULL, lo_x, off));
        lo_y = fminf(lo_y, __shfl_xor_sync(BH_FULL, lo_y, off));
        lo_z = fminf(lo_z, __shfl_xor_sync(BH_FULL, lo_z, off));
        hi_x = fmaxf(hi_x, __shfl_xor_sync(BH_FULL, hi_x, off));
        hi_y = fmaxf(hi_y, __shfl_xor_sync(BH_FULL, hi_y, off));
        hi_z = fmaxf(hi_z, __shfl_xor_sync(BH_FULL, hi_z, off));
    }
    float3 gc = make_float3(__fmul_rn(__fadd_rn(lo_x, hi_x), 0.5f), __fmul_rn(__fadd_rn(lo_y, hi_y), 0.5f),
                            __fmul_rn(__fadd_rn(lo_z, hi_z), 0.5f));
    float3 gh = make_float3(__fmul_rn(__fsub_rn(hi_x, lo_x), 0.5f), __fmul_rn(__fsub_rn(hi_y, lo_y), 0.5f),
                            __fmul_rn(__fsub_rn(hi_z, lo_z), 0.5f));
    BhAcc a0 = {0.0f, 0.0f, 0.0f, 0.0f}, a1 = {0.0f, 0.0f, 0.0f, 0.0f};
    unsigned pp0 = 0, pp1 = 0, pc = 0, node = 0;
    bool quad = quadrupole != 0;
    while (node != BH_NONE) {
        uint4 l = L[node];
        if (l.w == 0) {
            node = l.y;
            continue;
        }
        float4 c = C[node];
        if (bh_box_dist2(c, gc, gh) < c.w) {
            if (l.x != BH_NONE) {
                node = l.x;
                continue;
            }
            for (unsigned j = l.z; j < l.z + l.w; ++j) {
                float4 s = B[j];
                if (j != i0) {
                    bh_p2p(a0, x0, s, eps2);
                    ++pp0;
                }
                if (j != i1) {
                    bh_p2p(a1, x1, s, eps2);
                    ++pp1;
                }
            }
        } else {
            float4 mq = M[node], q2 = Q[node];
            bh_m2p(a0, x0, c, mq, q2, eps2, quad);
            bh_m2p(a1, x1, c, mq, q2, eps2, quad);
            ++pc;
        }
        node = l.y;
    }
    if (v0) bh_store(acc, counts, i0, a0, g, pp0, pc);
    if (v1) bh_store(acc, counts, i1, a1, g, pp1, pc);
}

// Tree-order results back to input order: out[order[k]] = in[k] (forces, then counts:
// two kernels so that each binds at most eight buffers, the WGSL limit).
extern "C" __global__ void bh_scatter_forces(
    const float4* __restrict__ acc, const unsigned* __restrict__ order, float* __restrict__ ax,
    float* __restrict__ ay, float* __restrict__ az, float* __restrict__ pot, unsigned n) {
    unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    float4 a = acc[k];
    unsigned i = order[k];
    ax[i] = a.x;
    ay[i] = a.y;
    az[i] = a.z;
    pot[i] = a.w;
}

extern "C" __global__ void bh_scatter_counts(
    const uint2* __restrict__ counts, const unsigned* __restrict__ order, unsigned* __restrict__ pp,
    unsigned* __restrict__ pc, unsigned n) {
    unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    uint2 c = counts[k];
    unsigned i = order[k];
    pp[i] = c.x;
    pc[i] = c.y;
}
