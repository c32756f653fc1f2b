//! Vectorised lower and upper bounds (`shaders/core/search.wgsl`).

use orrery_core::{Element, Result, ViewMutOf, ViewOf};

use super::segmented::type_defines;
use super::{Params, arg, arg_mut, count, per_element};
use crate::context::DispatchGrid;
use crate::executor::WgpuExecutor;
use crate::shaders::SEARCH;

// The executor hands its views over by value (the signatures the trait methods call).
#[allow(clippy::needless_pass_by_value)]
impl WgpuExecutor {
    /// [`orrery_core::Executor::lower_bound`] (`upper == false`) or
    /// [`orrery_core::Executor::upper_bound`]: one invocation per query runs
    /// `lower_bound_one` / `upper_bound_one`'s loop on order keys (every element type,
    /// f64 included: keys come from the raw words).
    pub(crate) fn bound_impl<T: Element>(
        &self,
        sorted: ViewOf<'_, Self, T>,
        queries: ViewOf<'_, Self, T>,
        output: ViewMutOf<'_, Self, u32>,
        upper: bool,
    ) -> Result<()> {
        // The CPU reference's checks, in its order.
        orrery_core::executor::check_bounds(sorted.len(), queries.len(), output.len())?;
        let n = count(sorted.len(), "sorted array")?;
        let q = count(queries.len(), "bound queries")?;
        let mut rec = self.ctx.recorder();
        let entry = if upper { "upper_bound" } else { "lower_bound" };
        let pipeline = rec.pipeline(SEARCH, type_defines::<T>(), entry)?;
        let params = Params::new().u32(n).u32(q);
        rec.dispatch(
            &pipeline,
            &[arg(&sorted), arg(&queries), arg_mut(&output)],
            &params,
            DispatchGrid::Blocks(per_element(q)),
        )
    }
}
