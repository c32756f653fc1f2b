//! The data-parallel primitives of [`orrery_core::Executor`] on CUDA: host-side
//! dispatch (argument checks, grid sizes, scratch, the sequence of launches) over the
//! kernels of `kernels/core/`. One file per primitive family, named like its kernel file.
//!
//! The `*_impl` functions take views by value, as the trait does: a `ViewMut` is the
//! exclusive borrow of its buffer for the call, whether or not the body moves it.
#![allow(clippy::needless_pass_by_value)]

mod histogram;
mod movement;
mod reduce;
mod scan;
mod search;
mod segmented;
mod sfc;
mod sort;

pub(crate) use reduce::reduce_partial_bytes;

use orrery_core::{Error, Result};

/// The entry points the primitives of this crate's own files launch, per module:
/// [`orrery_core::Executor::reserve`] resolves them ahead of a recording, so no function
/// is first looked up (and lazily loaded by the driver) inside a stream capture.
pub(crate) const ENTRIES: [(&orrery_core::KernelSource, &[&str]); 4] = [
    (&crate::kernels::SCAN, &["scan_exclusive_u32", "scan_inclusive_u32", "compact_b4", "compact_b8", "compact_words"]),
    (&crate::kernels::SORT, &["radix_histogram", "radix_bin_offsets", "radix_onesweep"]),
    (
        &crate::kernels::MOVEMENT,
        &[
            "gather_b4",
            "gather_b8",
            "gather_words",
            "scatter_b4",
            "scatter_b8",
            "scatter_words",
            "fill_b8",
            "fill_words",
            "iota_u32",
            "indirect_args",
        ],
    ),
    (
        &crate::kernels::REDUCE,
        &[
            "reduce_sum_u32",
            "reduce_min_u32",
            "reduce_max_u32",
            "reduce_sum_i32",
            "reduce_min_i32",
            "reduce_max_i32",
            "reduce_sum_u64",
            "reduce_min_u64",
            "reduce_max_u64",
            "reduce_sum_i64",
            "reduce_min_i64",
            "reduce_max_i64",
            "reduce_sum_f32",
            "reduce_min_f32",
            "reduce_max_f32",
            "reduce_sum_f64",
            "reduce_min_f64",
            "reduce_max_f64",
        ],
    ),
];

/// Elements a primitive handles at most: 32-bit indices, counts and offsets.
pub(crate) const MAX_ELEMENTS: usize = u32::MAX as usize;

/// Rejects inputs whose counts or offsets would not fit 32 bits.
pub(crate) fn check_count(what: &'static str, n: usize) -> Result<()> {
    if n > MAX_ELEMENTS { Err(Error::TooManyPoints { count: n, max: MAX_ELEMENTS, what }) } else { Ok(()) }
}

/// `ceil(a / b)` as a grid size.
pub(crate) fn blocks(items: usize, per_block: u32) -> u32 {
    u32::try_from(items.div_ceil(per_block as usize)).unwrap_or(u32::MAX)
}
