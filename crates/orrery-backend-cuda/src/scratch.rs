//! Scratch memory of the primitives, one per executor (a fork has its own): grown with
//! headroom, never shrunk, reused by every call (the steady state allocates nothing).
//! [`orrery_core::Executor::reserve`] grows it ahead of a recording; growing it while a
//! recording captures the stream is [`orrery_core::Error::Recording`].
//!
//! | region      | what                                                                 |
//! |-------------|----------------------------------------------------------------------|
//! | `lookback`  | u64 status words of the decoupled look-back (scan, compaction, sort) |
//! | `control`   | the look-back control pair, then the sort's histograms               |
//! | `sort_keys` | the sort's ping-pong keys                                             |
//! | `sort_vals` | the sort's ping-pong values                                           |
//! | `reduce`    | per-tile partial results of a reduction                              |
//!
//! Look-back epochs live on the device (kernels/core/common.cuh): `control` starts with
//! the pair `{u64 ctl = epoch << 32 | tile counter, u32 hwm}`, set to `{1 << 32, 0}` when
//! allocated. Every launch that uses the status words draws its tile and epoch from `ctl`
//! and the last block advances the epoch, so the host never hands out epochs (a replayed
//! graph stays correct). All users share the one status array and therefore the one pair
//! (their launches are ordered on this executor's stream). When the status array is
//! reallocated it starts zeroed (epoch 0 is never valid) and `hwm` is reset to 0.

use std::sync::Arc;

use cudarc::driver::result;
use cudarc::driver::sys::CUdeviceptr;
use orrery_core::Result;
use orrery_core::executor::grown_capacity;

use crate::buffer::Allocation;
use crate::error::DriverResultExt;
use crate::stream::{Stream, recording_error};

/// Byte offset of the look-back control word `ctl` (u64) in `control`.
const CONTROL_CTL_BYTES: usize = 0;
/// Byte offset of the look-back high-water mark `hwm` (u32) in `control`.
const CONTROL_HWM_BYTES: usize = 8;
/// Word offset of the sort histograms (8 passes x 256 digits) in `control`.
pub(crate) const CONTROL_SORT_HIST: usize = 32;
/// Words of the sort histograms.
const SORT_HIST_WORDS: usize = 8 * 256;
/// Words in `control`.
const CONTROL_WORDS: usize = CONTROL_SORT_HIST + SORT_HIST_WORDS;

/// One growable allocation.
#[derive(Default)]
struct Region {
    alloc: Option<Arc<Allocation>>,
}

impl Region {
    fn ptr(&self) -> CUdeviceptr {
        self.alloc.as_ref().map_or(0, |a| a.ptr)
    }

    fn bytes(&self) -> usize {
        self.alloc.as_ref().map_or(0, |a| a.bytes)
    }
}

/// The look-back state of one launch: the status words and the control pair.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lookback {
    /// u64 status words.
    pub(crate) status: CUdeviceptr,
    /// The u64 control word `epoch << 32 | tile counter`.
    pub(crate) ctl: CUdeviceptr,
    /// The u32 high-water mark of status words in use.
    pub(crate) hwm: CUdeviceptr,
}

/// The scratch memory of one executor (behind its mutex: one primitive at a time
/// enqueues work that uses it).
pub(crate) struct Scratch {
    stream: Arc<Stream>,
    lookback: Region,
    control: Region,
    sort_keys: Region,
    sort_vals: Region,
    reduce: Region,
}

impl Scratch {
    pub(crate) fn new(stream: Arc<Stream>) -> Self {
        Self {
            stream,
            lookback: Region::default(),
            control: Region::default(),
            sort_keys: Region::default(),
            sort_vals: Region::default(),
            reduce: Region::default(),
        }
    }

    /// Makes `region` hold at least `bytes` bytes; returns whether it was reallocated.
    fn grow(stream: &Arc<Stream>, region: &mut Region, bytes: usize) -> Result<bool> {
        if region.bytes() >= bytes {
            return Ok(false);
        }
        if stream.capturing() {
            return Err(recording_error(format!(
                "the primitives' scratch must grow to {bytes} bytes during a recording: call reserve first"
            )));
        }
        let new_bytes = grown_capacity(bytes).max(bytes);
        let ptr = stream.alloc(new_bytes)?;
        // The old allocation is freed in stream order when its last owner (this region or
        // a recording) lets go.
        region.alloc = Some(Allocation::new(Arc::clone(stream), ptr, new_bytes));
        Ok(true)
    }

    fn memset_zero(&self, ptr: CUdeviceptr, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.stream.bind()?;
        // SAFETY: `ptr .. ptr + bytes` lies in a live scratch allocation; the memset is
        // ordered on the executor's stream like every use of the region.
        unsafe { result::memset_d8_async(ptr, 0, bytes, self.stream.raw()) }.during("cuMemsetD8Async")
    }

    fn memset_u32(&self, ptr: CUdeviceptr, value: u32, words: usize) -> Result<()> {
        self.stream.bind()?;
        // SAFETY: `ptr .. ptr + 4 * words` lies in a live scratch allocation.
        unsafe { cudarc::driver::sys::cuMemsetD32Async(ptr, value, words, self.stream.raw()) }
            .result()
            .during("cuMemsetD32Async")
    }

    /// The control words: the look-back pair `{1 << 32, 0}` and zeroed histograms when
    /// first allocated.
    fn control(&mut self) -> Result<CUdeviceptr> {
        if Self::grow(&self.stream, &mut self.control, CONTROL_WORDS * 4)? {
            let base = self.control.ptr();
            self.memset_zero(base, self.control.bytes())?;
            // ctl = 1 << 32: epoch 1, tile counter 0 (the high word of a little-endian u64).
            self.memset_u32(base + CONTROL_CTL_BYTES as u64 + 4, 1, 1)?;
        }
        Ok(self.control.ptr())
    }

    /// Look-back status words for `words` tiles (or tile-digit pairs) and the control pair.
    pub(crate) fn lookback(&mut self, words: usize) -> Result<Lookback> {
        let control = self.control()?;
        if Self::grow(&self.stream, &mut self.lookback, words * 8)? {
            self.memset_zero(self.lookback.ptr(), self.lookback.bytes())?;
            // A fresh array holds no word of any epoch: nothing to clear at the next wrap.
            self.memset_zero(control + CONTROL_HWM_BYTES as u64, 4)?;
        }
        Ok(Lookback {
            status: self.lookback.ptr(),
            ctl: control + CONTROL_CTL_BYTES as u64,
            hwm: control + CONTROL_HWM_BYTES as u64,
        })
    }

    /// Sets the look-back epoch (tile counter 0), for tests of the epoch wrap: a jump
    /// forward keeps the invariant that every status word holds 0 or an older epoch.
    pub(crate) fn set_epoch(&mut self, epoch: u32) -> Result<()> {
        let ctl = self.control()? + CONTROL_CTL_BYTES as u64;
        self.memset_u32(ctl, 0, 1)?;
        self.memset_u32(ctl + 4, epoch, 1)
    }

    /// Clears the sort's histograms (one memset per sort) and returns their address.
    pub(crate) fn clear_sort_hist(&mut self) -> Result<CUdeviceptr> {
        let base = self.control()? + (CONTROL_SORT_HIST * 4) as u64;
        self.memset_zero(base, SORT_HIST_WORDS * 4)?;
        Ok(base)
    }

    /// The sort's ping-pong buffers for `n` pairs: (keys, values).
    pub(crate) fn sort_buffers(&mut self, n: usize) -> Result<(CUdeviceptr, CUdeviceptr)> {
        Self::grow(&self.stream, &mut self.sort_keys, n * 8)?;
        Self::grow(&self.stream, &mut self.sort_vals, n * 4)?;
        Ok((self.sort_keys.ptr(), self.sort_vals.ptr()))
    }

    /// `bytes` bytes for reduction partials.
    pub(crate) fn reduce(&mut self, bytes: usize) -> Result<CUdeviceptr> {
        Self::grow(&self.stream, &mut self.reduce, bytes)?;
        Ok(self.reduce.ptr())
    }

    /// Every allocation the scratch holds now (a recording keeps them alive).
    pub(crate) fn allocations(&self) -> Vec<Arc<Allocation>> {
        [&self.lookback, &self.control, &self.sort_keys, &self.sort_vals, &self.reduce]
            .iter()
            .filter_map(|r| r.alloc.clone())
            .collect()
    }
}
