//! Vectorised lower and upper bounds (placeholder until the kernels land: an
//! `Unsupported` error, never a wrong answer).

use orrery_core::{Element, Executor, Result, ViewMutOf, ViewOf};

use crate::CudaExecutor;

impl CudaExecutor {
    /// [`Executor::lower_bound`] (`upper == false`) or [`Executor::upper_bound`].
    pub(crate) fn bound_impl<T: Element>(
        &self,
        _sorted: ViewOf<'_, Self, T>,
        _queries: ViewOf<'_, Self, T>,
        _output: ViewMutOf<'_, Self, u32>,
        upper: bool,
    ) -> Result<()> {
        let op = if upper { "upper_bound" } else { "lower_bound" };
        Err(orrery_core::executor::unsupported(&self.name(), op, "not implemented on this executor yet"))
    }
}
