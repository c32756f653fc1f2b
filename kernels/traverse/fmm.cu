// kernels/traverse/fmm.cu — the FMM's expansion passes on the GPU, f64
// (crates/orrery-traverse/src/gpu/fmm/; host reference crate::fmm::evaluate and
// crate::fmm::operators). Module "traverse/fmm", CUDA only: WGSL has no f64 arithmetic
// without SHADER_F64, and the expansions of orders up to 16 need f64 (ADR 0019, ADR 0020);
// the near field (P2P, f32) is the twin module traverse/fmm_p2p.
//
// What it computes (every formula is the CPU operator's, in the CPU's order of terms; see
// crate::fmm::operators::translate for the derivations):
//   fmm_p2m   per leaf: M_n^m = sum_j q_j conj(Y_n^m(y_j - c)) over the leaf's particles in
//             tree order (zeros for an empty leaf). Positions are normalised on the fly,
//             u = (x - origin) * inv_scale in f64, exactly the CPU's Frame::normalise.
//   fmm_m2m   per internal node of one level: the sum over its non-empty children (child
//             order) of M2M(child) (zeros for an empty node). Leaves of the level are
//             left alone (fmm_p2m wrote them).
//   fmm_m2l   per node: L = sum over the node's M2L list (CSR order) of M2L(source); every
//             node is written (zeros without a list).
//   fmm_l2l   per node of one level >= 1 with particles whose parent has a local
//             expansion (has_local): L += L2L(parent's L).
//   fmm_l2p   per particle of a leaf with has_local: [phi, grad phi] of the leaf's local
//             expansion at the particle, added to acc as the CPU does:
//             acc.xyz += (float)(far_acc * grad), acc.w += (float)(far_pot * phi).
//   Translations of the block and warp shapes rotate through the quarter turn J only (the
//   direction-table shape follows the plan: "Warp per node with direction tables"
//   below) (Rotations::QuarterTurn: two
//   matrix passes and a phase pass per rotation, J in shared memory, no direction table),
//   shift along z, and rotate back: the CPU's m2m / m2l / l2l with Rotation::Quarter,
//   pass for pass (load, rotate, to order-major, shift, from order-major, rotate back,
//   store), every sum in the CPU's order, every f64 operation a correctly rounded _rn
//   intrinsic (no contraction): the multipoles and local expansions equal the CPU's bit
//   for bit, in both launch shapes of the translations (checked under a host emulation of
//   these kernels: g++, CUDA threads as coroutines under a deterministic scheduler,
//   tests/traverse/emulation/run.sh; the tests assert it on the device). L2P takes its sum order by order
//   (no harmonics array), so its f64 sums differ from the CPU's in the last bits; rounded
//   to f32 they agreed everywhere in the emulation.
//
// Launch shapes
//   m2m, m2l, l2l come in two shapes (the host's gpu::fmm::TranslationShape) that perform
//   the same operations in the same order for every coefficient: each pass's
//   per-coefficient arithmetic is one function (fmm_load_one, fmm_rotate_one,
//   fmm_to_order_one, fmm_shift_one, fmm_from_order_one, fmm_store_one) that both call;
//   they differ in which thread computes which coefficient and where intermediates live.
//   Block per node (fmm_m2m, fmm_m2l, fmm_l2l; the first version, kept as the baseline):
//     one block of FMM_THREADS (128) threads per node, grid-stride over the nodes (level
//     range or all nodes); the threads own the coefficients i = tid + k * FMM_THREADS,
//     k < FMM_SLOTS (2), so nc(p) <= 256 (p <= 16: 153). A translation is ten
//     __syncthreads-separated passes over the coefficients in dynamic shared memory
//     (fmm_shared_doubles(p) doubles: J, eight split arrays of nc, per-order factors,
//     shift powers; p = 12: 18.6 KiB, p = 16: 37.1 KiB); threads 0 and 32 compute the
//     per-pair factors (phases, rotation factors, powers). The sums of a node accumulate in
//     registers of the coefficients' owners: no atomics, no order dependence. (The
//     emulation's mutation check finds three of the ten barriers, and fmm_load_j's,
//     redundant: marked "emulation: not needed", kept so that the baseline stays the
//     measured kernel.)
//   Warp per node (fmm_m2m_warp, fmm_m2l_warp, fmm_l2l_warp; the default): one warp per
//     node, blockDim.x / FMM_WARP warps per block (the host launches as many as fit 48 KiB
//     of shared memory, the limit without an opt-in, at most FMM_WARP_NODES = 8, so
//     FMM_WARP_THREADS = 256: 8 up to p = 11, 7 at p = 12, 2 at p = 16), grid-stride over
//     warps (node = blockIdx.x * warps + warp). M2L walks the node's list in CSR order
//     exactly as the block shape, so every sum has the same order and every bit is the
//     same. Lanes own i = lane + FMM_WARP k in a runtime loop (k <
//     ceil(nc / 32): 2 at p = 8, 3 at p = 12, 5 at p = 16; no per-slot registers, every
//     order to 16). Shared memory (fmm_warp_shared_doubles(p, warps)): per block J, the
//     per-order constants i^m / w_m and i^m w_m and a coefficient table (n, m, order-major
//     position per i), loaded once behind the block's only __syncthreads; per warp a slice
//     with the accumulators (nc double2, each touched by its owner only), the pair's
//     phases, middle factors and powers, and two split work arrays (the order-major arrays
//     alias them: to order-major x -> y, shift y -> x, from order-major x -> y). p = 8:
//     4.3 KiB + 2.5 KiB per warp (8 warps: 24.5 KiB); p = 16: 26.8 + 8.0 KiB per warp.
//     A translation is nine __syncwarp-separated passes (the store pass reads back only
//     what its lane wrote). The per-pair factors are computed by every lane (uniform
//     code: no divergence, the issue cost of one lane): the frame's divisions and square
//     roots, then one loop in which lane 0 stores the phase recurrence unit^m and lane 1
//     the middle factors u^m (z_m = z_(m-1) step: one instruction stream, two chains) and
//     lane 2 the powers; the per-order load and store factors cx_mul(f_in, phase[m]) are
//     formed per coefficient where they are used (the same products as the block shape's
//     table), and i^m / w_m (a reciprocal per order and pair in the block shape) is a
//     block constant.
//   Warp per node with direction tables (fmm_m2m_dir, fmm_m2l_dir, fmm_l2l_dir; the host's
//     TranslationShape::WarpDirections): the warp shape's launch, block part and slices, with
//     each pair rotated as the CPU plan's Rotations rotates it. A Rotations::Table plan
//     gives every M2L entry and parent offset a direction index (FMM_NONE beyond the key
//     bound); the host uploads the CPU's RotationTable as is (`directions`, fmm_stride(p)
//     doubles per direction) and the index arrays (all FMM_NONE for a quarter-turn plan).
//     A direct pair (Rotation::Direct) rotates with one matrix pass of its own blocks, read
//     through the cache from global memory, per rotation and no middle phases; FMM_NONE
//     rotates through J as the warp shape does. The CPU's Direct mode is the same axpy
//     (rotation.rs: block_matvec sums out[a] = sum_b E[b][a] x[b] from 0.0 in b order,
//     every product and sum rounded, never fused), so fmm_rotate_one computes it bit for
//     bit; the direct diagonal factors (-1)^m / w_m, (-1)^m w_m, 1 / w_m, w_m are exact.
//     Fused passes: a pass that reads only what its own lane computed is merged into the
//     pass before it (the last forward matrix pass with the transpose to order-major, the
//     shift with the transpose back, the last backward matrix pass with the store): a
//     direct pair is prologue, load, rotate + to order-major, shift + from order-major,
//     rotate + store, five __syncwarp (quarter turn: seven; the warp shape: nine).
//     A direct pair's prologue (fmm_dir_prologue_direct) stores the phases and powers only:
//     the polar angle's cos / sin and the middle factors are the quarter turn's (step three
//     below).
//   p2m (one block of FMM_THREADS per leaf) uses no shared memory: each coefficient's
//     owner evaluates Y_n^m by the CPU's recurrences (the diagonal, then the column: O(n)
//     per particle), particle by particle.
//   l2p: one thread per particle (FMM_L2P_THREADS = 128), the regular harmonics column by
//     column in registers (no array: Y_(n-1)^m, Y_n^m), each term paired with the local
//     coefficients it meets (the derivation is in gpu/fmm/mod.rs).
//
// Why two shapes. The block shape (the first, breadth-first version of issue 14)
//   parallelises one pair over its coefficients: a pair costs ten block barriers, the
//   prologue runs on two threads while the block waits, and at p = 8 83 of 128 threads
//   have no coefficient. It measured 91.9 ms for M2L at 1M uniform, p = 8, 11.7M pairs on
//   the H200 (docs/performance/fmm.md): 2050 cycles per pair per SM at 1.98 GHz, with 7 blocks
//   (7 pairs) resident per SM (72 registers x 128 threads). It is latency-bound. The warp
//   shape keeps a pair inside one warp, so its barriers are warp barriers, and puts many
//   more pairs in flight.
//
// Prediction for the warp shape (written before any device run; H200, 1M uniform, p = 8):
//   - pairs in flight per SM: 7 -> 32 (59 registers, allocated as 64, x 256 threads: 4
//     blocks of 8 warps; shared 4 x 24.5 KiB), every resident warp working (block shape:
//     28 resident warps, 14 with coefficients);
//   - barriers per pair: 10 __syncthreads of 4 warps -> 9 __syncwarp, no block barrier;
//   - active lanes in a pass: 45 of 128 threads -> 45 of 64 lane-slots (70%);
//   - prologue: thread 0's 1/rho, tz/tau, rho/tau and a loop of p + 1 orders with a
//     correctly rounded reciprocal in each (1/w_m: rcp.rn.f64 in the PTX), 12 divisions
//     or reciprocals at p = 8, while 126 threads wait -> 4 per pair (1/rho, tz/tau,
//     rho/tau, 1/tau; 1/w_m is a block constant), the phase and middle-factor chains in
//     one instruction stream (half the issue), no pair-independent factor recomputed;
//   - what is not changed: the f64 operations of the passes (~450 FP64 warp instructions
//     per pair at p = 8, counted by hand) and their shared-memory traffic (~500 wavefronts
//     per pair, likewise: every multiply-add of the four matrix passes reads a J entry and
//     an input from shared memory, 32 banks x 4 bytes per clock), the same in both shapes.
//     With latency hidden, shared memory bounds the warp shape at ~500-700 cycles per pair
//     per SM (at 1.98 GHz), i.e. M2L ~22-31 ms.
//   Predicted: M2L 25-35 ms (2.6-3.7x faster than 91.9 ms), the device passes ~32-42 ms
//   (the other phases unchanged; Plummer, 19.2M pairs: M2L ~40-57 ms). Not the 20 ms of the goal: past this step the
//   quarter turn's shared-memory traffic is the limit (direction tables: one matrix pass
//   per rotation instead of two; the rotation in registers).
//
// Prediction for the direction-table shape (written before any device run; H200, 1M
//   uniform, p = 8, a table plan: every uniform pair's key lies within the bound, so every
//   M2L pair is direct). Counts per M2L pair, warp instructions (a runtime loop over the
//   lane's slots k costs the longest lane's trip count; at p = 8 slot 0 holds degrees 0-7,
//   slot 1 degrees 7-8):
//   - matrix passes: 4 -> 2. One pass is 8 + 7 (slot 0: E+, E-) + 9 + 8 (slot 1) = 32
//     multiply-add iterations, 2 FP64 instructions each (no FMA: bit equality), 64 FP64
//     per pass: 4 x 64 + 2 middle-phase cx_mul (2 x 6 x 2 slots) = 280 -> 128 FP64.
//     Unchanged: load 28, to order-major 18, shift 72 (9 x 4 x 2 slots), from order-major
//     18, store 32, prologue ~165 (its chains and 4 divisions or square roots): ~330.
//     Per pair ~610 -> ~460 FP64 (-25%; the direct factors are selected constants).
//   - barriers: 9 -> 5 __syncwarp; intermediate arrays written: 7 -> 3 (load, to
//     order-major, from order-major); the transposes and the store read registers.
//   - shared-memory wavefronts: every multiply-add of the old matrix passes read J and its
//     input from shared memory (4 x 32 x ~3.5 wavefronts, ~450 of the ~500 per pair); the
//     direct passes read only the input there (2 x 32 x ~1.5, ~100), so ~150-250 per pair.
//   - new traffic: the direction's blocks from global memory, 2 x 489 doubles = 7.8 KB per
//     pair (64 load instructions, lanes of one degree reading consecutive doubles). The
//     table (~300 directions x 3.9 KiB, ~1.2 MB) lives in L2; the 32 warps of an SM hold
//     ~125 KB of directions in flight against ~130 KB of L1 (4 blocks x 24.5 KiB shared),
//     so the backward pass often re-reads the forward pass's lines. L2 floor: 11.7M pairs x
//     3.9-7.8 KB = 46-91 GB, 7-18 ms at 5-7 TB/s.
//   - registers: fmm_m2l_dir 59 (sm_90), no spills: 4 blocks of 8 warps per SM as the warp
//     shape (59, allocated as 64): the same 32 pairs in flight.
//   The warp shape measured 1557 cycles per pair per SM (69.7 ms), latency-bound on the
//   chain of passes. The four matrix passes are about 60% of a pair's dependent steps (32
//   iterations each against 9-18 in the others); removing two of them, the two middle
//   phase products and four barriers shortens the chain by ~35-45%, if an E load from L1
//   costs what a J load from shared memory did. Predicted: M2L 38-48 ms (1.45-1.85x faster
//   than 69.7 ms), device passes ~45-55 ms. Risk: where the E loads miss L1 and wait on L2
//   (~250 cycles against ~30) the two remaining passes can cost more than the four did
//   (M2L above 70 ms); the bench row "... warp per node, direction tables" decides, and
//   the next step is then staging each pair's blocks in the warp's shared slice. Not the
//   20 ms goal either way.
//
// Step three: the direct pair's prologue (written before any device run; H200, 1M uniform,
//   p = 8, table plan, every M2L pair direct). Measured before it: WarpDirections' M2L 39.7
//   ms (2d20674), 887 cycles per pair per SM at 1.98 GHz with 32 pairs in flight.
//   - What a direct pair computed that it never reads: fmm_warp_prologue forms cs = (tz /
//     tau, rho / tau), two correctly rounded f64 divisions (__ddiv_rn: MUFU.RCP64H, a Newton
//     sequence of ~8-10 FP64 instructions and a range check with a slow path), only for the
//     middle factors u^m, which lane 1 stores (9 predicated shared stores at p = 8) and
//     which only the quarter turn reads (its middle phase passes). fmm_dir_prologue_direct
//     leaves them out; everything it stores (phases, powers) is the same operations in the
//     same order, so the bits are unchanged by construction (the emulation checks it).
//   - Counts per direct M2L pair: FP64 warp instructions ~460 -> ~440 (-4%), issued
//     instructions ~30-40 fewer (the divisions' integer and branch part, the lane-1 stores,
//     the per-lane step select), shared-memory wavefronts -9 (one per predicated store).
//   - Dependent chain: unchanged. tz / tau and rho / tau depend on tau only and ran beside
//     1 / tau; the critical path stays sqrt(rho2) -> 1 / rho -> the phase chain (and sqrt
//     -> 1 / tau -> the power chain).
//   - What bounds the pair (why this step is small): with 32 pairs in flight the chain's
//     latency (~5,000 cycles per pair, counted by hand) is hidden ~6x over, and the FP64
//     pipe (~460 warp instructions at 2 per cycle: ~230 cycles) and the issue slots
//     (~1,300-1,500 warp instructions at 4 per cycle: ~350) are below 887. The remaining
//     candidate is the L1 / shared-memory datapath (one 128-byte wavefront per cycle,
//     shared by both): each of the 64 direction-block loads per pair touches the blocks of
//     ~8 degrees at once (lanes of a slot span degrees 0-7 or 7-8), ~8-9 cache lines per
//     instruction, ~550 L1 wavefronts, plus ~150-250 shared-memory wavefronts: ~700-800,
//     near the measured 887. If so, the step that pays is staging each pair's blocks in
//     the warp's slice with coalesced loads (489 doubles: ~32 L1 + ~32 shared wavefronts,
//     then 2-4 per matrix-pass load instead of ~9), not this one: it needs 3.9 KiB more per
//     warp (6 warps per block within 48 KiB at p = 8; p = 16 does not fit and would keep
//     the global reads). Not done here.
//   - Registers: with the direct prologue ptxas gave fmm_m2l_dir 48 registers and 40/100
//     bytes of spill (59 and none before); __launch_bounds__(FMM_WARP_THREADS,
//     FMM_DIR_MIN_BLOCKS = 4) states the occupancy the shape runs at (4 blocks of 8 warps
//     per SM, 64 registers each) and ptxas then uses 62-63 registers and spills nothing, in
//     M2L and in M2M / L2L (whose 16-36 bytes of spill it removes as well). Same 32 pairs
//     in flight.
//   Predicted: M2L 37.5-39.7 ms (0-5% faster than 39.7 ms); the device passes ~0.3-2 ms
//   less (M2M and L2L without spills: ~3% of the passes, a few tenths of a ms at most). A result at the top of that range supports the wavefront bound above.
//
// Buffers (direction, length, layout)
//   bodies         read   4 n f32        [x, y, z, m] per body, tree order
//   leaves         read   leaves u32     leaf node ids (fmm_p2m)
//   begins, counts read   N u32          particle range per node
//   first_children read   N u32          first child or NONE (0xffffffff)
//   parents        read   N u32          parent or NONE
//   has_local      read   N u32          1 when the node or an ancestor has M2L entries
//   particle_nodes read   n u32          the leaf node of each particle
//   centres        read   3 N f64        expansion centres in the frame
//   grid           read   3 N i64        integer centres (half cells): shifts are
//                                        (grid[to] - grid[from]) * half_unit, as the CPU
//   m2l_offsets    read   N + 1 u32      CSR offsets; m2l_sources read M2L sources
//   m2l_directions, parent_directions
//                  read   M2L, N u32     direction index per M2L entry and per node's
//                                        offset from its parent, or FMM_NONE (fmm_*_dir)
//   directions     read   f64            fmm_stride(p) per direction: E+_0..E+_p, E-_1..E-_p
//                                        (rotation.rs's RotationTable; fmm_*_dir)
//   tables         read   f64            s, 1/s, j!, 1/j!, 1/((n-m)(n+m)) (degrees to
//                                        p + 1), then J (stride(p)): see fmm_tables_*
//   multipoles     rw     N nc double2   by node, then (n, m) degree-major
//   locals         rw     N nc double2
//   acc            rw     n float4       [ax, ay, az, pot] per body, tree order (fmm_l2p
//                                        adds to what fmm_p2p wrote)
//
// Invariants: 1 <= p <= FMM_MAX_ORDER; every index is below its array's length (the host
//   built the arrays from one view and one plan); levels run in dependency order
//   (p2m, m2m deepest first, m2l, l2l from level 1 down, then p2p and l2p).
//
// Registers (ptxas, sm_90, cargo xtask kernels): fmm_p2m 56 (12 bytes spilled), fmm_m2m 64,
//   fmm_m2l 72 (8 bytes spilled), fmm_l2l 80, fmm_m2m_warp 48, fmm_m2l_warp 59,
//   fmm_l2l_warp 48 (no spills), fmm_m2m_dir 62, fmm_m2l_dir 63, fmm_l2l_dir 62 (no spills,
//   built for FMM_DIR_MIN_BLOCKS = 4 blocks per SM), fmm_l2p 54; (fmm_m2m_dir / fmm_l2l_dir
//   had 60 registers and no spills while the direct factors were divisions; with selected
//   constants ptxas chose 48 and spilled 16-36 bytes, and fmm_m2l_dir, 59 before, went to
//   48 registers and 40/100 bytes of spill with the direct prologue: the launch bounds'
//   minimum of 4 blocks gives ptxas the 64-register budget of the occupancy the shape
//   already had, and removes all three); dynamic shared memory as above. The block
//   shape's f64 instruction sequences (PTX) are those of the version measured at 104f32d.
//   (fmm_m2l_warp spilled 8 bytes when the prologue's lanes chose their store pointer by
//   lane; two predicated stores do not. The pass helpers take the s and 1/s tables as
//   pointers: computing them inside each helper cost the baseline's fmm_m2l 12/20 bytes
//   of spill.)
//
// Measured cost (H200, 104f32d, block shape): M2L 91.9 ms at 1M uniform, p = 8; the
//   device passes 99.1 ms (docs/performance/fmm.md). The warp shape (d22d374): M2L 69.7 ms,
//   device passes 76.6 ms. The direction-table shape (2d20674): M2L 39.7 ms, device passes
//   46.3 ms. Step three (the direct prologue): not measured yet.

typedef unsigned int u32;
typedef long long i64;

#define FMM_MAX_ORDER 16u
#define FMM_THREADS 128u
#define FMM_SLOTS 2u
#define FMM_WARP 32u
#define FMM_WARP_NODES 8u
#define FMM_WARP_THREADS 256u
#define FMM_L2P_THREADS 128u
// Resident blocks per SM the direction-table kernels are built for (their
// __launch_bounds__ minimum): 4 x FMM_WARP_THREADS threads x 64 registers is the SM's
// 65,536, the occupancy the warp shape has at 59 registers. Without it ptxas chose 48
// registers for fmm_*_dir and spilled (fmm_m2l_dir 40/100 bytes once the direct pairs had
// their own prologue); with it, 62-63 and no spills (sm_90).
#define FMM_DIR_MIN_BLOCKS 4
#define FMM_NONE 0xffffffffu

// ---- layout helpers ----------------------------------------------------------------------

__device__ __forceinline__ u32 fmm_nc(u32 p) { return (p + 1) * (p + 2) / 2; }
__device__ __forceinline__ u32 fmm_index(u32 n, u32 m) { return n * (n + 1) / 2 + m; }
__device__ __forceinline__ u32 fmm_plus_offset(u32 n) { return n * (n + 1) * (2 * n + 1) / 6; }
__device__ __forceinline__ u32 fmm_minus_offset(u32 n) { return (n - 1) * n * (2 * n - 1) / 6; }
__device__ __forceinline__ u32 fmm_stride(u32 p) { return fmm_plus_offset(p + 1) + fmm_minus_offset(p + 1); }
__device__ __forceinline__ u32 fmm_order_start(u32 p, u32 m) { return m * (p + 1) - (m * (m > 0 ? m - 1 : 0)) / 2; }

// The table layout (crate::gpu::fmm::plan::pack_tables writes the same).
__device__ __forceinline__ u32 fmm_tables_inv_s(u32 p) { return fmm_nc(p + 1); }
__device__ __forceinline__ u32 fmm_tables_fact(u32 p) { return 2 * fmm_nc(p + 1); }
__device__ __forceinline__ u32 fmm_tables_inv_fact(u32 p) { return 2 * fmm_nc(p + 1) + 2 * p + 3; }
__device__ __forceinline__ u32 fmm_tables_inv_nm(u32 p) { return 2 * fmm_nc(p + 1) + 4 * p + 6; }
__device__ __forceinline__ u32 fmm_tables_j(u32 p) { return 3 * fmm_nc(p + 1) + 4 * p + 6; }

// ---- f64 arithmetic, correctly rounded and never contracted -------------------------------
// Every product and sum is an _rn intrinsic, so NVRTC cannot fuse a multiply-add (Rust never
// does): with the CPU's operations in the CPU's order the expansions equal the CPU's bit
// for bit. A fused variant (twice the multiply-add rate) is future performance work.

__device__ __forceinline__ double fmm_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double fmm_add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double fmm_sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double fmm_div(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ double fmm_sqrt(double a) { return __dsqrt_rn(a); }
// a += b * c, as two roundings.
__device__ __forceinline__ void fmm_acc(double& a, double b, double c) { a = fmm_add(a, fmm_mul(b, c)); }
// x * x + y * y + z * z, left to right.
__device__ __forceinline__ double fmm_norm2(double x, double y, double z) {
    return fmm_add(fmm_add(fmm_mul(x, x), fmm_mul(y, y)), fmm_mul(z, z));
}

// ---- complex arithmetic (the CPU's Complex: every operation visible) ---------------------

__device__ __forceinline__ double2 cx(double re, double im) { return make_double2(re, im); }
__device__ __forceinline__ double2 cx_mul(double2 a, double2 b) {
    return make_double2(fmm_sub(fmm_mul(a.x, b.x), fmm_mul(a.y, b.y)), fmm_add(fmm_mul(a.x, b.y), fmm_mul(a.y, b.x)));
}
__device__ __forceinline__ double2 cx_conj(double2 a) { return make_double2(a.x, -a.y); }
__device__ __forceinline__ double2 cx_scale(double2 a, double s) { return make_double2(fmm_mul(a.x, s), fmm_mul(a.y, s)); }
__device__ __forceinline__ double2 cx_add(double2 a, double2 b) { return make_double2(fmm_add(a.x, b.x), fmm_add(a.y, b.y)); }
__device__ __forceinline__ double2 cx_sub(double2 a, double2 b) { return make_double2(fmm_sub(a.x, b.x), fmm_sub(a.y, b.y)); }
// Re(a conj(b)).
__device__ __forceinline__ double cx_re_conj(double2 a, double2 b) { return fmm_add(fmm_mul(a.x, b.x), fmm_mul(a.y, b.y)); }

// ---- the shared memory of a translation ------------------------------------------------

// Doubles of dynamic shared memory per block of the translation kernels (the host's
// gpu::fmm::kernels::shared_bytes computes 8 times this).
__device__ __forceinline__ u32 fmm_shared_doubles(u32 p) {
    return fmm_stride(p) + 8 * fmm_nc(p) + 1 + 12 * (p + 1) + 2 * p + 8;
}

struct FmmShared {
    double* j;     // the quarter turn's blocks
    double *xr, *xi, *yr, *yi, *or_, *oi, *cr, *ci;
    double2 *load, *to_shift, *from_shift, *store, *mid, *phase;
    double* powers;  // 2p + 8
};

__device__ __forceinline__ FmmShared fmm_carve(double* base, u32 p) {
    FmmShared s;
    const u32 nc = fmm_nc(p);
    double* at = base;
    s.j = at;
    at += fmm_stride(p);
    s.xr = at;
    at += nc;
    s.xi = at;
    at += nc;
    s.yr = at;
    at += nc;
    s.yi = at;
    at += nc;
    s.or_ = at;
    at += nc;
    s.oi = at;
    at += nc;
    s.cr = at;
    at += nc;
    s.ci = at;
    at += nc;
    // double2 need 16-byte alignment (the base is aligned): one pad double when the
    // count so far is odd (fmm_shared_doubles counts it always).
    if (((at - base) & 1) != 0) at += 1;
    double2* f = reinterpret_cast<double2*>(at);
    s.load = f;
    s.to_shift = f + (p + 1);
    s.from_shift = f + 2 * (p + 1);
    s.store = f + 3 * (p + 1);
    s.mid = f + 4 * (p + 1);
    s.phase = f + 5 * (p + 1);
    s.powers = at + 12 * (p + 1);
    return s;
}

// The coefficients a thread owns: i, its degree n and order m, its order-major position o.
struct FmmSlots {
    u32 i[FMM_SLOTS], n[FMM_SLOTS], m[FMM_SLOTS], o[FMM_SLOTS];
    bool valid[FMM_SLOTS];
};

__device__ __forceinline__ FmmSlots fmm_slots(u32 p) {
    FmmSlots s;
    const u32 nc = fmm_nc(p);
#pragma unroll
    for (u32 k = 0; k < FMM_SLOTS; ++k) {
        const u32 i = threadIdx.x + k * FMM_THREADS;
        u32 n = 0;
        while (fmm_index(n + 1, 0) <= i) ++n;
        const u32 m = i - fmm_index(n, 0);
        s.i[k] = i;
        s.n[k] = n;
        s.m[k] = m;
        s.o[k] = fmm_order_start(p, m) + (n - m);
        s.valid[k] = i < nc;
    }
    return s;
}

// i^m.
__device__ __forceinline__ double2 fmm_i_pow(u32 m) {
    switch (m & 3u) {
        case 0: return cx(1.0, 0.0);
        case 1: return cx(0.0, 1.0);
        case 2: return cx(-1.0, 0.0);
        default: return cx(0.0, -1.0);
    }
}

#define FMM_M2M 0
#define FMM_M2L 1
#define FMM_L2L 2

// ---- the per-coefficient arithmetic of a translation (both launch shapes) ---------------
// One function per pass and coefficient: the shapes differ only in which thread computes
// which coefficient and where the intermediates live, never in an operation or its order.

// translate.rs's per-order constants of the quarter turn: f_in = i^m / w_m (load,
// from_shift), f_out = i^m w_m (to_shift, store).
__device__ __forceinline__ void fmm_order_factors(u32 m, double2& f_in, double2& f_out) {
    const double w = m == 0 ? 2.0 : 1.0;
    const double2 i = fmm_i_pow(m);
    f_in = cx_scale(i, fmm_div(1.0, w));
    f_out = cx_scale(i, w);
}

// The load and store factors of order m from the azimuth phase ph (prepare of translate.rs).
template <int KIND>
__device__ __forceinline__ double2 fmm_load_factor(double2 f_in, double2 ph) {
    return cx_mul(f_in, KIND == FMM_L2L ? cx_conj(ph) : ph);
}
template <int KIND>
__device__ __forceinline__ double2 fmm_store_factor(double2 f_out, double2 ph) {
    return cx_mul(f_out, KIND == FMM_M2M ? cx_conj(ph) : ph);
}

// load: (src * load[m]) * f, f = s (M2M, M2L) or 1/s (L2L).
template <int KIND>
__device__ __forceinline__ double2 fmm_load_one(double2 src, double2 factor, const double* __restrict__ sv,
                                                const double* __restrict__ inv_s, u32 i) {
    const double f = KIND == FMM_L2L ? inv_s[i] : sv[i];
    return cx_scale(cx_mul(src, factor), f);
}

// One output of a matrix pass of the quarter turn over degree-major (in_r, in_i):
// out_n[a] = sum_b E+_n[b][a] in_n[b] (real part), sum_(b>=1) E-_n[b-1][a-1] in_n[b]
// (imaginary part, 0 for a = 0): rotation.rs's axpy; `j_minus` is J's E- part (J +
// fmm_plus_offset(p + 1)). With `mid` (0 none, 1 forward, 2 backward) the output is
// multiplied by mids[a] or its conjugate (the quarter turn's middle phase pass, folded in).
__device__ __forceinline__ double2 fmm_rotate_one(const double* j, const double* j_minus, u32 n, u32 a,
                                                  const double* in_r, const double* in_i, const double2* mids,
                                                  int mid) {
    const u32 base = fmm_index(n, 0);
    const double* plus = j + fmm_plus_offset(n);
    double re = 0.0;
    for (u32 b = 0; b <= n; ++b) fmm_acc(re, plus[b * (n + 1) + a], in_r[base + b]);
    double im = 0.0;
    if (a > 0) {
        const double* minus = j_minus + fmm_minus_offset(n);
        for (u32 b = 1; b <= n; ++b) fmm_acc(im, minus[(b - 1) * n + (a - 1)], in_i[base + b]);
    }
    if (mid == 0) return cx(re, im);
    return cx_mul(cx(re, im), mid == 1 ? mids[a] : cx_conj(mids[a]));
}

// to order-major: (x * to_shift[m]) * f, f = 1/s (M2M, M2L) or s (L2L); M2L conjugates.
template <int KIND>
__device__ __forceinline__ double2 fmm_to_order_one(double2 x, double2 to_shift, const double* __restrict__ sv,
                                                    const double* __restrict__ inv_s, u32 i) {
    const double f = KIND == FMM_L2L ? sv[i] : inv_s[i];
    const double2 v = cx_mul(x, to_shift);
    return cx(fmm_mul(v.x, f), KIND == FMM_M2L ? fmm_mul(fmm_mul(v.y, f), -1.0) : fmm_mul(v.y, f));
}

// The shift of order m at degree n: position q = n - m of the order's run start..start +
// len of the order-major arrays (or_, oi), with the pair's powers.
template <int KIND>
__device__ __forceinline__ double2 fmm_shift_one(const double* powers, const double* or_, const double* oi, u32 p,
                                                 u32 n, u32 m) {
    const u32 q = n - m;
    const u32 len = p - m + 1;
    const u32 start = fmm_order_start(p, m);
    double ar = 0.0, ai = 0.0;
    if (KIND == FMM_M2L) {
        for (u32 j = 0; j < len; ++j) {
            const double f = powers[2 * m + j + q];
            fmm_acc(ar, f, or_[start + j]);
            fmm_acc(ai, f, oi[start + j]);
        }
    } else if (KIND == FMM_M2M) {
        for (u32 j = 0; j <= q; ++j) {
            const double f = powers[q - j];
            fmm_acc(ar, f, or_[start + j]);
            fmm_acc(ai, f, oi[start + j]);
        }
    } else {
        for (u32 kk = q; kk < len; ++kk) {
            const double f = powers[kk - q];
            fmm_acc(ar, f, or_[start + kk]);
            fmm_acc(ai, f, oi[start + kk]);
        }
    }
    return cx(ar, ai);
}

// from order-major: (c * f) * from_shift[m], f = s (M2M), (-1)^(n+m) / s (M2L), 1/s (L2L).
template <int KIND>
__device__ __forceinline__ double2 fmm_from_order_one(double2 c, double2 from_shift, const double* __restrict__ sv,
                                                      const double* __restrict__ inv_s, u32 i, u32 n, u32 m) {
    double f;
    if (KIND == FMM_M2M) {
        f = sv[i];
    } else if (KIND == FMM_M2L) {
        f = fmm_mul(((n + m) & 1u) ? -1.0 : 1.0, inv_s[i]);
    } else {
        f = inv_s[i];
    }
    return cx_mul(cx_scale(c, f), from_shift);
}

// store: acc + (x * store[m]) * f, f = 1/s (M2M) or s (M2L, L2L).
template <int KIND>
__device__ __forceinline__ double2 fmm_store_one(double2 acc, double2 x, double2 factor, const double* __restrict__ sv,
                                                 const double* __restrict__ inv_s, u32 i) {
    const double f = KIND == FMM_M2M ? inv_s[i] : sv[i];
    return cx_add(acc, cx_scale(cx_mul(x, factor), f));
}

// ---- block per node (the baseline shape) -------------------------------------------------

// The per-pair factors (thread 0: frame and prepare of translate.rs; thread 32: the shift
// powers), for the shift t.
template <int KIND>
__device__ __forceinline__ void fmm_prologue(const FmmShared& s, u32 p, double tx, double ty, double tz,
                                             const double* __restrict__ tables) {
    const double rho2 = fmm_add(fmm_mul(tx, tx), fmm_mul(ty, ty));
    const double rho = fmm_sqrt(rho2);
    const double tau = fmm_sqrt(fmm_add(rho2, fmm_mul(tz, tz)));
    if (threadIdx.x == 0) {
        double2 unit = cx(1.0, 0.0);
        if (rho2 > 0.0) {
            const double inv = fmm_div(1.0, rho);
            unit = cx(fmm_mul(tx, inv), fmm_mul(ty, inv));
        }
        const double2 cs = cx(fmm_div(tz, tau), fmm_div(rho, tau));
        double2 ph = cx(1.0, 0.0);
        double2 mid = cx(1.0, 0.0);
        const double2 u = cx(-cs.x, cs.y);
        for (u32 m = 0; m <= p; ++m) {
            if (m > 0) ph = cx_mul(ph, unit);
            s.phase[m] = ph;
            double2 f_in, f_out;
            fmm_order_factors(m, f_in, f_out);
            s.load[m] = fmm_load_factor<KIND>(f_in, ph);
            s.to_shift[m] = f_out;
            s.from_shift[m] = f_in;
            s.store[m] = fmm_store_factor<KIND>(f_out, ph);
            s.mid[m] = mid;
            mid = cx_mul(mid, u);
        }
    } else if (threadIdx.x == 32) {
        if (KIND == FMM_M2L) {
            const double* fact = tables + fmm_tables_fact(p);
            const double inv_tau = fmm_div(1.0, tau);
            double power = inv_tau;
            for (u32 j = 0; j <= 2 * p; ++j) {
                s.powers[j] = fmm_mul(fact[j], power);
                power = fmm_mul(power, inv_tau);
            }
        } else {
            const double* inv_fact = tables + fmm_tables_inv_fact(p);
            double power = 1.0;
            for (u32 k = 0; k <= p; ++k) {
                s.powers[k] = fmm_mul(power, inv_fact[k]);
                power = fmm_mul(power, tau);
            }
        }
    }
}

// One matrix pass of the quarter turn over degree-major (in_r, in_i) into (out_r, out_i)
// for the thread's coefficients (fmm_rotate_one each).
__device__ __forceinline__ void fmm_axpy(const FmmShared& s, const FmmSlots& sl, u32 p, const double* in_r,
                                         const double* in_i, double* out_r, double* out_i, int mid) {
    const double* j_minus = s.j + fmm_plus_offset(p + 1);
#pragma unroll
    for (u32 k = 0; k < FMM_SLOTS; ++k) {
        if (!sl.valid[k]) continue;
        const double2 v = fmm_rotate_one(s.j, j_minus, sl.n[k], sl.m[k], in_r, in_i, s.mid, mid);
        out_r[sl.i[k]] = v.x;
        out_i[sl.i[k]] = v.y;
    }
}

// One translation of `src` (nc double2, global memory) by the shift t, added to the
// thread's accumulators `acc` (what translate.rs's m2m / m2l / l2l add to `dst`). Every
// thread of the block calls it (barriers inside); the caller synchronises before the
// first call (J loaded).
template <int KIND>
__device__ __forceinline__ void fmm_translate(const FmmShared& s, const FmmSlots& sl, u32 p,
                                              const double* __restrict__ tables, const double2* __restrict__ src,
                                              double tx, double ty, double tz, double2 acc[FMM_SLOTS]) {
    const double* sv = tables;
    const double* inv_s = tables + fmm_tables_inv_s(p);
    fmm_prologue<KIND>(s, p, tx, ty, tz, tables);
    __syncthreads();
#pragma unroll
    for (u32 k = 0; k < FMM_SLOTS; ++k) {
        if (!sl.valid[k]) continue;
        const u32 i = sl.i[k];
        const double2 v = fmm_load_one<KIND>(src[i], s.load[sl.m[k]], sv, inv_s, i);
        s.xr[i] = v.x;
        s.xi[i] = v.y;
    }
    __syncthreads();
    fmm_axpy(s, sl, p, s.xr, s.xi, s.yr, s.yi, 1);
    __syncthreads();
    fmm_axpy(s, sl, p, s.yr, s.yi, s.xr, s.xi, 0);
    __syncthreads();  // emulation: not needed (each thread reads back only what it wrote); kept in the baseline
#pragma unroll
    for (u32 k = 0; k < FMM_SLOTS; ++k) {
        if (!sl.valid[k]) continue;
        const u32 i = sl.i[k];
        const double2 v = fmm_to_order_one<KIND>(cx(s.xr[i], s.xi[i]), s.to_shift[sl.m[k]], sv, inv_s, i);
        s.or_[sl.o[k]] = v.x;
        s.oi[sl.o[k]] = v.y;
    }
    __syncthreads();
#pragma unroll
    for (u32 k = 0; k < FMM_SLOTS; ++k) {
        if (!sl.valid[k]) continue;
        const double2 c = fmm_shift_one<KIND>(s.powers, s.or_, s.oi, p, sl.n[k], sl.m[k]);
        s.cr[sl.o[k]] = c.x;
        s.ci[sl.o[k]] = c.y;
    }
    __syncthreads();  // emulation: not needed (each thread reads back only what it wrote); kept in the baseline
#pragma unroll
    for (u32 k = 0; k < FMM_SLOTS; ++k) {
        if (!sl.valid[k]) continue;
        const u32 i = sl.i[k];
        const double2 v = fmm_from_order_one<KIND>(cx(s.cr[sl.o[k]], s.ci[sl.o[k]]), s.from_shift[sl.m[k]], sv,
                                                   inv_s, i, sl.n[k], sl.m[k]);
        s.xr[i] = v.x;
        s.xi[i] = v.y;
    }
    __syncthreads();
    fmm_axpy(s, sl, p, s.xr, s.xi, s.yr, s.yi, 2);
    __syncthreads();
    fmm_axpy(s, sl, p, s.yr, s.yi, s.xr, s.xi, 0);
    __syncthreads();  // emulation: not needed (each thread reads back only what it wrote); kept in the baseline
#pragma unroll
    for (u32 k = 0; k < FMM_SLOTS; ++k) {
        if (!sl.valid[k]) continue;
        const u32 i = sl.i[k];
        acc[k] = fmm_store_one<KIND>(acc[k], cx(s.xr[i], s.xi[i]), s.store[sl.m[k]], sv, inv_s, i);
    }
    __syncthreads();  // the next pair's prologue overwrites the factors
}


// J into shared memory (once per block).
__device__ __forceinline__ void fmm_load_j(const FmmShared& s, u32 p, const double* __restrict__ tables) {
    const double* j = tables + fmm_tables_j(p);
    const u32 len = fmm_stride(p);
    for (u32 e = threadIdx.x; e < len; e += blockDim.x) s.j[e] = j[e];
    __syncthreads();  // emulation: not needed (the first prologue's barrier follows); kept in the baseline
}

// (grid[to] - grid[from]) * half_unit, as FmmNodes::shift.
__device__ __forceinline__ void fmm_shift(const i64* __restrict__ grid, u32 to, u32 from, double hx, double hy,
                                          double hz, double& tx, double& ty, double& tz) {
    tx = fmm_mul((double)(grid[3 * (size_t)to] - grid[3 * (size_t)from]), hx);
    ty = fmm_mul((double)(grid[3 * (size_t)to + 1] - grid[3 * (size_t)from + 1]), hy);
    tz = fmm_mul((double)(grid[3 * (size_t)to + 2] - grid[3 * (size_t)from + 2]), hz);
}

// ---- P2M ----------------------------------------------------------------------------------

// Y_n^m(d) by the CPU's recurrences (Tables::regular): the diagonal to m, then the column
// to n.
__device__ __forceinline__ double2 fmm_regular(double dx, double dy, double dz, u32 n, u32 m,
                                               const double* __restrict__ inv_nm) {
    const double r2 = fmm_norm2(dx, dy, dz);
    const double2 xi = cx(dx, dy);
    double2 diag = cx(1.0, 0.0);
    for (u32 k = 1; k <= m; ++k) diag = cx_scale(cx_mul(xi, diag), fmm_div(-0.5, (double)k));
    if (n == m) return diag;
    double2 prev2 = diag;
    double2 prev1 = cx_scale(diag, dz);
    for (u32 k = m + 2; k <= n; ++k) {
        const double2 a = cx_scale(prev1, fmm_mul((double)(2 * k - 1), dz));
        const double2 b = cx_scale(prev2, r2);
        const double2 cur = cx_scale(cx_sub(a, b), inv_nm[fmm_index(k, m)]);
        prev2 = prev1;
        prev1 = cur;
    }
    return prev1;
}

extern "C" __global__ void __launch_bounds__(FMM_THREADS)
    fmm_p2m(const float* __restrict__ bodies, const u32* __restrict__ leaves, const u32* __restrict__ begins,
            const u32* __restrict__ counts, const double* __restrict__ centres, const double* __restrict__ tables,
            double2* __restrict__ multipoles, u32 leaves_count, u32 p, double origin_x, double origin_y,
            double origin_z, double inv_scale) {
    const FmmSlots sl = fmm_slots(p);
    const u32 nc = fmm_nc(p);
    const double* inv_nm = tables + fmm_tables_inv_nm(p);
    for (u32 l = blockIdx.x; l < leaves_count; l += gridDim.x) {
        const u32 node = leaves[l];
        const u32 begin = begins[node], count = counts[node];
        const double cxn = centres[3 * (size_t)node], cyn = centres[3 * (size_t)node + 1],
                     czn = centres[3 * (size_t)node + 2];
        double2 acc[FMM_SLOTS];
#pragma unroll
        for (u32 k = 0; k < FMM_SLOTS; ++k) acc[k] = cx(0.0, 0.0);
        for (u32 j = begin; j < begin + count; ++j) {
            const float4 b = reinterpret_cast<const float4*>(bodies)[j];
            const double dx = fmm_sub(fmm_mul(fmm_sub((double)b.x, origin_x), inv_scale), cxn);
            const double dy = fmm_sub(fmm_mul(fmm_sub((double)b.y, origin_y), inv_scale), cyn);
            const double dz = fmm_sub(fmm_mul(fmm_sub((double)b.z, origin_z), inv_scale), czn);
            const double q = (double)b.w;
#pragma unroll
            for (u32 k = 0; k < FMM_SLOTS; ++k) {
                if (!sl.valid[k]) continue;
                const double2 y = fmm_regular(dx, dy, dz, sl.n[k], sl.m[k], inv_nm);
                acc[k] = cx_add(acc[k], cx_scale(cx_conj(y), q));
            }
        }
#pragma unroll
        for (u32 k = 0; k < FMM_SLOTS; ++k) {
            if (sl.valid[k]) multipoles[(size_t)node * nc + sl.i[k]] = acc[k];
        }
    }
}

// ---- M2M, M2L, L2L -------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(FMM_THREADS)
    fmm_m2m(const i64* __restrict__ grid, const u32* __restrict__ first_children, const u32* __restrict__ counts,
            const double* __restrict__ tables, double2* __restrict__ multipoles, u32 first, u32 count, u32 children,
            u32 p, double hx, double hy, double hz) {
    extern __shared__ __align__(16) double fmm_smem[];
    const FmmShared s = fmm_carve(fmm_smem, p);
    const FmmSlots sl = fmm_slots(p);
    const u32 nc = fmm_nc(p);
    fmm_load_j(s, p, tables);
    for (u32 b = blockIdx.x; b < count; b += gridDim.x) {
        const u32 node = first + b;
        const u32 child0 = first_children[node];
        if (child0 == FMM_NONE) continue;  // a leaf: fmm_p2m wrote it (uniform per block)
        double2 acc[FMM_SLOTS];
#pragma unroll
        for (u32 k = 0; k < FMM_SLOTS; ++k) acc[k] = cx(0.0, 0.0);
        if (counts[node] > 0) {
            for (u32 c = child0; c < child0 + children; ++c) {
                if (counts[c] == 0) continue;
                double tx, ty, tz;
                fmm_shift(grid, c, node, hx, hy, hz, tx, ty, tz);
                fmm_translate<FMM_M2M>(s, sl, p, tables, multipoles + (size_t)c * nc, tx, ty, tz, acc);
            }
        }
#pragma unroll
        for (u32 k = 0; k < FMM_SLOTS; ++k) {
            if (sl.valid[k]) multipoles[(size_t)node * nc + sl.i[k]] = acc[k];
        }
    }
}

extern "C" __global__ void __launch_bounds__(FMM_THREADS)
    fmm_m2l(const i64* __restrict__ grid, const u32* __restrict__ m2l_offsets, const u32* __restrict__ m2l_sources,
            const double* __restrict__ tables, const double2* __restrict__ multipoles, double2* __restrict__ locals,
            u32 nodes, u32 p, double hx, double hy, double hz) {
    extern __shared__ __align__(16) double fmm_smem[];
    const FmmShared s = fmm_carve(fmm_smem, p);
    const FmmSlots sl = fmm_slots(p);
    const u32 nc = fmm_nc(p);
    fmm_load_j(s, p, tables);
    for (u32 t = blockIdx.x; t < nodes; t += gridDim.x) {
        double2 acc[FMM_SLOTS];
#pragma unroll
        for (u32 k = 0; k < FMM_SLOTS; ++k) acc[k] = cx(0.0, 0.0);
        const u32 end = m2l_offsets[t + 1];
        for (u32 e = m2l_offsets[t]; e < end; ++e) {
            const u32 src = m2l_sources[e];
            double tx, ty, tz;
            fmm_shift(grid, t, src, hx, hy, hz, tx, ty, tz);
            fmm_translate<FMM_M2L>(s, sl, p, tables, multipoles + (size_t)src * nc, tx, ty, tz, acc);
        }
#pragma unroll
        for (u32 k = 0; k < FMM_SLOTS; ++k) {
            if (sl.valid[k]) locals[(size_t)t * nc + sl.i[k]] = acc[k];
        }
    }
}

extern "C" __global__ void __launch_bounds__(FMM_THREADS)
    fmm_l2l(const i64* __restrict__ grid, const u32* __restrict__ parents, const u32* __restrict__ counts,
            const u32* __restrict__ has_local, const double* __restrict__ tables, double2* __restrict__ locals,
            u32 first, u32 count, u32 p, double hx, double hy, double hz) {
    extern __shared__ __align__(16) double fmm_smem[];
    const FmmShared s = fmm_carve(fmm_smem, p);
    const FmmSlots sl = fmm_slots(p);
    const u32 nc = fmm_nc(p);
    fmm_load_j(s, p, tables);
    for (u32 b = blockIdx.x; b < count; b += gridDim.x) {
        const u32 node = first + b;
        const u32 parent = parents[node];
        if (parent == FMM_NONE || has_local[parent] == 0 || counts[node] == 0) continue;  // uniform per block
        double2 acc[FMM_SLOTS];
#pragma unroll
        for (u32 k = 0; k < FMM_SLOTS; ++k) {
            acc[k] = sl.valid[k] ? locals[(size_t)node * nc + sl.i[k]] : cx(0.0, 0.0);
        }
        double tx, ty, tz;
        fmm_shift(grid, node, parent, hx, hy, hz, tx, ty, tz);
        fmm_translate<FMM_L2L>(s, sl, p, tables, locals + (size_t)parent * nc, tx, ty, tz, acc);
#pragma unroll
        for (u32 k = 0; k < FMM_SLOTS; ++k) {
            if (sl.valid[k]) locals[(size_t)node * nc + sl.i[k]] = acc[k];
        }
    }
}


// ---- warp per node -------------------------------------------------------------------------
// One warp per target node, several nodes per block (blockDim.x / FMM_WARP of them, at most
// FMM_WARP_NODES). The block shares the pair-independent data (J, the per-order constants,
// the coefficient table), loaded once behind the only block barrier; each warp has its own
// slice (accumulators, per-pair factors, two split work arrays, powers) and synchronises
// with __syncwarp only. Lanes own the coefficients i = lane + FMM_WARP k (a runtime loop: any
// order up to FMM_MAX_ORDER, no per-slot registers; the accumulators live in the warp's
// slice, each touched by its owner only).

// Doubles of the block-shared part: f_in, f_out (p + 1 double2 each), J, the coefficient
// table (nc u32), rounded up to even (the slices hold double2).
__device__ __forceinline__ u32 fmm_warp_block_doubles(u32 p) {
    const u32 d = 4 * (p + 1) + fmm_stride(p) + (fmm_nc(p) + 1) / 2;
    return (d + 1) & ~1u;
}

// Doubles of one warp's slice: acc (nc double2), phase and mid (p + 1 double2 each), the
// split arrays x and y (4 nc), the powers (2p + 2).
__device__ __forceinline__ u32 fmm_warp_slice_doubles(u32 p) { return 6 * fmm_nc(p) + 6 * (p + 1); }

// Doubles of dynamic shared memory per block of the warp shape with `warps` warps (the
// host's gpu::fmm::kernels::warp_shared_bytes computes 8 times this).
__device__ __forceinline__ u32 fmm_warp_shared_doubles(u32 p, u32 warps) {
    return fmm_warp_block_doubles(p) + warps * fmm_warp_slice_doubles(p);
}

struct FmmWarpBlock {
    double2 *f_in, *f_out;  // i^m / w_m and i^m w_m per order
    double* j;              // the quarter turn's blocks
    u32* coef;              // per coefficient: n | m << 8 | o << 16 (o: order-major position)
};

struct FmmWarpSlice {
    double2* acc;               // the node's sum, by coefficient
    double2 *phase, *mid;       // the pair's azimuth phases and middle factors, by order
    double *xr, *xi, *yr, *yi;  // the work arrays (degree-major or order-major by pass)
    double* powers;             // the pair's shift powers
};

__device__ __forceinline__ u32 fmm_coef_n(u32 c) { return c & 0xffu; }
__device__ __forceinline__ u32 fmm_coef_m(u32 c) { return (c >> 8) & 0xffu; }
__device__ __forceinline__ u32 fmm_coef_o(u32 c) { return c >> 16; }

__device__ __forceinline__ FmmWarpBlock fmm_warp_block(double* base, u32 p) {
    FmmWarpBlock b;
    b.f_in = reinterpret_cast<double2*>(base);
    b.f_out = b.f_in + (p + 1);
    b.j = base + 4 * (p + 1);
    b.coef = reinterpret_cast<u32*>(b.j + fmm_stride(p));
    return b;
}

__device__ __forceinline__ FmmWarpSlice fmm_warp_slice(double* base, u32 p, u32 warp) {
    const u32 nc = fmm_nc(p);
    double* at = base + fmm_warp_block_doubles(p) + warp * fmm_warp_slice_doubles(p);
    FmmWarpSlice w;
    w.acc = reinterpret_cast<double2*>(at);
    w.phase = w.acc + nc;
    w.mid = w.phase + (p + 1);
    w.xr = at + 2 * nc + 4 * (p + 1);
    w.xi = w.xr + nc;
    w.yr = w.xi + nc;
    w.yi = w.yr + nc;
    w.powers = w.yi + nc;
    return w;
}

// The block-shared part, by every thread of the block, then the block's one barrier.
__device__ __forceinline__ void fmm_warp_block_load(const FmmWarpBlock& b, u32 p, const double* __restrict__ tables) {
    const double* j = tables + fmm_tables_j(p);
    const u32 len = fmm_stride(p), nc = fmm_nc(p);
    for (u32 e = threadIdx.x; e < len; e += blockDim.x) b.j[e] = j[e];
    for (u32 m = threadIdx.x; m <= p; m += blockDim.x) fmm_order_factors(m, b.f_in[m], b.f_out[m]);
    for (u32 i = threadIdx.x; i < nc; i += blockDim.x) {
        u32 n = 0;
        while (fmm_index(n + 1, 0) <= i) ++n;
        const u32 m = i - fmm_index(n, 0);
        b.coef[i] = n | (m << 8) | ((fmm_order_start(p, m) + (n - m)) << 16);
    }
    __syncthreads();
}

// The per-pair factors of the shift t, the CPU's recurrences in its order: every lane
// computes them (uniform: no divergence, the same issue cost as one lane), lane 0 stores
// the phases unit^m, lane 1 the middle factors u^m (one recurrence z_m = z_(m-1) step on
// two lanes, so both chains advance in the same instructions), lane 2 the powers.
template <int KIND>
__device__ __forceinline__ void fmm_warp_prologue(const FmmWarpSlice& w, u32 lane, u32 p, double tx, double ty,
                                                  double tz, const double* __restrict__ tables) {
    const double rho2 = fmm_add(fmm_mul(tx, tx), fmm_mul(ty, ty));
    const double rho = fmm_sqrt(rho2);
    const double tau = fmm_sqrt(fmm_add(rho2, fmm_mul(tz, tz)));
    double2 unit = cx(1.0, 0.0);
    if (rho2 > 0.0) {
        const double inv = fmm_div(1.0, rho);
        unit = cx(fmm_mul(tx, inv), fmm_mul(ty, inv));
    }
    const double2 cs = cx(fmm_div(tz, tau), fmm_div(rho, tau));
    const double2 u = cx(-cs.x, cs.y);
    const double2 step = (lane & 1u) ? u : unit;
    const double* fact = tables + (KIND == FMM_M2L ? fmm_tables_fact(p) : fmm_tables_inv_fact(p));
    const double ratio = KIND == FMM_M2L ? fmm_div(1.0, tau) : tau;
    double power = KIND == FMM_M2L ? ratio : 1.0;
    const u32 last = KIND == FMM_M2L ? 2 * p : p;
    double2 z = cx(1.0, 0.0);
    for (u32 j = 0; j <= last; ++j) {
        if (j <= p) {
            if (j > 0) z = cx_mul(z, step);
            if (lane == 0) w.phase[j] = z;
            if (lane == 1) w.mid[j] = z;
        }
        const double v = KIND == FMM_M2L ? fmm_mul(fact[j], power) : fmm_mul(power, fact[j]);
        if (lane == 2) w.powers[j] = v;
        power = fmm_mul(power, ratio);
    }
}

// One matrix pass (fmm_rotate_one) over the lane's coefficients.
__device__ __forceinline__ void fmm_warp_rotate(const FmmWarpBlock& b, const FmmWarpSlice& w, u32 lane, u32 p,
                                                const double* in_r, const double* in_i, double* out_r, double* out_i,
                                                int mid) {
    const double* j_minus = b.j + fmm_plus_offset(p + 1);
    for (u32 i = lane; i < fmm_nc(p); i += FMM_WARP) {
        const u32 c = b.coef[i];
        const double2 v = fmm_rotate_one(b.j, j_minus, fmm_coef_n(c), fmm_coef_m(c), in_r, in_i, w.mid, mid);
        out_r[i] = v.x;
        out_i[i] = v.y;
    }
}

// One translation of `src` by the shift t, added to the warp's accumulators: the passes of
// fmm_translate in its order, ten __syncwarp-separated passes; the order-major arrays
// alias the work arrays (to order-major x -> y, shift y -> x, from order-major x -> y), so
// a slice holds two split arrays instead of four. Every lane of the warp calls it.
template <int KIND>
__device__ __forceinline__ void fmm_warp_translate(const FmmWarpBlock& b, const FmmWarpSlice& w, u32 lane, u32 p,
                                                   const double* __restrict__ tables,
                                                   const double2* __restrict__ src, double tx, double ty, double tz) {
    const u32 nc = fmm_nc(p);
    const double* sv = tables;
    const double* inv_s = tables + fmm_tables_inv_s(p);
    fmm_warp_prologue<KIND>(w, lane, p, tx, ty, tz, tables);
    __syncwarp();
    for (u32 i = lane; i < nc; i += FMM_WARP) {
        const u32 m = fmm_coef_m(b.coef[i]);
        const double2 v = fmm_load_one<KIND>(src[i], fmm_load_factor<KIND>(b.f_in[m], w.phase[m]), sv, inv_s, i);
        w.xr[i] = v.x;
        w.xi[i] = v.y;
    }
    __syncwarp();
    fmm_warp_rotate(b, w, lane, p, w.xr, w.xi, w.yr, w.yi, 1);
    __syncwarp();
    fmm_warp_rotate(b, w, lane, p, w.yr, w.yi, w.xr, w.xi, 0);
    __syncwarp();
    for (u32 i = lane; i < nc; i += FMM_WARP) {
        const u32 c = b.coef[i];
        const double2 v = fmm_to_order_one<KIND>(cx(w.xr[i], w.xi[i]), b.f_out[fmm_coef_m(c)], sv, inv_s, i);
        w.yr[fmm_coef_o(c)] = v.x;
        w.yi[fmm_coef_o(c)] = v.y;
    }
    __syncwarp();
    for (u32 i = lane; i < nc; i += FMM_WARP) {
        const u32 c = b.coef[i];
        const double2 v = fmm_shift_one<KIND>(w.powers, w.yr, w.yi, p, fmm_coef_n(c), fmm_coef_m(c));
        w.xr[fmm_coef_o(c)] = v.x;
        w.xi[fmm_coef_o(c)] = v.y;
    }
    __syncwarp();
    for (u32 i = lane; i < nc; i += FMM_WARP) {
        const u32 c = b.coef[i], o = fmm_coef_o(c), m = fmm_coef_m(c);
        const double2 v = fmm_from_order_one<KIND>(cx(w.xr[o], w.xi[o]), b.f_in[m], sv, inv_s, i, fmm_coef_n(c), m);
        w.yr[i] = v.x;
        w.yi[i] = v.y;
    }
    __syncwarp();
    fmm_warp_rotate(b, w, lane, p, w.yr, w.yi, w.xr, w.xi, 2);
    __syncwarp();
    fmm_warp_rotate(b, w, lane, p, w.xr, w.xi, w.yr, w.yi, 0);
    // (no barrier: the store pass reads back only the y entries the lane itself wrote)
    for (u32 i = lane; i < nc; i += FMM_WARP) {
        const u32 m = fmm_coef_m(b.coef[i]);
        w.acc[i] = fmm_store_one<KIND>(w.acc[i], cx(w.yr[i], w.yi[i]), fmm_store_factor<KIND>(b.f_out[m], w.phase[m]),
                                       sv, inv_s, i);
    }
    __syncwarp();  // the next pair's prologue overwrites the factors
}

// The lane's accumulators: zeros, or `from` (nc double2, global memory).
__device__ __forceinline__ void fmm_warp_acc_init(const FmmWarpSlice& w, u32 lane, u32 p,
                                                  const double2* __restrict__ from) {
    for (u32 i = lane; i < fmm_nc(p); i += FMM_WARP) w.acc[i] = from ? from[i] : cx(0.0, 0.0);
}

// The lane's accumulators into `to` (nc double2, global memory).
__device__ __forceinline__ void fmm_warp_acc_store(const FmmWarpSlice& w, u32 lane, u32 p, double2* __restrict__ to) {
    for (u32 i = lane; i < fmm_nc(p); i += FMM_WARP) to[i] = w.acc[i];
}

extern "C" __global__ void __launch_bounds__(FMM_WARP_THREADS)
    fmm_m2m_warp(const i64* __restrict__ grid, const u32* __restrict__ first_children, const u32* __restrict__ counts,
                 const double* __restrict__ tables, double2* __restrict__ multipoles, u32 first, u32 count,
                 u32 children, u32 p, double hx, double hy, double hz) {
    extern __shared__ __align__(16) double fmm_smem[];
    const FmmWarpBlock blk = fmm_warp_block(fmm_smem, p);
    fmm_warp_block_load(blk, p, tables);
    const u32 lane = threadIdx.x % FMM_WARP, warp = threadIdx.x / FMM_WARP, warps = blockDim.x / FMM_WARP;
    const FmmWarpSlice w = fmm_warp_slice(fmm_smem, p, warp);
    const u32 nc = fmm_nc(p);
    for (u32 b = blockIdx.x * warps + warp; b < count; b += gridDim.x * warps) {
        const u32 node = first + b;
        const u32 child0 = first_children[node];
        if (child0 == FMM_NONE) continue;  // a leaf: fmm_p2m wrote it (uniform per warp)
        fmm_warp_acc_init(w, lane, p, nullptr);
        if (counts[node] > 0) {
            for (u32 c = child0; c < child0 + children; ++c) {
                if (counts[c] == 0) continue;
                double tx, ty, tz;
                fmm_shift(grid, c, node, hx, hy, hz, tx, ty, tz);
                fmm_warp_translate<FMM_M2M>(blk, w, lane, p, tables, multipoles + (size_t)c * nc, tx, ty, tz);
            }
        }
        fmm_warp_acc_store(w, lane, p, multipoles + (size_t)node * nc);
    }
}

extern "C" __global__ void __launch_bounds__(FMM_WARP_THREADS)
    fmm_m2l_warp(const i64* __restrict__ grid, const u32* __restrict__ m2l_offsets,
                 const u32* __restrict__ m2l_sources, const double* __restrict__ tables,
                 const double2* __restrict__ multipoles, double2* __restrict__ locals, u32 nodes, u32 p, double hx,
                 double hy, double hz) {
    extern __shared__ __align__(16) double fmm_smem[];
    const FmmWarpBlock blk = fmm_warp_block(fmm_smem, p);
    fmm_warp_block_load(blk, p, tables);
    const u32 lane = threadIdx.x % FMM_WARP, warp = threadIdx.x / FMM_WARP, warps = blockDim.x / FMM_WARP;
    const FmmWarpSlice w = fmm_warp_slice(fmm_smem, p, warp);
    const u32 nc = fmm_nc(p);
    for (u32 t = blockIdx.x * warps + warp; t < nodes; t += gridDim.x * warps) {
        fmm_warp_acc_init(w, lane, p, nullptr);
        const u32 end = m2l_offsets[t + 1];
        for (u32 e = m2l_offsets[t]; e < end; ++e) {
            const u32 src = m2l_sources[e];
            double tx, ty, tz;
            fmm_shift(grid, t, src, hx, hy, hz, tx, ty, tz);
            fmm_warp_translate<FMM_M2L>(blk, w, lane, p, tables, multipoles + (size_t)src * nc, tx, ty, tz);
        }
        fmm_warp_acc_store(w, lane, p, locals + (size_t)t * nc);
    }
}

extern "C" __global__ void __launch_bounds__(FMM_WARP_THREADS)
    fmm_l2l_warp(const i64* __restrict__ grid, const u32* __restrict__ parents, const u32* __restrict__ counts,
                 const u32* __restrict__ has_local, const double* __restrict__ tables, double2* __restrict__ locals,
                 u32 first, u32 count, u32 p, double hx, double hy, double hz) {
    extern __shared__ __align__(16) double fmm_smem[];
    const FmmWarpBlock blk = fmm_warp_block(fmm_smem, p);
    fmm_warp_block_load(blk, p, tables);
    const u32 lane = threadIdx.x % FMM_WARP, warp = threadIdx.x / FMM_WARP, warps = blockDim.x / FMM_WARP;
    const FmmWarpSlice w = fmm_warp_slice(fmm_smem, p, warp);
    const u32 nc = fmm_nc(p);
    for (u32 b = blockIdx.x * warps + warp; b < count; b += gridDim.x * warps) {
        const u32 node = first + b;
        const u32 parent = parents[node];
        if (parent == FMM_NONE || has_local[parent] == 0 || counts[node] == 0) continue;  // uniform per warp
        fmm_warp_acc_init(w, lane, p, locals + (size_t)node * nc);
        double tx, ty, tz;
        fmm_shift(grid, node, parent, hx, hy, hz, tx, ty, tz);
        fmm_warp_translate<FMM_L2L>(blk, w, lane, p, tables, locals + (size_t)parent * nc, tx, ty, tz);
        fmm_warp_acc_store(w, lane, p, locals + (size_t)node * nc);
    }
}

// ---- warp per node with direction tables ---------------------------------------------------
// The warp shape's layout, block part and slices (fmm_warp_block, fmm_warp_slice; the same
// launch), with the rotation of each pair chosen as the CPU's Rotations::Table plan chooses
// it: the pair's direction index names one run of fmm_stride(p) doubles of `directions`
// (the CPU's RotationTable, uploaded as is; read through the cache, as each warp's pairs
// have their own directions) and the rotation is one matrix pass of those blocks
// (Rotation::Direct); FMM_NONE (a key beyond the table's bound, or a plan without
// directions) rotates through J in shared memory (Rotation::Quarter), as the CPU does.
// Fused passes: a pass that reads only what its own lane computed is merged into the pass
// that computed it (the last forward matrix pass with the transpose to order-major, the
// shift with the transpose back, the last backward matrix pass with the store), so the
// fused value goes from registers into the next array: five __syncwarp per direct
// translation, seven per quarter-turn one (the warp shape: nine).

// The diagonal factors of translate.rs's prepare for a rotation: direct blocks (-1)^m /
// w_m, (-1)^m w_m, 1 / w_m, w_m (real); the quarter turn i^m / w_m, i^m w_m, i^m / w_m,
// i^m w_m (the block's constants). The direct ones are selected, not computed: with
// (-1)^m and w_m in {1, 2} every quotient and product is exact (0.5, 2, +-1), so the
// constants are the bits of the CPU's correctly rounded operations, without a division
// per coefficient.
struct FmmRotFactors {
    double2 f_in, f_out, b_in, b_out;
};

__device__ __forceinline__ FmmRotFactors fmm_rot_factors(const FmmWarpBlock& b, bool direct, u32 m) {
    FmmRotFactors f;
    if (direct) {
        const double s = (m & 1u) ? -1.0 : 1.0;
        f.f_in = cx(m == 0 ? 0.5 : s, 0.0);
        f.f_out = cx(m == 0 ? 2.0 : s, 0.0);
        f.b_in = cx(m == 0 ? 0.5 : 1.0, 0.0);
        f.b_out = cx(m == 0 ? 2.0 : 1.0, 0.0);
    } else {
        f.f_in = b.f_in[m];
        f.f_out = b.f_out[m];
        f.b_in = b.f_in[m];
        f.b_out = b.f_out[m];
    }
    return f;
}

// The last forward matrix pass (blocks `rot`, no middle phases) over degree-major (in_r,
// in_i), each output moved straight to order-major (out_r, out_i) by fmm_to_order_one.
template <int KIND>
__device__ __forceinline__ void fmm_dir_rotate_to_order(const FmmWarpBlock& b, const FmmWarpSlice& w, u32 lane, u32 p,
                                                        bool direct, const double* rot, const double* in_r,
                                                        const double* in_i, double* out_r, double* out_i,
                                                        const double* __restrict__ sv,
                                                        const double* __restrict__ inv_s) {
    const double* rot_minus = rot + fmm_plus_offset(p + 1);
    for (u32 i = lane; i < fmm_nc(p); i += FMM_WARP) {
        const u32 c = b.coef[i], m = fmm_coef_m(c);
        const double2 x = fmm_rotate_one(rot, rot_minus, fmm_coef_n(c), m, in_r, in_i, w.mid, 0);
        const double2 v = fmm_to_order_one<KIND>(x, fmm_rot_factors(b, direct, m).f_out, sv, inv_s, i);
        out_r[fmm_coef_o(c)] = v.x;
        out_i[fmm_coef_o(c)] = v.y;
    }
}

// The shift of each of the lane's coefficients from order-major (in_r, in_i), moved
// straight back to degree-major (out_r, out_i) by fmm_from_order_one (which reads the
// shift's output of the same coefficient only).
template <int KIND>
__device__ __forceinline__ void fmm_dir_shift_from_order(const FmmWarpBlock& b, const FmmWarpSlice& w, u32 lane,
                                                         u32 p, bool direct, const double* in_r, const double* in_i,
                                                         double* out_r, double* out_i, const double* __restrict__ sv,
                                                         const double* __restrict__ inv_s) {
    for (u32 i = lane; i < fmm_nc(p); i += FMM_WARP) {
        const u32 c = b.coef[i], n = fmm_coef_n(c), m = fmm_coef_m(c);
        const double2 s = fmm_shift_one<KIND>(w.powers, in_r, in_i, p, n, m);
        const double2 v = fmm_from_order_one<KIND>(s, fmm_rot_factors(b, direct, m).b_in, sv, inv_s, i, n, m);
        out_r[i] = v.x;
        out_i[i] = v.y;
    }
}

// The last backward matrix pass (blocks `rot`, no middle phases) over degree-major (in_r,
// in_i), each output stored into the lane's accumulator by fmm_store_one.
template <int KIND>
__device__ __forceinline__ void fmm_dir_rotate_store(const FmmWarpBlock& b, const FmmWarpSlice& w, u32 lane, u32 p,
                                                     bool direct, const double* rot, const double* in_r,
                                                     const double* in_i, const double* __restrict__ sv,
                                                     const double* __restrict__ inv_s) {
    const double* rot_minus = rot + fmm_plus_offset(p + 1);
    for (u32 i = lane; i < fmm_nc(p); i += FMM_WARP) {
        const u32 c = b.coef[i], m = fmm_coef_m(c);
        const double2 x = fmm_rotate_one(rot, rot_minus, fmm_coef_n(c), m, in_r, in_i, w.mid, 0);
        const double2 factor = fmm_store_factor<KIND>(fmm_rot_factors(b, direct, m).b_out, w.phase[m]);
        w.acc[i] = fmm_store_one<KIND>(w.acc[i], x, factor, sv, inv_s, i);
    }
}

// The per-pair factors of a direct pair (Rotation::Direct): the phases unit^m (lane 0)
// and the shift powers (lane 2), the same operations in the same order as
// fmm_warp_prologue, which also forms the polar angle's cos / sin (tz / tau, rho / tau:
// two correctly rounded divisions) and the middle factors u^m from them. A direct pair's
// rotation is its blocks, so it never reads those: this prologue leaves out the two
// divisions and the middle-factor stores, and every value it stores is the bits
// fmm_warp_prologue stores (the phase chain no longer shares its instructions with the
// u chain: the step is unit on every lane).
template <int KIND>
__device__ __forceinline__ void fmm_dir_prologue_direct(const FmmWarpSlice& w, u32 lane, u32 p, double tx, double ty,
                                                        double tz, const double* __restrict__ tables) {
    const double rho2 = fmm_add(fmm_mul(tx, tx), fmm_mul(ty, ty));
    const double tau = fmm_sqrt(fmm_add(rho2, fmm_mul(tz, tz)));
    double2 unit = cx(1.0, 0.0);
    if (rho2 > 0.0) {
        const double inv = fmm_div(1.0, fmm_sqrt(rho2));
        unit = cx(fmm_mul(tx, inv), fmm_mul(ty, inv));
    }
    const double* fact = tables + (KIND == FMM_M2L ? fmm_tables_fact(p) : fmm_tables_inv_fact(p));
    const double ratio = KIND == FMM_M2L ? fmm_div(1.0, tau) : tau;
    double power = KIND == FMM_M2L ? ratio : 1.0;
    const u32 last = KIND == FMM_M2L ? 2 * p : p;
    double2 z = cx(1.0, 0.0);
    for (u32 j = 0; j <= last; ++j) {
        if (j <= p) {
            if (j > 0) z = cx_mul(z, unit);
            if (lane == 0) w.phase[j] = z;
        }
        const double v = KIND == FMM_M2L ? fmm_mul(fact[j], power) : fmm_mul(power, fact[j]);
        if (lane == 2) w.powers[j] = v;
        power = fmm_mul(power, ratio);
    }
}

// One translation of `src` by the shift t with the direction blocks `e` (nullptr: the
// quarter turn), added to the warp's accumulators: translate.rs's m2m / m2l / l2l with
// Rotation::Direct(e) or Rotation::Quarter, every value computed by the functions the other
// shapes call, in their order. Arrays: A = x, B = y. Direct: load -> A; rotate + to
// order-major A -> B; shift + from order-major B -> A; rotate + store A -> acc. Quarter:
// load -> A; rotate (forward middle phases) A -> B; rotate + to order-major B -> A; shift +
// from order-major A -> B; rotate (backward middle phases) B -> A; rotate + store A -> acc.
// Every array is written only after the pass that last read it has passed a barrier. The
// branch on `e` is uniform per warp (one pair per warp).
template <int KIND>
__device__ __forceinline__ void fmm_dir_translate(const FmmWarpBlock& b, const FmmWarpSlice& w, u32 lane, u32 p,
                                                  const double* __restrict__ tables, const double* e,
                                                  const double2* __restrict__ src, double tx, double ty, double tz) {
    const u32 nc = fmm_nc(p);
    const bool direct = e != nullptr;
    const double* rot = direct ? e : b.j;
    const double* sv = tables;
    const double* inv_s = tables + fmm_tables_inv_s(p);
    if (direct) {
        fmm_dir_prologue_direct<KIND>(w, lane, p, tx, ty, tz, tables);
    } else {
        fmm_warp_prologue<KIND>(w, lane, p, tx, ty, tz, tables);
    }
    __syncwarp();
    for (u32 i = lane; i < nc; i += FMM_WARP) {
        const u32 m = fmm_coef_m(b.coef[i]);
        const double2 factor = fmm_load_factor<KIND>(fmm_rot_factors(b, direct, m).f_in, w.phase[m]);
        const double2 v = fmm_load_one<KIND>(src[i], factor, sv, inv_s, i);
        w.xr[i] = v.x;
        w.xi[i] = v.y;
    }
    __syncwarp();
    if (direct) {
        fmm_dir_rotate_to_order<KIND>(b, w, lane, p, true, rot, w.xr, w.xi, w.yr, w.yi, sv, inv_s);
        __syncwarp();
        fmm_dir_shift_from_order<KIND>(b, w, lane, p, true, w.yr, w.yi, w.xr, w.xi, sv, inv_s);
        __syncwarp();
    } else {
        fmm_warp_rotate(b, w, lane, p, w.xr, w.xi, w.yr, w.yi, 1);
        __syncwarp();
        fmm_dir_rotate_to_order<KIND>(b, w, lane, p, false, rot, w.yr, w.yi, w.xr, w.xi, sv, inv_s);
        __syncwarp();
        fmm_dir_shift_from_order<KIND>(b, w, lane, p, false, w.xr, w.xi, w.yr, w.yi, sv, inv_s);
        __syncwarp();
        fmm_warp_rotate(b, w, lane, p, w.yr, w.yi, w.xr, w.xi, 2);
        __syncwarp();
    }
    fmm_dir_rotate_store<KIND>(b, w, lane, p, direct, rot, w.xr, w.xi, sv, inv_s);
    __syncwarp();  // the next pair's prologue and load overwrite the factors and A
}

// The blocks of direction `d` (FMM_NONE: nullptr, the quarter turn).
__device__ __forceinline__ const double* fmm_direction(const double* __restrict__ directions, u32 d, u32 p) {
    return d == FMM_NONE ? nullptr : directions + (size_t)d * fmm_stride(p);
}

extern "C" __global__ void __launch_bounds__(FMM_WARP_THREADS, FMM_DIR_MIN_BLOCKS)
    fmm_m2m_dir(const i64* __restrict__ grid, const u32* __restrict__ first_children, const u32* __restrict__ counts,
                const u32* __restrict__ parent_directions, const double* __restrict__ tables,
                const double* __restrict__ directions, double2* __restrict__ multipoles, u32 first, u32 count,
                u32 children, u32 p, double hx, double hy, double hz) {
    extern __shared__ __align__(16) double fmm_smem[];
    const FmmWarpBlock blk = fmm_warp_block(fmm_smem, p);
    fmm_warp_block_load(blk, p, tables);
    const u32 lane = threadIdx.x % FMM_WARP, warp = threadIdx.x / FMM_WARP, warps = blockDim.x / FMM_WARP;
    const FmmWarpSlice w = fmm_warp_slice(fmm_smem, p, warp);
    const u32 nc = fmm_nc(p);
    for (u32 b = blockIdx.x * warps + warp; b < count; b += gridDim.x * warps) {
        const u32 node = first + b;
        const u32 child0 = first_children[node];
        if (child0 == FMM_NONE) continue;  // a leaf: fmm_p2m wrote it (uniform per warp)
        fmm_warp_acc_init(w, lane, p, nullptr);
        if (counts[node] > 0) {
            for (u32 c = child0; c < child0 + children; ++c) {
                if (counts[c] == 0) continue;
                double tx, ty, tz;
                fmm_shift(grid, c, node, hx, hy, hz, tx, ty, tz);
                fmm_dir_translate<FMM_M2M>(blk, w, lane, p, tables, fmm_direction(directions, parent_directions[c], p),
                                           multipoles + (size_t)c * nc, tx, ty, tz);
            }
        }
        fmm_warp_acc_store(w, lane, p, multipoles + (size_t)node * nc);
    }
}

extern "C" __global__ void __launch_bounds__(FMM_WARP_THREADS, FMM_DIR_MIN_BLOCKS)
    fmm_m2l_dir(const i64* __restrict__ grid, const u32* __restrict__ m2l_offsets,
                const u32* __restrict__ m2l_sources, const u32* __restrict__ m2l_directions,
                const double* __restrict__ tables, const double* __restrict__ directions,
                const double2* __restrict__ multipoles, double2* __restrict__ locals, u32 nodes, u32 p, double hx,
                double hy, double hz) {
    extern __shared__ __align__(16) double fmm_smem[];
    const FmmWarpBlock blk = fmm_warp_block(fmm_smem, p);
    fmm_warp_block_load(blk, p, tables);
    const u32 lane = threadIdx.x % FMM_WARP, warp = threadIdx.x / FMM_WARP, warps = blockDim.x / FMM_WARP;
    const FmmWarpSlice w = fmm_warp_slice(fmm_smem, p, warp);
    const u32 nc = fmm_nc(p);
    for (u32 t = blockIdx.x * warps + warp; t < nodes; t += gridDim.x * warps) {
        fmm_warp_acc_init(w, lane, p, nullptr);
        const u32 end = m2l_offsets[t + 1];
        for (u32 e = m2l_offsets[t]; e < end; ++e) {
            const u32 src = m2l_sources[e];
            double tx, ty, tz;
            fmm_shift(grid, t, src, hx, hy, hz, tx, ty, tz);
            fmm_dir_translate<FMM_M2L>(blk, w, lane, p, tables, fmm_direction(directions, m2l_directions[e], p),
                                       multipoles + (size_t)src * nc, tx, ty, tz);
        }
        fmm_warp_acc_store(w, lane, p, locals + (size_t)t * nc);
    }
}

extern "C" __global__ void __launch_bounds__(FMM_WARP_THREADS, FMM_DIR_MIN_BLOCKS)
    fmm_l2l_dir(const i64* __restrict__ grid, const u32* __restrict__ parents, const u32* __restrict__ counts,
                const u32* __restrict__ has_local, const u32* __restrict__ parent_directions,
                const double* __restrict__ tables, const double* __restrict__ directions,
                double2* __restrict__ locals, u32 first, u32 count, u32 p, double hx, double hy, double hz) {
    extern __shared__ __align__(16) double fmm_smem[];
    const FmmWarpBlock blk = fmm_warp_block(fmm_smem, p);
    fmm_warp_block_load(blk, p, tables);
    const u32 lane = threadIdx.x % FMM_WARP, warp = threadIdx.x / FMM_WARP, warps = blockDim.x / FMM_WARP;
    const FmmWarpSlice w = fmm_warp_slice(fmm_smem, p, warp);
    const u32 nc = fmm_nc(p);
    for (u32 b = blockIdx.x * warps + warp; b < count; b += gridDim.x * warps) {
        const u32 node = first + b;
        const u32 parent = parents[node];
        if (parent == FMM_NONE || has_local[parent] == 0 || counts[node] == 0) continue;  // uniform per warp
        fmm_warp_acc_init(w, lane, p, locals + (size_t)node * nc);
        double tx, ty, tz;
        fmm_shift(grid, node, parent, hx, hy, hz, tx, ty, tz);
        fmm_dir_translate<FMM_L2L>(blk, w, lane, p, tables, fmm_direction(directions, parent_directions[node], p),
                                   locals + (size_t)parent * nc, tx, ty, tz);
        fmm_warp_acc_store(w, lane, p, locals + (size_t)node * nc);
    }
}

// ---- L2P ----------------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(FMM_L2P_THREADS)
    fmm_l2p(const float* __restrict__ bodies, const u32* __restrict__ particle_nodes,
            const u32* __restrict__ has_local, const double* __restrict__ centres, const double* __restrict__ tables,
            const double2* __restrict__ locals, float4* __restrict__ acc, u32 n, u32 p, double origin_x,
            double origin_y, double origin_z, double inv_scale, double far_acc, double far_pot) {
    const u32 i = blockIdx.x * FMM_L2P_THREADS + threadIdx.x;
    if (i >= n) return;
    const u32 node = particle_nodes[i];
    if (has_local[node] == 0) return;
    const u32 nc = fmm_nc(p);
    const double2* L = locals + (size_t)node * nc;
    const double* inv_nm = tables + fmm_tables_inv_nm(p);
    const float4 b = reinterpret_cast<const float4*>(bodies)[i];
    const double dx = fmm_sub(fmm_mul(fmm_sub((double)b.x, origin_x), inv_scale), centres[3 * (size_t)node]);
    const double dy = fmm_sub(fmm_mul(fmm_sub((double)b.y, origin_y), inv_scale), centres[3 * (size_t)node + 1]);
    const double dz = fmm_sub(fmm_mul(fmm_sub((double)b.z, origin_z), inv_scale), centres[3 * (size_t)node + 2]);
    const double r2 = fmm_norm2(dx, dy, dz);
    const double2 xi = cx(dx, dy);
    double phi = 0.0, gz = 0.0;
    double2 g = cx(0.0, 0.0);
    double2 diag = cx(1.0, 0.0);
    for (u32 m = 0; m <= p; ++m) {
        if (m > 0) diag = cx_scale(cx_mul(xi, diag), fmm_div(-0.5, (double)m));
        const double w = m == 0 ? 1.0 : 2.0;
        double2 prev2 = cx(0.0, 0.0), y = diag;
        for (u32 nn = m; nn <= p; ++nn) {
            if (nn == m + 1) {
                prev2 = y;
                y = cx_scale(diag, dz);
            } else if (nn > m + 1) {
                const double2 a = cx_scale(y, fmm_mul((double)(2 * nn - 1), dz));
                const double2 c = cx_scale(prev2, r2);
                prev2 = y;
                y = cx_scale(cx_sub(a, c), inv_nm[fmm_index(nn, m)]);
            }
            // y = Y_nn^m: the terms it meets (gpu/fmm/mod.rs derives them from l2p).
            phi = fmm_add(phi, fmm_mul(w, cx_re_conj(L[fmm_index(nn, m)], y)));
            if (nn + 1 <= p) {
                gz = fmm_add(gz, fmm_mul(w, cx_re_conj(L[fmm_index(nn + 1, m)], y)));
                if (m >= 1) g = cx_add(g, cx_mul(L[fmm_index(nn + 1, m - 1)], cx_conj(y)));
                g = cx_sub(g, cx_mul(cx_conj(L[fmm_index(nn + 1, m + 1)]), y));
            }
        }
    }
    float4 f = acc[i];
    f.x = __fadd_rn(f.x, (float)fmm_mul(far_acc, g.x));
    f.y = __fadd_rn(f.y, (float)fmm_mul(far_acc, -g.y));
    f.z = __fadd_rn(f.z, (float)fmm_mul(far_acc, gz));
    f.w = __fadd_rn(f.w, (float)fmm_mul(far_pot, phi));
    acc[i] = f;
}
