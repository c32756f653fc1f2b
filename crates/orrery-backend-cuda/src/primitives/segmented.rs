//! Segmented (CSR) scan, reduction and top-k: `kernels/core/segmented.cu`, one block per
//! segment (grid-stride over segments), the device versions of the CPU reference
//! (`orrery_core/src/cpu/segmented.rs`): integer results bit-identical, float sums in a
//! fixed order (tiles of [`SEGMENT_TILE`](orrery_core::executor::SEGMENT_TILE) left to right, each a fixed tree), float min /
//! max bit-identical (order-preserving folds). No scratch memory: every output element is
//! written by exactly one block.
//!
//! Arguments are checked as the CPU checks them, in the same order; the only additional
//! error is [`Error::TooManyPoints`] for a segmented scan over `2^32` or more offsets
//! (the shared search returns 32-bit indices).

use orrery_core::{DType, Element, Order, ReduceOp, Result, ScanKind, ViewMutOf, ViewOf};

use crate::CudaExecutor;
use crate::kernels::SEGMENTED;
use crate::launch::Arg;

/// Threads per block of the reduction and the scan (`SEG_THREADS` of segmented.cu).
const SEG_THREADS: u32 = 256;
/// Threads per block of top-k (`TOPK_THREADS`).
const TOPK_THREADS: u32 = 512;
/// Most blocks of one launch; the kernels stride over further segments.
const SEG_MAX_BLOCKS: u64 = 1 << 24;

/// The grid of a segment-per-block launch.
fn grid(segments: usize) -> u32 {
    (segments as u64).min(SEG_MAX_BLOCKS) as u32
}

macro_rules! by_type {
    ($dtype:expr, $prefix:literal) => {
        match $dtype {
            DType::U32 => concat!($prefix, "u32"),
            DType::I32 => concat!($prefix, "i32"),
            DType::U64 => concat!($prefix, "u64"),
            DType::I64 => concat!($prefix, "i64"),
            DType::F32 => concat!($prefix, "f32"),
            DType::F64 => concat!($prefix, "f64"),
        }
    };
}

fn reduce_entry(op: ReduceOp, dtype: DType) -> &'static str {
    match op {
        ReduceOp::Sum => by_type!(dtype, "segmented_reduce_sum_"),
        ReduceOp::Min => by_type!(dtype, "segmented_reduce_min_"),
        ReduceOp::Max => by_type!(dtype, "segmented_reduce_max_"),
    }
}

fn top_k_entry(order: Order, dtype: DType) -> &'static str {
    match order {
        Order::Smallest => by_type!(dtype, "segmented_top_k_smallest_"),
        Order::Largest => by_type!(dtype, "segmented_top_k_largest_"),
    }
}

impl CudaExecutor {
    /// [`Executor::segmented_scan`](orrery_core::Executor::segmented_scan).
    pub(crate) fn segmented_scan_impl(
        &self,
        input: ViewOf<'_, Self, u32>,
        offsets: ViewOf<'_, Self, u32>,
        kind: ScanKind,
        output: ViewMutOf<'_, Self, u32>,
    ) -> Result<()> {
        let segments = orrery_core::executor::check_segmented_scan(input.len(), offsets.len(), output.len())?;
        let n = input.len();
        if n == 0 {
            return Ok(());
        }
        if segments == 0 {
            // No element belongs to a segment.
            return self.memset_u32(&output.buffer().raw, (output.offset() * 4) as u64, 0, n);
        }
        let entry = match kind {
            ScanKind::Exclusive => "segmented_scan_exclusive_u32",
            ScanKind::Inclusive => "segmented_scan_inclusive_u32",
        };
        self.launch_entry(
            &SEGMENTED,
            entry,
            grid(segments),
            SEG_THREADS,
            &[
                Arg::view(input),
                Arg::view(offsets),
                Arg::view_mut(&output),
                Arg::U64(n as u64),
                Arg::U32(offsets.len() as u32),
            ],
        )
    }

    /// [`Executor::segmented_reduce`](orrery_core::Executor::segmented_reduce).
    pub(crate) fn segmented_reduce_impl<T: Element>(
        &self,
        input: ViewOf<'_, Self, T>,
        offsets: ViewOf<'_, Self, u32>,
        op: ReduceOp,
        output: ViewMutOf<'_, Self, T>,
    ) -> Result<()> {
        let segments = orrery_core::executor::check_segmented_reduce(input.len(), offsets.len(), output.len())?;
        if segments == 0 {
            return Ok(());
        }
        self.launch_entry(
            &SEGMENTED,
            reduce_entry(op, T::DTYPE),
            grid(segments),
            SEG_THREADS,
            &[
                Arg::view(input),
                Arg::view(offsets),
                Arg::view_mut(&output),
                Arg::U64(input.len() as u64),
                Arg::U64(segments as u64),
            ],
        )
    }

    /// [`Executor::segmented_top_k`](orrery_core::Executor::segmented_top_k).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn segmented_top_k_impl<T: Element>(
        &self,
        keys: ViewOf<'_, Self, T>,
        offsets: ViewOf<'_, Self, u32>,
        k: u32,
        order: Order,
        indices: ViewMutOf<'_, Self, u32>,
        top_keys: ViewMutOf<'_, Self, T>,
    ) -> Result<()> {
        let segments = orrery_core::executor::check_top_k(keys.len(), offsets.len(), k, indices.len(), top_keys.len())?;
        if segments == 0 {
            return Ok(());
        }
        self.launch_entry(
            &SEGMENTED,
            top_k_entry(order, T::DTYPE),
            grid(segments),
            TOPK_THREADS,
            &[
                Arg::view(keys),
                Arg::view(offsets),
                Arg::view_mut(&indices),
                Arg::view_mut(&top_keys),
                Arg::U64(keys.len() as u64),
                Arg::U64(segments as u64),
                Arg::U32(k),
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use orrery_core::executor::SEGMENT_TILE;

    use super::*;

    #[test]
    fn launch_constants_match_the_kernel() {
        let src = SEGMENTED.cuda;
        assert!(src.contains(&format!("#define SEG_THREADS {SEG_THREADS}u\n")));
        assert!(src.contains(&format!("#define SEG_TILE {SEGMENT_TILE}u\n")));
        assert!(src.contains(&format!("#define TOPK_THREADS {TOPK_THREADS}u\n")));
        // The kernel's TOPK_CAP (the largest k, and the largest segment sorted whole) is
        // the trait's largest k.
        let cap = orrery_core::executor::MAX_TOP_K;
        assert!(src.contains(&format!("#define TOPK_CAP {cap}u\n")));
    }
}
