//! Scratch memory of the primitives: grown with headroom, never shrunk, reused by every
//! call (the steady state allocates nothing).
//!
//! | region      | what                                                                 |
//! |-------------|----------------------------------------------------------------------|
//! | `lookback`  | u64 status words of the decoupled look-back (scan, compaction, sort) |
//! | `control`   | u32 words: the scan's tile counter, the sort's histograms and tile counters |
//! | `sort_keys` | the sort's ping-pong keys                                             |
//! | `sort_vals` | the sort's ping-pong values                                           |
//! | `reduce`    | per-tile partial results of a reduction                              |
//!
//! Look-back words carry an epoch (kernels/core/common.cuh): each launch that uses them
//! draws a fresh one, so the words need clearing only when the array is (re)allocated
//! and when the 30-bit epoch counter wraps.

use std::sync::Arc;

use cudarc::driver::result;
use cudarc::driver::sys::CUdeviceptr;
use orrery_core::Result;
use orrery_core::executor::grown_capacity;

use crate::device::Device;
use crate::error::DriverResultExt;

/// Word offset (u32) of the scan / compaction tile counter in `control`.
pub(crate) const CONTROL_SCAN_COUNTER: usize = 0;
/// Word offset of the sort histograms (8 passes x 256 digits) in `control`.
pub(crate) const CONTROL_SORT_HIST: usize = 32;
/// Word offset of the sort's per-pass tile counters (8) in `control`.
pub(crate) const CONTROL_SORT_COUNTERS: usize = CONTROL_SORT_HIST + 8 * 256;
/// Words in `control`.
const CONTROL_WORDS: usize = CONTROL_SORT_COUNTERS + 32;

/// Largest epoch; the counter restarts at 1 after it (after clearing the words).
const MAX_EPOCH: u32 = (1 << 30) - 1;

/// One growable allocation.
#[derive(Debug, Default)]
struct Region {
    ptr: CUdeviceptr,
    bytes: usize,
}

/// The scratch memory of one executor (behind its mutex: one primitive at a time
/// enqueues work that uses it).
pub(crate) struct Scratch {
    device: Arc<Device>,
    lookback: Region,
    control: Region,
    sort_keys: Region,
    sort_vals: Region,
    reduce: Region,
    epoch: u32,
}

impl Scratch {
    pub(crate) fn new(device: Arc<Device>) -> Self {
        Self {
            device,
            lookback: Region::default(),
            control: Region::default(),
            sort_keys: Region::default(),
            sort_vals: Region::default(),
            reduce: Region::default(),
            epoch: 0,
        }
    }

    /// Makes `region` hold at least `bytes` bytes; returns whether it was reallocated.
    fn grow(device: &Device, region: &mut Region, bytes: usize) -> Result<bool> {
        if region.bytes >= bytes {
            return Ok(false);
        }
        let new_bytes = grown_capacity(bytes).max(bytes);
        let ptr = device.alloc(new_bytes)?;
        device.free(region.ptr);
        *region = Region { ptr, bytes: new_bytes };
        Ok(true)
    }

    fn memset_zero(&self, ptr: CUdeviceptr, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.device.bind()?;
        // SAFETY: `ptr .. ptr + bytes` lies in a live scratch allocation; the memset is
        // ordered on the executor's stream like every use of the region.
        unsafe { result::memset_d8_async(ptr, 0, bytes, self.device.stream()) }.during("cuMemsetD8Async")
    }

    /// Look-back status words for `words` tiles (or tile-digit pairs).
    pub(crate) fn lookback(&mut self, words: usize) -> Result<CUdeviceptr> {
        if Self::grow(&self.device, &mut self.lookback, words * 8)? {
            self.memset_zero(self.lookback.ptr, self.lookback.bytes)?;
        }
        Ok(self.lookback.ptr)
    }

    /// A fresh epoch for a launch that uses the look-back words.
    pub(crate) fn next_epoch(&mut self) -> Result<u32> {
        if self.epoch >= MAX_EPOCH {
            self.memset_zero(self.lookback.ptr, self.lookback.bytes)?;
            self.epoch = 0;
        }
        self.epoch += 1;
        Ok(self.epoch)
    }

    /// The control words (zeroed when first allocated).
    pub(crate) fn control(&mut self) -> Result<CUdeviceptr> {
        if Self::grow(&self.device, &mut self.control, CONTROL_WORDS * 4)? {
            self.memset_zero(self.control.ptr, self.control.bytes)?;
        }
        Ok(self.control.ptr)
    }

    /// Clears the sort's histograms and tile counters (one memset per sort).
    pub(crate) fn clear_sort_control(&mut self) -> Result<CUdeviceptr> {
        let base = self.control()?;
        self.memset_zero(base + (CONTROL_SORT_HIST * 4) as u64, (CONTROL_WORDS - CONTROL_SORT_HIST) * 4)?;
        Ok(base)
    }

    /// The sort's ping-pong buffers for `n` pairs: (keys, values).
    pub(crate) fn sort_buffers(&mut self, n: usize) -> Result<(CUdeviceptr, CUdeviceptr)> {
        Self::grow(&self.device, &mut self.sort_keys, n * 8)?;
        Self::grow(&self.device, &mut self.sort_vals, n * 4)?;
        Ok((self.sort_keys.ptr, self.sort_vals.ptr))
    }

    /// `bytes` bytes for reduction partials.
    pub(crate) fn reduce(&mut self, bytes: usize) -> Result<CUdeviceptr> {
        Self::grow(&self.device, &mut self.reduce, bytes)?;
        Ok(self.reduce.ptr)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        for r in [&self.lookback, &self.control, &self.sort_keys, &self.sort_vals, &self.reduce] {
            self.device.free(r.ptr);
        }
    }
}
