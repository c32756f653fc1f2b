//! The built-in kernel modules (`kernels/core/*.cu`, embedded by `orrery-kernels`).
//!
//! Each module is `common.cuh` followed by its own file (with a `#line` directive so
//! NVRTC's messages name the right file and line), compiled as one translation unit.
//! Entry points are `extern "C"`; their arguments follow the buffers-then-scalars
//! convention of [`orrery_core::gpu`]. The launch shapes come from [`crate::Policy`].

use orrery_core::KernelSource;

// The texts are those of `orrery_kernels::core::unit` (common.cuh, the #line directive and
// the file, concatenated in that crate so that it can be packaged with its sources).
macro_rules! core_module {
    ($id:ident, $name:literal) => {
        KernelSource::new(concat!("core/", $name), orrery_kernels::core::unit::$id, "")
    };
}

/// Exclusive scan and stream compaction (`scan_exclusive_u32`, `compact_b4`, `compact_b8`).
pub const SCAN: KernelSource = core_module!(SCAN, "scan");
/// Reductions (`reduce_{sum,min,max}_{u32,i32,u64,i64,f32,f64}`).
pub const REDUCE: KernelSource = core_module!(REDUCE, "reduce");
/// Radix sort (`radix_histogram`, `radix_bin_offsets`, `radix_onesweep`).
pub const SORT: KernelSource = core_module!(SORT, "sort");
/// Gather, scatter, fill and iota (`gather_b4`, `gather_b8`, `scatter_b4`, `scatter_b8`,
/// `fill_b8`, `iota_u32`).
pub const MOVEMENT: KernelSource = core_module!(MOVEMENT, "movement");
/// Space-filling-curve keys (`sfc_{morton,hilbert1,hilbert3}_{f32,f64}`).
pub const SFC: KernelSource = core_module!(SFC, "sfc");

/// Lower and upper bounds (`lower_bound_{u32,i32,u64,i64,f32,f64}`, `upper_bound_*`):
/// `common.cuh`, `order_key.cuh`, then `search.cu`.
pub const SEARCH: KernelSource = KernelSource::new("core/search", orrery_kernels::core::keyed::unit::SEARCH, "");
/// Segmented reductions, scans and top-k (`segmented_reduce_{sum,min,max}_<type>`,
/// `segmented_scan_{exclusive,inclusive}_u32`, `segmented_top_k_{smallest,largest}_<type>`).
pub const SEGMENTED: KernelSource =
    KernelSource::new("core/segmented", orrery_kernels::core::keyed::unit::SEGMENTED, "");
/// Histograms (`histogram_shared_1k`, `histogram_shared_8k`, `histogram_global`).
pub const HISTOGRAM: KernelSource = core_module!(HISTOGRAM, "histogram");

/// Every built-in module, for ahead-of-time compile checks.
pub const CORE_MODULES: [KernelSource; 8] = [SCAN, REDUCE, SORT, MOVEMENT, SFC, SEARCH, SEGMENTED, HISTOGRAM];
