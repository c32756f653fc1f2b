//! Vectorised lower and upper bounds: `kernels/core/search.cu`, one thread per query
//! running the halving loop of [`lower_bound_one`](orrery_core::executor::lower_bound_one)
//! / [`upper_bound_one`](orrery_core::executor::upper_bound_one) on order keys, so every
//! answer (sorted input or not) is the CPU's.

use orrery_core::{DType, Element, Result, ViewMutOf, ViewOf};

use super::blocks;
use crate::CudaExecutor;
use crate::kernels::SEARCH;
use crate::launch::Arg;

/// Threads per block (`SEARCH_THREADS` of search.cu).
const SEARCH_THREADS: u32 = 256;
/// Most blocks of one launch (`SEARCH_MAX_BLOCKS`); the kernel strides over the rest.
const SEARCH_MAX_BLOCKS: u32 = 65535;

/// The kernel entry of a bound search.
fn entry(dtype: DType, upper: bool) -> &'static str {
    match (dtype, upper) {
        (DType::U32, false) => "lower_bound_u32",
        (DType::I32, false) => "lower_bound_i32",
        (DType::U64, false) => "lower_bound_u64",
        (DType::I64, false) => "lower_bound_i64",
        (DType::F32, false) => "lower_bound_f32",
        (DType::F64, false) => "lower_bound_f64",
        (DType::U32, true) => "upper_bound_u32",
        (DType::I32, true) => "upper_bound_i32",
        (DType::U64, true) => "upper_bound_u64",
        (DType::I64, true) => "upper_bound_i64",
        (DType::F32, true) => "upper_bound_f32",
        (DType::F64, true) => "upper_bound_f64",
    }
}

impl CudaExecutor {
    /// [`Executor::lower_bound`](orrery_core::Executor::lower_bound) (`upper == false`) or
    /// [`Executor::upper_bound`](orrery_core::Executor::upper_bound).
    pub(crate) fn bound_impl<T: Element>(
        &self,
        sorted: ViewOf<'_, Self, T>,
        queries: ViewOf<'_, Self, T>,
        output: ViewMutOf<'_, Self, u32>,
        upper: bool,
    ) -> Result<()> {
        // The CPU's checks, in its order.
        orrery_core::executor::check_bounds(sorted.len(), queries.len(), output.len())?;
        let q = queries.len();
        if q == 0 {
            return Ok(());
        }
        let grid = blocks(q, SEARCH_THREADS).min(SEARCH_MAX_BLOCKS);
        self.launch_entry(
            &SEARCH,
            entry(T::DTYPE, upper),
            grid,
            SEARCH_THREADS,
            &[
                Arg::view(sorted),
                Arg::view(queries),
                Arg::view_mut(&output),
                Arg::U32(sorted.len() as u32),
                Arg::U64(q as u64),
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_constants_match_the_kernel() {
        assert!(SEARCH.cuda.contains(&format!("#define SEARCH_THREADS {SEARCH_THREADS}u\n")));
        assert!(SEARCH.cuda.contains(&format!("#define SEARCH_MAX_BLOCKS {SEARCH_MAX_BLOCKS}u\n")));
    }
}
