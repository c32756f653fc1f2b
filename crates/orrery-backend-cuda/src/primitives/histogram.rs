//! Histogram of u32 values: `kernels/core/histogram.cu`. The output is zeroed
//! (`cuMemsetD32Async`), then counted by atomics: block-private shared-memory histograms
//! merged into the output when the bins fit in shared memory (1024 or 8192 words), global
//! atomics otherwise. Integer counts do not depend on the order of the additions, so the
//! result is the CPU's exactly.

use orrery_core::{Result, ViewMutOf, ViewOf};

use super::blocks;
use crate::CudaExecutor;
use crate::kernels::HISTOGRAM;
use crate::launch::Arg;

/// Threads per block (`HIST_THREADS` of histogram.cu).
const HIST_THREADS: u32 = 256;
/// Values per thread per round (`HIST_ITEMS`).
const HIST_ITEMS: u32 = 8;
/// Values per block per round.
const HIST_CHUNK: u32 = HIST_THREADS * HIST_ITEMS;
/// Resident blocks per SM the grid is sized for (grid-stride beyond that).
const HIST_BLOCKS_PER_SM: u32 = 8;
/// Bins of the small and the large shared-memory variant.
const SHARED_BINS: [(usize, &str); 2] = [(1024, "histogram_shared_1k"), (8192, "histogram_shared_8k")];

impl CudaExecutor {
    /// [`Executor::histogram`](orrery_core::Executor::histogram).
    pub(crate) fn histogram_impl(&self, values: ViewOf<'_, Self, u32>, output: ViewMutOf<'_, Self, u32>) -> Result<()> {
        orrery_core::executor::check_histogram(output.len())?;
        let bins = output.len();
        self.memset_u32(&output.buffer().raw, (output.offset() * 4) as u64, 0, bins)?;
        let n = values.len();
        if n == 0 {
            return Ok(());
        }
        let entry = SHARED_BINS.iter().find(|(cap, _)| bins <= *cap).map_or("histogram_global", |(_, e)| *e);
        // Enough blocks to fill the device, but each block counts at least as many values
        // as it has bins to merge (shared variants).
        let per_block = if entry == "histogram_global" { HIST_CHUNK as usize } else { bins.max(HIST_CHUNK as usize) };
        let grid = u32::try_from(n.div_ceil(per_block))
            .unwrap_or(u32::MAX)
            .min(blocks(n, HIST_CHUNK))
            .min(self.sm_count().saturating_mul(HIST_BLOCKS_PER_SM))
            .max(1);
        self.launch_entry(
            &HISTOGRAM,
            entry,
            grid,
            HIST_THREADS,
            &[Arg::view(values), Arg::view_mut(&output), Arg::U64(n as u64), Arg::U64(bins as u64)],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_constants_match_the_kernel() {
        assert!(HISTOGRAM.cuda.contains(&format!("#define HIST_THREADS {HIST_THREADS}u\n")));
        assert!(HISTOGRAM.cuda.contains(&format!("#define HIST_ITEMS {HIST_ITEMS}u\n")));
        for (bins, entry) in SHARED_BINS {
            let suffix = &entry["histogram_shared_".len()..];
            assert!(HISTOGRAM.cuda.contains(&format!("histogram_shared<{bins}u>")), "{entry}");
            assert_eq!(suffix, format!("{}k", bins / 1024));
        }
    }
}
