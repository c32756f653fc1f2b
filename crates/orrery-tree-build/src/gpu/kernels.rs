//! The kernel modules of the GPU build and their typed launchers:
//!
//! | module | CUDA | WGSL | host |
//! |---|---|---|---|
//! | `tree/keys` | `kernels/tree/keys.cu` | `shaders/tree/keys.wgsl` | [`super::keys`]: removal outside the box, binary keys |
//! | `tree/passes` | `kernels/tree/passes.cu` | `shaders/tree/passes.wgsl` | [`super::passes`]: counts, scatter, begin, finish |
//! | `tree/leaf_count` | `kernels/tree/leaf_count.cu` | `shaders/tree/leaf_count.wgsl` | [`super::passes`]: the LeafCount decide |
//! | `tree/nf_count` | `kernels/tree/nf_count.cu` | `shaders/tree/nf_count.wgsl` | [`super::passes`]: the NFCount values, carry-over and decide |
//!
//! Every CUDA module is `kernels/tree/common.cuh` then its file (with a `#line`
//! directive); every WGSL module is `shaders/tree/common.wgsl` then its file. Both
//! languages define the same entry points with the same arguments (buffers first, then
//! scalars; see [`orrery_core::gpu`]), declared once here with [`orrery_core::kernels!`]
//! and checked against both at first use. `tb_binary_keys_f64` exists in CUDA only.

use orrery_core::KernelSource;

/// Threads per block of every per-item kernel (`TB_THREADS` / `THREADS` in the sources).
pub(crate) const THREADS: u32 = 256;

/// The module `tree/keys`.
pub const KEYS: KernelSource =
    KernelSource::new("tree/keys", orrery_kernels::tree::unit::KEYS, orrery_shaders::tree::unit::KEYS);
/// The module `tree/passes`.
pub const PASSES: KernelSource =
    KernelSource::new("tree/passes", orrery_kernels::tree::unit::PASSES, orrery_shaders::tree::unit::PASSES);
/// The module `tree/leaf_count`.
pub const LEAF_COUNT: KernelSource = KernelSource::new(
    "tree/leaf_count",
    orrery_kernels::tree::unit::LEAF_COUNT,
    orrery_shaders::tree::unit::LEAF_COUNT,
);

/// The module `tree/nf_count`.
pub const NF_COUNT: KernelSource =
    KernelSource::new("tree/nf_count", orrery_kernels::tree::unit::NF_COUNT, orrery_shaders::tree::unit::NF_COUNT);

/// Every module the build launches (for ahead-of-time compile checks: the tests compile
/// each with NVRTC).
pub const MODULES: [KernelSource; 4] = [KEYS, PASSES, LEAF_COUNT, NF_COUNT];

/// Every entry point of [`MODULES`], by module (the CUDA compile test looks for each in
/// the PTX); the last names of `tree/keys` exist in CUDA only ([`CUDA_ONLY`]).
pub const ENTRIES: [(&str, &[&str]); 4] = [
    ("tree/keys", &["tb_remove_outside_f32", "tb_remove_outside_f64", "tb_binary_keys_f32", "tb_binary_keys_f64"]),
    ("tree/passes", &["tb_leaf_counts", "tb_scatter", "tb_finish", "tb_begin"]),
    ("tree/leaf_count", &["tb_leaf_count_ops"]),
    ("tree/nf_count", &["tb_nf_starts", "tb_nf_eval", "tb_nf_ops", "tb_nf_scatter", "tb_nf_stencil_counts"]),
];

/// Entry points of [`ENTRIES`] that WGSL lacks (f64 arithmetic).
pub const CUDA_ONLY: [&str; 1] = ["tb_binary_keys_f64"];

pub(crate) mod keys {
    orrery_core::kernels! {
        module = super::KEYS;
        /// `keys[i] = key_end` for the f32 particles outside the closed box `bounds`.
        pub(crate) fn tb_remove_outside_f32(
            read x: f32, read y: f32, read z: f32, read bounds: f32, write keys: u64,
            scalar n: u32, scalar key_bits: u32,
        );
        /// [`tb_remove_outside_f32`] for f64 positions.
        pub(crate) fn tb_remove_outside_f64(
            read x: f64, read y: f64, read z: f64, read bounds: f64, write keys: u64,
            scalar n: u32, scalar key_bits: u32,
        );
        /// Binary keys of f32 positions (`BinaryLayout::key_clamped`).
        pub(crate) fn tb_binary_keys_f32(
            read x: f32, read y: f32, read z: f32, read axes: u32, write keys: u64,
            scalar n: u32, scalar levels: u32,
            scalar min_x: f32, scalar min_y: f32, scalar min_z: f32,
            scalar scale_x: f32, scalar scale_y: f32, scalar scale_z: f32,
            scalar bits_x: u32, scalar bits_y: u32, scalar bits_z: u32,
        );
        /// Binary keys of f64 positions (CUDA only).
        pub(crate) fn tb_binary_keys_f64(
            read x: f64, read y: f64, read z: f64, read axes: u32, write keys: u64,
            scalar n: u32, scalar levels: u32,
            scalar min_x: f64, scalar min_y: f64, scalar min_z: f64,
            scalar scale_x: f64, scalar scale_y: f64, scalar scale_z: f64,
            scalar bits_x: u32, scalar bits_y: u32, scalar bits_z: u32,
        );
    }
}

pub(crate) mod passes {
    orrery_core::kernels! {
        module = super::PASSES;
        /// Particles per live leaf: two binary searches per leaf.
        pub(crate) fn tb_leaf_counts(
            read keys: u64, read leaves: u64, read status: u32, write counts: u32,
            scalar n: u32, scalar capacity: u32,
        );
        /// The new boundaries from the operations and their scan (or the overflow flag).
        pub(crate) fn tb_scatter(
            read leaves: u64, read ops: u32, read offsets: u32, write next: u64, write status: u32,
            scalar capacity: u32, scalar bits: u32, scalar levels: u32,
        );
        /// Ends a pass in the status block.
        pub(crate) fn tb_finish(read offsets: u32, write status: u32, scalar capacity: u32, scalar max_passes: u32);
        /// Starts a run in the status block (and writes the root leaf for a build).
        pub(crate) fn tb_begin(write leaves: u64, write status: u32, scalar mode: u32, scalar bits: u32, scalar levels: u32);
    }
}

pub(crate) mod leaf_count {
    orrery_core::kernels! {
        module = super::LEAF_COUNT;
        /// The LeafCount operation of every live leaf; sets the changed flag.
        pub(crate) fn tb_leaf_count_ops(
            read leaves: u64, read counts: u32, write ops: u32, write status: u32,
            scalar capacity: u32, scalar bucket: u32, scalar bits: u32, scalar levels: u32,
        );
    }
}

pub(crate) mod nf_count {
    orrery_core::kernels! {
        module = super::NF_COUNT;
        /// The first particles of the tree of parity `parity`: every leaf's by a search of
        /// all keys, and fresh values (`reset` = 1, the run's first tree), or the split
        /// children's by a search of their parent's particles (`reset` = 0).
        pub(crate) fn tb_nf_starts(
            read keys: u64, read leaves: u64, write starts: u32, write vals: u64, read status: u32,
            scalar n: u32, scalar capacity: u32, scalar parity: u32, scalar reset: u32,
        );
        /// Counts from the starts, `W = n * S` of the fresh leaves and the parent value of
        /// the complete groups' leaders without a carried one (`lanes` threads per leaf).
        pub(crate) fn tb_nf_eval(
            read leaves: u64, read starts: u32, read keys: u64, read geom: u32, write vals: u64, write counts: u32,
            read status: u32,
            scalar capacity: u32, scalar n: u32, scalar parity: u32, scalar hilbert: u32, scalar bits: u32,
            scalar levels: u32, scalar lanes: u32,
        );
        /// The NFCount operation of every live leaf; sets the changed flag.
        pub(crate) fn tb_nf_ops(
            read leaves: u64, read vals: u64, write ops: u32, write status: u32,
            scalar capacity: u32, scalar parity: u32, scalar threshold_lo: u32, scalar threshold_hi: u32,
            scalar bits: u32, scalar levels: u32,
        );
        /// `tb_scatter` with the carry of starts and values into the other parity.
        pub(crate) fn tb_nf_scatter(
            read leaves: u64, read ops: u32, read offsets: u32, write next: u64, write status: u32,
            write starts: u32, write vals: u64,
            scalar capacity: u32, scalar parity: u32, scalar bits: u32, scalar levels: u32,
        );
        /// Stencil counts of host-given cells (tests).
        pub(crate) fn tb_nf_stencil_counts(
            read leaves: u64, read starts: u32, read keys: u64, read geom: u32, read qkeys: u64, read qmeta: u32,
            write out: u64,
            scalar queries: u32, scalar live: u32, scalar n: u32, scalar hilbert: u32, scalar bits: u32,
            scalar levels: u32,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host's launch constants are the ones the sources are compiled for, and every
    /// entry point exists in both languages (f64 binary keys in CUDA only).
    #[test]
    fn sources_match_the_host() {
        for m in MODULES {
            assert!(m.cuda.contains(&format!("#define TB_THREADS {THREADS}u")), "{}", m.name);
            assert!(m.wgsl.contains(&format!("const THREADS: u32 = {THREADS}u;")), "{}", m.name);
        }
        for (module, entries) in ENTRIES {
            let m = MODULES.iter().find(|m| m.name == module).unwrap();
            for entry in entries {
                assert!(orrery_core::gpu::cuda_params(m.cuda, entry).is_some(), "CUDA lacks {entry}");
                if !CUDA_ONLY.contains(entry) {
                    assert!(m.wgsl.contains(&format!("fn {entry}(")), "WGSL lacks {entry}");
                }
            }
        }
    }
}
