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
}
