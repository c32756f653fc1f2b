//! orrery's CUDA C kernel sources, embedded as text (`&'static str`), for NVRTC to compile
//! at run time.
//!
//! The sources live in this crate's folder (`kernels/<crate>/*.cu`, one folder per
//! algorithm crate) rather than beside the host code, and are embedded here with
//! `include_str!` paths that stay inside the folder, so that `cargo package` ships them:
//! an `include_str!` reaching into another crate's folder builds in the workspace but not
//! from a published crate. This crate holds text only; the algorithm crates own the host
//! code (launch shapes, arguments, the module cache) and the tests that tie the two
//! together. `cargo xtask check-packaging` checks that every source is in the package and
//! that no crate of the workspace includes a file outside its own folder. See
//! `docs/adr/0010-packageable-kernel-crates.md`.
//!
//! - [`core`]: the primitives of `orrery-backend-cuda` and their shared header; each
//!   `.cu` file is also exported as the translation unit NVRTC compiles
//!   ([`core::unit`]).
//! - [`balltree`]: the GPU ball tree build of `orrery-balltree`.
//! - [`tree`]: the GPU Cornerstone tree build of `orrery-tree-build`.
//! - [`tree_view`]: the GPU TreeView of `orrery-tree-build`.
//! - [`traverse`]: direct summation, multipoles and walks of `orrery-traverse`.
//! - [`sim`]: the leapfrog's kicks and drifts of `orrery-sim`.
//! - [`clusters`]: the statistics families and exact k-NN of `orrery-clusters`.
//!
//! Adding a file is one line in its folder's list below.

/// Declares one `pub const NAME: &str` per `NAME = "file";` line, the text of
/// `kernels/<folder>/<file>`, and `FILES`, every (path, text) pair of the list.
macro_rules! files {
    ($folder:literal; $($(#[doc = $doc:literal])+ $id:ident = $file:literal;)+) => {
        $(
            $(#[doc = $doc])+
            #[doc = ""]
            #[doc = concat!("The text of `kernels/", $folder, "/", $file, "`.")]
            pub const $id: &str = include_str!(concat!("../", $folder, "/", $file));
        )+

        #[doc = concat!("Every file of `kernels/", $folder, "/`: (path under `kernels/`, text).")]
        pub const FILES: &[(&str, &str)] = &[$((concat!($folder, "/", $file), $id)),+];
    };
}

/// [`files!`] for `kernels/core`, and [`core::unit`]: every `.cu` file listed here, as
/// the translation unit NVRTC compiles.
macro_rules! core_files {
    (
        $(#[doc = $hdoc:literal])+ COMMON_CUH = $header:literal;
        $($(#[doc = $doc:literal])+ $id:ident = $file:literal;)+
    ) => {
        files!("core"; $(#[doc = $hdoc])+ COMMON_CUH = $header; $($(#[doc = $doc])+ $id = $file;)+);

        /// The translation units of the core modules: `common.cuh`, then a `#line`
        /// directive (so NVRTC's messages name the right file and line), then the file.
        /// These texts are what `orrery-backend-cuda` compiles and caches; they are
        /// byte-identical to that crate's concatenation before this crate existed.
        pub mod unit {
            $(
                #[doc = concat!(
                    "`common.cuh`, `#line 1 \"kernels/core/", $file, "\"` and `", $file,
                    "` ([`super::", stringify!($id), "`]) as one translation unit."
                )]
                pub const $id: &str = concat!(
                    include_str!(concat!("../core/", $header)),
                    "\n#line 1 \"kernels/core/",
                    $file,
                    "\"\n",
                    include_str!(concat!("../core/", $file))
                );
            )+

            /// Every translation unit: (path of its `.cu` file under `kernels/`, text).
            pub const UNITS: &[(&str, &str)] = &[$((concat!("core/", $file), $id)),+];
        }
    };
}

pub mod core {
    //! `kernels/core`: the data-parallel primitives of `orrery-backend-cuda`. Entry
    //! points are `extern "C"`; their arguments follow the buffers-then-scalars convention
    //! of `orrery_core::gpu`.

    core_files! {
        /// Shared prelude of every core module: integer type names, warp and block
        /// collectives, the status words of the decoupled look-back.
        COMMON_CUH = "common.cuh";
        /// Exclusive scan and stream compaction (`scan_exclusive_u32`, `compact_b4`,
        /// `compact_b8`).
        SCAN = "scan.cu";
        /// Reductions (`reduce_{sum,min,max}_{u32,i32,u64,i64,f32,f64}`).
        REDUCE = "reduce.cu";
        /// Radix sort (`radix_histogram`, `radix_bin_offsets`, `radix_onesweep`).
        SORT = "sort.cu";
        /// Gather, scatter, fill and iota (`gather_b4`, `gather_b8`, `scatter_b4`,
        /// `scatter_b8`, `fill_b8`, `iota_u32`).
        MOVEMENT = "movement.cu";
        /// Space-filling-curve keys (`sfc_{morton,hilbert1,hilbert3}_{f32,f64}`).
        SFC = "sfc.cu";
        /// Histograms (`histogram_shared_1k`, `histogram_shared_8k`, `histogram_global`).
        HISTOGRAM = "histogram.cu";
    }

    /// The modules that compare elements by `Element::order_key` (`order_key.cuh`): their
    /// translation units are `common.cuh`, `order_key.cuh`, then the file, each after a
    /// `#line` directive.
    pub mod keyed {
        files! { "core";
            /// The order-key transform of `orrery_core::Element::order_key`, per type.
            ORDER_KEY_CUH = "order_key.cuh";
            /// Lower and upper bounds (`lower_bound_<type>`, `upper_bound_<type>`).
            SEARCH = "search.cu";
            /// Segmented reductions, scans and top-k.
            SEGMENTED = "segmented.cu";
            /// A snippet (not a module): a position's segment by binary search in segment
            /// starts (`upper_bound_one`'s loop), shared by algorithm crates' kernels.
            SEGMENT_CUH = "segment.cuh";
        }

        /// The translation units of the keyed modules.
        pub mod unit {
            macro_rules! keyed_unit {
                ($(#[doc = $doc:literal])+ $id:ident = $file:literal) => {
                    $(#[doc = $doc])+
                    pub const $id: &str = concat!(
                        include_str!("../core/common.cuh"),
                        "\n#line 1 \"kernels/core/order_key.cuh\"\n",
                        include_str!("../core/order_key.cuh"),
                        "\n#line 1 \"kernels/core/",
                        $file,
                        "\"\n",
                        include_str!(concat!("../core/", $file))
                    );
                };
            }
            keyed_unit!(
                /// `search.cu` as one translation unit.
                SEARCH = "search.cu"
            );
            keyed_unit!(
                /// `segmented.cu` as one translation unit.
                SEGMENTED = "segmented.cu"
            );
        }
    }
}

pub mod balltree {
    //! `kernels/balltree`: the GPU ball tree build of `orrery-balltree`, one module per
    //! pass (the WGSL twins are in `orrery_shaders::balltree`).

    files! { "balltree";
        /// Shared per-element rules of every pass (codes, spreads, tile shapes).
        COMMON_CUH = "common.cuh";
        /// Global levels: bounds, split dimensions, sort keys.
        LEVELS = "levels.cu";
        /// The Select strategy: selection rounds and the stable partition.
        SELECT = "select.cu";
        /// The local phase (compiled per block shape through defines).
        LOCAL = "local.cu";
    }

    /// The translation units of the passes: `common.cuh`, the core segment search for the
    /// passes that search segments, then the pass file, each after a `#line` directive.
    pub mod unit {
        /// `common.cuh`, `core/segment.cuh`, `levels.cu`.
        pub const LEVELS: &str = concat!(
            include_str!("../balltree/common.cuh"),
            "\n#line 1 \"kernels/core/segment.cuh\"\n",
            include_str!("../core/segment.cuh"),
            "\n#line 1 \"kernels/balltree/levels.cu\"\n",
            include_str!("../balltree/levels.cu")
        );
        /// `common.cuh`, `core/segment.cuh`, `select.cu`.
        pub const SELECT: &str = concat!(
            include_str!("../balltree/common.cuh"),
            "\n#line 1 \"kernels/core/segment.cuh\"\n",
            include_str!("../core/segment.cuh"),
            "\n#line 1 \"kernels/balltree/select.cu\"\n",
            include_str!("../balltree/select.cu")
        );
        /// `common.cuh`, `local.cu`.
        pub const LOCAL: &str = concat!(
            include_str!("../balltree/common.cuh"),
            "\n#line 1 \"kernels/balltree/local.cu\"\n",
            include_str!("../balltree/local.cu")
        );
    }
}

pub mod tree {
    //! `kernels/tree`: the GPU Cornerstone tree build of `orrery-tree-build`, one module
    //! per concern (the WGSL twins are in `orrery_shaders::tree`).

    files! { "tree";
        /// Shared prelude: integer types, the status block's layout, the halving search,
        /// leaf levels.
        COMMON_CUH = "common.cuh";
        /// Particle keys: removal of particles outside the box, binary keys.
        KEYS = "keys.cu";
        /// The criterion-independent pass steps: counts, scatter, begin, finish.
        PASSES = "passes.cu";
        /// The LeafCount decide.
        LEAF_COUNT = "leaf_count.cu";
        /// The NFCount criterion: stencil counts, values carried between passes, the
        /// decide.
        NF_COUNT = "nf_count.cu";
    }

    /// The translation units: `common.cuh`, then the file, after a `#line` directive.
    pub mod unit {
        macro_rules! tree_unit {
            ($(#[doc = $doc:literal])+ $id:ident = $file:literal) => {
                $(#[doc = $doc])+
                pub const $id: &str = concat!(
                    include_str!("../tree/common.cuh"),
                    "\n#line 1 \"kernels/tree/",
                    $file,
                    "\"\n",
                    include_str!(concat!("../tree/", $file))
                );
            };
        }
        tree_unit!(
            /// `common.cuh`, `keys.cu`.
            KEYS = "keys.cu"
        );
        tree_unit!(
            /// `common.cuh`, `passes.cu`.
            PASSES = "passes.cu"
        );
        tree_unit!(
            /// `common.cuh`, `leaf_count.cu`.
            LEAF_COUNT = "leaf_count.cu"
        );
        tree_unit!(
            /// `common.cuh`, `nf_count.cu`.
            NF_COUNT = "nf_count.cu"
        );
    }
}

pub mod tree_view {
    //! `kernels/tree` (the TreeView's files): the GPU TreeView of `orrery-tree-build`
    //! (the WGSL twin is `orrery_shaders::tree_view`). `view.cu` is self-contained: it is
    //! the translation unit NVRTC compiles.

    files! { "tree";
        /// The TreeView construction: per boundary, per node, per level, per particle.
        VIEW = "view.cu";
    }
}

pub mod traverse {
    //! `kernels/traverse`: the gravity kernels of `orrery-traverse` (the WGSL twins are in
    //! `orrery_shaders::traverse`). `upward.cu`, `walk.cu`, `fmm.cu` and `fmm_p2p.cu` are
    //! self-contained translation units; `direct.cu` follows `common.cuh`
    //! ([`unit::DIRECT`]).

    files! { "traverse";
        /// Shared prelude of the direct sum: integer types, its launch constants, the fast
        /// reciprocal square root and the softened squared distance.
        COMMON_CUH = "common.cuh";
        /// Direct summation: tiled f32 with several targets per thread, and f64 (CUDA
        /// only), for all bodies or a list of targets.
        DIRECT = "direct.cu";
        /// The upward pass: bodies in tree order, multipoles from the leaves up, extents and
        /// the walk's packed node data.
        UPWARD = "upward.cu";
        /// The Barnes-Hut walks: independent, coherent and group, and the scatter back.
        WALK = "walk.cu";
        /// The FMM's expansion passes in f64 (P2M, M2M, M2L, L2L, L2P; CUDA only).
        FMM = "fmm.cu";
        /// The FMM's near field (P2P) in f32.
        FMM_P2P = "fmm_p2p.cu";
    }

    /// The translation units: `common.cuh`, then the file, after a `#line` directive.
    pub mod unit {
        /// `common.cuh`, `direct.cu`.
        pub const DIRECT: &str = concat!(
            include_str!("../traverse/common.cuh"),
            "\n#line 1 \"kernels/traverse/direct.cu\"\n",
            include_str!("../traverse/direct.cu")
        );
    }
}

pub mod sim {
    //! `kernels/sim`: the integrator kernels of `orrery-sim` (the WGSL twins are in
    //! `orrery_shaders::sim`); self-contained translation units.

    files! { "sim";
        /// Kicks (closing and opening half-kicks, block-step rungs) and drifts.
        INTEGRATE = "integrate.cu";
    }
}

pub mod clusters {
    //! `kernels/clusters`: the GPU statistics and search of `orrery-clusters` (the WGSL twin
    //! of the centroid family is `orrery_shaders::clusters`; exact k-NN is CUDA only).
    //! `centroid.cu` follows `common.cuh` ([`unit::CENTROID`]); `substructure.cu` and
    //! `pairwise.cu` follow `common.cuh` and `pairs.cuh` ([`unit::SUBSTRUCTURE`],
    //! [`unit::PAIRWISE`]); `knn.cu` and `probe.cu` are self-contained.

    files! { "clusters";
        /// Shared prelude of the centroid family: launch constants, the statistics buffer's
        /// field layout, compensated sums, f32 streaming moments.
        COMMON_CUH = "common.cuh";
        /// The centroid family's three passes and their merges (f32).
        CENTROID = "centroid.cu";
        /// Exact k-NN: norms, the tiled f32 screen with per-query top lists, the exact f64
        /// refinement, and the exact path for flagged queries.
        KNN = "knn.cu";
        /// The inverted file and the lattice: k-means++ distances, Lloyd iterations, exact
        /// f64 centroids, and the list-probing search (coarse keys, per-list partial top-k,
        /// merge) with the fused side measurement.
        PROBE = "probe.cu";
        /// Shared prelude of the sub-structure and pairwise modules: launch constants, the
        /// 64 x 64 distance tile, the pairwise item decode, f32 moments with a float count.
        PAIRS_CUH = "pairs.cuh";
        /// The sub-structure family: two-means (seed, assign, sums, update, finish) and the
        /// silhouette's row-tile pass (f32).
        SUBSTRUCTURE = "substructure.cu";
        /// The scale, Gaussian-potential and diversity families: the tiled pairwise passes
        /// and their per-cluster merges (f32).
        PAIRWISE = "pairwise.cu";
    }

    /// The translation units: `common.cuh`, then the file, after a `#line` directive.
    pub mod unit {
        /// `common.cuh`, `centroid.cu`.
        pub const CENTROID: &str = concat!(
            include_str!("../clusters/common.cuh"),
            "\n#line 1 \"kernels/clusters/centroid.cu\"\n",
            include_str!("../clusters/centroid.cu")
        );
        /// `common.cuh`, `pairs.cuh`, `substructure.cu`.
        pub const SUBSTRUCTURE: &str = concat!(
            include_str!("../clusters/common.cuh"),
            "\n#line 1 \"kernels/clusters/pairs.cuh\"\n",
            include_str!("../clusters/pairs.cuh"),
            "\n#line 1 \"kernels/clusters/substructure.cu\"\n",
            include_str!("../clusters/substructure.cu")
        );
        /// `common.cuh`, `pairs.cuh`, `pairwise.cu`.
        pub const PAIRWISE: &str = concat!(
            include_str!("../clusters/common.cuh"),
            "\n#line 1 \"kernels/clusters/pairs.cuh\"\n",
            include_str!("../clusters/pairs.cuh"),
            "\n#line 1 \"kernels/clusters/pairwise.cu\"\n",
            include_str!("../clusters/pairwise.cu")
        );
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    /// The files on disk under `kernels/<folder>` with a CUDA extension.
    fn on_disk(folder: &str) -> BTreeSet<String> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| Path::new(n).extension().is_some_and(|e| e == "cu" || e == "cuh"))
            .map(|n| format!("{folder}/{n}"))
            .collect()
    }

    /// Every source on disk is embedded (a new file must be added to its list).
    #[test]
    fn every_file_is_listed() {
        let core: Vec<(&str, &str)> = super::core::FILES.iter().chain(super::core::keyed::FILES).copied().collect();
        // `kernels/tree` holds the tree build's passes and the TreeView's file.
        let tree: Vec<(&str, &str)> = super::tree::FILES.iter().chain(super::tree_view::FILES).copied().collect();
        for (folder, files) in [
            ("core", core.as_slice()),
            ("balltree", super::balltree::FILES),
            ("tree", tree.as_slice()),
            ("traverse", super::traverse::FILES),
            ("sim", super::sim::FILES),
            ("clusters", super::clusters::FILES),
        ] {
            let listed: BTreeSet<String> = files.iter().map(|(p, _)| (*p).to_owned()).collect();
            assert_eq!(listed, on_disk(folder), "kernels/{folder}");
            for &(path, text) in files {
                let disk = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
                assert_eq!(text, disk, "{path}");
            }
        }
    }

    /// Each unit is exactly the concatenation `orrery-backend-cuda` compiled before this
    /// crate existed (kernel cache keys and `#line` numbers depend on it).
    #[test]
    fn units_are_header_line_directive_and_file() {
        use super::core::{COMMON_CUH, FILES, unit::UNITS};
        assert_eq!(UNITS.len(), FILES.len() - 1);
        for (path, text) in UNITS {
            let file = FILES.iter().find(|(p, _)| p == path).unwrap().1;
            assert_eq!(*text, format!("{COMMON_CUH}\n#line 1 \"kernels/{path}\"\n{file}"), "{path}");
        }
    }
}
