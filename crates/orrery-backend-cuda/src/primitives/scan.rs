//! Exclusive and inclusive scans and stream compaction, plain or over a
//! [`DeviceCount`]: `kernels/core/scan.cu`.
//!
//! Each is one launch (single-pass decoupled look-back, tile ids and epochs drawn on the
//! device). The grid is sized for the bound; the kernels read the live count
//! `min(*slot, bound)` themselves, so a counted scan chains after the kernel that wrote
//! the count without a host read and replays correctly from a recording.

use orrery_core::executor::{check_compact, check_len};
use orrery_core::{DeviceCount, Result, Storage, ViewMutOf, ViewOf};

use super::{blocks, check_count};
use crate::CudaExecutor;
use crate::kernels::SCAN;
use crate::launch::Arg;

impl CudaExecutor {
    /// One scan launch over `bound` elements (`count`: the live length on the device).
    fn scan_launch(
        &self,
        entry: &str,
        input: ViewOf<'_, Self, u32>,
        count: Option<ViewOf<'_, Self, u32>>,
        output: &ViewMutOf<'_, Self, u32>,
        bound: usize,
    ) -> Result<()> {
        check_count("scan input", bound)?;
        let grid = blocks(bound.max(1), self.policy.scan_tile());
        let mut scratch = self.scratch();
        let lb = scratch.lookback(grid as usize)?;
        self.launch_entry(
            &SCAN,
            entry,
            grid,
            self.policy.scan_threads,
            &[
                Arg::view(input),
                Arg::view_mut(output),
                count.map_or(Arg::Ptr(0), Arg::view),
                Arg::Ptr(lb.status),
                Arg::Ptr(lb.ctl),
                Arg::Ptr(lb.hwm),
                Arg::U32(bound as u32),
            ],
        )
    }

    pub(crate) fn exclusive_scan_impl(
        &self,
        input: ViewOf<'_, Self, u32>,
        output: ViewMutOf<'_, Self, u32>,
    ) -> Result<()> {
        let n = input.len();
        check_len("scan output", n + 1, output.len())?;
        self.scan_launch("scan_exclusive_u32", input, None, &output, n)
    }

    pub(crate) fn exclusive_scan_counted_impl(
        &self,
        input: ViewOf<'_, Self, u32>,
        count: DeviceCount<'_, Self>,
        output: ViewMutOf<'_, Self, u32>,
    ) -> Result<()> {
        let bound = count.bound();
        check_len("counted scan input", bound, input.len())?;
        check_len("counted scan output", bound + 1, output.len())?;
        self.scan_launch("scan_exclusive_u32", input, Some(count.slot()), &output, bound)
    }

    pub(crate) fn inclusive_scan_impl(
        &self,
        input: ViewOf<'_, Self, u32>,
        output: ViewMutOf<'_, Self, u32>,
    ) -> Result<()> {
        let n = input.len();
        check_len("inclusive scan output", n, output.len())?;
        if n == 0 {
            return Ok(());
        }
        self.scan_launch("scan_inclusive_u32", input, None, &output, n)
    }

    /// [`orrery_core::Executor::compact`] (`live == None`) and
    /// [`orrery_core::Executor::compact_counted`].
    pub(crate) fn compact_impl<T: Storage>(
        &self,
        input: ViewOf<'_, Self, T>,
        flags: ViewOf<'_, Self, u32>,
        live: Option<DeviceCount<'_, Self>>,
        output: ViewMutOf<'_, Self, T>,
        count: ViewMutOf<'_, Self, u32>,
    ) -> Result<()> {
        let n = input.len();
        if let Some(live) = &live {
            check_len("counted compaction input", live.bound(), n)?;
        }
        check_compact(n, flags.len(), output.len(), count.len())?;
        check_count("compaction input", n)?;
        let size = size_of::<T>();
        let entry = match size {
            4 => "compact_b4",
            8 => "compact_b8",
            _ => "compact_words",
        };
        let grid = blocks(n.max(1), self.policy.scan_tile());
        let mut scratch = self.scratch();
        let lb = scratch.lookback(grid as usize)?;
        let mut args = vec![
            Arg::view(input),
            Arg::view(flags),
            Arg::view_mut(&output),
            Arg::view_mut(&count),
            live.as_ref().map_or(Arg::Ptr(0), |l| Arg::view(l.slot())),
            Arg::Ptr(lb.status),
            Arg::Ptr(lb.ctl),
            Arg::Ptr(lb.hwm),
            Arg::U32(n as u32),
        ];
        if entry == "compact_words" {
            args.push(Arg::U32((size / 4) as u32));
        }
        self.launch_entry(&SCAN, entry, grid, self.policy.scan_threads, &args)
    }
}
