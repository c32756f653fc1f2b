//! One executor's stream: stream-ordered allocation and frees, markers, events, pinned
//! host staging for [`orrery_core::Executor::read_async`], and the capture state of
//! [`orrery_core::Executor::record`].
//!
//! Every executor (and every fork) owns one non-blocking stream; everything it does is
//! enqueued there in order. Memory is allocated and freed in stream order
//! (`cuMemAllocAsync` / `cuMemFreeAsync` from the device's default pool) when the device
//! supports memory pools, so dropping a buffer never waits for the device and never frees
//! memory that earlier work on the stream still reads. A free requested while the stream
//! is being captured is deferred to the end of the capture (it must not become part of
//! the recorded graph).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cudarc::driver::result;
use cudarc::driver::sys::{self, CUdeviceptr};
use orrery_core::{Error, Result};

use crate::device::Context;
use crate::error::{BACKEND, DriverResultExt, alloc_error};

/// A stream of one executor, with the context it belongs to.
pub(crate) struct Stream {
    pub(crate) ctx: Arc<Context>,
    raw: sys::CUstream,
    /// Whether [`orrery_core::Executor::record`] is capturing this stream.
    capturing: AtomicBool,
    /// Frees requested while capturing, done when the capture ends.
    deferred: Mutex<Vec<CUdeviceptr>>,
    /// Pinned host buffers of finished reads, reused by the next ones.
    pinned: Mutex<Vec<Pinned>>,
}

// SAFETY: a CUstream handle may be used from any thread once its context is current,
// which `bind` ensures before every driver call; the rest is behind mutexes or atomics.
unsafe impl Send for Stream {}
// SAFETY: see above; the driver serialises concurrent calls on one stream.
unsafe impl Sync for Stream {}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").field("device", &self.ctx.ordinal).finish_non_exhaustive()
    }
}

/// The error of an operation that a recording cannot hold.
pub(crate) fn recording_error(reason: impl Into<String>) -> Error {
    Error::Recording { backend: BACKEND, reason: reason.into() }
}

impl Stream {
    /// A new non-blocking stream on `ctx`.
    pub(crate) fn new(ctx: Arc<Context>) -> Result<Arc<Self>> {
        ctx.bind()?;
        let raw = result::stream::create(result::stream::StreamKind::NonBlocking).during("cuStreamCreate")?;
        Ok(Arc::new(Self {
            ctx,
            raw,
            capturing: AtomicBool::new(false),
            deferred: Mutex::new(Vec::new()),
            pinned: Mutex::new(Vec::new()),
        }))
    }

    pub(crate) fn bind(&self) -> Result<()> {
        self.ctx.bind()
    }

    /// The driver's stream handle.
    pub(crate) fn raw(&self) -> sys::CUstream {
        self.raw
    }

    /// Whether a recording is capturing the stream.
    pub(crate) fn capturing(&self) -> bool {
        self.capturing.load(Ordering::Acquire)
    }

    pub(crate) fn set_capturing(&self, on: bool) {
        self.capturing.store(on, Ordering::Release);
    }

    /// [`Error::Recording`] for `operation` while capturing.
    pub(crate) fn forbid_while_recording(&self, operation: &str) -> Result<()> {
        if self.capturing() {
            Err(recording_error(format!("{operation} cannot be part of a recording")))
        } else {
            Ok(())
        }
    }

    /// Waits for all work on the stream.
    pub(crate) fn synchronize(&self) -> Result<()> {
        self.forbid_while_recording("synchronize (a host wait)")?;
        self.bind()?;
        // SAFETY: the stream is alive (owned by self) and the context is current.
        unsafe { result::stream::synchronize(self.raw) }.during("cuStreamSynchronize")
    }

    /// Allocates `bytes` bytes in stream order (0 bytes gives the null pointer).
    pub(crate) fn alloc(&self, bytes: usize) -> Result<CUdeviceptr> {
        self.forbid_while_recording("an allocation")?;
        if bytes == 0 {
            return Ok(0);
        }
        self.bind()?;
        let r = if self.ctx.async_alloc {
            // SAFETY: the stream is alive and the context current; the memory is used only
            // by work enqueued after this on this stream, or ordered after it by events.
            unsafe { result::malloc_async(self.raw, bytes) }
        } else {
            // SAFETY: plain allocation with the context current.
            unsafe { result::malloc_sync(bytes) }
        };
        r.map_err(|e| alloc_error(bytes, e))
    }

    /// Frees memory from [`Stream::alloc`] in stream order (deferred while capturing).
    /// Errors are ignored (this runs in destructors; a failing free means the context is
    /// already lost).
    pub(crate) fn free(&self, ptr: CUdeviceptr) {
        if ptr == 0 {
            return;
        }
        if self.capturing() {
            self.deferred.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(ptr);
            return;
        }
        self.free_now(ptr);
    }

    fn free_now(&self, ptr: CUdeviceptr) {
        if self.bind().is_err() {
            return;
        }
        if self.ctx.async_alloc {
            // SAFETY: `ptr` came from `malloc_async` and is freed once; work enqueued
            // before still sees the memory (stream-ordered free).
            let _ = unsafe { result::free_async(ptr, self.raw) };
        } else {
            // SAFETY: wait for the stream first so no enqueued work still uses `ptr`.
            let _ = unsafe { result::stream::synchronize(self.raw) };
            // SAFETY: `ptr` came from `malloc_sync` and is freed once.
            let _ = unsafe { result::free_sync(ptr) };
        }
    }

    /// Performs the frees deferred during a capture.
    pub(crate) fn flush_deferred_frees(&self) {
        let ptrs = std::mem::take(&mut *self.deferred.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        for p in ptrs {
            self.free_now(p);
        }
    }

    /// A pinned host buffer of at least `bytes` bytes (reused when one is free).
    pub(crate) fn take_pinned(&self, bytes: usize) -> Result<Pinned> {
        let mut pool = self.pinned.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(i) = pool.iter().position(|p| p.bytes >= bytes) {
            return Ok(pool.swap_remove(i));
        }
        drop(pool);
        Pinned::new(&self.ctx, bytes.max(64))
    }

    /// Returns a pinned buffer for reuse (keeps at most a few).
    pub(crate) fn give_pinned(&self, p: Pinned) {
        let mut pool = self.pinned.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if pool.len() < 8 {
            pool.push(p);
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.flush_deferred_frees();
        if self.bind().is_ok() {
            // SAFETY: the stream is owned by self and destroyed exactly once, after its
            // work has finished.
            unsafe {
                let _ = result::stream::synchronize(self.raw);
                let _ = result::stream::destroy(self.raw);
            }
        }
        // Pinned buffers drop after the stream's work is done.
        self.pinned.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
    }
}

/// Page-locked host memory (the staging of an asynchronous read).
pub(crate) struct Pinned {
    ptr: *mut std::ffi::c_void,
    pub(crate) bytes: usize,
    ctx: Arc<Context>,
}

// SAFETY: the pointer names host memory owned by this value alone.
unsafe impl Send for Pinned {}

impl Pinned {
    fn new(ctx: &Arc<Context>, bytes: usize) -> Result<Self> {
        ctx.bind()?;
        let mut ptr = std::ptr::null_mut();
        // SAFETY: `ptr` is valid for one write; the context is current.
        unsafe { sys::cuMemHostAlloc(&raw mut ptr, bytes, 0) }.result().map_err(|e| alloc_error(bytes, e))?;
        Ok(Self { ptr, bytes, ctx: Arc::clone(ctx) })
    }

    pub(crate) fn ptr(&self) -> *mut std::ffi::c_void {
        self.ptr
    }

    /// The first `len` bytes.
    ///
    /// # Safety
    /// No copy into the buffer may be in flight.
    pub(crate) unsafe fn bytes(&self, len: usize) -> &[u8] {
        debug_assert!(len <= self.bytes);
        // SAFETY: `ptr` holds `self.bytes >= len` bytes of host memory; no device write is
        // in flight (caller).
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), len) }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        if self.ctx.bind().is_ok() {
            // SAFETY: allocated by cuMemHostAlloc and freed once; no copy is in flight
            // (the owner waited for its event or the stream was synchronised).
            let _ = unsafe { sys::cuMemFreeHost(self.ptr) };
        }
    }
}

/// A CUDA event owned by one value.
pub(crate) struct RawEvent {
    pub(crate) event: sys::CUevent,
    ctx: Arc<Context>,
}

// SAFETY: CUevent handles are usable from any thread with the context current (ensured
// by `bind` before each use).
unsafe impl Send for RawEvent {}
// SAFETY: as above; recording and querying events are thread-safe driver calls.
unsafe impl Sync for RawEvent {}

impl RawEvent {
    /// An event recorded on `stream` after all work enqueued so far.
    pub(crate) fn record(stream: &Stream, timing: bool) -> Result<Self> {
        stream.bind()?;
        let flags =
            if timing { sys::CUevent_flags::CU_EVENT_DEFAULT } else { sys::CUevent_flags::CU_EVENT_DISABLE_TIMING };
        let event = result::event::create(flags).during("cuEventCreate")?;
        let e = Self { event, ctx: Arc::clone(&stream.ctx) };
        // SAFETY: the event and the stream are alive and belong to the current context.
        unsafe { result::event::record(e.event, stream.raw()) }.during("cuEventRecord")?;
        Ok(e)
    }

    /// Waits on the host until the event has completed.
    pub(crate) fn synchronize(&self) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: the event is alive and recorded.
        unsafe { result::event::synchronize(self.event) }.during("cuEventSynchronize")
    }
}

impl Drop for RawEvent {
    fn drop(&mut self) {
        if self.ctx.bind().is_ok() {
            // SAFETY: the event is owned by self and destroyed exactly once.
            let _ = unsafe { result::event::destroy(self.event) };
        }
    }
}

/// A point in an executor's timeline: a CUDA event recorded on its stream.
pub struct CudaMarker {
    pub(crate) event: RawEvent,
}

impl std::fmt::Debug for CudaMarker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaMarker").field("device", &self.event.ctx.ordinal).finish_non_exhaustive()
    }
}

impl CudaMarker {
    /// Device time from `self` to `end`, waiting for `end` to complete.
    pub(crate) fn elapsed_until(&self, end: &Self) -> Result<Duration> {
        end.event.synchronize()?;
        // SAFETY: both events are alive and recorded.
        let ms = unsafe { result::event::elapsed(self.event.event, end.event.event) }.during("cuEventElapsedTime")?;
        Ok(Duration::from_secs_f64(f64::from(ms.max(0.0)) * 1e-3))
    }
}

/// A point in one stream's work that another stream (a fork) can wait for
/// ([`orrery_core::Executor::signal`] / [`orrery_core::Executor::wait_for`]).
pub struct CudaEvent {
    pub(crate) event: RawEvent,
}

impl std::fmt::Debug for CudaEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaEvent").field("device", &self.event.ctx.ordinal).finish_non_exhaustive()
    }
}

/// A copy to the host in flight ([`orrery_core::Executor::read_async`]): pinned staging,
/// the event after the copy, and the element count.
pub struct CudaPending<T> {
    pub(crate) staging: Option<Pinned>,
    pub(crate) event: Option<RawEvent>,
    pub(crate) len: usize,
    pub(crate) stream: Arc<Stream>,
    pub(crate) _element: std::marker::PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for CudaPending<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaPending").field("len", &self.len).finish_non_exhaustive()
    }
}

impl<T> Drop for CudaPending<T> {
    fn drop(&mut self) {
        // A pending read dropped without `wait`: the copy may still be writing the
        // staging, so wait for it before the memory is reused or freed.
        if let Some(event) = self.event.take() {
            let _ = event.synchronize();
        }
        if let Some(staging) = self.staging.take() {
            self.stream.give_pinned(staging);
        }
    }
}
