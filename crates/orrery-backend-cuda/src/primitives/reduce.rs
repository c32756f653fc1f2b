//! Reductions: `kernels/core/reduce.cu`.
//!
//! A fixed tree: tiles of 16 KB reduced per block, then the tile results reduced the same
//! way until one value is left (two levels up to 2^24 f32, three up to 2^36). The order
//! of every floating-point operation depends only on the input length and the policy's
//! reduction tile, so results are identical run to run.

use orrery_core::executor::check_len;
use orrery_core::{DType, Element, ReduceOp, Result, ViewMutOf, ViewOf};

use super::blocks;
use crate::CudaExecutor;
use crate::kernels::REDUCE;
use crate::launch::Arg;
use crate::policy::Policy;

/// The kernel entry of a reduction.
fn entry(op: ReduceOp, dtype: DType) -> &'static str {
    macro_rules! by_type {
        ($op:literal) => {
            match dtype {
                DType::U32 => concat!("reduce_", $op, "_u32"),
                DType::I32 => concat!("reduce_", $op, "_i32"),
                DType::U64 => concat!("reduce_", $op, "_u64"),
                DType::I64 => concat!("reduce_", $op, "_i64"),
                DType::F32 => concat!("reduce_", $op, "_f32"),
                DType::F64 => concat!("reduce_", $op, "_f64"),
            }
        };
    }
    match op {
        ReduceOp::Sum => by_type!("sum"),
        ReduceOp::Min => by_type!("min"),
        ReduceOp::Max => by_type!("max"),
    }
}

/// Partial-result levels of a reduction of `n` elements of `size` bytes: (m1, m2), the
/// lengths of the first two levels (0 when one launch suffices).
fn levels(policy: &Policy, n: usize, size: usize) -> (usize, usize) {
    let tile = policy.reduce_tile(size as u32) as usize;
    if n <= tile {
        return (0, 0);
    }
    let m1 = n.div_ceil(tile);
    (m1, m1.div_ceil(tile))
}

/// Scratch bytes a reduction of up to `n` elements of any type needs.
pub(crate) fn reduce_partial_bytes(policy: &Policy, n: usize) -> usize {
    [4usize, 8]
        .iter()
        .map(|&size| {
            let (m1, m2) = levels(policy, n, size);
            (m1 + m2) * size
        })
        .max()
        .unwrap_or(0)
}

impl CudaExecutor {
    pub(crate) fn reduce_impl<T: Element>(
        &self,
        input: ViewOf<'_, Self, T>,
        op: ReduceOp,
        output: ViewMutOf<'_, Self, T>,
    ) -> Result<()> {
        check_len("reduction output", 1, output.len())?;
        let entry = entry(op, T::DTYPE);
        let size = size_of::<T>();
        let tile = self.policy.reduce_tile(size as u32);
        let threads = self.policy.reduce_threads;
        let n = input.len();
        let (m1, m2) = levels(&self.policy, n, size);
        if m1 == 0 {
            return self.launch_entry(
                &REDUCE,
                entry,
                1,
                threads,
                &[Arg::view(input), Arg::view_mut(&output), Arg::U64(n as u64)],
            );
        }
        // Level sizes: n -> m1 = ceil(n / tile) -> m2 -> ... -> 1. Partials alternate
        // between two regions of the scratch: A holds m1 values, B the next level.
        let mut scratch = self.scratch();
        let a = scratch.reduce((m1 + m2) * size)?;
        let b = a + (m1 * size) as u64;
        self.launch_entry(
            &REDUCE,
            entry,
            blocks(n, tile),
            threads,
            &[Arg::view(input), Arg::Ptr(a), Arg::U64(n as u64)],
        )?;
        let (mut cur, mut next, mut len) = (a, b, m1);
        while len > tile as usize {
            self.launch_entry(
                &REDUCE,
                entry,
                blocks(len, tile),
                threads,
                &[Arg::Ptr(cur), Arg::Ptr(next), Arg::U64(len as u64)],
            )?;
            len = len.div_ceil(tile as usize);
            std::mem::swap(&mut cur, &mut next);
        }
        self.launch_entry(&REDUCE, entry, 1, threads, &[Arg::Ptr(cur), Arg::view_mut(&output), Arg::U64(len as u64)])
    }
}
