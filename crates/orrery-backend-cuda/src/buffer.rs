//! Device buffers: typed ([`CudaBuffer`]) over untyped ([`RawBuffer`]) memory, whose
//! allocation sits behind an [`Arc`] so that a recording can keep it alive and tell
//! whether a buffer still owns it.
//!
//! Memory is allocated in stream order on the owning executor's stream and freed the
//! same way when the last owner drops, so a buffer may be dropped while kernels that use
//! it are still queued (on that stream; work on a fork must be ordered before the drop by
//! an event). Zero-length buffers hold no memory (a null device pointer), which every
//! kernel launch of this crate skips or ignores.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::sys::CUdeviceptr;
use orrery_core::{DeviceBuffer, Storage};

use crate::stream::Stream;

/// One device allocation, freed in stream order on the stream that made it — or, for
/// memory the executor borrows ([`crate::CudaExecutor::wrap_external`]), never freed.
pub(crate) struct Allocation {
    pub(crate) ptr: CUdeviceptr,
    pub(crate) bytes: usize,
    stream: Arc<Stream>,
    owned: bool,
}

impl Allocation {
    pub(crate) fn new(stream: Arc<Stream>, ptr: CUdeviceptr, bytes: usize) -> Arc<Self> {
        Arc::new(Self { ptr, bytes, stream, owned: true })
    }

    /// Memory owned elsewhere (a PyTorch tensor, say): dropping it frees nothing.
    pub(crate) fn borrowed(stream: Arc<Stream>, ptr: CUdeviceptr, bytes: usize) -> Arc<Self> {
        Arc::new(Self { ptr, bytes, stream, owned: false })
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        if self.owned {
            self.stream.free(self.ptr);
        }
    }
}

/// Untyped device memory: what a kernel launch sees ([`orrery_core::GpuExecutor::RawBuffer`]).
pub struct RawBuffer {
    pub(crate) alloc: Arc<Allocation>,
    pub(crate) len_bytes: usize,
}

impl RawBuffer {
    /// The device address (0 for an empty allocation).
    pub fn device_ptr(&self) -> u64 {
        self.alloc.ptr
    }

    /// Bytes in use.
    pub fn len_bytes(&self) -> usize {
        self.len_bytes
    }

    /// Bytes allocated (`>= len_bytes`).
    pub fn capacity_bytes(&self) -> usize {
        self.alloc.bytes
    }

    /// Ordinal of the device that holds the memory.
    pub fn device_ordinal(&self) -> usize {
        self.alloc.stream.ctx.ordinal
    }
}

impl std::fmt::Debug for RawBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawBuffer")
            .field("ptr", &format_args!("{:#x}", self.alloc.ptr))
            .field("len_bytes", &self.len_bytes)
            .field("capacity_bytes", &self.alloc.bytes)
            .finish()
    }
}

/// A typed array in device memory, owned by a [`crate::CudaExecutor`].
///
/// `len` elements are in use out of `capacity`; the capacity grows with 25% headroom
/// ([`orrery_core::executor::grown_capacity`]) and never shrinks.
pub struct CudaBuffer<T: Storage> {
    pub(crate) raw: RawBuffer,
    pub(crate) len: usize,
    pub(crate) capacity: usize,
    _element: PhantomData<fn() -> T>,
}

impl<T: Storage> CudaBuffer<T> {
    pub(crate) fn from_raw(raw: RawBuffer, len: usize, capacity: usize) -> Self {
        Self { raw, len, capacity, _element: PhantomData }
    }

    /// The device address of element 0 (0 for a buffer without an allocation).
    pub fn device_ptr(&self) -> u64 {
        self.raw.alloc.ptr
    }

    /// The untyped view, for kernel launches.
    pub fn raw(&self) -> &RawBuffer {
        &self.raw
    }

    /// Sets the length within the capacity.
    pub(crate) fn set_len(&mut self, len: usize) {
        debug_assert!(len <= self.capacity);
        self.len = len;
        self.raw.len_bytes = len * size_of::<T>();
    }

    /// Replaces the allocation (the old one is freed in stream order when its last owner
    /// drops).
    pub(crate) fn replace_raw(&mut self, raw: RawBuffer, len: usize, capacity: usize) {
        self.raw = raw;
        self.len = len;
        self.capacity = capacity;
    }
}

impl<T: Storage> DeviceBuffer<T> for CudaBuffer<T> {
    fn len(&self) -> usize {
        self.len
    }

    fn capacity(&self) -> usize {
        self.capacity
    }
}

impl<T: Storage> std::fmt::Debug for CudaBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaBuffer")
            .field("element", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("capacity", &self.capacity)
            .field("raw", &self.raw)
            .finish()
    }
}
