//! Exclusive scan and stream compaction: `kernels/core/scan.cu`.
//!
//! Both are one launch (single-pass decoupled look-back, dynamic tile ids); empty inputs
//! need no launch, only the total (0) written.

use orrery_core::executor::{check_compact, check_len};
use orrery_core::{DeviceBuffer, Element, Result};

use super::{blocks, check_count};
use crate::CudaExecutor;
use crate::buffer::CudaBuffer;
use crate::kernels::SCAN;
use crate::launch::Arg;
use crate::scratch::CONTROL_SCAN_COUNTER;

impl CudaExecutor {
    pub(crate) fn exclusive_scan_impl(&self, input: &CudaBuffer<u32>, output: &mut CudaBuffer<u32>) -> Result<()> {
        let n = input.len();
        check_len("scan output", n + 1, output.len())?;
        check_count("scan input", n)?;
        if n == 0 {
            return self.memset_u32(output.device_ptr(), 0, 1);
        }
        let tiles = blocks(n, self.policy.scan_tile());
        let mut scratch = self.scratch();
        let status = scratch.lookback(tiles as usize)?;
        let counter = scratch.control()? + (CONTROL_SCAN_COUNTER * 4) as u64;
        let epoch = scratch.next_epoch()?;
        self.launch_entry(
            &SCAN,
            "scan_exclusive_u32",
            tiles,
            self.policy.scan_threads,
            &[
                Arg::buf(input),
                Arg::buf(output),
                Arg::Ptr(status),
                Arg::Ptr(counter),
                Arg::U64(n as u64),
                Arg::U32(epoch),
                Arg::U32(tiles),
            ],
        )
    }

    pub(crate) fn compact_impl<T: Element>(
        &self,
        input: &CudaBuffer<T>,
        flags: &CudaBuffer<u32>,
        output: &mut CudaBuffer<T>,
        count: &mut CudaBuffer<u32>,
    ) -> Result<()> {
        let n = input.len();
        check_compact(n, flags.len(), output.len(), count.len())?;
        check_count("compaction input", n)?;
        if n == 0 {
            return self.memset_u32(count.device_ptr(), 0, 1);
        }
        let entry = if size_of::<T>() == 4 { "compact_b4" } else { "compact_b8" };
        let tiles = blocks(n, self.policy.scan_tile());
        let mut scratch = self.scratch();
        let status = scratch.lookback(tiles as usize)?;
        let counter = scratch.control()? + (CONTROL_SCAN_COUNTER * 4) as u64;
        let epoch = scratch.next_epoch()?;
        self.launch_entry(
            &SCAN,
            entry,
            tiles,
            self.policy.scan_threads,
            &[
                Arg::buf(input),
                Arg::buf(flags),
                Arg::buf(output),
                Arg::buf(count),
                Arg::Ptr(status),
                Arg::Ptr(counter),
                Arg::U64(n as u64),
                Arg::U32(epoch),
                Arg::U32(tiles),
            ],
        )
    }
}
