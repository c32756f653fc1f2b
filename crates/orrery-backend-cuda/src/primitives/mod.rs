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
