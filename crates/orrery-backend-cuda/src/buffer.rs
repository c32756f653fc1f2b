//! Device buffers: typed ([`CudaBuffer`]) over untyped ([`RawBuffer`]) memory.
//!
//! Memory is allocated in stream order on the owning executor's stream and freed the
//! same way when the buffer drops, so a buffer may be dropped while kernels that use it
//! are still queued. Zero-length buffers hold no allocation (a null device pointer),
//! which every kernel launch of this crate skips or ignores.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::sys::CUdeviceptr;
use orrery_core::{DeviceBuffer, Element};

use crate::device::Device;

/// Untyped device memory: what a kernel launch sees ([`orrery_core::GpuExecutor::RawBuffer`]).
pub struct RawBuffer {
    ptr: CUdeviceptr,
    len_bytes: usize,
    capacity_bytes: usize,
    device: Arc<Device>,
}

impl RawBuffer {
    /// An allocation of `capacity_bytes` bytes of which `len_bytes` are in use.
    pub(crate) fn new(device: Arc<Device>, ptr: CUdeviceptr, len_bytes: usize, capacity_bytes: usize) -> Self {
        Self { ptr, len_bytes, capacity_bytes, device }
    }

    /// The device address (0 for an empty allocation).
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// Bytes in use.
    pub fn len_bytes(&self) -> usize {
        self.len_bytes
    }

    /// Bytes allocated (`>= len_bytes`).
    pub fn capacity_bytes(&self) -> usize {
        self.capacity_bytes
    }

    /// Ordinal of the device that holds the memory.
    pub fn device_ordinal(&self) -> usize {
        self.device.ordinal
    }
}

impl std::fmt::Debug for RawBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawBuffer")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len_bytes", &self.len_bytes)
            .field("capacity_bytes", &self.capacity_bytes)
            .field("device", &self.device.ordinal)
            .finish()
    }
}

impl Drop for RawBuffer {
    fn drop(&mut self) {
        self.device.free(self.ptr);
    }
}

/// A typed array in device memory, owned by a [`crate::CudaExecutor`].
///
/// `len` elements are in use out of `capacity`; the capacity grows with 25% headroom
/// ([`orrery_core::executor::grown_capacity`]) and never shrinks.
pub struct CudaBuffer<T: Element> {
    pub(crate) raw: RawBuffer,
    pub(crate) len: usize,
    pub(crate) capacity: usize,
    _element: PhantomData<T>,
}

impl<T: Element> CudaBuffer<T> {
    pub(crate) fn from_raw(raw: RawBuffer, len: usize, capacity: usize) -> Self {
        Self { raw, len, capacity, _element: PhantomData }
    }

    /// The device address of element 0 (0 for a buffer without an allocation).
    pub fn device_ptr(&self) -> u64 {
        self.raw.ptr
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

    /// Replaces the allocation (the old one is freed in stream order on drop).
    pub(crate) fn replace_raw(&mut self, raw: RawBuffer, len: usize, capacity: usize) {
        self.raw = raw;
        self.len = len;
        self.capacity = capacity;
    }
}

impl<T: Element> DeviceBuffer<T> for CudaBuffer<T> {
    fn len(&self) -> usize {
        self.len
    }

    fn capacity(&self) -> usize {
        self.capacity
    }
}

impl<T: Element> std::fmt::Debug for CudaBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaBuffer")
            .field("dtype", &T::DTYPE)
            .field("len", &self.len)
            .field("capacity", &self.capacity)
            .field("raw", &self.raw)
            .finish()
    }
}
