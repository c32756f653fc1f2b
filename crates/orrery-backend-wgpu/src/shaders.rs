//! The WGSL sources of the core primitives (`shaders/core/*.wgsl`, embedded by
//! `orrery-shaders`), compiled into the binary, and the `//#include` snippets kernels of
//! any crate may use.
//!
//! | include name   | file                        | what                                   |
//! |----------------|-----------------------------|----------------------------------------|
//! | `core/common`  | `shaders/core/common.wgsl`  | `WORKGROUP_SIZE`, `linear_block`, `Invocation`/`Lane`, u64-as-`vec2<u32>` helpers |
//! | `core/wg_scan` | `shaders/core/wg_scan.wgsl` | workgroup exclusive scan of `u32`      |
//! | `core/segment` | `shaders/core/segment.wgsl` | a position's segment by binary search in segment starts (`upper_bound_one`'s loop; the includer defines `segment_start`) |

/// One WGSL module of the core primitives.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CoreModule {
    /// Module name (keys the caches), e.g. `core/scan`.
    pub name: &'static str,
    /// WGSL source, before preprocessing.
    pub wgsl: &'static str,
}

macro_rules! core_module {
    ($id:ident, $name:literal, $file:literal) => {
        #[doc = concat!("`shaders/core/", $file, "`.")]
        pub(crate) const $id: CoreModule = CoreModule { name: $name, wgsl: orrery_shaders::core::$id };
    };
}

core_module!(DATA, "core/data", "data.wgsl");
core_module!(SCAN, "core/scan", "scan.wgsl");
core_module!(REDUCE, "core/reduce", "reduce.wgsl");
core_module!(RADIX_SORT, "core/radix_sort", "radix_sort.wgsl");
core_module!(SFC, "core/sfc", "sfc.wgsl");
core_module!(PROBE, "core/probe", "probe.wgsl");
core_module!(SEARCH, "core/search", "search.wgsl");
core_module!(SEGMENTED, "core/segmented", "segmented.wgsl");
core_module!(HISTOGRAM, "core/histogram", "histogram.wgsl");

const COMMON: &str = orrery_shaders::core::COMMON;
const WG_SCAN: &str = orrery_shaders::core::WG_SCAN;
const SEGMENT: &str = orrery_shaders::core::SEGMENT;

/// Resolves the `//#include` names of the core snippets.
pub(crate) fn include(name: &str) -> Option<&'static str> {
    match name {
        "core/common" => Some(COMMON),
        "core/wg_scan" => Some(WG_SCAN),
        "core/segment" => Some(SEGMENT),
        _ => None,
    }
}

/// Every module text of orrery's own WGSL (`orrery_shaders`): the core modules and the
/// modules the algorithm crates launch through [`orrery_core::gpu::GpuExecutor`]. A
/// module whose text is one of these compiles without loop bounding (see
/// [`crate::pipeline_cache`]); a new module must have its loops checked against the
/// SAFETY comment there before it is listed here (the test below fails until it is).
const ORRERY_MODULES: &[&str] = &[
    DATA.wgsl,
    SCAN.wgsl,
    REDUCE.wgsl,
    RADIX_SORT.wgsl,
    SFC.wgsl,
    PROBE.wgsl,
    SEARCH.wgsl,
    SEGMENTED.wgsl,
    HISTOGRAM.wgsl,
    orrery_shaders::balltree::unit::LEVELS,
    orrery_shaders::balltree::unit::SELECT,
    orrery_shaders::balltree::unit::LOCAL,
    orrery_shaders::tree::unit::KEYS,
    orrery_shaders::tree::unit::PASSES,
    orrery_shaders::tree::unit::LEAF_COUNT,
    orrery_shaders::tree::unit::NF_COUNT,
    orrery_shaders::tree_view::VIEW,
    orrery_shaders::traverse::DIRECT,
    orrery_shaders::traverse::UPWARD,
    orrery_shaders::traverse::WALK,
    orrery_shaders::traverse::FMM_P2P,
    orrery_shaders::sim::INTEGRATE,
];

/// Whether `wgsl` is the text of one of orrery's own modules (compared by content: a
/// `&'static str` constant has no guaranteed address; a few length comparisons per
/// module compile, which the pipeline cache does once per module and defines).
pub(crate) fn is_orrery_module(wgsl: &str) -> bool {
    ORRERY_MODULES.contains(&wgsl)
}

/// The workgroup size of every core primitive. The tile sizes below assume it, and
/// 256 is the WebGPU default limit of invocations per workgroup, so every adapter runs it.
pub(crate) const WORKGROUP: u32 = 256;
/// Elements per tile of `core/scan` (`256 * ITEMS`, ITEMS = 8 in `scan.wgsl`).
pub(crate) const SCAN_TILE: u32 = WORKGROUP * 8;
/// Elements per tile of `core/reduce` (`256 * ITEMS`, ITEMS = 8 in `reduce.wgsl`).
pub(crate) const REDUCE_TILE: u32 = WORKGROUP * 8;
/// Pairs per tile of `core/radix_sort` (`256 * ITEMS`, ITEMS = 4 in `radix_sort.wgsl`).
pub(crate) const SORT_TILE: u32 = WORKGROUP * 4;
/// Key bits per radix-sort digit pass.
pub(crate) const SORT_DIGIT_BITS: u32 = 8;

#[cfg(test)]
mod tests {
    use super::*;

    /// The tile constants of the host must be those of the shaders.
    #[test]
    fn tile_constants_match_the_shaders() {
        assert!(SCAN.wgsl.contains("const ITEMS: u32 = 8u;"));
        assert!(REDUCE.wgsl.contains("const ITEMS: u32 = 8u;"));
        assert!(RADIX_SORT.wgsl.contains("const ITEMS: u32 = 4u;"));
        assert_eq!(SCAN_TILE, 2048);
        assert_eq!(SORT_TILE, 1024);
    }

    /// Every WGSL file of orrery is part of a listed module (snippets of the core are
    /// spliced by `//#include` into listed modules); a new file fails here until its
    /// loops are reviewed and its module is listed in `ORRERY_MODULES`.
    #[test]
    fn every_orrery_shader_file_is_in_a_trusted_module() {
        use orrery_shaders as s;
        let snippets = [COMMON, WG_SCAN, SEGMENT];
        let folders = [
            s::core::FILES,
            s::balltree::FILES,
            s::tree::FILES,
            s::tree_view::FILES,
            s::traverse::FILES,
            s::sim::FILES,
        ];
        for (path, text) in folders.into_iter().flatten() {
            let listed = snippets.contains(text) || ORRERY_MODULES.iter().any(|m| m.contains(text));
            assert!(listed, "{path} is in no module of ORRERY_MODULES");
        }
        assert!(is_orrery_module(s::balltree::unit::LOCAL));
        assert!(!is_orrery_module("@compute @workgroup_size(1) fn main() {}"));
    }
}
