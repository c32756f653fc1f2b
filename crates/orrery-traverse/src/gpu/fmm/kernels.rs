//! The FMM's kernel modules and their typed launchers: `traverse/fmm`
//! (`kernels/traverse/fmm.cu`, f64 expansion passes, CUDA only) and `traverse/fmm_p2p`
//! (`kernels/traverse/fmm_p2p.cu` and `shaders/traverse/fmm_p2p.wgsl`, the f32 near
//! field, both languages). Entry points take buffers first, then scalars (see
//! [`orrery_core::gpu`]), declared once here and checked against the sources at first
//! use.

use orrery_core::KernelSource;

use crate::fmm::expansions::{num_coefficients, rotation};

/// The module `traverse/fmm` (CUDA only: f64 arithmetic; the WGSL text is empty).
pub const FMM: KernelSource = KernelSource::new("traverse/fmm", orrery_kernels::traverse::FMM, "");

/// The module `traverse/fmm_p2p`.
pub const FMM_P2P: KernelSource =
    KernelSource::new("traverse/fmm_p2p", orrery_kernels::traverse::FMM_P2P, orrery_shaders::traverse::FMM_P2P);

/// Threads per block of the translation kernels and of P2M (`FMM_THREADS`).
pub const THREADS: u32 = 128;

/// Coefficients each thread of a translation block owns (`FMM_SLOTS`): `nc(p) <=
/// THREADS * SLOTS`.
pub const SLOTS: u32 = 2;

/// Lanes of a warp (`FMM_WARP`): the warp shape's unit, one target node per warp.
pub const WARP: u32 = 32;

/// The most warps (target nodes) per block of the warp shape (`FMM_WARP_NODES`; the
/// launch bound is `FMM_WARP_THREADS = WARP * WARP_NODES`).
pub const WARP_NODES: u32 = 8;

/// Threads per block of L2P, one particle each (`FMM_L2P_THREADS`).
pub const L2P_THREADS: u32 = 128;

/// Threads per block of P2P, one target each (`FMM_P2P_THREADS`, WGSL `THREADS`).
pub const P2P_THREADS: u32 = 64;

/// The highest order the kernels are written for (`FMM_MAX_ORDER`).
pub const MAX_ORDER: u32 = 16;

/// The entry points of [`FMM`] (CUDA only).
pub const FMM_ENTRIES: [&str; 11] = [
    "fmm_p2m",
    "fmm_m2m",
    "fmm_m2l",
    "fmm_l2l",
    "fmm_m2m_warp",
    "fmm_m2l_warp",
    "fmm_l2l_warp",
    "fmm_m2m_dir",
    "fmm_m2l_dir",
    "fmm_l2l_dir",
    "fmm_l2p",
];

/// The entry points of [`FMM_P2P`], in both languages.
pub const FMM_P2P_ENTRIES: [&str; 1] = ["fmm_p2p"];

/// Bytes of dynamic shared memory of a translation block at order `p`
/// (`fmm_shared_doubles` in the CUDA source): the quarter turn's blocks, eight split
/// arrays of `nc` doubles, one pad, six per-order complex factors and the shift powers.
pub fn shared_bytes(p: u32) -> u32 {
    let doubles = rotation::stride(p) + 8 * num_coefficients(p) + 1 + 12 * (p as usize + 1) + 2 * p as usize + 8;
    (8 * doubles) as u32
}

/// Doubles of the block-shared part of a warp-shape block (`fmm_warp_block_doubles`): the
/// per-order constants `i^m / w_m` and `i^m w_m`, the quarter turn's blocks and the
/// coefficient table (one `u32` per coefficient), rounded up to even.
fn warp_block_doubles(p: u32) -> usize {
    let d = 4 * (p as usize + 1) + rotation::stride(p) + num_coefficients(p).div_ceil(2);
    d.next_multiple_of(2)
}

/// Doubles of one warp's slice (`fmm_warp_slice_doubles`): the accumulators, the pair's
/// phases and middle factors, two split work arrays and the powers.
fn warp_slice_doubles(p: u32) -> usize {
    6 * num_coefficients(p) + 6 * (p as usize + 1)
}

/// Bytes of dynamic shared memory of a warp-shape block of `warps` warps at order `p`
/// (`fmm_warp_shared_doubles` in the CUDA source).
pub fn warp_shared_bytes(p: u32, warps: u32) -> u32 {
    (8 * (warp_block_doubles(p) + warps as usize * warp_slice_doubles(p))) as u32
}

/// Dynamic shared memory a block may use without opting in (`cuFuncSetAttribute`): the
/// warp shape stays below it, as the block shape does (8 warps per block up to p = 11, 7 at
/// p = 12, 2 at p = 16).
pub const LAUNCH_SHARED_LIMIT: u32 = 48 * 1024;

/// Warps per block of the warp shape at order `p` under `max_shared` bytes of shared
/// memory per block: as many as fit, at most [`WARP_NODES`]; `None` when not even one
/// fits. The launches pass the device's limit capped at [`LAUNCH_SHARED_LIMIT`].
pub fn warps_per_block(p: u32, max_shared: u32) -> Option<u32> {
    (1..=WARP_NODES).rev().find(|&w| warp_shared_bytes(p, w) <= max_shared)
}

orrery_core::kernels! {
    module = FMM;
    /// Per leaf: its multipole from its particles.
    pub(crate) fn fmm_p2m(
        read bodies: f32, read leaves: u32, read begins: u32, read counts: u32, read centres: f64,
        read tables: f64, write multipoles: [f64; 2],
        scalar leaves_count: u32, scalar p: u32, scalar origin_x: f64, scalar origin_y: f64,
        scalar origin_z: f64, scalar inv_scale: f64,
    );
    /// Per internal node of one level: M2M from its children.
    pub(crate) fn fmm_m2m(
        read grid: i64, read first_children: u32, read counts: u32, read tables: f64,
        write multipoles: [f64; 2],
        scalar first: u32, scalar count: u32, scalar children: u32, scalar p: u32,
        scalar hx: f64, scalar hy: f64, scalar hz: f64,
    );
    /// Per node: the sum of M2L over its list.
    pub(crate) fn fmm_m2l(
        read grid: i64, read m2l_offsets: u32, read m2l_sources: u32, read tables: f64,
        read multipoles: [f64; 2], write locals: [f64; 2],
        scalar nodes: u32, scalar p: u32, scalar hx: f64, scalar hy: f64, scalar hz: f64,
    );
    /// Per node of one level: L2L from its parent.
    pub(crate) fn fmm_l2l(
        read grid: i64, read parents: u32, read counts: u32, read has_local: u32, read tables: f64,
        write locals: [f64; 2],
        scalar first: u32, scalar count: u32, scalar p: u32, scalar hx: f64, scalar hy: f64, scalar hz: f64,
    );
    /// [`fmm_m2m`] with one warp per node (the warp shape).
    pub(crate) fn fmm_m2m_warp(
        read grid: i64, read first_children: u32, read counts: u32, read tables: f64,
        write multipoles: [f64; 2],
        scalar first: u32, scalar count: u32, scalar children: u32, scalar p: u32,
        scalar hx: f64, scalar hy: f64, scalar hz: f64,
    );
    /// [`fmm_m2l`] with one warp per node (the warp shape).
    pub(crate) fn fmm_m2l_warp(
        read grid: i64, read m2l_offsets: u32, read m2l_sources: u32, read tables: f64,
        read multipoles: [f64; 2], write locals: [f64; 2],
        scalar nodes: u32, scalar p: u32, scalar hx: f64, scalar hy: f64, scalar hz: f64,
    );
    /// [`fmm_l2l`] with one warp per node (the warp shape).
    pub(crate) fn fmm_l2l_warp(
        read grid: i64, read parents: u32, read counts: u32, read has_local: u32, read tables: f64,
        write locals: [f64; 2],
        scalar first: u32, scalar count: u32, scalar p: u32, scalar hx: f64, scalar hy: f64, scalar hz: f64,
    );
    /// [`fmm_m2m_warp`] with each child's rotation from the direction table (`NONE`: the
    /// quarter turn), fused passes (the warp shape with direction tables).
    pub(crate) fn fmm_m2m_dir(
        read grid: i64, read first_children: u32, read counts: u32, read parent_directions: u32,
        read tables: f64, read directions: f64, write multipoles: [f64; 2],
        scalar first: u32, scalar count: u32, scalar children: u32, scalar p: u32,
        scalar hx: f64, scalar hy: f64, scalar hz: f64,
    );
    /// [`fmm_m2l_warp`] with each entry's rotation from the direction table.
    pub(crate) fn fmm_m2l_dir(
        read grid: i64, read m2l_offsets: u32, read m2l_sources: u32, read m2l_directions: u32,
        read tables: f64, read directions: f64, read multipoles: [f64; 2], write locals: [f64; 2],
        scalar nodes: u32, scalar p: u32, scalar hx: f64, scalar hy: f64, scalar hz: f64,
    );
    /// [`fmm_l2l_warp`] with each node's rotation from the direction table.
    pub(crate) fn fmm_l2l_dir(
        read grid: i64, read parents: u32, read counts: u32, read has_local: u32, read parent_directions: u32,
        read tables: f64, read directions: f64, write locals: [f64; 2],
        scalar first: u32, scalar count: u32, scalar p: u32, scalar hx: f64, scalar hy: f64, scalar hz: f64,
    );
    /// Per particle: the far field of its leaf's local expansion, added to `acc`.
    pub(crate) fn fmm_l2p(
        read bodies: f32, read particle_nodes: u32, read has_local: u32, read centres: f64,
        read tables: f64, read locals: [f64; 2], write acc: [f32; 4],
        scalar n: u32, scalar p: u32, scalar origin_x: f64, scalar origin_y: f64, scalar origin_z: f64,
        scalar inv_scale: f64, scalar far_acc: f64, scalar far_pot: f64,
    );
}

orrery_core::kernels! {
    module = FMM_P2P;
    /// Per non-empty leaf: the near field of its targets.
    pub(crate) fn fmm_p2p(
        read bodies: f32, read leaves: u32, read begins: u32, read counts: u32, read p2p_offsets: u32,
        read p2p_sources: u32, write acc: [f32; 4],
        scalar leaves_count: u32, scalar g: f32, scalar eps2: f32,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host's constants are the sources' and every entry exists where it should.
    #[test]
    fn constants_and_entries_match_the_sources() {
        for (name, value) in [
            ("FMM_THREADS", THREADS),
            ("FMM_SLOTS", SLOTS),
            ("FMM_WARP", WARP),
            ("FMM_WARP_NODES", WARP_NODES),
            ("FMM_WARP_THREADS", WARP * WARP_NODES),
            ("FMM_L2P_THREADS", L2P_THREADS),
            ("FMM_MAX_ORDER", MAX_ORDER),
        ] {
            assert!(FMM.cuda.contains(&format!("#define {name} {value}u\n")), "{name}");
        }
        assert!(FMM_P2P.cuda.contains(&format!("#define FMM_P2P_THREADS {P2P_THREADS}u\n")));
        assert!(FMM_P2P.wgsl.contains(&format!("const THREADS: u32 = {P2P_THREADS}u;")));
        assert_eq!(MAX_ORDER, crate::fmm::MAX_ORDER);
        assert!(num_coefficients(MAX_ORDER) <= (THREADS * SLOTS) as usize);
        assert!(shared_bytes(MAX_ORDER) <= 48 * 1024, "static launch limit");
        assert!(FMM.cuda.contains(
            "__device__ __forceinline__ u32 fmm_warp_slice_doubles(u32 p) { return 6 * fmm_nc(p) + 6 * (p + 1); }"
        ));
        for entry in FMM_ENTRIES {
            assert!(orrery_core::gpu::cuda_params(FMM.cuda, entry).is_some(), "CUDA lacks {entry}");
        }
        for entry in FMM_P2P_ENTRIES {
            assert!(orrery_core::gpu::cuda_params(FMM_P2P.cuda, entry).is_some(), "CUDA lacks {entry}");
            assert!(FMM_P2P.wgsl.contains(&format!("fn {entry}(")), "WGSL lacks {entry}");
        }
    }

    /// The warp shape's shared memory: the layout's sizes by hand at p = 8, 16 bytes
    /// aligned slices, and warps per block under the 48 KiB launch limit (every order fits
    /// one warp; the most that fit) and under the H200's 227 KiB opt-in (eight).
    #[test]
    fn warp_shape_shared_memory() {
        // p = 8: nc 45, J 285 + 204; block 36 + 489 + 23 = 548; slice 270 + 54 = 324.
        assert_eq!(warp_block_doubles(8), 548);
        assert_eq!(warp_slice_doubles(8), 324);
        assert_eq!(warp_shared_bytes(8, 8), 8 * (548 + 8 * 324));
        for p in 1..=MAX_ORDER {
            assert_eq!(warp_block_doubles(p) % 2, 0, "p = {p}");
            assert_eq!(warp_slice_doubles(p) % 2, 0, "p = {p}");
            let static_warps = warps_per_block(p, LAUNCH_SHARED_LIMIT).expect("one warp fits 48 KiB");
            assert!(warp_shared_bytes(p, static_warps) <= LAUNCH_SHARED_LIMIT);
            assert!(static_warps == WARP_NODES || warp_shared_bytes(p, static_warps + 1) > LAUNCH_SHARED_LIMIT);
            assert_eq!(warps_per_block(p, 227 * 1024), Some(WARP_NODES), "p = {p}");
        }
        assert_eq!(warps_per_block(8, LAUNCH_SHARED_LIMIT), Some(8));
        assert_eq!(warps_per_block(11, LAUNCH_SHARED_LIMIT), Some(8));
        assert_eq!(warps_per_block(12, LAUNCH_SHARED_LIMIT), Some(7));
        assert_eq!(warps_per_block(16, LAUNCH_SHARED_LIMIT), Some(2));
        assert_eq!(warps_per_block(16, 1024), None);
    }
}
