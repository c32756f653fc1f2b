//! Radix sort of (u64 key, u32 value) pairs: `kernels/core/sort.cu`.
//!
//! One histogram launch for all passes, one launch that turns the histograms into digit
//! offsets, then one Onesweep launch per 8-bit digit pass over the requested bit range
//! (only passes that cover bits in use run). Passes ping-pong between the caller's
//! buffers and the executor's scratch; after an odd number of passes the result is
//! copied back (13..47 is 5 passes: one extra copy; 0..64 and 0..63 are 8: none).
//!
//! Auxiliary memory: 12 bytes per pair for the ping-pong buffers plus 2 KB of look-back
//! words per 4096-pair tile, kept by the executor for the next sort. Stable; keys are
//! compared as unsigned integers on the bits in range only.

use std::ops::Range;

use orrery_core::executor::check_sort_pairs;
use orrery_core::{DeviceBuffer, Result};

use super::{blocks, check_count};
use crate::CudaExecutor;
use crate::buffer::CudaBuffer;
use crate::kernels::SORT;
use crate::launch::Arg;
use crate::scratch::{CONTROL_SORT_COUNTERS, CONTROL_SORT_HIST};

/// Bits per digit pass.
const DIGIT_BITS: u32 = 8;
/// Digits per pass.
const RADIX: usize = 256;

impl CudaExecutor {
    pub(crate) fn sort_pairs_impl(
        &self,
        keys: &mut CudaBuffer<u64>,
        values: &mut CudaBuffer<u32>,
        bits: Range<u32>,
    ) -> Result<()> {
        check_sort_pairs(keys.len(), values.len(), &bits)?;
        let n = keys.len();
        check_count("sort pairs", n)?;
        if n <= 1 || bits.is_empty() {
            return Ok(());
        }
        let passes = (bits.end - bits.start).div_ceil(DIGIT_BITS);
        let policy = self.policy;
        let tiles = n.div_ceil(policy.sort_tile() as usize);
        let n32 = n as u32;

        let mut scratch = self.scratch();
        let (alt_keys, alt_vals) = scratch.sort_buffers(n)?;
        let status = scratch.lookback(tiles * RADIX)?;
        let control = scratch.clear_sort_control()?;
        let hist = control + (CONTROL_SORT_HIST * 4) as u64;
        let counters = control + (CONTROL_SORT_COUNTERS * 4) as u64;

        let chunk = policy.sort_hist_threads * policy.sort_hist_items;
        let hist_blocks = blocks(n, chunk).min(self.device.sm_count * policy.sort_hist_blocks_per_sm).max(1);
        self.launch_entry(
            &SORT,
            "radix_histogram",
            hist_blocks,
            policy.sort_hist_threads,
            &[Arg::buf(keys), Arg::Ptr(hist), Arg::U32(n32), Arg::U32(bits.start), Arg::U32(bits.end)],
        )?;
        self.launch_entry(&SORT, "radix_bin_offsets", 1, RADIX as u32, &[Arg::Ptr(hist), Arg::U32(passes)])?;

        let (mut src_k, mut src_v) = (keys.device_ptr(), values.device_ptr());
        let (mut dst_k, mut dst_v) = (alt_keys, alt_vals);
        let grid = blocks(n, policy.sort_tile());
        for p in 0..passes {
            let shift = bits.start + DIGIT_BITS * p;
            let nbits = DIGIT_BITS.min(bits.end - shift);
            let epoch = scratch.next_epoch()?;
            self.launch_entry(
                &SORT,
                "radix_onesweep",
                grid,
                policy.sort_threads,
                &[
                    Arg::Ptr(src_k),
                    Arg::Ptr(src_v),
                    Arg::Ptr(dst_k),
                    Arg::Ptr(dst_v),
                    Arg::Ptr(hist + (p as usize * RADIX * 4) as u64),
                    Arg::Ptr(status),
                    Arg::Ptr(counters + u64::from(p) * 4),
                    Arg::U32(n32),
                    Arg::U32(shift),
                    Arg::U32(nbits),
                    Arg::U32(epoch),
                ],
            )?;
            std::mem::swap(&mut src_k, &mut dst_k);
            std::mem::swap(&mut src_v, &mut dst_v);
        }
        if passes % 2 == 1 {
            // The result is in the scratch buffers (src after the last swap).
            self.copy_device(keys.device_ptr(), src_k, n * 8)?;
            self.copy_device(values.device_ptr(), src_v, n * 4)?;
        }
        Ok(())
    }
}
