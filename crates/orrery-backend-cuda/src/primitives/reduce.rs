//! Reductions: `kernels/core/reduce.cu`.
//!
//! A fixed tree: tiles of 16 KB reduced per block, then the tile results reduced the same
//! way until one value is left (two levels up to 2^24 f32, three up to 2^36). The order
//! of every floating-point operation depends only on the input length and the policy's
//! reduction tile, so results are identical run to run.

use orrery_core::executor::check_len;
use orrery_core::{DType, DeviceBuffer, Element, ReduceOp, Result};

use super::blocks;
use crate::CudaExecutor;
use crate::buffer::CudaBuffer;
use crate::kernels::REDUCE;
use crate::launch::Arg;

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

impl CudaExecutor {
    pub(crate) fn reduce_impl<T: Element>(
        &self,
        input: &CudaBuffer<T>,
        op: ReduceOp,
        output: &mut CudaBuffer<T>,
    ) -> Result<()> {
        check_len("reduction output", 1, output.len())?;
        let entry = entry(op, T::DTYPE);
        let size = size_of::<T>();
        let tile = self.policy.reduce_tile(size as u32);
        let threads = self.policy.reduce_threads;
        let n = input.len();
        if n <= tile as usize {
            return self.launch_entry(
                &REDUCE,
                entry,
                1,
                threads,
                &[Arg::buf(input), Arg::buf(output), Arg::U64(n as u64)],
            );
        }
        // Level sizes: n -> m1 = ceil(n / tile) -> m2 -> ... -> 1. Partials alternate
        // between two regions of the scratch: A holds m1 values, B the next level.
        let m1 = n.div_ceil(tile as usize);
        let m2 = m1.div_ceil(tile as usize);
        let mut scratch = self.scratch();
        let a = scratch.reduce((m1 + m2) * size)?;
        let b = a + (m1 * size) as u64;
        self.launch_entry(
            &REDUCE,
            entry,
            blocks(n, tile),
            threads,
            &[Arg::buf(input), Arg::Ptr(a), Arg::U64(n as u64)],
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
        self.launch_entry(&REDUCE, entry, 1, threads, &[Arg::Ptr(cur), Arg::buf(output), Arg::U64(len as u64)])
    }
}
