//! The kernel modules and the launch constants the host shares with them (each checked
//! against the source text by a test, so the host and the kernels cannot drift apart).

use orrery_core::KernelSource;

/// The centroid family: `kernels/clusters/common.cuh` + `centroid.cu`, and
/// `shaders/clusters/centroid.wgsl`.
pub const CENTROID: KernelSource = KernelSource::new(
    "clusters/centroid",
    orrery_kernels::clusters::unit::CENTROID,
    orrery_shaders::clusters::CENTROID,
);

/// Exact k-NN: `kernels/clusters/knn.cu` (CUDA only: no WGSL text).
pub const KNN: KernelSource = KernelSource::new("clusters/knn", orrery_kernels::clusters::KNN, "");

/// The inverted file and the lattice: `kernels/clusters/probe.cu` (CUDA only: no WGSL text).
pub const PROBE: KernelSource = KernelSource::new("clusters/probe", orrery_kernels::clusters::PROBE, "");

/// The sub-structure family (two-means and the silhouette): `kernels/clusters/common.cuh` +
/// `pairs.cuh` + `substructure.cu`, and `shaders/clusters/pairs.wgsl` + `substructure.wgsl`.
pub const SUBSTRUCTURE: KernelSource = KernelSource::new(
    "clusters/substructure",
    orrery_kernels::clusters::unit::SUBSTRUCTURE,
    orrery_shaders::clusters::unit::SUBSTRUCTURE,
);

/// The scale, Gaussian-potential and diversity families (the tiled pairwise passes):
/// `kernels/clusters/common.cuh` + `pairs.cuh` + `pairwise.cu`, and
/// `shaders/clusters/pairs.wgsl` + `pairwise.wgsl`.
pub const PAIRWISE: KernelSource = KernelSource::new(
    "clusters/pairwise",
    orrery_kernels::clusters::unit::PAIRWISE,
    orrery_shaders::clusters::unit::PAIRWISE,
);

/// Every module this crate launches (for ahead-of-time compile checks: `cargo xtask
/// kernels` compiles each with NVRTC and validates the WGSL).
pub const KERNEL_MODULES: [KernelSource; 5] = [CENTROID, KNN, PROBE, SUBSTRUCTURE, PAIRWISE];

/// The entry points of the centroid module (both languages).
pub const CENTROID_ENTRIES: [&str; 9] = [
    "cl_sum_chunks",
    "cl_centroids",
    "cl_global_part",
    "cl_global",
    "cl_distances",
    "cl_moments",
    "cl_thresholds",
    "cl_finish",
    "cl_novelty",
];

/// The entry points of the k-NN module (CUDA only).
pub const KNN_ENTRIES: [&str; 9] = [
    "knn_norms",
    "knn_screen",
    "knn_refine",
    "knn_gather",
    "knn_thresholds",
    "knn_filter",
    "knn_rescore",
    "knn_exact_keys",
    "knn_fallback_scatter",
];

/// The entry points of the probe module (CUDA only).
pub const PROBE_ENTRIES: [&str; 14] = [
    "pr_keys",
    "pr_d2",
    "pr_chunk_sums",
    "pr_seed",
    "pr_sum_items",
    "pr_fold_items",
    "pr_gather_rows",
    "pr_widen",
    "pr_pairs",
    "pr_items",
    "pr_partial",
    "pr_merge",
    "pr_side_chunks",
    "pr_side_fold",
];

/// The entry points of the sub-structure module (both languages).
pub const SUBSTRUCTURE_ENTRIES: [&str; 7] =
    ["tm_seed", "tm_assign", "tm_chunk_sums", "tm_update", "tm_finish", "sil_rows", "sil_merge"];

/// The entry points of the pairwise module (both languages).
pub const PAIRWISE_ENTRIES: [&str; 9] = [
    "sc_hist",
    "sc_sigma",
    "pot_nearest",
    "pot_entangle",
    "pot_finish",
    "div_moments",
    "div_merge",
    "div_hist",
    "div_entropy",
];

/// Every entry point of [`KERNEL_MODULES`], by module name.
pub const KERNEL_ENTRIES: [(&str, &[&str]); 5] = [
    ("clusters/centroid", &CENTROID_ENTRIES),
    ("clusters/knn", &KNN_ENTRIES),
    ("clusters/probe", &PROBE_ENTRIES),
    ("clusters/substructure", &SUBSTRUCTURE_ENTRIES),
    ("clusters/pairwise", &PAIRWISE_ENTRIES),
];

// ---- the centroid module's constants (common.cuh, centroid.wgsl) ------------------------

/// Threads per block of the column kernels, `cl_distances`, `cl_finish` and `cl_novelty`
/// (`CL_THREADS`, `THREADS`).
pub(crate) const CL_THREADS: u32 = 256;
/// Rows per chunk of the per-member passes (`CL_CHUNK_ROWS`, `CHUNK_ROWS`); also the
/// threads of `cl_thresholds`. The CPU's chunk is 4,096 rows; 128 gives a 100K-member
/// cluster 782 blocks, enough to fill the GPU, at partials of 3 % of the input bytes.
pub(crate) const CL_CHUNK_ROWS: u32 = 128;
/// Threads of `cl_moments` (`CL_MERGE_THREADS`, `MERGE_THREADS`).
pub(crate) const CL_MERGE_THREADS: u32 = 128;
/// Clusters per partial of the global centroid (`CL_GROUP`, `GROUP`).
pub(crate) const CL_GROUP: u32 = 32;
/// Fields of the per-cluster statistics buffer (`CL_FIELDS`, `FIELDS`).
pub(crate) const CL_FIELDS: usize = 17;
/// Values per chunk of pass 2's partials (`CL_P2_FIELDS`).
pub(crate) const CL_P2_FIELDS: usize = 8;
/// Words per chunk of pass 3's partials (`CL_P3_FIELDS`).
pub(crate) const CL_P3_FIELDS: usize = 4;

/// The statistics buffer's fields in order (`CL_F_*` in common.cuh, `F_*` in the WGSL).
pub(crate) mod field {
    pub const COHESION: usize = 0;
    pub const INERTIA: usize = 1;
    pub const RMS: usize = 2;
    pub const SPREAD: usize = 3;
    pub const SKEW: usize = 4;
    pub const MIN: usize = 5;
    pub const MAX: usize = 6;
    pub const MEAN_NORM: usize = 7;
    pub const QUALITY: usize = 8;
    pub const OFFSET: usize = 9;
    pub const NOVELTY: usize = 10;
    pub const OUTLIER: usize = 11;
    pub const CORE: usize = 12;
    pub const CORE_PERIPHERY: usize = 13;
    /// The names as the sources spell them (after `CL_F_` / `F_`), in order.
    #[cfg(test)]
    pub const NAMES: [&str; super::CL_FIELDS] = [
        "COHESION",
        "INERTIA",
        "RMS",
        "SPREAD",
        "SKEW",
        "MIN",
        "MAX",
        "MEAN_NORM",
        "QUALITY",
        "OFFSET",
        "NOVELTY",
        "OUTLIER",
        "CORE",
        "CORE_PERIPHERY",
        "OUTLIER_T",
        "CORE_T",
        "GLOBAL_TERM",
    ];
}

// ---- the sub-structure and pairwise modules' constants (pairs.cuh, *.wgsl) ----------------

/// Rows per tile of the pairwise passes (`PT_TILE`): the CPU's [`crate::grid::PAIR_TILE`].
pub(crate) const PT_TILE: u32 = 64;
/// Threads of every pairwise-item kernel, `sil_rows`, `pot_nearest`, `pot_finish` and the
/// per-cluster-thread kernels (`PT_THREADS`).
pub(crate) const PT_THREADS: u32 = 256;
/// Most pairwise items of one cluster (`PT_MAX_ITEMS`; the CPU's
/// [`crate::grid::MAX_TILE_ITEMS`]).
pub(crate) const PT_MAX_ITEMS: u64 = 4096;
/// Threads of `sil_merge` and `div_merge` (`PT_MERGE_THREADS`).
pub(crate) const PT_MERGE_THREADS: u32 = 128;
/// Rows per chunk of the two-means passes (`TM_CHUNK_ROWS`).
pub(crate) const TM_CHUNK_ROWS: u32 = 128;
/// Threads of the two-means kernels (`TM_THREADS`; also the column slab).
pub(crate) const TM_THREADS: u32 = 256;
/// Bins of sigma's histogram (`SIGMA_BINS`).
pub(crate) const SIGMA_BINS: usize = crate::scale::SIGMA_BINS;
/// Bins of the diversity histogram (`DIV_BINS`).
pub(crate) const DIV_BINS: usize = crate::diversity::DIVERSITY_BINS;
/// Fields of the sub-structure statistics buffer (`SUB_FIELDS`), in order.
pub(crate) const SUB_NAMES: [&str; 5] = ["SPLIT_INERTIA", "INERTIA_RATIO", "SILHOUETTE", "BALANCE", "SEPARATION"];
/// Fields of the scale statistics buffer (`SC_FIELDS`), in order.
pub(crate) const SC_NAMES: [&str; 2] = ["SIGMA", "WIDTH"];
/// Fields of the potential statistics buffer (`POT_FIELDS`), in order.
pub(crate) const POT_NAMES: [&str; 5] = ["DEPTH", "CURVATURE", "ESCAPE", "ENTANGLEMENT", "NEAREST_DISTANCE"];
/// Fields of the diversity statistics buffer (`DIV_FIELDS`), in order.
pub(crate) const DIV_NAMES: [&str; 10] =
    ["MEAN", "STD", "SKEW", "CV", "MIN", "MAX", "ENTROPY", "PERPLEXITY", "LO", "WIDTH"];

// ---- the k-NN module's constants (knn.cu) -----------------------------------------------

/// Threads of `knn_screen` (`KNN_THREADS`).
pub(crate) const KNN_THREADS: u32 = 256;
/// Queries per block and database rows per tile of `knn_screen` (`KNN_TILE`).
pub(crate) const KNN_TILE: usize = 128;
/// Dimensions per shared-memory chunk (`KNN_KC`).
pub(crate) const KNN_KC: usize = 16;
/// Row stride of a shared-memory stage in floats (`KNN_AS`).
pub(crate) const KNN_AS: usize = 132;
/// Longest per-query list of the screen (`KNN_MAX_KP`): `k + KNN_MARGIN` rounded up to 8.
pub(crate) const KNN_MAX_KP: usize = 144;
/// Entries beyond `k` that a screen list keeps (`KNN_MARGIN`).
pub(crate) const KNN_MARGIN: usize = 16;
/// Threads of `knn_refine` (`KNN_REFINE_THREADS`).
pub(crate) const KNN_REFINE_THREADS: u32 = 256;
/// Most entries `knn_refine` sorts per query (`KNN_MAX_SORT`): splits * KP <= this.
pub(crate) const KNN_MAX_SORT: usize = 2048;
/// Threads of `knn_norms` (`KNN_NORM_THREADS`; a warp per row).
pub(crate) const KNN_NORM_THREADS: u32 = 256;
/// Threads of `knn_exact_keys`, `knn_fallback_scatter`, `knn_gather` and
/// `knn_thresholds` (`KNN_EXACT_THREADS`).
pub(crate) const KNN_EXACT_THREADS: u32 = 256;

// ---- the probe module's constants (probe.cu) -----------------------------------------------

/// Threads of `pr_keys` and `pr_partial` (`PR_THREADS`: 16 x 16).
pub(crate) const PR_THREADS: u32 = 256;
/// Queries per tile of `pr_keys` and per item of `pr_partial` (`PR_TQ`).
pub(crate) const PR_TQ: usize = 32;
/// Centroids (or list rows) per tile (`PR_TC`).
pub(crate) const PR_TC: usize = 32;
/// List rows per segment of a `pr_partial` item (`PR_SEG`).
pub(crate) const PR_SEG: usize = 2048;
/// Threads of `pr_merge` (`PR_MERGE_THREADS`, at least [`crate::MAX_K`]).
pub(crate) const PR_MERGE_THREADS: u32 = 128;
/// Threads of the per-element kernels (`PR_ROW_THREADS`).
pub(crate) const PR_ROW_THREADS: u32 = 256;
/// Rows per block of the seeding's running sum and of the side's chunks (`PR_CHUNK`): the
/// CPU's [`crate::search::ivf::SEED_CHUNK`] and [`crate::grid::MEMBER_CHUNK`].
pub(crate) const PR_CHUNK: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    /// The host's launch constants are the ones the sources are compiled for.
    #[test]
    fn constants_match_the_sources() {
        let (cuda, wgsl) = (CENTROID.cuda, CENTROID.wgsl);
        for (name, v) in [
            ("CL_THREADS", CL_THREADS),
            ("CL_CHUNK_ROWS", CL_CHUNK_ROWS),
            ("CL_MERGE_THREADS", CL_MERGE_THREADS),
            ("CL_GROUP", CL_GROUP),
        ] {
            assert!(cuda.contains(&format!("#define {name} {v}u")), "{name}");
        }
        for (name, v) in [
            ("THREADS", CL_THREADS),
            ("CHUNK_ROWS", CL_CHUNK_ROWS),
            ("MERGE_THREADS", CL_MERGE_THREADS),
            ("GROUP", CL_GROUP),
        ] {
            assert!(wgsl.contains(&format!("const {name}: u32 = {v}u;")), "{name}");
        }
        assert!(cuda.contains(&format!("#define CL_FIELDS {CL_FIELDS}u")));
        assert!(wgsl.contains(&format!("const FIELDS: u32 = {CL_FIELDS}u;")));
        assert!(cuda.contains(&format!("#define CL_P2_FIELDS {CL_P2_FIELDS}u")));
        assert!(cuda.contains(&format!("#define CL_P3_FIELDS {CL_P3_FIELDS}u")));
        for (i, name) in field::NAMES.iter().enumerate() {
            assert!(cuda.contains(&format!("#define CL_F_{name} {i}u")), "CL_F_{name}");
            assert!(wgsl.contains(&format!("const F_{name}: u32 = {i}u;")), "F_{name}");
        }
        let knn = KNN.cuda;
        for (name, v) in [
            ("KNN_THREADS", KNN_THREADS as usize),
            ("KNN_TILE", KNN_TILE),
            ("KNN_KC", KNN_KC),
            ("KNN_AS", KNN_AS),
            ("KNN_MAX_KP", KNN_MAX_KP),
            ("KNN_MARGIN", KNN_MARGIN),
            ("KNN_REFINE_THREADS", KNN_REFINE_THREADS as usize),
            ("KNN_MAX_SORT", KNN_MAX_SORT),
            ("KNN_NORM_THREADS", KNN_NORM_THREADS as usize),
            ("KNN_EXACT_THREADS", KNN_EXACT_THREADS as usize),
        ] {
            assert!(knn.contains(&format!("#define {name} {v}u")), "{name}");
        }
        assert_eq!(KNN_MAX_KP, (crate::MAX_K + KNN_MARGIN).next_multiple_of(8));
        let probe = PROBE.cuda;
        for (name, v) in [
            ("PR_THREADS", PR_THREADS as usize),
            ("PR_TQ", PR_TQ),
            ("PR_TC", PR_TC),
            ("PR_SEG", PR_SEG),
            ("PR_MAX_K", crate::MAX_K),
            ("PR_MERGE_THREADS", PR_MERGE_THREADS as usize),
            ("PR_ROW_THREADS", PR_ROW_THREADS as usize),
            ("PR_CHUNK", PR_CHUNK),
        ] {
            assert!(probe.contains(&format!("#define {name} {v}u")), "{name}");
        }
        assert_eq!(PR_CHUNK, crate::search::ivf::SEED_CHUNK);
        assert_eq!(PR_CHUNK, crate::grid::MEMBER_CHUNK);
        assert!(PR_MERGE_THREADS as usize >= crate::MAX_K);
    }

    /// The sub-structure and pairwise modules' constants and field layouts in both languages.
    #[test]
    fn family_constants_match_the_sources() {
        let cuda = [SUBSTRUCTURE.cuda, PAIRWISE.cuda];
        let wgsl = [SUBSTRUCTURE.wgsl, PAIRWISE.wgsl];
        for (name, v) in [
            ("PT_TILE", u64::from(PT_TILE)),
            ("PT_THREADS", u64::from(PT_THREADS)),
            ("PT_MAX_ITEMS", PT_MAX_ITEMS),
            ("PT_MERGE_THREADS", u64::from(PT_MERGE_THREADS)),
            ("TM_CHUNK_ROWS", u64::from(TM_CHUNK_ROWS)),
            ("TM_THREADS", u64::from(TM_THREADS)),
            ("SIGMA_BINS", SIGMA_BINS as u64),
            ("DIV_BINS", DIV_BINS as u64),
        ] {
            for text in cuda {
                assert!(text.contains(&format!("#define {name} {v}u")), "CUDA {name}");
            }
            for text in wgsl {
                assert!(text.contains(&format!("const {name}: u32 = {v}u;")), "WGSL {name}");
            }
        }
        for (text, w, prefix, names) in [
            (SUBSTRUCTURE.cuda, SUBSTRUCTURE.wgsl, "SUB", &SUB_NAMES[..]),
            (PAIRWISE.cuda, PAIRWISE.wgsl, "SC", &SC_NAMES[..]),
            (PAIRWISE.cuda, PAIRWISE.wgsl, "POT", &POT_NAMES[..]),
            (PAIRWISE.cuda, PAIRWISE.wgsl, "DIV", &DIV_NAMES[..]),
        ] {
            for (i, name) in names.iter().enumerate() {
                assert!(text.contains(&format!("#define {prefix}_F_{name} {i}u")), "CUDA {prefix}_F_{name}");
                assert!(w.contains(&format!("const {prefix}_F_{name}: u32 = {i}u;")), "WGSL {prefix}_F_{name}");
            }
            assert!(text.contains(&format!("#define {prefix}_FIELDS {}u", names.len())), "{prefix}_FIELDS");
            assert!(w.contains(&format!("const {prefix}_FIELDS: u32 = {}u;", names.len())), "{prefix}_FIELDS");
        }
        for (module, entries) in [(SUBSTRUCTURE, &SUBSTRUCTURE_ENTRIES[..]), (PAIRWISE, &PAIRWISE_ENTRIES[..])] {
            for entry in entries {
                assert!(orrery_core::gpu::cuda_params(module.cuda, entry).is_some(), "CUDA lacks {entry}");
                assert!(module.wgsl.contains(&format!("fn {entry}(")), "WGSL lacks {entry}");
            }
        }
    }

    /// Every entry point the host launches exists in CUDA, the centroid family's in WGSL
    /// too, and the k-NN module has no WGSL text.
    #[test]
    fn entry_points_exist() {
        for entry in CENTROID_ENTRIES {
            assert!(orrery_core::gpu::cuda_params(CENTROID.cuda, entry).is_some(), "CUDA lacks {entry}");
            assert!(CENTROID.wgsl.contains(&format!("fn {entry}(")), "WGSL lacks {entry}");
        }
        for entry in KNN_ENTRIES {
            assert!(orrery_core::gpu::cuda_params(KNN.cuda, entry).is_some(), "CUDA lacks {entry}");
        }
        for entry in PROBE_ENTRIES {
            assert!(orrery_core::gpu::cuda_params(PROBE.cuda, entry).is_some(), "CUDA lacks {entry}");
        }
        assert!(KNN.wgsl.is_empty() && PROBE.wgsl.is_empty());
    }
}
