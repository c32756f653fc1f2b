//! Histogram of u32 values (placeholder until the kernel lands: an `Unsupported`
//! error, never a wrong answer).

use orrery_core::{Executor, Result, ViewMutOf, ViewOf};

use crate::CudaExecutor;

impl CudaExecutor {
    /// [`Executor::histogram`].
    pub(crate) fn histogram_impl(&self, _values: ViewOf<'_, Self, u32>, _output: ViewMutOf<'_, Self, u32>) -> Result<()> {
        Err(orrery_core::executor::unsupported(&self.name(), "histogram", "not implemented on this executor yet"))
    }
}
