//! Segmented (CSR) scan, reduction and top-k (placeholder until the kernels land: an
//! `Unsupported` error, never a wrong answer).

use orrery_core::{Element, Executor, Order, ReduceOp, Result, ScanKind, ViewMutOf, ViewOf};

use crate::CudaExecutor;

impl CudaExecutor {
    fn not_yet(&self, op: &str) -> orrery_core::Error {
        orrery_core::executor::unsupported(&self.name(), op, "not implemented on this executor yet")
    }

    /// [`Executor::segmented_scan`].
    pub(crate) fn segmented_scan_impl(
        &self,
        _input: ViewOf<'_, Self, u32>,
        _offsets: ViewOf<'_, Self, u32>,
        _kind: ScanKind,
        _output: ViewMutOf<'_, Self, u32>,
    ) -> Result<()> {
        Err(self.not_yet("segmented_scan"))
    }

    /// [`Executor::segmented_reduce`].
    pub(crate) fn segmented_reduce_impl<T: Element>(
        &self,
        _input: ViewOf<'_, Self, T>,
        _offsets: ViewOf<'_, Self, u32>,
        _op: ReduceOp,
        _output: ViewMutOf<'_, Self, T>,
    ) -> Result<()> {
        Err(self.not_yet("segmented_reduce"))
    }

    /// [`Executor::segmented_top_k`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn segmented_top_k_impl<T: Element>(
        &self,
        _keys: ViewOf<'_, Self, T>,
        _offsets: ViewOf<'_, Self, u32>,
        _k: u32,
        _order: Order,
        _indices: ViewMutOf<'_, Self, u32>,
        _top_keys: ViewMutOf<'_, Self, T>,
    ) -> Result<()> {
        Err(self.not_yet("segmented_top_k"))
    }
}
