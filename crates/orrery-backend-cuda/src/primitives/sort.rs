//! Radix sort of (u64 key, u32 value) pairs: `kernels/core/sort.cu`.
//!
//! One histogram launch for all passes, one launch that turns the histograms into digit
//! offsets, then one Onesweep launch per 8-bit digit pass over the requested bit range
//! (only passes that cover bits in use run). Passes ping-pong between the caller's
//! buffers and the executor's scratch; after an odd number of passes the result is
//! copied back (13..47 is 5 passes: one extra copy; 0..64 and 0..63 are 8: none).
//!
//! Auxiliary memory: 12 bytes per pair for the ping-pong buffers plus 2 KB of look-back
//! words per 4096-pair tile, kept by the executor for the next sort. Keys and values are
//! views (any element offset); the look-back epochs are drawn on the device. Stable; keys are
//! compared as unsigned integers on the bits in range only.

use std::ops::Range;

use orrery_core::executor::check_sort_pairs;
use orrery_core::{Result, ViewMutOf};

use super::{blocks, check_count};
use crate::CudaExecutor;
use crate::kernels::SORT;
use crate::launch::Arg;

/// Bits per digit pass.
const DIGIT_BITS: u32 = 8;
/// Digits per pass.
const RADIX: usize = 256;

impl CudaExecutor {
    pub(crate) fn sort_pairs_impl(
        &self,
        keys: ViewMutOf<'_, Self, u64>,
        values: ViewMutOf<'_, Self, u32>,
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
        let lb = scratch.lookback(tiles * RADIX)?;
        let hist = scratch.clear_sort_hist()?;

        let chunk = policy.sort_hist_threads * policy.sort_hist_items;
        let hist_blocks = blocks(n, chunk).min(self.ctx.sm_count * policy.sort_hist_blocks_per_sm).max(1);
        self.launch_entry(
            &SORT,
            "radix_histogram",
            hist_blocks,
            policy.sort_hist_threads,
            &[Arg::view_mut(&keys), Arg::Ptr(hist), Arg::U32(n32), Arg::U32(bits.start), Arg::U32(bits.end)],
        )?;
        self.launch_entry(&SORT, "radix_bin_offsets", 1, RADIX as u32, &[Arg::Ptr(hist), Arg::U32(passes)])?;

        // Pass p reads `src` and writes `dst`; even passes read the caller's views.
        let caller = (Arg::view_mut(&keys), Arg::view_mut(&values));
        let alt = (Arg::Ptr(alt_keys), Arg::Ptr(alt_vals));
        let grid = blocks(n, policy.sort_tile());
        for p in 0..passes {
            let shift = bits.start + DIGIT_BITS * p;
            let nbits = DIGIT_BITS.min(bits.end - shift);
            let (src, dst) = if p % 2 == 0 { (caller, alt) } else { (alt, caller) };
            self.launch_entry(
                &SORT,
                "radix_onesweep",
                grid,
                policy.sort_threads,
                &[
                    src.0,
                    src.1,
                    dst.0,
                    dst.1,
                    Arg::Ptr(hist + (p as usize * RADIX * 4) as u64),
                    Arg::Ptr(lb.status),
                    Arg::Ptr(lb.ctl),
                    Arg::Ptr(lb.hwm),
                    Arg::U32(n32),
                    Arg::U32(shift),
                    Arg::U32(nbits),
                ],
            )?;
        }
        if passes % 2 == 1 {
            // The result is in the scratch buffers.
            let k_at = keys.buffer().device_ptr() + (keys.offset() * 8) as u64;
            let v_at = values.buffer().device_ptr() + (values.offset() * 4) as u64;
            self.touch(&keys.buffer().raw);
            self.touch(&values.buffer().raw);
            self.copy_device_ptr(k_at, alt_keys, n * 8)?;
            self.copy_device_ptr(v_at, alt_vals, n * 4)?;
        }
        Ok(())
    }
}
