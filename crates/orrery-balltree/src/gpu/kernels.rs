//! The kernel modules of the GPU build, one per pass, and the launch constants the host
//! shares with them:
//!
//! | module | CUDA | WGSL | host |
//! |---|---|---|---|
//! | `balltree/levels` | `kernels/balltree/levels.cu` | `shaders/balltree/levels.wgsl` | [`super::levels`]: bounds, split dimensions, sort keys |
//! | `balltree/select` | `kernels/balltree/select.cu` | `shaders/balltree/select.wgsl` | [`super::select`]: selection rounds and partition |
//! | `balltree/local` (defines `LOCAL_CAPACITY`, `LOCAL_THREADS`) | `kernels/balltree/local.cu` | `shaders/balltree/local.wgsl` | [`super::local`]: the local phase |
//!
//! Every CUDA module is `kernels/balltree/common.cuh`, then (levels, select) the core
//! segment search `kernels/core/segment.cuh`, then its pass file, with `#line` directives
//! so NVRTC names the right file; every WGSL module is `shaders/balltree/common.wgsl`
//! then its pass file, which `//#include`s `core/segment` where it searches segments.
//! Both languages define the same entry points with the same arguments (buffers first,
//! then scalars; see [`orrery_core::gpu`]), declared once with
//! [`orrery_core::kernels!`] next to the host code that launches them. The f64 entry
//! points exist in CUDA only.

use orrery_core::KernelSource;

/// A pass module: the texts `orrery-kernels` and `orrery-shaders` assemble (the prelude,
/// optionally the core segment search, the pass file), under one module name.
macro_rules! pass_module {
    ($name:literal, $id:ident) => {
        orrery_core::KernelSource::new(
            concat!("balltree/", $name),
            orrery_kernels::balltree::unit::$id,
            orrery_shaders::balltree::unit::$id,
        )
    };
}
pub(crate) use pass_module;

/// Every module the build launches, with the defines it launches them with (for
/// ahead-of-time compile checks: the ball tree's GPU tests compile each with NVRTC).
pub const MODULES: [KernelSource; 4] =
    [super::levels::LEVELS, super::select::SELECT, super::local::LOCAL_LARGE, super::local::LOCAL_SMALL];

/// Threads per block of the per-item kernels (`bt_bounds_*`, `bt_choose_*`, `bt_keys_*`,
/// `bt_node_keys`, `bt_reset_bounds`, the Select kernels). `bt_bounds_*`,
/// `bt_sbounds_*`, `bt_select_count_*` and `bt_select_find_*` need exactly this many
/// (their shared arrays are sized by it); the others take any multiple of 32.
pub(crate) const ITEM_THREADS: u32 = 256;
/// Positions per block of the tiled kernels (`bt_bounds_*`, `bt_sbounds_*`,
/// `bt_select_count_*`: 4 per thread).
pub(crate) const BOUNDS_TILE: u32 = ITEM_THREADS * 4;
/// Words of one segment's selection state (`BT_SELECT_WORDS` in the kernels).
pub(crate) const SELECT_WORDS: usize = 8;
/// Histogram bins per segment and round (`BT_SELECT_BINS`): digits of up to 11 bits.
pub(crate) const SELECT_BINS: usize = 2048;

#[cfg(test)]
mod tests {
    use super::super::{levels::LEVELS, local, select::SELECT};
    use super::*;

    /// The host's launch constants must be the ones the sources are compiled for.
    #[test]
    fn constants_match_the_sources() {
        for m in MODULES {
            assert!(m.cuda.contains(&format!("#define BT_ITEM_THREADS {ITEM_THREADS}u")), "{}", m.name);
            assert!(m.cuda.contains(&format!("#define BT_BOUNDS_ITEMS {}u", BOUNDS_TILE / ITEM_THREADS)));
            assert!(m.wgsl.contains(&format!("const ITEM_THREADS: u32 = {ITEM_THREADS}u;")));
            assert!(m.wgsl.contains(&format!("const BOUNDS_ITEMS: u32 = {}u;", BOUNDS_TILE / ITEM_THREADS)));
        }
        assert!(SELECT.cuda.contains(&format!("#define BT_SELECT_WORDS {SELECT_WORDS}u")));
        assert!(SELECT.cuda.contains(&format!("#define BT_SELECT_BINS {SELECT_BINS}u")));
        assert!(SELECT.wgsl.contains(&format!("const SELECT_WORDS: u32 = {SELECT_WORDS}u;")));
        assert!(SELECT.wgsl.contains(&format!("const SELECT_BINS: u32 = {SELECT_BINS}u;")));
        for shape in [local::LARGE, local::SMALL] {
            assert_eq!(shape.capacity / shape.threads, 4);
        }
    }

    /// Every entry point the host launches exists in both languages (f64 in CUDA only),
    /// and the searching modules carry the core segment search.
    #[test]
    fn entry_points_exist_in_both_languages() {
        let both: [(&KernelSource, &[&str]); 3] = [
            (&LEVELS, &["bt_reset_bounds", "bt_bounds_f32", "bt_sbounds_f32", "bt_choose_f32", "bt_keys_f32"]),
            (
                &SELECT,
                &[
                    "bt_transpose_f32",
                    "bt_select_init",
                    "bt_select_count_f32",
                    "bt_select_find_f32",
                    "bt_select_flags_f32",
                    "bt_select_scatter_f32",
                ],
            ),
            (&local::LOCAL_LARGE, &["bt_local_f32", "bt_local_ordered_f32"]),
        ];
        for (m, entries) in both {
            for entry in entries {
                assert!(orrery_core::gpu::cuda_params(m.cuda, entry).is_some(), "CUDA lacks {entry}");
                assert!(m.wgsl.contains(&format!("fn {entry}(")), "WGSL lacks {entry}");
            }
        }
        let cuda_only: [(&KernelSource, &[&str]); 3] = [
            (&LEVELS, &["bt_bounds_f64", "bt_sbounds_f64", "bt_choose_f64", "bt_keys_f64", "bt_node_keys"]),
            (
                &SELECT,
                &[
                    "bt_transpose_f64",
                    "bt_select_count_f64",
                    "bt_select_find_f64",
                    "bt_select_flags_f64",
                    "bt_select_scatter_f64",
                ],
            ),
            (&local::LOCAL_LARGE, &["bt_local_f64"]),
        ];
        for (m, entries) in cuda_only {
            for entry in entries {
                assert!(orrery_core::gpu::cuda_params(m.cuda, entry).is_some(), "CUDA lacks {entry}");
            }
        }
        for m in [&LEVELS, &SELECT] {
            assert!(m.cuda.contains("segment_upper_bound("));
            assert!(m.wgsl.contains("//#include core/segment"));
        }
    }
}
