//! orrery's WGSL shader sources, embedded as text (`&'static str`).
//!
//! The sources live in this crate's folder (`shaders/<crate>/*.wgsl`, one folder per
//! algorithm crate) rather than beside the host code, and are embedded here with
//! `include_str!` paths that stay inside the folder, so that `cargo package` ships them:
//! an `include_str!` reaching into another crate's folder builds in the workspace but not
//! from a published crate. This crate holds text only; the algorithm crates own the host
//! code (preprocessing of `//#include`, pipelines, launch shapes) and the tests that tie
//! the two together. `cargo xtask check-packaging` checks that every source is in the
//! package and that no crate of the workspace includes a file outside its own folder. See
//! `docs/adr/0010-packageable-kernel-crates.md`.
//!
//! - [`core`]: the primitives of `orrery-backend-wgpu` and the `//#include` snippets
//!   (`core/common`, `core/wg_scan`) kernels of any crate may use.
//! - [`balltree`]: the GPU ball tree build of `orrery-balltree`.
//! - [`tree`]: the GPU Cornerstone tree build of `orrery-tree-build`.
//! - [`tree_view`]: the GPU TreeView of `orrery-tree-build`.
//! - [`traverse`]: direct summation, multipoles and walks of `orrery-traverse`.
//! - [`sim`]: the leapfrog's kicks and drifts of `orrery-sim`.
//! - [`clusters`]: the statistics families of `orrery-clusters`.
//!
//! Adding a file is one line in its folder's list below.

/// Declares one `pub const NAME: &str` per `NAME = "file";` line, the text of
/// `shaders/<folder>/<file>`, and `FILES`, every (path, text) pair of the list.
macro_rules! files {
    ($folder:literal; $($(#[doc = $doc:literal])+ $id:ident = $file:literal;)+) => {
        $(
            $(#[doc = $doc])+
            #[doc = ""]
            #[doc = concat!("The text of `shaders/", $folder, "/", $file, "`.")]
            pub const $id: &str = include_str!(concat!("../", $folder, "/", $file));
        )+

        #[doc = concat!("Every file of `shaders/", $folder, "/`: (path under `shaders/`, text).")]
        pub const FILES: &[(&str, &str)] = &[$((concat!($folder, "/", $file), $id)),+];
    };
}

pub mod core {
    //! `shaders/core`: the data-parallel primitives of `orrery-backend-wgpu`, and the
    //! `//#include` snippets shared by the kernels of every crate.

    files! { "core";
        /// `//#include core/common`: `WORKGROUP_SIZE`, `linear_block`, `Invocation`/`Lane`,
        /// u64-as-`vec2<u32>` helpers.
        COMMON = "common.wgsl";
        /// `//#include core/wg_scan`: workgroup exclusive scan of `u32` (needs
        /// `core/common`).
        WG_SCAN = "wg_scan.wgsl";
        /// Data movement by element size: fill, iota, gather, scatter.
        DATA = "data.wgsl";
        /// Exclusive prefix sums of `u32` and stream compaction.
        SCAN = "scan.wgsl";
        /// Reductions (sum, min, max) to one value.
        REDUCE = "reduce.wgsl";
        /// One digit pass of the LSD radix sort of (u64 key, u32 value) pairs.
        RADIX_SORT = "radix_sort.wgsl";
        /// 64-bit 3D space-filling-curve keys of positions (Morton and Hilbert).
        SFC = "sfc.wgsl";
        /// The subgroup probe run once when the executor starts.
        PROBE = "probe.wgsl";
        /// Vectorised lower and upper bounds by order key.
        SEARCH = "search.wgsl";
        /// Segmented (CSR) scans, reductions and top-k.
        SEGMENTED = "segmented.wgsl";
        /// Histograms of u32 values.
        HISTOGRAM = "histogram.wgsl";
        /// `//#include core/segment`: a position's segment by binary search in segment
        /// starts (`upper_bound_one`'s loop; the includer defines `segment_start`).
        SEGMENT = "segment.wgsl";
    }
}

pub mod balltree {
    //! `shaders/balltree`: the GPU ball tree build of `orrery-balltree`, one module per
    //! pass (f32 only: WGSL has no f64; the CUDA twins are in `orrery_kernels::balltree`).

    files! { "balltree";
        /// Shared per-element rules of every pass.
        COMMON = "common.wgsl";
        /// Global levels: bounds, split dimensions, sort keys.
        LEVELS = "levels.wgsl";
        /// The Select strategy: selection rounds and the stable partition.
        SELECT = "select.wgsl";
        /// The local phase (sized by overrides per block shape).
        LOCAL = "local.wgsl";
    }

    /// The module texts: `common.wgsl`, then the pass file (which `//#include`s
    /// `core/segment` where it searches segments).
    pub mod unit {
        /// `common.wgsl`, `levels.wgsl`.
        pub const LEVELS: &str =
            concat!(include_str!("../balltree/common.wgsl"), "\n", include_str!("../balltree/levels.wgsl"));
        /// `common.wgsl`, `select.wgsl`.
        pub const SELECT: &str =
            concat!(include_str!("../balltree/common.wgsl"), "\n", include_str!("../balltree/select.wgsl"));
        /// `common.wgsl`, `local.wgsl`.
        pub const LOCAL: &str =
            concat!(include_str!("../balltree/common.wgsl"), "\n", include_str!("../balltree/local.wgsl"));
    }
}

pub mod tree {
    //! `shaders/tree`: the GPU Cornerstone tree build of `orrery-tree-build`, one module
    //! per concern (the CUDA twins are in `orrery_kernels::tree`).

    files! { "tree";
        /// Shared prelude: 64-bit keys as `vec2<u32>`, the status block's layout, leaf
        /// levels.
        COMMON = "common.wgsl";
        /// Particle keys: removal of particles outside the box, binary keys.
        KEYS = "keys.wgsl";
        /// The criterion-independent pass steps: counts, scatter, begin, finish.
        PASSES = "passes.wgsl";
        /// The LeafCount decide.
        LEAF_COUNT = "leaf_count.wgsl";
        /// The NFCount criterion: stencil counts, values carried between passes, the
        /// decide.
        NF_COUNT = "nf_count.wgsl";
    }

    /// The module texts: `common.wgsl`, then the file.
    pub mod unit {
        /// `common.wgsl`, `keys.wgsl`.
        pub const KEYS: &str = concat!(include_str!("../tree/common.wgsl"), "\n", include_str!("../tree/keys.wgsl"));
        /// `common.wgsl`, `passes.wgsl`.
        pub const PASSES: &str =
            concat!(include_str!("../tree/common.wgsl"), "\n", include_str!("../tree/passes.wgsl"));
        /// `common.wgsl`, `leaf_count.wgsl`.
        pub const LEAF_COUNT: &str =
            concat!(include_str!("../tree/common.wgsl"), "\n", include_str!("../tree/leaf_count.wgsl"));
        /// `common.wgsl`, `nf_count.wgsl`.
        pub const NF_COUNT: &str =
            concat!(include_str!("../tree/common.wgsl"), "\n", include_str!("../tree/nf_count.wgsl"));
    }
}

pub mod tree_view {
    //! `shaders/tree` (the TreeView's files): the GPU TreeView of `orrery-tree-build`
    //! (u64 as `vec2<u32>`, boxes in f32 only; the CUDA twin is `orrery_kernels::tree_view`).
    //! `view.wgsl` `//#include`s `core/common`.

    files! { "tree";
        /// The TreeView construction: per boundary, per node, per level, per particle.
        VIEW = "view.wgsl";
    }
}

pub mod traverse {
    //! `shaders/traverse`: the gravity shaders of `orrery-traverse` (f32 only: WGSL has no
    //! f64; the CUDA twins, and the f64 variants, are in `orrery_kernels::traverse`).
    //! `upward.wgsl` is self-contained; `direct.wgsl`, `walk.wgsl` and `fmm_p2p.wgsl`
    //! `//#include` `core/common`.

    files! { "traverse";
        /// Direct summation in f32 for all bodies or a list of targets.
        DIRECT = "direct.wgsl";
        /// The upward pass: bodies in tree order, multipoles from the leaves up, extents and
        /// the walk's packed node data.
        UPWARD = "upward.wgsl";
        /// The Barnes-Hut walks: independent, coherent and group, and the scatter back.
        WALK = "walk.wgsl";
        /// The FMM's near field (P2P) in f32 (the expansion passes are f64, CUDA only).
        FMM_P2P = "fmm_p2p.wgsl";
    }
}

pub mod sim {
    //! `shaders/sim`: the integrator shaders of `orrery-sim` (the CUDA twins are in
    //! `orrery_kernels::sim`); `integrate.wgsl` `//#include`s `core/common`.

    files! { "sim";
        /// Kicks (closing and opening half-kicks, block-step rungs) and drifts.
        INTEGRATE = "integrate.wgsl";
    }
}

pub mod clusters {
    //! `shaders/clusters`: the GPU statistics of `orrery-clusters` (the CUDA twins are in
    //! `orrery_kernels::clusters`); `centroid.wgsl`, `substructure.wgsl` and `pairwise.wgsl` `//#include` `core/common`;
    //! the last two follow `pairs.wgsl` ([`mod@unit`]). Exact k-NN
    //! has no WGSL twin (its rescoring is f64).

    files! { "clusters";
        /// The centroid family's three passes and their merges (f32).
        CENTROID = "centroid.wgsl";
        /// The sub-structure family: two-means and the silhouette's row-tile pass (f32).
        SUBSTRUCTURE = "substructure.wgsl";
        /// The scale, Gaussian-potential and diversity families' tiled pairwise passes (f32).
        PAIRWISE = "pairwise.wgsl";
        /// The prelude of the sub-structure and pairwise modules (pairs.cuh's twin): shared
        /// constants, NaN, compensated sums, the distance tile.
        PAIRS = "pairs.wgsl";
    }

    /// The module texts: `pairs.wgsl`, then the family file (which `//#include`s
    /// `core/common`).
    pub mod unit {
        /// `pairs.wgsl`, `substructure.wgsl`.
        pub const SUBSTRUCTURE: &str =
            concat!(include_str!("../clusters/pairs.wgsl"), "\n", include_str!("../clusters/substructure.wgsl"));
        /// `pairs.wgsl`, `pairwise.wgsl`.
        pub const PAIRWISE: &str =
            concat!(include_str!("../clusters/pairs.wgsl"), "\n", include_str!("../clusters/pairwise.wgsl"));
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    /// Every `.wgsl` file on disk is embedded (a new file must be added to its list), as
    /// it is on disk.
    #[test]
    fn every_file_is_listed() {
        // `shaders/tree` holds the tree build's passes and the TreeView's file.
        let tree: Vec<(&str, &str)> = super::tree::FILES.iter().chain(super::tree_view::FILES).copied().collect();
        for (folder, files) in [
            ("core", super::core::FILES),
            ("balltree", super::balltree::FILES),
            ("tree", tree.as_slice()),
            ("traverse", super::traverse::FILES),
            ("sim", super::sim::FILES),
            ("clusters", super::clusters::FILES),
        ] {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
            let on_disk: BTreeSet<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .filter(|n| Path::new(n).extension().is_some_and(|e| e == "wgsl"))
                .map(|n| format!("{folder}/{n}"))
                .collect();
            let listed: BTreeSet<String> = files.iter().map(|(p, _)| (*p).to_owned()).collect();
            assert_eq!(listed, on_disk, "shaders/{folder}");
            for (path, text) in files {
                let disk = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
                assert_eq!(*text, disk, "{path}");
            }
        }
    }
}
