//! Histogram of u32 values (`shaders/core/histogram.wgsl`).

use orrery_core::{Result, ViewMutOf, ViewOf};

use super::{Params, arg, arg_mut, count};
use crate::context::DispatchGrid;
use crate::executor::WgpuExecutor;
use crate::shaders::HISTOGRAM;

/// Values per workgroup (`TILE` in `histogram.wgsl`).
const TILE: u32 = 4096;
/// Most bins of the workgroup-memory path (`SHARED_BINS` in `histogram.wgsl`).
const SHARED_BINS: u32 = 4096;

// The executor hands its views over by value (the signatures the trait methods call).
#[allow(clippy::needless_pass_by_value)]
impl WgpuExecutor {
    /// [`orrery_core::Executor::histogram`]: the output is cleared, then counted with
    /// workgroup-private histograms merged by atomics (global atomics beyond
    /// [`SHARED_BINS`] bins).
    pub(crate) fn histogram_impl(&self, values: ViewOf<'_, Self, u32>, output: ViewMutOf<'_, Self, u32>) -> Result<()> {
        orrery_core::executor::check_histogram(output.len())?;
        let bins = count(output.len(), "histogram bins")?;
        let n = count(values.len(), "histogram values")?;
        let mut rec = self.ctx.recorder();
        let counts = arg_mut(&output);
        rec.clear(counts);
        if n == 0 {
            return Ok(());
        }
        let tiles = n.div_ceil(TILE);
        let entry = if bins <= SHARED_BINS { "hist_shared" } else { "hist_global" };
        let pipeline = rec.pipeline(HISTOGRAM, &[], entry)?;
        let params = Params::new().u32(n).u32(bins).u32(tiles);
        rec.dispatch(&pipeline, &[arg(&values), counts], &params, DispatchGrid::Blocks(tiles))
    }
}
