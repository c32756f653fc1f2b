//! The built-in kernel modules (`kernels/core/*.cu`), embedded at build time.
//!
//! Each module is `common.cuh` followed by its own file (with a `#line` directive so
//! NVRTC's messages name the right file and line), compiled as one translation unit.
//! Entry points are `extern "C"`; their arguments follow the buffers-then-scalars
//! convention of [`orrery_core::gpu`]. The launch shapes come from [`crate::Policy`].

use orrery_core::KernelSource;

macro_rules! core_module {
    ($name:literal) => {
        KernelSource {
            name: concat!("core/", $name),
            cuda: concat!(
                include_str!("../../../kernels/core/common.cuh"),
                "\n#line 1 \"kernels/core/",
                $name,
                ".cu\"\n",
                include_str!(concat!("../../../kernels/core/", $name, ".cu"))
            ),
            wgsl: "",
            defines: &[],
        }
    };
}

/// Exclusive scan and stream compaction (`scan_exclusive_u32`, `compact_b4`, `compact_b8`).
pub const SCAN: KernelSource = core_module!("scan");
/// Reductions (`reduce_{sum,min,max}_{u32,i32,u64,i64,f32,f64}`).
pub const REDUCE: KernelSource = core_module!("reduce");
/// Radix sort (`radix_histogram`, `radix_bin_offsets`, `radix_onesweep`).
pub const SORT: KernelSource = core_module!("sort");
/// Gather, scatter, fill and iota (`gather_b4`, `gather_b8`, `scatter_b4`, `scatter_b8`,
/// `fill_b8`, `iota_u32`).
pub const MOVEMENT: KernelSource = core_module!("movement");
/// Space-filling-curve keys (`sfc_{morton,hilbert1,hilbert3}_{f32,f64}`).
pub const SFC: KernelSource = core_module!("sfc");

/// A core module that also compares elements by `Element::order_key`: `common.cuh`,
/// `order_key.cuh`, then its own file.
macro_rules! keyed_core_module {
    ($name:literal) => {
        KernelSource::new(
            concat!("core/", $name),
            concat!(
                include_str!("../../../kernels/core/common.cuh"),
                "\n#line 1 \"kernels/core/order_key.cuh\"\n",
                include_str!("../../../kernels/core/order_key.cuh"),
                "\n#line 1 \"kernels/core/",
                $name,
                ".cu\"\n",
                include_str!(concat!("../../../kernels/core/", $name, ".cu"))
            ),
            "",
        )
    };
}

/// Lower and upper bounds (`lower_bound_{u32,i32,u64,i64,f32,f64}`, `upper_bound_*`).
pub const SEARCH: KernelSource = keyed_core_module!("search");
/// Segmented reductions, scans and top-k (`segmented_reduce_{sum,min,max}_<type>`,
/// `segmented_scan_{exclusive,inclusive}_u32`, `segmented_top_k_{smallest,largest}_<type>`).
pub const SEGMENTED: KernelSource = keyed_core_module!("segmented");
/// Histograms (`histogram_shared_1k`, `histogram_shared_8k`, `histogram_global`).
pub const HISTOGRAM: KernelSource = KernelSource::new(
    "core/histogram",
    concat!(
        include_str!("../../../kernels/core/common.cuh"),
        "\n#line 1 \"kernels/core/histogram.cu\"\n",
        include_str!("../../../kernels/core/histogram.cu")
    ),
    "",
);

/// Every built-in module, for ahead-of-time compile checks.
pub const CORE_MODULES: [KernelSource; 8] = [SCAN, REDUCE, SORT, MOVEMENT, SFC, SEARCH, SEGMENTED, HISTOGRAM];
