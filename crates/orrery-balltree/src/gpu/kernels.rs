//! The kernel module of the GPU build (`kernels/balltree/build.cu` and
//! `shaders/balltree/build.wgsl`, embedded by `orrery-kernels` and `orrery-shaders`) and
//! the launch shapes the host uses with it.
//!
//! Both files define the same entry points with the same arguments (buffers first, then
//! scalars; see [`orrery_core::gpu`]). The f64 entry points exist in CUDA only.

use orrery_core::{ExecutorKind, KernelSource};

/// The build's kernels in both languages.
pub const BUILD: KernelSource =
    KernelSource::new("balltree/build", orrery_kernels::balltree::BUILD, orrery_shaders::balltree::BUILD);

/// Threads per block of the per-item kernels (`bt_bounds_*`, `bt_choose_*`, `bt_keys_*`,
/// `bt_node_keys`, `bt_reset_bounds`). `bt_bounds_*` needs exactly this many (its shared
/// arrays are sized by it); the others take any multiple of 32.
pub(crate) const ITEM_THREADS: u32 = 256;
/// Positions per block of `bt_bounds_*` (4 per thread).
pub(crate) const BOUNDS_TILE: u32 = ITEM_THREADS * 4;
/// Words of one segment's selection state (`BT_SELECT_WORDS` in the kernels).
pub(crate) const SELECT_WORDS: usize = 8;
/// Histogram bins per segment and round (`BT_SELECT_BINS`): digits of up to 11 bits.
pub(crate) const SELECT_BINS: usize = 2048;

/// The shape of the local phase's blocks on one executor: `capacity` slots per block
/// (the size of the kernel's shared arrays) and `threads` per block, `capacity / threads
/// = 4` slots per thread. The kernels are compiled for exactly these numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LocalShape {
    /// Slots per block.
    pub capacity: u32,
    /// Threads per block.
    pub threads: u32,
}

/// CUDA: 2048 slots, 512 threads. Shared memory per block: keys, slot order and global
/// indices 24 KB (f32; 32 KB f64), split dimensions 2 KB; under the 48 KB of static
/// shared memory.
pub(crate) const CUDA_LOCAL: LocalShape = LocalShape { capacity: 2048, threads: 512 };
/// WGSL: 1024 slots, 256 threads (WebGPU's default limit of invocations per workgroup),
/// 15 KB of workgroup memory (under WebGPU's default 16 KB).
pub(crate) const WGSL_LOCAL: LocalShape = LocalShape { capacity: 1024, threads: 256 };

/// The local-phase shape the kernels of `kind` are compiled for.
pub(crate) fn local_shape(kind: ExecutorKind) -> LocalShape {
    match kind {
        ExecutorKind::Cuda => CUDA_LOCAL,
        ExecutorKind::Wgpu | ExecutorKind::Cpu => WGSL_LOCAL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host's launch shapes must be the ones the sources are compiled for.
    #[test]
    fn shapes_match_the_sources() {
        assert!(BUILD.cuda.contains(&format!("#define BT_LOCAL_CAPACITY {}u", CUDA_LOCAL.capacity)));
        assert!(BUILD.cuda.contains(&format!("#define BT_LOCAL_THREADS {}u", CUDA_LOCAL.threads)));
        assert!(BUILD.cuda.contains(&format!("#define BT_ITEM_THREADS {ITEM_THREADS}u")));
        assert!(BUILD.cuda.contains(&format!("#define BT_BOUNDS_ITEMS {}u", BOUNDS_TILE / ITEM_THREADS)));
        assert!(BUILD.wgsl.contains(&format!("const LOCAL_CAPACITY: u32 = {}u;", WGSL_LOCAL.capacity)));
        assert!(BUILD.wgsl.contains(&format!("const LOCAL_THREADS: u32 = {}u;", WGSL_LOCAL.threads)));
        assert!(BUILD.wgsl.contains(&format!("const ITEM_THREADS: u32 = {ITEM_THREADS}u;")));
        assert!(BUILD.wgsl.contains(&format!("const BOUNDS_ITEMS: u32 = {}u;", BOUNDS_TILE / ITEM_THREADS)));
        assert!(BUILD.cuda.contains(&format!("#define BT_SELECT_WORDS {SELECT_WORDS}u")));
        assert!(BUILD.cuda.contains(&format!("#define BT_SELECT_BINS {SELECT_BINS}u")));
        assert!(BUILD.wgsl.contains(&format!("const SELECT_WORDS: u32 = {SELECT_WORDS}u;")));
        assert!(BUILD.wgsl.contains(&format!("const SELECT_BINS: u32 = {SELECT_BINS}u;")));
        for shape in [CUDA_LOCAL, WGSL_LOCAL] {
            assert_eq!(shape.capacity / shape.threads, 4);
        }
    }

    /// Every entry point the host launches exists in both languages (f64 in CUDA only).
    #[test]
    fn entry_points_exist_in_both_languages() {
        let f32_select = <f32 as crate::gpu::GpuReal>::SELECT;
        for entry in [
            "bt_reset_bounds",
            "bt_bounds_f32",
            "bt_choose_f32",
            "bt_keys_f32",
            "bt_local_f32",
            "bt_local_ordered_f32",
            "bt_select_init",
        ]
        .into_iter()
        .chain(f32_select)
        {
            assert!(BUILD.cuda.contains(&format!(" {entry}(")), "CUDA lacks {entry}");
            assert!(BUILD.wgsl.contains(&format!("fn {entry}(")), "WGSL lacks {entry}");
        }
        let f64_select = <f64 as crate::gpu::GpuReal>::SELECT;
        for entry in ["bt_bounds_f64", "bt_choose_f64", "bt_keys_f64", "bt_node_keys", "bt_local_f64"]
            .into_iter()
            .chain(f64_select)
        {
            assert!(BUILD.cuda.contains(&format!(" {entry}(")), "CUDA lacks {entry}");
        }
    }
}
